package store

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"cairn"
)

// FuzzTree applies random batches of inserts, updates and deletes and checks
// that the tree always equals the tree built at once from the resulting
// files, and that lookups and listings agree with a plain map.
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 255, 1, 2, 3})
	f.Add([]byte("the quick brown fox jumps over the lazy dog; deletes and re-adds keep the same root"))
	f.Add(make([]byte, 300))
	s := newTestStore(f)
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := t.Context()
		b := s.NewBatch()
		want := map[string]string{}
		tree := EmptyTree
		key := func(x byte) string {
			dirs := []string{"", "a/", "b/c/", "notes/"}
			return fmt.Sprintf("%sf%03d.md", dirs[x%4], int(x)*7%97)
		}
		for i := 0; i+1 < len(ops); {
			// A batch of up to 8 edits on distinct paths.
			n := int(ops[i]%8) + 1
			i++
			seen := map[string]bool{}
			var changes []FileChange
			for ; n > 0 && i < len(ops); n-- {
				p := key(ops[i])
				i++
				if seen[p] {
					continue
				}
				seen[p] = true
				if _, ok := want[p]; ok && i%3 == 0 {
					changes = append(changes, FileChange{Path: p, Delete: true})
					delete(want, p)
					continue
				}
				data := fmt.Sprintf("content %d of %s", i, p)
				changes = append(changes, FileChange{Path: p, Data: []byte(data)})
				want[p] = data
			}
			var err error
			if tree, err = b.Edit(ctx, tree, changes); err != nil {
				t.Fatalf("Edit: %v", err)
			}
		}
		var all []FileChange
		for _, p := range slices.Sorted(maps.Keys(want)) {
			all = append(all, FileChange{Path: p, Data: []byte(want[p])})
		}
		built, err := b.BuildTree(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		if tree != built {
			t.Fatalf("incremental root %s != built root %s for %d files", tree.Short(), built.Short(), len(want))
		}
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
		}
		if !maps.Equal(got, want) {
			t.Fatalf("Files() = %v, want %v", got, want)
		}
		for p := range want {
			if _, err := b.Get(ctx, tree, p); err != nil {
				t.Fatalf("Get(%s): %v", p, err)
			}
		}
		checkCanonical(t, b, tree, true)
	})
}

// checkCanonical checks the chunking invariants of a tree held in a batch.
func checkCanonical(t *testing.T, b *Batch, h cairn.Hash, root bool) {
	t.Helper()
	var walk func(h cairn.Hash, rightmost bool) *node
	walk = func(h cairn.Hash, rightmost bool) *node {
		n, err := b.node(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for i, it := range n.items {
			last := i == len(n.items)-1
			size += itemBytes(n.level, it)
			if cut := keyLevel(it.key) > n.level || size >= maxNodeBytes; !last && cut || last && !rightmost && !cut {
				t.Fatalf("node %s (level %d): item %d %q breaks the boundary rule", h.Short(), n.level, i, it.key)
			}
			if n.level > 0 {
				c := walk(it.hash, rightmost && last)
				if c.level != n.level-1 || c.items[len(c.items)-1].key != it.key || c.count() != it.size {
					t.Fatalf("node %s: child %d does not match its reference", h.Short(), i)
				}
			}
		}
		return n
	}
	n := walk(h, true)
	if root && n.level > 0 && len(n.items) < 2 {
		t.Fatalf("root %s has one child", h.Short())
	}
}
