package worktree_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cairn"
	"cairn/store"
	"cairn/worktree"
)

// TestReadFolderSnapshot: reading a workspace back with the snapshot taken
// after it was made finds every change an agent can make, even those that
// keep a file's size and modification time: a rewrite whose mtime is set
// back, a file deleted and made anew, a new file, a deleted one.
func TestReadFolderSnapshot(t *testing.T) {
	ctx := context.Background()
	db, _ := openBackend(t, t.TempDir())
	s, err := store.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"a.md": "alpha\n", "b.md": "bravo\n", "c.md": "charlie\n", "d.md": "delta\n", "same.md": "same\n"}
	var changes []store.FileChange
	for p, d := range files {
		changes = append(changes, store.FileChange{Path: p, Data: []byte(d)})
	}
	bb := s.NewBatch()
	base, err := bb.BuildTree(ctx, changes)
	if err != nil {
		t.Fatal(err)
	}
	if err := bb.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ws")
	snap, err := worktree.MaterializeSnapshot(ctx, s, base, dir)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past the racy window: the files are trusted
	snap.Start()
	time.Sleep(10 * time.Millisecond)
	// a.md: same size, mtime set back.
	fi, _ := os.Stat(filepath.Join(dir, "a.md"))
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("ALPHA\n"), 0o644)
	os.Chtimes(filepath.Join(dir, "a.md"), fi.ModTime(), fi.ModTime())
	// b.md: deleted and made anew, same size and mtime.
	fi, _ = os.Stat(filepath.Join(dir, "b.md"))
	os.Remove(filepath.Join(dir, "b.md"))
	os.WriteFile(filepath.Join(dir, "b.md"), []byte("BRAVO\n"), 0o644)
	os.Chtimes(filepath.Join(dir, "b.md"), fi.ModTime(), fi.ModTime())
	os.Remove(filepath.Join(dir, "c.md"))
	os.WriteFile(filepath.Join(dir, "e.md"), []byte("echo\n"), 0o644)
	// d.md: its mode.
	os.Chmod(filepath.Join(dir, "d.md"), 0o755)

	for _, snap := range []*worktree.Snapshot{snap, nil} {
		b := s.NewBatch()
		tree, _, err := worktree.ReadFolder(ctx, b, dir, base, &worktree.WalkOptions{Materialized: snap})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"a.md": "ALPHA\n", "b.md": "BRAVO\n", "d.md": "delta\n", "e.md": "echo\n", "same.md": "same\n"}
		got := map[string]string{}
		for e, err := range b.Files(ctx, tree, "") {
			if err != nil {
				t.Fatal(err)
			}
			data, err := b.ReadBlob(ctx, e.Blob)
			if err != nil {
				t.Fatal(err)
			}
			got[e.Path] = string(data)
			if e.Path == "d.md" && e.Mode != cairn.ModeExecutable {
				t.Errorf("d.md lost its new mode")
			}
		}
		if len(got) != len(want) {
			t.Errorf("snapshot %v: files %v, want %v", snap != nil, got, want)
		}
		for p, d := range want {
			if got[p] != d {
				t.Errorf("snapshot %v: %s = %q, want %q", snap != nil, p, got[p], d)
			}
		}
	}
}
