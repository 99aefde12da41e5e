package worktree

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/text/unicode/norm"
)

// A watcher keeps a journal of the paths touched in a working tree's
// folder, from file-system events (inotify on Linux, through fsnotify),
// while a long-running process (cairn serve, cairn worker) runs: a
// whole-tree status then looks only at the paths the journal names since
// the last status, instead of walking the folder (see watchedStatus).
//
// The journal is a file beside the database, one per tree: a header with
// the watcher's epoch (random, new each time a watcher starts or starts
// over), then records, each a kind byte, a path from the tree's root and a
// NUL: 'f' a file touched (written, created, removed, renamed, its mode
// changed), 'd' a folder created or removed (everything under it may have
// changed), 'c' a cookie. One process at a time watches a tree (it holds
// the tree's watch lock); the others wait for it to stop.
//
// Events reach the watcher after the change that made them, so a status
// asks for everything before it by a cookie, as git's fsmonitor does: it
// creates a file in the folder of cookies beside the database, which the
// watcher watches too, and the journal's records up to the cookie's are
// every change made before it (inotify queues one watcher's events in
// order, whatever folder they come from). Nothing is written in the
// person's folders. A status that finds no watcher holding the lock, or
// whose cookie does not come back in time, walks the folder as without
// one.
//
// Correctness never rests on the watcher: a status that cannot trust the
// journal (another epoch, a record of the root, too many paths) walks, and
// what the journal cannot say precisely it says broadly. The watcher starts
// over, with a new epoch, when events were lost (the kernel's queue
// overflowed) and when a watched folder is renamed (inotify's watches of
// the folders under it would go on naming their old paths); the next
// status then walks. A folder created, or moved in, is watched and walked
// first, then journaled as a folder, so a change made in it before its
// watch existed is found by the status that reads the record.

// journalMagic starts a journal; the digit is its format.
const journalMagic = "cairn-watch-1 "

// journalMax is the size at which a watcher starts a new journal (and the
// next status walks).
const journalMax = 64 << 20

// cookiePrefix starts the names of the cookie files a status creates in
// the cookies folder beside the database (cookieDir).
const cookiePrefix = ".cairn-cookie-"

// cookieWait is how long a status waits for the watcher to journal its
// cookie before it walks the folder instead.
const cookieWait = 250 * time.Millisecond

// watchRetry is how often a process that could not watch a tree (another
// watches it, or starting failed) tries again.
const watchRetry = 5 * time.Second

func (m *Manager) journalPath(t *Tree) string {
	return filepath.Join(m.lockDir, fmt.Sprintf("status-%d.watch", t.ID))
}

// cookieDir is the folder of the cookies of every tree's statuses: their
// watchers watch it, and nothing else writes there.
func (m *Manager) cookieDir() string { return filepath.Join(m.lockDir, "cookies") }

func (m *Manager) watchLockPath(t *Tree) string {
	return filepath.Join(m.lockDir, fmt.Sprintf("status-%d.watch.lock", t.ID))
}

// Watch journals the paths touched in the folders of the vault's working
// trees until ctx ends, so that whole-tree statuses need not walk them
// (see the package's watcher notes). Each tree is watched by one process
// at a time: while another process watches a tree, this one waits to take
// over. Trees registered after Watch starts are not watched. Problems
// (too many folders for the system's inotify limits, a tree's folder gone)
// go to log, and the tree's statuses walk as without a watcher; Watch
// returns only when ctx ends, or when the trees cannot be listed.
func (m *Manager) Watch(ctx context.Context, log *slog.Logger) error {
	trees, err := m.List(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, t := range trees {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.watchTree(ctx, t, log)
		}()
	}
	wg.Wait()
	return nil
}

