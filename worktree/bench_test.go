package worktree_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cairn"
	"cairn/internal/vaultgen"
	"cairn/store"
	"cairn/worktree"
)

// BenchmarkMaterialize measures making a command agent's workspace: every
// file of a 1k- or 10k-page vault written into a new folder, then read back
// as a tree once the agent has changed a few files.
func BenchmarkMaterialize(b *testing.B) {
	for _, pages := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			ctx := context.Background()
			db, _ := openBackend(b, b.TempDir())
			s, err := store.New(ctx, db, nil)
			if err != nil {
				b.Fatal(err)
			}
			var files []store.FileChange
			for _, f := range vaultgen.New(vaultgen.Config{Pages: pages, Raw: true}).All() {
				files = append(files, store.FileChange{Path: f.Path, Data: f.Data})
			}
			bb := s.NewBatch()
			tree, err := bb.BuildTree(ctx, files)
			if err != nil {
				b.Fatal(err)
			}
			if err := bb.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			root := b.TempDir()
			var write, read time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				dir := filepath.Join(root, fmt.Sprint(i))
				start := time.Now()
				n, err := worktree.Materialize(ctx, s, tree, dir)
				write += time.Since(start)
				if err != nil || n != len(files) {
					b.Fatalf("materialized %d of %d files: %v", n, len(files), err)
				}
				b.StopTimer()
				os.WriteFile(filepath.Join(dir, "summaries", "new.md"), []byte("# New\n"), 0o644)
				os.WriteFile(filepath.Join(dir, "index.md"), []byte("# Home\n"), 0o644)
				b.StartTimer()
				start = time.Now()
				got, _, err := worktree.ReadFolder(ctx, s.NewBatch(), dir, tree, nil)
				read += time.Since(start)
				if err != nil || got == tree {
					b.Fatalf("read back: %v", err)
				}
			}
			b.ReportMetric(float64(write.Milliseconds())/float64(b.N), "write-ms")
			b.ReportMetric(float64(read.Milliseconds())/float64(b.N), "read-ms")
		})
	}
}

// BenchmarkStatus measures a whole-tree status of a 10k- and a 100k-page
// folder with 10 pages edited since the last commit, in the process: the
// walk of the folder and its merge with the status cache, without the
// process start and the opening of the vault that `cairn status` adds
// (BenchmarkStatus in cmd/cairn times those, beside git). The edits are
// dated in the past, so none is racy and the status reads no file.
func BenchmarkStatus(b *testing.B) {
	for _, pages := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			ctx := b.Context()
			dir := b.TempDir()
			v := vaultgen.New(vaultgen.Config{Pages: pages})
			if err := v.WriteDir(ctx, dir); err != nil {
				b.Fatal(err)
			}
			_, m, wt := openVault(b, dir)
			if _, err := m.Commit(ctx, wt, worktree.CommitRequest{Message: "start", Principal: cairn.User("bench")}); err != nil {
				b.Fatal(err)
			}
			past := time.Now().Add(-time.Minute)
			for i := range 10 {
				f := v.Edit(i*997, 1)
				p := filepath.Join(dir, filepath.FromSlash(f.Path))
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					b.Fatal(err)
				}
				os.Chtimes(p, past, past)
			}
			if _, err := m.Status(ctx, wt); err != nil { // reads the edits once
				b.Fatal(err)
			}
			for b.Loop() {
				st, err := m.Status(ctx, wt)
				if err != nil || len(st.Changes) != 10 {
					b.Fatalf("status: %d changes, %v; want the 10 edits", len(st.Changes), err)
				}
			}
		})
	}
}
