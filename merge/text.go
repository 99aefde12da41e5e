package merge

import (
	"bytes"
	"strings"

	"cairn"
)

// Text merges three versions of a text file line by line, with a classic
// diff3: base is diffed against each side, lines kept by both sides anchor
// the merge, and each region between anchors takes the side that changed it,
// or either side when both made the same change. A region both sides changed
// differently is a [cairn.ConflictContent] conflict, whose Lines locate it in
// each version (1-based) and whose Base, Ours and Theirs hold its lines;
// lines both sides added identically at the start or end of such a region
// are merged and left out of it. Two sides changing adjacent lines, with no
// unchanged line between, conflict.
//
// Lines keep their line endings, so CRLF files round-trip, a final line
// without one is an ordinary line, and a change of line ending is a change.
// Any bytes are accepted; a nil base is an empty one.
func Text(base, ours, theirs []byte, opts *Options) Result {
	if r, ok := trivial(base, ours, theirs); ok {
		return r
	}
	m := newMerger(resolve(opts), splitLines(base), splitLines(ours), splitLines(theirs))
	m.out = make([]byte, 0, max(len(ours), len(theirs)))
	m.merge()
	return m.result()
}

// splitLines cuts b into lines, each with its line ending. The lines are
// capped subslices of b.
func splitLines(b []byte) [][]byte {
	out := make([][]byte, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		out = append(out, b[:i:i])
		b = b[i:]
	}
	return out
}

// terminated reports whether line ends with a line ending.
func terminated(line []byte) bool { return bytes.HasSuffix(line, []byte{'\n'}) }

// detectEOL picks the line ending for the lines a merge writes itself
// (conflict markers, an ending for a last line that is no longer last):
// that of base's first line, or else that of the sides' first lines when
// they agree or only one has one, or else "\n". It depends on ours and
// theirs only as a pair, so the merge stays symmetric.
func detectEOL(base, ours, theirs []byte) []byte {
	first := func(b []byte) []byte {
		switch i := bytes.IndexByte(b, '\n'); {
		case i < 0:
			return nil
		case i > 0 && b[i-1] == '\r':
			return []byte("\r\n")
		}
		return []byte("\n")
	}
	if e := first(base); e != nil {
		return e
	}
	eo, et := first(ours), first(theirs)
	switch {
	case eo == nil && et != nil:
		return et
	case eo != nil && (et == nil || bytes.Equal(eo, et)):
		return eo
	}
	return []byte("\n")
}

// merger runs a diff3 over three versions of a sequence of lines.
type merger struct {
	settings
	base, ours, theirs [][]byte
	// lineOffset holds, per version (base, ours, theirs), the number of
	// lines before these in the whole file, for conflict positions.
	lineOffset [3]int
	// lists enables list union: items both sides inserted at one place are
	// kept from both instead of conflicting (Markdown bodies).
	lists bool
	eol   []byte

	out       []byte
	conflicts []cairn.Conflict
}

func newMerger(s settings, base, ours, theirs [][]byte) *merger {
	first := func(lines [][]byte) []byte {
		if len(lines) == 0 {
			return nil
		}
		return lines[0]
	}
	return &merger{
		settings: s,
		base:     base,
		ours:     ours,
		theirs:   theirs,
		eol:      detectEOL(first(base), first(ours), first(theirs)),
	}
}

// result returns what the merge produced: no Data for a conflicted merge
// without markers.
func (m *merger) result() Result {
	if len(m.conflicts) > 0 && !m.markers {
		return Result{Conflicts: m.conflicts}
	}
	return Result{Data: m.out, Conflicts: m.conflicts}
}

// merge walks the two diffs from base and resolves each region.
func (m *merger) merge() {
	mo := matchLines(m.base, m.ours)
	mt := matchLines(m.base, m.theirs)
	nb, no, nt := len(m.base), len(m.ours), len(m.theirs)
	ib, io, it := 0, 0, 0
	for ib < nb || io < no || it < nt {
		// A stable run: base lines both sides kept, with nothing inserted
		// before them.
		n := 0
		for ib+n < nb && mo[ib+n] == io+n && mt[ib+n] == it+n {
			n++
		}
		if n > 0 {
			m.emit(m.base[ib : ib+n])
			ib, io, it = ib+n, io+n, it+n
			continue
		}
		// An unstable region runs to the next base line both sides kept.
		j := ib
		for j < nb && (mo[j] < 0 || mt[j] < 0) {
			j++
		}
		eo, et := no, nt
		if j < nb {
			eo, et = mo[j], mt[j]
		}
		m.region(span{ib, j}, span{io, eo}, span{it, et})
		ib, io, it = j, eo, et
	}
}

