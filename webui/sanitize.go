package webui

import (
	"bytes"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// sanitize returns the HTML goldmark wrote for a page with only what a
// page may hold: the elements Markdown renders to, each with the few
// attributes cairn gives it; links and images to http, https, mailto or
// relative addresses; every link with an address rel="nofollow", and a
// link to another site opening apart (target="_blank", rel="nofollow
// noopener"); every element it writes closed. Everything else goes: other
// elements' tags (their text stays, escaped), script, style and the like
// with their content, comments, doctypes and every other attribute.
//
// goldmark leaves a page's raw HTML out already and drops links to
// javascript: and the like; this is the second wall, and it keeps what
// bluemonday's policy for user content, with cairn's classes and
// anchors, kept of goldmark's output (TestSanitize_AsBluemonday). It is
// written here, over x/net/html's tokenizer, rather than with bluemonday,
// because a linked package's initialisers run at the start of every
// command: bluemonday's (its CSS tables and regular expressions, about
// 1 MB of allocations) made the collector run before main and cost a
// quarter of a cold `cairn` command's start.
func sanitize(src []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(src))
	z := html.NewTokenizer(bytes.NewReader(src))
	// The elements open: those written, to be closed, and those dropped,
	// whose end tags are dropped too. Every element written is closed,
	// so nothing in a page opens around what follows it (a link or a
	// table left open would take in the reader's own links).
	type open struct {
		tag     string
		written bool
	}
	var stack []open
	// closeTo closes the elements open from the i-th on, innermost first.
	closeTo := func(i int) {
		for j := len(stack) - 1; j >= i; j-- {
			if stack[j].written {
				out.WriteString("</" + stack[j].tag + ">")
			}
		}
		stack = stack[:i]
	}
	var dropping []string // the elements dropped with their content, open
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken: // the end (the reader is memory: no other error)
			closeTo(0)
			return out.Bytes()
		case html.TextToken:
			if len(dropping) == 0 {
				out.WriteString(html.EscapeString(string(z.Text())))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if dropsContent(tok.Data) {
				// Self-closing, an element of raw text is still open
				// (the tokenizer, as a browser, reads raw text to its
				// end tag); another has no content.
				if tt == html.StartTagToken || rawText(tok.Data) {
					dropping = append(dropping, tok.Data)
				}
				continue
			}
			if len(dropping) > 0 {
				continue
			}
			attrs, ok := pageAttrs(tok.Data, tok.Attr)
			void := voidElement(tok.Data)
			switch {
			case !ok && !void && tt == html.StartTagToken:
				stack = append(stack, open{tag: tok.Data})
			case !ok:
			case void:
				tok.Attr = attrs
				out.WriteString(tok.String())
			default:
				// A self-closing element that is not void is open in a
				// browser: it is closed here.
				tok.Type, tok.Attr = html.StartTagToken, attrs
				out.WriteString(tok.String())
				if tt == html.SelfClosingTagToken {
					out.WriteString("</" + tok.Data + ">")
				} else {
					stack = append(stack, open{tag: tok.Data, written: true})
				}
			}
		case html.EndTagToken:
			tok := z.Token()
			if n := len(dropping); n > 0 {
				if dropping[n-1] == tok.Data {
					dropping = dropping[:n-1]
				}
				continue
			}
			// The end tag closes the latest element of its name that is
			// open, and those opened inside it; one of no open element
			// is dropped.
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].tag == tok.Data {
					closeTo(i)
					break
				}
			}
		}
		// Comments and doctypes are left out.
	}
}

// voidElement reports whether tag has no content and no end tag.
func voidElement(tag string) bool {
	switch tag {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr":
		return true
	}
	return false
}

// dropsContent reports whether an element goes with all it holds: its
// content is code, style, or a document of its own.
func dropsContent(tag string) bool {
	switch tag {
	case "frameset", "object", "template", "svg", "math":
		return true
	}
	return rawText(tag)
}

// rawText reports whether the content of an element of tag is read as
// text up to its end tag, as x/net/html's tokenizer and browsers do.
func rawText(tag string) bool {
	switch tag {
	case "script", "style", "iframe", "noembed", "noframes", "noscript", "title", "textarea", "xmp", "plaintext":
		return true
	}
	return false
}

// pageAttrs returns, of an element of tag with attrs, the attributes a
// page's rendering keeps, with a link's rel and target added, and whether
// the element itself is kept: a page holds the elements Markdown renders
// to, a link only with an address or a title, an image only with one of
// its attributes.
func pageAttrs(tag string, attrs []html.Attribute) ([]html.Attribute, bool) {
	var kept []html.Attribute
	switch tag {
	case "p", "blockquote", "pre", "code", "ul", "ol", "li", "hr", "br", "em", "strong", "del",
		"table", "thead", "tbody", "tr", "th", "td":
		return nil, true
	case "h1", "h2", "h3", "h4", "h5", "h6":
		for _, a := range attrs {
			if a.Key == "id" && headingAnchor(a.Val) {
				kept = append(kept, a)
			}
		}
		return kept, true
	case "img":
		for _, a := range attrs {
			switch a.Key {
			case "src":
				if u, ok := safeURL(a.Val); ok {
					a.Val = u.String()
					kept = append(kept, a)
				}
			case "alt", "title":
				if paragraphText(a.Val) {
					kept = append(kept, a)
				}
			}
		}
		return kept, len(kept) > 0
	case "a":
		var href *url.URL
		for _, a := range attrs {
			switch a.Key {
			case "href":
				if u, ok := safeURL(a.Val); ok {
					a.Val, href = u.String(), u
					kept = append(kept, a)
				}
			case "title":
				kept = append(kept, a)
			case "class":
				if linkClasses(a.Val) {
					kept = append(kept, a)
				}
			}
		}
		switch {
		case href == nil:
		case href.Host != "":
			kept = append(kept, html.Attribute{Key: "rel", Val: "nofollow noopener"}, html.Attribute{Key: "target", Val: "_blank"})
		default:
			kept = append(kept, html.Attribute{Key: "rel", Val: "nofollow"})
		}
		return kept, len(kept) > 0
	}
	return nil, false
}

// safeURL parses an address a page's link or image may have: relative,
// or to http, https or mailto, with no white space inside, and not empty
// once parsed ("#" is).
func safeURL(raw string) (*url.URL, bool) {
	raw = strings.TrimSpace(raw)
	if strings.ContainsAny(raw, " \t\n") {
		return nil, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.String() == "" {
		return nil, false
	}
	switch u.Scheme {
	case "", "http", "https", "mailto":
		return u, true
	}
	return nil, false
}

// headingAnchor reports whether id is an anchor cairn gives a heading:
// "h-" and the heading's slug.
func headingAnchor(id string) bool {
	rest, ok := strings.CutPrefix(id, "h-")
	return ok && strings.IndexFunc(rest, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsNumber(r) && r != '_' && r != '-'
	}) < 0
}

// linkClasses reports whether class names only the kinds of link cairn
// marks: wikilink, embed, broken, ambiguous.
func linkClasses(class string) bool {
	if class == "" {
		return false
	}
	for c := range strings.SplitSeq(class, " ") {
		switch c {
		case "wikilink", "embed", "broken", "ambiguous":
		default:
			return false
		}
	}
	return true
}

// paragraphText reports whether s is plain text an image's alt or title
// may be: letters, numbers, ASCII white space and -_',[]!./\().
func paragraphText(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !strings.ContainsRune("\t\n\f\r -_',[]!./\\()", r)
	}) < 0
}
