package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
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

// BM25's parameters, FTS5's and Lucene's defaults.
const bm25K1, bm25B = 1.2, 0.75

// prefixWords is the most words a prefix's page count sums (the
// vocabulary counts a word's pages by reading them all); a prefix
// starting more words counts as being in every page.
const prefixWords = 64

// Search returns the pages matching every term in the order Storage
// defines: those whose title holds every term, then fewer words, then
// path. Each of the two groups is ranked among the shortest pages first
// (fts_short, fts_title_short), where a word found in most pages has
// enough matches for the first results, and in the whole full text only
// when it has not (see rank).
func (r *indexReader) Search(ctx context.Context, q index.FullTextQuery) ([]index.SearchHit, error) {
	if len(q.Terms) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "index: a search needs a word to look for")
	}
	st, err := r.textTotals(ctx)
	if err != nil || st.pages == 0 {
		return nil, err
	}
	s := &search{r: r, expr: ftsMatch(q.Terms), tier: -1}
	s.filter, s.args = searchFilter(q)
	err = r.q.QueryRowContext(ctx, `SELECT words FROM fts_tier`).Scan(&s.tier)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("index: search: %w", translate(err))
	}
	limit := max(q.Limit, 1)
	hits, err := s.rank(ctx, "fts_title", limit, nil)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].InTitle = true
	}
	if len(hits) < limit {
		seen := make([]int64, len(hits))
		for i, h := range hits {
			seen[i] = h.id
		}
		rest, err := s.rank(ctx, "fts", limit-len(hits), seen)
		if err != nil {
			return nil, err
		}
		hits = append(hits, rest...)
	}
	holding, err := r.pagesHolding(ctx, q.Terms, st.pages)
	if err != nil {
		return nil, err
	}
	idf := 0.0
	for _, n := range holding {
		idf += math.Log(1 + (float64(st.pages)-n+0.5)/(n+0.5))
	}
	out := make([]index.SearchHit, len(hits))
	for i, h := range hits {
		norm := 1 - bm25B + bm25B*float64(h.words)/st.avgWords
		h.Score = idf * (bm25K1 + 1) / (1 + bm25K1*norm)
		out[i] = h.SearchHit
	}
	return out, nil
}

// search is one full-text search being ranked.
type search struct {
	r      *indexReader
	expr   string // the MATCH expression
	tier   int    // the most words of a page in the short pages' tables; -1: none
	filter string // " AND ..." on files f, for Type and Folder
	args   []any  // filter's
}

// ranked is a hit with the length that ranks it.
type ranked struct {
	index.SearchHit
	id, words int64
}

// searchFilter is the SQL that keeps the pages of q's type and folder.
func searchFilter(q index.FullTextQuery) (string, []any) {
	var sql string
	var args []any
	if q.Type != "" {
		sql += ` AND f.type = ?`
		args = append(args, q.Type)
	}
	if q.Folder != "" {
		sql += ` AND substr(f.path, 1, ?) = ? COLLATE NOCASE`
		args = append(args, len(q.Folder), q.Folder)
	}
	return sql, args
}

// rank returns the first k matches of table (fts or fts_title) not in
// exclude, by words and path. It ranks the matches among the short pages
// first: every page of at most the tier's words is there and every other
// page has more, so k matches there are the first k of all. Fewer, and
// the word is rare enough to rank every match.
func (s *search) rank(ctx context.Context, table string, k int, exclude []int64) ([]ranked, error) {
	if s.tier >= 0 {
		hits, err := s.query(ctx, table+"_short", k, exclude)
		if err != nil || len(hits) == k {
			return hits, err
		}
	}
	return s.query(ctx, table, k, exclude)
}

// query returns the first k matches of table not in exclude, by words and
// path.
func (s *search) query(ctx context.Context, table string, k int, exclude []int64) ([]ranked, error) {
	query := `SELECT f.id, f.words, f.path, coalesce(f.page_id, substr(f.path, 1, length(f.path) - 3)), f.title,
		coalesce(f.type, ''), f.blob FROM ` + table + ` JOIN files f ON f.id = ` + table + `.rowid
		WHERE ` + table + ` MATCH ? AND f.words IS NOT NULL` + s.filter
	args := append([]any{s.expr}, s.args...)
	if len(exclude) > 0 {
		query += ` AND f.id NOT IN (?` + strings.Repeat(`, ?`, len(exclude)-1) + `)`
		for _, id := range exclude {
			args = append(args, id)
		}
	}
	query += ` ORDER BY f.words, f.path LIMIT ?`
	args = append(args, k)
	rows, err := s.r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", translate(err))
	}
	defer rows.Close()
	var out []ranked
	for rows.Next() {
		var h ranked
		var blob []byte
		if err := rows.Scan(&h.id, &h.words, &h.Path, &h.ID, &h.Title, &h.Type, &blob); err != nil {
			return nil, fmt.Errorf("index: search: %w", translate(err))
		}
		h.Blob = cairn.Hash(blob)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: search: %w", translate(err))
	}
	return out, nil
}

