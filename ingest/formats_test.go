package ingest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/ingest"
	"cairn/internal/pdfgen"
)

// htmlArticle is a web page about the vault's subject, with what a page
// carries beside its text.
const htmlArticle = `<!doctype html><html><head><title>Paper mills of Fabriano</title>
<script>track("visit")</script><style>h1 { color: red }</style></head>
<body><nav><a href="/">Home</a></nav>
<h1>Paper mills of Fabriano</h1>
<p>Paper mills in Fabriano used water-powered hammers to beat rags into pulp.
The mills also introduced watermarks, which let historians date sheets.</p>
<h2>Sizing</h2>
<p>Gelatin sizing made the paper take <a href="https://example.org/ink?utm_source=x">printing ink</a> well.</p>
<img src="https://pixel.example/t.gif" width="1" height="1">
</body></html>
`

func TestIngest_HTML(t *testing.T) {
	t.Run("Extractive", func(t *testing.T) {
		e := setup(t, "")
		src := e.ingest(e.file("fabriano.html", htmlArticle))[0].Source
		if src.Status != ingest.Merged {
			t.Fatalf("status %s: %s", src.Status, src.Error)
		}
		if e.read("raw/fabriano.html") != htmlArticle {
			t.Errorf("raw/fabriano.html is not the page as it came")
		}
		var summary string
		for ent, err := range e.v.Store.Files(e.ctx, e.tree(), "summaries/") {
			if err != nil {
				t.Fatal(err)
			}
			if d := e.read(ent.Path); strings.Contains(d, "source: raw/fabriano.html") {
				summary = d
			}
		}
		if !strings.Contains(summary, "watermarks") || !strings.Contains(summary, "[[concepts/paper|Paper]]") {
			t.Errorf("the summary is not of the page's text:\n%s", summary)
		}
		for _, junk := range []string{"<", "track(", "color: red", "pixel.example", "utm_source"} {
			if strings.Contains(summary, junk) {
				t.Errorf("the summary holds %q:\n%s", junk, summary)
			}
		}
	})
	t.Run("CommandAgentReadsTheConversion", func(t *testing.T) {
		// The agent finds the converted text where its prompt says, and
		// writes a page of it.
		script := `#!/bin/sh
text=$(grep -o '^the file "[^"]*"' | head -1 | sed 's/^the file "//; s/"$//')
[ -f "$text" ] || { echo "no converted text named in the prompt" >&2; exit 3; }
printf -- '---\ntitle: Fabriano\ntype: concept\n---\n' > concepts/fabriano.md
sed 's/^# .*/# Fabriano/' "$text" >> concepts/fabriano.md
printf '\nSee [[concepts/paper|Paper]].\n' >> concepts/fabriano.md
sed -i 's|- \[\[concepts/type|- [[concepts/fabriano\|Fabriano]]\n- [[concepts/type|' index.md
echo "Wrote the Fabriano page from $text."
`
		p := filepath.Join(t.TempDir(), "agent.sh")
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		e := setup(t, fmt.Sprintf("agent:\n  runtime: command\n  command: %s\n", p))
		src := e.ingest(e.file("fabriano.html", htmlArticle))[0].Source
		if src.Status != ingest.Merged {
			t.Fatalf("status %s: %s", src.Status, src.Error)
		}
		page := e.read("concepts/fabriano.md")
		for _, want := range []string{"## Sizing", "[printing ink](https://example.org/ink)", "watermarks"} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q:\n%s", want, page)
			}
		}
		if strings.Contains(page, "<p>") || strings.Contains(page, "track(") {
			t.Errorf("the agent read HTML, not its conversion:\n%s", page)
		}
	})
	t.Run("Hostile", func(t *testing.T) {
		e := setup(t, "")
		deep := strings.Repeat("<div>", 50_000) + "deep" + strings.Repeat("</div>", 50_000)
		added := e.ingest(e.file("deep.html", deep), e.file("empty.html", "<html><script>x()</script></html>"), e.file("latin1.html", "<p>caf\xe9</p>"))
		for i, want := range []string{"nests elements 50000 deep", "no text to integrate", "not UTF-8"} {
			src := added[i].Source
			if src.Status != ingest.Failed || !strings.Contains(src.Error, want) || src.Hint == "" {
				t.Errorf("%s: %s %q (hint %q), want failed with %q and a hint", src.Name, src.Status, src.Error, src.Hint, want)
			}
		}
		if e.exists("summaries/deep.md") {
			t.Errorf("a summary of the hostile page")
		}
	})
}

func TestIngest_PDF(t *testing.T) {
	e := setup(t, "")
	paper := pdfgen.Write([][]string{
		{"Paper mills of Fabriano", "Paper mills in Fabriano used water-powered hammers to beat rags into pulp."},
		{"The mills also introduced watermarks, which let historians date sheets.", "Printing ink sat well on sized paper."},
	}, pdfgen.Options{Title: "Paper mills of Fabriano"})
	added := e.ingest(e.file("fabriano.pdf", string(paper)), e.file("scan.pdf", string(pdfgen.Write([][]string{{}}, pdfgen.Options{}))),
		e.file("locked.pdf", string(pdfgen.Write([][]string{{"secret"}}, pdfgen.Options{UserPassword: "pw"}))))
	if src := added[0].Source; src.Status != ingest.Merged {
		t.Fatalf("fabriano.pdf: %s %s", src.Status, src.Error)
	}
	if e.read("raw/fabriano.pdf") != string(paper) {
		t.Errorf("raw/fabriano.pdf is not the file as it came")
	}
	var summary string
	for ent, err := range e.v.Store.Files(e.ctx, e.tree(), "summaries/") {
		if err != nil {
			t.Fatal(err)
		}
		if d := e.read(ent.Path); strings.Contains(d, "source: raw/fabriano.pdf") {
			summary = d
		}
	}
	if !strings.Contains(summary, "watermarks") || !strings.Contains(summary, "[[concepts/paper|Paper]]") {
		t.Errorf("the summary is not of the PDF's text:\n%s", summary)
	}
	// Each passage quoted cites its page.
	if !strings.Contains(summary, "date sheets. (p. 2)") && !strings.Contains(summary, "into pulp. (p. 1)") {
		t.Errorf("the summary's passages do not cite their pages:\n%s", summary)
	}
	for i, want := range []string{"", "no text layer (a scan?)", "encrypted"} {
		if i == 0 {
			continue
		}
		src := added[i].Source
		if src.Status != ingest.Failed || !strings.Contains(src.Error, want) || src.Hint == "" {
			t.Errorf("%s: %s %q (hint %q), want failed with %q and a hint", src.Name, src.Status, src.Error, src.Hint, want)
		}
	}
}
