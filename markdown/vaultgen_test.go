package markdown_test

import (
	"strings"
	"testing"

	"cairn/internal/vaultgen"
	"cairn/markdown"
)

// generatedVault parses a generated vault of n pages. As in Eva, Markdown
// files under raw/ are sources, not pages, and so is log.md.
func generatedVault(tb testing.TB, n int) ([]*markdown.Page, []string, int) {
	tb.Helper()
	var pages []*markdown.Page
	var attachments []string
	size := 0
	for _, f := range vaultgen.New(vaultgen.Config{Pages: n, Raw: true}).All() {
		size += len(f.Data)
		if strings.HasSuffix(f.Path, ".md") && !strings.HasPrefix(f.Path, "raw/") && f.Path != "log.md" {
			pages = append(pages, markdown.Parse(f.Path, f.Data))
		} else {
			attachments = append(attachments, f.Path)
		}
	}
	return pages, attachments, size
}

// TestGeneratedVault_Resolves checks Parse and Resolver against vaultgen,
// whose pages use every link form and whose links all resolve by design.
func TestGeneratedVault_Resolves(t *testing.T) {
	t.Parallel()
	pages, attachments, _ := generatedVault(t, 1000)
	r := markdown.NewResolver(pages, attachments)
	links, bad := 0, 0
	for _, p := range pages {
		for _, pr := range p.Problems {
			t.Errorf("%s: %s (line %d): %s", p.Path, pr.Kind, pr.Line, pr.Message)
		}
		for _, l := range p.Links {
			links++
			if res := r.Resolve(p, l); res.Status != markdown.StatusResolved || res.MissingHeading || res.MissingBlock {
				if bad++; bad <= 10 {
					t.Errorf("%s:%d: Resolve(%s) = %+v", p.Path, l.Line, l.Raw, res)
				}
			}
		}
	}
	if links < 4*len(pages) {
		t.Errorf("found %d links in %d pages; vaultgen writes about 5 a page", links, len(pages))
	}
	if bad > 0 {
		t.Errorf("%d of %d links do not resolve cleanly", bad, links)
	}
}

// BenchmarkParseVault parses the pages of a generated 1,000-page vault;
// ns/op is per page.
func BenchmarkParseVault(b *testing.B) {
	files := vaultgen.New(vaultgen.Config{Pages: 1000}).All()
	size := 0
	for _, f := range files {
		size += len(f.Data)
	}
	b.SetBytes(int64(size / len(files)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f := files[i%len(files)]
		markdown.Parse(f.Path, f.Data)
		i++
	}
}

// BenchmarkNewResolver builds a resolver for a generated 10,000-page vault
// and resolves every link once; ns/op is per vault.
func BenchmarkNewResolver(b *testing.B) {
	pages, attachments, _ := generatedVault(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		r := markdown.NewResolver(pages, attachments)
		for _, p := range pages {
			for _, l := range p.Links {
				r.Resolve(p, l)
			}
		}
	}
}
