package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cairn"
	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
)

// indexReader reads the index through the read pool or a transaction.
type indexReader struct {
	q indexQuerier
}

var _ index.StorageReader = (*indexReader)(nil)

// State returns the commit the index reflects; zero when there is none.
func (r *indexReader) State(ctx context.Context) (index.State, error) {
	var st index.State
	var c, t []byte
	err := r.q.QueryRowContext(ctx, `SELECT commit_hash, tree FROM index_state WHERE ref = ?`, index.Branch).Scan(&c, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("index: read state: %w", translate(err))
	}
	copy(st.Commit[:], c)
	copy(st.Tree[:], t)
	return st, nil
}

// indexStepFile is markdown.StepFile in SQL: a literal, which SQLite plans
// better than a parameter (a parameter for the step of keys' key doubled
// the time of the lookup).
var indexStepFile = strconv.Itoa(int(markdown.StepFile))

// FileAt returns the file at path; ENOTFOUND when there is none. Files are
// found through keys: files has no index on path.
func (r *indexReader) FileAt(ctx context.Context, path string) (index.FileRef, error) {
	f := index.FileRef{Path: path}
	var kind int
	var blob sql.RawBytes
	rows, err := r.q.QueryContext(ctx, `SELECT f.id, f.kind, f.blob FROM keys k JOIN files f ON f.id = k.file
		WHERE k.value = ? AND k.step = `+indexStepFile+` AND f.path = ?`, cairn.FoldPath(path), path)
	if err != nil {
		return f, fmt.Errorf("index: look up %s: %w", path, translate(err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return f, fmt.Errorf("index: look up %s: %w", path, translate(err))
		}
		return f, cairn.Errorf(cairn.ENOTFOUND, "index: no file %s", path)
	}
	if err := rows.Scan(&f.ID, &kind, &blob); err != nil {
		return f, translate(err)
	}
	f.Kind = lint.Kind(kind)
	copy(f.Blob[:], blob)
	return f, nil
}

// KeyHolders returns the files holding a key value at any of steps, by
// path (sorted here: a sorter costs SQLite more than the few rows do).
func (r *indexReader) KeyHolders(ctx context.Context, value string, steps ...markdown.Step) ([]index.FileRef, error) {
	const q = `SELECT f.id, f.path, f.kind, f.blob FROM keys k JOIN files f ON f.id = k.file WHERE k.value = ? AND `
	var rows *sql.Rows
	var err error
	switch len(steps) {
	case 0:
		return nil, nil
	case 1:
		// The step as a literal, as in FileAt: with a parameter there,
		// SQLite (built with STAT4) prepares the statement again on every
		// run.
		rows, err = r.q.QueryContext(ctx, q+`k.step = `+strconv.Itoa(int(steps[0])), value)
	default:
		args := make([]any, 0, 1+len(steps))
		args = append(args, value)
		for _, s := range steps {
			args = append(args, int(s))
		}
		rows, err = r.q.QueryContext(ctx, q+`k.step IN (`+placeholders(len(steps))+`)`, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("index: look up %q: %w", value, translate(err))
	}
	defer rows.Close()
	var out []index.FileRef
	for rows.Next() {
		var f index.FileRef
		var kind int
		var blob sql.RawBytes
		if err := rows.Scan(&f.ID, &f.Path, &kind, &blob); err != nil {
			return nil, translate(err)
		}
		f.Kind = lint.Kind(kind)
		copy(f.Blob[:], blob)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	slices.SortFunc(out, func(a, b index.FileRef) int { return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// File returns the row of file id; ENOTFOUND when there is none.
func (r *indexReader) File(ctx context.Context, id int64) (index.FileRow, error) {
	f := index.FileRow{ID: id, Depth: -1}
	var kind int
	var blob []byte
	var pageID, title, typ, fm, aliases, sources, headings, blocks, problems sql.NullString
	var titleSource, depth, words sql.NullInt64
	err := r.q.QueryRowContext(ctx, `SELECT path, kind, blob, size, page_id, title, title_source, type, frontmatter,
		aliases, sources, headings, block_ids, problems, inbound, depth, words FROM files WHERE id = ?`, id).
		Scan(&f.Path, &kind, &blob, &f.Size, &pageID, &title, &titleSource, &typ, &fm,
			&aliases, &sources, &headings, &blocks, &problems, &f.Inbound, &depth, &words)
	if errors.Is(err, sql.ErrNoRows) {
		return f, cairn.Errorf(cairn.ENOTFOUND, "index: no file %d", id).WithHint("Try: cairn reindex")
	}
	if err != nil {
		return f, fmt.Errorf("index: read file %d: %w", id, translate(err))
	}
	f.Kind, f.Blob = lint.Kind(kind), cairn.Hash(blob)
	f.PageID, f.Title, f.TitleSource, f.Type = pageID.String, title.String, int(titleSource.Int64), typ.String
	f.Frontmatter, f.Aliases, f.Sources = fm.String, aliases.String, sources.String
	f.Headings, f.BlockIDs, f.Problems, f.Words = headings.String, blocks.String, problems.String, int(words.Int64)
	if depth.Valid {
		f.Depth = int(depth.Int64)
	}
	return f, nil
}

// Path returns the path of file id; ENOTFOUND when there is none.
func (r *indexReader) Path(ctx context.Context, id int64) (string, error) {
	var p string
	err := r.q.QueryRowContext(ctx, `SELECT path FROM files WHERE id = ?`, id).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return "", cairn.Errorf(cairn.ENOTFOUND, "index: no file %d", id).WithHint("Try: cairn reindex")
	}
	if err != nil {
		return "", fmt.Errorf("index: read file %d: %w", id, translate(err))
	}
	return p, nil
}

// Depth returns the depth of file id, -1 when unreachable or missing.
func (r *indexReader) Depth(ctx context.Context, id int64) (int, error) {
	var d sql.NullInt64
	err := r.q.QueryRowContext(ctx, `SELECT depth FROM files WHERE id = ?`, id).Scan(&d)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !d.Valid {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("index: read depth of %d: %w", id, translate(err))
	}
	return int(d.Int64), nil
}

// ids runs a query of one integer column.
func (r *indexReader) ids(ctx context.Context, what, query string, args ...any) ([]int64, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, translate(err))
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err)
		}
		out = append(out, id)
	}
	return out, translate(rows.Err())
}

// FilesOfKind returns the files of any of kinds, by id.
func (r *indexReader) FilesOfKind(ctx context.Context, kinds ...lint.Kind) ([]int64, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	args := make([]any, len(kinds))
	for i, k := range kinds {
		args[i] = int(k)
	}
	return r.ids(ctx, "list files", `SELECT id FROM files WHERE kind IN (`+placeholders(len(kinds))+`) ORDER BY id`, args...)
}

// FilesOfType returns the pages of any of types, by id.
func (r *indexReader) FilesOfType(ctx context.Context, types ...string) ([]int64, error) {
	if len(types) == 0 {
		return nil, nil
	}
	args := make([]any, len(types))
	for i, t := range types {
		args[i] = t
	}
	return r.ids(ctx, "list pages of types", `SELECT id FROM files WHERE type IN (`+placeholders(len(types))+`) ORDER BY id`, args...)
}

// PagesWhere returns the pages of type typ (any, when "") whose fields
// meet every condition, by path. Each condition selects the pages from
// the field rows by their indexes (name and value, or name and number);
// "~" reads the rows of its field only.
func (r *indexReader) PagesWhere(ctx context.Context, typ string, where []index.FieldQuery) ([]index.TitleRow, error) {
	q := `SELECT path, coalesce(title, ''), coalesce(type, ''), coalesce(aliases, ''), inbound FROM files WHERE kind = ?`
	args := []any{int(lint.KindPage)}
	if typ != "" {
		q += ` AND type = ?`
		args = append(args, typ)
	}
	for _, group := range index.Groups(where) {
		w := group[0]
		q += ` AND id IN (SELECT file FROM fields WHERE name = ?`
		args = append(args, w.Name)
		for _, c := range group {
			cond, a := fieldCond(c)
			q += cond
			args = append(args, a...)
		}
		q += `)`
		if w.Op == index.OpNe {
			q += ` AND id NOT IN (SELECT file FROM fields WHERE name = ? AND (value = ?`
			args = append(args, w.Name, w.Value)
			if n, ok := w.Num(); ok {
				q += ` OR num = ?`
				args = append(args, n)
			}
			q += `))`
		}
	}
	return r.titles(ctx, "pages where", q+` ORDER BY path`, args...)
}

// fieldCond is the SQL condition on a field row that one query asks for,
// after "name = ?".
func fieldCond(w index.FieldQuery) (string, []any) {
	n, num := w.Num()
	switch w.Op {
	case index.OpEq:
		if num {
			return ` AND (value = ? OR num = ?)`, []any{w.Value, n}
		}
		return ` AND value = ?`, []any{w.Value}
	case index.OpLt, index.OpLe, index.OpGt, index.OpGe:
		if num {
			return ` AND num ` + w.Op + ` ?`, []any{n}
		}
		return ` AND value ` + w.Op + ` ?`, []any{w.Value}
	case index.OpContains:
		return ` AND instr(lower(value), lower(?)) > 0`, []any{w.Value}
	}
	return "", nil // exists, and != (which excludes the equal ones after)
}

// FilesCiting returns the pages citing a source key value.
func (r *indexReader) FilesCiting(ctx context.Context, value string) ([]int64, error) {
	return r.ids(ctx, "read citations", `SELECT file FROM cites WHERE value = ?`, value)
}

// Children returns the files id links to.
func (r *indexReader) Children(ctx context.Context, id int64) ([]int64, error) {
	return r.ids(ctx, "read links", `SELECT DISTINCT dst FROM links WHERE src = ? AND dst IS NOT NULL AND dst != src`, id)
}

// Parents returns the files linking to id.
func (r *indexReader) Parents(ctx context.Context, id int64) ([]int64, error) {
	return r.ids(ctx, "read links", `SELECT DISTINCT src FROM links WHERE dst = ? AND src != dst`, id)
}

// Edges returns the link graph.
func (r *indexReader) Edges(ctx context.Context) (map[int64][]int64, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT DISTINCT src, dst FROM links WHERE dst IS NOT NULL AND dst != src`)
	if err != nil {
		return nil, fmt.Errorf("index: read links: %w", translate(err))
	}
	defer rows.Close()
	out := map[int64][]int64{}
	for rows.Next() {
		var src, dst int64
		if err := rows.Scan(&src, &dst); err != nil {
			return nil, translate(err)
		}
		out[src] = append(out[src], dst)
	}
	return out, translate(rows.Err())
}

// Blobs returns every indexed file's content by path.
func (r *indexReader) Blobs(ctx context.Context) (map[string]cairn.Hash, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT path, blob FROM files`)
	if err != nil {
		return nil, fmt.Errorf("index: list files: %w", translate(err))
	}
	defer rows.Close()
	out := map[string]cairn.Hash{}
	for rows.Next() {
		var p string
		var b []byte
		if err := rows.Scan(&p, &b); err != nil {
			return nil, translate(err)
		}
		out[p] = cairn.Hash(b)
	}
	return out, translate(rows.Err())
}

