package markdown_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"cairn/markdown"

	"github.com/google/go-cmp/cmp"
)

func TestParse_Identity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, src     string
		wantID, wantTitle   string
		wantSource          markdown.TitleSource
		wantType, wantEmpty string
	}{
		{name: "Filename", path: "notes/My Note.md", src: "text",
			wantID: "notes/My Note", wantTitle: "My Note", wantSource: markdown.TitleFromFilename},
		{name: "Heading", path: "a.md", src: "intro\n\n## Two\n# One [[x]]\n# Later",
			wantID: "a", wantTitle: "One [[x]]", wantSource: markdown.TitleFromHeading},
		{name: "SetextHeading", path: "a.md", src: "One\n===\n",
			wantID: "a", wantTitle: "One", wantSource: markdown.TitleFromHeading},
		{name: "HeadingInCodeIgnored", path: "a.md", src: "```\n# Code\n```\n",
			wantID: "a", wantTitle: "a", wantSource: markdown.TitleFromFilename},
		{name: "EmptyHeadingIgnored", path: "a.md", src: "#\n# Real",
			wantID: "a", wantTitle: "Real", wantSource: markdown.TitleFromHeading},
		{name: "Frontmatter", path: "a.md", src: "---\ntitle: '  Given  '\nid: custom/id\ntype: concept\n---\n# Heading",
			wantID: "custom/id", wantTitle: "Given", wantSource: markdown.TitleFromFrontmatter, wantType: "concept"},
		{name: "NumericTitle", path: "a.md", src: "---\ntitle: 1984\n---\n",
			wantID: "a", wantTitle: "1984", wantSource: markdown.TitleFromFrontmatter},
		{name: "EmptyTitleFallsBack", path: "a.md", src: "---\ntitle: ''\nid: ''\n---\n# H",
			wantID: "a", wantTitle: "H", wantSource: markdown.TitleFromHeading},
		{name: "ListTitleFallsBack", path: "a.md", src: "---\ntitle: [a, b]\n---\n",
			wantID: "a", wantTitle: "a", wantSource: markdown.TitleFromFilename},
		{name: "MalformedFallsBack", path: "dir/b.md", src: "---\ntitle: [oops\n---\n# From Heading",
			wantID: "dir/b", wantTitle: "From Heading", wantSource: markdown.TitleFromHeading},
		{name: "UpperCaseExtension", path: "A.MD", src: "",
			wantID: "A", wantTitle: "A", wantSource: markdown.TitleFromFilename},
		{name: "NotMarkdownExtension", path: "a.txt", src: "",
			wantID: "a.txt", wantTitle: "a.txt", wantSource: markdown.TitleFromFilename},
		{name: "EmptyPath", path: "", src: "",
			wantID: "", wantTitle: "untitled", wantSource: markdown.TitleFromFilename},
		{name: "OnlyExtension", path: ".md", src: "",
			wantID: ".md", wantTitle: "untitled", wantSource: markdown.TitleFromFilename},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := markdown.Parse(tc.path, []byte(tc.src))
			got := []string{p.ID, p.Title, string(p.TitleSource), p.Type}
			want := []string{tc.wantID, tc.wantTitle, string(tc.wantSource), tc.wantType}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse(%q) [ID Title TitleSource Type] mismatch (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestParse_AliasesAndSources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		fm          string
		wantAliases []string
		wantSources []string
	}{
		{"BlockList", "aliases:\n  - AI\n  - Artificial Intelligence, the field", []string{"AI", "Artificial Intelligence, the field"}, nil},
		{"FlowList", "aliases: [AI, 'A. I.']", []string{"AI", "A. I."}, nil},
		{"PlainStringIsCommaList", "aliases: AI, A.I.,  , Machine intelligence", []string{"AI", "A.I.", "Machine intelligence"}, nil},
		{"QuotedStringIsOne", `aliases: "Smith, John"`, []string{"Smith, John"}, nil},
		{"SingularKey", "alias: Old name", []string{"Old name"}, nil},
		{"BothKeysDeduplicated", "aliases: [A, B]\nalias: B, C", []string{"A", "B", "C"}, nil},
		{"NumberAlias", "aliases: [2001, x]", []string{"2001", "x"}, nil},
		{"NestedIgnored", "aliases: [[a, b], c]", []string{"c"}, nil},
		{"Null", "aliases:", nil, nil},
		{"EvaSources", "source: raw/paper.pdf\nsources: raw/a.md, raw/b.md, summaries/x", nil,
			[]string{"raw/paper.pdf", "raw/a.md", "raw/b.md", "summaries/x"}},
		{"SourceNotSplit", "source: raw/a, b.md", nil, []string{"raw/a, b.md"}},
		{"SourcesList", "sources:\n- raw/a.md\n- raw/a.md\n- raw/b.md", nil, []string{"raw/a.md", "raw/b.md"}},
		{"SourcesQuoted", "sources: 'raw/a, b.md'", nil, []string{"raw/a, b.md"}},
		{"SlowPathPlain", "aliases: A, B # comment", []string{"A", "B"}, nil},
		{"SlowPathQuoted", "aliases: \"A, B\" # comment", []string{"A, B"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "---\n" + tc.fm + "\n---\n"
			p := markdown.Parse("a.md", []byte(src))
			if len(p.Problems) > 0 {
				t.Fatalf("Parse(%q).Problems = %v", src, p.Problems)
			}
			if diff := cmp.Diff(tc.wantAliases, p.Aliases); diff != "" {
				t.Errorf("Parse(%q).Aliases mismatch (-want +got):\n%s", src, diff)
			}
			if diff := cmp.Diff(tc.wantSources, p.Sources); diff != "" {
				t.Errorf("Parse(%q).Sources mismatch (-want +got):\n%s", src, diff)
			}
		})
	}
}

