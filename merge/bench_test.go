package merge_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"cairn/merge"
)

// BenchmarkText10MB merges a 10 MB file in which each side changed one line.
func BenchmarkText10MB(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 10<<20; i++ {
		fmt.Fprintf(&buf, "line %d: the quick brown fox jumps over the lazy dog\n", i)
	}
	base := buf.Bytes()
	ours := bytes.Replace(base, []byte("line 1000: "), []byte("line 1000 (ours): "), 1)
	theirs := bytes.Replace(base, []byte("line 150000: "), []byte("line 150000 (theirs): "), 1)
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		r := merge.Text(base, ours, theirs, nil)
		if len(r.Conflicts) > 0 {
			b.Fatalf("Text: %d conflicts", len(r.Conflicts))
		}
	}
}

// BenchmarkTextUnrelated10MB merges two unrelated 10 MB versions: the diff
// gives up after its work budget and the file conflicts as a whole.
func BenchmarkTextUnrelated10MB(b *testing.B) {
	gen := func(prefix string) []byte {
		var buf bytes.Buffer
		for i := 0; buf.Len() < 10<<20; i++ {
			fmt.Fprintf(&buf, "%s %d: the quick brown fox jumps over the lazy dog\n", prefix, i)
		}
		return buf.Bytes()
	}
	base, ours, theirs := gen("base"), gen("ours"), gen("theirs")
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		if r := merge.Text(base, ours, theirs, nil); len(r.Conflicts) != 1 {
			b.Fatalf("Text: %d conflicts, want 1", len(r.Conflicts))
		}
	}
}

// BenchmarkTextPathological merges 1 MB versions made of a few distinct
// lines in random order: every line matches many others, the diff search
// runs into its work budget and the rest is one conflicting region.
func BenchmarkTextPathological(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	gen := func() []byte {
		var buf bytes.Buffer
		for buf.Len() < 1<<20 {
			buf.WriteString([]string{"a\n", "b\n", "- c\n", "\n"}[rng.IntN(4)])
		}
		return buf.Bytes()
	}
	base, ours, theirs := gen(), gen(), gen()
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		merge.Text(base, ours, theirs, nil)
	}
}