const indexLinkColumns = `l.src, l.ord, l.flags, l.status, l.dst, l.step, l.detail, l.link`

// scanIndexLink scans indexLinkColumns and then extra.
func scanIndexLink(sc interface{ Scan(...any) error }, extra ...any) (index.LinkRow, error) {
	var l index.LinkRow
	var dst sql.NullInt64
	var detail sql.NullString
	err := sc.Scan(append([]any{&l.Src, &l.Ord, &l.Flags, &l.Status, &dst, &l.Step, &detail, &l.Data}, extra...)...)
	l.Dst, l.Detail = dst.Int64, detail.String
	return l, err
}

// Link returns one link; ENOTFOUND when there is none.
func (r *indexReader) Link(ctx context.Context, src int64, ord int) (index.LinkRow, error) {
	l, err := scanIndexLink(r.q.QueryRowContext(ctx, `SELECT `+indexLinkColumns+` FROM links l WHERE l.src = ? AND l.ord = ?`, src, ord))
	if errors.Is(err, sql.ErrNoRows) {
		return l, cairn.Errorf(cairn.ENOTFOUND, "index: no link %d of file %d", ord, src)
	}
	if err != nil {
		return l, fmt.Errorf("index: read link %d of file %d: %w", ord, src, translate(err))
	}
	return l, nil
}

