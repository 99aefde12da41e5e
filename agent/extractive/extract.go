package extractive

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"cairn"
	"cairn/agent"
	"cairn/markdown"
)

// PageRef is an existing page the summary may link to.
type PageRef struct {
	Path    string // vault path, e.g. "entities/johannes-gutenberg.md"
	Title   string
	Aliases []string
	Type    string // frontmatter type, may be ""
}

// Input is what the extractive agent reads.
type Input struct {
	Source agent.SourceDoc
	Pages  []PageRef // every page of the vault (may be 100k)
	// Index is the content of the root index.md; nil when the vault has
	// none.
	Index []byte
	// SummariesIndex is the content of summaries/index.md; nil when
	// absent. It is used only when Index is nil.
	SummariesIndex []byte
	Date           string // "YYYY-MM-DD", written into the page
	// Taken reports whether a vault path already exists (case-insensitively).
	// Nil means no path is taken.
	Taken func(path string) bool
	// Sources are the vault paths of the files under raw/ on the base the
	// summary is written on (the source's own path among them or not): a
	// slug another of them would pick is not the source's to take.
	Sources []string
}

// Output is what the extractive agent writes.
type Output struct {
	Title string // the source's title
	Path  string // the new summary page, "summaries/<slug>.md"
	Page  []byte // its content
	// Files are every file to write: the summary page, and index.md or
	// summaries/index.md.
	Files    map[string][]byte
	Passages []string // the key passages, in document order, as plain text
	Terms    []string // the key terms, best first
	Links    []string // paths of the existing pages the summary links to
	Summary  string   // one paragraph saying what was done, for the log and the review
}

// Limits of what the summary shows.
const (
	exMaxPassageRunes     = 400 // a longer passage is cut at a word boundary, with "…"
	exMaxDescriptionRunes = 120 // the index line's description, likewise
	exMaxTitleRunes       = 200 // a longer title is cut, likewise
	exMaxSlugBytes        = 60  // a longer slug is cut at a '-'
	exMaxSlugTries        = 1000
	exMaxSummaryLinks     = 6 // titles named in Summary; the rest are counted
)

const exHintSource = "The extractive agent summarizes UTF-8 Markdown (.md) or plain text (.txt) in raw/; fix the file or pick another source."

