package extractive

import (
	"strings"
	"unicode/utf8"

	"cairn/markdown"
)

// A source is read as blocks of plain text: the paragraphs and list items
// that hold its prose, and its headings, which are searched for the names
// of pages but never quoted. Everything that is not prose (frontmatter,
// code, tables, HTML, rules, comments) is left out, and what remains is
// stripped of its markup: a link becomes its text, an image nothing.

// exBlock is one paragraph, list item or heading of a source, as plain
// text on one line.
type exBlock struct {
	text    string
	heading bool
}

// exBlocks returns the blocks of a Markdown source.
func exBlocks(src []byte) []exBlock {
	body := src
	if parts := markdown.Split(src); parts.Found {
		body = parts.Body
	}
	p := exParser{}
	for line := range strings.Lines(string(body)) {
		p.line(strings.TrimRight(line, "\r\n"))
	}
	p.flush()
	return p.blocks
}

// exParser reads Markdown line by line, the way CommonMark's block
// structure does in the common cases.
type exParser struct {
	blocks []exBlock
	para   []string // the lines of the current paragraph or list item
	// listy is set while a list item, or a paragraph continuing one after
	// a blank line, is the last block: indented lines then continue it
	// rather than start code.
	listy  bool
	blank  bool   // the previous line was blank
	quoted bool   // the previous line was in a block quote
	fence  string // the fence of the open code block, or ""
	// fenceQuoted is set when the open code block is in a block quote.
	fenceQuoted bool
	htmlEnd     string // what ends the open HTML block ("" for a blank line)
	inHTML      bool
	inTable     bool
	inComment   bool // inside a "%%" comment
}

func (p *exParser) flush() {
	if len(p.para) == 0 {
		return
	}
	text := exInline(strings.Join(p.para, " "))
	p.para = p.para[:0]
	if text != "" {
		p.blocks = append(p.blocks, exBlock{text: text})
	}
}

func (p *exParser) heading(s string) {
	if text := exInline(s); text != "" {
		p.blocks = append(p.blocks, exBlock{text: text, heading: true})
	}
}

func (p *exParser) line(line string) {
	if p.fence != "" {
		t := strings.TrimLeft(line, " \t")
		quoted := strings.HasPrefix(t, ">")
		if quoted {
			t = exUnquote(t)
		}
		switch {
		case p.fenceQuoted && !quoted:
			p.fence = "" // the quote holding the fence ended: so did the fence
		case strings.HasPrefix(t, p.fence) && strings.Trim(t, p.fence[:1]+" \t") == "":
			p.fence = ""
			return
		default:
			return
		}
	}
	if p.inHTML {
		if p.htmlEnd == "" && strings.TrimSpace(line) == "" || p.htmlEnd != "" && strings.Contains(strings.ToLower(line), p.htmlEnd) {
			p.inHTML = false
		}
		return
	}
	line = p.comments(line)
	trimmed := strings.TrimLeft(line, " \t")
	indent := exIndent(line)
	if trimmed == "" {
		p.flush()
		p.blank, p.inTable = true, false
		return
	}
	wasBlank := p.blank
	p.blank = false
	if p.inTable {
		return
	}
	if indent >= 4 && len(p.para) == 0 && !p.listy {
		return // indented code
	}
	quoted := strings.HasPrefix(trimmed, ">")
	if quoted {
		trimmed = exUnquote(trimmed)
		if c, ok := exCallout(trimmed); ok {
			p.flush()
			p.heading(c)
			p.quoted = true
			return
		}
	}
	if quoted != p.quoted {
		p.flush()
		p.quoted = quoted
	}
	if trimmed == "" {
		p.flush()
		return
	}

	switch {
	case exFenceOpen(trimmed) != "":
		p.flush()
		p.fence, p.fenceQuoted = exFenceOpen(trimmed), quoted
		p.listy = false
		return
	case exATX(trimmed) >= 0:
		p.flush()
		p.heading(exHeadingText(trimmed[exATX(trimmed):]))
		p.listy = false
		return
	case exSetext(trimmed) && len(p.para) > 0 && !p.listy:
		text := strings.Join(p.para, " ")
		p.para = p.para[:0]
		p.heading(text)
		return
	case exRule(trimmed):
		p.flush()
		p.listy = false
		return
	case exHTMLStart(trimmed) && len(p.para) == 0:
		p.inHTML, p.htmlEnd = true, exHTMLEnd(trimmed)
		if p.htmlEnd != "" && strings.Contains(strings.ToLower(trimmed[1:]), p.htmlEnd) {
			p.inHTML = false
		}
		return
	case exTableDelimiter(trimmed) && len(p.para) > 0 && strings.Contains(p.para[len(p.para)-1], "|"):
		p.para = p.para[:len(p.para)-1]
		p.flush()
		p.inTable = true
		return
	case exLinkDefinition(trimmed):
		p.flush()
		return
	}
	if rest, ok := exListItem(trimmed); ok {
		p.flush()
		p.para = append(p.para, exTaskBox(rest))
		p.listy = true
		return
	}
	if len(p.para) == 0 && !(p.listy && wasBlank && indent >= 2) && !(p.listy && !wasBlank) {
		p.listy = false
	}
	if len(p.para) == 0 {
		trimmed = exFootnote(trimmed)
	}
	p.para = append(p.para, trimmed)
}