// links runs a query of indexLinkColumns, the source's path when withSrc,
// and the destination's path.
func (r *indexReader) links(ctx context.Context, withSrc bool, query string, args ...any) ([]index.LinkRow, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: read links: %w", translate(err))
	}
	defer rows.Close()
	var out []index.LinkRow
	var l index.LinkRow
	var dst sql.NullInt64
	var detail sql.NullString
	dest := []any{&l.Src, &l.Ord, &l.Flags, &l.Status, &dst, &l.Step, &detail, &l.Data, &l.DstPath}
	if withSrc {
		dest = append(dest[:8], &l.SrcPath, &l.DstPath)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, translate(err)
		}
		l.Dst, l.Detail = dst.Int64, detail.String
		out = append(out, l)
	}
	return out, translate(rows.Err())
}

// LinksFrom returns the links of src in order.
func (r *indexReader) LinksFrom(ctx context.Context, src int64) ([]index.LinkRow, error) {
	return r.links(ctx, false, `SELECT `+indexLinkColumns+`, coalesce(d.path, '') FROM links l
		LEFT JOIN files d ON d.id = l.dst WHERE l.src = ? ORDER BY l.ord`, src)
}

// LinksTo returns limit of the links from other files to dst from the
// off-th on (limit 0: all).
func (r *indexReader) LinksTo(ctx context.Context, dst int64, off, limit int) ([]index.LinkRow, error) {
	if limit <= 0 {
		limit = -1 // no limit
	}
	return r.links(ctx, true, `SELECT `+indexLinkColumns+`, s.path, coalesce(d.path, '') FROM links l
		JOIN files s ON s.id = l.src LEFT JOIN files d ON d.id = l.dst
		WHERE l.dst = ? AND l.src != l.dst ORDER BY s.path, l.ord LIMIT ? OFFSET ?`, dst, limit, max(off, 0))
}

