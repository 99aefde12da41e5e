package markdown

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits that keep Parse bounded on hostile input. Reaching one is reported
// as a Problem, never as a failure.
const (
	// MaxFrontmatterBytes is the largest frontmatter block Parse reads. A
	// larger one is malformed ("frontmatter too large") and ignored.
	MaxFrontmatterBytes = 256 << 10
	// MaxLinks is the most links one page yields; the rest are dropped
	// with a ProblemTruncated.
	MaxLinks = 100_000
	// MaxHeadings is the most headings one page yields (ProblemTruncated).
	MaxHeadings = 20_000
	// MaxBlockIDs is the most block ids one page yields (ProblemTruncated).
	MaxBlockIDs = 20_000
)

// TitleSource says where a page's Title came from.
type TitleSource string

// Title sources, in the order Parse tries them.
const (
	TitleFromFrontmatter TitleSource = "frontmatter" // a non-empty scalar `title` property
	TitleFromHeading     TitleSource = "heading"     // the first level-1 heading outside code
	TitleFromFilename    TitleSource = "filename"    // the file name without ".md"
)

// ProblemKind names a class of problem Parse found in a page.
type ProblemKind string

// Problem kinds. A page with problems still yields everything that could be
// derived from it.
const (
	// ProblemMalformedFrontmatter: the YAML does not parse, is not a
	// mapping, is too large, too deep or expands too far, or an opening
	// "---" line has no closing line. The frontmatter is then empty.
	ProblemMalformedFrontmatter ProblemKind = "malformed-frontmatter"
	// ProblemInvalidEncoding: the page is not valid UTF-8 or contains NUL
	// bytes. Strings derived from it have those bytes replaced by U+FFFD.
	ProblemInvalidEncoding ProblemKind = "invalid-encoding"
	// ProblemTruncated: the page has more links, headings or block ids
	// than the limits allow; the excess is dropped.
	ProblemTruncated ProblemKind = "truncated"
)

// Problem is one thing wrong with a page. Line is 1-based in the whole
// source, or 0 when the problem has no single line.
type Problem struct {
	Kind    ProblemKind `json:"kind"`
	Message string      `json:"message"`
	Line    int         `json:"line,omitempty"`
}

// Heading is one ATX ("## Text") or setext (underlined) heading outside
// code and comments.
type Heading struct {
	Level int    `json:"level"` // 1 to 6
	Text  string `json:"text"`  // as written, without the markers and closing #s
	// Slug is the GitHub-style anchor of the heading ("my-heading"),
	// made unique within the page by "-1", "-2" suffixes.
	Slug string `json:"slug"`
	Line int    `json:"line"` // 1-based, in the whole source
}

// Page is what Parse derives from one Markdown file. It is JSON-safe: the
// index stores it as is. Property names are matched exactly: "Title:" is an
// ordinary property, not the title.
type Page struct {
	// Path is the vault-relative path, as given to Parse.
	Path string `json:"path"`
	// ID is Path without its ".md" extension, unless the frontmatter sets a
	// non-empty scalar `id`.
	ID string `json:"id"`
	// Title is the frontmatter `title`, else the first level-1 heading,
	// else the file name without ".md"; never empty ("untitled" as a last
	// resort). TitleSource says which.
	Title       string      `json:"title"`
	TitleSource TitleSource `json:"title_source"`
	// Type is the frontmatter `type`, or "".
	Type string `json:"type,omitempty"`
	// Aliases come from the frontmatter `aliases` and `alias` properties:
	// a YAML list, or one string. An unquoted string is split on commas
	// (Eva's and older Obsidian's form, "aliases: AI, A.I."); a quoted one
	// is a single alias. Trimmed, empty ones dropped, duplicates removed.
	Aliases []string `json:"aliases,omitempty"`
	// Sources come from the frontmatter `source` (one string) and
	// `sources` (a list, or a string split on commas when unquoted, as
	// Eva writes "sources: raw/a.md, raw/b.md"), in that order.
	Sources []string `json:"sources,omitempty"`
	// Frontmatter holds every property, JSON-safe: nested maps have string
	// keys, timestamps are RFC 3339 strings (a bare date stays
	// "2006-01-02"), NaN and infinities are the strings ".nan", ".inf",
	// "-.inf". It is nil when the page has no or empty or malformed
	// frontmatter.
	Frontmatter map[string]any `json:"frontmatter,omitempty"`
	Headings    []Heading      `json:"headings,omitempty"`
	// BlockIDs are the ids of "^block-id" markers ending a line outside
	// code and comments, in order of appearance, without the caret.
	BlockIDs []string `json:"block_ids,omitempty"`
	// Links are the page's links in source order: frontmatter links first,
	// then the body's.
	Links    []Link    `json:"links,omitempty"`
	Problems []Problem `json:"problems,omitempty"`
	// BodyOffset is the byte offset in the source where the body begins,
	// after the frontmatter block and any byte order mark; BodyLine is its
	// 1-based line number.
	BodyOffset int `json:"body_offset"`
	BodyLine   int `json:"body_line"`
}

