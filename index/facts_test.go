package index_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/index"
	"cairn/markdown"
)

// TestSharedNames checks what a page finds of the others sharing a name
// against sorting the name's holders without the page and repeats: on
// random lists that overlap, hold the page or not, and are filtered or
// not, asked by every page in turn of one memory (and of none).
func TestSharedNames(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	list := func(n int) []string {
		var out []string
		for range n {
			out = append(out, fmt.Sprintf("p%02d.md", r.IntN(40)))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	for round := range 500 {
		a, b := list(r.IntN(30)), list(r.IntN(30))
		if round%3 == 0 {
			b = nil
		}
		var keep func(string) bool
		if round%2 == 0 {
			keep = func(p string) bool { return !strings.HasSuffix(p, "3.md") }
		}
		names := index.NewSharedNames()
		for i := range 41 {
			self := fmt.Sprintf("p%02d.md", i)
			var want []string
			for _, p := range slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(a), b...)))) {
				if p != self && (keep == nil || keep(p)) {
					want = append(want, p)
				}
			}
			n := min(len(want), markdown.MaxCandidates)
			for _, s := range []*index.SharedNames{names, nil} {
				first, more := s.Others("name", self, keep, a, b)
				if diff := cmp.Diff(want[:n], first); diff != "" || more != len(want)-n {
					t.Fatalf("Others(%q, %v, %v), memory %v: %v and %d more, want %v and %d more (-want +got):\n%s",
						self, a, b, s != nil, first, more, want[:n], len(want)-n, diff)
				}
			}
		}
	}
}
