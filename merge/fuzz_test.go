package merge_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"cairn/merge"
)

// FuzzText edits disjoint parts of a text on each side and checks that the
// merge is clean, holds every change of both sides, and does not depend on
// which side is ours.
//
// The lines of base are made unique, and so are the lines the edits insert:
// with repeated lines a diff may legitimately align an edit differently
// (delete the first of two equal lines rather than the second) and turn
// disjoint edits into overlapping ones, as in any diff3.
func FuzzText(f *testing.F) {
	f.Add([]byte("a\nb\nc\nd\ne\n"), []byte{1, 0x21, 0, 2, 0x12})
	f.Add([]byte("one\r\ntwo\r\nthree"), []byte{2, 0x30, 1, 1, 0x03})
	f.Add([]byte(""), []byte{1, 0x02, 2, 0x01})
	f.Fuzz(func(t *testing.T, text, script []byte) {
		base, ours, theirs, want := editPair(text, script)
		got := merge.Text(base, ours, theirs, nil)
		if len(got.Conflicts) > 0 {
			t.Fatalf("Text(%q, %q, %q): conflicts %+v, want a clean merge", base, ours, theirs, got.Conflicts)
		}
		if !bytes.Equal(got.Data, want) {
			t.Fatalf("Text(%q, %q, %q) = %q, want %q", base, ours, theirs, got.Data, want)
		}
		swapped := merge.Text(base, theirs, ours, nil)
		if len(swapped.Conflicts) > 0 || !bytes.Equal(swapped.Data, got.Data) {
			t.Fatalf("Text(%q, %q, %q) = %q, %+v; swapped sides give %q", base, ours, theirs, got.Data, got.Conflicts, swapped.Data)
		}
	})
}

// editPair derives base from text, ours and theirs as line edits of base
// driven by script, and the expected merge. Each script byte at a base line
// either keeps it or starts an edit of ours or theirs (by the byte's low
// bits) that deletes up to 3 lines and inserts up to 3 (by its high bits).
// At least one unchanged line separates any two edits.
func editPair(text, script []byte) (base, ours, theirs, want []byte) {
	var lines [][]byte
	seen := make(map[string]bool)
	unique := func(l []byte) []byte {
		body, term := l, []byte(nil)
		if b, ok := bytes.CutSuffix(l, []byte("\n")); ok {
			body, term = b, []byte("\n")
			if b, ok := bytes.CutSuffix(b, []byte("\r")); ok {
				body, term = b, []byte("\r\n")
			}
		}
		for i := 0; seen[string(l)]; i++ {
			l = fmt.Appendf(nil, "%s#%d%s", body, i, term)
		}
		seen[string(l)] = true
		return l
	}
	for l := range bytes.Lines(text) {
		lines = append(lines, unique(l))
	}
	newLine := func(side string) []byte { return unique(fmt.Appendf(nil, "%s %d\n", side, len(seen))) }

	base = bytes.Join(lines, nil)
	i := 0
	for _, op := range script {
		if i > len(lines) {
			break
		}
		side := op & 3
		del, ins := int(op>>2&3), int(op>>4&3)
		if side == 0 || side == 3 || del+ins == 0 || i+del > len(lines) ||
			del == 0 && i == len(lines) && len(lines) > 0 && !bytes.HasSuffix(lines[len(lines)-1], []byte("\n")) {
			if i < len(lines) {
				ours, theirs, want = append(ours, lines[i]...), append(theirs, lines[i]...), append(want, lines[i]...)
			}
			i++
			continue
		}
		var added []byte
		for range ins {
			added = append(added, newLine([]string{"", "ours", "theirs"}[side])...)
		}
		if side == 1 {
			ours = append(ours, added...)
			theirs = append(theirs, bytes.Join(lines[i:i+del], nil)...)
		} else {
			theirs = append(theirs, added...)
			ours = append(ours, bytes.Join(lines[i:i+del], nil)...)
		}
		want = append(want, added...)
		i += del
		// The separating line.
		if i < len(lines) {
			ours, theirs, want = append(ours, lines[i]...), append(theirs, lines[i]...), append(want, lines[i]...)
		}
		i++
	}
	if i < len(lines) {
		rest := bytes.Join(lines[i:], nil)
		ours, theirs, want = append(ours, rest...), append(theirs, rest...), append(want, rest...)
	}
	return base, ours, theirs, want
}

// FuzzSymmetry merges arbitrary versions by every strategy, both ways round,
// and checks that swapping the sides gives the same merged bytes, or the
// same conflicts with their sides swapped.
func FuzzSymmetry(f *testing.F) {
	for _, seed := range [][3]string{
		{"# Index\n\n## Entities\n- [[a]]\n", "# Index\n\n## Entities\n- [[a]]\n- [[b]]\n", "# Index\n\n## Entities\n- [[a]]\n- [[c]]\n"},
		{"# Log\n\n## [2026-11-28] a\n", "# Log\n\n## [2026-11-28] a\n\n## [2026-11-29] x\n", "# Log\n\n## [2026-11-28] a\n\n## [undated] y\n"},
		{"---\ntitle: A\ntags: [a]\n---\nbody\n", "---\ntitle: B\ntags: [a, b]\n---\nbody\n", "---\ntitle: A\ntags: [c, a]\nx: 1\n---\nbody 2\n"},
		{"---\ntitle: A\n---\n", "---\ntitle: B\n---\n", "---\ntitle: C\n---\n"},
		{"a\nb\nc", "a\nB\nc\n", "A\nb\nc"},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]), []byte(seed[2]))
	}
	strategies := []struct {
		name string
		f    mergeFunc
	}{
		{"Text", merge.Text},
		{"Markdown", merge.Markdown},
		{"Log", merge.Log},
		{"File", func(b, o, t []byte, opts *merge.Options) merge.Result { return merge.File("a.bin", b, o, t, opts) }},
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		for _, s := range strategies {
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
	})
}
