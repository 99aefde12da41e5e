package worktree

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"cairn"
	"cairn/store"
)

// onDisk is one file of a folder, with its content's hash.
type onDisk struct {
	File
	blob cairn.Hash
	// stored is set when the content read for this scan went to the
	// scan's batch (its length is size).
	stored bool
	size   int64
	// fresh is set when the file had to be read: its stat row is new.
	fresh bool
}

// snapshot is a folder compared with its base.
type snapshot struct {
	disk  map[string]*onDisk
	skips []Skip
	// leftovers are temporary files of interrupted syncs.
	leftovers []string
	base      map[string]cairn.Entry // the effective base: the base commit's files and the overrides
	over      map[string]cairn.Entry // the overrides (a zero Blob: absent)
	baseTree  cairn.Hash
	// stats are the stat rows a whole-tree scan loaded.
	stats map[string]FileStat
}

// vouches reports whether a file's stat row vouches for its content: its
// size and modification time are as recorded, and it was not modified
// within racyWindow of the row being written.
func (r FileStat) vouches(f File) bool {
	return r.Size == f.Size && r.Mtime == f.Mtime && f.Mtime < r.Checked-racyWindow
}

func (m *Manager) loadStats(ctx context.Context, t *Tree) (map[string]FileStat, error) {
	stats, err := m.st.Stats(ctx, t.ID)
	if err != nil {
		return nil, fmt.Errorf("read the stat rows of %s: %w", t.Path, err)
	}
	return stats, nil
}

func (m *Manager) loadOverrides(ctx context.Context, t *Tree) (map[string]cairn.Entry, error) {
	over, err := m.st.Overrides(ctx, t.ID)
	if err != nil {
		return nil, fmt.Errorf("read the overrides of %s: %w", t.Path, err)
	}
	return over, nil
}

// treeOf returns a commit's tree; the empty tree for no commit.
func (m *Manager) treeOf(ctx context.Context, c cairn.Hash) (cairn.Hash, error) {
	if c.IsZero() {
		return store.EmptyTree, nil
	}
	cm, err := m.s.ReadCommit(ctx, c)
	if err != nil {
		return cairn.Hash{}, err
	}
	return cm.Tree, nil
}

// racyWindow is how close to the time it was recorded a file may have been
// modified for its stat row to be distrusted: a change within the same
// clock tick would not show in the modification time.
const racyWindow = 2e9

// scan reads the folder and its base. Files whose size and modification
// time match their stat row are not read.
//
// With keep, the content of the files it reads goes to keep, which spills
// to the store as it fills (see readAll); else it is only hashed.
func (m *Manager) scan(ctx context.Context, t *Tree, keep *store.Batch) (*snapshot, error) {
	snap := &snapshot{disk: map[string]*onDisk{}, base: map[string]cairn.Entry{}}
	var err error
	if snap.over, err = m.loadOverrides(ctx, t); err != nil {
		return nil, err
	}
	if snap.baseTree, err = m.treeOf(ctx, t.Base); err != nil {
		return nil, err
	}
	// The folder, the stat rows and the base tree are read at once.
	var stats map[string]FileStat
	var statErr, baseErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		stats, statErr = m.loadStats(ctx, t)
	}()
	go func() {
		defer wg.Done()
		// Listed first, then put in a map of the right size: growing a
		// map of 10k entries costs as much as the listing.
		var entries []cairn.Entry
		for e, err := range m.s.Files(ctx, snap.baseTree, "") {
			if err != nil {
				baseErr = err
				return
			}
			entries = append(entries, e)
		}
		snap.base = make(map[string]cairn.Entry, len(entries)+len(snap.over))
		for _, e := range entries {
			snap.base[e.Path] = e
		}
	}()
	max := m.maxSize()
	var files []File
	snap.skips, err = Walk(t.Path, &WalkOptions{MaxFileSize: max, Leftovers: &snap.leftovers}, func(f File) error {
		files = append(files, f)
		return nil
	})
	wg.Wait()
	if err := errors.Join(err, statErr, baseErr); err != nil {
		return nil, err
	}
	snap.stats = stats
	// Files whose size and modification time match their stat row are not
	// read; the others are read and hashed on every core.
	var toRead []*onDisk
	snap.disk = make(map[string]*onDisk, len(files))
	for _, f := range files {
		d := &onDisk{File: f}
		if r, ok := stats[f.Path]; ok && r.vouches(f) {
			d.blob = r.Blob
		} else {
			toRead = append(toRead, d)
		}
		snap.disk[f.Path] = d
	}
	if err := readAll(ctx, toRead, max, keep); err != nil {
		return nil, err
	}
	for p, e := range snap.over {
		if e.Blob.IsZero() {
			delete(snap.base, p)
		} else {
			snap.base[p] = e
		}
	}
	return snap, nil
}

