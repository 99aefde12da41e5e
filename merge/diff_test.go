package merge_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"cairn/merge"
)

// lcsLen is the length of a longest common subsequence, by dynamic
// programming: the reference for the diff's minimality.
func lcsLen(a, b [][]byte) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case bytes.Equal(a[i], b[j]):
				cur[j+1] = prev[j] + 1
			default:
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestMatchLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := [][]byte{[]byte("a\n"), []byte("b\n"), []byte("c\n"), []byte("d\n"), []byte("\n")}
	gen := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return out
	}
	for range 2000 {
		a, b := gen(rng.IntN(30)), gen(rng.IntN(30))
		match := merge.MatchLines(a, b)
		if len(match) != len(a) {
			t.Fatalf("MatchLines(%q, %q) has %d entries, want %d", a, b, len(match), len(a))
		}
		kept, last := 0, -1
		for i, j := range match {
			if j < 0 {
				continue
			}
			if j <= last || j >= len(b) || !bytes.Equal(a[i], b[j]) {
				t.Fatalf("MatchLines(%q, %q) = %v: line %d matched badly", a, b, match, i)
			}
			last = j
			kept++
		}
		if want := lcsLen(a, b); kept != want {
			t.Fatalf("MatchLines(%q, %q) keeps %d lines, want %d (a longest common subsequence)", a, b, kept, want)
		}
	}
}
