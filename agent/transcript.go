package agent

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"cairn"
)

// Bounds on what a Transcript keeps.
const (
	tailLines       = 40      // lines of the tail
	tailLineBytes   = 1 << 10 // bytes of a line of the tail
	summaryLines    = 40      // lines of a paragraph kept for the summary: its first ones
	summaryBytes    = 2000    // bytes of the summary
	summaryLineKeep = 4 << 10 // bytes of a line kept for the summary
)

// Transcript keeps what cairn needs of an agent's output, within bounds,
// however much it prints: the tail of both streams, for failure messages,
// and the agent's summary from its standard output — the last block
// between <summary> and </summary> (the prompt asks for one), else the last
// paragraph. The rest is not kept: it went to Task.Activity as it came. A
// Transcript is not safe for concurrent use; its zero value is ready.
type Transcript struct {
	tail    [tailLines]string // a ring of the last lines of both streams
	next, n int               // where the next tail line goes; how many there are
	para    text              // the paragraph of standard output being read
	last    text              // the last whole paragraph before it
	marking bool              // inside a <summary> block
	mark    text              // the block being read
	marked  text              // the last whole block
}

// text is the first lines of a paragraph or block, within the summary's
// bounds.
type text struct {
	lines []string
	bytes int
}

func (x *text) add(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	if len(x.lines) < summaryLines && x.bytes < summaryBytes {
		l := clip(line, summaryLineKeep)
		x.lines = append(x.lines, l)
		x.bytes += len(l)
	}
}

// The tags that mark the summary.
const (
	summaryOpen  = "<summary>"
	summaryClose = "</summary>"
)

// Line adds one line of stream ("stdout" or "stderr").
func (t *Transcript) Line(stream, line string) {
	t.tail[t.next] = clip(line, tailLineBytes)
	t.next = (t.next + 1) % tailLines
	t.n = min(t.n+1, tailLines)
	if stream != "stdout" {
		return
	}
	for rest := line; ; {
		if !t.marking {
			i := strings.Index(rest, summaryOpen)
			if i < 0 {
				break
			}
			t.marking, t.mark = true, text{}
			rest = rest[i+len(summaryOpen):]
			continue
		}
		j := strings.Index(rest, summaryClose)
		if j < 0 {
			t.mark.add(rest)
			break
		}
		t.mark.add(rest[:j])
		t.marking, t.marked = false, t.mark
		rest = rest[j+len(summaryClose):]
	}
	if strings.TrimSpace(line) == "" {
		if len(t.para.lines) > 0 {
			t.last, t.para = t.para, text{}
		}
		return
	}
	t.para.add(line)
}

// Tail returns the last lines of both streams, joined by newlines.
func (t *Transcript) Tail() string {
	lines := make([]string, 0, t.n)
	for i := range t.n {
		lines = append(lines, t.tail[(t.next-t.n+i+tailLines)%tailLines])
	}
	return strings.Join(lines, "\n")
}

// Summary returns the agent's account of its change: the last block
// between <summary> and </summary> (one the output ended in counts too),
// else the last paragraph of its standard output; as one line of
// printable text (Clean) of at most summaryBytes bytes, made of at most
// summaryLines lines, that does not start with "#" (it becomes the body of
// a log.md entry, whose headings start so). "" when it printed none.
func (t *Transcript) Summary() string {
	candidates := []text{t.marked, t.para, t.last}
	if t.marking {
		candidates = append([]text{t.mark}, candidates...)
	}
	for _, x := range candidates {
		s := strings.TrimSpace(strings.TrimLeft(Clean(strings.Join(x.lines, "\n"), summaryBytes), "#"))
		if s != "" {
			return s
		}
	}
	return ""
}

// Retained returns how many bytes of output t holds.
func (t *Transcript) Retained() int {
	n := 0
	for _, l := range t.tail {
		n += len(l)
	}
	return n + t.para.bytes + t.last.bytes + t.mark.bytes + t.marked.bytes
}

// Clean returns s as one line of printable text of at most max bytes (cut
// with "…", at a character boundary): invalid UTF-8 replaced, terminal
// escape sequences and control characters removed, and so are the
// invisible characters a path may not hold (cairn.IsInvisible:
// bidirectional controls, zero-width characters, the byte order mark, the
// soft hyphen, tag characters, variation selectors that follow no emoji),
// which could make the text read otherwise than it is, or hide text from a
// person that a later agent reads; runs of white space made one space.
func Clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	prev := rune(-1) // the last character kept
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			n = escapeLen(s[i:])
		case unicode.IsSpace(r):
			b.WriteByte(' ')
			prev = ' '
		case unicode.IsControl(r), cairn.IsInvisible(prev, r):
		default:
			b.WriteString(s[i : i+n])
			prev = r
		}
		i += n
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if len(out) > max {
		out = clip(out, max-len("…")) + "…"
	}
	return out
}

// escapeLen returns the length of the terminal escape sequence s starts
// with: a control sequence (ESC [ ... final byte), an operating system
// command or string (ESC ] ... BEL or ESC \), or ESC and one character.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return len(s)
	case ']', 'P', '_', '^':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	_, n := utf8.DecodeRuneInString(s[1:])
	return 1 + n
}

// clip returns s cut to at most n bytes, at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
