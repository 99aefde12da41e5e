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

	"cairn"
	"cairn/store"
)

// Materialize writes every file of tree into dir, which must be empty or
// missing, on every core. It is how an agent's workspace is made: a plain
// folder, not a working tree (no records, no pointer file).
func Materialize(ctx context.Context, s *store.Store, tree cairn.Hash, dir string) (int, error) {
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
				err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(e.Path)), data, perm)
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
		data, err := readFile(f, max)
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