func TestParse_FrontmatterJSONSafe(t *testing.T) {
	t.Parallel()
	src := `---
updated: 2024-03-01
when: 2024-03-01T10:30:00+02:00
n: 3
f: 1.5
inf: .inf
nan: .NaN
yes: true
none: ~
tags: [a, b]
nested:
  1: one
  true: yes
  ? 2024-01-02
  : date key
  deep: {x: [1, {y: z}]}
bin: !!binary aGVsbG8=
---
`
	p := markdown.Parse("a.md", []byte(src))
	if len(p.Problems) > 0 {
		t.Fatalf("Problems = %v", p.Problems)
	}
	want := map[string]any{
		"updated": "2024-03-01",
		"when":    "2024-03-01T10:30:00+02:00",
		"n":       3,
		"f":       1.5,
		"inf":     ".inf",
		"nan":     ".nan",
		"yes":     true,
		"none":    nil,
		"tags":    []any{"a", "b"},
		"nested": map[string]any{
			"1":          "one",
			"true":       "yes",
			"2024-01-02": "date key",
			"deep":       map[string]any{"x": []any{1, map[string]any{"y": "z"}}},
		},
		"bin": "hello",
	}
	if diff := cmp.Diff(want, p.Frontmatter); diff != "" {
		t.Errorf("Frontmatter mismatch (-want +got):\n%s", diff)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("json.Marshal(page) = %v", err)
	}
	var back markdown.Page
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("json.Unmarshal = %v", err)
	}
	if back.Title != p.Title || len(back.Frontmatter) != len(p.Frontmatter) {
		t.Errorf("round trip lost data: %s", data)
	}
}

func TestParse_Problems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []markdown.ProblemKind
		line int // of the first problem
	}{
		{"Clean", "---\na: 1\n---\nbody", nil, 0},
		{"YAMLError", "---\na: 1\nb: [x\n---\n", []markdown.ProblemKind{markdown.ProblemMalformedFrontmatter}, 2},
		{"YAMLErrorWithoutLine", "---\na: b: c\n---\n", []markdown.ProblemKind{markdown.ProblemMalformedFrontmatter}, 1},
		{"DuplicateKey", "---\na: 1\na: 2\n---\n", []markdown.ProblemKind{markdown.ProblemMalformedFrontmatter}, 3},
		{"NotAMapping", "---\n- a\n- b\n---\n", []markdown.ProblemKind{markdown.ProblemMalformedFrontmatter}, 2},
		{"ScalarDocument", "---\njust text\n---\n", []markdown.ProblemKind{markdown.ProblemMalformedFrontmatter}, 2},
		{"EmptyIsFine", "---\n---\n", nil, 0},
		{"CommentsOnlyIsFine", "---\n# nothing\n---\n", nil, 0},
		{"NullIsFine", "---\n~\n---\n", nil, 0},
		{"Unclosed", "---\ntitle: x\n\nbody", []markdown.ProblemKind{markdown.ProblemMalformedFrontmatter}, 1},
		{"HorizontalRuleOnlyLine", "---", nil, 0},
		{"InvalidUTF8", "ok\n\xff\xfe", []markdown.ProblemKind{markdown.ProblemInvalidEncoding}, 2},
		{"NUL", "a\n\nb\x00", []markdown.ProblemKind{markdown.ProblemInvalidEncoding}, 3},
		{"Both", "---\nt: \xff\n---\n", []markdown.ProblemKind{markdown.ProblemInvalidEncoding, markdown.ProblemMalformedFrontmatter}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := markdown.Parse("a.md", []byte(tc.src))
			var got []markdown.ProblemKind
			for _, pr := range p.Problems {
				got = append(got, pr.Kind)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("Parse(%q).Problems = %v, mismatch (-want +got):\n%s", tc.src, p.Problems, diff)
			}
			if len(p.Problems) > 0 && p.Problems[0].Line != tc.line {
				t.Errorf("Parse(%q).Problems[0].Line = %d, want %d", tc.src, p.Problems[0].Line, tc.line)
			}
			if len(p.Problems) > 0 && p.Problems[0].Message == "" {
				t.Errorf("Parse(%q).Problems[0] has no message", tc.src)
			}
		})
	}
}

