package webui

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"

	"cairn/index"
	"cairn/internal/vaultgen"
)

// oldPolicy is the bluemonday policy pages were rendered through before
// sanitize: user content, cairn's link classes and heading anchors,
// nofollow on every link and a new window for other sites.
func oldPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(wikilink|embed|broken|ambiguous)( (wikilink|embed|broken|ambiguous))*$`)).OnElements("a")
	p.AllowAttrs("title").OnElements("a")
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^h-[\p{L}\p{M}\p{N}_-]*$`)).OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.RequireNoFollowOnFullyQualifiedLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
}

// markdownPieces returns the parts random pages are made of: every
// construct goldmark with GFM renders, cairn's wikilinks, and the ways a
// page can try to run script or style the reader.
func markdownPieces() []string {
	return []string{
		"# Heading %d\n", "## Sub *heading* `code`\n", "### Ünïcødé — heading %d!\n", "#### a.b/c?d\n",
		"Plain text with **bold**, _em_, ~~struck~~ and `code` %d.\n",
		"[a link](https://example.com/%d?q=1&r=2 \"A title\")", "[relative](../notes/x.md)", "[anchor](#h-heading)",
		"[mail](mailto:someone@example.com)", "<https://auto.example.org/path>", "www.example.com/%d",
		"someone@example.org", "[bad](javascript:alert(%d))", "[bad2](JaVaScRiPt:alert(1))",
		"[data](data:text/html;base64,PHNjcmlwdD4=)", "[vb](vbscript:msgbox)", "[spaced](<https://a b.com>)",
		"![an image](https://img.example.com/%d.png \"img title\")", "![alt with ? and \"](x.png)",
		"![](relative.png)", "![x](javascript:alert(1))", "![a: b](x.png)", "![a & b](x.png)", "![a\u00a0b](x.png)",
		"![x](y.png \"t: u\")", "![a\u3000b](x.png \"a\u2028b\")", "![tab\tand (parens)](x.png 'q')",
		"<script>alert(%d)</script>", "<img src=x onerror=alert(1)>", "<a href=\"javascript:alert(1)\">raw</a>",
		"<div style=\"color:red\">styled</div>", "<!-- a comment -->", "<iframe src=\"https://evil\"></iframe>",
		"<b onclick=x>bold raw</b>", "&lt;escaped&gt; &amp; &#106;avascript: &quot;",
		"| a | b |\n|:--|--:|\n| 1 | 2 |\n", "- [ ] task\n- [x] done\n", "1. one\n2. two\n", "3. starts at three\n",
		"> a quote\n> with [link](http://q.example)\n", "```go\nfunc main() { <script> }\n```\n", "    indented code <b>\n",
		"---\n", "line  \nbreak\n", "\\*not em\\*", "[[Wiki Page]]", "[[Other#Some Heading|shown]]", "![[embed.png]]",
		"[[javascript:alert(1)|wiki]]", "[x](cairn-wiki:wikilink:javascript:alert(1))", "Footnote[^1]\n\n[^1]: note\n",
		"<details open><summary>s</summary>d</details>", "<svg><script>alert(1)</script></svg>",
		"[link with `code` and *em*](https://x.example/%d)", "**[bold link](http://b.example)**", "<x-custom a=b>c</x-custom>",
	}
}

// randomPage returns a page of random pieces.
func randomPage(r *rand.Rand, pieces []string) string {
	var b strings.Builder
	for range 1 + r.IntN(12) {
		piece := pieces[r.IntN(len(pieces))]
		if strings.Contains(piece, "%d") {
			piece = fmt.Sprintf(piece, r.IntN(1000))
		}
		b.WriteString(piece)
		b.WriteString([]string{" ", "\n", "\n\n"}[r.IntN(3)])
	}
	return b.String()
}

// TestSanitize_AsBluemonday checks that sanitize keeps of goldmark's
// output exactly what the bluemonday policy it replaces kept, byte for
// byte: on a generated vault's pages and on random pages made of every
// Markdown construct and hostile piece, rendered as the reader renders
// them (wikilinks resolved, broken and ambiguous).
func TestSanitize_AsBluemonday(t *testing.T) {
	r := newRenderer()
	p := oldPolicy()
	check := func(name string, src []byte, links []index.LinkInfo) {
		t.Helper()
		var buf bytes.Buffer
		if err := r.md.Convert(rewriteLinks(name, src, links, ""), &buf); err != nil {
			t.Fatal(err)
		}
		got, want := sanitize(buf.Bytes()), p.SanitizeBytes(buf.Bytes())
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: sanitize differs from the bluemonday policy\nsource:\n%s\ngoldmark:\n%s\nsanitize:\n%s\nbluemonday:\n%s", name, src, buf.Bytes(), got, want)
		}
	}
	v := vaultgen.New(vaultgen.Config{Pages: 500})
	for i := range v.Len() {
		f := v.Page(i)
		check(f.Path, f.Data, nil)
	}
	rng, pieces := rand.New(rand.NewPCG(1, 2)), markdownPieces()
	for i := range 3000 {
		src := randomPage(rng, pieces)
		var links []index.LinkInfo
		if i%2 == 0 {
			// Some wikilinks resolve, others are ambiguous or broken.
			for n, raw := range []string{"[[Wiki Page]]", "[[Other#Some Heading|shown]]", "![[embed.png]]"} {
				if strings.Contains(src, raw) {
					switch n {
					case 0:
						links = append(links, index.LinkInfo{Line: 1, Raw: raw, To: "notes/wiki page.md"})
					case 1:
						links = append(links, index.LinkInfo{Line: 1, Raw: raw, Status: "ambiguous", Candidates: []string{"a.md", "b \"q\".md"}})
					}
				}
			}
		}
		check(fmt.Sprintf("random-%d.md", i), []byte(src), links)
	}
}

