package vaultgen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// WriteDir writes the vault's files under dir, creating dir and the folders
// as needed and overwriting files of the same names; other files are left
// alone. Files are generated and written by GOMAXPROCS goroutines. It stops
// at the first error, or when ctx is done, and returns that error.
func (v *Vault) WriteDir(ctx context.Context, dir string) error {
	folders := map[string]bool{".": true}
	for i := range v.pages {
		folders[v.folder(i)] = true
	}
	if v.cfg.Raw && len(v.summaries) > 0 {
		folders["raw"] = true
	}
	for f := range folders {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			return fmt.Errorf("create vault folder: %w", err)
		}
	}
	return v.parallel(ctx, func(_ int, path string, data []byte) error {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(path)), data, 0o644); err != nil {
			return fmt.Errorf("write vault file: %w", err)
		}
		return nil
	})
}

// All returns every file in the order of Files, generated on GOMAXPROCS
// goroutines: the quickest way to hold a whole vault in memory (a 100k-page
// vault is about 210 MB).
func (v *Vault) All() []File {
	files := make([]File, v.numFiles())
	_ = v.parallel(context.Background(), func(k int, path string, data []byte) error {
		files[k] = File{Path: path, Data: slices.Clone(data)}
		return nil
	})
	return files
}

// countBytes is RawBytes before caching.
func (v *Vault) countBytes() int64 {
	var total atomic.Int64
	_ = v.parallel(context.Background(), func(_ int, _ string, data []byte) error {
		total.Add(int64(len(data)))
		return nil
	})
	return total.Load()
}

// parallel generates every file and calls fn on each with its position in
// the Files order, from GOMAXPROCS goroutines that have all returned when it
// does. data is valid only during the call. It returns the first error from
// fn or ctx.
func (v *Vault) parallel(ctx context.Context, fn func(k int, path string, data []byte) error) error {
	n := v.numFiles()
	var (
		next    atomic.Int64
		stopped atomic.Bool
		once    sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		stopped.Store(true)
	}
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			g := v.newGen()
			for !stopped.Load() {
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				if err := fn(k, g.render(k), g.buf); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
