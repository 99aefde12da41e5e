package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"cairn"
	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
)

// indexReader reads the index through the pool, a snapshot's transaction
// or a write transaction (w, whose queued writes go first).
type indexReader struct {
	db *DB
	q  indexQuerier
	w  *indexTx // nil but in a write transaction
	// ended, in a snapshot, holds the error that ended its transaction:
	// PostgreSQL refuses every later statement of it ("current
	// transaction is aborted"), and each later read returns this error
	// instead, the one that says why.
	ended *error
}

var _ index.StorageReader = (*indexReader)(nil)

// query runs a query, after the writes queued before it.
func (r *indexReader) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if r.w != nil {
		return r.w.query(ctx, sql, args...)
	}
	if r.ended != nil && *r.ended != nil {
		return nil, *r.ended
	}
	rows, err := r.q.Query(ctx, sql, args...)
	if err != nil {
		err = r.db.translate(indexBusy(err))
		r.end(err)
		return nil, err
	}
	return busyRows{Rows: rows, r: r}, nil
}

// end records, in a snapshot, err if it is the server's: it ended the
// transaction. (A lost connection fails each later read as lost; a
// context that ended before a query was sent, or an error of decoding a
// row on this side, leaves the transaction as it was.)
func (r *indexReader) end(err error) {
	if r.ended == nil || *r.ended != nil || err == nil {
		return
	}
	if _, server := errors.AsType[*pgconn.PgError](err); server {
		*r.ended = err
	}
}

// indexBusy is err, or for a lock not had in time the error that says the
// index is being built: outside the writer's transaction, only a vault's
// first build (or a migration) locks the index's tables.
func indexBusy(err error) error {
	if !lockNotAvailable(err) {
		return err
	}
	return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: "the index is being built: a vault's first build holds its tables until it commits",
		Hint: "Try again when the build ends (a first import of a large vault takes a minute or more).", Err: err}
}

// busyRows are rows whose error, a lock not had in time, says the index
// is being built; in a snapshot, the error ends it (indexReader.end).
type busyRows struct {
	pgx.Rows
	r *indexReader
}

func (b busyRows) Err() error {
	err := b.Rows.Err()
	if err == nil {
		return nil
	}
	err = b.r.db.translate(indexBusy(err))
	b.r.end(err)
	return err
}

// queryRow runs a query of one row and scans it; a missing row is
// ENOTFOUND, with message "not found".
func (r *indexReader) queryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	rows, err := r.query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return r.db.translate(err)
		}
		return r.db.translate(pgx.ErrNoRows)
	}
	if err := rows.Scan(dest...); err != nil {
		return r.db.translate(err)
	}
	rows.Close()
	return r.db.translate(rows.Err())
}

// notFound reports whether err is a missing row.
func notFound(err error) bool { return cairn.ErrorCode(err) == cairn.ENOTFOUND }

// State returns the commit the index reflects; zero when there is none.
func (r *indexReader) State(ctx context.Context) (index.State, error) {
	var st index.State
	var c, t []byte
	err := r.queryRow(ctx, `SELECT commit_hash, tree FROM index_state WHERE ref = $1`, []any{index.Branch}, &c, &t)
	if notFound(err) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("index: read state: %w", err)
	}
	copy(st.Commit[:], c)
	copy(st.Tree[:], t)
	return st, nil
}

// FileAt returns the file at path; ENOTFOUND when there is none. Files are
// found through keys: files has no index on path.
func (r *indexReader) FileAt(ctx context.Context, path string) (index.FileRef, error) {
	f := index.FileRef{Path: path}
	var kind int
	var blob []byte
	err := r.queryRow(ctx, `SELECT f.id, f.kind, f.blob FROM keys k
		CROSS JOIN LATERAL (SELECT id, kind, blob, path FROM files WHERE id = k.file OFFSET 0) f
		WHERE k.value = $1 AND k.step = $3 AND f.path = $2 LIMIT 1`, []any{cairn.FoldPath(path), path, int32(markdown.StepFile)}, &f.ID, &kind, &blob)
	if notFound(err) {
		return f, cairn.Errorf(cairn.ENOTFOUND, "index: no file %s", path)
	}
	if err != nil {
		return f, fmt.Errorf("index: look up %s: %w", path, err)
	}
	f.Kind = lint.Kind(kind)
	copy(f.Blob[:], blob)
	return f, nil
}