// CountLinksTo returns how many links from other files lead to dst.
func (r *indexReader) CountLinksTo(ctx context.Context, dst int64) (int, error) {
	var n int
	err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM links WHERE dst = ? AND src != dst`, dst).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("index: count links to file %d: %w", dst, translate(err))
	}
	return n, nil
}

// linkKeys runs a query of (src, ord).
func (r *indexReader) linkKeys(ctx context.Context, query string, arg any) ([]index.LinkKey, error) {
	rows, err := r.q.QueryContext(ctx, query, arg)
	if err != nil {
		return nil, fmt.Errorf("index: read links: %w", translate(err))
	}
	defer rows.Close()
	var out []index.LinkKey
	for rows.Next() {
		var k index.LinkKey
		if err := rows.Scan(&k.Src, &k.Ord); err != nil {
			return nil, translate(err)
		}
		out = append(out, k)
	}
	return out, translate(rows.Err())
}

// AnchoredLinksTo returns the links naming a heading or block of dst.
func (r *indexReader) AnchoredLinksTo(ctx context.Context, dst int64) ([]index.LinkKey, error) {
	return r.linkKeys(ctx, `SELECT src, ord FROM links WHERE dst = ? AND flags & `+strconv.Itoa(index.LinkAnchored)+` != 0`, dst)
}

// LinksLookingUp returns the links whose lookups include hash.
func (r *indexReader) LinksLookingUp(ctx context.Context, hash int64) ([]index.LinkKey, error) {
	return r.linkKeys(ctx, `SELECT src, ord FROM link_keys WHERE hash = ?`, hash)
}

// Findings returns the findings of file (0: all) and rule ("": all).
func (r *indexReader) Findings(ctx context.Context, file int64, rule string) ([]lint.Finding, error) {
	q := `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM findings n JOIN files f ON f.id = n.file WHERE 1`
	var args []any
	if file != 0 {
		q += ` AND n.file = ?`
		args = append(args, file)
	}
	if rule != "" {
		q += ` AND n.rule = ?`
		args = append(args, rule)
	}
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("index: read findings: %w", translate(err))
	}
	return scanFindings(rows, nil)
}

// findingWhere returns the condition, and its arguments, of the
// findings q selects, of findings n.
func findingWhere(q index.FindingQuery) (string, []any) {
	where, args := `1`, []any{}
	if q.File != 0 {
		where += ` AND n.file = ?`
		args = append(args, q.File)
	}
	if q.Rule != "" {
		where += ` AND n.rule = ?`
		args = append(args, q.Rule)
	}
	if len(q.Severities) > 0 {
		where += ` AND n.severity IN (?` + strings.Repeat(`, ?`, len(q.Severities)-1) + `)`
		for _, s := range q.Severities {
			args = append(args, string(s))
		}
	}
	return where, args
}

// FindingsPart returns limit (0: all) of the findings q selects from the
// off-th on, in index.FindingOrder (SQLite compares text byte by byte),
// and their counts.
func (r *indexReader) FindingsPart(ctx context.Context, q index.FindingQuery, off, limit int) ([]lint.Finding, []index.FindingCount, error) {
	counts, err := r.countFindings(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	if limit <= 0 {
		limit = -1 // no limit
	}
	where, args := findingWhere(q)
	rows, err := r.q.QueryContext(ctx, `SELECT f.path, n.rule, n.severity, n.subject, n.message
		FROM findings n JOIN files f ON f.id = n.file WHERE `+where+`
		ORDER BY f.path, n.rule, n.subject, n.message, n.severity LIMIT ? OFFSET ?`, append(args, limit, max(off, 0))...)
	if err != nil {
		return nil, nil, fmt.Errorf("index: read findings: %w", translate(err))
	}
	part, err := scanFindings(rows, []lint.Finding{})
	return part, counts, err
}

// scanFindings appends the findings of rows (path, rule, severity,
// subject, message) to out, and closes rows.
func scanFindings(rows *sql.Rows, out []lint.Finding) ([]lint.Finding, error) {
	defer rows.Close()
	for rows.Next() {
		var fd lint.Finding
		if err := rows.Scan(&fd.Page, &fd.Rule, &fd.Severity, &fd.Subject, &fd.Message); err != nil {
			return nil, fmt.Errorf("index: read findings: %w", translate(err))
		}
		out = append(out, fd)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: read findings: %w", translate(err))
	}
	return out, nil
}

// countFindings counts the findings q selects, by rule and severity.
func (r *indexReader) countFindings(ctx context.Context, q index.FindingQuery) ([]index.FindingCount, error) {
	where, args := findingWhere(q)
	rows, err := r.q.QueryContext(ctx, `SELECT n.rule, n.severity, count(*)
		FROM findings n JOIN files f ON f.id = n.file WHERE `+where+`
		GROUP BY n.rule, n.severity ORDER BY n.rule, n.severity`, args...)
	if err != nil {
		return nil, fmt.Errorf("index: count findings: %w", translate(err))
	}
	defer rows.Close()
	var out []index.FindingCount
	for rows.Next() {
		var c index.FindingCount
		if err := rows.Scan(&c.Rule, &c.Severity, &c.N); err != nil {
			return nil, fmt.Errorf("index: count findings: %w", translate(err))
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: count findings: %w", translate(err))
	}
	return out, nil
}

// Stats counts the rows.
func (r *indexReader) Stats(ctx context.Context) (index.Stats, error) {
	var s index.Stats
	err := r.q.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM files), (SELECT count(*) FROM files WHERE kind = ?),
		(SELECT count(*) FROM links), (SELECT count(*) FROM links WHERE status != 1),
		(SELECT count(*) FROM findings)`, int(lint.KindPage)).Scan(&s.Files, &s.Pages, &s.Links, &s.Broken, &s.Findings)
	if err != nil {
		return s, fmt.Errorf("index: count rows: %w", translate(err))
	}
	return s, nil
}

// Titles returns every page's names, by path.
func (r *indexReader) Titles(ctx context.Context) ([]index.TitleRow, error) {
	return r.titles(ctx, "read titles", `SELECT path, coalesce(title, ''), coalesce(type, ''), coalesce(aliases, ''), inbound
		FROM files WHERE kind = ? ORDER BY path`, int(lint.KindPage))
}

// titles reads title rows: path, title, type, aliases and inbound.
func (r *indexReader) titles(ctx context.Context, what, query string, args ...any) ([]index.TitleRow, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, translate(err))
	}
	defer rows.Close()
	var out []index.TitleRow
	for rows.Next() {
		var t index.TitleRow
		if err := rows.Scan(&t.Path, &t.Title, &t.Type, &t.Aliases, &t.Inbound); err != nil {
			return nil, translate(err)
		}
		out = append(out, t)
	}
	return out, translate(rows.Err())
}
