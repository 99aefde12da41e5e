package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"cairn"
	"cairn/index"
	"cairn/markdown"
)

// prefixWords is the most words a prefix's page count sums; a prefix
// starting more words counts as being in every page (as in SQLite).
const prefixWords = 64

// ftsQuery returns the tsquery of terms: every term, quoted, prefixes
// followed by :*. A term is cut as words are (maxLexeme).
func ftsQuery(terms []index.FullTextTerm) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteString(ftsQuote(t.Word))
		if t.Prefix {
			b.WriteString(":*")
		}
	}
	return b.String()
}

// ftsQuote quotes a word as a lexeme of a tsquery.
func ftsQuote(w string) string {
	if len(w) > maxLexeme {
		cut := maxLexeme
		for cut > 0 && !utf8.RuneStart(w[cut]) {
			cut--
		}
		w = w[:cut]
	}
	return `'` + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(w) + `'`
}

// Search returns the pages matching every term in the order Storage
// defines: those whose title holds every term, then fewer words, then
// path, with the totals that score them, in one statement (searchSQL).
// Each of the two groups is ranked among the shortest pages first, where
// a word found in most pages has enough matches for the first results,
// then among the next shortest, and among every page only when neither
// had enough. Pages with words in fts_more are looked for apart
// (withMore).
func (r *indexReader) Search(ctx context.Context, q index.FullTextQuery) ([]index.SearchHit, error) {
	if len(q.Terms) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "index: a search needs a word to look for")
	}
	if r.w != nil {
		if err := r.w.saveText(ctx); err != nil {
			return nil, err
		}
	}
	limit := max(q.Limit, 1)
	lo, hi := vocabRanges(q.Terms)
	filter, fargs := searchFilter(q, 4)
	args := append([]any{ftsQuery(q.Terms), lo, hi}, fargs...)
	var under string // the folder's files, when they are read first
	if q.Folder != "" {
		first, none, err := r.folderFirst(ctx, q.Folder, limit)
		if err != nil || none {
			return nil, err
		}
		if first != nil {
			under = fmt.Sprintf(`SELECT file AS id FROM keys WHERE step = %d AND value >= $%d AND value < $%d`,
				markdown.StepFile, len(args)+1, len(args)+2)
			args = append(args, first...)
		}
	}
	rows, err := r.query(ctx, searchSQL(filter, under, limit), args...)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	var hits []ranked
	var st searchTotals
	for rows.Next() {
		var h ranked
		var blob []byte
		var words int32
		if err := rows.Scan(&h.InTitle, &h.id, &words, &h.Path, &h.ID, &h.Title, &h.Type, &blob,
			&st.pages, &st.words, &st.more, &st.vocabWords, &st.vocabPages); err != nil {
			rows.Close()
			return nil, fmt.Errorf("index: search: %w", r.db.translate(err))
		}
		h.words, h.Blob = int64(words), cairn.Hash(blob)
		hits = append(hits, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: search: %w", r.db.translate(err))
	}
	if len(hits) == 0 || st.more > 0 {
		// No hit brought the totals; or some pages are in fts_more.
		if err := r.totals(ctx, &st); err != nil {
			return nil, err
		}
		if st.more > 0 {
			if hits, err = r.withMore(ctx, q, hits, limit); err != nil {
				return nil, err
			}
		}
		if len(hits) == 0 {
			return nil, nil
		}
		if st.vocabWords == nil {
			if err := r.vocabulary(ctx, lo, hi, &st); err != nil {
				return nil, err
			}
		}
	}
	ts := st.stats()
	out := make([]index.SearchHit, len(hits))
	for i, h := range hits {
		h.Words = int(h.words)
		h.Score = ts.Score(h.Words)
		out[i] = h.SearchHit
	}
	return out, nil
}

// TextStats returns the full text's totals and the pages holding each
// term, as Search weighs by them.
func (r *indexReader) TextStats(ctx context.Context, terms []index.FullTextTerm) (index.TextStats, error) {
	if r.w != nil {
		if err := r.w.saveText(ctx); err != nil {
			return index.TextStats{}, err
		}
	}
	var st searchTotals
	if err := r.totals(ctx, &st); err != nil {
		return index.TextStats{}, err
	}
	if len(terms) == 0 {
		return st.stats(), nil
	}
	lo, hi := vocabRanges(terms)
	if err := r.vocabulary(ctx, lo, hi, &st); err != nil {
		return index.TextStats{}, err
	}
	return st.stats(), nil
}

