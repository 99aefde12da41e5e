package postgres

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortWords checks the sort of a page's words against sorting them as
// strings, on words that share their first eight bytes or are prefixes of
// each other, hold zero bytes, many-byte letters or bytes above 0x7f.
func TestSortWords(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "z", "\x00", "\x7f", "\xff", "é", "ß", "abcdefgh", "abcdefg"}
	word := func() string {
		var b strings.Builder
		for range r.IntN(14) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for round := range 2000 {
		ws := make([]string, r.IntN(300))
		for i := range ws {
			ws[i] = word()
		}
		want := slices.Clone(ws)
		slices.Sort(want)
		sortWords(ws)
		if !slices.Equal(ws, want) {
			t.Fatalf("round %d: sortWords gave\n%q\nwant\n%q", round, ws, want)
		}
	}
}

// TestLexemes checks a page's lexemes: distinct, sorted, long words cut at
// a letter's start, and the count of every word.
func TestLexemes(t *testing.T) {
	long := strings.Repeat("é", maxLexeme)          // 2 bytes a letter: cut at maxLexeme
	noLetter := strings.Repeat("\x80", maxLexeme+1) // counted, but no lexeme
	parts, n := lexemes("zeta alpha  beta alpha " + long + " " + long + "x " + noLetter)
	if n != 7 {
		t.Errorf("words = %d, want 7", n)
	}
	if len(parts) != 1 {
		t.Fatalf("parts = %d, want 1", len(parts))
	}
	want := []string{"alpha", "beta", "zeta", long[:maxLexeme]} // é is above z
	if !slices.Equal(parts[0], want) {
		t.Errorf("lexemes = %q, want %q", parts[0], want)
	}
}

// BenchmarkLexemes makes the lexemes of pages of 250 words drawn from a
// vocabulary of 30,000, as the generated vaults' pages are.
func BenchmarkLexemes(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 30000)
	for i := range vocab {
		var w strings.Builder
		for range 3 + r.IntN(9) {
			w.WriteByte(byte('a' + r.IntN(26)))
		}
		vocab[i] = w.String()
	}
	pages := make([]string, 256)
	for i := range pages {
		ws := make([]string, 250)
		for j := range ws {
			ws[j] = vocab[int(r.ExpFloat64()*3000)%len(vocab)]
		}
		pages[i] = strings.Join(ws, " ")
	}
	b.ResetTimer()
	for i := range b.N {
		lexemes(pages[i%len(pages)])
	}
}

// TestWordCounts checks the build's page counts of words against a map's,
// over enough words to grow the table many times, words that are
// prefixes of each other, the empty word and the words' order.
func TestWordCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "z", "\x00", "\xff", "é", "abcdefgh"}
	c, want := newWordCounts(), map[string]int32{}
	for range 200_000 {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		w := b.String()
		c.add(w)
		want[w]++
	}
	words, pages := c.sorted()
	if !slices.IsSorted(words) || len(words) != len(want) || len(pages) != len(words) {
		t.Fatalf("%d words (sorted: %v), want %d", len(words), slices.IsSorted(words), len(want))
	}
	for i, w := range words {
		if pages[i] != want[w] {
			t.Fatalf("%q: %d pages, want %d", w, pages[i], want[w])
		}
	}
}