// watchTree watches one tree whenever its watch lock is free, until ctx
// ends, starting over when a run ends.
func (m *Manager) watchTree(ctx context.Context, t *Tree, log *slog.Logger) {
	for ctx.Err() == nil {
		unlock, err := tryLockFile(m.watchLockPath(t))
		if err == nil {
			err = m.watchRun(ctx, t)
			unlock()
			if err == nil {
				continue // start over at once, with a new epoch
			}
			if ctx.Err() == nil && log != nil {
				log.Warn("watch a working tree; its statuses walk the folder", "tree", t.Path, "err", err)
			}
		} else if !errors.Is(err, errLocked) && log != nil {
			log.Warn("watch a working tree", "tree", t.Path, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(watchRetry):
		}
	}
}

// treeWatch is one run of a tree's watcher.
type treeWatch struct {
	t    *Tree
	fw   *fsnotify.Watcher
	dirs map[string]bool // the folders watched, by vault path ("" the root)
	j    *os.File
	w    *bufio.Writer
	size int64
	last string // the last file record, not repeated
	// cookies is the folder of the statuses' cookies.
	cookies string
	// journaled is woken when a cookie is journaled.
	journaled *wakeup
}

// watchRun watches t until ctx ends (nil), until the watch must start over
// (nil: events were lost, a folder was renamed, the journal is full), or
// until it fails.
func (m *Manager) watchRun(ctx context.Context, t *Tree) error {
	fw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return fmt.Errorf("start a file-system watcher: %w", err)
	}
	defer fw.Close()
	tw := &treeWatch{t: t, fw: fw, dirs: map[string]bool{}, cookies: m.cookieDir(), journaled: &m.journaled}
	// Every folder is watched before the journal exists: a status that
	// reads it finds every change made since.
	if err := os.MkdirAll(tw.cookies, 0o700); err != nil {
		return fmt.Errorf("make the cookies folder: %w", err)
	}
	if err := fw.Add(tw.cookies); err != nil {
		return fmt.Errorf("watch %s: %w", tw.cookies, err)
	}
	if err := tw.addTree(""); err != nil {
		return err
	}
	if err := tw.open(m.journalPath(t)); err != nil {
		return err
	}
	defer tw.j.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-fw.Errors:
			if !ok {
				return errors.New("the file-system watcher stopped")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				return nil // events were lost: start over
			}
			return fmt.Errorf("watch %s: %w", t.Path, err)
		case ev, ok := <-fw.Events:
			if !ok {
				return errors.New("the file-system watcher stopped")
			}
			again, err := tw.handle(ev)
			if err != nil || again {
				return err
			}
			if len(fw.Events) == 0 {
				if err := tw.w.Flush(); err != nil {
					return fmt.Errorf("write the watch journal: %w", err)
				}
			}
			if tw.size > journalMax {
				return nil
			}
		}
	}
}

// open writes a new journal under a temporary name and renames it into
// place, so that a status never reads a journal without its header.
func (tw *treeWatch) open(at string) error {
	var epoch [16]byte
	rand.Read(epoch[:])
	f, err := os.CreateTemp(filepath.Dir(at), cacheTemp+"watch-")
	if err != nil {
		return fmt.Errorf("write the watch journal: %w", err)
	}
	header := journalMagic + hex.EncodeToString(epoch[:]) + "\n"
	if _, err := f.WriteString(header); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write the watch journal: %w", err)
	}
	if err := os.Rename(f.Name(), at); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write the watch journal: %w", err)
	}
	tw.j, tw.w, tw.size = f, bufio.NewWriter(f), int64(len(header))
	return nil
}