// totals reads the full text's totals into st.
func (r *indexReader) totals(ctx context.Context, st *searchTotals) error {
	if err := r.queryRow(ctx, `SELECT pages, words, more FROM fts_stats WHERE id = 1`, nil, &st.pages, &st.words, &st.more); err != nil {
		return fmt.Errorf("index: search: %w", err)
	}
	return nil
}

// vocabulary reads into st the words and pages of the vocabulary's ranges
// (vocabRanges).
func (r *indexReader) vocabulary(ctx context.Context, lo, hi []string, st *searchTotals) error {
	if err := r.queryRow(ctx, `WITH `+vocabCTE(1, 2)+` SELECT `+vocabColumns, []any{lo, hi}, &st.vocabWords, &st.vocabPages); err != nil {
		return fmt.Errorf("index: search: %w", err)
	}
	return nil
}

// stats is what the scores weigh by: a prefix starting more than
// prefixWords words counts as being in every page.
func (st searchTotals) stats() index.TextStats {
	ts := index.TextStats{Pages: st.pages, Words: st.words, Holding: st.vocabPages, Broad: make([]bool, len(st.vocabWords))}
	for i, n := range st.vocabWords {
		ts.Broad[i] = n > prefixWords
	}
	return ts
}

// searchTotals are what a search's score weighs by: the full text's
// totals, and for each term the words of the vocabulary it names (one, or
// for a prefix the words it starts, up to prefixWords+1) and the pages
// holding them.
type searchTotals struct {
	pages, words           int64
	more                   int32
	vocabWords, vocabPages []int64
}

// ranked is a hit with the length that ranks it.
type ranked struct {
	index.SearchHit
	id, words int64
}

// vocabRanges returns the range of the vocabulary each term names: the
// word itself, or every word a prefix starts.
func vocabRanges(terms []index.FullTextTerm) (lo, hi []string) {
	lo, hi = make([]string, len(terms)), make([]string, len(terms))
	for i, t := range terms {
		lo[i], hi[i] = t.Word, t.Word+"\x01"
		if t.Prefix {
			hi[i] = t.Word + "\U0010FFFF"
		}
	}
	return lo, hi
}

// vocabCTE is v, which for each range of the vocabulary (its bounds the
// arrays of parameters lo and hi) says how many words of it hold pages
// (up to prefixWords+1) and how many pages hold them; vocabColumns select
// them as arrays.
func vocabCTE(lo, hi int) string {
	return fmt.Sprintf(`v AS (SELECT t.i, count(v.pages) AS words, coalesce(sum(v.pages), 0) AS pages
		FROM unnest($%d::text[], $%d::text[]) WITH ORDINALITY t (lo, hi, i)
		LEFT JOIN LATERAL (SELECT pages FROM fts_vocab WHERE word >= t.lo AND word < t.hi AND pages > 0
			ORDER BY word LIMIT %d) v ON true GROUP BY t.i)`, lo, hi, prefixWords+1)
}

const vocabColumns = `(SELECT array_agg(words ORDER BY i) FROM v), (SELECT array_agg(pages ORDER BY i) FROM v)`

