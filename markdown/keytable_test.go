package markdown

import (
	"fmt"
	"slices"
	"testing"
)

// places returns the places of the files filed under k, sorted.
func (t *keyTable) places(k Key) []int {
	one, list := t.lookup(k)
	switch {
	case one >= 0:
		return []int{one}
	case list >= 0:
		var out []int
		for _, f := range t.many[list] {
			out = append(out, int(f))
		}
		return out
	}
	return nil
}

// The table finds every file filed under a key, once each, across its
// growth from the smallest size, and no file under a key it was not filed
// under: against a map of the same keys. One key is every file's.
func TestKeyTable(t *testing.T) {
	tab := newKeyTable(0)
	want := map[Key][]int{}
	for i := range 5000 {
		for _, k := range []Key{
			{StepFile, fmt.Sprintf("f%d", i)},
			{StepStem, fmt.Sprintf("s%d", i%700)},  // shared by several files
			{StepTitle, fmt.Sprintf("s%d", i%700)}, // the same text at another step
			{StepAlias, "everyone"},
		} {
			tab.add(k, i)
			tab.add(k, i) // again: listed once
			want[k] = append(want[k], i)
		}
	}
	tab.done()
	if len(tab.file) <= 16 {
		t.Fatalf("the table did not grow: %d slots", len(tab.file))
	}
	if distinct := 5000 + 700 + 700 + 1; tab.n != distinct {
		t.Errorf("%d slots filled, want one a distinct key: %d", tab.n, distinct)
	}
	for k, files := range want {
		if got := tab.places(k); !slices.Equal(got, files) {
			t.Fatalf("%v: files %v, want %v", k, got, files)
		}
	}
	for _, k := range []Key{{StepFile, "f5000"}, {StepPath, "f1"}, {StepStem, "everyone"}, {StepAlias, ""}} {
		if got := tab.places(k); got != nil {
			t.Errorf("%v: files %v, want none", k, got)
		}
	}
	var never keyTable
	if got := never.places(Key{StepFile, "x"}); got != nil {
		t.Errorf("a table never made: %v", got)
	}
}
