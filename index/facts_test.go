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

// TestFirstOthers checks the merge of two holders' lists against sorting
// their union without self and repeats, on random lists that overlap,
// hold self or not, and are filtered or not.
func TestFirstOthers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	list := func(n int) []string {
		var out []string
		for range n {
			out = append(out, fmt.Sprintf("p%02d.md", r.IntN(40)))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	for round := range 2000 {
		a, b := list(r.IntN(30)), list(r.IntN(30))
		if round%3 == 0 {
			b = nil
		}
		self := fmt.Sprintf("p%02d.md", r.IntN(40))
		var keep func(string) bool
		if round%2 == 0 {
			keep = func(p string) bool { return !strings.HasSuffix(p, "3.md") }
		}
		var want []string
		for _, p := range slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(a), b...)))) {
			if p != self && (keep == nil || keep(p)) {
				want = append(want, p)
			}
		}
		first, more := index.FirstOthers(self, keep, a, b)
		n := min(len(want), markdown.MaxCandidates)
		if diff := cmp.Diff(want[:n], first); diff != "" || more != len(want)-n {
			t.Fatalf("FirstOthers(%q, %v, %v): %v and %d more, want %v and %d more (-want +got):\n%s", self, a, b, first, more, want[:n], len(want)-n, diff)
		}
	}
}
