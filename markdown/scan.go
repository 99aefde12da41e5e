package markdown

import (
	"bytes"
	"slices"
	"strings"
)

// The body scanner is a single pass over lines that recognizes just enough
// block structure to know which text is prose: fenced code (``` and ~~~,
// CommonMark fence lengths and info strings, unclosed fences run to the end),
// indented code (4 columns, except while inside a list, where indented lines
// are the list's own content), HTML comment blocks, "%%" comments, ATX and
// setext headings, thematic breaks, list items and paragraphs. Blockquote
// markers are looked through. Prose is handed to the inline scanner one
// paragraph (or heading) at a time, so code spans and comments may span the
// lines of a paragraph, as in CommonMark.

type commentKind uint8

const (
	noComment      commentKind = iota
	percentComment             // %% ... %%, Obsidian's; may span blank lines
	htmlComment                // a <!-- block, to the line holding -->
)

// mdBudget bounds the bytes the inline scanner may examine on Markdown-link
// attempts that fail; past it, no more Markdown links are looked for in the
// page. Real pages stay far below it; crafted ones cannot go quadratic.
const mdBudget = 8 << 20

type scanner struct {
	src  []byte
	page *Page // nil in text mode
	path string

	text bool   // collect plain text into out
	out  []byte // the plain text

	// Block state.
	fenceChar   byte // '`' or '~' inside a fenced code block, else 0
	fenceLen    int
	fenceIndent int
	comment     commentKind
	listCtx     bool // the last block was a list item; indented lines are its content
	prevBlank   bool

	// The open paragraph: its text starts at paraStart, on the first of
	// paraLines, numbered paraLine.
	paraOpen   bool
	paraStart  int
	paraLines  []span // reused from paragraph to paragraph, in paraBuf first
	paraBuf    [16]span
	paraLine   int
	paraSetext bool // an underline would make it a setext heading

	// Where the text being scanned inline lies, to locate links: lines
	// (whole source lines), the first numbered firstLine; lineIdx is the
	// line of the last link.
	lines     []span
	firstLine int
	lineIdx   int
	one       [1]span // lines, for text on one line
	// hidden are the code spans and comments over line endings that the
	// last inline scan skipped.
	hidden []span
	// bodyStart is where scanning began, after any byte order mark;
	// bodyLineStart is the start of its line, counting the mark.
	bodyStart, bodyLineStart int

	budget int         // mdBudget, spent by failed Markdown-link attempts
	next   nextSpecial // for inline

	// Limits reached, reported once each.
	linksFull, headingsFull, blocksFull bool

	// Heading slugs seen so far: a list while short, then counts.
	bases    []string
	basesBuf [8]string
	slugs    map[string]int
}

// scanBody scans src[start:], whose first line is line.
func (s *scanner) scanBody(start, line int) {
	if s.page != nil {
		s.path = s.page.Path
	}
	s.budget = mdBudget
	s.paraLines, s.bases = s.paraBuf[:0], s.basesBuf[:0]
	s.next.reset()
	s.bodyStart, s.bodyLineStart = start, bytes.LastIndexByte(s.src[:start], '\n')+1
	s.prevBlank = true
	pos := start
	for pos < len(s.src) {
		end := len(s.src)
		next := end
		if i := bytes.IndexByte(s.src[pos:], '\n'); i >= 0 {
			end, next = pos+i, pos+i+1
		}
		if end > pos && s.src[end-1] == '\r' {
			end--
		}
		s.line(pos, end, line)
		pos = next
		line++
	}
	s.flush()
}

