package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	gmutil "github.com/yuin/goldmark/util"

	"cairn/index"
	"cairn/markdown"
)

// wikiScheme marks, in the Markdown handed to goldmark, the links that
// were wikilinks: "cairn-wiki:<class>:<url>". The transformer turns them
// into ordinary links with a class; a page's own links cannot use the
// scheme, since it is rewritten on sight (see rewriteLinks).
const wikiScheme = "cairn-wiki:"

// renderer turns a page's Markdown into safe HTML.
type renderer struct {
	md goldmark.Markdown
}

// newRenderer returns the renderer: CommonMark with GitHub's tables,
// strikethrough, task lists and autolinks; raw HTML in the page is left
// out (goldmark's default), and what goldmark writes is sanitized besides
// (sanitize), so no script, event handler, style or javascript: link
// reaches the browser.
func newRenderer() *renderer {
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithASTTransformers(gmutil.Prioritized(wikiLinks{}, 100))),
	)
	return &renderer{md: md}
}

// wikiLinks is the AST transformer that turns cairn-wiki: links into
// links with their class, and gives headings their anchors.
type wikiLinks struct{}

func (wikiLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	var headings []*ast.Heading
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			headings = append(headings, h)
		}
		l, ok := n.(*ast.Link)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		dest := string(l.Destination)
		rest, ok := strings.CutPrefix(dest, wikiScheme)
		if !ok {
			return ast.WalkContinue, nil
		}
		class, href, _ := strings.Cut(rest, ":")
		l.Destination = []byte(href)
		l.SetAttributeString("class", []byte(strings.ReplaceAll(class, "+", " ")))
		return ast.WalkContinue, nil
	})
	// Headings get the anchors the index gives them, so that a link to
	// one (from [[page#Heading]]) lands on it.
	hs := make([]markdown.Heading, len(headings))
	for i, h := range headings {
		hs[i].Text = strings.TrimSpace(string(h.Lines().Value(reader.Source())))
	}
	markdown.SetSlugs(hs)
	for i, h := range headings {
		h.SetAttributeString("id", []byte("h-"+hs[i].Slug))
	}
}

// slug is the anchor of the first heading whose text is text.
func slug(text string) string {
	hs := []markdown.Heading{{Text: text}}
	markdown.SetSlugs(hs)
	return "h-" + hs[0].Slug
}

// Render returns the body of the page at path (its frontmatter left out)
// as safe HTML. links are the page's links as the view's index resolved
// them: each wikilink or embed becomes a link to the page it resolves to
// at the same revision (at), or, unresolved, a link marked broken or
// ambiguous.
func (r *renderer) Render(path string, src []byte, links []index.LinkInfo, at string) (template.HTML, error) {
	body := rewriteLinks(path, src, links, at)
	var buf bytes.Buffer
	if err := r.md.Convert(body, &buf); err != nil {
		return "", fmt.Errorf("render %s: %w", path, err)
	}
	return template.HTML(sanitize(buf.Bytes())), nil
}

// rewriteLinks returns the page's body with each wikilink and embed
// written as a Markdown link to cairn-wiki:<class>:<url>, and any link the
// page itself wrote to that scheme defused.
func rewriteLinks(path string, src []byte, links []index.LinkInfo, at string) []byte {
	parts := markdown.Split(src)
	start := len(src) - len(parts.Body)
	page := markdown.Parse(path, src)
	// The index's links of the page, by line and text, in order.
	resolved := map[string][]index.LinkInfo{}
	for _, l := range links {
		k := fmt.Sprintf("%d\x00%s", l.Line, l.Raw)
		resolved[k] = append(resolved[k], l)
	}
	var out bytes.Buffer
	pos := start
	for _, l := range page.Links {
		if l.Offset < pos || l.Property != "" || !strings.HasPrefix(l.Raw, "[[") && !strings.HasPrefix(l.Raw, "![[") {
			continue
		}
		if l.Offset+len(l.Raw) > len(src) || string(src[l.Offset:l.Offset+len(l.Raw)]) != l.Raw {
			continue
		}
		k := fmt.Sprintf("%d\x00%s", l.Line, l.Raw)
		var info index.LinkInfo
		if q := resolved[k]; len(q) > 0 {
			info, resolved[k] = q[0], q[1:]
		}
		out.Write(defuse(src[pos:l.Offset]))
		out.WriteString(wikiLink(l, info, at))
		pos = l.Offset + len(l.Raw)
	}
	out.Write(defuse(src[pos:]))
	return out.Bytes()
}

// defuse breaks the scheme cairn-wiki: where a page wrote it, so that
// only the links rewriteLinks made carry it.
func defuse(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(wikiScheme), []byte("cairn-wiki\u200b:"))
}

// wikiLink writes one wikilink as a Markdown link.
func wikiLink(l markdown.Link, info index.LinkInfo, at string) string {
	label := l.Label
	if label == "" {
		label = l.Target
		if l.Heading != "" {
			label += " › " + l.Heading
		}
		if label == "" {
			label = l.Raw
		}
	}
	class := "wikilink"
	if l.Embed {
		class += "+embed"
	}
	href := "#"
	title := ""
	switch {
	case info.To != "":
		href = pageURL(info.To, at)
		if l.Heading != "" {
			href += "#" + slug(l.Heading)
		}
	case info.Status == "ambiguous":
		class += "+ambiguous"
		title = "ambiguous: " + info.CandidateList()
	default:
		class += "+broken"
		title = "no page is " + l.Target
	}
	link := "[" + escapeText(label) + "](<" + wikiScheme + class + ":" + href + ">"
	if title != "" {
		link += ` "` + strings.NewReplacer(`"`, `\"`, `\`, `\\`).Replace(title) + `"`
	}
	return link + ")"
}

// escapeText escapes Markdown's punctuation in a link's text.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && strings.ContainsRune("\\`*_{}[]()<>#+-.!|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// pageURL is the reader's address of the page at path, at a revision ("":
// main).
func pageURL(path, at string) string {
	var segs []string
	for _, s := range strings.Split(path, "/") {
		segs = append(segs, url.PathEscape(s))
	}
	u := "/pages/" + strings.Join(segs, "/")
	if at != "" {
		u += "?at=" + url.QueryEscape(at)
	}
	return u
}
