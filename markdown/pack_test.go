package markdown_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/markdown"
)

// UnpackTargets gives back what PackTargets kept of each link, whatever
// its kind and the lengths of its strings.
func TestPackTargets_RoundTrip(t *testing.T) {
	long := strings.Repeat("é/x", 100) // lengths past one varint byte
	links := []markdown.Link{
		{Kind: markdown.LinkWiki, Target: "note"},
		{Kind: markdown.LinkEmbed, Target: "img.png"},
		{Kind: markdown.LinkMarkdown, Target: "dir/My Note", Path: "dir/My Note.md"},
		{Kind: markdown.LinkFrontmatter, Target: long, Path: long + ".md"},
		{Kind: markdown.LinkWiki, Target: "../../out", Path: "../out", Escapes: true},
		{Kind: markdown.LinkWiki},
	}
	want := make([]markdown.Link, len(links))
	for i, l := range links {
		want[i] = markdown.Link{Kind: l.Kind, Target: l.Target, Path: l.Path, Escapes: l.Escapes}
	}
	withHeading := append([]markdown.Link{}, links...)
	withHeading[0].Heading, withHeading[0].Label = "Part", "label" // not kept
	if diff := cmp.Diff(want, markdown.UnpackTargets(markdown.PackTargets(withHeading))); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got := markdown.UnpackTargets(markdown.PackTargets(nil)); got != nil {
		t.Errorf("no links: %v", got)
	}
}
