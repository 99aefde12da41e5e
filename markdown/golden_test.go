package markdown_test

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cairn/markdown"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// loadVault parses every Markdown file under dir and lists the others as
// attachments.
func loadVault(t *testing.T, dir string) ([]*markdown.Page, []string) {
	t.Helper()
	var pages []*markdown.Page
	var attachments []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(path, ".md") {
			attachments = append(attachments, path)
			return nil
		}
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		if err != nil {
			return err
		}
		pages = append(pages, markdown.Parse(path, src))
		return nil
	})
	if err != nil {
		t.Fatalf("load vault %s: %v", dir, err)
	}
	return pages, attachments
}

// TestVault_Golden parses the Obsidian-style fixture vault and resolves
// every link. Run with -update to rewrite testdata/vault.golden.
func TestVault_Golden(t *testing.T) {
	t.Parallel()
	pages, attachments := loadVault(t, "testdata/vault")
	r := markdown.NewResolver(pages, attachments)
	slices.SortFunc(pages, func(a, b *markdown.Page) int { return strings.Compare(a.Path, b.Path) })

	var b strings.Builder
	fmt.Fprintf(&b, "attachments: %s\n", strings.Join(attachments, ", "))
	for _, p := range pages {
		fmt.Fprintf(&b, "\n%s\n  id %q, title %q (%s), type %q\n", p.Path, p.ID, p.Title, p.TitleSource, p.Type)
		if len(p.Aliases) > 0 {
			fmt.Fprintf(&b, "  aliases %q\n", p.Aliases)
		}
		if len(p.Sources) > 0 {
			fmt.Fprintf(&b, "  sources %q\n", p.Sources)
		}
		for _, h := range p.Headings {
			fmt.Fprintf(&b, "  h%d %q #%s (line %d)\n", h.Level, h.Text, h.Slug, h.Line)
		}
		if len(p.BlockIDs) > 0 {
			fmt.Fprintf(&b, "  blocks %q\n", p.BlockIDs)
		}
		for _, pr := range p.Problems {
			fmt.Fprintf(&b, "  problem %s (line %d): %s\n", pr.Kind, pr.Line, pr.Message)
		}
		for _, l := range p.Links {
			res := r.Resolve(p, l)
			fmt.Fprintf(&b, "  %d:%d %s %s -> %s", l.Line, l.Col, l.Kind, l.Raw, res.Status)
			switch {
			case res.SamePage:
				b.WriteString(" same page")
			case res.Status == markdown.StatusResolved:
				fmt.Fprintf(&b, " %s by %s", res.Path, res.Step)
				if res.Chosen() {
					fmt.Fprintf(&b, ", the shortest of %s", strings.Join(res.Candidates, ", "))
				}
			case res.Status == markdown.StatusAmbiguous:
				fmt.Fprintf(&b, " by %s: %s", res.Step, strings.Join(res.Candidates, ", "))
			}
			if res.MissingHeading {
				b.WriteString(", missing heading")
			}
			if res.MissingBlock {
				b.WriteString(", missing block")
			}
			if l.Escapes {
				b.WriteString(", escapes the vault")
			}
			b.WriteString("\n")
		}
	}
	got := b.String()

	const golden = "testdata/vault.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("vault report mismatch (-%s +got); run go test -update if the change is right:\n%s", golden, diff)
	}
}
