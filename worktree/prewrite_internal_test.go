package worktree

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPrewrittenFind: a lookup before the writing has ended finds nothing;
// after, every path is found once, with the file staged for it last,
// whatever the order they were staged in.
func TestPrewrittenFind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := &Prewritten{done: make(chan struct{})}
	want := map[string]int32{}
	for n := range int32(500) {
		path := fmt.Sprintf("f%03d.md", rng.IntN(200)) // many staged more than once
		p.files = append(p.files, prewritten{path: path, n: n})
		want[path] = n
	}
	if _, ok := p.find("f000.md"); ok {
		t.Fatal("a file was found while the writing had not ended")
	}
	close(p.done)
	for path, n := range want {
		i, ok := p.find(path)
		if !ok || p.files[i].n != n {
			t.Errorf("%s: found %v at %d, want the file staged %d-th", path, ok, i, n)
		}
	}
	if len(p.files) != len(want) {
		t.Errorf("%d files kept, want %d (one a path)", len(p.files), len(want))
	}
	if _, ok := p.find("f999.md"); ok {
		t.Error("a path never staged was found")
	}
}