// addTree watches the folder rel and every folder under it but those walks
// leave out.
func (tw *treeWatch) addTree(rel string) error {
	abs := filepath.Join(tw.t.Path, filepath.FromSlash(rel))
	if err := tw.fw.Add(abs); err != nil {
		if rel != "" && errors.Is(err, os.ErrNotExist) {
			return nil // gone already: its removal is journaled
		}
		return fmt.Errorf("watch %s: %w", abs, err)
	}
	tw.dirs[rel] = true
	entries, err := os.ReadDir(abs)
	if err != nil {
		if rel != "" && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("watch %s: %w", abs, err)
	}
	for _, e := range entries {
		if e.IsDir() && !ignoredName(e.Name()) {
			if err := tw.addTree(path.Join(rel, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// handle journals one event; again is set when the watch must start over.
func (tw *treeWatch) handle(ev fsnotify.Event) (again bool, err error) {
	if filepath.Dir(ev.Name) == tw.cookies {
		if name := filepath.Base(ev.Name); strings.HasPrefix(name, cookiePrefix) && ev.Has(fsnotify.Create) {
			return false, tw.record('c', name)
		}
		return false, nil
	}
	rel, err := filepath.Rel(tw.t.Path, ev.Name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false, nil
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		return true, nil // the root itself went or moved
	}
	if Ignored(rel) {
		return false, nil
	}
	if !norm.NFC.IsNormalString(rel) {
		// Walks name the file in NFC; its folder is read again instead.
		return false, tw.record('d', path.Dir(strings.TrimSuffix(rel, "/")))
	}
	if tw.dirs[rel] && ev.Has(fsnotify.Rename) {
		return true, nil // the watches under it would keep its old name
	}
	if tw.dirs[rel] && ev.Has(fsnotify.Remove) {
		for d := range tw.dirs {
			if d == rel || strings.HasPrefix(d, rel+"/") {
				delete(tw.dirs, d)
			}
		}
		return false, tw.record('d', rel)
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			if err := tw.addTree(rel); err != nil {
				return false, err
			}
			return false, tw.record('d', rel)
		}
	}
	if rel == tw.last && !ev.Has(fsnotify.Create) {
		return false, nil
	}
	tw.last = rel
	return false, tw.record('f', rel)
}

func (tw *treeWatch) record(kind byte, rel string) error {
	if kind != 'f' {
		tw.last = ""
	}
	tw.w.WriteByte(kind)
	tw.w.WriteString(rel)
	if err := tw.w.WriteByte(0); err != nil {
		return fmt.Errorf("write the watch journal: %w", err)
	}
	tw.size += int64(len(rel) + 2)
	if kind == 'c' {
		err := tw.w.Flush()
		tw.journaled.wake()
		return err
	}
	return nil
}

// wakeup wakes those that wait for something that happens again and
// again (a cookie journaled): each waits on the channel wait returned
// before it looked, so a wake between the look and the wait is not lost.
type wakeup struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next wake.
func (w *wakeup) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

// wake wakes those that wait.
func (w *wakeup) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// touched is what a journal says changed between two points.
type touched struct {
	epoch string
	// end is the offset just after the cookie's record: the next status
	// reads from there.
	end int64
	// files and dirs are the paths the records name, each once.
	files, dirs []string
}

// watchSync asks t's watcher for everything it journaled before now. With
// epoch and from those of an earlier sync, it returns the paths journaled
// between that sync and this one; else (or when the journal's epoch is
// another) only the new epoch and offset, for the next status. ok is false
// when no watcher runs or it did not answer within cookieWait.
func (m *Manager) watchSync(t *Tree, epoch string, from int64) (*touched, bool) {
	unlock, err := tryLockFile(m.watchLockPath(t))
	if err == nil {
		unlock() // nobody watches
		return nil, false
	}
	if !errors.Is(err, errLocked) {
		return nil, false
	}
	f, err := os.Open(m.journalPath(t))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	head := make([]byte, len(journalMagic)+33)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.HasPrefix(head, []byte(journalMagic)) || head[len(head)-1] != '\n' {
		return nil, false
	}
	out := &touched{epoch: string(head[len(journalMagic) : len(head)-1])}
	start := int64(len(head))
	if out.epoch == epoch && from >= start {
		start = from
	} else if fi, err := f.Stat(); err == nil {
		start = fi.Size() // only the cookie is wanted: it comes after this
	}
	var name [12]byte
	rand.Read(name[:])
	cookie := cookiePrefix + hex.EncodeToString(name[:])
	at := filepath.Join(m.cookieDir(), cookie)
	cf, err := os.OpenFile(at, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, false
	}
	cf.Close()
	defer os.Remove(at)

	want := append(append([]byte{'c'}, cookie...), 0)
	var buf []byte
	chunk := make([]byte, 64<<10)
	// A watcher of this process wakes the wait as soon as it journals a
	// cookie; another process's is looked for after shorter waits first.
	deadline := time.Now().Add(cookieWait)
	wait := 50 * time.Microsecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		woken := m.journaled.wait()
		n, err := f.ReadAt(chunk, start+int64(len(buf)))
		buf = append(buf, chunk[:n]...)
		if i := bytes.Index(buf, want); i >= 0 && (i == 0 || buf[i-1] == 0) {
			out.end = start + int64(i+len(want))
			if out.epoch == epoch && from > 0 {
				out.files, out.dirs = parseRecords(buf[:i])
			}
			return out, true
		}
		if n > 0 && err == nil {
			continue
		}
		if err != nil && err != io.EOF || time.Now().After(deadline) {
			return nil, false
		}
		timer.Reset(wait)
		select {
		case <-woken:
		case <-timer.C:
		}
		wait = min(2*wait, 2*time.Millisecond)
	}
}

// parseRecords returns the paths of journal records, files and folders,
// each once; cookies are left out.
func parseRecords(b []byte) (files, dirs []string) {
	seen := map[string]bool{}
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		rec := b[:i]
		b = b[i+1:]
		if len(rec) == 0 || rec[0] == 'c' {
			continue // the statuses' cookies name no path
		}
		p := string(rec[1:])
		key := string(rec[0]) + p
		if seen[key] {
			continue
		}
		seen[key] = true
		switch rec[0] {
		case 'f':
			files = append(files, p)
		case 'd':
			dirs = append(dirs, p)
		}
	}
	return files, dirs
}
