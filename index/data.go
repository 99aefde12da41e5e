package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
)

// file is one vault file as the index sees it.
type file struct {
	id   int64
	path string
	kind lint.Kind
	blob cairn.Hash
	size int64
	page *markdown.Page // for pages
	// title and text are the page's words as full-text search indexes them;
	// words counts them both.
	title, text string
	words       int
}

// parse derives what the index stores about one file; with text, a page's
// words for the full text too, and their count.
func parse(e cairn.Entry, data []byte, text bool) *file {
	f := &file{path: e.Path, kind: lint.Classify(e.Path), blob: e.Blob, size: e.Size}
	if f.kind == lint.KindPage {
		f.page = markdown.Parse(e.Path, data)
		if !text {
			return f
		}
		f.text = ftsText(markdown.PlainText(data))
		f.title = ftsText(f.page.Title)
		f.words = wordCount(f.title) + wordCount(f.text)
	}
	return f
}

// keys returns what the file answers to when links are resolved.
func (f *file) keys() []markdown.Key {
	if f.page != nil {
		return markdown.ResolutionKeys(f.page)
	}
	return markdown.AttachmentKeys(f.path)
}

// Link kinds and statuses are stored as small numbers.
var (
	kindCodes   = map[markdown.LinkKind]int{markdown.LinkWiki: 1, markdown.LinkEmbed: 2, markdown.LinkMarkdown: 3, markdown.LinkFrontmatter: 4}
	kindNames   = map[int]markdown.LinkKind{1: markdown.LinkWiki, 2: markdown.LinkEmbed, 3: markdown.LinkMarkdown, 4: markdown.LinkFrontmatter}
	statusCodes = map[markdown.Status]int{markdown.StatusResolved: 1, markdown.StatusBroken: 2, markdown.StatusAmbiguous: 3}
	statusNames = map[int]markdown.Status{1: markdown.StatusResolved, 2: markdown.StatusBroken, 3: markdown.StatusAmbiguous}
)

// writer collects index rows and hands them to the storage in batches,
// many rows at a time: call flush before reading what was written.
// Statements that are not inserts go to the storage at once.
type writer struct {
	q StorageTx // nil for a bulk build's workers, which only collect rows
	// bulk holds every row until flush, which hands each table's rows over
	// in primary key order: a full build loads B-trees sequentially.
	bulk bool
	// delta, when set, collects the findings removed and added.
	delta *Delta

	files    table[FileRow]
	keys     table[KeyRow]
	cites    table[CiteRow]
	fields   table[FieldRow]
	links    table[LinkRow]
	linkKeys table[LinkKeyRow]
	findings table[FindingRow]
}

func newWriter(q StorageTx) *writer { return &writer{q: q} }

// table holds the rows of one table that are not written yet.
type table[T any] struct {
	rows []T
	// sorted is set while rows are in key order.
	sorted bool
}

// batchRows is the most rows held per table before they are written,
// outside a bulk build.
const batchRows = 100

// add holds a row and reports whether the table should be written now.
func (t *table[T]) add(r T, bulk bool) bool {
	t.rows, t.sorted = append(t.rows, r), false
	return len(t.rows) >= batchRows && !bulk
}

// sort puts the rows in key order.
func (t *table[T]) sort(cmp func(a, b T) int) {
	if !t.sorted {
		slices.SortFunc(t.rows, cmp)
		t.sorted = true
	}
}

// take moves the rows of other into t, merging sorted runs.
func (t *table[T]) take(other *table[T], cmp func(a, b T) int) {
	switch {
	case len(t.rows) == 0:
		t.rows, t.sorted = other.rows, other.sorted
	case t.sorted && other.sorted:
		t.rows = mergeRows(t.rows, other.rows, cmp)
	default:
		t.rows, t.sorted = append(t.rows, other.rows...), false
	}
}

