package gitio

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"cairn"
	"cairn/store"
)

// ExportFiles writes the files of a commit into dir, which must not exist or
// be an empty folder (EINVALID otherwise): plain files, executable where the
// vault marks them so, nothing else. Content purged from the store is written
// as the one-line placeholder ExportGit writes; the result lists where. When
// the export fails, whatever it wrote into dir is removed.
func ExportFiles(ctx context.Context, s *store.Store, commit cairn.Hash, dir string) (*ExportResult, error) {
	res, err := exportFiles(ctx, s, commit, dir)
	if err != nil {
		return nil, fmt.Errorf("export %s to %s: %w", commit.Short(), dir, err)
	}
	return res, nil
}

func exportFiles(ctx context.Context, s *store.Store, commit cairn.Hash, dir string) (_ *ExportResult, err error) {
	c, err := s.ReadCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	undo, err := prepareDir(dir)
	if err != nil {
		return nil, err
	}
	defer undo(&err)
	res := &ExportResult{Head: c.Hash}
	pg := &purges{s: s}
	// The files are read from the store in bulk, a chunk at a time, and
	// written in the tree's order.
	var chunk []cairn.Entry
	var size int64
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := writeChunk(ctx, s, pg, c.Hash, dir, chunk, res); err != nil {
			return err
		}
		chunk, size = chunk[:0], 0
		return nil
	}
	for e, err := range s.Files(ctx, c.Tree, "") {
		if err != nil {
			return nil, err
		}
		if len(chunk) == exportChunkBlobs || len(chunk) > 0 && size+e.Size > exportChunkBytes {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		chunk = append(chunk, e)
		size += e.Size
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return res, nil
}

// writeChunk writes the files of one chunk of a commit's tree.
func writeChunk(ctx context.Context, s *store.Store, pg *purges, commit cairn.Hash, dir string, chunk []cairn.Entry, res *ExportResult) error {
	hs := make([]cairn.Hash, len(chunk))
	for i, e := range chunk {
		hs[i] = e.Blob
	}
	var mu sync.Mutex
	data := make(map[cairn.Hash][]byte, len(chunk))
	err := s.ReadBlobs(ctx, hs, func(h cairn.Hash, b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		data[h] = b
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range chunk {
		b, ok := data[e.Blob]
		if !ok {
			// ReadBlobs skips what it cannot read: purged content gets its
			// placeholder, anything else is an error.
			var purged bool
			if b, purged, err = pg.content(ctx, e.Blob); err != nil {
				return fmt.Errorf("export %s: %w", e.Path, err)
			}
			if purged {
				res.Placeholders = append(res.Placeholders, Placeholder{Commit: commit, Path: e.Path, Blob: e.Blob})
			}
		}
		target := filepath.Join(dir, filepath.FromSlash(e.Path))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		perm := fs.FileMode(0o644)
		if e.Mode == cairn.ModeExecutable {
			perm = 0o755
		}
		if err := os.WriteFile(target, b, perm); err != nil {
			return err
		}
		res.Files++
	}
	return nil
}
