package index

import (
	"testing"

	"cairn/internal/vaultgen"
	"cairn/markdown"
)

func TestFTSText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"The Quick brown fox, and the DOG!", "quick brown fox dog"},
		{"Café au lait — Ünïcode 42", "cafe au lait unicode 42"},
		{"the of and", ""},
		{"  x  ", "x"},
		{"ÉTÉ été", "ete"},
		{"naïve the naïve", "naive"},
		{"a b a c b", "b c"},
	} {
		if got := ftsText(tc.in); got != tc.want {
			t.Errorf("ftsText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// BenchmarkFTSText folds the plain text of generated pages to the words
// full-text search indexes.
func BenchmarkFTSText(b *testing.B) {
	var texts []string
	bytes := 0
	for _, f := range vaultgen.New(vaultgen.Config{Pages: 200}).All() {
		if len(f.Path) > 3 && f.Path[len(f.Path)-3:] == ".md" {
			texts = append(texts, markdown.PlainText(f.Data))
			bytes += len(texts[len(texts)-1])
		}
	}
	b.SetBytes(int64(bytes))
	for b.Loop() {
		for _, t := range texts {
			ftsText(t)
		}
	}
}