// Extract writes the summary of one source without a language model: it
// quotes the sentences TextRank ranks most central, names the key terms,
// links the existing pages whose titles or aliases the source mentions,
// and catalogues the summary in index.md, or in summaries/index.md when
// the vault has no index.md. The result depends on its input only, and
// the source is treated as data throughout: nothing quoted from it can
// become a link, an embed, a heading, HTML or code, and it never decides
// which files are written.
//
// Errors have code EINVALID for bad input: a source path outside raw/, a
// date not in YYYY-MM-DD form, a source that is empty, not UTF-8, holds
// NUL bytes or has no sentences. The code is ECONFLICT when
// summaries/<slug>-<hash>.md and its numbered variants up to -1000 are all
// taken (exPickSlug says how the slug is picked).
func Extract(in Input) (*Output, error) {
	src := in.Source
	if err := exValidate(in); err != nil {
		return nil, err
	}
	data := bytes.TrimPrefix(src.Data, []byte("\uFEFF"))
	isMarkdown := exIsMarkdown(src.Path) || src.Converted // HTML and PDF come as Markdown

	var title string
	var blocks []exBlock
	if isMarkdown {
		title = exMarkdownTitle(src.Path, data)
		blocks = exBlocks(data)
	} else {
		line := -1
		title, line = exPlainTitle(data)
		blocks = exPlainBlocks(data, line)
		if title != "" && exCapitals(title) {
			title = exRecase(title, blocks)
		}
	}
	if title == "" {
		title = exHumanize(src.Path)
	}

	var sents []string
	var sentToks, units [][]trToken
	// A PDF's text comes a page under each "Page N" heading: a passage
	// quoted from it cites its page.
	pdf := strings.EqualFold(path.Ext(src.Path), ".pdf") && src.Converted
	page, pages := "", []string(nil)
	for _, b := range blocks {
		if b.heading {
			if n, ok := strings.CutPrefix(b.text, "Page "); pdf && ok {
				page = n
				continue
			}
			units = append(units, trTokenize(b.text))
			continue
		}
		for _, s := range trSentences(b.text) {
			if toks := trTokenize(s); len(toks) > 0 {
				sents = append(sents, s)
				sentToks = append(sentToks, toks)
				pages = append(pages, page)
			}
		}
	}
	if len(sents) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "extract %s: the source has no sentences to quote", src.Path).
			WithHint("The extractive agent quotes prose: headings, code, tables and HTML are not quoted. Add text to the source, or summarize it by hand.")
	}

	scores := trRankSentences(sentToks)
	chosen := trChoose(sentToks, scores, trPassageCount(len(sents)))
	top := chosen[0]
	slices.Sort(chosen)
	out := &Output{Title: title}
	for _, i := range chosen {
		passage := exShorten(sents[i], exMaxPassageRunes)
		if pages[i] != "" {
			passage += " (p. " + pages[i] + ")"
		}
		out.Passages = append(out.Passages, passage)
	}
	out.Terms = trKeywords(sentToks)
	links := exLinks(append(units, sentToks...), in.Pages)
	for _, l := range links {
		out.Links = append(out.Links, l.page.Path)
	}

	slug, err := exPickSlug(title, src, in.Taken, in.Sources)
	if err != nil {
		return nil, err
	}
	out.Path = "summaries/" + slug + ".md"
	out.Page = exRenderPage(title, src.Path, in.Date, out.Passages, out.Terms, links)

	line := "- [[summaries/" + slug + "|" + title + "]] — " + exEscape(exShorten(sents[top], exMaxDescriptionRunes))
	out.Files = map[string][]byte{out.Path: out.Page}
	var where string
	switch {
	case in.Index != nil:
		index, added := exAddToIndex(in.Index, line)
		out.Files["index.md"] = index
		where = "added it to index.md"
		if added {
			where = "added it to a new " + exSummariesHeading + " section of index.md"
		}
	case in.SummariesIndex != nil:
		out.Files["summaries/index.md"] = exAddToSummariesIndex(in.SummariesIndex, line)
		where = "added it to summaries/index.md"
	default:
		out.Files["summaries/index.md"] = exAddToSummariesIndex(nil, line)
		where = "created summaries/index.md to list it"
	}
	out.Summary = exSummary(out, src.Path, links, where)
	return out, nil
}

// exValidate checks what Extract is given.
func exValidate(in Input) error {
	p := in.Source.Path
	clean, err := cairn.CleanPath(p)
	if err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	if clean != p || !strings.HasPrefix(p, "raw/") {
		return cairn.Errorf(cairn.EINVALID, "extract %s: a source must be a file in raw/", p).WithHint(exHintSource)
	}
	if _, err := time.Parse(time.DateOnly, in.Date); err != nil {
		return cairn.Errorf(cairn.EINVALID, "extract %s: the date %q is not YYYY-MM-DD", p, in.Date).WithHint("Pass today's date, e.g. 2026-10-10.")
	}
	data := in.Source.Data
	switch {
	case !utf8.Valid(data):
		return cairn.Errorf(cairn.EINVALID, "extract %s: the source is not valid UTF-8", p).WithHint(exHintSource)
	case bytes.IndexByte(data, 0) >= 0:
		return cairn.Errorf(cairn.EINVALID, "extract %s: the source contains NUL bytes (a binary file?)", p).WithHint(exHintSource)
	case len(bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\uFEFF")))) == 0:
		return cairn.Errorf(cairn.EINVALID, "extract %s: the source is empty", p).WithHint(exHintSource)
	}
	return nil
}

// exIsMarkdown reports whether a source is Markdown; anything else is
// read as plain text.
func exIsMarkdown(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return true
	}
	return false
}