// line handles the line src[ls:le] (without its line ending), line number ln.
func (s *scanner) line(ls, le, ln int) {
	src := s.src
	if s.fenceChar != 0 {
		if s.closesFence(ls, le) {
			s.fenceChar = 0
		} else {
			s.emitLine(ls, le)
		}
		return
	}
	if s.comment != noComment {
		s.leaveComment(ls, le, ln)
		return
	}

	t, depth := skipQuotes(src, ls, le)
	t, indent := skipIndent(src, t, le)
	if t == le {
		s.flush()
		s.prevBlank = true
		return
	}
	blank := s.prevBlank
	s.prevBlank = false
	rest := src[t:le]
	if indent < 4 && !marker[rest[0]] {
		s.textLine(ls, t, le, ln, blank, indent, depth) // the common case
		return
	}

	if indent >= 4 && !s.listCtx {
		if s.paraOpen {
			s.paraLines = append(s.paraLines, span{ls, le})
			return
		}
		s.emitLine(t, le) // indented code
		return
	}
	if n := fenceOpen(rest); n > 0 && (indent <= 3 || s.listCtx) {
		if !s.interrupt(ls, le, ln, indent) {
			return
		}
		s.fenceChar, s.fenceLen, s.fenceIndent = rest[0], n, indent
		return
	}
	if indent <= 3 {
		if level := atxLevel(rest); level > 0 {
			if s.interrupt(ls, le, ln, indent) {
				s.atxHeading(ls, t+level, le, ln, level)
			}
			return
		}
		if bytes.HasPrefix(rest, []byte("<!--")) {
			if s.interrupt(ls, le, ln, indent) && bytes.Index(rest[4:], []byte("-->")) < 0 {
				s.comment = htmlComment
			}
			return
		}
		if s.paraOpen && s.paraSetext && depth == 0 {
			if level := setextLevel(rest); level > 0 {
				s.setextHeading(level)
				return
			}
		}
		if thematicBreak(rest) {
			s.interrupt(ls, le, ln, indent)
			return
		}
	}
	if m := listMarker(rest); m > 0 {
		if !s.interrupt(ls, le, ln, -1) {
			return
		}
		s.listCtx = true
		item := t + m
		item, _ = skipIndent(src, item, le)
		if n := fenceOpen(src[item:le]); n > 0 {
			s.fenceChar, s.fenceLen, s.fenceIndent = src[item], n, indent+m
			return
		}
		s.openPara(item, ls, le, ln, false)
		return
	}
	s.textLine(ls, t, le, ln, blank, indent, depth)
}

// marker marks the bytes that can start a line that is not plain text
// (blockquote markers are gone by then).
var marker = [256]bool{'`': true, '~': true, '#': true, '<': true, '=': true, '-': true, '*': true, '_': true, '+': true,
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true}

// textLine handles a line of paragraph text starting at t.
func (s *scanner) textLine(ls, t, le, ln int, blank bool, indent, depth int) {
	if s.paraOpen {
		s.paraLines = append(s.paraLines, span{ls, le})
		return
	}
	if blank && indent == 0 && depth == 0 {
		s.listCtx = false
	}
	s.openPara(t, ls, le, ln, depth == 0)
}

// span is a line of the source, without its line ending.
type span struct{ start, end int }

// lineStart is where the line that scanning sees starting at ls really
// starts: earlier for the first, behind a byte order mark.
func (s *scanner) lineStart(ls int) int {
	if ls == s.bodyStart {
		return s.bodyLineStart
	}
	return ls
}

// interrupt ends the open paragraph before a block that starts on the
// line. A block at indent 0 (indent -1: a list item) ends a list context.
// It reports false when the paragraph opened a "%%" comment that swallows
// this line; the line has then been handled.
func (s *scanner) interrupt(ls, le, ln, indent int) bool {
	s.flush()
	if indent == 0 {
		s.listCtx = false
	}
	if s.comment != noComment {
		s.line(ls, le, ln)
		return false
	}
	return true
}

// leaveComment looks for the end of the open comment on the line
// src[ls:le]. The rest of a line that closes a "%%" comment is prose; the
// rest of one that closes an HTML comment block belongs to the block.
func (s *scanner) leaveComment(ls, le, ln int) {
	closer := []byte("%%")
	if s.comment == htmlComment {
		closer = []byte("-->")
	}
	i := bytes.Index(s.src[ls:le], closer)
	if i < 0 {
		return
	}
	kind := s.comment
	s.comment = noComment
	s.prevBlank = false
	if start := ls + i + len(closer); kind == percentComment && start < le {
		s.one[0] = span{s.lineStart(ls), le}
		s.inline(start, le, s.one[:], ln)
		s.emit("\n")
	}
}

// openPara opens a paragraph whose text starts at start, on the line
// src[ls:le] numbered ln.
func (s *scanner) openPara(start, ls, le, ln int, setext bool) {
	s.paraOpen = true
	s.paraStart, s.paraLine = start, ln
	s.paraLines = append(s.paraLines[:0], span{s.lineStart(ls), le})
	s.paraSetext = setext
}

// paraEnd is the end of the open paragraph's text.
func (s *scanner) paraEnd() int { return s.paraLines[len(s.paraLines)-1].end }