func TestParse_InvalidEncodingStillParsed(t *testing.T) {
	t.Parallel()
	src := "---\ntitle: T\n---\n# Bad \xff title\n\n[[li\x00nk]] and [[ok]] ^blk\n"
	p := markdown.Parse("a.md", []byte(src))
	if p.Title != "T" {
		t.Errorf("Title = %q, want T", p.Title)
	}
	want := []string{"wiki li\uFFFDnk @6:1", "wiki ok @6:15"}
	if diff := cmp.Diff(want, briefs(p.Links)); diff != "" {
		t.Errorf("Links mismatch (-want +got):\n%s", diff)
	}
	if got, want := p.Headings[0].Text, "Bad \uFFFD title"; got != want {
		t.Errorf("Headings[0].Text = %q, want %q", got, want)
	}
	if _, err := json.Marshal(p); err != nil {
		t.Errorf("json.Marshal = %v", err)
	}
}

func TestParse_HeadingsAndBlocks(t *testing.T) {
	t.Parallel()
	src := "---\na: 1\n---\n# Title #\n\nIntro ^intro\n\n## Part: One ##\n### Part: One\n####### not a heading\n#no-space\n  ## Indented\n    # code\n" +
		"Setext two\n---\n\n- item ^item-1\n- `code ^no`\n\n> quote ^q\n\n| a | b |\n|---|---|\n\n^table-id\n\ntext^glued\n```\n# fenced\nx ^fenced\n```\n"
	p := markdown.Parse("a.md", []byte(src))
	want := []markdown.Heading{
		{Level: 1, Text: "Title", Slug: "title", Line: 4},
		{Level: 2, Text: "Part: One", Slug: "part-one", Line: 8},
		{Level: 3, Text: "Part: One", Slug: "part-one-1", Line: 9},
		{Level: 2, Text: "Indented", Slug: "indented", Line: 12},
		{Level: 2, Text: "Setext two", Slug: "setext-two", Line: 14},
	}
	if diff := cmp.Diff(want, p.Headings); diff != "" {
		t.Errorf("Headings mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"intro", "item-1", "q", "table-id"}, p.BlockIDs); diff != "" {
		t.Errorf("BlockIDs mismatch (-want +got):\n%s", diff)
	}
	if p.BodyLine != 4 || p.BodyOffset != len("---\na: 1\n---\n") {
		t.Errorf("BodyLine, BodyOffset = %d, %d; want 4, %d", p.BodyLine, p.BodyOffset, len("---\na: 1\n---\n"))
	}
}

func TestParse_BOMAndCRLF(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"\ufeff---\r\ntitle: T\r\naliases:\r\n  - A\r\n---\r\n# H\r\n[[x]]\r\n",
		"\ufeff# H\r\n[[x]]\r\n",
	} {
		p := markdown.Parse("a.md", []byte(src))
		if len(p.Problems) > 0 {
			t.Errorf("Parse(%q).Problems = %v", src, p.Problems)
		}
		if len(p.Headings) != 1 || p.Headings[0].Text != "H" {
			t.Errorf("Parse(%q).Headings = %v, want one \"H\"", src, p.Headings)
		}
		if len(p.Links) != 1 || p.Links[0].Raw != "[[x]]" {
			t.Errorf("Parse(%q).Links = %v, want [[x]]", src, p.Links)
		}
	}
	p := markdown.Parse("a.md", []byte("\ufeff---\r\ntitle: T\r\naliases:\r\n  - A\r\n---\r\n"))
	if p.Title != "T" || len(p.Aliases) != 1 || p.Aliases[0] != "A" {
		t.Errorf("CRLF frontmatter: Title %q, Aliases %q", p.Title, p.Aliases)
	}
}

func TestPlainText(t *testing.T) {
	t.Parallel()
	src := "---\ntitle: T\n---\n# Head [[a|Alias]]\n\nSee [[Target#Part]] and [label](x.md \"t\") ![alt](i.png) [[b]]\n" +
		"%% hidden %%\n<!-- gone -->\n```go\ncode()\n```\n\ttabbed\n"
	want := "Head Alias\nSee Target#Part and label alt b\n\ncode()\ntabbed\n"
	if got := markdown.PlainText([]byte(src)); got != want {
		t.Errorf("PlainText() = %q, want %q", got, want)
	}
}