// exMarkdownTitle is a Markdown source's frontmatter title, else its
// first level-1 heading, else "".
func exMarkdownTitle(p string, data []byte) string {
	page := markdown.Parse(p, data)
	if page.TitleSource == markdown.TitleFromFilename {
		return ""
	}
	return exCleanTitle(page.Title)
}

// exPlainTitle is a plain-text source's first non-empty line, when it is
// at most 100 characters and does not end with a period, and the line's
// number (0-based); else "" and -1.
func exPlainTitle(data []byte) (string, int) {
	n := 0
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" {
			n++
			continue
		}
		if utf8.RuneCountInString(line) > 100 || strings.HasSuffix(line, ".") {
			return "", -1
		}
		if t := exCleanTitle(line); t != "" {
			return t, n
		}
		return "", -1
	}
	return "", -1
}

// exCleanTitle turns a title into plain text that is safe in a heading
// and as a wikilink label: no link syntax, brackets or pipes.
func exCleanTitle(s string) string {
	s = exInline(s)
	s = exTitleReplacer.Replace(s)
	for strings.Contains(s, "%%") {
		s = strings.ReplaceAll(s, "%%", "%")
	}
	return exShorten(exClean(s), exMaxTitleRunes)
}

// exLabel is a page title made safe as a wikilink label.
func exLabel(s string) string {
	return strings.TrimSpace(exLabelReplacer.Replace(s))
}

var (
	exLabelReplacer = strings.NewReplacer("[", "", "]", "", "|", "/", "\n", " ", "\r", " ")
	exTitleReplacer = strings.NewReplacer("[", "", "]", "", "|", "/")
)

