package worktree

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"cairn"
	"cairn/store"
)

// SyncReport says what a sync did to a folder.
type SyncReport struct {
	// Updated are the files written or deleted.
	Updated []string `json:"updated"`
	// LeftAlone are the files the branch changed but the person had edited:
	// they keep the person's version, and the next commit merges the two.
	LeftAlone []string `json:"left_alone"`
	// Failed says why a folder could not be brought up to its branch after
	// the change had landed: the change stands, and the next command in the
	// folder catches it up.
	Failed []string `json:"failed,omitempty"`
}

// Sync brings a working tree to commit target. Every file the branch
// changed between the tree's base and target is written, unless the person
// edited it; those are left alone and listed. Syncs are journaled: when one
// is interrupted, Recover (or the next Sync) completes it.
func (m *Manager) Sync(ctx context.Context, t *Tree, target cairn.Hash) (*SyncReport, error) {
	unlock, err := m.lock(t)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := m.reload(ctx, t); err != nil {
		return nil, err
	}
	if err := m.owned(t); err != nil {
		return nil, err
	}
	recovering := t.Pending == target
	if t.Pending != target {
		err := m.s.Update(ctx, func(tx *store.Tx) error { return m.st.SetPending(ctx, tx.Backend(), t.ID, target) })
		if err != nil {
			return nil, fmt.Errorf("sync %s: %w", t.Path, err)
		}
		t.Pending = target
	}
	m.point("sync:journaled")
	return m.sync(ctx, t, target, recovering, nil)
}

// SyncHead brings a working tree to its branch's head, read under the
// tree's lock: of two processes syncing one folder after their commits,
// neither takes it back to an older commit.
func (m *Manager) SyncHead(ctx context.Context, t *Tree) (*SyncReport, error) {
	return m.SyncHeadPrewritten(ctx, t, nil)
}

// SyncHeadPrewritten is SyncHead placing the files pre wrote ahead (see
// Prewrite) instead of writing them again; pre may be nil.
func (m *Manager) SyncHeadPrewritten(ctx context.Context, t *Tree, pre *Prewritten) (*SyncReport, error) {
	unlock, err := m.lock(t)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return m.syncHead(ctx, t, pre, false)
}

// Behind reports whether a working tree is owed a sync: its branch moved
// past the commit the folder holds (the process that moved it stopped
// before syncing), or a sync was left unfinished. The branch's head is the
// record of what the folder owes: it moves in the same transaction as the
// commit, so no crash can lose it.
func (m *Manager) Behind(ctx context.Context, t *Tree) (bool, error) {
	if !t.Pending.IsZero() {
		return true, nil
	}
	head, err := m.s.Head(ctx, t.Branch)
	if err != nil {
		return false, err
	}
	return head != t.Base, nil
}

// syncChunk is how many files a sync reads the contents of at once.
const syncChunk = 4096

// statsPart is how many stat rows a sync holds before it writes those it
// can.
const statsPart = 16384

// statRows are the stat rows of the files a sync wrote or read: those of
// files modified more than racyWindow ago are written to the database
// statsPart or so at a time, each part in a transaction of its own; the
// others, and the rest, go with the sync's end (Synced.Stats). A row's
// Checked is when it is written, as when all went with the end: a file
// modified within racyWindow of it is read again by the next scan, so a
// row written early has to wait until its file is that old.
type statRows struct {
	m    *Manager
	t    *Tree
	rows []FileStat // Checked is set when they are written
	// young is how many of rows were too recently modified to be written
	// at the last try: the next waits until statsPart more have come.
	young int
	// end are rows that go with the end whatever their files' age.
	end []FileStat
}

// add keeps the stat row of d, read or written now, and writes the rows
// it can when statsPart have come since the last try.
func (r *statRows) add(ctx context.Context, d *onDisk) error {
	r.rows = append(r.rows, d.row())
	if len(r.rows) < r.young+cmp.Or(r.m.rowsPart, statsPart) {
		return nil
	}
	now := r.m.Now().UnixNano()
	var old []FileStat
	young := r.rows[:0]
	for _, row := range r.rows {
		if row.Mtime < now-racyWindow {
			row.Checked = now
			old = append(old, row)
		} else {
			young = append(young, row)
		}
	}
	r.rows, r.young = young, len(young)
	if len(old) == 0 {
		return nil
	}
	err := r.m.s.Update(ctx, func(tx *store.Tx) error { return r.m.st.PutStats(ctx, tx.Backend(), r.t.ID, old) })
	if err != nil {
		return fmt.Errorf("sync %s: %w", r.t.Path, err)
	}
	return nil
}