// targetedMax is the most changed paths a sync looks at one by one; above
// it, reading the whole folder is cheaper.
const targetedMax = 2000

// scanPaths is scan limited to some paths: their state on disk (read only
// when their stat row does not vouch for them), their base and over, the
// tree's overrides. Paths that are not regular files on disk count as
// absent, as in scan.
func (m *Manager) scanPaths(ctx context.Context, t *Tree, baseTree cairn.Hash, over map[string]cairn.Entry, paths []string, keep *store.Batch) (*snapshot, error) {
	snap := &snapshot{disk: map[string]*onDisk{}, base: map[string]cairn.Entry{}, baseTree: baseTree, over: over}
	max := m.maxSize()
	var toRead []*onDisk
	// On a file system that ignores case (macOS, Windows), the two
	// spellings of a change of case alone find one file; it counts only
	// under the name the folder lists, as a full scan would see it.
	folded := map[string]string{} // folded path → a path looked up
	ids := map[string]fileID{}    // path → the file's identity
	for _, p := range paths {
		if _, seen := snap.disk[p]; seen {
			continue
		}
		if e, err := m.s.Get(ctx, baseTree, p); err == nil {
			snap.base[p] = e
		} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, err
		}
		// A symbolic link on the way, as the file itself, counts as
		// absent: nothing outside the tree is read.
		abs := filepath.Join(t.Path, filepath.FromSlash(p))
		st, dir, err := statBeneath(t.Path, p)
		if err != nil || !st.regular || st.size > max {
			continue
		}
		id := st.id()
		fold := cairn.FoldPath(p)
		if q, ok := folded[fold]; ok && q != p && id != (fileID{}) && id == ids[q] {
			switch listedAs(filepath.Dir(abs), path.Base(p), path.Base(q)) {
			case path.Base(q):
				continue // p is q's file under another case
			case path.Base(p):
				delete(snap.disk, q) // q was p's file under another case
				toRead = slices.DeleteFunc(toRead, func(d *onDisk) bool { return d.Path == q })
			}
		}
		folded[fold], ids[p] = p, id
		f := File{Path: p, Abs: abs, Size: st.size, Mtime: st.mtime, Ctime: st.ctime, Ino: st.ino, dev: st.dev, dir: dir}
		if st.exec {
			f.Mode = cairn.ModeExecutable
		}
		d := &onDisk{File: f}
		// A stat row that cannot be read only costs reading the file.
		if r, err := m.st.Stat(ctx, t.ID, p); err == nil && r.vouches(f) {
			d.blob = r.Blob
		} else {
			toRead = append(toRead, d)
		}
		snap.disk[p] = d
	}
	if err := readAll(ctx, toRead, max, keep); err != nil {
		return nil, err
	}
	for p, e := range snap.over {
		if e.Blob.IsZero() {
			delete(snap.base, p)
		} else {
			snap.base[p] = e
		}
	}
	return snap, nil
}

// whole reports whether a selection of paths is the whole tree.
func whole(paths []string) bool {
	return len(paths) == 0 || slices.ContainsFunc(paths, func(p string) bool { return p == "" })
}

// cleanSelection returns paths as clean vault paths ("" for the root), or
// EINVALID naming the first that is not a path inside a working tree.
func cleanSelection(paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		q := path.Clean(strings.Trim(filepath.ToSlash(p), "/"))
		switch {
		case q == ".":
			q = ""
		case q == ".." || strings.HasPrefix(q, "../") || path.IsAbs(filepath.ToSlash(p)):
			return nil, cairn.Errorf(cairn.EINVALID, "%s is not inside the working tree", p).
				WithHint("Name files or folders by their path from the working tree's root, e.g. notes/a.md.")
		}
		out = append(out, q)
	}
	return out, nil
}