// exCapitals reports a text of at least two letters, none of them lower
// case: a title or heading in capitals.
func exCapitals(s string) bool {
	letters := 0
	for _, r := range s {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 2
}

// exRecase turns an all-capitals title into sentence case, each word
// spelled the way the text spells it most often ("PRINTING IN VENICE" →
// "Printing in Venice"); a word the text lacks is lower-cased.
func exRecase(title string, blocks []exBlock) string {
	forms := make(map[string]map[string]int)
	for _, b := range blocks {
		if b.heading {
			continue
		}
		trEachWord(b.text, func(start, end int) {
			w := b.text[start:end]
			lower := strings.ToLower(w)
			if forms[lower] == nil {
				forms[lower] = make(map[string]int)
			}
			forms[lower][w]++
		})
	}
	var out strings.Builder
	last := 0
	first := true
	trEachWord(title, func(start, end int) {
		out.WriteString(title[last:start])
		lower := strings.ToLower(title[start:end])
		best, n := lower, 0
		for f, c := range forms[lower] {
			if c > n || c == n && f > best { // lower case sorts last: it wins ties
				best, n = f, c
			}
		}
		if first {
			r, size := utf8.DecodeRuneInString(best)
			best = string(unicode.ToUpper(r)) + best[size:]
			first = false
		}
		out.WriteString(best)
		last = end
	})
	out.WriteString(title[last:])
	return out.String()
}

// exHumanize makes a title of a file name: "venetian-presses.txt" →
// "Venetian presses".
func exHumanize(p string) string {
	stem := strings.TrimSuffix(path.Base(p), path.Ext(p))
	s := exCleanTitle(strings.NewReplacer("-", " ", "_", " ").Replace(stem))
	if s == "" {
		return "Source"
	}
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// slugify makes a file name of a title: lower case, diacritics removed,
// every run of other characters than letters and digits one '-', at most
// exMaxSlugBytes cut at a '-'.
func slugify(s string) string {
	t := transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	if folded, _, err := transform.String(t, s); err == nil {
		s = folded
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
	}
	slug := b.String()
	if len(slug) <= exMaxSlugBytes {
		return slug
	}
	if slug[exMaxSlugBytes] == '-' {
		return slug[:exMaxSlugBytes]
	}
	if i := strings.LastIndexByte(slug[:exMaxSlugBytes], '-'); i > 0 {
		return slug[:i]
	}
	cut := exMaxSlugBytes
	for cut > 0 && !utf8.RuneStart(slug[cut]) {
		cut--
	}
	return slug[:cut]
}

// exPickSlug picks the slug of a source's summary. It is the slug of the
// source's file name (as Eva vaults name summaries: raw/pamphlet-wars.md →
// summaries/pamphlet-wars.md; short, and stable when the title is
// reworded) when that summary is free and no other file under raw/ on the
// base has a name of the same slug. Otherwise the slug gets the first 8
// hex digits of the source's id (the SHA-256 of its content), as a raw
// file whose name is taken does: summaries/notes-1a2b3c4d.md, numbered
// only if that too is taken. A file name without letters or digits always
// takes the hash, after the title's slug (or "source").
//
// So two jobs running at once never pick the same summary, even on the
// same base: a job reads main's head after its source was stored, so of
// two sources whose names share a slug, the one whose job started later
// finds the other's raw file on its base and takes its hash; and distinct
// contents have distinct hashes.
func exPickSlug(title string, src agent.SourceDoc, taken func(string) bool, sources []string) (string, error) {
	sum := sha256.Sum256(src.Data)
	hash := hex.EncodeToString(sum[:4])
	slug := exStemSlug(src.Path)
	if slug == "" {
		return exFreeSlug(cmp.Or(slugify(title), "source")+"-"+hash, taken)
	}
	shared := slices.ContainsFunc(sources, func(p string) bool { return p != src.Path && exStemSlug(p) == slug })
	if !shared && slug != "index" && (taken == nil || !taken("summaries/"+slug+".md")) {
		return slug, nil
	}
	return exFreeSlug(slug+"-"+hash, taken)
}

// exStemSlug is the slug of a raw file's name without its extension, and
// without the hash a file whose name was taken got (raw/notes.1a2b3c4d.md
// → "notes"); "" when the name has no letters or digits.
func exStemSlug(source string) string {
	stem := strings.TrimSuffix(path.Base(source), path.Ext(source))
	if i := strings.LastIndexByte(stem, '.'); i > 0 && len(stem)-i-1 == 8 && exIsHex(stem[i+1:]) {
		stem = stem[:i]
	}
	return slugify(stem)
}

func exIsHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// exFreeSlug returns slug, or slug-2, slug-3, ..., the first whose
// summary path is not taken. "index" is always taken: summaries/index.md
// is the catalogue.
func exFreeSlug(slug string, taken func(string) bool) (string, error) {
	for n := 1; n <= exMaxSlugTries; n++ {
		s := slug
		if n > 1 {
			s = fmt.Sprintf("%s-%d", slug, n)
		}
		if s == "index" || taken != nil && taken("summaries/"+s+".md") {
			continue
		}
		return s, nil
	}
	return "", cairn.Errorf(cairn.ECONFLICT, "extract: summaries/%s.md and %d numbered variants are taken", slug, exMaxSlugTries-1).
		WithHint("Rename the source, or remove old summaries.")
}

// exRenderPage writes the summary page.
func exRenderPage(title, source, date string, passages, terms []string, links []exLink) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(exFrontmatter(title, source, date, terms))
	b.WriteString("---\n\n# " + exEscape(title) + "\n\n")
	b.WriteString("An extractive summary of " + exCodeSpan(source) + ": passages quoted from the source, chosen by TextRank. ")
	if len(passages) == 1 {
		b.WriteString("The passage below is the sentence most central to the text")
	} else {
		fmt.Fprintf(&b, "The %d passages below are the sentences most central to the text, in the order the source gives them", len(passages))
	}
	if len(terms) > 0 {
		b.WriteString(", and the key terms are its most central words and phrases")
	}
	b.WriteString(". Nothing is paraphrased: check the source before relying on a figure.\n\n")
	b.WriteString("## Key passages\n\n")
	for _, p := range passages {
		b.WriteString("> " + exEscape(p) + "\n\n")
	}
	if len(terms) > 0 {
		escaped := make([]string, len(terms))
		for i, t := range terms {
			escaped[i] = exEscape(t)
		}
		b.WriteString("## Key terms\n\n" + strings.Join(escaped, " · ") + "\n\n")
	}
	if len(links) > 0 {
		b.WriteString("## Related pages\n\n")
		for _, l := range links {
			b.WriteString("- [[" + strings.TrimSuffix(l.page.Path, path.Ext(l.page.Path)) + "|" + exLabel(l.page.Title) + "]]\n")
		}
		b.WriteString("\n")
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

// exFrontmatter is the YAML of a summary page, every string quoted as
// YAML needs so that it reads back as written.
func exFrontmatter(title, source, date string, terms []string) []byte {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, t := range terms {
		seq.Content = append(seq.Content, str(t))
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		str("title"), str(title),
		str("type"), str("summary"),
		str("source"), str(source),
		str("date"), {Kind: yaml.ScalarNode, Value: date}, // a date, as the vault's pages write it
		str("updated"), {Kind: yaml.ScalarNode, Value: date}, // Eva's contract asks every page for it
		str("terms"), seq,
	}}
	out, err := yaml.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("agent: marshal frontmatter: %v", err)) // strings always marshal
	}
	return out
}

