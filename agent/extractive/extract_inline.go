package extractive

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"cairn"
)

// Inline Markdown becomes plain text: what a reader of the rendered source
// sees, without the syntax that makes links, embeds, HTML, code and
// emphasis. exEscape (extract.go) turns it back into Markdown that shows
// the same text and makes none of them.

// Bounds that keep exInline linear on hostile input: longer is not markup.
const (
	exMaxCodeRun   = 32   // backticks opening a code span
	exMaxFootnote  = 64   // bytes of a footnote reference ("[^note]")
	exMaxLinkDest  = 1024 // bytes of a Markdown link's destination and title
	exMaxLinkDepth = 2    // link texts holding links, nested
)

// exInline turns one paragraph of Markdown into plain text: code spans
// become their text; wikilinks their label or target; Markdown links
// their text; embeds, images, footnote references, HTML tags, scripts and
// comments disappear; emphasis markers go; HTML entities are decoded. It
// runs in linear time: each search for a closing delimiter either
// consumes what it passes or, failing, is not repeated.
func exInline(s string) string {
	return exClean(html.UnescapeString(exInlineDepth(s, 0)))
}

func exInlineDepth(s string, depth int) string {
	var b strings.Builder
	var noCodeClose [exMaxCodeRun + 1]bool // no closing backtick run of that length after here
	noWikiClose := false                   // no "]]" after here
	var closeOf map[int]int                // '[' → its matching ']', computed on first need
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && exPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := exRun(s, i, '`')
			if n <= exMaxCodeRun && !noCodeClose[n] {
				if end := exClosingRun(s, i+n, n); end >= 0 {
					b.WriteString(strings.TrimSpace(s[i+n : end]))
					i = end + n
					continue
				}
				noCodeClose[n] = true
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case strings.HasPrefix(s[i:], "<!--"):
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				return b.String() // an unclosed comment hides the rest
			}
			i += 4 + end + 3
			continue
		case c == '<':
			if end, url := exTag(s[i:]); end > 0 {
				b.WriteString(url)
				if name := exTagName(s[i : i+end]); name == "script" || name == "style" {
					// A script or a style is no text at all.
					k := exIndexFold(s[i+end:], "</"+name)
					if k < 0 {
						return b.String()
					}
					i += k
				}
				i += end
				continue
			}
		case !noWikiClose && (strings.HasPrefix(s[i:], "![[") || strings.HasPrefix(s[i:], "[[")):
			open := i + 2
			if c == '!' {
				open++
			}
			end := strings.Index(s[open:], "]]")
			if end < 0 {
				noWikiClose = true
				break
			}
			if c != '!' {
				b.WriteString(exWikiText(s[open : open+end]))
			}
			i = open + end + 2
			continue
		case strings.HasPrefix(s[i:], "[^"):
			if end := strings.IndexByte(s[i:min(len(s), i+exMaxFootnote)], ']'); end > 2 && !strings.ContainsAny(s[i+2:i+end], " [") {
				i += end + 1
				continue
			}
		case c == '[' || c == '!' && i+1 < len(s) && s[i+1] == '[':
			open := i
			if c == '!' {
				open++
			}
			if closeOf == nil {
				closeOf = exBrackets(s)
			}
			if close, ok := closeOf[open]; ok {
				if end, ok := exLinkEnd(s, close); ok {
					if c != '!' && depth < exMaxLinkDepth {
						b.WriteString(exInlineDepth(s[open+1:close], depth+1))
					} else if c != '!' {
						b.WriteString(s[open+1 : close])
					}
					i = end
					continue
				}
			}
		case c == '*' || c == '_' || c == '~' || c == '=':
			n := exRun(s, i, c)
			if (c != '~' && c != '=' || n == 2) && exFlanking(s, i, i+n) {
				i += n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// exClosingRun returns where the first run of exactly n backticks at or
// after i begins, or -1.
func exClosingRun(s string, i, n int) int {
	for i < len(s) {
		k := strings.IndexByte(s[i:], '`')
		if k < 0 {
			return -1
		}
		i += k
		m := exRun(s, i, '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// exIndexFold is strings.Index ignoring ASCII case, for an ASCII substr
// starting with '<'.
func exIndexFold(s, substr string) int {
	for i := 0; i+len(substr) <= len(s); {
		k := strings.IndexByte(s[i:], '<')
		if k < 0 {
			return -1
		}
		i += k
		if i+len(substr) <= len(s) && strings.EqualFold(s[i:i+len(substr)], substr) {
			return i
		}
		i++
	}
	return -1
}

// exBrackets matches the unescaped square brackets of s, the way nested
// parentheses match: '[' position → ']' position.
func exBrackets(s string) map[int]int {
	out := make(map[int]int)
	var open []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			open = append(open, i)
		case ']':
			if n := len(open); n > 0 {
				out[open[n-1]] = i
				open = open[:n-1]
			}
		}
	}
	return out
}

// exLinkEnd reports whether the ']' at s[close] ends a Markdown link's
// text: it is followed by a destination in parentheses ("(url)"), a
// reference ("[ref]") or "[]". It returns where the link ends.
func exLinkEnd(s string, close int) (int, bool) {
	if close+1 >= len(s) {
		return 0, false
	}
	switch s[close+1] {
	case '(':
		depth := 0
		for j := close + 1; j < min(len(s), close+1+exMaxLinkDest); j++ {
			switch s[j] {
			case '\\':
				j++
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
	case '[':
		if k := strings.IndexAny(s[close+2:], "[]"); k >= 0 && s[close+2+k] == ']' {
			return close + 2 + k + 1, true
		}
	}
	return 0, false
}

// exClean collapses white space into single spaces, drops control
// characters, the invisible characters a path may not hold
// (cairn.IsInvisible) and Obsidian block ids ("^id" ending the text), and
// trims.
func exClean(s string) string {
	var b strings.Builder
	space := false
	prev := rune(-1) // the last character written
	for _, r := range s {
		before := prev
		if space {
			before = ' '
		}
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || r == utf8.RuneError || cairn.IsInvisible(before, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		prev = r
	}
	out := b.String()
	if i := strings.LastIndex(out, " ^"); i >= 0 && exBlockID(out[i+2:]) {
		out = out[:i]
	}
	return out
}

func exBlockID(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func exPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// exRun is the length of the run of c at s[i].
func exRun(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// exFlanking reports whether the delimiter run s[i:j] is an emphasis
// marker: it touches a word on one side only ("*word*", "**Scale.**"),
// or punctuation on one side and white space on the other ("so.*");
// "5 * 3" and "snake_case" are text.
func exFlanking(s string, i, j int) bool {
	before, after := byte(' '), byte(' ')
	if i > 0 {
		before = s[i-1]
	}
	if j < len(s) {
		after = s[j]
	}
	if exWordByte(before) != exWordByte(after) {
		return true
	}
	return !exWordByte(before) && exSpaceByte(before) != exSpaceByte(after)
}

// exWordByte reports a byte that is neither white space nor ASCII
// punctuation.
func exWordByte(c byte) bool { return !exSpaceByte(c) && !exPunct(c) }

func exSpaceByte(c byte) bool { return c == ' ' || c == '\t' }

// exTag reports an HTML tag, comment-free, at the start of s: its length,
// and for an autolink ("<https://x>") the address it shows. It looks no
// further than the next '<'.
func exTag(s string) (int, string) {
	end := strings.IndexAny(s[1:], "<>") + 1
	if end < 2 || s[end] != '>' {
		return 0, ""
	}
	inner := s[1:end]
	if i := strings.Index(inner, ":"); i > 0 && !strings.ContainsAny(inner, " \t") && exScheme(inner[:i]) {
		return end + 1, inner
	}
	if strings.Contains(inner, "@") && !strings.ContainsAny(inner, " \t/") {
		return end + 1, inner
	}
	name := strings.TrimPrefix(inner, "/")
	if name == "" || !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		if strings.HasPrefix(inner, "!") || strings.HasPrefix(inner, "?") {
			return end + 1, ""
		}
		return 0, ""
	}
	return end + 1, ""
}

// exTagName is the lower-cased name of an opening tag ("<script x>" →
// "script"), or "".
func exTagName(tag string) string {
	tag = strings.TrimPrefix(tag, "<")
	end := strings.IndexFunc(tag, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') })
	if end < 0 {
		end = len(tag)
	}
	if end == 0 || tag[0] >= '0' && tag[0] <= '9' {
		return ""
	}
	return strings.ToLower(tag[:end])
}

func exScheme(s string) bool {
	if len(s) < 2 || len(s) > 32 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// exWikiText is what a wikilink shows: its label, else its target with
// any heading ("note#Part" → "note › Part"); block references dropped.
func exWikiText(inner string) string {
	if i := strings.IndexByte(inner, '|'); i >= 0 {
		return strings.TrimSpace(strings.TrimPrefix(inner[i+1:], "\\"))
	}
	inner = strings.TrimSuffix(inner, "\\")
	target, heading, _ := strings.Cut(inner, "#")
	target = strings.TrimSuffix(strings.TrimSpace(target), ".md")
	if strings.HasPrefix(heading, "^") {
		heading = ""
	}
	heading = strings.TrimSpace(strings.ReplaceAll(heading, "#", " › "))
	switch {
	case target == "":
		return heading
	case heading == "":
		return target
	}
	return target + " › " + heading
}
