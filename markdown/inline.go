package markdown

import (
	"bytes"
	"slices"
	"strings"
)

// specials are the bytes at which the inline scanner has work to do. A
// '!' matters only before '[', where it is looked for.
const specials = "[`\\%<"

// nextSpecial finds the next special byte, keeping for each the position
// of its next occurrence in the source, so that each occurrence is found
// once per page with bytes.IndexByte (SIMD) rather than byte by byte.
// Scanning moves forward only, so a kept position stays right until passed.
type nextSpecial [len(specials)]int

func (n *nextSpecial) reset() {
	for k := range n {
		n[k] = -1
	}
}

// at returns the position of the first special byte in src[i:end], or end.
func (n *nextSpecial) at(src []byte, i, end int) int {
	first := end
	for k := range n {
		p := n[k]
		if p < i {
			p = bytes.IndexByte(src[i:], specials[k])
			if p < 0 {
				p = len(src)
			} else {
				p += i
			}
			n[k] = p
		}
		first = min(first, p)
	}
	return first
}

// maxCodeRun is the longest backtick run that opens a code span; longer
// runs are literal text. It bounds the scans for closing runs.
const maxCodeRun = 32

// Bounds on Markdown link parts; longer is not a link.
const (
	maxLabel = 2048
	maxDest  = 4096
	maxTitle = 2048
)

// inline scans src[start:end], one paragraph or heading lying on lines
// (the first numbered firstLine), for links. Code spans (backtick runs
// matched by equal length), backslash escapes, inline HTML comments closed
// within the range, and "%%" comments are skipped. A "%%" not closed within
// the range opens a comment that continues past it: inline then records the
// comment and returns where it began; otherwise it returns end.
func (s *scanner) inline(start, end int, lines []span, firstLine int) int {
	src := s.src
	s.lines, s.firstLine, s.lineIdx = lines, firstLine, 0
	s.hidden = s.hidden[:0]
	var noCloser [maxCodeRun + 1]bool // no closing run of that length after here
	htmlNoClose := false
	wclose := -1  // the first "]]" at or after some point, or end for none
	escaped := -1 // the last byte a backslash escaped
	emitFrom := start
	i := start
	for i < end {
		if i = s.next.at(src, i, end); i >= end {
			break
		}
		switch c := src[i]; c {
		case '\\':
			i++
			if i < end && isPunct(src[i]) {
				escaped = i
				i++
			}
		case '`':
			n := run(src, i, end, '`')
			j := i + n
			if n <= maxCodeRun && !noCloser[n] {
				if k := closingRun(src, j, end, n); k >= 0 {
					j = k + n
					s.hide(i, j)
				} else {
					noCloser[n] = true
				}
			}
			i = j
		case '<':
			if !htmlNoClose && bytes.HasPrefix(src[i:end], []byte("<!--")) {
				if k := bytes.Index(src[i+4:end], []byte("-->")); k >= 0 {
					s.emitRange(emitFrom, i)
					s.hide(i, i+4+k+3)
					i += 4 + k + 3
					emitFrom = i
					continue
				}
				htmlNoClose = true
			}
			i++
		case '%':
			if i+1 < end && src[i+1] == '%' {
				k := bytes.Index(src[i+2:end], []byte("%%"))
				s.emitRange(emitFrom, i)
				if k < 0 {
					s.comment = percentComment
					return i
				}
				s.hide(i, i+2+k+2)
				i += 2 + k + 2
				emitFrom = i
				continue
			}
			i++
		case '[':
			embed := i > start && src[i-1] == '!' && escaped != i-1
			from := i
			if embed {
				from--
			}
			if i+1 < end && src[i+1] == '[' {
				if wclose < i+2 {
					wclose = end
					if k := bytes.Index(src[i+2:end], []byte("]]")); k >= 0 {
						wclose = i + 2 + k
					}
				}
				if l, ok := s.wikilinkAt(from, i, wclose, end, embed); ok {
					s.emitRange(emitFrom, from)
					s.emitLabel(l.Label, src[i+2:wclose])
					s.addLink(l, from)
					i = wclose + 2
					emitFrom = i
					continue
				}
			}
			if l, label, e, ok := s.markdownAt(from, i, end, embed); ok {
				s.emitRange(emitFrom, from)
				s.emitLabel("", label)
				if l.Kind != "" {
					s.addLink(l, from)
				}
				i = e
				emitFrom = i
				continue
			}
			i++
		}
	}
	s.emitRange(emitFrom, end)
	return end
}