// comments removes "%%" comments, which may span lines.
func (p *exParser) comments(line string) string {
	var b strings.Builder
	for {
		i := strings.Index(line, "%%")
		if p.inComment {
			if i < 0 {
				return b.String()
			}
			p.inComment = false
			line = line[i+2:]
			continue
		}
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		b.WriteString(line[:i])
		p.inComment = true
		line = line[i+2:]
	}
}

// exIndent is the width of a line's leading white space, a tab counting 4.
func exIndent(line string) int {
	n := 0
	for _, c := range []byte(line) {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n
		}
	}
	return n
}

// exUnquote removes block quote markers, nested or not.
func exUnquote(s string) string {
	for strings.HasPrefix(s, ">") {
		s = strings.TrimLeft(s[1:], " \t")
	}
	return s
}

// exCallout returns the title of an Obsidian callout line ("[!note]+
// Title").
func exCallout(s string) (string, bool) {
	if !strings.HasPrefix(s, "[!") {
		return "", false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", false
	}
	return strings.TrimLeft(s[end+1:], "+- \t"), true
}

// exFenceOpen returns the fence a line opens ("```", "~~~~", "$$"), or "".
func exFenceOpen(s string) string {
	if strings.HasPrefix(s, "$$") && !strings.Contains(s[2:], "$$") {
		return "$$"
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(s) && s[n] == c {
			n++
		}
		if n >= 3 && (c == '~' || !strings.Contains(s[n:], "`")) {
			return s[:n]
		}
	}
	return ""
}

// exATX returns where the text of an ATX heading line ("## Text")
// begins, or -1.
func exATX(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return -1
	}
	if n == len(s) {
		return n
	}
	if s[n] == ' ' || s[n] == '\t' {
		return n + 1
	}
	return -1
}

// exHeadingText removes an ATX heading's closing run of '#'.
func exHeadingText(s string) string {
	s = strings.TrimSpace(s)
	t := strings.TrimRight(s, "#")
	if t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t") {
		return strings.TrimSpace(t)
	}
	return s
}

// exSetext reports a setext heading underline ("===" or "---").
func exSetext(s string) bool {
	s = strings.TrimRight(s, " \t")
	return s != "" && (strings.Trim(s, "=") == "" || strings.Trim(s, "-") == "")
}

// exRule reports a thematic break: three or more '-', '*' or '_', with
// spaces between them allowed.
func exRule(s string) bool {
	for _, c := range []string{"-", "*", "_"} {
		if strings.Count(s, c) >= 3 && strings.Trim(s, c+" \t") == "" {
			return true
		}
	}
	return false
}

// exHTMLStart reports a line opening an HTML block, as CommonMark has
// them: a comment, declaration or processing instruction; a script, pre,
// style or textarea; a block-level tag ("<div", "</table>"); or any other
// complete tag alone on its line. A paragraph that starts with an inline
// tag ("<b>Note</b> text") is text.
func exHTMLStart(s string) bool {
	if len(s) < 2 || s[0] != '<' {
		return false
	}
	if c := s[1]; c == '!' || c == '?' {
		return true
	}
	name := exTagName(strings.TrimPrefix(s, "</"))
	if name == "" {
		return false
	}
	if exHTMLBlockTags[name] || exHTMLEnd(s) != "" {
		return true
	}
	end, _ := exTag(s)
	return end > 0 && strings.TrimSpace(s[end:]) == ""
}

// exHTMLBlockTags are the tags that open an HTML block wherever they stand
// (CommonMark's type 6).
var exHTMLBlockTags = make(map[string]bool)