// Parse reads one page. It never fails and never panics: malformed YAML,
// invalid UTF-8 and oversized input are reported in Page.Problems and
// everything else is still derived. Time and memory are linear in len(src),
// within the limits above.
func Parse(path string, src []byte) *Page {
	p := &Page{Path: path}
	parts := Split(src)
	bodyStart := len(parts.Head) + len(parts.YAML) + len(parts.Tail)
	if !parts.Found && bytes.HasPrefix(src, bom) {
		bodyStart = len(bom)
	}
	p.BodyOffset = bodyStart
	p.BodyLine = 1 + bytes.Count(src[:bodyStart], newline)

	encodingOK := utf8.Valid(src) && bytes.IndexByte(src, 0) < 0
	if !encodingOK {
		p.problem(ProblemInvalidEncoding, encodingMessage(src), encodingLine(src))
	}

	var fm frontmatter
	switch {
	case parts.Found && len(parts.YAML) > MaxFrontmatterBytes:
		p.problem(ProblemMalformedFrontmatter,
			fmt.Sprintf("frontmatter too large: %d bytes; the limit is %d", len(parts.YAML), MaxFrontmatterBytes), 1)
	case parts.Found:
		fm = parseFrontmatter(fmSource{
			yaml:   parts.YAML,
			line:   1 + bytes.Count(parts.Head, newline),
			offset: len(parts.Head),
			path:   path,
		})
		if fm.err != "" {
			p.problem(ProblemMalformedFrontmatter, fm.err, fm.errLine)
		}
	case opensFrontmatter(src):
		p.problem(ProblemMalformedFrontmatter, "the opening '---' line has no closing '---' line; the block is read as body text", 1)
	}
	p.applyFrontmatter(&fm)

	s := scanner{src: src, page: p}
	s.scanBody(bodyStart, p.BodyLine)

	p.setIdentity()
	if !encodingOK {
		p.sanitize()
	}
	return p
}

var newline = []byte("\n")

func (p *Page) problem(kind ProblemKind, msg string, line int) {
	p.Problems = append(p.Problems, Problem{Kind: kind, Message: msg, Line: line})
}

// truncated records that a limit was reached.
func (p *Page) truncated(what string, limit int) {
	p.problem(ProblemTruncated, fmt.Sprintf("more than %d %s; the rest are ignored", limit, what), 0)
}

// opensFrontmatter reports whether src starts like a frontmatter block that
// Split could not close.
func opensFrontmatter(src []byte) bool {
	src = bytes.TrimPrefix(src, bom)
	line, next := cutLine(src)
	return isDelimiter(line, false) && next < len(src)
}

