package cairn_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

	"cairn"
)

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"index.md", "index.md"},
		{"notes/Alpha Beta.md", "notes/Alpha Beta.md"},
		{"cafe\u0301.md", "caf\u00e9.md"}, // NFD in, NFC out
		{"raw/paper (1).pdf", "raw/paper (1).pdf"},
		{".obsidian/app.json", ".obsidian/app.json"},
		{"a/.cairn/x", "a/.cairn/x"}, // only the top-level .cairn is reserved
		{strings.Repeat("a", 255), strings.Repeat("a", 255)},
		{"a\u00A0b.md", "a\u00A0b.md"},                     // a no-break space shows as a space
		{"\u2764\uFE0F.md", "\u2764\uFE0F.md"},             // variation selectors pick an emoji's look
		{"\u2764\uFE0E.md", "\u2764\uFE0E.md"},             // or its text look
		{"\u1820\u180B.md", "\u1820\u180B.md"},             // and a Mongolian letter's form
		{"1\u20E3.md", "1\u20E3.md"},                       // a keycap, without U+FE0F
		{"\u65E5\u672C\u8A9E.md", "\u65E5\u672C\u8A9E.md"}, // 日本語
	} {
		got, err := cairn.CleanPath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{
		"", "/abs.md", "C:/x.md", "c:x", "a//b.md", "a/./b.md", "../up.md", "a/../b.md", "a/", "a\\b.md",
		"a\x00b", "a\x1fb", "a\x7fb", "a\u0085b", "bad\xff.md", ".cairn/cairn.db", ".CAIRN/x", "x/.git/config", ".git",
		strings.Repeat("a", 256), strings.Repeat("abcdefghi/", 103) + "x", "a\U000E0080b", "\U0010FFFF.md",
		// Invisible characters that can make a name read as another.
		"report\u202Edm.exe", "a\u200Bb.md", "\uFEFFindex.md", "a\u2066b\u2069.md", "soft\u00ADhyphen.md",
		"line\u2028break.md", "para\u2029.md", "flag\U000E0067.md", "hangul\u3164filler.md", "cgj\u034F.md",
		// Variation selectors where nothing takes them: they change nothing
		// that shows, so the name reads as the one without them.
		"raw/notes\U000E0100\U000E0101.md", "\u845B\U000E0100.md", "notes\uFE0F.md", "\uFE0Fnotes.md", "a/\uFE0Eb.md",
		"\u2764\uFE0F\uFE0F.md", "1\uFE0F\u20E3.md", "notes\u180B.md", "\u212A\uFE0F.md", // U+212A becomes K in NFC
	} {
		if got, err := cairn.CleanPath(in); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("CleanPath(%q) = %q, %v; want an invalid-path error with a hint", in, got, err)
		}
	}
}

// TestCleanPath_Invisible checks the refused invisible characters against
// Unicode 15.0 as the running Go knows it: every assigned code point of
// the categories Cf (format), Zl and Zp (line and paragraph separators) and
// of the properties Other_Default_Ignorable_Code_Point and
// Variation_Selector is refused after an ASCII letter; every other
// assigned character that is not a control character, a slash or a
// backslash is accepted. A variation selector that may pick a look is
// accepted after a character that takes it, and the ideographic ones are
// refused even there.
func TestCleanPath_Invisible(t *testing.T) {
	if unicode.Version != cairn.PathUnicodeVersion {
		t.Skipf("Go's tables are Unicode %s, not %s", unicode.Version, cairn.PathUnicodeVersion)
	}
	assigned := rangetable.Assigned(cairn.PathUnicodeVersion)
	invisible := []*unicode.RangeTable{unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector}
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !unicode.Is(assigned, r) || unicode.IsControl(r) || unicode.Is(unicode.Cs, r) {
			continue
		}
		p := "a" + string(r) + "b.md"
		_, err := cairn.CleanPath(p)
		switch {
		case unicode.In(r, invisible...) && (cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == ""):
			t.Errorf("CleanPath(%q) = %v; want %U refused with a hint", p, err, r)
		case !unicode.In(r, invisible...) && err != nil:
			t.Errorf("CleanPath(%q) = %v; want %U accepted", p, err, r)
		}
		if !unicode.Is(unicode.Variation_Selector, r) {
			continue
		}
		// After a character that takes it: an emoji, a Mongolian letter,
		// a CJK ideograph.
		base := map[bool]rune{true: '\u2764', false: '\u1820'}[r >= 0xfe00]
		if r >= 0xe0100 {
			base = '\u845B'
		}
		p = "a" + string(base) + string(r) + "b.md"
		_, err = cairn.CleanPath(p)
		switch {
		case r >= 0xe0100 && (cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == ""):
			t.Errorf("CleanPath(%q) = %v; want %U refused with a hint", p, err, r)
		case r < 0xe0100 && err != nil:
			t.Errorf("CleanPath(%q) = %v; want %U accepted after %U", p, err, r, base)
		}
	}
}

