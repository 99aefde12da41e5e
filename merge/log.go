package merge

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
)

// logEntryRE matches the first line of an entry of Eva's log.md, capturing
// its date: "## [2026-11-29] ingest | title".
var logEntryRE = regexp.MustCompile(`^## \[([^\]]*)\]`)

// Log merges three versions of Eva's log.md: a header (the text before the
// first entry) and entries, each starting at a line "## [date] ..." (date is
// YYYY-MM-DD or "undated") and running to the next.
//
// When both sides kept every base entry, in order, and only added entries
// (anywhere), and the headers merge cleanly by [Text], the result is the
// merged header, then base's entries in base order with each added entry
// after the last base entry dated on or before it. Dates that are not
// YYYY-MM-DD sort after all others. Entries added at one place are ordered
// by date, then by text, so the result does not depend on which side is
// ours; an entry both sides added appears once. Entries are compared without
// their trailing blank lines, and the merged log separates entries the way
// base does. Anything else is merged by [Text].
func Log(base, ours, theirs []byte, opts *Options) Result {
	if r, ok := trivial(base, ours, theirs); ok {
		return r
	}
	if data, ok := mergeLog(base, ours, theirs); ok {
		return Result{Data: data}
	}
	return Text(base, ours, theirs, opts)
}

// logFile is a log.md cut into its header and entries.
type logFile struct {
	header  []byte
	entries []logEntry
}

// logEntry is one entry of a log.
type logEntry struct {
	date  string
	text  []byte // up to the end of its last non-blank line, less the line ending
	trail []byte // the line ending and blank lines after text
	base  int    // in a merged log, the index of the base entry it is, or -1
}

func parseLog(src []byte) logFile {
	var f logFile
	start := -1 // of the current entry
	pos := 0
	end := func() {
		if start < 0 {
			f.header = src[:pos]
			return
		}
		e := &f.entries[len(f.entries)-1]
		e.text, e.trail = cutTrail(src[start:pos])
	}
	for _, line := range splitLines(src) {
		if m := logEntryRE.FindSubmatch(line); m != nil {
			end()
			f.entries = append(f.entries, logEntry{date: string(m[1]), base: -1})
			start = pos
		}
		pos += len(line)
	}
	end()
	return f
}

// cutTrail cuts an entry after the last non-blank character of its last
// non-blank line.
func cutTrail(b []byte) (text, trail []byte) {
	i := bytes.LastIndexFunc(b, func(r rune) bool { return !strings.ContainsRune(" \t\r\n", r) }) + 1
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return b[:i], b[i:]
}

// compareDates orders log dates: YYYY-MM-DD dates in calendar order, then
// anything else ("undated"), all equal.
func compareDates(a, b string) int {
	da, db := isDate(a), isDate(b)
	switch {
	case da && db:
		return strings.Compare(a, b)
	case da:
		return -1
	case db:
		return 1
	}
	return 0
}

func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// mergeLog merges logs to which both sides only added entries; it reports
// false for anything else.
func mergeLog(base, ours, theirs []byte) ([]byte, bool) {
	lb, lo, lt := parseLog(base), parseLog(ours), parseLog(theirs)
	ao, ok1 := addedEntries(lb.entries, lo.entries)
	at, ok2 := addedEntries(lb.entries, lt.entries)
	if !ok1 || !ok2 {
		return nil, false
	}
	header := Text(lb.header, lo.header, lt.header, nil)
	if len(header.Conflicts) > 0 {
		return nil, false
	}

	// Entries both added count once; the rest in canonical order.
	added := slices.Concat(ao, subtractEntries(at, ao))
	slices.SortStableFunc(added, func(x, y logEntry) int {
		if c := compareDates(x.date, y.date); c != 0 {
			return c
		}
		return bytes.Compare(x.text, y.text)
	})
	after := make([][]logEntry, len(lb.entries)+1) // after[i+1] follows base entry i
	for _, e := range added {
		slot := 0
		for i := len(lb.entries) - 1; i >= 0; i-- {
			if compareDates(lb.entries[i].date, e.date) <= 0 {
				slot = i + 1
				break
			}
		}
		after[slot] = append(after[slot], e)
	}
	merged := slices.Clone(after[0])
	for i, e := range lb.entries {
		e.base = i
		merged = append(merged, e)
		merged = append(merged, after[i+1]...)
	}

	eol := detectEOL(base, ours, theirs)
	sep := logSeparator(lb, lo, lt, eol)
	final, ok := threeWay(lastTrail(lb), lastTrail(lo), lastTrail(lt))
	if !ok { // both changed how the file ends: take the bytewise larger ending
		final = lastTrail(lo)
		if bytes.Compare(lastTrail(lt), final) > 0 {
			final = lastTrail(lt)
		}
	}
	out := slices.Clip(header.Data)
	if len(out) > 0 && len(merged) > 0 && out[len(out)-1] != '\n' {
		out = append(out, eol...)
	}
	for i, e := range merged {
		out = append(out, e.text...)
		switch {
		case i == len(merged)-1:
			out = append(out, final...)
		case e.base >= 0 && merged[i+1].base == e.base+1:
			out = append(out, lb.entries[e.base].trail...) // as in base
		default:
			out = append(out, sep...)
		}
	}
	return out, true
}

// addedEntries returns the entries of side that are not base's, finding
// base's entries in side in order (leftmost). It reports false when side
// changed, dropped or reordered a base entry.
func addedEntries(base, side []logEntry) ([]logEntry, bool) {
	var added []logEntry
	j := 0
	for _, e := range side {
		if j < len(base) && bytes.Equal(base[j].text, e.text) {
			j++
			continue
		}
		added = append(added, e)
	}
	return added, j == len(base)
}

// subtractEntries returns the entries of a not in b, counted as multisets.
func subtractEntries(a, b []logEntry) []logEntry {
	have := make(map[string]int, len(b))
	for _, e := range b {
		have[string(e.text)]++
	}
	var out []logEntry
	for _, e := range a {
		if have[string(e.text)] > 0 {
			have[string(e.text)]--
			continue
		}
		out = append(out, e)
	}
	return out
}

// logSeparator returns what goes between two entries that were not
// neighbours in base: the first separator base uses, or else the one the
// sides use (the smaller if they differ), or else a blank line.
func logSeparator(b, o, t logFile, eol []byte) []byte {
	first := func(f logFile) []byte {
		if len(f.entries) < 2 {
			return nil
		}
		return f.entries[0].trail
	}
	if s := first(b); s != nil {
		return s
	}
	so, st := first(o), first(t)
	switch {
	case so == nil && st == nil:
		return slices.Concat(eol, eol)
	case so == nil:
		return st
	case st == nil || bytes.Compare(so, st) <= 0:
		return so
	}
	return st
}

// lastTrail is what ends a log after its last entry.
func lastTrail(f logFile) []byte {
	if len(f.entries) == 0 {
		return nil
	}
	return f.entries[len(f.entries)-1].trail
}
