package markdown_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"cairn/markdown"

	"go.yaml.in/yaml/v3"
)

// These tests feed Parse hostile input. Finishing at all is the time check
// (benchmarks hold the numbers); allocation is checked against the input
// size. They do not run in parallel, so the allocation counts are theirs.

// parseBounded parses src and fails if Parse allocates more than
// perByte bytes per input byte (plus a constant).
func parseBounded(t *testing.T, src []byte, perByte int) *markdown.Page {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p := markdown.Parse("hostile.md", src)
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(perByte*len(src)+1<<20); got > limit {
		t.Errorf("Parse of %d bytes allocated %d bytes; the bound is %d", len(src), got, limit)
	}
	return p
}

func hasProblem(p *markdown.Page, kind markdown.ProblemKind) bool {
	for _, pr := range p.Problems {
		if pr.Kind == kind {
			return true
		}
	}
	return false
}

func TestParse_HugeBody(t *testing.T) {
	para := "Some prose with a [[link]], `code`, a [md](x.md) link and %%a comment%%.\n\n"
	src := []byte("---\ntitle: Huge\n---\n" + strings.Repeat(para, 10<<20/len(para)))
	p := parseBounded(t, src, 4)
	if p.Title != "Huge" || len(p.Links) != markdown.MaxLinks || !hasProblem(p, markdown.ProblemTruncated) {
		t.Errorf("Parse(10 MB) = title %q, %d links, problems %v", p.Title, len(p.Links), p.Problems)
	}
}

func TestParse_TenThousandLinks(t *testing.T) {
	var b strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&b, "| [[note %d\\|n]] | [m](m%d.md) |\n", i, i)
	}
	p := parseBounded(t, []byte(b.String()), 64)
	if len(p.Links) != 20_000 || len(p.Problems) > 0 {
		t.Fatalf("got %d links, problems %v; want 20000", len(p.Links), p.Problems)
	}
	if l := p.Links[19_998]; l.Target != "note 9999" || l.Label != "n" || l.Line != 10_000 {
		t.Errorf("link 19998 = %+v", l)
	}
}

func TestParse_ManyHeadingsAndBlocks(t *testing.T) {
	src := []byte(strings.Repeat("# Same\ntext ^id\n", markdown.MaxHeadings+10))
	p := parseBounded(t, src, 32)
	if len(p.Headings) != markdown.MaxHeadings || len(p.BlockIDs) != markdown.MaxBlockIDs || !hasProblem(p, markdown.ProblemTruncated) {
		t.Errorf("got %d headings, %d block ids, problems %v", len(p.Headings), len(p.BlockIDs), p.Problems)
	}
	if got := p.Headings[2].Slug; got != "same-2" {
		t.Errorf("third slug = %q, want same-2", got)
	}
}

// billionLaughs is the classic alias bomb: nine levels of nine aliases, a
// billion strings once expanded.
func billionLaughs() string {
	laughs := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i, prev := range "abcdefgh" {
		name := string(rune('b' + i))
		laughs += fmt.Sprintf("%s: &%s [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	return laughs
}

// TestYAMLAliasGuard confirms that yaml.v3 itself refuses an alias bomb
// (Parse refuses it earlier, by measuring the expansion before decoding).
func TestYAMLAliasGuard(t *testing.T) {
	var v any
	if err := yaml.Unmarshal([]byte(billionLaughs()), &v); err == nil {
		t.Errorf("yaml.Unmarshal(billion laughs) = nil error, want one (\"document contains excessive aliasing\")")
	}
}

func TestParse_HostileFrontmatter(t *testing.T) {
	laughs := billionLaughs()
	var deepMap strings.Builder
	for i := range 100 {
		deepMap.WriteString(strings.Repeat("  ", i) + "k:\n")
	}
	tests := []struct {
		name string
		yaml string
	}{
		{"FlowNesting10000", "a: " + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)},
		{"FlowNesting100", "a: " + strings.Repeat("[", 100) + strings.Repeat("]", 100)},
		{"BlockNesting100", deepMap.String()},
		{"BillionLaughs", laughs},
		{"AliasCycle", "a: &a [*a]"},
		{"TooLarge", "a: " + strings.Repeat("x", markdown.MaxFrontmatterBytes)},
		{"ManyValues", "a: [" + strings.Repeat("1,", 60_000) + "1]"},
		{"NUL", "a: b\x00"},
		{"InvalidUTF8", "a: \xff"},
		{"Tabs", "a:\n\t- b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := []byte("---\n" + tc.yaml + "\n---\n# Still Parsed\n[[link]]\n")
			p := parseBounded(t, src, 200)
			if !hasProblem(p, markdown.ProblemMalformedFrontmatter) {
				t.Errorf("Problems = %v, want malformed-frontmatter", p.Problems)
			}
			if p.Frontmatter != nil || p.Title != "Still Parsed" || len(p.Links) != 1 {
				t.Errorf("got frontmatter %v, title %q, %d links; want none, \"Still Parsed\", 1", len(p.Frontmatter), p.Title, len(p.Links))
			}
		})
	}
}

func TestParse_PathologicalInline(t *testing.T) {
	const n = 256 << 10 // big enough that a quadratic scan would never finish
	var ticks strings.Builder
	for i := 1; ticks.Len() < n; i++ {
		ticks.WriteString(strings.Repeat("`", i%40+1) + " x ")
	}
	tests := map[string]string{
		"OpenBrackets":       strings.Repeat("[", n),
		"OpenWikilinks":      strings.Repeat("[[a", n/3),
		"OpenEmbeds":         strings.Repeat("![[", n/3),
		"LinkStarts":         strings.Repeat("[](a", n/4) + ")",
		"NestedParens":       "[a](" + strings.Repeat("(", n),
		"LabelsNoDest":       strings.Repeat("[a]", n/3),
		"Backticks":          ticks.String(),
		"HTMLCommentOpeners": strings.Repeat("<!--", n/4),
		"Percent":            strings.Repeat("%% [[a]] ", n/9),
		"Quotes":             strings.Repeat(">", n) + " [[a]]",
		"Escapes":            strings.Repeat(`\`, n),
		"ManyLines":          strings.Repeat("- [[a]\n", n/7),
		"Fences":             strings.Repeat("```\n~~~~\n", n/8),
		"LongTitle":          "[a](b.md \"" + strings.Repeat("x", n),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			parseBounded(t, []byte(body), 64)
			markdown.PlainText([]byte(body))
		})
	}
}
