package store_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/store"
)

// TestChanges_AsDiff holds that the changes read one at a time are the
// diff without renames, in its order, for random edits of trees large
// enough to have several levels: additions, deletions, new content, new
// modes and changes of case alone.
func TestChanges_AsDiff(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(7, 11))
	b := s.NewBatch()
	var start []store.FileChange
	for i := range 3000 {
		start = append(start, store.FileChange{Path: fmt.Sprintf("f%d/note-%04d.md", i%7, i), Data: []byte(fmt.Sprintf("note %d\n", i))})
	}
	base, err := b.BuildTree(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[cairn.ChangeKind]int{}
	cur := map[int]string{} // file i's path now; absent when deleted
	for i := range 3000 {
		cur[i] = fmt.Sprintf("f%d/note-%04d.md", i%7, i)
	}
	for round := range 20 {
		var changes []store.FileChange
		for i := range 3000 {
			p, ok := cur[i]
			if !ok {
				if rng.IntN(4) == 0 { // back
					cur[i] = fmt.Sprintf("f%d/note-%04d.md", i%7, i)
					changes = append(changes, store.FileChange{Path: cur[i], Data: []byte(fmt.Sprintf("note %d back\n", i))})
				}
				continue
			}
			switch rng.IntN(40) {
			case 0:
				changes = append(changes, store.FileChange{Path: p, Delete: true})
				delete(cur, i)
			case 1:
				changes = append(changes, store.FileChange{Path: p, Data: []byte(fmt.Sprintf("note %d, round %d\n", i, round))})
			case 2:
				changes = append(changes, store.FileChange{Path: p, Data: []byte(fmt.Sprintf("note %d\n", i)), Mode: cairn.ModeExecutable})
			case 3:
				// The same content under a name that differs in case only.
				e, err := b.Get(ctx, base, p)
				if err != nil {
					t.Fatal(err)
				}
				q := strings.Replace(p, "note", "Note", 1)
				if q == p {
					q = strings.Replace(p, "Note", "note", 1)
				}
				changes = append(changes, store.FileChange{Path: p, Delete: true},
					store.FileChange{Path: q, Blob: e.Blob, Size: e.Size, Mode: e.Mode})
				cur[i] = q
			}
		}
		changes = append(changes, store.FileChange{Path: fmt.Sprintf("new/%d.md", round), Data: []byte("new\n")})
		next, err := b.Edit(ctx, base, changes)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		want, err := s.Diff(ctx, base, next, &store.DiffOptions{NoRenames: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []cairn.Change
		for c, err := range s.Changes(ctx, base, next) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, c)
		}
		for _, c := range want {
			kinds[c.Kind]++
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round %d: Changes differ from Diff (-diff +changes):\n%s", round, diff)
		}
		n := 0
		for range s.Changes(ctx, base, next) {
			if n++; n == 3 {
				break // stopping early ends the reading
			}
		}
		base = next
	}
	if len(kinds) != 4 {
		t.Errorf("the rounds' changes were of kinds %v; want all four", kinds)
	}
	missing := cairn.Hash{1}
	var errs int
	for _, err := range s.Changes(ctx, base, missing) {
		if err != nil {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("changes to a tree that is not stored gave %d errors; want 1", errs)
	}
}