// exCodeSpan writes s as a code span, with a backtick run longer than any
// in s.
func exCodeSpan(s string) string {
	n := 1
	for run := strings.Repeat("`", n); strings.Contains(s, run); run += "`" {
		n++
	}
	fence := strings.Repeat("`", n)
	if n > 1 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// exSummary is the paragraph that reports what Extract did.
func exSummary(out *Output, source string, links []exLink, where string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Created %s, an extractive summary of %s: %s and %s", out.Path, source,
		exPlural(len(out.Passages), "key passage", "key passages"), exPlural(len(out.Terms), "term", "terms"))
	switch {
	case len(links) == 0:
		b.WriteString(", with no links to existing pages")
	default:
		names := make([]string, 0, exMaxSummaryLinks+1)
		for _, l := range links[:min(len(links), exMaxSummaryLinks)] {
			names = append(names, exLabel(exClean(l.page.Title)))
		}
		if rest := len(links) - len(names); rest > 0 {
			names = append(names, exPlural(rest, "other page", "other pages"))
		}
		b.WriteString(", linking " + exJoin(names))
	}
	b.WriteString("; " + where + ".")
	return b.String()
}

func exPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// exJoin joins names as English does: "a", "a and b", "a, b and c".
func exJoin(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// exShorten cuts s to at most max characters at a word boundary, ending
// it with "…".
func exShorten(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == max-1 {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	if i := strings.LastIndexByte(head, ' '); i > 0 && s[cut] != ' ' {
		head = head[:i]
	}
	return strings.TrimRight(head, " ,;:-–—") + "…"
}

// exEscape makes plain text inert Markdown on one line: it renders as the
// same text and can create no link, embed, tag, HTML, code, math, comment,
// block id or block structure. Brackets, backticks, '<', '$', '^' and
// '\' are backslash-escaped, '#' and '&' where they would start a tag or
// an entity; a run of '%' (Obsidian's comment marker) becomes one '%'; and
// a character that could open a block at the start of the line (a list
// marker, '>', '#', a table or a fence) is escaped.
func exEscape(s string) string {
	var b strings.Builder
	rest := s
	if j := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); j > 0 && (s[j] == '.' || s[j] == ')') {
		b.WriteString(s[:j] + "\\" + s[j:j+1]) // "1. x" would be a list
		rest = s[j+1:]
	} else if s != "" && strings.IndexByte("#>-+*=|~:!_%{}", s[0]) >= 0 {
		b.WriteString("\\" + s[:1])
		rest = s[1:]
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:len(s)-len(rest)])
	for i, r := range rest {
		next, _ := utf8.DecodeRuneInString(rest[i+utf8.RuneLen(r):])
		switch {
		case strings.ContainsRune("\\[]`<$^", r):
			b.WriteByte('\\')
		case r == '%' && prev == '%':
			continue
		case r == '#' && (prev == utf8.RuneError || unicode.IsSpace(prev)):
			b.WriteByte('\\')
		case r == '&' && (next == '#' || unicode.IsLetter(next)):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}