// flush scans the open paragraph for links and block ids.
func (s *scanner) flush() {
	if !s.paraOpen {
		return
	}
	s.paraOpen = false
	stop := s.inline(s.paraStart, s.paraEnd(), s.paraLines, s.paraLine)
	s.emit("\n")
	if s.page == nil {
		return
	}
	// Block ids end a line of the paragraph outside code and comments.
	h := 0
	for _, l := range s.paraLines {
		if l.end > stop {
			break
		}
		for h < len(s.hidden) && s.hidden[h].end <= l.end {
			h++
		}
		if h < len(s.hidden) && s.hidden[h].start < l.end {
			continue // the line ends inside code or a comment
		}
		s.blockID(l.start, l.end)
	}
}

// blockID records a "^id" ending src[ls:le], preceded by a space, alone,
// or straight after a wikilink or embed ("![[image.png]]^id", as
// Obsidian's own help vault writes them).
func (s *scanner) blockID(ls, le int) {
	src := s.src
	for le > ls && (src[le-1] == ' ' || src[le-1] == '\t') {
		le--
	}
	if le == ls || !isBlockIDByte(src[le-1]) {
		return
	}
	i := le
	for i > ls && isBlockIDByte(src[i-1]) {
		i--
	}
	if i == le || i == ls || src[i-1] != '^' {
		return
	}
	if caret := i - 1; caret > ls && src[caret-1] != ' ' && src[caret-1] != '\t' && src[caret-1] != '>' && !s.wikilinkEndsAt(caret) {
		return
	}
	p := s.page
	if len(p.BlockIDs) >= MaxBlockIDs {
		if !s.blocksFull {
			s.blocksFull = true
			p.truncated("block ids", MaxBlockIDs)
		}
		return
	}
	p.BlockIDs = append(p.BlockIDs, string(src[i:le]))
}

// wikilinkEndsAt reports whether a wikilink or embed of the page ends at
// offset at. Links are recorded in the order they are written, so their
// ends rise through the body (frontmatter links come first, and end
// before it).
func (s *scanner) wikilinkEndsAt(at int) bool {
	if at < 2 || s.src[at-1] != ']' || s.src[at-2] != ']' {
		return false
	}
	links := s.page.Links
	i, found := slices.BinarySearchFunc(links, at, func(l Link, at int) int { return l.Offset + len(l.Raw) - at })
	return found && (links[i].Kind == LinkWiki || links[i].Kind == LinkEmbed)
}

// isBlockIDByte: Obsidian block ids are Latin letters, digits and dashes.
func isBlockIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// atxHeading records the heading whose text starts at ts on the line
// src[ls:le] numbered ln.
func (s *scanner) atxHeading(ls, ts, le, ln, level int) {
	src := s.src
	te := le
	for te > ts && (src[te-1] == ' ' || src[te-1] == '\t') {
		te--
	}
	// A closing sequence of '#'s preceded by a space (or alone) is not text.
	h := te
	for h > ts && src[h-1] == '#' {
		h--
	}
	if h < te && (h == ts || src[h-1] == ' ' || src[h-1] == '\t') {
		te = h
		for te > ts && (src[te-1] == ' ' || src[te-1] == '\t') {
			te--
		}
	}
	for ts < te && (src[ts] == ' ' || src[ts] == '\t') {
		ts++
	}
	s.one[0] = span{s.lineStart(ls), le}
	s.inline(ts, te, s.one[:], ln)
	s.emit("\n")
	s.heading(level, src[ts:te], ln)
}

// setextHeading turns the open paragraph into a heading.
func (s *scanner) setextHeading(level int) {
	s.paraOpen = false
	s.inline(s.paraStart, s.paraEnd(), s.paraLines, s.paraLine)
	s.emit("\n")
	if s.page == nil {
		return
	}
	var text []byte
	for i, l := range s.paraLines {
		if i > 0 {
			text = append(text, ' ')
		} else {
			l.start = s.paraStart
		}
		text = append(text, bytes.TrimSpace(s.src[l.start:l.end])...)
	}
	s.heading(level, text, s.paraLine)
}

func (s *scanner) heading(level int, text []byte, ln int) {
	p := s.page
	if p == nil {
		return
	}
	if len(p.Headings) >= MaxHeadings {
		if !s.headingsFull {
			s.headingsFull = true
			p.truncated("headings", MaxHeadings)
		}
		return
	}
	if p.Headings == nil {
		p.Headings = make([]Heading, 0, 4)
	}
	// One allocation holds the text and its slug.
	var b strings.Builder
	b.Grow(2*len(text) + 4)
	b.Write(text)
	appendSlug(&b, text)
	both := b.String()
	text2, slug := both[:len(text)], both[len(text):]
	p.Headings = append(p.Headings, Heading{Level: level, Text: text2, Slug: s.uniqueSlug(slug), Line: ln})
}

