package index

import "testing"

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