func init() {
	for _, t := range strings.Fields(`address article aside base basefont blockquote body caption center col
		colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset
		h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol
		optgroup option p param search section summary table tbody td tfoot th thead title tr track ul`) {
		exHTMLBlockTags[t] = true
	}
}

// exHTMLEnd returns what closes the HTML block a line opens, in lower
// case, or "" when a blank line does.
func exHTMLEnd(s string) string {
	lower := strings.ToLower(s)
	for _, tag := range []string{"script", "pre", "style", "textarea"} {
		if strings.HasPrefix(lower, "<"+tag) && (len(lower) == len(tag)+1 || strings.ContainsRune(" \t>", rune(lower[len(tag)+1]))) {
			return "</" + tag + ">"
		}
	}
	switch {
	case strings.HasPrefix(lower, "<!--"):
		return "-->"
	case strings.HasPrefix(lower, "<?"):
		return "?>"
	case strings.HasPrefix(lower, "<![cdata["):
		return "]]>"
	case strings.HasPrefix(lower, "<!"):
		return ">"
	}
	return ""
}

// exTableDelimiter reports a table's delimiter row ("| --- | :-: |").
func exTableDelimiter(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "-") {
		return false
	}
	cells := strings.Split(strings.Trim(s, "|"), "|")
	if len(cells) < 2 && !strings.Contains(s, "|") {
		return false
	}
	for _, c := range cells {
		c = strings.TrimSpace(c)
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// exLinkDefinition reports a link reference definition ("[id]: url"),
// which is no text; a footnote ("[^1]: text") is.
func exLinkDefinition(s string) bool {
	if !strings.HasPrefix(s, "[") || strings.HasPrefix(s, "[^") {
		return false
	}
	end := strings.Index(s, "]:")
	return end > 1 && !strings.Contains(s[1:end], "]")
}

// exFootnote removes a footnote definition's label.
func exFootnote(s string) string {
	if !strings.HasPrefix(s, "[^") {
		return s
	}
	if end := strings.Index(s, "]:"); end > 0 {
		return strings.TrimLeft(s[end+2:], " \t")
	}
	return s
}

// exListItem returns the text of a list item line ("- x", "* x", "+ x",
// "• x", "1. x", "1) x").
func exListItem(s string) (string, bool) {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	switch {
	case n > 0 && n < len(s) && (s[n] == '.' || s[n] == ')'):
		n++
	case n > 0:
		return "", false
	case strings.HasPrefix(s, "•"):
		n = len("•")
	case s != "" && strings.IndexByte("-*+", s[0]) >= 0:
		n = 1
	default:
		return "", false
	}
	if n == len(s) {
		return "", true
	}
	if s[n] == ' ' || s[n] == '\t' {
		return strings.TrimLeft(s[n:], " \t"), true
	}
	return "", false
}

// exTaskBox removes a task list item's box ("[ ] ", "[x] ").
func exTaskBox(s string) string {
	if len(s) >= 3 && s[0] == '[' && s[2] == ']' && (len(s) == 3 || s[3] == ' ') {
		return strings.TrimLeft(s[3:], " ")
	}
	return s
}

// exPlainBlocks returns the blocks of a plain-text source: paragraphs
// separated by blank lines, and list items. A paragraph of one line
// without lower-case letters, or one short line without closing
// punctuation, is a heading. The line numbered skip (0-based; -1 for
// none), the title, is a heading too.
func exPlainBlocks(src []byte, skip int) []exBlock {
	var blocks []exBlock
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		text := exClean(strings.Join(para, " "))
		if text != "" {
			blocks = append(blocks, exBlock{text: text, heading: len(para) == 1 && exPlainHeading(para[0])})
		}
		para = para[:0]
	}
	n := 0
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		n++
		switch {
		case n-1 == skip:
			flush()
			blocks = append(blocks, exBlock{text: exClean(line), heading: true})
		case line == "":
			flush()
		case exSetext(line) && len(line) >= 3:
			if len(para) == 1 {
				blocks = append(blocks, exBlock{text: exClean(para[0]), heading: true})
				para = para[:0]
			}
			flush()
		default:
			if rest, ok := exListItem(line); ok && !exCapitals(line) {
				flush()
				line = rest
			}
			para = append(para, line)
		}
	}
	flush()
	return blocks
}

// exPlainHeading reports whether a line of plain text, a paragraph of its
// own, reads as a heading.
func exPlainHeading(line string) bool {
	if exCapitals(line) {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	return utf8.RuneCountInString(line) <= 60 && !strings.ContainsRune(".!?:;,\"'”’)…", last)
}
