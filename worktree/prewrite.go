package worktree

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sync/semaphore"

	"cairn"
	"cairn/store"
)

// Prewritten holds files written, ahead of a sync, to a staging folder
// beside the working trees' locks (.cairn/prewrite-PID-RANDOM). An import
// knows the files it is about to commit: writing them while the change is
// judged and indexed leaves the sync that follows only renames to do. A
// staged file is renamed into place only when the sync writes that path
// with the same content and mode; Discard removes the rest. The folder
// itself is not touched before the sync, and nothing is locked: the staging
// folder is the process's own, and one whose process has died is removed by
// the next Prewrite.
type Prewritten struct {
	stage string
	// from holds the content of files queued by their blob.
	from *store.Batch
	// room bounds the content queued and not yet written.
	room   *semaphore.Weighted
	more   chan struct{} // the queue grew, or was closed
	done   chan struct{}
	mu     sync.Mutex
	queue  []store.FileChange
	closed bool
	// files are the files staged, in the order written; once the writing
	// has ended, sorted by path, one each (a map of them took twice the
	// memory: some 120 bytes a file, against 56 and the list's room to
	// grow).
	files  []prewritten
	sorted bool
	gone   bool        // discarded
	stop   atomic.Bool // Discard was called: write no more
}

// prewritten is a file staged: its name in the stage is its number (a
// name held as a string took some 60 bytes more a file); -1 once placed.
type prewritten struct {
	path string
	n    int32
	mode cairn.Mode
	blob cairn.Hash
}

// prewriteQueue is the most content Prewritten.Add holds before the writer
// catches up: a caller that streams files through it holds a bounded part
// of them whatever their number.
const prewriteQueue = 32 << 20

// Prewrite starts a writer of files to a staging folder for t, in the
// background, and returns at once. Hand it the files with Add, then Close;
// pass the result to SyncHeadPrewritten, then call Discard. Files queued by
// their blob are read from from (its pending objects, then its store) when
// they are written.
func (m *Manager) Prewrite(ctx context.Context, t *Tree, from *store.Batch) (*Prewritten, error) {
	removeDeadStages(m.lockDir)
	var rnd [4]byte
	rand.Read(rnd[:])
	stage := filepath.Join(m.lockDir, fmt.Sprintf("%s%d-%s", stagePrefix, os.Getpid(), hex.EncodeToString(rnd[:])))
	if err := os.Mkdir(stage, 0o755); err != nil {
		return nil, fmt.Errorf("prewrite: %w", err)
	}
	p := &Prewritten{stage: stage, from: from, room: semaphore.NewWeighted(prewriteQueue),
		more: make(chan struct{}, 1), done: make(chan struct{})}
	// One writer: files created in one folder wait for each other in the
	// kernel anyway (the folder's lock, the inode bitmap), and more
	// writers only spin there, taking the cores the admission needs.
	go func() {
		defer close(p.done)
		var i int32
		for {
			p.mu.Lock()
			queued, closed := p.queue, p.closed
			p.queue = nil
			p.mu.Unlock()
			for _, c := range queued {
				if !p.stop.Load() {
					p.write(ctx, i, c)
				}
				if c.Data != nil {
					p.room.Release(weight(c))
				}
				i++
			}
			if len(queued) == 0 {
				if closed {
					return
				}
				<-p.more
			}
		}
	}()
	return p, nil
}

// tmp is the name in the stage of the file staged n-th.
func (p *Prewritten) tmp(n int32) string { return filepath.Join(p.stage, strconv.Itoa(int(n))) }

// write stages one file as the n-th. A file that cannot be written is left
// to the sync, which writes it or says why it cannot.
func (p *Prewritten) write(ctx context.Context, n int32, c store.FileChange) {
	tmp := p.tmp(n)
	data, h := c.Data, c.Blob
	switch {
	case data == nil:
		var err error
		if data, err = p.from.ReadBlob(ctx, h); err != nil {
			return
		}
	case h.IsZero():
		h = store.BlobHash(data)
	}
	perm := os.FileMode(0o644)
	if c.Mode == cairn.ModeExecutable {
		perm = 0o755
	}
	if os.WriteFile(tmp, data, perm) != nil {
		os.Remove(tmp)
		return
	}
	p.mu.Lock()
	p.files = append(p.files, prewritten{path: c.Path, n: n, blob: h, mode: c.Mode})
	p.mu.Unlock()
}

// weight is what a queued file's content counts against prewriteQueue: at
// most the whole queue, and at least one byte.
func weight(c store.FileChange) int64 { return min(max(int64(len(c.Data)), 1), prewriteQueue) }