// searchSQL is the statement of a search for limit pages whose filter
// (" AND ..." on files f) keeps the pages of a type or folder: $1 the
// tsquery, $2 and $3 the vocabulary's ranges (vocabRanges), the filter's
// from $4. The limit is written in the statement, not a parameter: then
// PostgreSQL soon plans the statement once for every search (a generic
// plan), where it planned each search again.
//
// Each group (the title's matches, then the text's that are not the
// title's) takes the first matches among the shortest pages (fts_short)
// when they are enough, else among the next shortest (fts_mid), else
// among every page: every page of a tier has fewer words than every page
// outside it, so enough matches there are the first of all. A part of the
// statement whose condition on what came before is false is not run.
//
// Unless under is not "": a statement selecting the ids of a few files
// (a folder's, folderFirst), whose pages alone are matched.
func searchSQL(filter, under string, limit int) string {
	if under != "" {
		query := `WITH ` + vocabCTE(2, 3) + `,
	u AS MATERIALIZED (` + under + `)
	SELECT m.title @@ $1::tsquery AS in_title, f.id, m.words, f.path, coalesce(f.page_id, left(f.path, -3)), coalesce(f.title, ''),
		coalesce(f.type, ''), f.blob, s.pages, s.words, s.more, ` + vocabColumns + `
	FROM u JOIN fts m ON m.id = u.id JOIN files f ON f.id = u.id CROSS JOIN fts_stats s
	WHERE m.body @@ $1::tsquery AND NOT m.more` + filter + `
	ORDER BY in_title DESC, m.words, f.path LIMIT {k}`
		return strings.ReplaceAll(query, "{k}", strconv.Itoa(limit))
	}
	matches := func(table string, title bool) string {
		where := `m.body @@ $1::tsquery AND NOT m.title @@ $1::tsquery`
		if title {
			where = `m.title @@ $1::tsquery`
		}
		if table == "fts" {
			where += ` AND NOT m.more`
		}
		if filter == "" {
			// The matches of the first lengths, ties included: only they
			// are joined with their files, for their paths.
			return `SELECT m.id, m.words FROM ` + table + ` m WHERE ` + where + ` ORDER BY m.words FETCH FIRST {k} ROWS WITH TIES`
		}
		return `SELECT m.id, m.words FROM ` + table + ` m JOIN files f ON f.id = m.id WHERE ` + where + filter + ` ORDER BY m.words, f.path LIMIT {k}`
	}
	// group makes the parts of the statement that find the first need
	// matches (an expression) of a group into name, when gate (an
	// expression; "" for none) holds.
	var ctes []string
	group := func(name string, title bool, need, gate string) {
		var short []string // the tiers before this one had too few
		if gate != "" {
			short = append(short, gate)
		}
		var union []string
		levels := []string{"fts_short", "fts_mid", "fts"}
		for i, table := range levels {
			level := fmt.Sprintf("%s%d", name, i)
			part := `SELECT * FROM (` + matches(table, title) + `) x`
			if len(short) > 0 {
				part += ` WHERE ` + strings.Join(short, " AND ")
			}
			ctes = append(ctes, level+` AS MATERIALIZED (`+part+`)`)
			count := `(SELECT count(*) FROM ` + level + `)`
			if i < len(levels)-1 {
				union = append(union, `SELECT * FROM `+level+` WHERE `+strings.Join(append(slices.Clone(short), count+` >= `+need), " AND "))
			} else {
				union = append(union, `SELECT * FROM `+level)
			}
			short = append(short, count+` < `+need)
		}
		ctes = append(ctes, name+` AS (`+strings.Join(union, "\n\t\tUNION ALL ")+`)`)
	}
	group("t", true, "{k}", "")
	group("b", false, "({k} - (SELECT count(*) FROM t))", "(SELECT count(*) FROM t) < {k}")
	query := `WITH ` + vocabCTE(2, 3) + `,
	` + strings.Join(ctes, ",\n\t") + `,
	hits AS (SELECT true AS in_title, id, words FROM t UNION ALL SELECT false, id, words FROM b)
	SELECT h.in_title, f.id, h.words, f.path, coalesce(f.page_id, left(f.path, -3)), coalesce(f.title, ''), coalesce(f.type, ''), f.blob,
		s.pages, s.words, s.more, ` + vocabColumns + `
	FROM hits h CROSS JOIN LATERAL (SELECT * FROM files WHERE id = h.id OFFSET 0) f, fts_stats s
	ORDER BY h.in_title DESC, h.words, f.path LIMIT {k}`
	return strings.ReplaceAll(query, "{k}", strconv.Itoa(limit))
}