func TestPage_HasHeading(t *testing.T) {
	t.Parallel()
	p := markdown.Parse("a.md", []byte("# Part: One\n## Q&A [[x]]\n### Straße\n#### Ünïcode Title\n"))
	for _, tc := range []struct {
		heading string
		want    bool
	}{
		{"Part: One", true}, {"part one", true}, {"  PART   one ", true}, {"Part One#Part: One", true},
		{"part-one", true}, {"qa-x", true}, {"Q&A x", true}, {"Q&A [[x]]", true},
		{"STRASSE", true}, {"straße", true}, {"ünïcode title", true}, {"ÜNÏCODE TITLE", true},
		{"Part Two", false}, {"Part", false}, {"", false}, {"one part", false},
	} {
		if got := p.HasHeading(tc.heading); got != tc.want {
			t.Errorf("HasHeading(%q) = %v, want %v", tc.heading, got, tc.want)
		}
	}
	// Obsidian compares a link's heading and the page's headings with the
	// ASCII punctuation !"#$%&()*+,./:;<=>?@[\]^`{|}~ read as spaces;
	// apostrophes, dashes, underscores and other scripts' punctuation count.
	for _, tc := range []struct {
		heading, link string
		want          bool
	}{
		{"How large can each remote vault be?", "How large can each remote vault be", true},
		{"How large can each remote vault be?", "how large can each remote vault be?", true},
		{"Why? (and how!)", "Why and how", true},
		{"a, b", "a b", true},
		{"1.2.3. Setup", "1 2 3 Setup", true},
		{"C++ & C#", "C C", true},
		{"Path/To {x} <y> @z $1 ~ `q`", "Path To x y z 1 q", true},
		{"\"Quoted\" = *bold*; 100%", "Quoted bold 100", true},
		{"It's done", "Its done", false},
		{"don\u2019t", "don t", false},
		{"snake_case", "snake case", false},
		{"a\u00a0b\u3000c", "a b c", true},
	} {
		page := markdown.Parse("a.md", []byte("## "+tc.heading+"\n"))
		if got := page.HasHeading(tc.link); got != tc.want {
			t.Errorf("HasHeading(%q) on heading %q = %v, want %v", tc.link, tc.heading, got, tc.want)
		}
	}
	// The allocation-free comparison agrees with the normalization.
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "aAbB :#|^%[]\\\t-K\u212aßs?!.,'\u2019_\u00a0"
	runes := []rune(alphabet)
	word := func() string {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		return b.String()
	}
	for range 2000 {
		a, b := word(), word()
		if strings.Contains(b, "#") {
			continue // a chained heading; its last part is compared
		}
		page := &markdown.Page{Headings: []markdown.Heading{{Level: 1, Text: a, Slug: "\x00"}}}
		if got, want := page.HasHeading(b), markdown.HeadingKey(a) == markdown.HeadingKey(b); got != want {
			t.Errorf("HasHeading(%q) on heading %q = %v, want %v", b, a, got, want)
		}
	}
}

func TestParse_BlockIDsHidden(t *testing.T) {
	t.Parallel()
	src := "a\n%% x\n^c1\n%% ^ok1\n\n`a\n^c2\nb` ^ok2\n\nt <!-- a\n^c3\n--> ^ok3\n\nx %% open\n^c4\n"
	p := markdown.Parse("a.md", []byte(src))
	if diff := cmp.Diff([]string{"ok1", "ok2", "ok3"}, p.BlockIDs); diff != "" {
		t.Errorf("Parse(%q).BlockIDs mismatch (-want +got):\n%s", src, diff)
	}
}

// TestParse_BlockIDAfterLink: Obsidian reads a block id written straight
// after an embed or a wikilink, as its own help vault writes them
// ("![[version-history-collaboration.png]]^version-history-image"); after
// other text the caret is text.
func TestParse_BlockIDAfterLink(t *testing.T) {
	t.Parallel()
	src := "![[history.png]]^version-history-image\n\nSee [[Note]]^after-link\n\n" +
		"text^glued\n\n[a](b.md)^after-md\n\n`[[x]]`^after-code\n\nnot a link]]^brackets\n\n[[a]] [[b]]^second\n"
	p := markdown.Parse("a.md", []byte(src))
	if diff := cmp.Diff([]string{"version-history-image", "after-link", "second"}, p.BlockIDs); diff != "" {
		t.Errorf("Parse(%q).BlockIDs mismatch (-want +got):\n%s", src, diff)
	}
	r := markdown.NewResolver([]*markdown.Page{p}, []string{"history.png"})
	from := markdown.Parse("b.md", []byte("[[a#^version-history-image]]"))
	if got := r.Resolve(from, from.Links[0]); got.Status != markdown.StatusResolved || got.MissingBlock {
		t.Errorf("Resolve([[a#^version-history-image]]) = %+v, want resolved with the block", got)
	}
}
