package markdown

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastFrontmatter parses by hand the YAML most frontmatter is written in,
// about ten times faster than yaml.v3: top-level "key: value" lines whose
// values are plain or quoted scalars (without escapes), one-line flow lists
// of them ("[a, 'b c']") or block lists of them ("- a" lines), with blank
// and comment lines between. It reports ok=false for anything else — tabs,
// nesting, multi-line scalars, anchors, tags, escapes, trailing comments
// after plain scalars, numbers other than small decimal integers — and the
// caller falls back to yaml.v3. Whenever it reports ok, its result equals
// yaml.v3's; FuzzFrontmatter checks that.
func fastFrontmatter(src fmSource) (fm frontmatter, ok bool) {
	y := src.yaml
	if !fastBytes(y) {
		return fm, false
	}
	values := make(map[string]any, 8)
	lines := fastLines{y: string(y)} // one copy; keys and values are substrings
	nodes := 1                       // counted as slowFrontmatter's measure does
	for {
		line, n, at := lines.next()
		if n < 0 {
			break
		}
		if skippable(line) {
			continue
		}
		key, rest, ok := fastKey(line)
		if !ok {
			return fm, false
		}
		if _, dup := values[key]; dup {
			return fm, false
		}
		var v any
		if rest == "" || rest[0] == '#' {
			if v, ok = fm.blockList(&lines, key, src); !ok {
				return fm, false
			}
		} else {
			var plain bool
			if v, plain, ok = fastValue(rest); !ok {
				return fm, false
			}
			if plain {
				fm.setPlain(key)
			}
			fm.linksIn(v, key, n, at, src)
		}
		values[key] = v
		nodes += 2
		if l, isList := v.([]any); isList {
			nodes += len(l)
		}
		if nodes > maxYAMLNodes {
			return fm, false // yaml.v3 rejects it, with the message
		}
	}
	if len(values) > 0 {
		fm.values = values
	}
	return fm, true
}

// fastLines iterates over lines, without their line endings.
type fastLines struct {
	y   string
	pos int // offset of the next line
	n   int // index of the next line
}

// next returns the next line, its 0-based index (-1 at the end) and its
// offset.
func (l *fastLines) next() (line string, n, at int) {
	if l.pos >= len(l.y) {
		return "", -1, 0
	}
	at, n = l.pos, l.n
	end := len(l.y)
	if i := strings.IndexByte(l.y[at:], '\n'); i >= 0 {
		end = at + i
		l.pos = end + 1
	} else {
		l.pos = end
	}
	l.n++
	return strings.TrimSuffix(l.y[at:end], "\r"), n, at
}

// peek returns the next line that is neither blank nor a comment, without
// consuming anything; n is -1 at the end.
func (l *fastLines) peek() (line string, n int) {
	save := *l
	defer func() { *l = save }()
	for {
		line, n, _ := l.next()
		if n < 0 || !skippable(line) {
			return line, n
		}
	}
}

// skippable reports a blank or comment-only line.
func skippable(line string) bool {
	t := strings.TrimLeft(line, " ")
	return t == "" || t[0] == '#'
}

// fastBytes reports whether y holds only what the fast path understands:
// UTF-8 that YAML accepts as printable, no tabs, CR only before LF, and no
// Unicode line separators, which YAML treats as line breaks.
func fastBytes(y []byte) bool {
	for i := 0; i < len(y); {
		c := y[i]
		if c >= ' ' && c < 0x7f {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
			case c == '\r':
				if i+1 >= len(y) || y[i+1] != '\n' {
					return false
				}
			case c < ' ' || c == 0x7f:
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(y[i:])
		switch {
		case r == utf8.RuneError && size == 1,
			r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		i += size
	}
	return true
}

// fastKey splits a top-level "key: rest" line. Keys are plain words:
// letters, digits and '_' first, then also '-', '.' and inner spaces.
func fastKey(line string) (key, rest string, ok bool) {
	if line == "" || !isKeyStart(line[0]) {
		return "", "", false
	}
	i := 1
	for i < len(line) && line[i] != ':' {
		c := line[i]
		if !isKeyStart(c) && c != '-' && c != '.' && c != ' ' {
			return "", "", false
		}
		i++
	}
	if i >= len(line) || i > 128 || line[i-1] == ' ' || i+1 < len(line) && line[i+1] != ' ' {
		return "", "", false
	}
	key = line[:i]
	switch key {
	case "null", "Null", "NULL":
		return "", "", false // a null key decodes as ""
	}
	return key, strings.Trim(line[i+1:], " "), true
}

func isKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// blockList reads the value of a key with nothing after its colon: a block
// list of scalars on the following lines ("- a", at one indentation), or
// null when a key or the end follows.
func (fm *frontmatter) blockList(lines *fastLines, key string, src fmSource) (any, bool) {
	first, n := lines.peek()
	if n < 0 || first[0] != ' ' && first[0] != '-' {
		return nil, true
	}
	indent := len(first) - len(strings.TrimLeft(first, " "))
	list := make([]any, 0, 4)
	for {
		line, n := lines.peek()
		if n < 0 {
			return list, true
		}
		ind := len(line) - len(strings.TrimLeft(line, " "))
		if ind < indent || ind == 0 && line[0] != '-' {
			return list, true // a key follows
		}
		item, ok := strings.CutPrefix(line[ind:], "- ")
		if ind != indent || !ok {
			return nil, false
		}
		_, n, at := nextContent(lines)
		item = strings.Trim(item, " ")
		if item == "" || item[0] == '[' {
			return nil, false
		}
		v, _, ok := fastValue(item)
		if !ok {
			return nil, false
		}
		fm.linksIn(v, key, n, at, src)
		list = append(list, v)
	}
}

// nextContent consumes lines up to and including the next one that is
// neither blank nor a comment.
func nextContent(lines *fastLines) (string, int, int) {
	for {
		line, n, at := lines.next()
		if n < 0 || !skippable(line) {
			return line, n, at
		}
	}
}

// linksIn records the wikilinks in the strings of v, a value on YAML line
// index n starting at YAML offset at.
func (fm *frontmatter) linksIn(v any, key string, n, at int, src fmSource) {
	add := func(s string) {
		if !strings.Contains(s, "[[") {
			return
		}
		for _, l := range wikilinksIn(s, src.path) {
			fm.links = append(fm.links, src.link(l, key, n, at))
		}
	}
	switch v := v.(type) {
	case string:
		add(v)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				add(s)
			}
		}
	}
}