// hide notes that src[from:to], code or a comment, hides whatever it holds;
// only spans over a line ending matter to block ids, so only those are kept.
func (s *scanner) hide(from, to int) {
	if s.page != nil && bytes.IndexByte(s.src[from:to], '\n') >= 0 {
		s.hidden = append(s.hidden, span{from, to})
	}
}

// run returns the length of the run of c starting at i.
func run(src []byte, i, end int, c byte) int {
	n := 0
	for i+n < end && src[i+n] == c {
		n++
	}
	return n
}

// closingRun finds a run of exactly n backticks in src[from:end].
func closingRun(src []byte, from, end, n int) int {
	for from < end {
		k := bytes.IndexByte(src[from:end], '`')
		if k < 0 {
			return -1
		}
		k += from
		m := run(src, k, end, '`')
		if m == n {
			return k
		}
		from = k + m
	}
	return -1
}

// wikilinkAt parses the wikilink whose "[[" is at i (its '!' at from, for
// an embed) and whose first "]]" after it is at close (end when there is
// none).
func (s *scanner) wikilinkAt(from, i, close, end int, embed bool) (Link, bool) {
	if close >= end || close-(i+2) > maxWikilink {
		return Link{}, false
	}
	inner := s.src[i+2 : close]
	if bytes.Contains(inner, []byte("[[")) || bytes.IndexByte(inner, '\n') >= 0 {
		return Link{}, false
	}
	raw := string(s.src[from : close+2]) // one copy: the link's strings are substrings
	l, ok := wikilink(raw[i+2-from:len(raw)-2], s.path)
	l.Raw, l.Kind = raw, LinkWiki
	if embed {
		l.Kind, l.Embed = LinkEmbed, true
	}
	return l, ok
}

// markdownAt parses an inline Markdown link or image whose '[' is at i:
// "[label](destination "title")", the destination bare (balanced
// parentheses, no spaces) or in angle brackets. It returns the link (Kind
// "" when the destination is external: skipped, yet not text to rescan),
// its label and the end of its source text.
func (s *scanner) markdownAt(from, i, end int, embed bool) (l Link, label []byte, e int, ok bool) {
	if s.budget <= 0 {
		return l, nil, 0, false
	}
	src := s.src
	spent := 0
	defer func() {
		if !ok {
			s.budget -= spent + 1
		}
	}()
	// The label: brackets balance, escapes count.
	j, depth := i+1, 1
	for ; j < end && depth > 0; j++ {
		if j-i > maxLabel {
			spent = j - i
			return l, nil, 0, false
		}
		switch src[j] {
		case '\\':
			j++
		case '[':
			depth++
		case ']':
			depth--
		}
	}
	spent = j - i
	if depth > 0 || j >= end || src[j] != '(' {
		return l, nil, 0, false
	}
	label = src[i+1 : j-1]
	k := skipSpace(src, j+1, end)
	var ds, de int // the destination is src[ds:de]
	if k < end && src[k] == '<' {
		d := k + 1
		for d < end && src[d] != '>' && src[d] != '<' && src[d] != '\n' {
			if src[d] == '\\' {
				d++
			}
			d++
		}
		spent = d - i
		if d >= end || src[d] != '>' || d-k > maxDest {
			return l, nil, 0, false
		}
		ds, de, k = k+1, d, d+1
	} else {
		d, parens := k, 0
	dest:
		for ; d < end && d-k <= maxDest; d++ {
			switch c := src[d]; {
			case c <= ' ' || c == 0x7f:
				break dest
			case c == '\\':
				d++
			case c == '(':
				parens++
			case c == ')':
				if parens == 0 {
					break dest
				}
				parens--
			}
		}
		spent = d - i
		if parens != 0 || d > end || d-k > maxDest {
			return l, nil, 0, false
		}
		d = min(d, end)
		ds, de, k = k, d, d
	}
	// An optional title, then ')'.
	t := skipSpace(src, k, end)
	if t < end && t > k && (src[t] == '"' || src[t] == '\'' || src[t] == '(') {
		closer := src[t]
		if closer == '(' {
			closer = ')'
		}
		u := t + 1
		for u < end && src[u] != closer && u-t <= maxTitle {
			if src[u] == '\\' {
				u++
			}
			u++
		}
		spent = u - i
		if u >= end || src[u] != closer {
			return l, nil, 0, false
		}
		t = skipSpace(src, u+1, end)
	}
	if t >= end || src[t] != ')' {
		return l, nil, 0, false
	}
	raw := string(src[from : t+1]) // one copy: the link's strings are substrings
	l, _ = markdownLink(raw[ds-from:de-from], strings.TrimSpace(raw[i+1-from:j-1-from]), embed, s.path)
	l.Raw = raw
	return l, label, t + 1, true
}

