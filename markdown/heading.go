package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"cairn"
)

// appendSlug writes the GitHub-style anchor of text: lower case, letters,
// marks, digits, '_' and '-' kept, spaces turned into '-', everything else
// dropped.
func appendSlug(b *strings.Builder, text []byte) {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 'A' && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_':
				b.WriteByte(c)
			case c == ' ':
				b.WriteByte('-')
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		i += n
		if unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
}

// headingKey normalizes heading text for matching a link's heading the way
// Obsidian does (its stripHeading, applied to both sides): every ASCII
// punctuation character but the apostrophe, '-' and '_' (that is,
// !"#$%&()*+,./:;<=>?@[\]^`{|}~) becomes a space, runs of white space
// shrink to one space, the ends are trimmed, and case is folded. So
// "[[Page#Why]]" finds "## Why?" and "[[Page#a b]]" finds "## a, b".
func headingKey(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && headingSpace[r] || isSpace(r) {
			return ' '
		}
		return r
	}, s)
	return fold(strings.Join(strings.Fields(s), " "))
}

// headingSpace marks the ASCII bytes headingKey reads as a space: white
// space and the punctuation Obsidian's heading matching leaves out.
var headingSpace = func() (t [utf8.RuneSelf]bool) {
	for _, c := range " \t\n\v\f\r!\"#$%&()*+,./:;<=>?@[\\]^`{|}~" {
		t[c] = true
	}
	return t
}()

// isSpace reports the white space Obsidian's matching collapses
// (JavaScript's \s): Unicode white space and the byte order mark.
func isSpace(r rune) bool { return r == '\ufeff' || unicode.IsSpace(r) }

// fold is cairn.FoldPath, with a fast path for ASCII, where full case
// folding is lower-casing and NFC changes nothing.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return cairn.FoldPath(s)
		}
	}
	return strings.ToLower(s)
}

// HasHeading reports whether the page has a heading that heading names.
// A chained heading ("Part#Detail", Obsidian's nested form) names its last
// part. Matching ignores case, white space and the ASCII punctuation
// Obsidian's matching leaves out (see headingKey); a GitHub-style slug
// ("my-heading", the form Markdown link fragments take elsewhere) matches
// too.
func (p *Page) HasHeading(heading string) bool { return hasHeading(p.Headings, heading) }

// hasHeading is HasHeading of a page with headings hs.
func hasHeading(hs []Heading, heading string) bool {
	if i := strings.LastIndexByte(heading, '#'); i >= 0 {
		heading = heading[i+1:]
	}
	lower := strings.ToLower(strings.TrimSpace(heading))
	key := ""
	for _, h := range hs {
		if h.Slug == lower {
			return true
		}
		if same, ok := sameHeadingASCII(h.Text, heading); ok {
			if same {
				return true
			}
			continue
		}
		if key == "" {
			key = headingKey(heading)
		}
		if headingKey(h.Text) == key {
			return true
		}
	}
	return false
}

// sameHeadingASCII compares a and b as headingKey does, without
// allocating; ok is false when either is not ASCII.
func sameHeadingASCII(a, b string) (same, ok bool) {
	ra, rb := headingReader{s: a}, headingReader{s: b}
	for {
		ca, na := ra.next()
		cb, nb := rb.next()
		switch {
		case ca >= utf8.RuneSelf || cb >= utf8.RuneSelf:
			return false, false
		case !na || !nb:
			return na == nb, true
		case ca != cb:
			// Text further on could still fold onto these bytes.
			return false, isASCII(a[ra.i:]) && isASCII(b[rb.i:])
		}
	}
}

// headingReader yields the bytes of s as headingKey would produce them:
// lower case, the punctuation headingKey leaves out and runs of white
// space read as one space, none at either end.
type headingReader struct {
	s              string
	i              int
	started, space bool
}

func (r *headingReader) next() (byte, bool) {
	for r.i < len(r.s) {
		c := r.s[r.i]
		if c < utf8.RuneSelf && headingSpace[c] {
			r.space = true
			r.i++
			continue
		}
		if r.space && r.started {
			r.space = false
			return ' ', true
		}
		r.space, r.started = false, true
		r.i++
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c, true
	}
	return 0, false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// HasBlock reports whether the page has the block id (without '^'); block
// ids match case-insensitively.
func (p *Page) HasBlock(id string) bool { return hasBlock(p.BlockIDs, id) }

// hasBlock is HasBlock of a page with block ids ids.
func hasBlock(ids []string, id string) bool {
	for _, b := range ids {
		if strings.EqualFold(b, id) {
			return true
		}
	}
	return false
}

// SetSlugs fills in the Slug of each heading from its Text, numbering
// repeated slugs as Parse does ("a", "a-1"), so that a store of headings
// may keep only their levels and texts.
func SetSlugs(hs []Heading) {
	var s scanner
	for i := range hs {
		var b strings.Builder
		appendSlug(&b, []byte(hs[i].Text))
		hs[i].Slug = s.uniqueSlug(b.String())
	}
}
