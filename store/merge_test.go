package store_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/sqlite"
	"cairn/store"
	"cairn/store/mergetest"
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

// TestMergeTrees_Keep: paths to keep stay as ours has them, whatever
// theirs did to them, and never conflict; the rest merges.
func TestMergeTrees_Keep(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	b := s.NewBatch()
	base := build(t, b, map[string]string{"log.md": "# Log\n\n## one\n", "a.md": "a\n"})
	ours := edit(t, b, base, store.FileChange{Path: "log.md", Data: []byte("# Log\n\n## one\n\n## two\n")})
	theirs := edit(t, b, base, store.FileChange{Path: "log.md", Delete: true}, store.FileChange{Path: "b.md", Data: []byte("b\n")})
	keep := &store.MergeOptions{Keep: []string{"log.md"}}
	for _, tc := range []struct {
		name string
		ours cairn.Hash
		want map[string]string
	}{
		{"OursChanged", ours, map[string]string{"log.md": "# Log\n\n## one\n\n## two\n", "a.md": "a\n", "b.md": "b\n"}},
		{"OursUnchanged", base, map[string]string{"log.md": "# Log\n\n## one\n", "a.md": "a\n", "b.md": "b\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := b.MergeTrees(ctx, base, tc.ours, theirs, keep)
			if err != nil || len(res.Conflicts) > 0 {
				t.Fatalf("MergeTrees = %+v, %v; want no conflicts", res.Conflicts, err)
			}
			if diff := cmp.Diff(tc.want, files(t, b, res.Tree)); diff != "" {
				t.Errorf("MergeTrees keeping log.md (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := b.MergeTrees(ctx, base, ours, theirs, &store.MergeOptions{Keep: []string{"../log.md"}})
		if cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("MergeTrees keeping ../log.md: %v, want EINVALID", err)
		}
	})
}

func newStore(t testing.TB) *store.Store {
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

// TestMergeTrees_Property merges random edits of whole trees, made on both
// sides, and checks each result against what the edits require
// (mergetest.Case.Check): every one-sided change in the result exactly,
// every change both sides made alike once, every two-sided change combined
// or a conflict, never one side's alone.
func TestMergeTrees_Property(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for seed := range uint64(rounds) {
		c := mergetest.Generate(rand.New(rand.NewPCG(seed, 1)), &mergetest.Options{Modes: true})
		if problems := checkMerge(t, s, c); len(problems) > 0 {
			t.Fatalf("seed %d:\n%s\nproblems:\n  %s", seed, c, strings.Join(problems, "\n  "))
		}
	}
}

// FuzzMergeTrees is TestMergeTrees_Property with the edits chosen by the
// fuzzer's input.
func FuzzMergeTrees(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("deleted on one side, changed on the other"))
	f.Add([]byte{8, 0, 0, 1, 0, 2, 0, 3, 1, 4, 2, 5, 3, 0, 4, 1, 5, 8, 2, 1, 3, 1, 2, 8, 3, 0, 1, 2, 3, 4, 5, 6, 7})
	s := newStore(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := mergetest.Generate(mergetest.Bytes(data), &mergetest.Options{Modes: true})
		if problems := checkMerge(t, s, c); len(problems) > 0 {
			t.Fatalf("%s\nproblems:\n  %s", c, strings.Join(problems, "\n  "))
		}
	})
}

// checkMerge builds the case's trees, merges them with and without conflict
// markers, and returns the problems found.
func checkMerge(t *testing.T, s *store.Store, c *mergetest.Case) []string {
	t.Helper()
	ctx := t.Context()
	b := s.NewBatch()
	base := edit(t, b, store.EmptyTree, changesOf(mergetest.Changes(nil, c.Base))...)
	ours := edit(t, b, base, changesOf(mergetest.Changes(c.Base, c.Ours))...)
	theirs := edit(t, b, base, changesOf(mergetest.Changes(c.Base, c.Theirs))...)
	plain, err := b.MergeTrees(ctx, base, ours, theirs, nil)
	if err != nil {
		t.Fatalf("MergeTrees: %v\n%s", err, c)
	}
	marked, err := b.MergeTrees(ctx, base, ours, theirs, &store.MergeOptions{Markers: true})
	if err != nil {
		t.Fatalf("MergeTrees with markers: %v\n%s", err, c)
	}
	var problems []string
	if diff := cmp.Diff(plain.Conflicts, marked.Conflicts); diff != "" {
		problems = append(problems, "conflicts differ with markers (-without +with):\n"+diff)
	}
	if plain.Tree.IsZero() != (len(plain.Conflicts) > 0) {
		problems = append(problems, fmt.Sprintf("tree %s with %d conflicts", plain.Tree.Short(), len(plain.Conflicts)))
	}
	if len(plain.Conflicts) == 0 && marked.Tree != plain.Tree {
		problems = append(problems, fmt.Sprintf("tree %s with markers, %s without", marked.Tree.Short(), plain.Tree.Short()))
	}
	var paths []string
	for _, cf := range marked.Conflicts {
		paths = append(paths, cf.Path)
	}
	var result []mergetest.File
	if !marked.Tree.IsZero() {
		for e, err := range b.Files(ctx, marked.Tree, "") {
			if err != nil {
				t.Fatal(err)
			}
			data, err := b.ReadBlob(ctx, e.Blob)
			if err != nil {
				t.Fatal(err)
			}
			result = append(result, mergetest.File{Path: e.Path, Data: string(data), Mode: e.Mode})
		}
	}
	return append(problems, c.Check(result, paths)...)
}

func changesOf(cs []mergetest.Change) []store.FileChange {
	out := make([]store.FileChange, 0, len(cs))
	for _, c := range cs {
		out = append(out, store.FileChange{Path: c.Path, Delete: c.Delete, Data: []byte(c.Data), Mode: c.Mode})
	}
	return out
}