// skipSpace skips spaces, tabs and at most one line ending.
func skipSpace(src []byte, i, end int) int {
	nl := false
	for i < end {
		switch src[i] {
		case ' ', '\t', '\r':
		case '\n':
			if nl {
				return i
			}
			nl = true
		default:
			return i
		}
		i++
	}
	return i
}

// addLink records l, written at offset from.
func (s *scanner) addLink(l Link, from int) {
	p := s.page
	if p == nil {
		return
	}
	if len(p.Links) >= MaxLinks {
		if !s.linksFull {
			s.linksFull = true
			p.truncated("links", MaxLinks)
		}
		return
	}
	for s.lineIdx+1 < len(s.lines) && s.lines[s.lineIdx+1].start <= from {
		s.lineIdx++
	}
	l.Line, l.Col, l.Offset = s.firstLine+s.lineIdx, from-s.lines[s.lineIdx].start+1, from
	switch {
	case p.Links == nil:
		p.Links = make([]Link, 0, 8)
	case cap(p.Links) == len(p.Links):
		// Size for the links still to come, guessed from the brackets
		// left: growing a big slice by append costs five times its size.
		n := len(p.Links) + 1 + bytes.Count(s.src[from:], []byte("["))/2
		p.Links = slices.Grow(p.Links, min(n, MaxLinks)-len(p.Links))
	}
	p.Links = append(p.Links, l)
}

func (s *scanner) emitRange(from, to int) {
	if s.text && from < to {
		s.out = append(s.out, s.src[from:to]...)
	}
}

// emitLabel writes what a reader sees of a link: its label, else its text.
func (s *scanner) emitLabel(label string, text []byte) {
	if !s.text {
		return
	}
	if label != "" {
		s.out = append(s.out, label...)
		return
	}
	s.out = append(s.out, text...)
}

// wikilinksIn returns the wikilinks and embeds in one frontmatter string
// value, read by the rules of the body (a string holds no code).
func wikilinksIn(v, pagePath string) []Link {
	var links []Link
	for {
		i := strings.Index(v, "[[")
		if i < 0 {
			return links
		}
		j := strings.Index(v[i+2:], "]]")
		if j < 0 {
			return links
		}
		inner := v[i+2 : i+2+j]
		if k := strings.LastIndex(inner, "[["); k >= 0 {
			i += 2 + k
			inner = inner[k+2:]
		}
		if len(inner) <= maxWikilink && strings.IndexByte(inner, '\n') < 0 {
			if l, ok := wikilink(inner, pagePath); ok {
				from := i
				if i > 0 && v[i-1] == '!' {
					from--
					l.Embed = true
				}
				l.Kind = LinkFrontmatter
				l.Raw = v[from : i+2+len(inner)+2]
				links = append(links, l)
			}
		}
		v = v[i+2+len(inner)+2:]
	}
}