// atEnd keeps the stat row of d, read or written now, for the end alone.
func (r *statRows) atEnd(d *onDisk) {
	r.end = append(r.end, d.row())
}

// rest returns the rows not written yet, checked now.
func (r *statRows) rest() []FileStat {
	rest := append(r.rows, r.end...)
	now := r.m.Now().UnixNano()
	for i := range rest {
		rest[i].Checked = now
	}
	return rest
}

// quickWait is how long CatchUp waits for the vault's write lock.
const quickWait = 50 * time.Millisecond

// CatchUp brings a working tree that is Behind to its branch's head (a
// tree whose folder is missing is left alone). It does not wait for
// another process: when one holds the tree's lock (it is syncing the
// folder itself) or the vault's write lock, it does nothing and returns
// nil; the next command tries again. (The write lock is only looked at
// first: a writer that takes it in the moment between is waited for, as
// any write waits, rather than leave a sync half done.)
func (m *Manager) CatchUp(ctx context.Context, t *Tree) (*SyncReport, error) {
	if _, err := os.Stat(t.Path); err != nil {
		return nil, nil
	}
	unlock, err := tryLockFile(m.lockPath(t))
	if errors.Is(err, errLocked) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	quick, cancel := context.WithTimeout(ctx, quickWait)
	err = m.s.Update(quick, func(*store.Tx) error { return nil })
	cancel()
	if err != nil && ctx.Err() == nil && (quick.Err() != nil || cairn.ErrorCode(err) == cairn.EUNAVAILABLE) {
		return nil, nil // the vault is busy: nothing was written
	}
	if err != nil {
		return nil, err
	}
	return m.syncHead(ctx, t, nil, true)
}