// folderFirst returns the bounds of the folded path keys of the files
// under folder (a path ending in "/") when a search for limit pages reads
// them first (index.FolderFirst): else the tiers' matches are read in
// order until enough are under the folder, which for a folder of few
// pages is nearly every match. Nil when not; none when the folder holds
// no file. searchFilter keeps those of the keys' files that are under
// the folder (index.FolderKeys).
func (r *indexReader) folderFirst(ctx context.Context, folder string, limit int) (bounds []any, none bool, err error) {
	lo, hi := index.FolderKeys(folder)
	var files, pages int64
	// The files are counted up to index.FolderFiles, here from the pages.
	err = r.queryRow(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM (SELECT 1 FROM keys WHERE value >= $1 AND value < $2 AND step = %d
			LIMIT floor(sqrt(%d::float8 * s.pages))::bigint + 1) x), s.pages FROM fts_stats s WHERE s.id = 1`,
		markdown.StepFile, limit+1), []any{lo, hi}, &files, &pages)
	if err != nil {
		return nil, false, fmt.Errorf("index: search: files under %s: %w", folder, err)
	}
	if !index.FolderFirst(files, int64(limit), pages) {
		return nil, files == 0, nil
	}
	return []any{lo, hi}, files == 0, nil
}

// searchFilter is the SQL that keeps the pages of q's type and folder,
// its parameters numbered from first.
func searchFilter(q index.FullTextQuery, first int) (string, []any) {
	var sql string
	var args []any
	if q.Type != "" {
		args = append(args, q.Type)
		sql += fmt.Sprintf(` AND f.type = $%d`, first+len(args)-1)
	}
	if q.Folder != "" {
		// lower() of a "C" column folds ASCII letters only.
		args = append(args, asciiLower(q.Folder))
		sql += fmt.Sprintf(` AND starts_with(lower(f.path), $%d)`, first+len(args)-1)
	}
	return sql, args
}

// asciiLower folds the ASCII letters of s to lower case.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// withMore merges into hits the pages with words in fts_more that match,
// which searchSQL leaves out: each term is looked for in every part of
// the page.
func (r *indexReader) withMore(ctx context.Context, q index.FullTextQuery, hits []ranked, limit int) ([]ranked, error) {
	terms := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		terms[i] = ftsQuery([]index.FullTextTerm{t})
	}
	holds := func(col string, title bool) string {
		return fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM unnest($1::text[]::tsquery[]) q WHERE NOT (m.%s @@ q
			OR EXISTS (SELECT 1 FROM fts_more p WHERE p.id = m.id AND p.title = %t AND p.lexemes @@ q)))`, col, title)
	}
	filter, args := searchFilter(q, 2)
	rows, err := r.query(ctx, `SELECT `+holds("title", true)+`, f.id, m.words, f.path, coalesce(f.page_id, left(f.path, -3)),
		coalesce(f.title, ''), coalesce(f.type, ''), f.blob FROM fts m JOIN files f ON f.id = m.id
		WHERE m.more AND `+holds("body", false)+filter, append([]any{terms}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h ranked
		var blob []byte
		var words int32
		if err := rows.Scan(&h.InTitle, &h.id, &words, &h.Path, &h.ID, &h.Title, &h.Type, &blob); err != nil {
			return nil, fmt.Errorf("index: search: %w", r.db.translate(err))
		}
		h.words, h.Blob = int64(words), cairn.Hash(blob)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: search: %w", r.db.translate(err))
	}
	slices.SortFunc(hits, func(a, b ranked) int {
		return cmp.Or(-cmp.Compare(b2i(a.InTitle), b2i(b.InTitle)), cmp.Compare(a.words, b.words), strings.Compare(a.Path, b.Path))
	})
	return hits[:min(len(hits), limit)], nil
}