// applyFrontmatter copies the well-known properties out of fm.
func (p *Page) applyFrontmatter(fm *frontmatter) {
	if len(fm.values) == 0 {
		return
	}
	p.Frontmatter = fm.values
	p.Type = scalarText(fm.values["type"])
	for _, key := range [...]string{"aliases", "alias"} {
		p.Aliases = appendList(p.Aliases, fm.values[key], fm.plain[key])
	}
	p.Sources = appendList(p.Sources, fm.values["source"], false)
	p.Sources = appendList(p.Sources, fm.values["sources"], fm.plain["sources"])
	p.Links = append(p.Links, fm.links...)
}

// setIdentity fills ID and Title once the body's headings are known.
func (p *Page) setIdentity() {
	stem := p.Path
	if i := strings.LastIndexByte(stem, '/'); i >= 0 {
		stem = stem[i+1:]
	}
	stem = trimMD(stem)
	p.ID = scalarText(p.Frontmatter["id"])
	if p.ID == "" {
		p.ID = trimMD(p.Path)
		if p.ID == "" {
			p.ID = p.Path
		}
	}
	if t := scalarText(p.Frontmatter["title"]); t != "" {
		p.Title, p.TitleSource = t, TitleFromFrontmatter
		return
	}
	for _, h := range p.Headings {
		if h.Level == 1 && h.Text != "" {
			p.Title, p.TitleSource = h.Text, TitleFromHeading
			return
		}
	}
	p.Title, p.TitleSource = stem, TitleFromFilename
	if p.Title == "" {
		p.Title = "untitled"
	}
}

// trimMD strips a trailing ".md", in any case.
func trimMD(s string) string {
	if n := len(s); n >= 3 && strings.EqualFold(s[n-3:], ".md") {
		return s[:n-3]
	}
	return s
}

// scalarText returns a scalar property as trimmed text: strings as they
// are, numbers and booleans formatted (so "title: 1984" is a title), and ""
// for anything else.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// appendList appends the strings of a list property to dst: list items
// whole, a single string split on commas when split is set. Empty items and
// duplicates are dropped.
func appendList(dst []string, v any, split bool) []string {
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		for _, d := range dst {
			if d == s {
				return
			}
		}
		dst = append(dst, s)
	}
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			add(scalarText(item))
		}
	case string:
		if !split {
			add(v)
			break
		}
		for item := range strings.SplitSeq(v, ",") {
			add(item)
		}
	default:
		add(scalarText(v))
	}
	return dst
}

func encodingMessage(src []byte) string {
	if i := bytes.IndexByte(src, 0); i >= 0 && utf8.Valid(src) {
		return fmt.Sprintf("contains a NUL byte at offset %d", i)
	}
	return fmt.Sprintf("not valid UTF-8 at offset %d", invalidOffset(src))
}

// encodingLine is the 1-based line of the first NUL or invalid byte.
func encodingLine(src []byte) int {
	i := invalidOffset(src)
	if n := bytes.IndexByte(src, 0); n >= 0 && n < i {
		i = n
	}
	return 1 + bytes.Count(src[:i], newline)
}

func invalidOffset(src []byte) int {
	for i := 0; i < len(src); {
		if src[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(src)
}

// sanitize makes every string derived from the source valid UTF-8 without
// NUL, for a page with ProblemInvalidEncoding.
func (p *Page) sanitize() {
	p.Title = clean(p.Title)
	p.Type = clean(p.Type)
	for i := range p.Headings {
		h := &p.Headings[i]
		h.Text, h.Slug = clean(h.Text), clean(h.Slug)
	}
	for i, b := range p.BlockIDs {
		p.BlockIDs[i] = clean(b)
	}
	for i := range p.Links {
		l := &p.Links[i]
		l.Target, l.Heading, l.Block, l.Label = clean(l.Target), clean(l.Heading), clean(l.Block), clean(l.Label)
		l.Path, l.Raw = clean(l.Path), clean(l.Raw)
	}
}

func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