// TestSanitize_Hostile hands sanitize HTML that goldmark would never
// write, as a parser bug might, and checks what a browser would make of
// the result: only the elements a page renders to, no event handler,
// style or other attribute a page does not use, and no address but a
// relative, http, https or mailto one.
func TestSanitize_Hostile(t *testing.T) {
	inputs := []string{
		`<script>alert(1)</script>`,
		`<SCRIPT SRC=//evil/x.js></SCRIPT>`,
		`<scr<script>ipt>alert(1)</scr</script>ipt>`,
		`<img src=x onerror=alert(1)>`,
		`<img src="javascript:alert(1)">`,
		`<img src=" javascript:alert(1)" alt=x>`,
		`<a href="javascript:alert(1)">x</a>`,
		`<a href=" JaVaScRiPt:alert(1)">x</a>`,
		`<a href="&#106;&#97;vascript:alert(1)">x</a>`,
		`<a href="java&#x09;script:alert(1)">x</a>`,
		`<a href="java&#x0A;script:alert(1)">x</a>`,
		`<a href="java&#x0D;script:alert(1)">x</a>`,
		`<a href="data:text/html,<script>alert(1)</script>">x</a>`,
		`<a href="vbscript:x">x</a>`,
		`<a href="https://ok.example" onclick="alert(1)" style="x" rel="opener" target="_self">ok</a>`,
		`<a href=//evil.example/x>protocol-relative</a>`,
		`<a class="wikilink evil" href="/x">x</a>`,
		`<h1 id="x onmouseover=alert(1)">h</h1>`,
		`<h2 id="h-ok">h</h2>`,
		`<p style="background:url(javascript:alert(1))">p</p>`,
		`<svg onload=alert(1)><circle/></svg>`,
		`<math><mi xlink:href="javascript:alert(1)">x</mi></math>`,
		`<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
		`<object data="x.swf"><param name=x></object>`,
		`<embed src="x.swf">`,
		`<form action="javascript:alert(1)"><input type=submit></form>`,
		`<!--<script>alert(1)</script>-->`,
		`<!--><script>alert(1)</script>-->`,
		`<style>*{background:url(javascript:alert(1))}</style>`,
		`<textarea><script>alert(1)</script></textarea>`,
		`<title><script>alert(1)</script></title>`,
		`<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>`,
		`<table><tr><td background="javascript:alert(1)">c</td></tr></table>`,
		`<base href="javascript:alert(1)//">`,
		`<meta http-equiv="refresh" content="0;url=javascript:alert(1)">`,
		`<link rel=stylesheet href=//evil/x.css>`,
		`<div><a href="/ok">nested <b>ok</b></a></div>`,
		`<a href="/x"><a href="javascript:alert(1)">inner</a></a>`,
		`<img src="x.png" alt="a" title="t" width=1 height=1 usemap=#m>`,
		`<template><script>alert(1)</script></template>`,
		`<xmp><script>alert(1)</script></xmp>`,
		`<plaintext><script>alert(1)</script>`,
		`<a href="https://ok.example">unclosed`,
		`<unknown-element onclick=x>text</unknown-element>`,
		`<a href="https://evil.example"/>`,
		`<a href="https://evil.example">unclosed`,
		`<strong/>bold?`,
		`<table><tr><td>x`,
		`<a href=/x><a onclick=1><a href=https://evil.example>t</a>`,
		`<em><strong>crossed</em></strong> after`,
		`</p></blockquote></a>stray ends`,
		`<embed src=x>text after a void element`,
		`<svg></style><p>x</p></svg>`,
		`<script/>alert(1)</script>`,
		`<textarea/><b onclick=x>y</b></textarea>`,
	}
	for _, in := range inputs {
		out := sanitize([]byte(in))
		if err := checkSafe(out); err != nil {
			t.Errorf("sanitize(%q) = %q: %v", in, out, err)
		}
		if err := checkContained(out); err != nil {
			t.Errorf("sanitize(%q) = %q: %v", in, out, err)
		}
		if again := sanitize(out); !bytes.Equal(again, out) {
			t.Errorf("sanitize(%q) = %q, and again %q: not a fixed point", in, out, again)
		}
	}
	// What is kept, kept as it was.
	for in, want := range map[string]string{
		`<p>text &amp; &lt;b&gt;</p>`:                        `<p>text &amp; &lt;b&gt;</p>`,
		`<a href="https://ok.example" onclick="x">ok</a>`:    `<a href="https://ok.example" rel="nofollow noopener" target="_blank">ok</a>`,
		`<a href="/pages/x" class="wikilink broken">x</a>`:   `<a href="/pages/x" class="wikilink broken" rel="nofollow">x</a>`,
		`<a onclick="x">no address</a>`:                      `no address`,
		`<h2 id="h-ok" class="x">h</h2>`:                     `<h2 id="h-ok">h</h2>`,
		`<img src="x.png" alt="an image" onerror="x">`:       `<img src="x.png" alt="an image">`,
		`<div><script>alert(1)</script>kept text</div>`:      `kept text`,
		`<table><tr><th style="x">h</th></tr></table>`:       `<table><tr><th>h</th></tr></table>`,
		`<ul><li><input type="checkbox" checked>t</li></ul>`: `<ul><li>t</li></ul>`,
		`<a href="https://evil.example"/>`:                   `<a href="https://evil.example" rel="nofollow noopener" target="_blank"></a>`,
		`<p>open <em>and <strong>more`:                       `<p>open <em>and <strong>more</strong></em></p>`,
		`<p><a onclick=1><a href="/x">t</a></a></p>`:         `<p><a href="/x" rel="nofollow">t</a></p>`,
		`<img src="x.png" alt="a: b" title="t &amp; u"/>`:    `<img src="x.png"/>`,
		`<embed src=x>kept`:                                  `kept`,
		`<frame src=x>kept`:                                  `kept`,
		`<svg></style><p>x</p></svg>after`:                   `after`,
		`<script/>alert(1)</script>after`:                    `after`,
		`<svg/>after`:                                        `after`,
	} {
		if got := string(sanitize([]byte(in))); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkSafe parses out as a browser would and reports the first element,
// attribute or address a page's rendering must not hold.
func checkSafe(out []byte) error {
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		return err
	}
	allowed := map[string]map[string]bool{
		"html": {}, "head": {}, "body": {}, // what the parser adds around a fragment
		"p": {}, "blockquote": {}, "pre": {}, "code": {}, "ul": {}, "ol": {}, "li": {}, "hr": {}, "br": {},
		"em": {}, "strong": {}, "del": {}, "table": {}, "thead": {}, "tbody": {}, "tr": {}, "th": {}, "td": {},
		"h1": {"id": true}, "h2": {"id": true}, "h3": {"id": true}, "h4": {"id": true}, "h5": {"id": true}, "h6": {"id": true},
		"a":   {"href": true, "title": true, "class": true, "rel": true, "target": true},
		"img": {"src": true, "alt": true, "title": true},
	}
	var walk func(n *html.Node) error
	walk = func(n *html.Node) error {
		if n.Type == html.CommentNode {
			return fmt.Errorf("a comment")
		}
		if n.Type == html.ElementNode {
			attrs, ok := allowed[n.Data]
			if !ok {
				return fmt.Errorf("element %s", n.Data)
			}
			for _, a := range n.Attr {
				if !attrs[a.Key] || a.Namespace != "" {
					return fmt.Errorf("attribute %s on %s", a.Key, n.Data)
				}
				if (a.Key == "href" || a.Key == "src") && !browserSafe(a.Val) {
					return fmt.Errorf("address %q on %s", a.Val, n.Data)
				}
				if a.Key == "id" && !strings.HasPrefix(a.Val, "h-") {
					return fmt.Errorf("id %q", a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(doc)
}

// browserSafe reports whether a browser would take addr for a relative,
// http, https or mailto address: it strips the ASCII white space and
// control characters around and inside a scheme, and a scheme is what
// comes before the first colon when no slash, question mark or hash
// comes before it.
func browserSafe(addr string) bool {
	var b strings.Builder
	for _, r := range strings.TrimSpace(addr) {
		if r > ' ' {
			b.WriteRune(r)
		}
	}
	s := strings.ToLower(b.String())
	i := strings.IndexAny(s, ":/?#")
	if i < 0 || s[i] != ':' {
		return true // relative
	}
	switch s[:i] {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// checkContained parses out between two elements of a page, as the
// reader shows a page's body, and reports whether anything of out takes
// in what follows it.
func checkContained(out []byte) error {
	doc, err := html.Parse(strings.NewReader(`<body><article id="page">` + string(out) + `</article><aside id="after">text<a href="/own">own</a></aside></body>`))
	if err != nil {
		return err
	}
	var find func(n *html.Node) *html.Node
	find = func(n *html.Node) *html.Node {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == "after" {
				return n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	after := find(doc)
	if after == nil || after.Parent == nil || after.Parent.Data != "body" {
		return fmt.Errorf("what follows the page is not outside it")
	}
	text := after.FirstChild
	if text == nil || text.Type != html.TextNode || text.Data != "text" {
		return fmt.Errorf("what follows the page is changed: its text is in another element")
	}
	if own := text.NextSibling; own == nil || own.Data != "a" || own.FirstChild == nil || own.FirstChild.Data != "own" || len(own.Attr) != 1 || own.NextSibling != nil {
		return fmt.Errorf("what follows the page is changed")
	}
	return nil
}
