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

// TestMergeTrees_RenameAgainstChange: a file one side renamed and the other
// changed in place is renamed and changed, with the mode merged three-way;
// a change of the name's case against a rename is two renames.
func TestMergeTrees_RenameAgainstChange(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	b := s.NewBatch()
	base := build(t, b, map[string]string{"a.md": "a\n", "b.md": "b\n"})
	renamed := edit(t, b, base, store.FileChange{Path: "a.md", Delete: true},
		store.FileChange{Path: "notes/a.md", Data: []byte("a\n"), Mode: cairn.ModeExecutable})
	changed := edit(t, b, base, store.FileChange{Path: "a.md", Data: []byte("a changed\n")})
	recased := edit(t, b, base, store.FileChange{Path: "a.md", Delete: true}, store.FileChange{Path: "A.md", Data: []byte("a\n")})
	for _, tc := range []struct {
		name          string
		ours, theirs  cairn.Hash
		want          map[string]string
		wantConflicts []cairn.ConflictKind
	}{
		{"OursRenamed", renamed, changed, map[string]string{"notes/a.md": "a changed\n", "b.md": "b\n"}, nil},
		{"TheirsRenamed", changed, renamed, map[string]string{"notes/a.md": "a changed\n", "b.md": "b\n"}, nil},
		{"OursRecased", recased, renamed, nil, []cairn.ConflictKind{cairn.ConflictRename}},
		{"TheirsRecased", renamed, recased, nil, []cairn.ConflictKind{cairn.ConflictRename}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := b.MergeTrees(ctx, base, tc.ours, tc.theirs, nil)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []cairn.ConflictKind
			for _, c := range res.Conflicts {
				kinds = append(kinds, c.Kind)
			}
			if diff := cmp.Diff(tc.wantConflicts, kinds); diff != "" {
				t.Fatalf("MergeTrees conflicts (-want +got):\n%s", diff)
			}
			if tc.want == nil {
				return
			}
			if diff := cmp.Diff(tc.want, files(t, b, res.Tree)); diff != "" {
				t.Errorf("MergeTrees (-want +got):\n%s", diff)
			}
			e, err := b.Get(ctx, res.Tree, "notes/a.md")
			if err != nil || e.Mode != cairn.ModeExecutable {
				t.Errorf("notes/a.md = %+v, %v; want the renaming side's executable mode", e, err)
			}
		})
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