// scanSelected is scan limited to paths, each a file or a folder of the
// tree (clean vault paths; none, or "", is the whole tree): the files on
// disk under them, walked folder by folder, and the base's and the
// overrides' entries under them. Nothing else in the folder is looked at,
// and the snapshot's base holds only the entries under the paths.
func (m *Manager) scanSelected(ctx context.Context, t *Tree, paths []string, keep *store.Batch) (*snapshot, error) {
	if whole(paths) {
		return m.scan(ctx, t, keep)
	}
	baseTree, err := m.treeOf(ctx, t.Base)
	if err != nil {
		return nil, err
	}
	over, err := m.loadOverrides(ctx, t)
	if err != nil {
		return nil, err
	}
	var files, leftovers []string
	var skips []Skip
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] && !Ignored(p) {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
		abs := filepath.Join(t.Path, filepath.FromSlash(p))
		if info, err := os.Lstat(abs); err == nil && info.IsDir() {
			s, err := Walk(t.Path, &WalkOptions{Under: p, MaxFileSize: m.maxSize(), Leftovers: &leftovers}, func(f File) error {
				add(f.Path)
				return nil
			})
			if err != nil {
				return nil, err
			}
			skips = append(skips, s...)
		} else {
			add(p)
		}
		// A folder that is gone, or files of it that are.
		for e, err := range m.s.Files(ctx, baseTree, p+"/") {
			if err != nil {
				return nil, err
			}
			add(e.Path)
		}
		for q := range over {
			if selected(q, []string{p}) {
				add(q)
			}
		}
	}
	snap, err := m.scanPaths(ctx, t, baseTree, over, files, keep)
	if err != nil {
		return nil, err
	}
	for q := range snap.base {
		if !seen[q] {
			delete(snap.base, q) // an override outside the paths
		}
	}
	snap.skips, snap.leftovers = skips, leftovers
	return snap, nil
}

// readAll reads and hashes files on every core, marking them fresh; with
// keep, their content goes to keep (for a commit to store), which writes
// it to the store as it fills (store.Batch.Spill).
func readAll(ctx context.Context, files []*onDisk, max int64, keep *store.Batch) error {
	errs := make([]error, len(files))
	parallel(len(files), func(i int) {
		d := files[i]
		data, err := ReadFile(d.File, max)
		if err != nil {
			errs[i] = err
			return
		}
		if keep == nil {
			d.blob, d.fresh = store.BlobHash(data), true
			return
		}
		d.blob, d.fresh, d.stored, d.size = keep.PutBlob(data), true, true, int64(len(data))
		errs[i] = keep.Spill(ctx)
	})
	return errors.Join(errs...)
}