// fastValue parses the value after "key: " or "- ": a quoted or plain
// scalar, or a one-line flow list. plain reports an unquoted string.
func fastValue(s string) (v any, plain, ok bool) {
	switch s[0] {
	case '"', '\'':
		str, rest, ok := quoted(s)
		if !ok || !endOfValue(rest) {
			return nil, false, false
		}
		return str, false, true
	case '[':
		return flowList(s)
	}
	v, ok = plainScalar(s, false)
	_, isString := v.(string)
	return v, isString, ok
}

// endOfValue reports whether rest, after a quoted scalar, is empty or a
// comment.
func endOfValue(rest string) bool {
	t := strings.TrimLeft(rest, " ")
	return t == "" || t[0] == '#' && len(t) < len(rest)
}

// quoted parses a quoted scalar at the start of s: single-quoted, where a
// doubled quote stands for one, or double-quoted without escapes.
func quoted(s string) (str, rest string, ok bool) {
	q := s[0]
	if q == '"' {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 || strings.IndexByte(s[1:1+end], '\\') >= 0 {
			return "", "", false
		}
		return s[1 : 1+end], s[2+end:], true
	}
	var b strings.Builder
	for i := 1; i < len(s); {
		end := strings.IndexByte(s[i:], '\'')
		if end < 0 {
			return "", "", false
		}
		b.WriteString(s[i : i+end])
		i += end + 1
		if i < len(s) && s[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i:], true
	}
	return "", "", false
}

// flowList parses "[a, 'b', "c"]" on one line, scalars only.
func flowList(s string) (v any, plain, ok bool) {
	list := make([]any, 0, 4)
	i := 1
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return nil, false, false
		}
		if s[i] == ']' && len(list) == 0 {
			break
		}
		var item any
		switch s[i] {
		case '"', '\'':
			str, rest, ok := quoted(s[i:])
			if !ok {
				return nil, false, false
			}
			item, i = str, len(s)-len(rest)
		default:
			j := i
			for j < len(s) && s[j] != ',' && s[j] != ']' {
				j++
			}
			if item, ok = plainScalar(strings.TrimRight(s[i:j], " "), true); !ok {
				return nil, false, false
			}
			i = j
		}
		list = append(list, item)
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return nil, false, false
		}
		if s[i] == ']' {
			break
		}
		if s[i] != ',' {
			return nil, false, false
		}
		i++
	}
	if !endOfValue(s[i+1:]) {
		return nil, false, false
	}
	return list, false, true
}

// plainScalar resolves an unquoted scalar the way yaml.v3 does, for the
// forms the fast path accepts: strings starting with a letter or another
// non-indicator character, true/false/null in their three spellings, small
// decimal integers, and YYYY-MM-DD dates (kept as text, which is what
// jsonSafe makes of a date).
func plainScalar(s string, flow bool) (any, bool) {
	if s == "" || strings.Contains(s, " #") || strings.Contains(s, ": ") || s[len(s)-1] == ':' {
		return nil, false
	}
	if flow && strings.ContainsAny(s, "[]{},:#") {
		return nil, false
	}
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	case "null", "Null", "NULL", "~":
		return nil, true
	}
	c := s[0]
	switch {
	case c >= '0' && c <= '9':
		if isDate(s) {
			return s, true
		}
		if len(s) > 18 || c == '0' && len(s) > 1 {
			return nil, false
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, false
		}
		return n, true
	case strings.IndexByte("-?:,[]{}#&*!|>'\"%@`.+<", c) >= 0:
		return nil, false
	}
	return s, true
}

// isDate reports the shape YYYY-MM-DD.
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
