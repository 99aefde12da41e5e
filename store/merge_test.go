package store_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/sqlite"
	"cairn/store"
)

func TestMergeTrees_OneSided(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	b := s.NewBatch()
	base := build(t, b, map[string]string{"a.md": "a\n", "c.md": "c\n", "d.md": "d\n"})
	ours := edit(t, b, base, store.FileChange{Path: "a.md", Data: []byte("a on ours\n")})
	theirs := edit(t, b, base, store.FileChange{Path: "c.md", Delete: true})
	res, err := b.MergeTrees(ctx, base, ours, theirs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) > 0 {
		t.Fatalf("MergeTrees: conflicts %+v", res.Conflicts)
	}
	want := map[string]string{"a.md": "a on ours\n", "d.md": "d\n"}
	if diff := cmp.Diff(want, files(t, b, res.Tree)); diff != "" {
		t.Errorf("MergeTrees: theirs deleted c.md, ours edited a.md (-want +got):\n%s", diff)
	}
}

func newStore(t *testing.T) *store.Store {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := store.New(t.Context(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func build(t *testing.T, b *store.Batch, fs map[string]string) cairn.Hash {
	t.Helper()
	var changes []store.FileChange
	for p, data := range fs {
		changes = append(changes, store.FileChange{Path: p, Data: []byte(data)})
	}
	tree, err := b.BuildTree(t.Context(), changes)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func edit(t *testing.T, b *store.Batch, tree cairn.Hash, changes ...store.FileChange) cairn.Hash {
	t.Helper()
	tree, err := b.Edit(t.Context(), tree, changes)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func files(t *testing.T, b *store.Batch, tree cairn.Hash) map[string]string {
	t.Helper()
	out := map[string]string{}
	for e, err := range b.Files(t.Context(), tree, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, err := b.ReadBlob(t.Context(), e.Blob)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Path] = string(data)
	}
	return out
}