// indexSnapshotQueries select every row of each table with file ids
// replaced by paths, values as text as SQLite's snapshot shows them (the
// tables both keep give the same lines).
func indexSnapshotQueries() map[string]string {
	return map[string]string{
		"files": `SELECT path, kind::text, upper(encode(blob, 'hex')), size::text, page_id, title, title_source::text, type,
		frontmatter, aliases, sources, headings, block_ids, problems, inbound::text, depth::text, words::text FROM files`,
		"keys": `SELECT k.value, k.step::text, f.path FROM keys k JOIN files f ON f.id = k.file`,
		"links": `SELECT s.path, l.ord::text, l.flags::text, l.status::text, d.path, l.step::text, l.detail, upper(encode(l.link, 'hex'))
		FROM links l JOIN files s ON s.id = l.src LEFT JOIN files d ON d.id = l.dst`,
		"link_keys": `SELECT k.hash::text, s.path, k.ord::text FROM link_keys k JOIN files s ON s.id = k.src`,
		"cites":     `SELECT c.value, f.path FROM cites c JOIN files f ON f.id = c.file`,
		"fields":    `SELECT x.name, x.value, x.num, f.path FROM fields x JOIN files f ON f.id = x.file`,
		"findings":  `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM findings n JOIN files f ON f.id = n.file`,
		"fts":       `SELECT f.path, t.words::text FROM fts t JOIN files f ON f.id = t.id`,
		"fts_title": `SELECT f.path, t.words::text FROM fts t JOIN files f ON f.id = t.id`,
		// What the full text holds of each page: its length and a digest of
		// its words (parts included), the words' page counts and the totals.
		"fts_text": `SELECT f.path, t.words::text, t.more::text, md5(t.title::text), md5(t.body::text),
		coalesce((SELECT string_agg(p.title::text || ':' || p.part::text || ':' || md5(p.lexemes::text), ',' ORDER BY p.title, p.part)
			FROM fts_more p WHERE p.id = t.id), '')
		FROM fts t JOIN files f ON f.id = t.id`,
		"fts_vocab": `SELECT word, pages::text FROM fts_vocab WHERE pages > 0`,
		"fts_stats": `SELECT pages::text, words::text, more::text FROM fts_stats`,
		// The tiers differ between an updated index and a rebuilt one
		// (their bounds are chosen anew); what must hold in both is that
		// each holds the pages of at most its bound's words, with their
		// text, and that its count is right: the pages where that fails,
		// and the count if it is wrong.
		"fts_short": tierSnapshot("fts_short", "short_words", "short"),
		"fts_mid":   tierSnapshot("fts_mid", "mid_words", "mid"),
	}
}

// tierSnapshot selects what is wrong with a tier (see
// indexSnapshotQueries).
func tierSnapshot(table, bound, count string) string {
	return `SELECT f.path FROM fts t JOIN files f ON f.id = t.id LEFT JOIN ` + table + ` x ON x.id = t.id, fts_stats s
		WHERE (x.id IS NOT NULL) != (NOT t.more AND s.` + bound + ` >= 0 AND t.words <= s.` + bound + `)
			OR x.id IS NOT NULL AND (x.words != t.words OR x.title != t.title OR x.body != t.body)
		UNION ALL SELECT '` + table + `: ' || s.` + count + `::text || ' pages' FROM fts_stats s
		WHERE s.` + count + ` != (SELECT count(*) FROM ` + table + `)`
}

// Snapshot returns every row of every table of the index as a line of
// its values separated by " | ", NULL for none, sorted.
func (r *indexReader) Snapshot(ctx context.Context) (map[string][]string, error) {
	if r.w != nil {
		if err := r.w.saveText(ctx); err != nil {
			return nil, err
		}
	}
	out := map[string][]string{}
	for table, query := range indexSnapshotQueries() {
		lines, err := r.snapshotTable(ctx, query)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", table, err)
		}
		out[table] = lines
	}
	return out, nil
}

func (r *indexReader) snapshotTable(ctx context.Context, query string) ([]string, error) {
	var lines []string
	if err := r.eachLine(ctx, query, func(l string) { lines = append(lines, l) }); err != nil {
		return nil, err
	}
	slices.Sort(lines)
	return lines, nil
}

// eachLine calls each with every row of query as a line of its values
// separated by " | ", NULL for none.
func (r *indexReader) eachLine(ctx context.Context, query string, each func(string)) error {
	return r.eachLineOf(ctx, query, -1, func(line string, _ []string) { each(line) })
}

// eachLineOf is eachLine of the first n columns of each row (all when n
// is negative), with the values of the others as they are.
func (r *indexReader) eachLineOf(ctx context.Context, query string, n int, each func(line string, rest []string)) error {
	rows, err := r.query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return r.db.translate(err)
		}
		parts = parts[:0]
		for _, v := range vals {
			if v == nil {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, fmt.Sprint(v))
			}
		}
		m := n
		if m < 0 {
			m = len(parts)
		}
		each(strings.Join(parts[:m], " | "), parts[m:])
	}
	return r.db.translate(rows.Err())
}

