package markdown_test

import (
	"fmt"
	"strings"
	"testing"

	"cairn/markdown"

	"github.com/google/go-cmp/cmp"
)

// brief renders a link compactly for table tests:
// "kind[!] target #heading ^block |label path=p escapes prop=k @line:col".
func brief(l markdown.Link) string {
	var b strings.Builder
	b.WriteString(string(l.Kind))
	if l.Embed {
		b.WriteString("!")
	}
	b.WriteString(" " + l.Target)
	for _, f := range []struct{ prefix, v string }{
		{"#", l.Heading}, {"^", l.Block}, {"|", l.Label}, {"path=", l.Path}, {"prop=", l.Property},
	} {
		if f.v != "" {
			b.WriteString(" " + f.prefix + f.v)
		}
	}
	if l.Escapes {
		b.WriteString(" escapes")
	}
	fmt.Fprintf(&b, " @%d:%d", l.Line, l.Col)
	return b.String()
}

func briefs(links []markdown.Link) []string {
	var out []string
	for _, l := range links {
		out = append(out, brief(l))
	}
	return out
}

type linkCase struct {
	name string
	src  string
	want []string
}

// runLinkCases parses each case as dir/page.md and compares its links.
func runLinkCases(t *testing.T, cases []linkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := markdown.Parse("dir/page.md", []byte(tc.src))
			if diff := cmp.Diff(tc.want, briefs(p.Links)); diff != "" {
				t.Errorf("Parse(%q).Links mismatch (-want +got):\n%s", tc.src, diff)
			}
			for _, l := range p.Links {
				if l.Kind == markdown.LinkFrontmatter {
					continue
				}
				if got := tc.src[l.Offset : l.Offset+len(l.Raw)]; got != l.Raw {
					t.Errorf("link %q at offset %d: source there is %q", l.Raw, l.Offset, got)
				}
			}
		})
	}
}

func TestParse_Wikilinks(t *testing.T) {
	t.Parallel()
	runLinkCases(t, []linkCase{
		{"Plain", "see [[Note]] here", []string{"wiki Note @1:5"}},
		{"Label", "[[Note|the note]]", []string{"wiki Note |the note @1:1"}},
		{"EscapedPipeInTable", "| a | [[Note\\|shown]] |\n|---|---|", []string{"wiki Note |shown @1:7"}},
		{"Heading", "[[Note#Part two]]", []string{"wiki Note #Part two @1:1"}},
		{"ChainedHeading", "[[Note#Part#Detail]]", []string{"wiki Note #Part#Detail @1:1"}},
		{"HeadingAndLabel", "[[Note#Part|see]]", []string{"wiki Note #Part |see @1:1"}},
		{"Block", "[[Note#^abc-1]]", []string{"wiki Note ^abc-1 @1:1"}},
		{"SamePageHeading", "[[#Intro]]", []string{"wiki  #Intro @1:1"}},
		{"SamePageBlock", "[[#^b1|here]]", []string{"wiki  ^b1 |here @1:1"}},
		{"Embed", "![[diagram.png]]", []string{"embed! diagram.png @1:1"}},
		{"EmbedSize", "![[photo.jpg|100x145]]", []string{"embed! photo.jpg |100x145 @1:1"}},
		{"EmbedPDFPage", "![[Document.pdf#page=3]]", []string{"embed! Document.pdf #page=3 @1:1"}},
		{"EmbedNote", "![[Note#^b]]", []string{"embed! Note ^b @1:1"}},
		{"MDExtensionStripped", "[[Note.md]] [[Other.MD|x]]", []string{"wiki Note @1:1", "wiki Other |x @1:13"}},
		{"Trimmed", "[[  Note  | label ]]", []string{"wiki Note |label @1:1"}},
		{"Folder", "[[sub/Note]]", []string{"wiki sub/Note @1:1"}},
		{"Relative", "[[../up]] [[./here]]", []string{"wiki ../up path=up @1:1", "wiki ./here path=dir/here @1:11"}},
		{"Rooted", "[[/top/Note]]", []string{"wiki /top/Note path=top/Note @1:1"}},
		{"Escaping", "[[../../x]]", []string{"wiki ../../x escapes @1:1"}},
		{"Several", "[[a]], [[b]]; ![[c]]", []string{"wiki a @1:1", "wiki b @1:8", "embed! c @1:15"}},
		{"SingleBracketInside", "[[a]b]]", []string{"wiki a]b @1:1"}},
		{"FirstPipeSplits", "[[a|b|c]]", []string{"wiki a |b|c @1:1"}},
		{"Nested", "[[a [[b]] c]]", []string{"wiki b @1:5"}},
		{"Unclosed", "[[a and more", nil},
		{"NoNewlineInside", "[[a\nb]]", nil},
		{"Empty", "[[]] [[ ]] [[|x]] [[#]]", nil},
		{"Escaped", `\[[a]] and \![[b]]`, []string{"wiki b @1:14"}},
		{"InHeading", "# About [[Topic]]", []string{"wiki Topic @1:9"}},
		{"CRLF", "a\r\n[[b]]\r\n", []string{"wiki b @2:1"}},
		{"UnicodeColumnsInBytes", "é [[x]]", []string{"wiki x @1:4"}},
	})
}