// parallel calls fn(i) for i in [0, n) on every core.
func parallel(n int, fn func(int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// Change is one local edit: how a file on disk differs from its base.
type Change struct {
	Path string           `json:"path"`
	Kind cairn.ChangeKind `json:"kind"` // added, modified or deleted
	// Incoming is set when the branch changed this file too since the
	// person started editing it: a commit merges the two.
	Incoming bool `json:"incoming,omitempty"`
}

// changes lists the local edits of a snapshot, by path.
func (snap *snapshot) changes() []Change {
	var out []Change
	for p, d := range snap.disk {
		b, ok := snap.base[p]
		switch {
		case !ok:
			out = append(out, Change{Path: p, Kind: cairn.Added})
		case b.Blob != d.blob || b.Mode != d.Mode:
			out = append(out, Change{Path: p, Kind: cairn.Modified})
		}
	}
	for p := range snap.base {
		if _, ok := snap.disk[p]; !ok {
			out = append(out, Change{Path: p, Kind: cairn.Deleted})
		}
	}
	for i := range out {
		_, out[i].Incoming = snap.over[out[i].Path]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Status is a working tree compared with its base and its branch.
type Status struct {
	Tree    *Tree      `json:"tree"`
	Head    cairn.Hash `json:"head"` // the branch's head; differs from Tree.Base when it moved
	Changes []Change   `json:"changes"`
	Skipped []Skip     `json:"skipped,omitempty"`
}

// Status lists the local edits of a working tree, under paths (files or
// folders, from the tree's root; none for the whole tree): only those are
// looked at. A path that is not inside the tree is EINVALID. It writes
// nothing but the stat rows of files it had to read, so the next status is
// quick. A whole-tree status, while a watcher journals the tree (Watch),
// looks only at the paths journaled since the last status.
func (m *Manager) Status(ctx context.Context, t *Tree, paths ...string) (*Status, error) {
	paths, err := cleanSelection(paths)
	if err != nil {
		return nil, err
	}
	if err := m.reload(ctx, t); err != nil {
		return nil, err
	}
	var st *Status
	var sync *touched // the watch journal's point a whole-tree walk is made at
	cached := false
	if whole(paths) {
		// Without a walk when a watcher keeps the tree's journal.
		if st, sync, cached, err = m.watchedStatus(ctx, t); err != nil {
			return nil, err
		}
		if !cached {
			over, err := m.loadOverrides(ctx, t)
			if err != nil {
				return nil, err
			}
			var racy []string
			if st, racy, cached, err = m.cachedStatus(ctx, t, over); err != nil {
				return nil, err
			}
			if cached {
				m.writeLast(t, sync, t.Base, over, st, racy)
			}
		}
	}
	if !cached {
		snap, err := m.scanSelected(ctx, t, paths, nil)
		if err != nil {
			return nil, err
		}
		st = &Status{Tree: t, Changes: snap.changes(), Skipped: snap.skips}
		files := slices.Collect(maps.Values(snap.disk))
		// Best effort, and without waiting: a vault busy with another
		// process only makes the next status slower.
		m.remember(ctx, t, files)
		if whole(paths) {
			m.cacheOf(t, snap).write(m.cachePath(t))
			m.writeLast(t, sync, t.Base, snap.over, st, racyOf(files, m.Now().UnixNano()))
		}
	}
	if st.Head, err = m.s.Head(ctx, t.Branch); err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, err
	}
	return st, nil
}

// rememberWait is how long a status waits for the vault's write lock to
// remember the files it read.
const rememberWait = 20 * time.Millisecond

// remember writes the stat rows of the files of a scan that it read, when
// the vault's write lock is free within rememberWait. Once it has the lock
// it writes every row, however many: cut short, it would leave a freshly
// written folder to be read whole by every status.
func (m *Manager) remember(ctx context.Context, t *Tree, files []*onDisk) error {
	var fresh []*onDisk
	for _, d := range files {
		if d.fresh {
			fresh = append(fresh, d)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	return m.updateSoon(ctx, rememberWait, func(ctx context.Context, tx *store.Tx) error {
		return m.st.PutStats(ctx, tx.Backend(), t.ID, m.statsOf(fresh))
	})
}

// updateSoon runs fn in a write transaction if the vault's write lock can
// be had within wait. It never waits longer for the lock, but fn, once it
// runs, is not cut short by the wait (ctx still ends it).
func (m *Manager) updateSoon(ctx context.Context, wait time.Duration, fn func(context.Context, *store.Tx) error) error {
	lockCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := time.AfterFunc(wait, cancel)
	return m.s.Update(lockCtx, func(tx *store.Tx) error {
		if !timer.Stop() {
			return fmt.Errorf("the write lock was not free within %v: %w", wait, context.DeadlineExceeded)
		}
		return fn(lockCtx, tx)
	})
}

// statsOf returns the stat rows of files read or written now.
func (m *Manager) statsOf(files []*onDisk) []FileStat {
	now := m.Now().UnixNano()
	out := make([]FileStat, len(files))
	for i, d := range files {
		out[i] = d.row()
		out[i].Checked = now
	}
	return out
}

// row is the stat row of a file read or written, Checked not yet set.
func (d *onDisk) row() FileStat {
	return FileStat{Path: d.Path, Size: d.Size, Mtime: d.Mtime, Blob: d.blob}
}

// listedAs returns which of two names of one file (they differ in case
// only) the folder dir lists: a, b, or "" when it lists both (hard links)
// or neither.
func listedAs(dir, a, b string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var hasA, hasB bool
	for _, e := range entries {
		hasA = hasA || e.Name() == a
		hasB = hasB || e.Name() == b
	}
	switch {
	case hasA && !hasB:
		return a
	case hasB && !hasA:
		return b
	}
	return ""
}