// mergeRows merges two sorted runs of rows.
func mergeRows[T any](a, b []T, cmp func(a, b T) int) []T {
	out := make([]T, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if cmp(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// write hands t's rows to insert, in key order in a bulk build, and
// forgets them.
func write[T any](ctx context.Context, t *table[T], bulk bool, cmp func(a, b T) int, insert func(context.Context, []T) error) error {
	if len(t.rows) == 0 {
		return nil
	}
	if bulk {
		t.sort(cmp)
	}
	if err := insert(ctx, t.rows); err != nil {
		return err
	}
	clear(t.rows)
	t.rows, t.sorted = t.rows[:0], false
	return nil
}

// The tables' key orders.
func compareFiles(a, b FileRow) int { return cmp.Compare(a.ID, b.ID) }
func compareKeys(a, b KeyRow) int {
	return cmp.Or(strings.Compare(a.Value, b.Value), cmp.Compare(a.Step, b.Step), cmp.Compare(a.File, b.File))
}
func compareCites(a, b CiteRow) int {
	return cmp.Or(strings.Compare(a.Value, b.Value), cmp.Compare(a.File, b.File))
}
func compareLinks(a, b LinkRow) int {
	return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Ord, b.Ord))
}
func compareLinkKeys(a, b LinkKeyRow) int {
	return cmp.Or(cmp.Compare(a.Hash, b.Hash), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Ord, b.Ord))
}
func compareFindings(a, b FindingRow) int {
	x, y := &a.Finding, &b.Finding
	return cmp.Or(cmp.Compare(a.File, b.File), strings.Compare(x.Rule, y.Rule), strings.Compare(string(x.Severity), string(y.Severity)),
		strings.Compare(x.Subject, y.Subject), strings.Compare(x.Message, y.Message))
}

func (w *writer) writeFiles(ctx context.Context) error {
	return write(ctx, &w.files, w.bulk, compareFiles, w.q.InsertFiles)
}
func (w *writer) writeKeys(ctx context.Context) error {
	return write(ctx, &w.keys, w.bulk, compareKeys, w.q.InsertKeys)
}
func (w *writer) writeCites(ctx context.Context) error {
	return write(ctx, &w.cites, w.bulk, compareCites, w.q.InsertCites)
}
func (w *writer) writeFields(ctx context.Context) error {
	return write(ctx, &w.fields, w.bulk, compareFields, w.q.InsertFields)
}
func (w *writer) writeLinkRows(ctx context.Context) error {
	return write(ctx, &w.links, w.bulk, compareLinks, w.q.InsertLinks)
}
func (w *writer) writeLinkKeys(ctx context.Context) error {
	return write(ctx, &w.linkKeys, w.bulk, compareLinkKeys, w.q.InsertLinkKeys)
}
func (w *writer) writeFindingRows(ctx context.Context) error {
	return write(ctx, &w.findings, w.bulk, compareFindings, w.q.InsertFindings)
}

// sortAll sorts every table: bulk build workers sort their own rows, on
// every core, and take merges them.
func (w *writer) sortAll() {
	w.files.sort(compareFiles)
	w.keys.sort(compareKeys)
	w.cites.sort(compareCites)
	w.fields.sort(compareFields)
	w.links.sort(compareLinks)
	w.linkKeys.sort(compareLinkKeys)
	w.findings.sort(compareFindings)
}

// take moves the rows other collected (in bulk mode, without writing) into
// w.
func (w *writer) take(other *writer) {
	w.files.take(&other.files, compareFiles)
	w.keys.take(&other.keys, compareKeys)
	w.cites.take(&other.cites, compareCites)
	w.fields.take(&other.fields, compareFields)
	w.links.take(&other.links, compareLinks)
	w.linkKeys.take(&other.linkKeys, compareLinkKeys)
	w.findings.take(&other.findings, compareFindings)
}

// flush writes every held row.
func (w *writer) flush(ctx context.Context) error {
	for _, write := range []func(context.Context) error{
		w.writeFiles, w.writeKeys, w.writeCites, w.writeFields, w.writeLinkRows, w.writeLinkKeys, w.writeFindingRows,
	} {
		if err := write(ctx); err != nil {
			return err
		}
	}
	return nil
}