func TestParse_MarkdownLinks(t *testing.T) {
	t.Parallel()
	runLinkCases(t, []linkCase{
		{"Relative", "[a](b.md)", []string{"markdown b |a path=dir/b.md @1:1"}},
		{"PercentDecoded", "[a](My%20Note.md)", []string{"markdown My Note |a path=dir/My Note.md @1:1"}},
		{"AngleBrackets", "[a](<My Note.md>)", []string{"markdown My Note |a path=dir/My Note.md @1:1"}},
		{"Fragment", "[a](b.md#Part%20two)", []string{"markdown b #Part two |a path=dir/b.md @1:1"}},
		{"BlockFragment", "[a](b.md#^x1)", []string{"markdown b ^x1 |a path=dir/b.md @1:1"}},
		{"Title", `[a](b.md "Title") [c](d.md 'T') [e](f.md (T))`,
			[]string{"markdown b |a path=dir/b.md @1:1", "markdown d |c path=dir/d.md @1:19", "markdown f |e path=dir/f.md @1:33"}},
		{"Image", "![alt text](img/x.png)", []string{"markdown! img/x.png |alt text path=dir/img/x.png @1:1"}},
		{"Parent", "[a](../b.md)", []string{"markdown ../b |a path=b.md @1:1"}},
		{"Rooted", "[a](/top/b.md)", []string{"markdown /top/b |a path=top/b.md @1:1"}},
		{"Escaping", "[a](../../b.md)", []string{"markdown ../../b |a escapes @1:1"}},
		{"Attachment", "[paper](raw/paper.pdf)", []string{"markdown raw/paper.pdf |paper path=dir/raw/paper.pdf @1:1"}},
		{"SamePage", "[a](#Intro)", []string{"markdown  #Intro |a @1:1"}},
		{"Parentheses", "[a](f(1).md)", []string{"markdown f(1) |a path=dir/f(1).md @1:1"}},
		{"BadPercentKept", "[a](100%.md)", []string{"markdown 100% |a path=dir/100%.md @1:1"}},
		{"BackslashEscape", `[a](x\_y.md)`, []string{"markdown x_y |a path=dir/x_y.md @1:1"}},
		{"NestedBracketsInLabel", "[a [b] c](d.md)", []string{"markdown d |a [b] c path=dir/d.md @1:1"}},
		{"LabelOverLines", "[a\nb](d.md)", []string{"markdown d |a\nb path=dir/d.md @1:1"}},
		{"External", "[a](https://x.org/b.md) [b](http://x) [c](mailto:a@b) [d](obsidian://open?x) [e](//host/x.md)", nil},
		{"ExternalLabelNotRescanned", "[see [[x]]](https://x.org)", nil},
		{"Empty", "[a]() [b](<>)", nil},
		{"NotALink", "[a] (b.md) [a][ref] [^1] [a](b.md", nil},
		{"Escaped", `\[a](b.md)`, nil},
		{"Both", "[[w]] and [m](m.md)", []string{"wiki w @1:1", "markdown m |m path=dir/m.md @1:11"}},
	})
}

