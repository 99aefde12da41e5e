package markdown

import (
	"fmt"
	"slices"
	"testing"
)

// The table finds every file filed under a key, once each, across its
// growth from the smallest size, and no file under a key it was not filed
// under: against a map of the same keys.
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
			tab.add(k, i) // again: filed once
			want[k] = append(want[k], i)
		}
	}
	if len(tab.file) <= 16 {
		t.Fatalf("the table did not grow: %d slots", len(tab.file))
	}
	for k, files := range want {
		var got []int
		tab.files(k, func(f int) { got = append(got, f) })
		slices.Sort(got)
		if !slices.Equal(got, files) {
			t.Fatalf("%v: files %v, want %v", k, got, files)
		}
	}
	for _, k := range []Key{{StepFile, "f5000"}, {StepPath, "f1"}, {StepStem, "everyone"}, {StepAlias, ""}} {
		tab.files(k, func(f int) { t.Errorf("%v: file %d, want none", k, f) })
	}
}
