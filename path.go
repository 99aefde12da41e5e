package cairn

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// Path limits (docs/format.md).
const (
	MaxPathBytes    = 1024 // a whole vault-relative path
	MaxSegmentBytes = 255  // one segment between slashes
)

// PathUnicodeVersion is the Unicode version whose assigned code points a path
// may contain. Case folding and NFC are stable for assigned code points
// (Unicode's stability policies), so the tree keys derived from paths never
// change when a newer Go or x/text ships newer tables.
const PathUnicodeVersion = "15.0.0"

var assignedRunes = rangetable.Assigned(PathUnicodeVersion)

// invisibleRunes are the characters a path may not contain, and an
// agent's text loses, because they do not show, or change how the
// characters around them show, so a name could read as another: Unicode
// 15.0's format characters (category Cf: bidirectional controls,
// zero-width spaces and joiners, the byte order mark, soft hyphen...), the
// whole tag block U+E0000-U+E007F (its unassigned code points too), line
// and paragraph separators (Zl, Zp), the other default-ignorable
// characters (Hangul fillers, the combining grapheme joiner, Khmer
// inherent vowels) and the ideographic variation selectors
// U+E0100-U+E01EF. The table is written out, not taken from Go's, so that
// a newer Go never refuses a path that was accepted;
// TestCleanPath_Invisible checks it against Go's tables. The other
// variation selectors are in variationSelectors: they are invisible only
// where nothing takes them.
var invisibleRunes = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00ad, 0x00ad, 1}, {0x034f, 0x034f, 1}, {0x0600, 0x0605, 1}, {0x061c, 0x061c, 1},
		{0x06dd, 0x06dd, 1}, {0x070f, 0x070f, 1}, {0x0890, 0x0891, 1}, {0x08e2, 0x08e2, 1},
		{0x115f, 0x1160, 1}, {0x17b4, 0x17b5, 1}, {0x180e, 0x180e, 1}, {0x200b, 0x200f, 1},
		{0x2028, 0x202e, 1}, {0x2060, 0x2064, 1}, {0x2066, 0x206f, 1}, {0x3164, 0x3164, 1},
		{0xfeff, 0xfeff, 1}, {0xffa0, 0xffa0, 1}, {0xfff9, 0xfffb, 1},
	},
	R32: []unicode.Range32{
		{0x110bd, 0x110bd, 1}, {0x110cd, 0x110cd, 1}, {0x13430, 0x1343f, 1}, {0x1bca0, 0x1bca3, 1},
		{0x1d173, 0x1d17a, 1}, {0xe0000, 0xe007f, 1}, {0xe0100, 0xe01ef, 1},
	},
}

// variationSelectors are the variation selectors that pick how the
// character before them shows: U+FE00-U+FE0F (an emoji's text or emoji
// look, a mathematical symbol's form) and Mongolian's free variation
// selectors U+180B-U+180D and U+180F.
var variationSelectors = &unicode.RangeTable{
	R16: []unicode.Range16{{0x180b, 0x180d, 1}, {0x180f, 0x180f, 1}, {0xfe00, 0xfe0f, 1}},
}

// IsInvisible reports whether r, standing after prev (the character
// before it, or -1 at the start of the text), does not show, or changes
// how the characters around it show, so that text holding it could read
// as other text: a format character (bidirectional controls, zero-width
// spaces and joiners, the byte order mark, the soft hyphen, tags), a line
// or paragraph separator, another default-ignorable character, an
// ideographic variation selector (U+E0100-U+E01EF), or a variation
// selector U+FE00-U+FE0F (or a Mongolian one) that nothing before it
// takes: at the start, after an ASCII character, or after another
// variation selector. After any other character a variation selector
// counts as visible: emoji need them (❤️). The characters are those of
// Unicode 15.0, fixed in cairn, not taken from the running Go. Paths may
// not hold them (CleanPath); an agent's text loses them.
func IsInvisible(prev, r rune) bool {
	switch {
	case r < 0x80:
		return false
	case unicode.Is(variationSelectors, r):
		return prev < 0x80 || unicode.Is(variationSelectors, prev)
	}
	return unicode.Is(invisibleRunes, r)
}