func TestParse_LinksNotInCode(t *testing.T) {
	t.Parallel()
	runLinkCases(t, []linkCase{
		{"BacktickFence", "```\n[[a]]\n```\n[[b]]", []string{"wiki b @4:1"}},
		{"TildeFence", "~~~ info\n[[a]]\n~~~\n[[b]]", []string{"wiki b @4:1"}},
		{"InfoString", "```go title=\"x\"\n[[a]]\n```", nil},
		{"BacktickInInfoIsNoFence", "```a`b\n[[a]]", []string{"wiki a @2:1"}},
		{"CloserAtLeastAsLong", "````\n```\n[[a]]\n````\n[[b]]", []string{"wiki b @5:1"}},
		{"CloserSameChar", "```\n~~~\n[[a]]\n```\n[[b]]", []string{"wiki b @5:1"}},
		{"CloserNothingAfter", "```\n``` x\n[[a]]\n```\n[[b]]", []string{"wiki b @5:1"}},
		{"UnclosedFenceRunsToEnd", "```\n[[a]]\n\n[[b]]", nil},
		{"IndentedFence", "   ```\n[[a]]\n   ```\n[[b]]", []string{"wiki b @4:1"}},
		{"FenceInQuote", "> ```\n> [[a]]\n> ```\n> [[b]]", []string{"wiki b @4:3"}},
		{"FenceInList", "- item\n    ```\n    [[a]]\n    ```\n- [[b]]", []string{"wiki b @5:3"}},
		{"FenceAfterListMarker", "- ```\n  [[a]]\n  ```\n- [[b]]", []string{"wiki b @4:3"}},
		{"IndentedCode", "para\n\n    [[a]]\n\n[[b]]", []string{"wiki b @5:1"}},
		{"IndentedCodeTab", "\t[[a]]", nil},
		{"IndentedContinuationIsText", "para\n    [[a]]", []string{"wiki a @2:5"}},
		{"IndentedInListIsText", "- item\n\n    [[a]]", []string{"wiki a @3:5"}},
		{"ListEndsAtParagraph", "- item\n\npara\n\n    [[a]]", nil},
		{"CodeSpan", "`[[a]]` [[b]]", []string{"wiki b @1:9"}},
		{"CodeSpanDouble", "`` a ` [[a]] `` [[b]]", []string{"wiki b @1:17"}},
		{"CodeSpanRunsMustMatch", "``[[a]]` [[b]]``", nil},
		{"UnmatchedBacktick", "` [[a]]", []string{"wiki a @1:3"}},
		{"CodeSpanOverLines", "`a\n[[a]]` [[b]]", []string{"wiki b @2:8"}},
		{"CodeSpanEndsAtParagraph", "`a\n\n[[a]]`", []string{"wiki a @3:1"}},
		{"CodeSpanHidesMarkdownLink", "`[a](b.md)`", nil},
		{"PercentComment", "a %% [[a]] %% [[b]]", []string{"wiki b @1:15"}},
		{"PercentBlockComment", "%%\n# not a heading\n[[a]]\n\n[[b]]\n%%\n[[c]]", []string{"wiki c @7:1"}},
		{"PercentCommentRestOfLine", "%% [[a]]\n%% [[b]]", []string{"wiki b @2:4"}},
		{"PercentCommentUnclosed", "a %% [[a]]\n\n# H\n\n[[b]]", nil},
		{"PercentInCode", "`%%` [[a]] `%%`", []string{"wiki a @1:6"}},
		{"PercentInFence", "```\n%%\n```\n[[a]]", []string{"wiki a @4:1"}},
		{"HTMLCommentBlock", "<!--\n[[a]]\n\n[[b]]\n-->\n[[c]]", []string{"wiki c @6:1"}},
		{"HTMLCommentBlockRestOfLine", "<!-- x --> [[a]]\n[[b]]", []string{"wiki b @2:1"}},
		{"HTMLCommentInline", "a <!-- [[a]] --> [[b]]", []string{"wiki b @1:18"}},
		{"HTMLCommentInlineUnclosed", "a <!-- [[a]]", []string{"wiki a @1:8"}},
		{"HTMLCommentInParagraphOverLines", "a <!--\n[[a]]\n--> [[b]]", []string{"wiki b @3:5"}},
	})
}

func TestParse_FrontmatterLinks(t *testing.T) {
	t.Parallel()
	runLinkCases(t, []linkCase{
		{"QuotedString", "---\nup: \"[[Parent]]\"\n---\n", []string{"frontmatter Parent prop=up @2:1"}},
		{"List", "---\nrelated:\n  - \"[[A]]\"\n  - '[[B|b]]'\n---\n",
			[]string{"frontmatter A prop=related @3:1", "frontmatter B |b prop=related @4:1"}},
		{"FlowList", "---\nrelated: [\"[[A]]\", \"[[B]]\"]\n---\n",
			[]string{"frontmatter A prop=related @2:1", "frontmatter B prop=related @2:1"}},
		{"Embed", "---\ncover: \"![[img.png]]\"\n---\n", []string{"frontmatter! img.png prop=cover @2:1"}},
		{"InText", "---\nnote: see [[A]] and [[B#h]]\n---\n",
			[]string{"frontmatter A prop=note @2:1", "frontmatter B #h prop=note @2:1"}},
		{"Nested", "---\nmeta:\n  parent: \"[[P]]\"\n---\n", []string{"frontmatter P prop=meta @3:1"}},
		{"UnquotedIsAList", "---\nup: [[Parent]]\n---\n", nil},
		{"BeforeBody", "---\nup: \"[[A]]\"\n---\n[[B]]", []string{"frontmatter A prop=up @2:1", "wiki B @4:1"}},
		{"MalformedHasNone", "---\nup: \"[[A]]\n---\n[[B]]", []string{"wiki B @4:1"}},
	})
}
