package confine

import (
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// TestReadLines checks how output is cut into lines: whole up to the
// bound, however the reads split it, and in pieces of the bound beyond.
func TestReadLines(t *testing.T) {
	long := strings.Repeat("a", 200<<10) // longer than the read buffer
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"Lines", "one\r\ntwo\n\nthree", DefaultMaxLine, []string{"one", "two", "", "three"}},
		{"LongWhole", long + "\nend\n", 1 << 20, []string{long, "end"}},
		{"LongCut", long + "\nend\n", 64 << 10, []string{long[:64<<10], long[64<<10 : 128<<10], long[128<<10 : 192<<10], long[192<<10:], "end"}},
		{"ExactCut", strings.Repeat("b", 8) + "\nx", 4, []string{"bbbb", "bbbb", "x"}},
		{"LongUnended", long, 1 << 20, []string{long}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			readLines(iotest.HalfReader(strings.NewReader(tc.in)), "stdout", tc.max, func(_, line string) { got = append(got, line) }, func() {})
			if diff := cmp.Diff(tc.want, got, cmp.Transformer("len", func(s string) string {
				if len(s) > 40 {
					return s[:10] + "…" + string(rune('0'+len(s)%10))
				}
				return s
			})); diff != "" || len(got) != len(tc.want) {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			for i := range min(len(got), len(tc.want)) {
				if got[i] != tc.want[i] {
					t.Errorf("line %d: %d bytes, want %d", i, len(got[i]), len(tc.want[i]))
				}
			}
		})
	}
}
