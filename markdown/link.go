package markdown

import (
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// LinkKind is the syntax a link was written in.
type LinkKind string

// Link kinds.
const (
	LinkWiki        LinkKind = "wiki"        // [[target#heading|label]]
	LinkEmbed       LinkKind = "embed"       // ![[target]]
	LinkMarkdown    LinkKind = "markdown"    // [label](path.md#fragment) or ![alt](image.png)
	LinkFrontmatter LinkKind = "frontmatter" // "[[target]]" in a frontmatter string value
)

// Link is one reference from a page to a page, a heading, a block or an
// attachment.
//
// Wikilinks: Target is the text before the first '#', trimmed, with a
// trailing ".md" removed; Heading is the text after '#' (chained headings
// "a#b" kept whole), Block the id after "#^"; Label the text after the first
// '|' or "\|" (the escaped pipe Obsidian requires inside tables). "[[#h]]"
// and "[[#^b]]" have an empty Target: they point into the same page. A
// target starting with "./", "../" or "/" names a file by path: Path is then
// set, relative to the page's folder or, with "/", to the vault root.
//
// Markdown links to local files ("[label](dir/My%20Note.md#Part)",
// "![alt](<img 1.png>)"): the destination is percent-decoded; Target is the
// decoded path without ".md" and Heading (or Block, for "#^id") the decoded
// fragment; Path is the destination resolved against the page's folder, or
// against the vault root when it starts with '/'; a "?query" is dropped.
// Destinations with a URL scheme ("https:", "mailto:", "obsidian:") or a
// host ("//example.org") are not links. A bare "#fragment" is a same-page
// link with an empty Target and Path.
//
// Frontmatter links are the wikilinks and embeds inside frontmatter string
// values at any depth, quoted as Obsidian's properties require: an unquoted
// [[x]] is a YAML list, not a link.
//
// No link is found in fenced or indented code, code spans, HTML comments or
// "%%" comments. Escapes reports a relative path that climbs above the vault
// root ("../" too often); Path is then "".
type Link struct {
	Kind    LinkKind `json:"kind"`
	Target  string   `json:"target,omitempty"`
	Heading string   `json:"heading,omitempty"`
	Block   string   `json:"block,omitempty"`
	Label   string   `json:"label,omitempty"`
	Embed   bool     `json:"embed,omitempty"`
	Path    string   `json:"path,omitempty"`
	Escapes bool     `json:"escapes,omitempty"`
	// Property is the top-level frontmatter key of a frontmatter link.
	Property string `json:"property,omitempty"`
	// Raw is the link exactly as written ("![[Note.md#Part|see]]"); for a
	// frontmatter link, the wikilink inside the string value.
	Raw string `json:"raw"`
	// Line and Col (1-based, Col in bytes) and Offset (0-based, in bytes)
	// locate Raw in the source. For a frontmatter link they locate the
	// start of the line holding the value.
	Line   int `json:"line"`
	Col    int `json:"col"`
	Offset int `json:"offset"`
}

// SamePage reports whether l points into the page that holds it.
func (l Link) SamePage() bool {
	return l.Target == "" && l.Path == "" && !l.Escapes
}

// maxWikilink bounds the text between "[[" and "]]"; longer is not a link.
const maxWikilink = 4096

// wikilink parses the inside of "[[...]]". ok is false when it names
// nothing (empty, or only a '|').
func wikilink(inner string, pagePath string) (l Link, ok bool) {
	dest := inner
	if i := strings.IndexByte(inner, '|'); i >= 0 {
		dest, l.Label = inner[:i], strings.TrimSpace(inner[i+1:])
		dest = strings.TrimSuffix(dest, `\`)
	}
	target, frag, hasFrag := strings.Cut(dest, "#")
	target = strings.TrimSpace(target)
	if hasFrag {
		setFragment(&l, strings.TrimSpace(frag))
	}
	if target == "" && l.Heading == "" && l.Block == "" {
		return l, false
	}
	l.Target = trimMD(target)
	if isExplicitPath(target) {
		l.Path, l.Escapes = joinPath(pagePath, target)
	}
	return l, true
}

func setFragment(l *Link, frag string) {
	if b, ok := strings.CutPrefix(frag, "^"); ok {
		l.Block = b
		return
	}
	l.Heading = frag
}

// isExplicitPath reports whether a wikilink target names a file by a
// relative ("./", "../") or rooted ("/") path rather than by name.
func isExplicitPath(t string) bool {
	return strings.HasPrefix(t, "/") || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") || t == "." || t == ".."
}

// joinPath resolves dest against the folder of pagePath (or the vault root
// when dest starts with '/') and cleans it. escapes reports a result above
// the vault root.
func joinPath(pagePath, dest string) (p string, escapes bool) {
	if rooted, ok := strings.CutPrefix(dest, "/"); ok {
		dest = rooted
	} else if i := strings.LastIndexByte(pagePath, '/'); i >= 0 {
		dest = pagePath[:i+1] + dest
	}
	if isClean(dest) {
		return dest, false
	}
	if climbs(dest) {
		return "", true
	}
	p = strings.TrimPrefix(path.Clean("/"+dest), "/")
	if p == "." {
		return "", false
	}
	return p, false
}

// isClean reports whether p has no empty, "." or ".." segment.
func isClean(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// climbs reports whether the relative path p goes above its starting
// folder at some point.
func climbs(p string) bool {
	depth := 0
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// markdownLink turns a raw Markdown destination into a link, or ok=false
// for external URLs and empty destinations.
func markdownLink(rawDest, label string, embed bool, pagePath string) (l Link, ok bool) {
	if rawDest == "" || hasScheme(rawDest) || strings.HasPrefix(rawDest, "//") {
		return l, false
	}
	dest, frag, hasFrag := strings.Cut(rawDest, "#")
	dest, _, _ = strings.Cut(dest, "?") // "x.md?plain=1": a query names no other file
	dest = unescapeDest(dest)
	if hasFrag {
		setFragment(&l, unescapeDest(frag))
	}
	if dest == "" {
		if l.Heading == "" && l.Block == "" {
			return l, false
		}
		l.Kind, l.Label, l.Embed = LinkMarkdown, label, embed
		return l, true
	}
	l.Kind, l.Label, l.Embed = LinkMarkdown, label, embed
	l.Target = trimMD(dest)
	l.Path, l.Escapes = joinPath(pagePath, dest)
	return l, true
}

// hasScheme reports whether s starts with a URL scheme: a letter, then
// letters, digits, '+', '-' or '.', 2 to 32 in all, then ':'. One letter is
// a Windows drive, not a scheme.
func hasScheme(s string) bool {
	for i := 0; i < len(s) && i <= 32; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i >= 2:
			return true
		default:
			return false
		}
	}
	return false
}

// unescapeDest removes backslash escapes and percent-decodes; a malformed
// percent escape, or one that decodes to invalid UTF-8 or NUL, leaves the
// text as written.
func unescapeDest(s string) string {
	if strings.IndexByte(s, '\\') >= 0 {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) && isPunct(s[i+1]) {
				i++
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	if strings.IndexByte(s, '%') >= 0 {
		if d, err := url.PathUnescape(s); err == nil && utf8.ValidString(d) && strings.IndexByte(d, 0) < 0 {
			s = d
		}
	}
	return s
}

// isPunct reports ASCII punctuation, the characters a backslash escapes.
func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