// savedSnapshot is the temporary table in which SaveSnapshot keeps the
// rows of one of indexSnapshotQueries.
func savedSnapshot(table string) string { return "pg_temp.snapshot_" + table }

// snapshotRows is query as a subquery whose columns are named c1, c2, …
// (a snapshot's query may give two the same name, which a table may not
// have), and those names: its columns are counted first.
func (t *indexTx) snapshotRows(ctx context.Context, query string) (string, []string, error) {
	rows, err := t.query(ctx, `SELECT * FROM (`+query+`) q LIMIT 0`)
	if err != nil {
		return "", nil, err
	}
	n := len(rows.FieldDescriptions())
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", nil, t.db.translate(err)
	}
	cols := make([]string, n)
	for i := range cols {
		cols[i] = "c" + strconv.Itoa(i+1)
	}
	return `SELECT * FROM (` + query + `) q (` + strings.Join(cols, ", ") + `)`, cols, nil
}

// SaveSnapshot keeps what Snapshot would give in temporary tables, which
// SnapshotDrift and the transaction's end drop; nothing, returning false,
// when the role may not make temporary tables.
func (t *indexTx) SaveSnapshot(ctx context.Context) (bool, error) {
	if err := t.saveText(ctx); err != nil {
		return false, err
	}
	var temp bool
	if err := t.queryRow(ctx, `SELECT has_database_privilege(current_database(), 'TEMP')`, nil, &temp); err != nil {
		return false, fmt.Errorf("save snapshot: %w", err)
	}
	if !temp {
		return false, nil
	}
	for table, query := range indexSnapshotQueries() {
		rows, _, err := t.snapshotRows(ctx, query)
		if err != nil {
			return false, fmt.Errorf("save snapshot %s: %w", table, err)
		}
		if err := t.exec(ctx, "save snapshot", `DROP TABLE IF EXISTS `+savedSnapshot(table)); err != nil {
			return false, err
		}
		if err := t.exec(ctx, "save snapshot", `CREATE TEMP TABLE `+strings.TrimPrefix(savedSnapshot(table), "pg_temp.")+` ON COMMIT DROP AS `+rows); err != nil {
			return false, err
		}
	}
	return true, t.sendQueued(ctx)
}

// SnapshotDrift compares the rows with those SaveSnapshot kept, and drops
// them: both sets of a table grouped together by every column, the
// groups of one side only are its drift (one run of each table's query,
// where EXCEPT each way ran it twice).
func (t *indexTx) SnapshotDrift(ctx context.Context, limit int) ([]index.TableDrift, error) {
	if err := t.saveText(ctx); err != nil {
		return nil, err
	}
	var out []index.TableDrift
	for table, query := range indexSnapshotQueries() {
		now, cols, err := t.snapshotRows(ctx, query)
		if err != nil {
			return nil, fmt.Errorf("snapshot drift %s: %w", table, err)
		}
		d := index.TableDrift{Table: table}
		grouped := `SELECT ` + strings.Join(cols, ", ") + `, min(side) FROM (SELECT *, 1 AS side FROM (` + now + `) n
			UNION ALL SELECT *, 2 FROM ` + savedSnapshot(table) + `) u
			GROUP BY ` + strings.Join(cols, ", ") + ` HAVING min(side) = max(side)`
		err = t.eachLineOf(ctx, grouped, len(cols), func(line string, rest []string) {
			if rest[0] == "1" {
				d.AddedAll++
				d.Added = index.KeepFirst(d.Added, line, limit)
			} else {
				d.GoneAll++
				d.Gone = index.KeepFirst(d.Gone, line, limit)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("snapshot drift %s: %w", table, err)
		}
		if err := t.exec(ctx, "snapshot drift", `DROP TABLE `+savedSnapshot(table)); err != nil {
			return nil, err
		}
		if d.AddedAll > 0 || d.GoneAll > 0 {
			out = append(out, d)
		}
	}
	return out, nil
}
