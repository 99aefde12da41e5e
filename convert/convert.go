// Package convert turns sources that are not Markdown or text into the
// Markdown an agent integrates, within bounds of size, depth and time: a
// malformed or hostile file fails with a clear message, never takes the
// process down.
//
// HTML is converted by github.com/JohannesKaufmann/html-to-markdown/v2
// (headings, lists, links, tables, code, emphasis), after scripts, styles,
// frames, forms, tracking pixels and tracking parameters of links are
// removed from the parsed document. A PDF's text is extracted page by page
// by PDFium compiled to WebAssembly (github.com/klippa-app/go-pdfium, run
// by wazero: no cgo, no file system, bounded memory), each page under its
// own heading so that summaries can cite it.
package convert

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"path"
	"strings"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"cairn"
)

// Limits of a conversion.
const (
	// MaxHTML is the largest HTML source converted.
	MaxHTML = 8 << 20
	// MaxDepth is the deepest nesting of elements an HTML source may have.
	MaxDepth = 256
	// Timeout bounds one conversion.
	Timeout = 20 * time.Second
)

// Needed reports whether a source at path is converted before an agent
// reads it, and from what: "html" for .html and .htm, "pdf" for .pdf, ""
// for Markdown and text.
func Needed(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".html", ".htm", ".xhtml":
		return "html"
	case ".pdf":
		return "pdf"
	}
	return ""
}

// HTML converts an HTML document to Markdown. A document over MaxHTML,
// nested deeper than MaxDepth, that is not UTF-8 or holds no text, or
// whose conversion takes longer than Timeout, is refused with an EINVALID
// error that names the file and the problem.
func HTML(ctx context.Context, name string, data []byte) ([]byte, error) {
	bad := func(format string, args ...any) *cairn.Error {
		return cairn.Errorf(cairn.EINVALID, "%s: "+format, append([]any{name}, args...)...)
	}
	if len(data) > MaxHTML {
		return nil, bad("the HTML is %d bytes; cairn converts at most %d", len(data), MaxHTML).
			WithHint("Save the part that matters as a smaller page, or as Markdown, and ingest that.")
	}
	if depth, err := nesting(data); err != nil {
		return nil, bad("the HTML does not parse: %v", err).WithHint("Save the page again from a browser, or as Markdown.")
	} else if depth > MaxDepth {
		return nil, bad("the HTML nests elements %d deep; cairn converts at most %d", depth, MaxDepth).
			WithHint("This is not an ordinary page (a hostile or generated file?); save its text as Markdown instead.")
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	type result struct {
		md  []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		md, err := convertHTML(ctx, data)
		done <- result{md, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, bad("the HTML could not be converted: %v", r.err).WithHint("Save the page as Markdown or text and ingest that.")
		}
		if len(bytes.TrimSpace(r.md)) == 0 {
			return nil, bad("the HTML has no text to integrate").WithHint("Ingest a page with text in it.")
		}
		return r.md, nil
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return nil, bad("converting the HTML took longer than %s", Timeout).
				WithHint("Save the part that matters as Markdown, and ingest that.")
		}
		return nil, ctx.Err()
	}
}

// nesting returns the deepest nesting of elements in an HTML document, as
// its tokens open and close them (void elements open nothing).
func nesting(data []byte) (int, error) {
	z := html.NewTokenizer(bytes.NewReader(data))
	z.SetMaxBuf(MaxHTML)
	depth, deepest := 0, 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			if err := z.Err(); !errors.Is(err, io.EOF) {
				return deepest, err
			}
			return deepest, nil
		case html.StartTagToken:
			name, _ := z.TagName()
			if !void[string(name)] {
				depth++
				deepest = max(deepest, depth)
			}
		case html.EndTagToken:
			depth = max(0, depth-1)
		}
	}
}

var void = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true}

// removed are the elements dropped with everything in them.
var removed = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Iframe: true, atom.Frame: true,
	atom.Frameset: true, atom.Object: true, atom.Embed: true, atom.Template: true, atom.Form: true, atom.Button: true,
	atom.Input: true, atom.Select: true, atom.Textarea: true, atom.Svg: true, atom.Canvas: true, atom.Link: true, atom.Meta: true,
	atom.Nav: true, atom.Footer: true}

// trackingParams are query parameters that track who follows a link.
var trackingParams = []string{"utm_", "fbclid", "gclid", "dclid", "msclkid", "mc_eid", "mc_cid", "_hsenc", "_hsmi", "igshid", "yclid", "ref_src"}

// convertHTML parses, cleans and converts a document.
func convertHTML(ctx context.Context, data []byte) ([]byte, error) {
	doc, err := html.ParseWithOptions(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	title := clean(doc)
	conv := htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin(),
	))
	md, err := conv.ConvertNode(doc, htmltomarkdown.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	md = bytes.TrimSpace(md)
	if title != "" && !bytes.HasPrefix(md, []byte("# ")) {
		md = append([]byte("# "+title+"\n\n"), md...)
	}
	return append(md, '\n'), nil
}

// clean removes what is not the page's content from the document and
// returns its title.
func clean(n *html.Node) (title string) {
	var next *html.Node
	for c := n.FirstChild; c != nil; c = next {
		next = c.NextSibling
		if c.Type == html.ElementNode {
			switch {
			case c.DataAtom == atom.Title:
				if c.FirstChild != nil && title == "" {
					title = strings.Join(strings.Fields(c.FirstChild.Data), " ")
				}
				n.RemoveChild(c)
				continue
			case removed[c.DataAtom], c.DataAtom == atom.Img && pixel(c):
				n.RemoveChild(c)
				continue
			case c.DataAtom == atom.A:
				for i, a := range c.Attr {
					if a.Key == "href" {
						c.Attr[i].Val = untracked(a.Val)
					}
				}
			}
		}
		if t := clean(c); title == "" {
			title = t
		}
	}
	return title
}

// pixel reports whether an image is a tracking pixel: 0 or 1 wide or high.
func pixel(n *html.Node) bool {
	for _, a := range n.Attr {
		if (a.Key == "width" || a.Key == "height") && (a.Val == "0" || a.Val == "1" || a.Val == "1px" || a.Val == "0px") {
			return true
		}
	}
	return false
}

// untracked removes tracking parameters from a link.
func untracked(href string) string {
	u, err := url.Parse(href)
	if err != nil || u.RawQuery == "" {
		return href
	}
	q := u.Query()
	changed := false
	for k := range q {
		for _, p := range trackingParams {
			if strings.HasPrefix(strings.ToLower(k), p) {
				q.Del(k)
				changed = true
			}
		}
	}
	if !changed {
		return href
	}
	u.RawQuery = q.Encode()
	return u.String()
}
