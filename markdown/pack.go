package markdown

// Packed forms keep what a whole-vault resolution needs of each page in one
// string: a few bytes of lengths, then the text, instead of a slice of
// structs and a string header for every field. Only this package's packers
// write them, so their readers trust what they read.

// PackTargets packs what resolving each of links needs to find where it
// leads (LookupKeys): its kind, whether it escapes the vault, its Target
// and its Path. UnpackTargets gives them back.
func PackTargets(links []Link) string {
	if len(links) == 0 {
		return ""
	}
	b := appendUvarint(nil, uint64(len(links)))
	for _, l := range links {
		c := kindCode(l.Kind)
		if l.Escapes {
			c |= 0x80
		}
		b = append(b, c)
		b = appendPacked(b, l.Target)
		b = appendPacked(b, l.Path)
	}
	return string(b)
}

// UnpackTargets returns the links PackTargets packed, with the fields it
// kept.
func UnpackTargets(s string) []Link {
	if s == "" {
		return nil
	}
	u := unpacker{s}
	out := make([]Link, u.uvarint())
	for i := range out {
		c := u.byte()
		out[i] = Link{Kind: codeKind(c &^ 0x80), Escapes: c&0x80 != 0, Target: u.str(), Path: u.str()}
	}
	return out
}

// PackFragments packs what a link to page p's headings and blocks is
// checked against (CheckFragments): a marker byte (so that a page's is
// never empty), the number of headings, each text, then each block id.
func PackFragments(p *Page) string {
	b := appendUvarint([]byte{'p'}, uint64(len(p.Headings)))
	for _, h := range p.Headings {
		b = appendPacked(b, h.Text)
	}
	for _, id := range p.BlockIDs {
		b = appendPacked(b, id)
	}
	return string(b)
}

// unpackFragments undoes PackFragments: the headings (their slugs made
// again, as Parse makes them) and the block ids.
func unpackFragments(s string) ([]Heading, []string) {
	u := unpacker{s[1:]}
	headings := make([]Heading, u.uvarint())
	for i := range headings {
		headings[i].Text = u.str()
	}
	SetSlugs(headings)
	var blocks []string
	for u.s != "" {
		blocks = append(blocks, u.str())
	}
	return headings, blocks
}

// kindCode and codeKind number the kinds of links in a byte below 0x80;
// 0 is a kind unknown here.
func kindCode(k LinkKind) byte {
	switch k {
	case LinkWiki:
		return 1
	case LinkEmbed:
		return 2
	case LinkMarkdown:
		return 3
	case LinkFrontmatter:
		return 4
	}
	return 0
}

func codeKind(c byte) LinkKind {
	switch c {
	case 1:
		return LinkWiki
	case 2:
		return LinkEmbed
	case 3:
		return LinkMarkdown
	case 4:
		return LinkFrontmatter
	}
	return ""
}

func appendUvarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// appendPacked appends s after its length.
func appendPacked(b []byte, s string) []byte {
	return append(appendUvarint(b, uint64(len(s))), s...)
}

// unpacker reads what appendUvarint and appendPacked wrote, in order.
type unpacker struct{ s string }

func (u *unpacker) byte() byte {
	c := u.s[0]
	u.s = u.s[1:]
	return c
}

func (u *unpacker) uvarint() uint64 {
	var x uint64
	for shift := 0; ; shift += 7 {
		c := u.byte()
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
}

func (u *unpacker) str() string {
	n := u.uvarint()
	s := u.s[:n]
	u.s = u.s[n:]
	return s
}
