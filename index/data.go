package index

import (
	"context"
	"database/sql"
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
	// title and text are the page's words as full-text search indexes them.
	title, text string
}

// parse derives what the index stores about one file.
func parse(e cairn.Entry, data []byte) *file {
	f := &file{path: e.Path, kind: lint.Classify(e.Path), blob: e.Blob, size: e.Size}
	if f.kind == lint.KindPage {
		f.page = markdown.Parse(e.Path, data)
		f.text = ftsText(markdown.PlainText(data))
		f.title = ftsText(f.page.Title)
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

const statusResolved = 1

// writer writes index rows with statements prepared once per transaction.
// Inserts are batched, many rows to a statement: call flush before reading
// what was written.
type writer struct {
	q       *prepared
	batches map[string]*batch
	order   []string // batch heads, in the order rows must reach the tables
	// bulk holds every row until flush, which inserts each table's rows in
	// primary key order: a full build loads B-trees sequentially.
	bulk bool
	// delta, when set, collects the findings removed and added.
	delta *Delta
}

func newWriter(q *prepared) *writer {
	return &writer{q: q, batches: map[string]*batch{}}
}

// batch collects the rows of one INSERT statement. Each row is the
// slice its insert call was given: holding rows rather than one flat slice
// of values keeps a bulk build of 100k pages from copying millions of
// values each time the slice grows.
type batch struct {
	head string // "INSERT INTO t (a, b) VALUES "
	row  string // "(?, ?)"
	rows [][]any
	args []any // reused to pass one statement's values
	// sorted is set while rows are in the order sortRows puts them.
	sorted bool
}

// batchRows is the most rows one statement inserts.
const batchRows = 100

// insert adds a row to the batch for head, writing a full batch at once.
// The batch keeps vals: a caller passes a fresh slice each time.
func (w *writer) insert(ctx context.Context, head string, vals ...any) error {
	b, ok := w.batches[head]
	if !ok {
		b = &batch{head: head, row: "(" + strings.TrimSuffix(strings.Repeat("?,", len(vals)), ",") + ")"}
		w.batches[head] = b
		w.order = append(w.order, head)
	}
	b.rows, b.sorted = append(b.rows, vals), false
	if len(b.rows) == batchRows && !w.bulk {
		return w.flushBatch(ctx, b)
	}
	return nil
}

func (w *writer) flushBatch(ctx context.Context, b *batch) error {
	if len(b.rows) == 0 {
		return nil
	}
	if w.bulk && !b.sorted {
		sortRows(b)
	}
	full := ""
	for start := 0; start < len(b.rows); start += batchRows {
		rows := b.rows[start:min(start+batchRows, len(b.rows))]
		q := full
		if q == "" || len(rows) < batchRows {
			q = b.head + strings.TrimSuffix(strings.Repeat(b.row+",", len(rows)), ",")
			if len(rows) == batchRows {
				full = q
			}
		}
		b.args = b.args[:0]
		for _, r := range rows {
			b.args = append(b.args, r...)
		}
		if err := w.exec(ctx, q, b.args...); err != nil {
			return err
		}
	}
	clear(b.args)
	b.rows, b.args, b.sorted = b.rows[:0], b.args[:0], false
	return nil
}

// sortRows orders a batch's rows by their values, first column first: the
// primary key order of the tables written in bulk (files and links already
// come in order).
func sortRows(b *batch) {
	slices.SortFunc(b.rows, compareRows)
	b.sorted = true
}

func compareRows(x, y []any) int {
	for i := range x {
		if c := compareValues(x[i], y[i]); c != 0 {
			return c
		}
	}
	return 0
}

// sortAll sorts every batch: bulk build workers sort their own rows, on
// every core, and take merges them.
func (w *writer) sortAll() {
	for _, b := range w.batches {
		sortRows(b)
	}
}

func compareValues(a, b any) int {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case int:
		if y, ok := b.(int); ok {
			return x - y
		}
	case int64:
		if y, ok := b.(int64); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return 0
}

// take moves the rows other collected (in bulk mode, without writing) into
// w.
func (w *writer) take(other *writer) {
	for _, head := range other.order {
		ob := other.batches[head]
		b, ok := w.batches[head]
		if !ok {
			b = &batch{head: head, row: ob.row}
			w.batches[head] = b
			w.order = append(w.order, head)
		}
		switch {
		case len(b.rows) == 0:
			b.rows, b.sorted = ob.rows, ob.sorted
		case b.sorted && ob.sorted:
			b.rows = mergeRows(b.rows, ob.rows)
		default:
			b.rows, b.sorted = append(b.rows, ob.rows...), false
		}
	}
}

// mergeRows merges two sorted runs of rows.
func mergeRows(a, b [][]any) [][]any {
	out := make([][]any, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compareRows(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// flush writes every pending row.
func (w *writer) flush(ctx context.Context) error {
	for _, head := range w.order {
		if err := w.flushBatch(ctx, w.batches[head]); err != nil {
			return err
		}
	}
	return nil
}

// exec runs a statement, preparing it the first time.
func (w *writer) exec(ctx context.Context, query string, args ...any) error {
	return w.q.execDriver(ctx, query, args...)
}

// nextID returns the next unused id of an AUTOINCREMENT table; ids are
// assigned by the writer so that inserts need no RETURNING.
func nextID(ctx context.Context, q dbtx, table string) (int64, error) {
	var seq sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = ?`, table).Scan(&seq)
	if err != nil && err != sql.ErrNoRows {
		return 0, err
	}
	return seq.Int64 + 1, nil
}

func jsonText(v any, empty bool) any {
	if empty {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return string(b)
}

// Headings are stored as [level, text] pairs; slugs follow from the texts.
func headingsJSON(hs []markdown.Heading) any {
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

// fileArgs returns the values of a file's columns, path to problems.
func fileArgs(f *file) []any {
	var pageID, title, titleSource, typ any
	var fm, aliases, sources, headings, blocks, problems any
	if p := f.page; p != nil {
		if p.ID != strings.TrimSuffix(p.Path, ".md") {
			pageID = p.ID
		}
		title, titleSource = p.Title, titleSources[p.TitleSource]
		if p.Type != "" {
			typ = p.Type
		}
		sfm := storedFrontmatter(p)
		fm, aliases, sources = jsonText(sfm, len(sfm) == 0), jsonText(p.Aliases, len(p.Aliases) == 0), jsonText(p.Sources, len(p.Sources) == 0)
		headings, blocks, problems = headingsJSON(p.Headings), jsonText(p.BlockIDs, len(p.BlockIDs) == 0), jsonText(p.Problems, len(p.Problems) == 0)
	}
	return []any{f.path, int(f.kind), f.blob[:], f.size, pageID, title, titleSource, typ, fm, aliases, sources, headings, blocks, problems}
}

// insertFile inserts a file's row with its id, inbound count and depth,
// and its keys and citations. Links and full text are written separately.
func (w *writer) insertFile(ctx context.Context, f *file, inbound int, depth int) error {
	var d any
	if depth != unreachable {
		d = depth
	}
	args := append([]any{f.id}, fileArgs(f)...)
	err := w.insert(ctx, `INSERT INTO files (id, path, kind, blob, size, page_id, title, title_source, type, frontmatter,
		aliases, sources, headings, block_ids, problems, inbound, depth) VALUES `, append(args, inbound, d)...)
	if err != nil {
		return fmt.Errorf("index %s: %w", f.path, err)
	}
	return w.fileData(ctx, f)
}

// updateFile replaces a file's row in place, keeping its id, inbound count
// and depth, and writes its keys and citations.
func (w *writer) updateFile(ctx context.Context, f *file) error {
	err := w.exec(ctx, `UPDATE files SET path = ?, kind = ?, blob = ?, size = ?, page_id = ?, title = ?, title_source = ?,
		type = ?, frontmatter = ?, aliases = ?, sources = ?, headings = ?, block_ids = ?, problems = ? WHERE id = ?`,
		append(fileArgs(f), f.id)...)
	if err != nil {
		return fmt.Errorf("index %s: %w", f.path, err)
	}
	return w.fileData(ctx, f)
}

func (w *writer) fileData(ctx context.Context, f *file) error {
	for _, k := range f.keys() {
		if err := w.insert(ctx, `INSERT OR IGNORE INTO keys (value, step, file) VALUES `, k.Value, int(k.Step), f.id); err != nil {
			return err
		}
	}
	if f.page == nil {
		return nil
	}
	for _, v := range citeValues(f.page) {
		if err := w.insert(ctx, `INSERT OR IGNORE INTO cites (value, file) VALUES `, v, f.id); err != nil {
			return err
		}
	}
	return nil
}

// writeText adds a page to the full-text index. One row a statement: a
// statement of several rows opens a savepoint, which makes FTS5 flush its
// pending terms to a new segment every time.
func (w *writer) writeText(ctx context.Context, f *file) error {
	if err := w.exec(ctx, `INSERT INTO fts (rowid, text) VALUES (?, ?)`, f.id, f.title+" "+f.text); err != nil {
		return err
	}
	return w.exec(ctx, `INSERT INTO fts_title (rowid, title) VALUES (?, ?)`, f.id, f.title)
}

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
	status, step, detail := statusCodes[markdown.StatusBroken], 0, any(nil)
	var dstArg any
	if res != nil {
		status, step, detail = statusCodes[res.Status], int(res.Step), detailJSON(*res)
		if dst != 0 {
			dstArg = dst
		}
	}
	err := w.insert(ctx, `INSERT INTO links (src, ord, flags, status, dst, step, detail, link) VALUES `,
		src, ord, linkFlags(l), status, dstArg, step, detail, encodeLink(l))
	if err != nil {
		return err
	}
	for _, v := range lookupValues(l) {
		if err := w.insert(ctx, `INSERT OR IGNORE INTO link_keys (hash, src, ord) VALUES `, lookupHash(v), src, ord); err != nil {
			return err
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
// the caller needs to find what the removal affects.
func (w *writer) deleteFileData(ctx context.Context, q dbtx, id int64) (keys []markdown.Key, edges []edge, err error) {
	keys, links, err := w.deleteFileDataKeepLinks(ctx, q, id)
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
	for _, v := range lookupValues(r.link) {
		if err := w.exec(ctx, `DELETE FROM link_keys WHERE hash = ? AND src = ? AND ord = ?`, lookupHash(v), r.src, r.ord); err != nil {
			return err
		}
	}
	return w.exec(ctx, `DELETE FROM links WHERE src = ? AND ord = ?`, r.src, r.ord)
}

// deleteFileDataKeepLinks is deleteFileData but for the file's links, which
// it leaves in place and returns: a modified page keeps the rows (and
// resolutions) of the links it still has (updateLinks).
func (w *writer) deleteFileDataKeepLinks(ctx context.Context, q dbtx, id int64) (keys []markdown.Key, links []linkRow, err error) {
	p, kind, path, err := pageRow(ctx, q, id)
	if err != nil {
		return nil, nil, err
	}
	f := &file{id: id, path: path, kind: kind, page: p}
	keys = f.keys()
	for _, k := range keys {
		if err := w.exec(ctx, `DELETE FROM keys WHERE value = ? AND step = ? AND file = ?`, k.Value, int(k.Step), id); err != nil {
			return nil, nil, err
		}
	}
	if p == nil {
		return keys, nil, w.dropFindings(ctx, id)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+linkColumns+` FROM links WHERE src = ?`, id)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		r, err := scanLink(rows)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		links = append(links, r)
	}
	if err := rows.Close(); err != nil {
		return nil, nil, err
	}
	for _, v := range citeValues(p) {
		if err := w.exec(ctx, `DELETE FROM cites WHERE value = ? AND file = ?`, v, id); err != nil {
			return nil, nil, err
		}
	}
	for _, del := range []string{`DELETE FROM fts WHERE rowid = ?`, `DELETE FROM fts_title WHERE rowid = ?`} {
		if err := w.exec(ctx, del, id); err != nil {
			return nil, nil, err
		}
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
					if err := w.exec(ctx, `UPDATE links SET link = ? WHERE src = ? AND ord = ?`, encodeLink(l), f.id, i); err != nil {
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

// pageRow reads back a file's kind and path, and for a page the parts lint
// and resolution need.
func pageRow(ctx context.Context, q dbtx, id int64) (*markdown.Page, lint.Kind, string, error) {
	var path string
	var kind int
	var pageID, title, typ, fm, aliases, sources, headings, blocks, problems sql.NullString
	var titleSource sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT path, kind, page_id, title, title_source, type, frontmatter, aliases, sources,
		headings, block_ids, problems FROM files WHERE id = ?`, id).
		Scan(&path, &kind, &pageID, &title, &titleSource, &typ, &fm, &aliases, &sources, &headings, &blocks, &problems)
	if err != nil {
		return nil, 0, "", err
	}
	if lint.Kind(kind) != lint.KindPage {
		return nil, lint.Kind(kind), path, nil
	}
	p := &markdown.Page{Path: path, ID: pageID.String, Title: title.String, Type: typ.String}
	for ts, code := range titleSources {
		if int64(code) == titleSource.Int64 {
			p.TitleSource = ts
		}
	}
	if !pageID.Valid {
		p.ID = strings.TrimSuffix(path, ".md")
	}
	for _, x := range []struct {
		s   sql.NullString
		dst any
	}{{fm, &p.Frontmatter}, {aliases, &p.Aliases}, {sources, &p.Sources}, {blocks, &p.BlockIDs}, {problems, &p.Problems}} {
		if x.s.Valid {
			if err := json.Unmarshal([]byte(x.s.String), x.dst); err != nil {
				return nil, 0, "", fmt.Errorf("index row of %s: %w", path, err)
			}
		}
	}
	if headings.Valid {
		if p.Headings, err = parseHeadings(headings.String); err != nil {
			return nil, 0, "", fmt.Errorf("index row of %s: %w", path, err)
		}
	}
	loadedFrontmatter(p)
	return p, lint.KindPage, path, nil
}