// Settled returns t's record read again under the tree's lock, with the
// function that releases it, so that a check of the tree (cairn doctor)
// does not take a sync another process is making for one left unfinished;
// nil when another process holds the lock (it is syncing the folder now)
// or the tree is gone.
func (m *Manager) Settled(ctx context.Context, t *Tree) (*Tree, func(), error) {
	unlock, err := tryLockFile(m.lockPath(t))
	if errors.Is(err, errLocked) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	u := *t
	if err := m.reload(ctx, &u); err != nil {
		unlock()
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return &u, unlock, nil
}

// syncHead is SyncHeadPrewritten under the tree's lock. With interrupted,
// a journaled sync is taken for one a dead process left, and finished
// reading the whole folder; otherwise it is this process's own (a commit
// journals the sync that follows it).
func (m *Manager) syncHead(ctx context.Context, t *Tree, pre *Prewritten, interrupted bool) (*SyncReport, error) {
	removeDeadStages(m.lockDir) // what a killed import staged
	if err := m.reload(ctx, t); err != nil {
		return nil, err
	}
	if err := m.owned(t); err != nil {
		return nil, err
	}
	head, err := m.s.Head(ctx, t.Branch)
	if err != nil {
		return nil, err
	}
	rep := &SyncReport{}
	if !t.Pending.IsZero() && (t.Pending != head || interrupted) {
		// Finish the sync a dead process left first: its journal holds
		// what it meant to write, and the whole folder is read, to remove
		// the temporary files it left.
		if rep, err = m.sync(ctx, t, t.Pending, true, pre); err != nil {
			return nil, err
		}
	}
	if head == t.Base && t.Pending.IsZero() {
		return rep, nil
	}
	if t.Pending != head {
		err = m.s.Update(ctx, func(tx *store.Tx) error { return m.st.SetPending(ctx, tx.Backend(), t.ID, head) })
		if err != nil {
			return nil, fmt.Errorf("sync %s: %w", t.Path, err)
		}
		t.Pending = head
	}
	m.point("sync:journaled")
	more, err := m.sync(ctx, t, head, false, pre)
	if err != nil {
		return nil, err
	}
	rep.Updated = append(rep.Updated, more.Updated...)
	rep.LeftAlone = append(rep.LeftAlone, more.LeftAlone...)
	return rep, nil
}

// Recover completes a sync that a dead process left unfinished.
func (m *Manager) Recover(ctx context.Context, t *Tree) (*SyncReport, error) {
	if t.Pending.IsZero() {
		return &SyncReport{}, nil
	}
	return m.Sync(ctx, t, t.Pending)
}

// sync writes what changed between the tree's base and target. A full sync
// (finishing an interrupted one) reads the whole folder, removing the
// temporary files a dead sync left; otherwise only the paths that change
// are looked at, so a sync costs what it changes, not what the folder holds.
func (m *Manager) sync(ctx context.Context, t *Tree, target cairn.Hash, full bool, pre *Prewritten) (*SyncReport, error) {
	pre.wait()
	targetTree, err := m.treeOf(ctx, target)
	if err != nil {
		return nil, err
	}
	var snap *snapshot
	var changes []cairn.Change // the diff, when it is small
	if !full {
		baseTree, err := m.treeOf(ctx, t.Base)
		if err != nil {
			return nil, err
		}
		for c, err := range m.s.Changes(ctx, baseTree, targetTree) {
			if err != nil {
				return nil, err
			}
			if len(changes) == targetedMax {
				full = true
				break
			}
			changes = append(changes, c)
		}
		if !full {
			var paths []string
			for _, c := range changes {
				paths = append(paths, c.Path)
				if c.Old.Path != "" && c.Old.Path != c.Path {
					paths = append(paths, c.Old.Path)
				}
			}
			over, err := m.loadOverrides(ctx, t)
			if err != nil {
				return nil, err
			}
			if snap, err = m.scanPaths(ctx, t, baseTree, over, paths, nil); err != nil {
				return nil, err
			}
		}
	}
	if full {
		if snap, err = m.scan(ctx, t, nil); err != nil {
			return nil, err
		}
		for _, p := range snap.leftovers {
			os.Remove(p) // a dead sync's temporary file: its rename never happened
		}
	}
	// One operation per path: a change of case alone is a deletion of the
	// old spelling and an addition of the new one.
	type op struct {
		path string
		want cairn.Entry // zero: delete
	}
	rep := &SyncReport{}
	var written []*onDisk
	var writes []op
	var clear []string               // overrides to drop
	var deleted []string             // paths the target does not have
	keep := map[string]cairn.Entry{} // overrides to add
	leftDeleted := map[string]bool{} // local edits of files the target deletes
	// Each operation is classed as the diff is read.
	class := func(p string, want cairn.Entry) {
		if want.Blob.IsZero() {
			deleted = append(deleted, p)
		}
		d := snap.disk[p]
		base, hasBase := snap.base[p]
		switch {
		case d == nil && want.Blob.IsZero(), d != nil && d.blob == want.Blob && d.Mode == want.Mode:
			// Already as the target has it (an interrupted sync got here).
			clear = append(clear, p)
			if d != nil && d.fresh {
				written = append(written, d)
			}
		case d == nil && !hasBase, d != nil && hasBase && d.blob == base.Blob && d.Mode == base.Mode:
			// No local edit: write the target's version.
			writes = append(writes, op{p, want})
			clear = append(clear, p)
			rep.Updated = append(rep.Updated, p)
		default:
			// A local edit: leave it; it keeps the base it was made from.
			rep.LeftAlone = append(rep.LeftAlone, p)
			if want.Blob.IsZero() {
				// Its stat row goes with the end (Synced.Deleted), and a
				// new one comes after: not one written before.
				leftDeleted[p] = true
			}
			if _, ok := snap.over[p]; !ok {
				if hasBase {
					keep[p] = base
				} else {
					keep[p] = cairn.Entry{Path: p}
				}
			}
		}
	}
	classChange := func(c cairn.Change) {
		switch {
		case c.Kind == cairn.Deleted:
			class(c.Old.Path, cairn.Entry{})
		case (c.Kind == cairn.Modified || c.Kind == cairn.Renamed) && c.Old.Path != c.New.Path:
			class(c.Old.Path, cairn.Entry{})
			class(c.New.Path, c.New)
		default:
			class(c.Path, c.New)
		}
	}
	if full {
		// The diff is read again from the scan's base, one change at a
		// time: a sync of a whole vault holds what it writes, not the diff
		// beside it.
		for c, err := range m.s.Changes(ctx, snap.baseTree, targetTree) {
			if err != nil {
				return nil, err
			}
			classChange(c)
		}
	} else {
		for _, c := range changes {
			classChange(c)
		}
	}
	// Deletions first, then writes, then the folders deletions emptied:
	// a change of case alone deletes the old spelling before writing the
	// new one, and no folder is removed while a file is written into it.
	dirs := &madeDirs{}
	// Every write, rename, removal and change of mode goes through the
	// tree's folder opened once: a folder swapped for a symbolic link
	// meanwhile cannot send a write outside it.
	root, err := os.OpenRoot(t.Path)
	if err != nil {
		return nil, fmt.Errorf("sync %s: %w", t.Path, err)
	}
	defer root.Close()
	// The stat rows of the files written go to the database a part at a
	// time as the writes go, not all with the new base: a sync of a whole
	// folder (an import, a new working tree) would otherwise hold one
	// for each of its files. A row says what a file on disk holds, true
	// whatever the tree's base, so one written before the sync ends, or
	// by a sync that dies, is what the next scan trusts or, the file
	// changed since, reads again.
	rows := &statRows{m: m, t: t}
	// run makes the writes at idx in parallel, with the contents in blobs,
	// and keeps the stat rows of the files written.
	run := func(idx []int, blobs map[cairn.Hash][]byte) error {
		results := make([]*onDisk, len(idx))
		errs := make([]error, len(idx))
		var wg sync.WaitGroup
		workers := min(len(idx), 2*runtime.GOMAXPROCS(0))
		for w := range workers {
			wg.Go(func() {
				for j := w; j < len(idx); j += workers {
					o := writes[idx[j]]
					data, ok := blobs[o.want.Blob]
					if !ok && !o.want.Blob.IsZero() {
						if data, ok = pre.content(o.path, o.want); !ok {
							data = []byte(fmt.Sprintf("(the content of %s was purged)\n", o.path))
						}
					}
					results[j], errs[j] = m.write(t, root, o.path, o.want, data, pre, dirs)
					m.point("sync:file-written")
				}
			})
		}
		wg.Wait()
		for _, r := range results {
			if r != nil {
				errs = append(errs, rows.add(ctx, r))
			}
		}
		return errors.Join(errs...)
	}
	var deletions, contents []int
	for i, o := range writes {
		if o.want.Blob.IsZero() {
			deletions = append(deletions, i)
		} else {
			contents = append(contents, i)
		}
	}
	if err := run(deletions, nil); err != nil {
		return nil, err
	}
	// The writes a chunk at a time, their contents read in bulk: a sync
	// of a whole tree (a new working tree) holds one chunk's contents,
	// not the tree's.
	for len(contents) > 0 {
		chunk := contents[:min(len(contents), syncChunk)]
		contents = contents[len(chunk):]
		var hs []cairn.Hash
		for _, i := range chunk {
			if o := writes[i]; !pre.staged(o.path, o.want) {
				hs = append(hs, o.want.Blob)
			}
		}
		blobs := make(map[cairn.Hash][]byte, len(hs))
		var mu sync.Mutex
		err := m.s.ReadBlobs(ctx, hs, func(h cairn.Hash, data []byte) error {
			mu.Lock()
			blobs[h] = data
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sync %s: %w", t.Path, err)
		}
		if err := run(chunk, blobs); err != nil {
			return nil, err
		}
	}
	for _, o := range writes {
		if o.want.Blob.IsZero() {
			removeEmptyParents(root, filepath.Dir(filepath.FromSlash(o.path)))
		}
	}
	// Files the scan had to read (changed since their stat row, or written
	// too recently to trust their time) are remembered as read now, so the
	// next scan need not read them again; those the sync wrote, as
	// written; those it deleted, not at all.
	var read []*onDisk
	for _, d := range snap.disk {
		if d.fresh {
			read = append(read, d)
		}
	}
	if len(read) > 0 {
		known := make(map[*onDisk]bool, len(written))
		for _, d := range written {
			known[d] = true
		}
		rewritten := map[string]bool{}
		for _, o := range writes {
			rewritten[o.path] = true
		}
		for _, d := range read {
			if !rewritten[d.Path] && !known[d] {
				written = append(written, d)
			}
		}
	}
	for _, d := range written {
		if leftDeleted[d.Path] {
			rows.atEnd(d)
			continue
		}
		if err := rows.add(ctx, d); err != nil {
			return nil, err
		}
	}
	m.point("sync:files-written")
	slices.Sort(clear)
	done := Synced{Stats: rows.rest(), Base: target, Resolved: slices.Compact(clear), Deleted: deleted}
	for p, e := range keep {
		e.Path = p
		done.Overrides = append(done.Overrides, e)
	}
	err = m.s.Update(ctx, func(tx *store.Tx) error { return m.st.FinishSync(ctx, tx.Backend(), t.ID, done) })
	if err != nil {
		return nil, fmt.Errorf("sync %s: %w", t.Path, err)
	}
	t.Base, t.Pending = target, cairn.Hash{}
	return rep, nil
}

// write puts one file of the target on disk (a zero entry deletes it,
// leaving its folder for the caller) and returns its new stat, or nil after
// a deletion. Files are written to a temporary name and renamed into place,
// so neither a reader (an editor) nor a crash ever leaves half a file. All
// of it happens through root, the tree's folder opened: nothing is written
// or removed outside it, whatever a path's folders turn out to be.
func (m *Manager) write(t *Tree, root *os.Root, p string, e cairn.Entry, data []byte, pre *Prewritten, dirs *madeDirs) (*onDisk, error) {
	rel := filepath.FromSlash(p)
	abs := filepath.Join(t.Path, rel)
	if e.Blob.IsZero() {
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sync %s: %w", p, err)
		}
		return nil, nil
	}
	if err := dirs.ensure(root, filepath.Dir(rel)); err != nil {
		return nil, fmt.Errorf("sync %s: %w", p, err)
	}
	if !pre.place(p, e, root, rel) {
		tmp, err := writeTemp(root, filepath.Dir(rel), data, e.Mode)
		if err != nil {
			return nil, fmt.Errorf("sync %s: %w", p, err)
		}
		if err := root.Rename(tmp, rel); err != nil {
			root.Remove(tmp)
			return nil, fmt.Errorf("sync %s: %w", p, err)
		}
	}
	if e.Mode == cairn.ModeExecutable {
		if err := root.Chmod(rel, 0o755); err != nil {
			return nil, fmt.Errorf("sync %s: %w", p, err)
		}
	}
	info, err := root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	return &onDisk{
		File: File{Path: p, Abs: abs, Size: info.Size(), Mtime: info.ModTime().UnixNano(), Mode: e.Mode},
		blob: e.Blob, fresh: true,
	}, nil
}

// writeTemp writes data to a new temporary file in the folder dir of root
// and returns its path in root.
func writeTemp(root *os.Root, dir string, data []byte, mode cairn.Mode) (string, error) {
	perm := os.FileMode(0o644)
	if mode == cairn.ModeExecutable {
		perm = 0o755
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, tmpPrefix+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		root.Remove(tmp)
		return "", err
	}
	if err := f.Close(); err != nil {
		root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// madeDirs remembers the folders a sync has checked or made with
// mkdirInside, so that a folder of many files is checked once.
type madeDirs struct{ m sync.Map }

func (d *madeDirs) ensure(root *os.Root, dir string) error {
	if _, ok := d.m.Load(dir); ok {
		return nil
	}
	if err := mkdirInside(root, dir); err != nil {
		return err
	}
	d.m.Store(dir, true)
	return nil
}

// mkdirInside creates the folder dir of root and its parents, refusing to
// go through a symbolic link or a file on the way: a sync writes only
// inside the tree, and only where a person would see the file.
func mkdirInside(root *os.Root, dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	cur := ""
	for _, seg := range strings.Split(dir, string(filepath.Separator)) {
		cur = filepath.Join(cur, seg)
		info, err := root.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := root.Mkdir(cur, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		case err != nil:
			return err
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; cairn does not write through it", filepath.Join(root.Name(), cur))
		case !info.IsDir():
			return fmt.Errorf("%s is a file where a folder is needed", filepath.Join(root.Name(), cur))
		}
	}
	return nil
}

// removeEmptyParents removes the folder dir of root and its parents while
// they are empty, never root itself.
func removeEmptyParents(root *os.Root, dir string) {
	for dir != "." && dir != string(filepath.Separator) && dir != "" {
		if err := root.Remove(dir); err != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}