// uniqueSlug numbers repeated slugs as GitHub does: "a", "a-1", "a-2".
func (s *scanner) uniqueSlug(base string) string {
	n := 0
	if s.slugs != nil {
		n = s.slugs[base]
		s.slugs[base] = n + 1
	} else {
		for _, b := range s.bases {
			if b == base {
				n++
			}
		}
		if s.bases = append(s.bases, base); len(s.bases) > 32 {
			s.slugs = make(map[string]int, 64)
			for _, b := range s.bases {
				s.slugs[b]++
			}
		}
	}
	if n == 0 {
		return base
	}
	return base + "-" + itoa(n)
}

// closesFence reports whether src[ls:le] closes the open fence: a run of
// the fence character at least as long as the opening one, nothing after it
// but spaces, indented less than 4 columns past the opening fence.
func (s *scanner) closesFence(ls, le int) bool {
	t, _ := skipQuotes(s.src, ls, le)
	t, indent := skipIndent(s.src, t, le)
	if indent >= s.fenceIndent+4 {
		return false
	}
	n := 0
	for t+n < le && s.src[t+n] == s.fenceChar {
		n++
	}
	if n < s.fenceLen {
		return false
	}
	for _, c := range s.src[t+n : le] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

func (s *scanner) emitLine(ls, le int) {
	if s.text {
		s.out = append(s.out, s.src[ls:le]...)
		s.out = append(s.out, '\n')
	}
}

func (s *scanner) emit(str string) {
	if s.text {
		s.out = append(s.out, str...)
	}
}

// skipQuotes skips blockquote markers ("> ", up to 3 spaces before each)
// and returns the position after them and how many there were.
func skipQuotes(src []byte, i, le int) (int, int) {
	depth := 0
	for {
		j := i
		for j < le && j-i < 3 && src[j] == ' ' {
			j++
		}
		if j >= le || src[j] != '>' {
			return i, depth
		}
		depth++
		i = j + 1
		if i < le && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
	}
}

// skipIndent skips spaces and tabs (tab stops every 4 columns) and returns
// the position of the first other byte and its column.
func skipIndent(src []byte, i, le int) (int, int) {
	col := 0
	for ; i < le; i++ {
		switch src[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return i, col
		}
	}
	return i, col
}

// fenceOpen returns the length of the fence that line opens, or 0.
func fenceOpen(line []byte) int {
	if len(line) < 3 || line[0] != '`' && line[0] != '~' {
		return 0
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	if n < 3 || line[0] == '`' && bytes.IndexByte(line[n:], '`') >= 0 {
		return 0
	}
	return n
}

// atxLevel returns the level of the ATX heading line starts, or 0.
func atxLevel(line []byte) int {
	n := 0
	for n < len(line) && n < 7 && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(line) && line[n] != ' ' && line[n] != '\t' {
		return 0
	}
	return n
}

// setextLevel returns 1 for a "===" underline, 2 for "---", else 0.
func setextLevel(line []byte) int {
	c := line[0]
	if c != '=' && c != '-' {
		return 0
	}
	i := 0
	for i < len(line) && line[i] == c {
		i++
	}
	for ; i < len(line); i++ {
		if line[i] != ' ' && line[i] != '\t' {
			return 0
		}
	}
	if c == '=' {
		return 1
	}
	return 2
}

// thematicBreak reports a line of three or more '-', '*' or '_' (spaces
// allowed between them).
func thematicBreak(line []byte) bool {
	c := line[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for _, b := range line {
		switch b {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// listMarker returns the width of the list marker starting line ("- ",
// "* ", "+ ", "1. ", "1) "), or 0.
func listMarker(line []byte) int {
	i := 0
	switch {
	case line[0] == '-' || line[0] == '*' || line[0] == '+':
		i = 1
	case line[0] >= '0' && line[0] <= '9':
		for i < len(line) && i < 10 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i > 9 || i >= len(line) || line[i] != '.' && line[i] != ')' {
			return 0
		}
		i++
	default:
		return 0
	}
	if i < len(line) && line[i] != ' ' && line[i] != '\t' {
		return 0
	}
	return i
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
