package extractive

import (
	"bytes"
	"strings"

	"cairn/markdown"
)

// A new summary is catalogued with one list line. With a root index.md,
// the line goes at the end of the list under its first "## " heading that
// mentions summaries, or into a new "## Source summaries" section at the
// end; every other byte of the file stays as it was. Without one, the line
// goes into summaries/index.md, a page of type index (which the orphan
// rule exempts), created when missing.

// exSummariesHeading is the heading of a new section of index.md, and the
// title of a new summaries/index.md.
const exSummariesHeading = "Source summaries"

// exLine is one line of a file: its text is src[start:end], its line
// ending src[end:next].
type exLine struct{ start, end, next int }

func exLines(src []byte, from int) []exLine {
	var out []exLine
	for i := from; i < len(src); {
		j := bytes.IndexByte(src[i:], '\n')
		next := len(src)
		if j >= 0 {
			next = i + j + 1
		}
		end := next
		for end > i && (src[end-1] == '\n' || src[end-1] == '\r') {
			end--
		}
		out = append(out, exLine{start: i, end: end, next: next})
		i = next
	}
	return out
}

// exEOL is the line ending a file uses.
func exEOL(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// exBodyStart is where the body of a page begins, after its frontmatter.
func exBodyStart(src []byte) int {
	if parts := markdown.Split(src); parts.Found {
		return len(src) - len(parts.Body)
	}
	return 0
}

// exAddToIndex adds line to a root index.md. It reports whether it had to
// add a section.
func exAddToIndex(index []byte, line string) ([]byte, bool) {
	lines := exLines(index, exBodyStart(index))
	fence := ""
	for i, l := range lines {
		text := exTrimIndent(index, l)
		if exFenced(&fence, text) {
			continue
		}
		if exHeadingLevel(text) != 2 || !strings.Contains(strings.ToLower(text), "summar") {
			continue
		}
		end := i + 1
		for f := ""; end < len(lines); end++ {
			t := exTrimIndent(index, lines[end])
			if exFenced(&f, t) {
				continue
			}
			if lvl := exHeadingLevel(t); lvl == 1 || lvl == 2 {
				break
			}
		}
		return exInsertInList(index, lines[i:end], line), false
	}
	return exAppendSection(index, line), true
}

// exAddToSummariesIndex adds line to summaries/index.md, at the end of its
// last list, creating the page when old is nil.
func exAddToSummariesIndex(old []byte, line string) []byte {
	if old == nil {
		return []byte("---\ntitle: " + exSummariesHeading + "\ntype: index\n---\n\n# " + exSummariesHeading + "\n\n" + line + "\n")
	}
	return exInsertInList(old, exLines(old, exBodyStart(old)), line)
}

// exInsertInList inserts line after the last list item among lines (a
// section, or a whole body) and the item's continuation lines. Without a
// list, it goes after the last non-blank line, a blank line between.
func exInsertInList(src []byte, lines []exLine, line string) []byte {
	eol := exEOL(src)
	lastItem, lastText := -1, -1
	inItem := false
	fence := ""
	for i, l := range lines {
		text := exTrimIndent(src, l)
		if exFenced(&fence, text) {
			lastText, inItem = i, false
			continue
		}
		if text == "" {
			inItem = false
			continue
		}
		lastText = i
		_, item := exListItem(text)
		switch {
		case item && exIndent(string(src[l.start:l.end])) < 4 && !exRule(text):
			lastItem, inItem = i, true
		case inItem && exHeadingLevel(text) == 0:
			lastItem = i // the item continues
		default:
			inItem = false
		}
	}
	switch {
	case lastItem >= 0:
		l := lines[lastItem]
		if l.next > l.end {
			return exSplice(src, l.next, line+string(src[l.end:l.next]))
		}
		return exSplice(src, l.end, eol+line)
	case lastText >= 0:
		l := lines[lastText]
		if l.next > l.end {
			return exSplice(src, l.next, eol+line+eol)
		}
		return exSplice(src, l.end, eol+eol+line)
	case len(src) > 0 && !bytes.HasSuffix(src, []byte("\n")):
		return exSplice(src, len(src), eol+eol+line+eol)
	case len(src) > 0:
		return exSplice(src, len(src), eol+line+eol)
	}
	return []byte(line + eol)
}

// exTrimIndent is a line's text without its indentation.
func exTrimIndent(src []byte, l exLine) string {
	return strings.TrimLeft(string(src[l.start:l.end]), " \t")
}

// exAppendSection appends a new summaries section to an index without
// one, with one blank line before its heading.
func exAppendSection(index []byte, line string) []byte {
	eol := exEOL(index)
	end := len(bytes.TrimRight(index, " \t\r\n"))
	if k := bytes.IndexAny(index[end:], "\r\n"); k >= 0 {
		end += k
	} else {
		end = len(index)
	}
	var b bytes.Buffer
	b.Write(index[:end])
	if end > 0 {
		b.WriteString(eol + eol)
	}
	b.WriteString("## " + exSummariesHeading + eol + eol + line + eol)
	return b.Bytes()
}

func exSplice(src []byte, at int, ins string) []byte {
	out := make([]byte, 0, len(src)+len(ins))
	out = append(out, src[:at]...)
	out = append(out, ins...)
	return append(out, src[at:]...)
}

// exFenced tracks code fences line by line: it reports whether a line
// (without indentation) opens, closes or lies in a fenced code block,
// keeping the open fence in *fence.
func exFenced(fence *string, text string) bool {
	if *fence != "" {
		if strings.HasPrefix(text, *fence) && strings.Trim(text, (*fence)[:1]+" \t") == "" {
			*fence = ""
		}
		return true
	}
	if f := exFenceOpen(text); f != "" && f != "$$" {
		*fence = f
		return true
	}
	return false
}

// exHeadingLevel is the level of an ATX heading line, or 0.
func exHeadingLevel(text string) int {
	if exATX(text) < 0 {
		return 0
	}
	return len(text) - len(strings.TrimLeft(text, "#"))
}
