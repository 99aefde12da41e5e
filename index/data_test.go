package index

import (
	"errors"
	"testing"

	"cairn/markdown"
)

func TestLinkCodec(t *testing.T) {
	for _, l := range []markdown.Link{
		{Kind: markdown.LinkWiki, Target: "Some Page", Label: "a label", Line: 3, Col: 7},
		{Kind: markdown.LinkEmbed, Target: "img.png", Embed: true, Line: 1, Col: 1},
		{Kind: markdown.LinkWiki, Target: "t", Heading: "Déjà vu", Escapes: true, Line: 100000, Col: 2},
		{Kind: markdown.LinkWiki, Block: "abc123", Line: 9},
		{Kind: markdown.LinkMarkdown, Target: "sub/f", Path: "sub/f.md", Label: "f", Line: 4, Col: 12},
		{Kind: markdown.LinkFrontmatter, Target: "x", Property: "related"},
	} {
		b := encodeLink(l)
		var got markdown.Link
		if err := decodeLink(b, linkFlags(l), &got); err != nil {
			t.Fatalf("decode %+v: %v", l, err)
		}
		if got != l {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, l)
		}
		for n := range len(b) {
			if err := decodeLink(b[:n], 0, &got); !errors.Is(err, errBadLink) {
				t.Errorf("decode of %d of %d bytes: err = %v, want errBadLink", n, len(b), err)
			}
		}
	}
}
