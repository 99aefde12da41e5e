package merge

import (
	"bytes"
	"slices"
)

// unionLists resolves a region both sides changed when each side only
// inserted list items around base lines, and removed whole list items the
// other side kept intact. Each side's insertions at one place are whole
// items (a bulleted or numbered line and the lines indented under it);
// where both inserted at one place, the items of both are kept, the
// bytewise smaller insertion first, and an item both inserted appears
// once. An item one side removed is left out, so that removing an entry of
// a list (a revert of an older ingest's line in index.md) combines with
// entries the other side added beside it; an item both sides removed is
// left out too, unless either side inserted next to it (a change of the
// item on one side against its removal on the other is a conflict).
// Lines the other side added under a removed item (deeper than its
// marker) have nowhere to go, and make the region a conflict. after is the
// base line that follows the region (nil at the end of the file).
// unionLists writes the result and reports whether the region qualified.
func (m *merger) unionLists(base, ours, theirs [][]byte, after []byte) bool {
	ok, og, ko := keptItems(base, ours, after)
	if !ok {
		return false
	}
	ok, tg, kt := keptItems(base, theirs, after)
	if !ok {
		return false
	}
	for i := range base {
		if !ko[i] && !kt[i] && (len(og[i]) > 0 || len(og[i+1]) > 0 || len(tg[i]) > 0 || len(tg[i+1]) > 0) {
			return false
		}
	}
	if addedUnder(base, ko, tg) || addedUnder(base, kt, og) {
		return false
	}
	var lines [][]byte
	for g := range og {
		oi, ok := parseItems(og[g])
		if !ok {
			return false
		}
		ti, ok := parseItems(tg[g])
		if !ok {
			return false
		}
		for _, it := range unionItems(oi, ti) {
			lines = append(lines, it...)
		}
		if g < len(base) && ko[g] && kt[g] {
			lines = append(lines, base[g])
		}
	}
	m.emit(lines)
	return true
}

// keptItems aligns side with base and returns the lines side inserted
// before each base line and, last, after them all, and which base lines
// side kept. It reports false when a run of base lines side removed is not
// whole list items: items, not followed in base by a line indented under
// the last of them. A base line without a line ending (the last of a file)
// counts as kept when side ended it.
func keptItems(base, side [][]byte, after []byte) (ok bool, gaps [][][]byte, kept []bool) {
	gaps = make([][][]byte, len(base)+1)
	kept = make([]bool, len(base))
	match := matchLines(base, side)
	j := 0
	for i := range base {
		if match[i] < 0 && !terminated(base[i]) && j < len(side) && bytes.Equal(base[i], trimEOL(side[j])) {
			match[i] = j
		}
		if match[i] < 0 {
			continue
		}
		gaps[i] = append(gaps[i], side[j:match[i]]...)
		kept[i], j = true, match[i]+1
	}
	gaps[len(base)] = side[j:]
	for i := 0; i < len(base); {
		if kept[i] {
			i++
			continue
		}
		end := i
		for end < len(base) && !kept[end] {
			end++
		}
		items, ok := parseItems(base[i:end])
		if !ok {
			return false, nil, nil
		}
		next := after
		if end < len(base) {
			next = base[end]
		}
		if next != nil && !isBlank(next) {
			ind, isItem := listMarker(next)
			if first, _ := listMarker(items[0][0]); !isItem || ind > first {
				return false, nil, nil // the next line belongs to a removed item, or is no item
			}
		}
		i = end
	}
	return true, gaps, kept
}

// item is one list item: its marker line and the lines indented under it.
type item [][]byte

// parseItems cuts lines into list items, reporting false if some line is
// neither an item's marker line nor indented under one.
func parseItems(lines [][]byte) ([]item, bool) {
	var items []item
	indent := -1
	for _, l := range lines {
		ind, isItem := listMarker(l)
		switch {
		case indent >= 0 && (isItem && ind > indent || !isItem && !isBlank(l) && indentOf(l) > indent):
			items[len(items)-1] = append(items[len(items)-1], l) // nested under the item
		case isItem:
			items = append(items, item{l})
			indent = ind
		default:
			return nil, false
		}
	}
	return items, true
}

// listMarker reports whether line starts a list item ("- ", "* ", "+ ", or
// a number followed by ". " or ") ", after optional indentation), and its
// indentation.
func listMarker(line []byte) (indent int, ok bool) {
	indent = indentOf(line)
	rest := trimEOL(line[indent:])
	space := func(i int) bool { return i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') }
	if len(rest) > 0 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '+') {
		return indent, space(1) && !isThematicBreak(rest)
	}
	n := 0
	for n < len(rest) && n < 9 && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	return indent, n > 0 && n < len(rest) && (rest[n] == '.' || rest[n] == ')') && space(n+1)
}

// isThematicBreak reports whether s is a Markdown thematic break such as
// "* * *" or "- - -", which looks like a list item but is not one.
func isThematicBreak(s []byte) bool {
	n := 0
	for _, c := range s {
		switch {
		case c == s[0]:
			n++
		case c != ' ' && c != '\t':
			return false
		}
	}
	return n >= 3
}

func indentOf(line []byte) int {
	n := 0
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	return n
}

func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}

// unionItems returns the items of a and b, the bytewise smaller list first;
// an item in both appears once.
func unionItems(a, b []item) []item {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	if bytes.Compare(joinItems(b), joinItems(a)) < 0 {
		a, b = b, a
	}
	seen := make(map[string]int, len(a))
	for _, it := range a {
		seen[itemKey(it)]++
	}
	out := slices.Clip(a)
	for _, it := range b {
		if k := itemKey(it); seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, it)
	}
	return out
}

func joinItems(items []item) []byte {
	var b []byte
	for _, it := range items {
		for _, l := range it {
			b = append(b, l...)
		}
	}
	return b
}

// itemKey identifies an item for deduplication: its text, less the line
// ending of its last line, so that an item at the end of a file without a
// final line ending equals the same item elsewhere.
func itemKey(it item) string {
	var b []byte
	for i, l := range it {
		if i == len(it)-1 {
			l = trimEOL(l)
		}
		b = append(b, l...)
	}
	return string(b)
}

// addedUnder reports whether the other side (gaps) added lines under an
// item one side removed (kept reports which base lines that side kept):
// after a line of a removed run, starting deeper than the run's first
// item.
func addedUnder(base [][]byte, kept []bool, gaps [][][]byte) bool {
	for i := 0; i < len(base); {
		if kept[i] {
			i++
			continue
		}
		top, _ := listMarker(base[i])
		for i < len(base) && !kept[i] {
			if g := gaps[i+1]; len(g) > 0 && !isBlank(g[0]) && indentOf(g[0]) > top {
				return true
			}
			i++
		}
	}
	return false
}