// jsonText is v as JSON; "" (none) when empty or when it cannot be
// written.
func jsonText(v any, empty bool) string {
	if empty {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// Headings are stored as [level, text] pairs; slugs follow from the texts.
func headingsJSON(hs []markdown.Heading) string {
	rows := make([][2]any, len(hs))
	for i, h := range hs {
		rows[i] = [2]any{h.Level, h.Text}
	}
	return jsonText(rows, len(hs) == 0)
}

func parseHeadings(s string) ([]markdown.Heading, error) {
	var rows [][2]json.RawMessage
	if err := json.Unmarshal([]byte(s), &rows); err != nil {
		return nil, err
	}
	hs := make([]markdown.Heading, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal(r[0], &hs[i].Level); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(r[1], &hs[i].Text); err != nil {
			return nil, err
		}
	}
	markdown.SetSlugs(hs)
	return hs, nil
}

var titleSources = map[markdown.TitleSource]int{markdown.TitleFromFrontmatter: 1, markdown.TitleFromHeading: 2, markdown.TitleFromFilename: 3}

// storedFrontmatter leaves out title and type when the columns hold them
// as the same strings; loadedFrontmatter puts them back.
func storedFrontmatter(p *markdown.Page) map[string]any {
	fm := p.Frontmatter
	title, dupTitle := fm["title"].(string)
	typ, dupType := fm["type"].(string)
	dupTitle = dupTitle && title == p.Title && p.TitleSource == markdown.TitleFromFrontmatter
	dupType = dupType && typ == p.Type
	if !dupTitle && !dupType {
		return fm
	}
	out := make(map[string]any, len(fm))
	for k, v := range fm {
		if k == "title" && dupTitle || k == "type" && dupType {
			continue
		}
		out[k] = v
	}
	return out
}

func loadedFrontmatter(p *markdown.Page) {
	_, hasTitle := p.Frontmatter["title"]
	_, hasType := p.Frontmatter["type"]
	if (hasTitle || p.TitleSource != markdown.TitleFromFrontmatter) && (hasType || p.Type == "") {
		return
	}
	if p.Frontmatter == nil {
		p.Frontmatter = map[string]any{}
	}
	if !hasTitle && p.TitleSource == markdown.TitleFromFrontmatter {
		p.Frontmatter["title"] = p.Title
	}
	if !hasType && p.Type != "" {
		p.Frontmatter["type"] = p.Type
	}
}

// fileRow returns the row of a file, unreachable and with no inbound
// links.
func fileRow(f *file) FileRow {
	r := FileRow{ID: f.id, Path: f.path, Kind: f.kind, Blob: f.blob, Size: f.size, Depth: unreachable}
	if p := f.page; p != nil {
		if p.ID != strings.TrimSuffix(p.Path, ".md") {
			r.PageID = p.ID
		}
		r.Title, r.TitleSource, r.Type = p.Title, titleSources[p.TitleSource], p.Type
		sfm := storedFrontmatter(p)
		r.Frontmatter, r.Aliases, r.Sources = jsonText(sfm, len(sfm) == 0), jsonText(p.Aliases, len(p.Aliases) == 0), jsonText(p.Sources, len(p.Sources) == 0)
		r.Headings, r.BlockIDs, r.Problems = headingsJSON(p.Headings), jsonText(p.BlockIDs, len(p.BlockIDs) == 0), jsonText(p.Problems, len(p.Problems) == 0)
		r.Words = f.words
	}
	return r
}

// insertFile inserts a file's row with its id, inbound count and depth,
// and its keys and citations. Links and full text are written separately.
func (w *writer) insertFile(ctx context.Context, f *file, inbound int, depth int) error {
	r := fileRow(f)
	r.Inbound, r.Depth = inbound, depth
	if w.files.add(r, w.bulk) {
		if err := w.writeFiles(ctx); err != nil {
			return fmt.Errorf("index %s: %w", f.path, err)
		}
	}
	return w.fileData(ctx, f)
}

// updateFile replaces a file's row in place, keeping its id, inbound count
// and depth, and writes its keys and citations.
func (w *writer) updateFile(ctx context.Context, f *file) error {
	if err := w.q.UpdateFile(ctx, fileRow(f)); err != nil {
		return fmt.Errorf("index %s: %w", f.path, err)
	}
	return w.fileData(ctx, f)
}

func (w *writer) fileData(ctx context.Context, f *file) error {
	for _, k := range f.keys() {
		if w.keys.add(KeyRow{Value: k.Value, Step: k.Step, File: f.id}, w.bulk) {
			if err := w.writeKeys(ctx); err != nil {
				return err
			}
		}
	}
	if f.page == nil {
		return nil
	}
	for _, v := range citeValues(f.page) {
		if w.cites.add(CiteRow{Value: v, File: f.id}, w.bulk) {
			if err := w.writeCites(ctx); err != nil {
				return err
			}
		}
	}
	for _, r := range fieldRows(f.id, f.page) {
		if w.fields.add(r, w.bulk) {
			if err := w.writeFields(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// wordCount is the number of words in s, words as ftsText writes them:
// separated by one space.
func wordCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, " ") + 1
}

// writeText adds a page to the full-text index: the title's words, then
// the body's (fileRow counts them both).
func (w *writer) writeText(ctx context.Context, f *file) error {
	return w.q.WriteText(ctx, f.id, f.title, f.fullText())
}

// fullText is a page's text as the full text holds it: the title's words,
// then the body's.
func (f *file) fullText() string { return f.title + " " + f.text }

// writeLinks inserts a page's links. res holds their resolutions and dsts
// the ids they lead to (full builds); with nil res they are stored broken,
// for the caller to resolve (updates).
func (w *writer) writeLinks(ctx context.Context, f *file, res []markdown.Resolution, dsts []int64) error {
	for i, l := range f.page.Links {
		var r *markdown.Resolution
		var dst int64
		if res != nil {
			r, dst = &res[i], dsts[i]
		}
		if err := w.insertLink(ctx, f.id, i, l, r, dst); err != nil {
			return err
		}
	}
	return nil
}

// insertLink inserts one link and its lookup rows; with a nil resolution it
// is stored broken, for the caller to resolve.
func (w *writer) insertLink(ctx context.Context, src int64, ord int, l markdown.Link, res *markdown.Resolution, dst int64) error {
	r := LinkRow{Src: src, Ord: ord, Flags: linkFlags(l), Status: statusCodes[markdown.StatusBroken], Data: encodeLink(l)}
	if res != nil {
		r.Status, r.Step, r.Detail, r.Dst = statusCodes[res.Status], int(res.Step), detailJSON(*res), dst
	}
	if w.links.add(r, w.bulk) {
		if err := w.writeLinkRows(ctx); err != nil {
			return err
		}
	}
	for _, v := range lookupValues(l) {
		if w.linkKeys.add(LinkKeyRow{Hash: lookupHash(v), Src: src, Ord: ord}, w.bulk) {
			if err := w.writeLinkKeys(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// Link flags, a column of links.
const (
	flagEmbed    = 1
	flagEscapes  = 2
	flagAnchored = 4 // the link names a heading or a block
)

func linkFlags(l markdown.Link) int {
	flags := 0
	if l.Embed {
		flags |= flagEmbed
	}
	if l.Escapes {
		flags |= flagEscapes
	}
	if l.Heading != "" || l.Block != "" {
		flags |= flagAnchored
	}
	return flags
}

// encodeLink packs what the parse found about a link but its flags into
// the value links.link holds: kind, line and column as varints, then
// target, heading, block, label, path and property, each a varint length
// and its bytes.
func encodeLink(l markdown.Link) []byte {
	strs := [...]string{l.Target, l.Heading, l.Block, l.Label, l.Path, l.Property}
	n := 3 * binary.MaxVarintLen32
	for _, s := range strs {
		n += binary.MaxVarintLen32 + len(s)
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(kindCodes[l.Kind]))
	b = binary.AppendUvarint(b, uint64(max(l.Line, 0)))
	b = binary.AppendUvarint(b, uint64(max(l.Col, 0)))
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeLink unpacks encodeLink's value and flags into l.
func decodeLink(b []byte, flags int, l *markdown.Link) error {
	var nums [3]uint64
	for i := range nums {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return errBadLink
		}
		nums[i], b = v, b[n:]
	}
	var strs [6]string
	for i := range strs {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > uint64(len(b)-n) {
			return errBadLink
		}
		strs[i], b = string(b[n:n+int(v)]), b[n+int(v):]
	}
	l.Kind, l.Line, l.Col = kindNames[int(nums[0])], int(nums[1]), int(nums[2])
	l.Target, l.Heading, l.Block, l.Label, l.Path, l.Property = strs[0], strs[1], strs[2], strs[3], strs[4], strs[5]
	l.Embed, l.Escapes = flags&flagEmbed != 0, flags&flagEscapes != 0
	return nil
}

var errBadLink = errors.New("index: a stored link cannot be read; run cairn reindex")

// rawLink writes a link the way a person would have: the form shown in
// findings and link listings.
func rawLink(l markdown.Link) string {
	var b strings.Builder
	if l.Embed {
		b.WriteByte('!')
	}
	dest := l.Target
	if l.Kind == markdown.LinkMarkdown && l.Path != "" {
		dest = l.Path
	}
	if l.Heading != "" {
		dest += "#" + l.Heading
	} else if l.Block != "" {
		dest += "#^" + l.Block
	}
	if l.Kind == markdown.LinkMarkdown {
		fmt.Fprintf(&b, "[%s](%s)", l.Label, dest)
		return b.String()
	}
	b.WriteString("[[")
	b.WriteString(dest)
	if l.Label != "" {
		b.WriteString("|" + l.Label)
	}
	b.WriteString("]]")
	return b.String()
}

// lookupValues returns the distinct key values a link looks up.
func lookupValues(l markdown.Link) []string {
	var out []string
	for _, k := range markdown.LookupKeys(l) {
		if !slices.Contains(out, k.Value) {
			out = append(out, k.Value)
		}
	}
	return out
}

// citeValues returns the key values a page's sources are looked up by.
func citeValues(p *markdown.Page) []string {
	var out []string
	for _, s := range p.Sources {
		for _, v := range sourceKeys(s) {
			if !slices.Contains(out, v.Value) {
				out = append(out, v.Value)
			}
		}
	}
	return out
}

// sourceKeys returns the keys a source entry may be found by: as a path,
// with ".md" added, and as an id; none for a wikilink, which is checked as a
// link.
func sourceKeys(s string) []markdown.Key {
	s = strings.TrimPrefix(strings.TrimSpace(s), "/")
	if s == "" || strings.Contains(s, "[[") {
		return nil
	}
	v := cairn.FoldPath(s)
	keys := []markdown.Key{{Step: markdown.StepFile, Value: v}, {Step: markdown.StepPath, Value: v}}
	if !strings.HasSuffix(v, ".md") {
		keys = append(keys, markdown.Key{Step: markdown.StepFile, Value: v + ".md"})
	}
	return keys
}

// deleteFileData removes a file's keys, links, citations, findings and full
// text (everything but its row), recomputing the keys it wrote from what it
// stored. It returns the file's keys and its resolved outgoing edges, which
// the caller needs to find what the removal affects. text is the page's
// full text as it was written (see StorageTx.DeleteText).
func (w *writer) deleteFileData(ctx context.Context, id int64, text string) (keys []markdown.Key, edges []edge, err error) {
	keys, links, err := w.deleteFileDataKeepLinks(ctx, id, text)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range links {
		if r.dst != 0 && r.dst != id {
			edges = append(edges, edge{src: id, dst: r.dst})
		}
		if err := w.deleteLink(ctx, r); err != nil {
			return nil, nil, err
		}
	}
	return keys, edges, nil
}

// lookupHash is what link_keys stores for a value a link looks up: its
// 64-bit FNV-1a hash, a third of the text's size. Two values that share a
// hash only make an update re-resolve a few more links than it must.
func lookupHash(v string) int64 { return int64(fnv1a(v)) }

// deleteLink removes one stored link and its lookup rows.
func (w *writer) deleteLink(ctx context.Context, r linkRow) error {
	vs := lookupValues(r.link)
	hashes := make([]int64, len(vs))
	for i, v := range vs {
		hashes[i] = lookupHash(v)
	}
	return w.q.DeleteLink(ctx, r.src, r.ord, hashes)
}

// deleteFileDataKeepLinks is deleteFileData but for the file's links, which
// it leaves in place and returns: a modified page keeps the rows (and
// resolutions) of the links it still has (updateLinks).
func (w *writer) deleteFileDataKeepLinks(ctx context.Context, id int64, text string) (keys []markdown.Key, links []linkRow, err error) {
	row, p, err := pageRow(ctx, w.q, id)
	if err != nil {
		return nil, nil, err
	}
	f := &file{id: id, path: row.Path, kind: row.Kind, page: p}
	keys = f.keys()
	if err := w.q.DeleteKeys(ctx, id, keys); err != nil {
		return nil, nil, err
	}
	if p == nil {
		return keys, nil, w.dropFindings(ctx, id)
	}
	rows, err := w.q.LinksFrom(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rows {
		l, err := linkOf(r)
		if err != nil {
			return nil, nil, err
		}
		links = append(links, l)
	}
	if err := w.q.DeleteCites(ctx, id, citeValues(p)); err != nil {
		return nil, nil, err
	}
	if len(p.Frontmatter) > 0 || p.Type != "" || p.TitleSource == markdown.TitleFromFrontmatter {
		// It had fields (a stored row's frontmatter lacks the title and
		// type its columns hold).
		if err := w.q.DeleteFields(ctx, id); err != nil {
			return nil, nil, err
		}
	}
	if err := w.q.DeleteText(ctx, id, text); err != nil {
		return nil, nil, err
	}
	return keys, links, w.dropFindings(ctx, id)
}

// sameLookup reports whether two links look up the same thing: their
// resolution is the same whatever their label or position.
func sameLookup(a, b markdown.Link) bool {
	return a.Kind == b.Kind && a.Target == b.Target && a.Heading == b.Heading && a.Block == b.Block &&
		a.Path == b.Path && a.Embed == b.Embed && a.Escapes == b.Escapes && a.Property == b.Property
}

// updateLinks brings a modified page's stored links (old, by position) to
// its new ones. A link at the same position that looks up the same thing
// keeps its row and resolution (its label and position are updated);
// others are replaced and returned for resolving. It returns the edges the
// replaced links had.
func (w *writer) updateLinks(ctx context.Context, f *file, old []linkRow) (dirty []int, removed []edge, err error) {
	byOrd := make(map[int]linkRow, len(old))
	for _, r := range old {
		byOrd[r.ord] = r
	}
	for i, l := range f.page.Links {
		r, ok := byOrd[i]
		if ok {
			delete(byOrd, i)
			if sameLookup(r.link, l) {
				if r.link.Label != l.Label || r.link.Line != l.Line || r.link.Col != l.Col {
					if err := w.q.SetLinkData(ctx, f.id, i, encodeLink(l)); err != nil {
						return nil, nil, err
					}
				}
				continue
			}
			if r.dst != 0 && r.dst != f.id {
				removed = append(removed, edge{src: f.id, dst: r.dst})
			}
			if err := w.deleteLink(ctx, r); err != nil {
				return nil, nil, err
			}
		}
		if err := w.insertLink(ctx, f.id, i, l, nil, 0); err != nil {
			return nil, nil, err
		}
		dirty = append(dirty, i)
	}
	for _, r := range byOrd { // links past the new end
		if r.dst != 0 && r.dst != f.id {
			removed = append(removed, edge{src: f.id, dst: r.dst})
		}
		if err := w.deleteLink(ctx, r); err != nil {
			return nil, nil, err
		}
	}
	return dirty, removed, nil
}

// edge is a resolved link between two different files.
type edge struct{ src, dst int64 }

// pageRow reads back a file's row, and for a page the parts lint and
// resolution need (nil for other files).
func pageRow(ctx context.Context, q StorageReader, id int64) (FileRow, *markdown.Page, error) {
	r, err := q.File(ctx, id)
	if err != nil {
		return r, nil, err
	}
	if r.Kind != lint.KindPage {
		return r, nil, nil
	}
	p := &markdown.Page{Path: r.Path, ID: r.pageID(), Title: r.Title, Type: r.Type}
	for ts, code := range titleSources {
		if code == r.TitleSource {
			p.TitleSource = ts
		}
	}
	for _, x := range []struct {
		s   string
		dst any
	}{{r.Frontmatter, &p.Frontmatter}, {r.Aliases, &p.Aliases}, {r.Sources, &p.Sources}, {r.BlockIDs, &p.BlockIDs}, {r.Problems, &p.Problems}} {
		if x.s != "" {
			if err := json.Unmarshal([]byte(x.s), x.dst); err != nil {
				return r, nil, fmt.Errorf("index row of %s: %w", r.Path, err)
			}
		}
	}
	if r.Headings != "" {
		if p.Headings, err = parseHeadings(r.Headings); err != nil {
			return r, nil, fmt.Errorf("index row of %s: %w", r.Path, err)
		}
	}
	loadedFrontmatter(p)
	return r, p, nil
}