// Quote returns s as a Go string literal, as strconv.Quote does, but with
// every invisible character (IsInvisible) escaped too: strconv.Quote keeps
// those Unicode counts printable (variation selectors, Hangul fillers, the
// combining grapheme joiner) as they are, so a quoted name could still
// read as another. Invalid UTF-8 bytes are escaped as \x.., like
// strconv.Quote does.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	prev := rune(-1)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case IsInvisible(prev, r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case IsInvisible(prev, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			q := strconv.Quote(s[i : i+n])
			b.WriteString(q[1 : len(q)-1])
		}
		prev = r
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

const pathHint = "Paths are vault-relative, use forward slashes, and have no empty, '.' or '..' segments."

const invisibleHint = "Rename it without invisible characters: bidirectional controls (U+202A-U+202E, U+2066-U+2069), " +
	"zero-width characters (U+200B-U+200D, U+2060), byte order marks (U+FEFF), tags (U+E0000-U+E007F), " +
	"variation selectors that follow no emoji (U+FE00-U+FE0F, U+E0100-U+E01EF) and other format characters are refused."

// CleanPath checks a vault-relative path and returns its canonical form: NFC
// normalized, slash separated. It refuses empty and absolute paths, '.', '..'
// and empty segments, backslashes, NUL and control characters, code points
// unassigned in Unicode 15.0, segments over 255 bytes, paths over 1024 bytes,
// invisible characters (IsInvisible: format characters such as
// bidirectional controls and zero-width spaces, line and paragraph
// separators, fillers, variation selectors that follow no emoji), anything
// under .cairn/ and any .git segment. Errors have code EINVALID.
func CleanPath(p string) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", Errorf(EINVALID, "path %s: %s", Quote(p), fmt.Sprintf(format, args...)).WithHint(pathHint)
	}
	if p == "" {
		return bad("empty")
	}
	if !utf8.ValidString(p) {
		return bad("not valid UTF-8")
	}
	ascii := true
	for i := 0; i < len(p) && ascii; i++ {
		ascii = p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\'
	}
	for _, r := range p {
		if ascii {
			break // printable ASCII: assigned, no controls, already NFC
		}
		switch {
		case r == 0:
			return bad("contains a NUL byte")
		case r == '\\':
			return bad("contains a backslash; use '/' to separate folders")
		case unicode.IsControl(r) || r == 0x7f:
			return bad("contains the control character %U", r)
		case !unicode.Is(assignedRunes, r):
			return bad("contains %U, which is not an assigned Unicode %s character", r, PathUnicodeVersion)
		}
	}
	if strings.HasPrefix(p, "/") {
		return bad("absolute paths are not allowed")
	}
	if len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z') {
		return bad("looks like a Windows drive path")
	}
	if !ascii {
		// Invisible characters are looked for in the normal form: NFC may
		// put an ASCII character before a variation selector (U+212A
		// KELVIN SIGN becomes K).
		in := p
		p = norm.NFC.String(p)
		prev := rune(-1)
		for _, r := range p {
			if IsInvisible(prev, r) {
				return "", Errorf(EINVALID, "path %s: contains the invisible character %U, which could make the name read as another", Quote(in), r).
					WithHint(invisibleHint)
			}
			prev = r
		}
	}
	if len(p) > MaxPathBytes {
		return bad("%d bytes long; the limit is %d", len(p), MaxPathBytes)
	}
	i := -1
	for seg := range strings.SplitSeq(p, "/") { // every path is checked: no slice
		i++
		switch {
		case seg == "":
			return bad("has an empty segment")
		case seg == "." || seg == "..":
			return bad("has a %q segment", seg)
		case len(seg) > MaxSegmentBytes:
			return bad("segment %.20q… is %d bytes; the limit is %d", seg, len(seg), MaxSegmentBytes)
		case i == 0 && strings.EqualFold(seg, ".cairn"):
			return bad(".cairn/ holds the vault's database and is never part of the tree")
		case strings.EqualFold(seg, ".git"):
			return bad(".git folders belong to git, not to the vault")
		}
	}
	return p, nil
}

var folder = cases.Fold()

// FoldPath returns the case-insensitive identity of a clean path: its Unicode
// full case folding, NFC normalized. Two paths with the same fold cannot both
// be in a vault (they collide on macOS and Windows); the vault tree is keyed
// by the fold (docs/format.md).
func FoldPath(p string) string {
	upper := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= utf8.RuneSelf {
			return norm.NFC.String(folder.String(p))
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return p
	}
	return strings.ToLower(p) // the full case folding of ASCII
}