// TestIsInvisible checks the table the paths' rule and the agents' text
// cleaning share: what CleanPath refuses as invisible is what IsInvisible
// reports, with the character before it.
func TestIsInvisible(t *testing.T) {
	for _, tc := range []struct {
		prev, r rune
		want    bool
	}{
		{'a', 'b', false},
		{'a', '\u200B', true},
		{'a', '\u2060', true},
		{'a', '\uFEFF', true},
		{'a', '\u00AD', true},
		{'a', '\U000E0049', true},      // TAG LATIN CAPITAL LETTER I
		{'a', '\U000E0000', true},      // the tag block, unassigned too
		{'a', '\U000E0100', true},      // VARIATION SELECTOR-17
		{'\u845B', '\U000E01EF', true}, // even after an ideograph
		{-1, '\uFE0F', true},           // at the start
		{'a', '\uFE0F', true},          // after ASCII
		{'\uFE0F', '\uFE0F', true},     // after another variation selector
		{'\u2764', '\uFE0F', false},    // after an emoji
		{'\u2764', '\uFE0E', false},
		{'\u1820', '\u180B', false}, // a Mongolian letter's form
		{'a', '\u180B', true},
		{'a', '\u00A0', false}, // a no-break space shows as a space
	} {
		if got := cairn.IsInvisible(tc.prev, tc.r); got != tc.want {
			t.Errorf("IsInvisible(%U, %U) = %v, want %v", tc.prev, tc.r, got, tc.want)
		}
		if tc.prev < 0 {
			continue
		}
		p := string(tc.prev) + string(tc.r) + ".md"
		if _, err := cairn.CleanPath(p); (err != nil) != tc.want && unicode.Is(rangetable.Assigned(cairn.PathUnicodeVersion), tc.r) {
			t.Errorf("CleanPath(%q) = %v; want refused: %v", p, err, tc.want)
		}
	}
}

func TestFoldPath(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"Notes/A.md", "notes/a.md"},
		{"STRASSE.md", "straße.md"},
		{"Ǆ.md", "ǆ.md"},
		{"café.md", "CAFÉ.md"},
	} {
		if cairn.FoldPath(tc.a) != cairn.FoldPath(tc.b) {
			t.Errorf("FoldPath(%q) = %q, FoldPath(%q) = %q; want equal", tc.a, cairn.FoldPath(tc.a), tc.b, cairn.FoldPath(tc.b))
		}
	}
	if cairn.FoldPath("a.md") == cairn.FoldPath("b.md") {
		t.Errorf("FoldPath folds different names together")
	}
}

// FuzzCleanPath checks the path rules on arbitrary input: an accepted path
// is clean (NFC, no empty, '.' or '..' segment, no control characters,
// within the limits) and cleaning it again changes nothing; its fold is
// stable.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"index.md", "a/b/c.md", "../x", "cafe\u0301", "a//b", ".cairn/x", "x/.git/y", "Ａ.md", "\xff", "a\\b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := cairn.CleanPath(in)
		if err != nil {
			if cairn.ErrorCode(err) != cairn.EINVALID {
				t.Fatalf("CleanPath(%q) error code = %s, want %s", in, cairn.ErrorCode(err), cairn.EINVALID)
			}
			return
		}
		if !utf8.ValidString(p) || !norm.NFC.IsNormalString(p) || len(p) > cairn.MaxPathBytes {
			t.Fatalf("CleanPath(%q) = %q: not valid NFC within limits", in, p)
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." || len(seg) > cairn.MaxSegmentBytes {
				t.Fatalf("CleanPath(%q) = %q: bad segment %q", in, p, seg)
			}
		}
		if strings.ContainsAny(p, "\x00\\") {
			t.Fatalf("CleanPath(%q) = %q contains NUL or backslash", in, p)
		}
		again, err := cairn.CleanPath(p)
		if err != nil || again != p {
			t.Fatalf("CleanPath(CleanPath(%q)) = %q, %v; want %q", in, again, err, p)
		}
		if k := cairn.FoldPath(p); cairn.FoldPath(k) != k {
			t.Fatalf("FoldPath is not idempotent on %q", p)
		}
	})
}

func TestPrincipal(t *testing.T) {
	for _, ok := range []string{"system", "user:alice", "agent:extractive", "job:42", "user:a.b@example.org"} {
		if _, err := cairn.ParsePrincipal(ok); err != nil {
			t.Errorf("ParsePrincipal(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "alice", "user:", "robot:x", "user:a b", "user:" + strings.Repeat("a", 129), "System"} {
		if _, err := cairn.ParsePrincipal(bad); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("ParsePrincipal(%q) error = %v, want code %s", bad, err, cairn.EINVALID)
		}
	}
	if k := cairn.Agent("extractive").Kind(); k != "agent" {
		t.Errorf("Kind() = %q", k)
	}
}

// TestQuote checks that a quoted name never reads as another: what
// strconv.Quote escapes is escaped, and so is every invisible character,
// printable to Unicode or not.
func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"notes.md", `"notes.md"`},
		{"caf\u00e9 \u2764\uFE0F.md", "\"caf\u00e9 \u2764\uFE0F.md\""}, // shows as it is
		{"notes\U000E0100\U000E0101.md", `"notes\U000e0100\U000e0101.md"`},
		{"notes\uFE0F.md", `"notes\ufe0f.md"`},
		{"hangul\u3164filler.md", `"hangul\u3164filler.md"`},
		{"report\u202Edm.exe", `"report\u202edm.exe"`},
		{"tag\U000E0049.md", `"tag\U000e0049.md"`},
		{"quote\" back\\slash\nline", `"quote\" back\\slash\nline"`},
		{"bad\xff.md", `"bad\xff.md"`},
	} {
		if got := cairn.Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
