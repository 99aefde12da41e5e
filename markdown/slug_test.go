package markdown_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/markdown"
)

func TestSetSlugs(t *testing.T) {
	var src strings.Builder
	for _, h := range []string{"# Intro", "## Intro", "## Ünïcode Heading!", "### a b", "## Intro", "## intro-1"} {
		src.WriteString(h + "\n\ntext\n\n")
	}
	for i := range 40 { // past the scanner's switch from a list to a map
		src.WriteString("## Same\n\n")
		_ = i
	}
	p := markdown.Parse("x.md", []byte(src.String()))
	want := p.Headings
	got := make([]markdown.Heading, len(want))
	for i, h := range want {
		got[i] = markdown.Heading{Level: h.Level, Text: h.Text, Line: h.Line}
	}
	markdown.SetSlugs(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SetSlugs mismatch (-Parse +SetSlugs):\n%s", diff)
	}
}
