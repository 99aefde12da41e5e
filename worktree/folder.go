package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"cairn"
	"cairn/store"
)

// Materialize writes every file of tree into dir, which must be empty or
// missing, on every core. It is how an agent's workspace is made: a plain
// folder, not a working tree (no records, no pointer file).
func Materialize(ctx context.Context, s *store.Store, tree cairn.Hash, dir string) (int, error) {
	return materialize(ctx, s, tree, dir, nil)
}

// MaterializeSnapshot is Materialize, and returns the Snapshot of what it
// wrote, taken of each file as it is written: what ReadFolder needs to
// read back only the files changed since.
func MaterializeSnapshot(ctx context.Context, s *store.Store, tree cairn.Hash, dir string) (*Snapshot, error) {
	snap := &Snapshot{files: map[string]File{}}
	var mu sync.Mutex
	_, err := materialize(ctx, s, tree, dir, func(f File) {
		if f.Ino == 0 || f.Ctime == 0 {
			return
		}
		mu.Lock()
		snap.files[f.Path] = f
		mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	snap.Start()
	return snap, nil
}

// materialize writes the files; record, when set, gets each file's
// metadata as written.
func materialize(ctx context.Context, s *store.Store, tree cairn.Hash, dir string, record func(File)) (int, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return 0, cairn.Errorf(cairn.EINVALID, "%s is not empty", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("materialize: %w", err)
	}
	var entries []cairn.Entry
	for e, err := range s.Files(ctx, tree, "") {
		if err != nil {
			return 0, err
		}
		entries = append(entries, e)
	}
	// Folders first, one goroutine: then files on every core.
	made := map[string]bool{}
	for _, e := range entries {
		d := filepath.Dir(filepath.Join(dir, filepath.FromSlash(e.Path)))
		if !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return 0, fmt.Errorf("materialize %s: %w", e.Path, err)
			}
			made[d] = true
		}
	}
	byBlob := make(map[cairn.Hash][]cairn.Entry, len(entries))
	hashes := make([]cairn.Hash, 0, len(entries))
	for _, e := range entries {
		if _, ok := byBlob[e.Blob]; !ok {
			hashes = append(hashes, e.Blob)
		}
		byBlob[e.Blob] = append(byBlob[e.Blob], e)
	}
	var mu sync.Mutex
	written := 0
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)*2)
	var wg sync.WaitGroup
	var errs []error
	err := s.ReadBlobs(ctx, hashes, func(h cairn.Hash, data []byte) error {
		mu.Lock()
		es := byBlob[h]
		mu.Unlock()
		for _, e := range es {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				perm := fs.FileMode(0o644)
				if e.Mode == cairn.ModeExecutable {
					perm = 0o755
				}
				abs := filepath.Join(dir, filepath.FromSlash(e.Path))
				var stat func(fileStat)
				if record != nil {
					stat = func(st fileStat) {
						record(File{Path: e.Path, Abs: abs, Size: st.size, Mtime: st.mtime, Ctime: st.ctime, Ino: st.ino, Mode: e.Mode})
					}
				}
				err := writeNew(abs, data, perm, stat)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("materialize %s: %w", e.Path, err))
				}
				written++
			}()
		}
		return nil
	})
	wg.Wait()
	if err == nil {
		err = errors.Join(errs...)
	}
	return written, err
}

// ReadFolder builds in b the tree of what dir holds, as changes to base
// (the tree it was materialized from): files whose content differs are
// read and hashed; files missing are deleted. Files that cannot be vault
// files (links, special files, bad names, too large) are left out and
// returned as skips.
func ReadFolder(ctx context.Context, b *store.Batch, dir string, base cairn.Hash, opts *WalkOptions) (cairn.Hash, []Skip, error) {
	if opts == nil {
		opts = &WalkOptions{}
	}
	max := opts.MaxFileSize
	if max <= 0 {
		max = DefaultMaxFileSize
	}
	var files []File
	skips, err := Walk(dir, opts, func(f File) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		return cairn.Hash{}, nil, err
	}
	old := map[string]cairn.Entry{}
	for e, err := range b.Files(ctx, base, "") {
		if err != nil {
			return cairn.Hash{}, nil, err
		}
		old[e.Path] = e
	}
	changes := make([]store.FileChange, len(files))
	keep := make([]bool, len(files))
	errs := make([]error, len(files))
	parallel(len(files), func(i int) {
		f := files[i]
		if e, ok := old[f.Path]; ok && e.Mode == f.Mode && opts.Materialized.unchanged(f) {
			return
		}
		data, err := ReadFile(f, max)
		if err != nil {
			errs[i] = fmt.Errorf("read %s: %w", f.Path, err)
			return
		}
		if e, ok := old[f.Path]; ok && e.Blob == store.BlobHash(data) && e.Mode == f.Mode {
			return
		}
		changes[i], keep[i] = store.FileChange{Path: f.Path, Data: data, Mode: f.Mode}, true
	})
	if err := errors.Join(errs...); err != nil {
		return cairn.Hash{}, nil, err
	}
	var edits []store.FileChange
	seen := make(map[string]bool, len(files))
	for i, f := range files {
		seen[f.Path] = true
		if keep[i] {
			edits = append(edits, changes[i])
		}
	}
	for p := range old {
		if !seen[p] {
			edits = append(edits, store.FileChange{Path: p, Delete: true})
		}
	}
	tree, err := b.Edit(ctx, base, edits)
	return tree, skips, err
}

// writeNew writes data to a new file at path, and gives stat, when set,
// what the file's metadata is once written (fstat of the open file: no
// lookup).
func writeNew(path string, data []byte, perm fs.FileMode, stat func(fileStat)) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if stat != nil {
		if st, err := statFile(f); err == nil {
			stat(st)
		}
	}
	return f.Close()
}

// Snapshot is what MaterializeSnapshot wrote: each file's size, times,
// inode and mode as written. ReadFolder trusts a file that is still as
// recorded to hold what was written, and does not read it: a change to a
// file's content changes its change time (ctime), which no unprivileged
// process can set back, and a file made anew has a new change time even
// where it reuses the inode. Files whose change time is within racyCtime
// before Start are read anyway: a write in the same clock tick would not
// show. Where the system has no change times or inode numbers, nothing is
// trusted.
type Snapshot struct {
	files map[string]File
	at    int64 // unix nanoseconds, before the walk began
}

// racyCtime is how close to a snapshot a file's change time may be for
// the snapshot to be distrusted: more than the coarsest kernel clock tick.
const racyCtime = 50e6

// Start marks when the folder's writer (the agent) starts: files whose
// change time is within racyCtime before it are read back whatever they
// look like, since a write in the same clock tick would not show.
// MaterializeSnapshot marks the end of its own writing; a caller that
// starts the writer later calls Start again, so that more files are
// trusted.
func (s *Snapshot) Start() { s.at = time.Now().UnixNano() }

// unchanged reports whether f is as the snapshot recorded it.
func (s *Snapshot) unchanged(f File) bool {
	if s == nil || f.Ino == 0 || f.Ctime == 0 {
		return false
	}
	r, ok := s.files[f.Path]
	return ok && r.Size == f.Size && r.Mtime == f.Mtime && r.Ctime == f.Ctime && r.Ino == f.Ino &&
		r.Mode == f.Mode && f.Ctime < s.at-racyCtime
}
