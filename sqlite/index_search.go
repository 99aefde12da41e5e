package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"cairn"
	"cairn/index"
)

// ftsMatch builds the FTS5 MATCH expression of a query: every term,
// quoted, prefixes followed by *.
func ftsMatch(terms []index.FullTextTerm) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t.Word, `"`, `""`))
		b.WriteByte('"')
		if t.Prefix {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// Search returns the pages matching every term: first those whose title
// holds every term, then by BM25 over title and body, ties by path.
func (r *indexReader) Search(ctx context.Context, q index.FullTextQuery) ([]index.SearchHit, error) {
	if len(q.Terms) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "index: a search needs a word to look for")
	}
	expr := ftsMatch(q.Terms)
	// BM25 alone ranks a word found in most pages at nearly zero, title or
	// not, hence in_title first. The inner query ranks on the full-text
	// tables alone and joins files only for the filters; the few rows it
	// keeps then fetch their files. A word found in a third of 100k pages
	// ranks in half the time that way. Ties are cut by id there, which a
	// full build assigns in path order.
	inner := `SELECT fts.rowid AS id, -bm25(fts) AS score,
		fts.rowid IN (SELECT rowid FROM fts_title WHERE fts_title MATCH ?) AS in_title FROM fts`
	args := []any{expr, expr} // titles, then title and body
	var where []string
	if q.Type != "" {
		where = append(where, `g.type = ?`)
		args = append(args, q.Type)
	}
	if q.Folder != "" {
		where = append(where, `substr(g.path, 1, ?) = ? COLLATE NOCASE`)
		args = append(args, len(q.Folder), q.Folder)
	}
	if len(where) > 0 {
		inner += ` JOIN files g ON g.id = fts.rowid`
	}
	inner += ` WHERE fts MATCH ?`
	for _, w := range where {
		inner += ` AND ` + w
	}
	inner += ` ORDER BY in_title DESC, score DESC, id LIMIT ?`
	args = append(args, q.Limit)
	query := `SELECT f.path, coalesce(f.page_id, substr(f.path, 1, length(f.path) - 3)), f.title, coalesce(f.type, ''), f.blob,
		c.score, c.in_title FROM (` + inner + `) c JOIN files f ON f.id = c.id
		ORDER BY c.in_title DESC, c.score DESC, f.path`
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []index.SearchHit
	for rows.Next() {
		var h index.SearchHit
		var blob []byte
		if err := rows.Scan(&h.Path, &h.ID, &h.Title, &h.Type, &blob, &h.Score, &h.InTitle); err != nil {
			return nil, translate(err)
		}
		h.Blob = cairn.Hash(blob)
		out = append(out, h)
	}
	return out, translate(rows.Err())
}

// indexSnapshotQueries select every row of each table with file ids
// replaced by paths.
var indexSnapshotQueries = map[string]string{
	"files": `SELECT path, kind, hex(blob), size, page_id, title, title_source, type, frontmatter, aliases, sources,
		headings, block_ids, problems, inbound, depth FROM files`,
	"keys": `SELECT k.value, k.step, f.path FROM keys k JOIN files f ON f.id = k.file`,
	"links": `SELECT s.path, l.ord, l.flags, l.status, d.path, l.step, l.detail, hex(l.link)
		FROM links l JOIN files s ON s.id = l.src LEFT JOIN files d ON d.id = l.dst`,
	"link_keys": `SELECT k.hash, s.path, k.ord FROM link_keys k JOIN files s ON s.id = k.src`,
	"cites":     `SELECT c.value, f.path FROM cites c JOIN files f ON f.id = c.file`,
	"findings":  `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM findings n JOIN files f ON f.id = n.file`,
	"fts":       `SELECT f.path FROM fts JOIN files f ON f.id = fts.rowid`,
	"fts_title": `SELECT f.path FROM fts_title JOIN files f ON f.id = fts_title.rowid`,
}

// Snapshot returns every row of every table of the index as a line of
// its values separated by " | ", NULL for none, sorted.
func (r *indexReader) Snapshot(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	for table, query := range indexSnapshotQueries {
		lines, err := r.snapshotTable(ctx, query)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", table, translate(err))
		}
		out[table] = lines
	}
	return out, nil
}

func (r *indexReader) snapshotTable(ctx context.Context, query string) ([]string, error) {
	rows, err := r.q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var lines []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v.Valid {
				parts[i] = v.String
			} else {
				parts[i] = "NULL"
			}
		}
		lines = append(lines, strings.Join(parts, " | "))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(lines)
	return lines, nil
}