// KeyHolders returns the files holding a key value at any of steps, by
// path (sorted here, by bytes).
func (r *indexReader) KeyHolders(ctx context.Context, value string, steps ...markdown.Step) ([]index.FileRef, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	ss := make([]int32, len(steps))
	for i, s := range steps {
		ss[i] = int32(s)
	}
	rows, err := r.query(ctx, `SELECT f.id, f.path, f.kind, f.blob FROM keys k
		CROSS JOIN LATERAL (SELECT id, path, kind, blob FROM files WHERE id = k.file OFFSET 0) f
		WHERE k.value = $1 AND k.step = ANY($2)`, value, ss)
	if err != nil {
		return nil, fmt.Errorf("index: look up %q: %w", value, err)
	}
	defer rows.Close()
	var out []index.FileRef
	for rows.Next() {
		var f index.FileRef
		var kind int
		var blob []byte
		if err := rows.Scan(&f.ID, &f.Path, &kind, &blob); err != nil {
			return nil, fmt.Errorf("index: look up %q: %w", value, r.db.translate(err))
		}
		f.Kind = lint.Kind(kind)
		copy(f.Blob[:], blob)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: look up %q: %w", value, r.db.translate(err))
	}
	slices.SortFunc(out, func(a, b index.FileRef) int { return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// File returns the row of file id; ENOTFOUND when there is none.
func (r *indexReader) File(ctx context.Context, id int64) (index.FileRow, error) {
	f := index.FileRow{ID: id, Depth: -1}
	var kind int
	var blob []byte
	var pageID, title, typ, fm, aliases, sources, headings, blocks, problems *string
	var titleSource, depth, words *int32
	err := r.queryRow(ctx, `SELECT path, kind, blob, size, page_id, title, title_source, type, frontmatter,
		aliases, sources, headings, block_ids, problems, inbound, depth, words FROM files WHERE id = $1`, []any{id},
		&f.Path, &kind, &blob, &f.Size, &pageID, &title, &titleSource, &typ, &fm,
		&aliases, &sources, &headings, &blocks, &problems, &f.Inbound, &depth, &words)
	if notFound(err) {
		return f, cairn.Errorf(cairn.ENOTFOUND, "index: no file %d", id).WithHint("Try: cairn reindex")
	}
	if err != nil {
		return f, fmt.Errorf("index: read file %d: %w", id, err)
	}
	f.Kind, f.Blob = lint.Kind(kind), cairn.Hash(blob)
	f.PageID, f.Title, f.TitleSource, f.Type = deref(pageID), deref(title), int(deref(titleSource)), deref(typ)
	f.Frontmatter, f.Aliases, f.Sources = deref(fm), deref(aliases), deref(sources)
	f.Headings, f.BlockIDs, f.Problems, f.Words = deref(headings), deref(blocks), deref(problems), int(deref(words))
	if depth != nil {
		f.Depth = int(*depth)
	}
	return f, nil
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Path returns the path of file id; ENOTFOUND when there is none.
func (r *indexReader) Path(ctx context.Context, id int64) (string, error) {
	var p string
	err := r.queryRow(ctx, `SELECT path FROM files WHERE id = $1`, []any{id}, &p)
	if notFound(err) {
		return "", cairn.Errorf(cairn.ENOTFOUND, "index: no file %d", id).WithHint("Try: cairn reindex")
	}
	if err != nil {
		return "", fmt.Errorf("index: read file %d: %w", id, err)
	}
	return p, nil
}

// Depth returns the depth of file id, -1 when unreachable or missing.
func (r *indexReader) Depth(ctx context.Context, id int64) (int, error) {
	var d *int32
	err := r.queryRow(ctx, `SELECT depth FROM files WHERE id = $1`, []any{id}, &d)
	if notFound(err) || err == nil && d == nil {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("index: read depth of %d: %w", id, err)
	}
	return int(*d), nil
}

// ids runs a query of one integer column.
func (r *indexReader) ids(ctx context.Context, what, query string, args ...any) ([]int64, error) {
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, r.db.translate(err))
	}
	return out, nil
}

// FilesOfKind returns the files of any of kinds, by id.
func (r *indexReader) FilesOfKind(ctx context.Context, kinds ...lint.Kind) ([]int64, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	ks := make([]int32, len(kinds))
	for i, k := range kinds {
		ks[i] = int32(k)
	}
	return r.ids(ctx, "list files", `SELECT id FROM files WHERE kind = ANY($1) ORDER BY id`, ks)
}

// FilesOfType returns the pages of any of types, by id.
func (r *indexReader) FilesOfType(ctx context.Context, types ...string) ([]int64, error) {
	if len(types) == 0 {
		return nil, nil
	}
	return r.ids(ctx, "list pages of types", `SELECT id FROM files WHERE type = ANY($1) ORDER BY id`, types)
}

// PagesWhere returns the pages of type typ (any, when "") whose fields
// meet every condition, by path, each condition selecting pages from the
// field rows by their indexes, as on SQLite.
func (r *indexReader) PagesWhere(ctx context.Context, typ string, where []index.FieldQuery) ([]index.TitleRow, error) {
	args := []any{int(lint.KindPage)}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	q := `SELECT path, coalesce(title, ''), coalesce(type, ''), coalesce(aliases, ''), inbound FROM files WHERE kind = $1`
	if typ != "" {
		q += ` AND type = ` + arg(typ)
	}
	for _, group := range index.Groups(where) {
		w := group[0]
		q += ` AND id IN (SELECT file FROM fields WHERE name = ` + arg(w.Name)
		for _, c := range group {
			n, num := c.Num()
			switch c.Op {
			case index.OpEq:
				if num {
					q += ` AND (value = ` + arg(c.Value) + ` OR num = ` + arg(n) + `)`
				} else {
					q += ` AND value = ` + arg(c.Value)
				}
			case index.OpLt, index.OpLe, index.OpGt, index.OpGe:
				if num {
					q += ` AND num ` + c.Op + ` ` + arg(n)
				} else {
					q += ` AND value ` + c.Op + ` ` + arg(c.Value)
				}
			case index.OpContains:
				q += ` AND strpos(lower(value), lower(` + arg(c.Value) + `)) > 0`
			}
		}
		q += `)`
		if w.Op == index.OpNe {
			n, num := w.Num()
			q += ` AND id NOT IN (SELECT file FROM fields WHERE name = ` + arg(w.Name) + ` AND (value = ` + arg(w.Value)
			if num {
				q += ` OR num = ` + arg(n)
			}
			q += `))`
		}
	}
	return r.titles(ctx, "pages where", q+` ORDER BY path`, args...)
}

// FilesCiting returns the pages citing a source key value.
func (r *indexReader) FilesCiting(ctx context.Context, value string) ([]int64, error) {
	return r.ids(ctx, "read citations", `SELECT file FROM cites WHERE value = $1`, value)
}

// Children returns the files id links to.
func (r *indexReader) Children(ctx context.Context, id int64) ([]int64, error) {
	return r.ids(ctx, "read links", `SELECT DISTINCT dst FROM links WHERE src = $1 AND dst IS NOT NULL AND dst <> src`, id)
}

// Parents returns the files linking to id.
func (r *indexReader) Parents(ctx context.Context, id int64) ([]int64, error) {
	return r.ids(ctx, "read links", `SELECT DISTINCT src FROM links WHERE dst = $1 AND src <> dst`, id)
}

// Edges returns the link graph.
func (r *indexReader) Edges(ctx context.Context) (map[int64][]int64, error) {
	rows, err := r.query(ctx, `SELECT DISTINCT src, dst FROM links WHERE dst IS NOT NULL AND dst <> src`)
	if err != nil {
		return nil, fmt.Errorf("index: read links: %w", err)
	}
	defer rows.Close()
	out := map[int64][]int64{}
	var src, dst int64
	for rows.Next() {
		if err := rows.Scan(&src, &dst); err != nil {
			return nil, fmt.Errorf("index: read links: %w", r.db.translate(err))
		}
		out[src] = append(out[src], dst)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: read links: %w", r.db.translate(err))
	}
	return out, nil
}

// Blobs returns every indexed file's content by path.
func (r *indexReader) Blobs(ctx context.Context) (map[string]cairn.Hash, error) {
	rows, err := r.query(ctx, `SELECT path, blob FROM files`)
	if err != nil {
		return nil, fmt.Errorf("index: list files: %w", err)
	}
	defer rows.Close()
	out := map[string]cairn.Hash{}
	var p string
	var b []byte
	for rows.Next() {
		if err := rows.Scan(&p, &b); err != nil {
			return nil, fmt.Errorf("index: list files: %w", r.db.translate(err))
		}
		out[p] = cairn.Hash(b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: list files: %w", r.db.translate(err))
	}
	return out, nil
}

// NextFileID returns an id above every id files has had: above every id
// in it and the highest one deleted (file_ids).
func (r *indexReader) NextFileID(ctx context.Context) (int64, error) {
	var last int64
	err := r.queryRow(ctx, `SELECT greatest((SELECT last FROM file_ids WHERE id = 1), (SELECT max(id) FROM files), 0)`, nil, &last)
	if err != nil {
		return 0, fmt.Errorf("index: next file id: %w", err)
	}
	return last + 1, nil
}

const indexLinkColumns = `l.src, l.ord, l.flags, l.status, l.dst, l.step, l.detail, l.link`

// Link returns one link; ENOTFOUND when there is none.
func (r *indexReader) Link(ctx context.Context, src int64, ord int) (index.LinkRow, error) {
	var l index.LinkRow
	var dst *int64
	var detail *string
	err := r.queryRow(ctx, `SELECT `+indexLinkColumns+` FROM links l WHERE l.src = $1 AND l.ord = $2`, []any{src, ord},
		&l.Src, &l.Ord, &l.Flags, &l.Status, &dst, &l.Step, &detail, &l.Data)
	if notFound(err) {
		return l, cairn.Errorf(cairn.ENOTFOUND, "index: no link %d of file %d", ord, src)
	}
	if err != nil {
		return l, fmt.Errorf("index: read link %d of file %d: %w", ord, src, err)
	}
	l.Dst, l.Detail = deref(dst), deref(detail)
	return l, nil
}

// links runs a query of indexLinkColumns, the source's path when withSrc,
// and the destination's path.
func (r *indexReader) links(ctx context.Context, withSrc bool, query string, args ...any) ([]index.LinkRow, error) {
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: read links: %w", err)
	}
	defer rows.Close()
	var out []index.LinkRow
	var l index.LinkRow
	var dst *int64
	var detail *string
	dest := []any{&l.Src, &l.Ord, &l.Flags, &l.Status, &dst, &l.Step, &detail, &l.Data, &l.DstPath}
	if withSrc {
		dest = append(dest[:8], &l.SrcPath, &l.DstPath)
	}
	for rows.Next() {
		l.Data = nil // a fresh slice for each row
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("index: read links: %w", r.db.translate(err))
		}
		l.Dst, l.Detail = deref(dst), deref(detail)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: read links: %w", r.db.translate(err))
	}
	return out, nil
}

// LinksFrom returns the links of src in order.
func (r *indexReader) LinksFrom(ctx context.Context, src int64) ([]index.LinkRow, error) {
	return r.links(ctx, false, `SELECT `+indexLinkColumns+`, coalesce((SELECT path FROM files WHERE id = l.dst), '')
		FROM links l WHERE l.src = $1 ORDER BY l.ord`, src)
}

// LinksTo returns limit of the links from other files to dst from the
// off-th on (limit 0: all).
func (r *indexReader) LinksTo(ctx context.Context, dst int64, off, limit int) ([]index.LinkRow, error) {
	var lim *int // NULL: no limit
	if limit > 0 {
		lim = &limit
	}
	return r.links(ctx, true, `SELECT `+indexLinkColumns+`, s.path, coalesce((SELECT path FROM files WHERE id = l.dst), '')
		FROM links l CROSS JOIN LATERAL (SELECT path FROM files WHERE id = l.src OFFSET 0) s
		WHERE l.dst = $1 AND l.src <> l.dst ORDER BY s.path, l.ord LIMIT $2 OFFSET $3`, dst, lim, max(off, 0))
}

// CountLinksTo returns how many links from other files lead to dst.
func (r *indexReader) CountLinksTo(ctx context.Context, dst int64) (int, error) {
	var n int
	if err := r.queryRow(ctx, `SELECT count(*) FROM links WHERE dst = $1 AND src <> dst`, []any{dst}, &n); err != nil {
		return 0, fmt.Errorf("index: count links to file %d: %w", dst, err)
	}
	return n, nil
}

// linkKeys runs a query of (src, ord).
func (r *indexReader) linkKeys(ctx context.Context, query string, arg any) ([]index.LinkKey, error) {
	rows, err := r.query(ctx, query, arg)
	if err != nil {
		return nil, fmt.Errorf("index: read links: %w", err)
	}
	defer rows.Close()
	var out []index.LinkKey
	for rows.Next() {
		var k index.LinkKey
		if err := rows.Scan(&k.Src, &k.Ord); err != nil {
			return nil, fmt.Errorf("index: read links: %w", r.db.translate(err))
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: read links: %w", r.db.translate(err))
	}
	return out, nil
}

// AnchoredLinksTo returns the links naming a heading or block of dst.
func (r *indexReader) AnchoredLinksTo(ctx context.Context, dst int64) ([]index.LinkKey, error) {
	return r.linkKeys(ctx, `SELECT src, ord FROM links WHERE dst = $1 AND flags & `+strconv.Itoa(index.LinkAnchored)+` <> 0`, dst)
}

// LinksLookingUp returns the links whose lookups include hash.
func (r *indexReader) LinksLookingUp(ctx context.Context, hash int64) ([]index.LinkKey, error) {
	return r.linkKeys(ctx, `SELECT src, ord FROM link_keys WHERE hash = $1`, hash)
}

// Findings returns the findings of file (0: all) and rule ("": all).
func (r *indexReader) Findings(ctx context.Context, file int64, rule string) ([]lint.Finding, error) {
	// The order they were written in, as SQLite returns them.
	q := `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM findings n JOIN files f ON f.id = n.file WHERE true`
	const order = ` ORDER BY n.id`
	var args []any
	if file != 0 {
		args = append(args, file)
		q = `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM findings n
			CROSS JOIN LATERAL (SELECT path FROM files WHERE id = n.file OFFSET 0) f WHERE n.file = $1`
	}
	if rule != "" {
		args = append(args, rule)
		q += ` AND n.rule = $` + strconv.Itoa(len(args))
	}
	rows, err := r.query(ctx, q+order, args...)
	if err != nil {
		return nil, fmt.Errorf("index: read findings: %w", err)
	}
	return r.scanFindings(rows, nil)
}

// findingFrom returns the tables, the condition and its arguments of
// the findings q selects: findings n with their files f. The findings of
// one file join their file's row laterally, as Findings does, so that
// the planner starts from the file's findings.
func findingFrom(q index.FindingQuery) (string, []any) {
	from := `findings n JOIN files f ON f.id = n.file`
	if q.File != 0 {
		from = `findings n CROSS JOIN LATERAL (SELECT path FROM files WHERE id = n.file OFFSET 0) f`
	}
	where, args := findingWhere(q)
	return from + ` WHERE ` + where, args
}

// findingWhere returns the condition, and its arguments, of the
// findings q selects, of findings n.
func findingWhere(q index.FindingQuery) (string, []any) {
	where, args := `true`, []any{}
	if q.File != 0 {
		args = append(args, q.File)
		where += ` AND n.file = $` + strconv.Itoa(len(args))
	}
	if q.Rule != "" {
		args = append(args, q.Rule)
		where += ` AND n.rule = $` + strconv.Itoa(len(args))
	}
	if len(q.Severities) > 0 {
		sevs := make([]string, len(q.Severities))
		for i, s := range q.Severities {
			sevs[i] = string(s)
		}
		args = append(args, sevs)
		where += ` AND n.severity = ANY($` + strconv.Itoa(len(args)) + `)`
	}
	return where, args
}

// FindingsPart returns limit (0: all) of the findings q selects from the
// off-th on, in index.FindingOrder (text compared byte by byte: COLLATE
// "C"), and their counts.
func (r *indexReader) FindingsPart(ctx context.Context, q index.FindingQuery, off, limit int) ([]lint.Finding, []index.FindingCount, error) {
	counts, err := r.countFindings(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	var lim *int // NULL: no limit
	if limit > 0 {
		lim = &limit
	}
	from, args := findingFrom(q)
	n := len(args)
	rows, err := r.query(ctx, `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM `+from+`
		ORDER BY f.path, n.rule COLLATE "C", n.subject COLLATE "C", n.message COLLATE "C", n.severity COLLATE "C"
		LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), append(args, lim, max(off, 0))...)
	if err != nil {
		return nil, nil, fmt.Errorf("index: read findings: %w", err)
	}
	part, err := r.scanFindings(rows, []lint.Finding{})
	return part, counts, err
}

// scanFindings appends the findings of rows (path, rule, severity,
// subject, message) to out, and closes rows.
func (r *indexReader) scanFindings(rows pgx.Rows, out []lint.Finding) ([]lint.Finding, error) {
	defer rows.Close()
	for rows.Next() {
		var fd lint.Finding
		var sev string
		if err := rows.Scan(&fd.Page, &fd.Rule, &sev, &fd.Subject, &fd.Message); err != nil {
			return nil, fmt.Errorf("index: read findings: %w", r.db.translate(err))
		}
		fd.Severity = lint.Severity(sev)
		out = append(out, fd)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: read findings: %w", r.db.translate(err))
	}
	return out, nil
}

// countFindings counts the findings q selects, by rule and severity.
func (r *indexReader) countFindings(ctx context.Context, q index.FindingQuery) ([]index.FindingCount, error) {
	from, args := findingFrom(q)
	rows, err := r.query(ctx, `SELECT n.rule, n.severity, count(*) FROM `+from+`
		GROUP BY n.rule, n.severity ORDER BY n.rule COLLATE "C", n.severity COLLATE "C"`, args...)
	if err != nil {
		return nil, fmt.Errorf("index: count findings: %w", err)
	}
	defer rows.Close()
	var out []index.FindingCount
	for rows.Next() {
		var c index.FindingCount
		var sev string
		if err := rows.Scan(&c.Rule, &sev, &c.N); err != nil {
			return nil, fmt.Errorf("index: count findings: %w", r.db.translate(err))
		}
		c.Severity = lint.Severity(sev)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: count findings: %w", r.db.translate(err))
	}
	return out, nil
}

// Stats counts the rows.
func (r *indexReader) Stats(ctx context.Context) (index.Stats, error) {
	var s index.Stats
	err := r.queryRow(ctx, `SELECT
		(SELECT count(*) FROM files), (SELECT count(*) FROM files WHERE kind = $1),
		(SELECT count(*) FROM links), (SELECT count(*) FROM links WHERE status <> 1),
		(SELECT count(*) FROM findings)`, []any{int(lint.KindPage)}, &s.Files, &s.Pages, &s.Links, &s.Broken, &s.Findings)
	if err != nil {
		return s, fmt.Errorf("index: count rows: %w", err)
	}
	return s, nil
}

// Titles returns every page's names, by path.
func (r *indexReader) Titles(ctx context.Context) ([]index.TitleRow, error) {
	return r.titles(ctx, "read titles", `SELECT path, coalesce(title, ''), coalesce(type, ''), coalesce(aliases, ''), inbound
		FROM files WHERE kind = $1 ORDER BY path`, int(lint.KindPage))
}

// titles reads title rows: path, title, type, aliases and inbound.
func (r *indexReader) titles(ctx context.Context, what, query string, args ...any) ([]index.TitleRow, error) {
	rows, err := r.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, err)
	}
	defer rows.Close()
	var out []index.TitleRow
	for rows.Next() {
		var t index.TitleRow
		if err := rows.Scan(&t.Path, &t.Title, &t.Type, &t.Aliases, &t.Inbound); err != nil {
			return nil, fmt.Errorf("index: %s: %w", what, r.db.translate(err))
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: %s: %w", what, r.db.translate(err))
	}
	return out, nil
}