// span is a half-open range of line indices.
type span struct{ lo, hi int }

func (s span) len() int { return s.hi - s.lo }

// region resolves one unstable region, given as line ranges of each version.
func (m *merger) region(b, o, t span) {
	B, O, T := m.base[b.lo:b.hi], m.ours[o.lo:o.hi], m.theirs[t.lo:t.hi]
	switch {
	case equalLines(O, B):
		m.emit(T)
		return
	case equalLines(T, B), equalLines(O, T):
		m.emit(O)
		return
	}

	// Both sides changed the region.
	if m.lists && m.unionLists(B, O, T, m.lineAfter(b)) {
		return
	}
	// Lines both added identically at its start or end are not in
	// conflict; base lines both kept there leave the region too.
	p := commonPrefix(O, T)
	pb := commonPrefix(B, O[:p])
	s := commonSuffix(O[p:], T[p:])
	sb := commonSuffix(B[pb:], O[len(O)-s:])
	m.emit(O[:p])
	b = span{b.lo + pb, b.hi - sb}
	o = span{o.lo + p, o.hi - s}
	t = span{t.lo + p, t.hi - s}
	B, O, T = m.base[b.lo:b.hi], m.ours[o.lo:o.hi], m.theirs[t.lo:t.hi]
	switch {
	case equalLines(O, B):
		m.emit(T)
	case equalLines(T, B):
		m.emit(O)
	case m.lists && m.unionLists(B, O, T, m.lineAfter(b)):
	default:
		m.conflict(b, o, t)
	}
	m.emit(m.ours[o.hi : o.hi+s])
}

// lineAfter returns the base line after a region, nil at the end.
func (m *merger) lineAfter(b span) []byte {
	if b.hi < len(m.base) {
		return m.base[b.hi]
	}
	return nil
}

// emit appends lines to the output. A line without a line ending that is no
// longer last gets one.
func (m *merger) emit(lines [][]byte) {
	for _, l := range lines {
		m.endLine()
		m.out = append(m.out, l...)
	}
}

// endLine terminates the output's last line, if it has none.
func (m *merger) endLine() {
	if len(m.out) > 0 && m.out[len(m.out)-1] != '\n' {
		m.out = append(m.out, m.eol...)
	}
}

// conflict records a conflict over the given ranges and, with markers,
// writes it out.
func (m *merger) conflict(b, o, t span) {
	B, O, T := m.base[b.lo:b.hi], m.ours[o.lo:o.hi], m.theirs[t.lo:t.hi]
	m.conflicts = append(m.conflicts, cairn.Conflict{
		Kind: cairn.ConflictContent,
		Lines: &cairn.ConflictLines{
			Base:   lineRange(m.lineOffset[0], b),
			Ours:   lineRange(m.lineOffset[1], o),
			Theirs: lineRange(m.lineOffset[2], t),
		},
		Base:   joinLines(B),
		Ours:   joinLines(O),
		Theirs: joinLines(T),
	})
	if m.markers {
		m.writeMarkers(joinLines(B), joinLines(O), joinLines(T))
	}
}

// writeMarkers writes a conflict between markers.
func (m *merger) writeMarkers(base, ours, theirs string) {
	m.endLine()
	m.out = m.appendMarkers(m.out, m.eol, base, ours, theirs)
}

// appendMarkers appends a conflict between git-style markers, in the diff3
// style with a base section, to out, which must be empty or end with a line
// ending.
func (s settings) appendMarkers(out, eol []byte, base, ours, theirs string) []byte {
	section := func(marker, label, text string) {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, eol...)
		}
		out = append(out, marker...)
		if label != "" {
			out = append(out, ' ')
			out = append(out, label...)
		}
		out = append(out, eol...)
		out = append(out, text...)
	}
	section("<<<<<<<", s.oursLabel, ours)
	section("|||||||", "base", base)
	section("=======", "", theirs)
	section(">>>>>>>", s.theirsLabel, "")
	return out
}

func lineRange(offset int, s span) cairn.LineRange {
	return cairn.LineRange{Start: offset + s.lo + 1, Count: s.len()}
}

func joinLines(lines [][]byte) string {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	var b strings.Builder
	b.Grow(n)
	for _, l := range lines {
		b.Write(l)
	}
	return b.String()
}

func equalLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func commonPrefix(a, b [][]byte) int {
	n := 0
	for n < len(a) && n < len(b) && bytes.Equal(a[n], b[n]) {
		n++
	}
	return n
}

func commonSuffix(a, b [][]byte) int {
	n := 0
	for n < len(a) && n < len(b) && bytes.Equal(a[len(a)-1-n], b[len(b)-1-n]) {
		n++
	}
	return n
}