// Add queues files to write; deletions are skipped. A file given with its
// content waits while prewriteQueue bytes of content are queued; one given
// by its blob alone (with a Prewrite from a batch) costs no wait, and is
// read back when it is written. The writer keeps no content once a file is
// written. It may not be called after Close.
func (p *Prewritten) Add(ctx context.Context, changes []store.FileChange) error {
	if p == nil {
		return nil
	}
	for _, c := range changes {
		switch {
		case c.Delete, c.Data == nil && (c.Blob.IsZero() || p.from == nil):
			continue
		case c.Data != nil:
			if err := p.room.Acquire(ctx, weight(c)); err != nil {
				return fmt.Errorf("prewrite: %w", err)
			}
		}
		p.mu.Lock()
		p.queue = append(p.queue, c)
		p.mu.Unlock()
		p.wake()
	}
	return nil
}

// wake tells the writer the queue changed.
func (p *Prewritten) wake() {
	select {
	case p.more <- struct{}{}:
	default:
	}
}

// Close ends the files to write; the writer finishes those queued.
// Calling it again does nothing.
func (p *Prewritten) Close() {
	if p != nil {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.wake()
	}
}

// wait ends the files to write (Close) and waits for the writing to end.
func (p *Prewritten) wait() {
	if p != nil {
		p.Close()
		<-p.done
	}
}

// staged reports whether the file staged for path holds what e holds.
func (p *Prewritten) staged(path string, e cairn.Entry) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.match(path, e)
	return ok
}

// find returns the place in files of the file staged for path; the caller
// holds mu. The first call sorts the files; of a path staged twice, the
// later is kept. Before the writing has ended (wait) it finds nothing, and
// the sync writes the file itself.
func (p *Prewritten) find(path string) (int, bool) {
	select {
	case <-p.done:
	default:
		return 0, false
	}
	if !p.sorted {
		slices.SortStableFunc(p.files, func(a, b prewritten) int { return strings.Compare(a.path, b.path) })
		kept := p.files[:0]
		for i, f := range p.files {
			if i+1 < len(p.files) && p.files[i+1].path == f.path {
				continue
			}
			kept = append(kept, f)
		}
		p.files, p.sorted = kept, true
	}
	return slices.BinarySearchFunc(p.files, path, func(f prewritten, path string) int { return strings.Compare(f.path, path) })
}

// content returns the content staged for path when it is what e holds,
// read back from the staging folder.
func (p *Prewritten) content(path string, e cairn.Entry) ([]byte, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	f, ok := p.match(path, e)
	var n int32
	if ok {
		n = f.n
	}
	p.mu.Unlock()
	if !ok {
		return nil, false
	}
	data, err := os.ReadFile(p.tmp(n))
	return data, err == nil && store.BlobHash(data) == e.Blob
}

// match returns the file staged for path when it holds what e holds; the
// caller holds mu.
func (p *Prewritten) match(path string, e cairn.Entry) (*prewritten, bool) {
	i, ok := p.find(path)
	if !ok {
		return nil, false
	}
	f := &p.files[i]
	return f, f.n >= 0 && !e.Blob.IsZero() && f.blob == e.Blob && f.mode == e.Mode
}

// place renames the file staged for path into the tree root opened, at
// rel, when it holds what e holds, and reports whether it did. The rename
// goes into the target's folder as root opens it (no symbolic link on the
// way is followed out of the tree).
func (p *Prewritten) place(path string, e cairn.Entry, root *os.Root, rel string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	f, ok := p.match(path, e)
	var n int32
	if ok {
		n, f.n = f.n, -1
	}
	p.mu.Unlock()
	if !ok {
		return false
	}
	if err := renameInto(p.tmp(n), root, rel); err != nil {
		os.Remove(p.tmp(n))
		return false
	}
	return true
}

// Discard removes the staged files no sync placed, stopping the writing
// if it has not ended (an import that failed early). Calling it again does
// nothing.
func (p *Prewritten) Discard() {
	if p == nil {
		return
	}
	p.stop.Store(true)
	p.wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.gone {
		os.RemoveAll(p.stage)
		p.files, p.gone = nil, true
	}
}

// stagePrefix starts the names of staging folders; the process id follows.
const stagePrefix = "prewrite-"

// removeDeadStages removes the staging folders in dir whose process is
// gone: what a killed import left.
func removeDeadStages(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), stagePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n != os.Getpid() && errors.Is(syscall.Kill(n, 0), syscall.ESRCH) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
