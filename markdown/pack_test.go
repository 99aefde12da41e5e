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

// A resolver that keeps only pages' keys (AddPageKeys) resolves every link
// as one that keeps their fragments too, and CheckFragments, given the
// target's PackFragments, finds the same missing headings and blocks.
func TestCheckFragments_SameAsResolver(t *testing.T) {
	pages := []*markdown.Page{
		markdown.Parse("a.md", []byte("# Alpha\n\n## Part one\n\ntext ^blk1\n\n[[b#Beta]] [[b#Nope]] [[b#^blk2]] [[b#^gone]] [[a#Part one]] [[#Alpha]] [[c#x]] [[img.png#x]]\n")),
		markdown.Parse("b.md", []byte("# Beta\n\nline ^blk2\n\n[[a#Part One]] [[a#^blk1]] [[a#part-one]] [[a#Missing]]\n")),
		markdown.Parse("c.md", []byte("no headings\n")),
	}
	full := markdown.NewResolver(pages, []string{"img.png"})
	b := markdown.NewResolverBuilder([]string{"a.md", "b.md", "c.md", "img.png"})
	packed := map[string]string{}
	for _, p := range pages {
		b.AddPageKeys(p)
		packed[p.Path] = markdown.PackFragments(p)
	}
	b.AddAttachment("img.png")
	keys := b.Resolver()
	checked := 0
	for _, p := range pages {
		for _, l := range p.Links {
			want := full.Resolve(p, l)
			got := keys.Resolve(p, l)
			if !want.SamePage {
				if got.MissingHeading || got.MissingBlock {
					t.Errorf("%s → %s: checked without its fragments: %+v", p.Path, l.Raw, got)
				}
				markdown.CheckFragments(&got, packed[got.Path], l)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s → %s (-want +got):\n%s", p.Path, l.Raw, diff)
			}
			if want.MissingHeading || want.MissingBlock {
				checked++
			}
		}
	}
	if checked < 4 {
		t.Errorf("%d links miss a heading or block; the test wants at least 4", checked)
	}
}
