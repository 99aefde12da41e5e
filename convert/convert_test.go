package convert_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/convert"
)

const page = `<!doctype html>
<html><head><title>Paper  mills</title>
<style>body { color: red }</style>
<script>document.write("tracked")</script>
<link rel="stylesheet" href="x.css"><meta name="x" content="y">
</head><body>
<nav><a href="/">Home</a></nav>
<h2>Fabriano</h2>
<p>Paper was made in <a href="https://example.org/fabriano?utm_source=feed&amp;id=7&amp;fbclid=abc">Fabriano</a> from <em>1264</em>.</p>
<ul><li>rag</li><li>water <strong>mills</strong></li></ul>
<table><tr><th>Town</th><th>Year</th></tr><tr><td>Fabriano</td><td>1264</td></tr></table>
<pre><code>stamp(sheet)</code></pre>
<img src="https://tracker.example/p.gif" width="1" height="1">
<img src="mill.png" alt="A mill">
<form><input name="q"><button>Go</button></form>
<footer>© someone</footer>
</body></html>`

func TestHTML(t *testing.T) {
	md, err := convert.HTML(context.Background(), "raw/mills.html", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	got := string(md)
	for _, want := range []string{"# Paper mills\n", "## Fabriano", "[Fabriano](https://example.org/fabriano?id=7)", "*1264*",
		"- rag", "**mills**", "| Fabriano | 1264 |", "```\nstamp(sheet)\n```", "![A mill](mill.png)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"color: red", "tracked", "tracker.example", "utm_source", "fbclid", "Home", "someone", "Go", "x.css"} {
		if strings.Contains(got, gone) {
			t.Errorf("the Markdown keeps %q:\n%s", gone, got)
		}
	}
}

func TestHTML_Hostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"DeeplyNested", strings.Repeat("<div>", 100_000) + "x" + strings.Repeat("</div>", 100_000), "nests elements 100000 deep; cairn converts at most 256"},
		{"Huge", "<p>" + strings.Repeat("a", convert.MaxHTML) + "</p>", "cairn converts at most 8388608"},
		{"NoText", "<html><head><script>x()</script></head><body><style>p{}</style></body></html>", "no text to integrate"},
		{"UnclosedEverything", strings.Repeat("<table><tr><td>", 300), "nests elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := convert.HTML(context.Background(), "raw/x.html", []byte(tc.data))
			if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "raw/x.html") {
				t.Fatalf("HTML = %v, want EINVALID naming the file and %q", err, tc.want)
			}
			if cairn.ErrorHint(err) == "" {
				t.Errorf("no hint")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refused after %s", d)
			}
		})
	}
}

func TestSource(t *testing.T) {
	c := converter(t)
	text, converted, err := c.Source(context.Background(), "raw/a.md", []byte("# A\n"))
	if err != nil || converted || string(text) != "# A\n" {
		t.Errorf("Source(.md) = %q, %v, %v", text, converted, err)
	}
	text, converted, err = c.Source(context.Background(), "raw/a.HTM", []byte("<h1>A</h1><p>b</p>"))
	if err != nil || !converted || !strings.HasPrefix(string(text), "# A") {
		t.Errorf("Source(.HTM) = %q, %v, %v", text, converted, err)
	}
}