// pagesHolding returns, for each term, how many pages of the full text
// hold it, from fts_words: for a prefix, the sum over the words it starts
// (up to prefixWords of them, else every page), at most pages.
func (r *indexReader) pagesHolding(ctx context.Context, terms []index.FullTextTerm, pages int64) ([]float64, error) {
	out := make([]float64, len(terms))
	for i, t := range terms {
		var n float64
		var err error
		if !t.Prefix {
			err = r.q.QueryRowContext(ctx, `SELECT pages FROM fts_words WHERE word = ?`, t.Word).Scan(&n)
			if errors.Is(err, sql.ErrNoRows) {
				err = nil
			}
		} else {
			var words int
			err = r.q.QueryRowContext(ctx, `SELECT count(*), total(pages) FROM (SELECT pages FROM fts_words
				WHERE word >= ? AND word < ? LIMIT ?)`, t.Word, t.Word+"\U0010FFFF", prefixWords+1).Scan(&words, &n)
			if words > prefixWords {
				n = float64(pages)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("index: search: pages holding %q: %w", t.Word, translate(err))
		}
		out[i] = min(n, float64(pages))
	}
	return out, nil
}

// textTotals are the full text's totals that BM25 weighs by.
type textTotals struct {
	pages    int64
	avgWords float64
}

// textTotals reads FTS5's own totals (its averages record, row 1 of
// fts_data: SQLite varints of the row count, then of the tokens of each
// column), which it keeps up to date on every write.
func (r *indexReader) textTotals(ctx context.Context) (textTotals, error) {
	var block []byte
	err := r.q.QueryRowContext(ctx, `SELECT block FROM fts_data WHERE id = 1`).Scan(&block)
	if errors.Is(err, sql.ErrNoRows) {
		return textTotals{}, nil
	}
	if err != nil {
		return textTotals{}, fmt.Errorf("index: search: full-text totals: %w", translate(err))
	}
	if len(block) == 0 {
		return textTotals{}, nil // no page was ever written
	}
	rows, n := sqliteVarint(block)
	words, m := sqliteVarint(block[n:])
	if n == 0 || m == 0 {
		return textTotals{}, cairn.Errorf(cairn.EINTERNAL, "index: search: the full text's totals do not decode (%x)", block).
			WithHint("Try: cairn reindex")
	}
	t := textTotals{pages: int64(rows)}
	if rows > 0 {
		t.avgWords = max(float64(words)/float64(rows), 1)
	}
	return t, nil
}

// sqliteVarint decodes SQLite's variable-length integer (big-endian groups
// of seven bits, the ninth byte whole) from the start of b and returns it
// with the bytes it took; 0 bytes when b ends first.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// indexSnapshotQueries select every row of each table with file ids
// replaced by paths.
var indexSnapshotQueries = map[string]string{
	"files": `SELECT path, kind, hex(blob), size, page_id, title, title_source, type, frontmatter, aliases, sources,
		headings, block_ids, problems, inbound, depth, words FROM files`,
	"keys": `SELECT k.value, k.step, f.path FROM keys k JOIN files f ON f.id = k.file`,
	"links": `SELECT s.path, l.ord, l.flags, l.status, d.path, l.step, l.detail, hex(l.link)
		FROM links l JOIN files s ON s.id = l.src LEFT JOIN files d ON d.id = l.dst`,
	"link_keys": `SELECT k.hash, s.path, k.ord FROM link_keys k JOIN files s ON s.id = k.src`,
	"cites":     `SELECT c.value, f.path FROM cites c JOIN files f ON f.id = c.file`,
	"fields":    `SELECT x.name, x.value, x.num, f.path FROM fields x JOIN files f ON f.id = x.file`,
	"findings":  `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM findings n JOIN files f ON f.id = n.file`,
	"fts":       `SELECT f.path FROM fts JOIN files f ON f.id = fts.rowid`,
	"fts_title": `SELECT f.path FROM fts_title JOIN files f ON f.id = fts_title.rowid`,
	// The page counts kept as pages change, and beside them the full
	// text's own count of each word: they must agree.
	"fts_words": `SELECT word, pages FROM fts_words`,
	"fts_words_drift": `SELECT coalesce(w.word, v.term), w.pages, v.doc FROM fts_words w
		FULL JOIN (SELECT term, doc FROM fts_vocab WHERE doc > 0) v ON v.term = w.word
		WHERE w.pages IS NOT v.doc`,
	// The short pages differ between an updated index and a rebuilt one
	// (the tier is chosen anew); what must hold in both is that they are
	// the pages of at most the tier's words, titles and text alike: the
	// pages where that fails.
	"fts_short": `SELECT f.path FROM files f LEFT JOIN fts_short_docsize s ON s.id = f.id
		LEFT JOIN fts_title_short_docsize t ON t.id = f.id
		WHERE f.words IS NOT NULL AND ((s.id IS NULL) = (f.words <= coalesce((SELECT words FROM fts_tier), -1))
			OR (s.id IS NULL) != (t.id IS NULL))`,
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
