package merge_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"cairn/merge"
)

// choices reads small decisions from fuzz bytes; when they run out every
// decision is 0.
type choices struct{ b []byte }

func (c *choices) intn(n int) int {
	if len(c.b) == 0 || n <= 1 {
		return 0
	}
	v := int(c.b[0]) % n
	c.b = c.b[1:]
	return v
}

func (c *choices) pick(options ...string) string { return options[c.intn(len(options))] }

// Pools from which generated pages are made, chosen so that versions often
// share lines, keys and list items: that is where merges get interesting.
var (
	genKeys   = []string{"title", "tags", "aliases", "type", "meta", "source"}
	genBody   = []string{"# Page\n", "## Entities\n", "## Links\n", "- [[a]]\n", "- [[b]]\n", "- [[c]]\n", "  - sub\n", "1. one\n", "* * *\n", "Some prose.\n", "\n", "\n"}
	genDates  = []string{"2026-11-28", "2026-11-29", "2026-11-30", "undated", "someday"}
	genTitles = []string{"ingest | a", "ingest | b", "lint | c", "note | d"}
)

func (c *choices) value() string {
	switch c.intn(6) {
	case 0:
		return " " + c.pick("A", "B", `"A"`, "'B'", "1", "2026-11-29")
	case 1:
		return " [" + c.pick("a", "a, b", "b, a", `a, "b"`, "c") + "]"
	case 2:
		return "\n" + c.pick("", "  ") + "- " + c.pick("a", "b") + "\n" + c.pick("", "  ") + "- c"
	case 3:
		return "\n  k: " + c.pick("1", "2")
	case 4:
		return c.pick(" x # comment", " [a] # c")
	}
	return ""
}

// page generates a Markdown page: maybe frontmatter, then body lines.
func (c *choices) page() []string {
	var lines []string
	if c.intn(4) > 0 {
		lines = append(lines, "---\n")
		for range c.intn(5) {
			if c.intn(4) == 0 {
				lines = append(lines, "# note\n")
			}
			lines = append(lines, c.pick(genKeys...)+":"+c.value()+"\n")
		}
		lines = append(lines, "---\n")
	}
	for range c.intn(8) {
		lines = append(lines, c.pick(genBody...))
	}
	return lines
}

// logPage generates an Eva log.
func (c *choices) logPage() []string {
	lines := []string{"# Log\n", "\n"}
	for range c.intn(5) {
		lines = append(lines, "## ["+c.pick(genDates...)+"] "+c.pick(genTitles...)+"\n", c.pick("", "- detail\n"), "\n")
	}
	return lines
}

// edit changes a copy of lines at a few places, reusing the generator's
// pools so the edits of two sides can coincide.
func (c *choices) edit(lines []string, log bool) []string {
	out := append([]string(nil), lines...)
	for range c.intn(4) {
		i := c.intn(len(out) + 1)
		var l string
		switch {
		case log:
			l = "## [" + c.pick(genDates...) + "] " + c.pick(genTitles...) + "\n"
		case c.intn(2) == 0:
			l = c.pick(genKeys...) + ":" + c.value() + "\n"
		default:
			l = c.pick(genBody...)
		}
		switch c.intn(3) {
		case 0:
			out = append(out[:i], append([]string{l}, out[i:]...)...)
		case 1:
			if i < len(out) {
				out = append(out[:i], out[i+1:]...)
			}
		default:
			if i < len(out) {
				out[i] = l
			}
		}
	}
	if c.intn(8) == 0 && len(out) > 0 { // drop the final line ending
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
	}
	return out
}

// checkSymmetric merges base, ours, theirs by Markdown, Log and Text, both
// ways round, with and without markers.
func checkSymmetric(t *testing.T, base, ours, theirs []byte) {
	t.Helper()
	for _, s := range []struct {
		name string
		f    mergeFunc
	}{{"Text", merge.Text}, {"Markdown", merge.Markdown}, {"Log", merge.Log}} {
		for _, markers := range []bool{false, true} {
			opts := &merge.Options{Markers: markers}
			got := s.f(base, ours, theirs, opts)
			swapped := s.f(base, theirs, ours, opts)
			if diff := cmp.Diff(got.Conflicts, swapConflicts(swapped.Conflicts), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s(%q, %q, %q, markers=%v): conflicts differ when sides are swapped (-got +swapped):\n%s", s.name, base, ours, theirs, markers, diff)
			}
			if len(got.Conflicts) == 0 && !bytes.Equal(got.Data, swapped.Data) {
				t.Fatalf("%s(%q, %q, %q) = %q; swapped sides give %q", s.name, base, ours, theirs, got.Data, swapped.Data)
			}
		}
	}
}

// generated derives a page or log and two edits of it from fuzz bytes.
func generated(data []byte) (base, ours, theirs []byte) {
	c := &choices{b: data}
	log := c.intn(3) == 0
	var lines []string
	if log {
		lines = c.logPage()
	} else {
		lines = c.page()
	}
	o, t := c.edit(lines, log), c.edit(lines, log)
	return []byte(strings.Join(lines, "")), []byte(strings.Join(o, "")), []byte(strings.Join(t, ""))
}

// FuzzPageSymmetry is FuzzSymmetry over generated pages and logs with two
// edits each, which share far more structure than arbitrary bytes do.
func FuzzPageSymmetry(f *testing.F) {
	f.Add([]byte{1, 3, 1, 2, 4, 1, 5, 2, 3, 4, 5, 6, 7, 2, 3, 3, 1, 0, 2, 2, 3, 1, 1, 2, 4})
	f.Add([]byte{0, 4, 1, 2, 3, 1, 2, 3, 0, 2, 3, 1, 1, 0, 2, 3, 2, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		base, ours, theirs := generated(data)
		checkSymmetric(t, base, ours, theirs)
	})
}

func TestPageSymmetry(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	data := make([]byte, 64)
	for range 1000 {
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		base, ours, theirs := generated(data)
		checkSymmetric(t, base, ours, theirs)
	}
}
