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

// rareType: a search with no MATCH and a type filter reads the pages of
// the type first when they are under 1/rareType of all pages (search's
// byType): at 100k pages, reading the keys in order took 245 ms for a
// type of none and 21 ms for a type of a quarter of them, and the type's
// pages first 98 ms for that quarter.
const rareType = 10

// prefixWords is the most words a prefix's page count sums (the
// vocabulary counts a word's pages by reading them all); a prefix
// starting more words counts as being in every page.
const prefixWords = 64

// Search returns the pages matching every term in the order Storage
// defines: those whose title holds every term, then fewer words, then
// path. Each group is read from its table shortest page first (see rank).
func (r *indexReader) Search(ctx context.Context, q index.FullTextQuery) ([]index.SearchHit, error) {
	if len(q.Terms) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "index: a search needs a word to look for")
	}
	ts, err := r.TextStats(ctx, q.Terms)
	if err != nil || ts.Pages == 0 {
		return nil, err
	}
	// A prefix of one or two letters that starts many words is checked
	// against each page's initials, not handed to FTS5 (see initials),
	// unless a page lacks them.
	s := &search{r: r}
	var rest []index.FullTextTerm
	for i, t := range q.Terms {
		if bit := initialBit(t.Word); t.Prefix && ts.Broad[i] && bit >= 0 {
			s.initials = append(s.initials, bit)
			continue
		}
		rest = append(rest, t)
	}
	if len(s.initials) > 0 {
		unknown, err := r.unknownInitials(ctx)
		if err != nil {
			return nil, err
		}
		if unknown {
			s.initials, rest = nil, q.Terms
		}
	}
	if len(rest) > 0 {
		s.expr = ftsMatch(rest)
	} else if q.Type != "" {
		// With no MATCH, the keys are read in order (see query), which
		// stops early unless the type is rare: then its pages, found
		// through their index and sorted, are fewer to read.
		var n int64
		if err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM files WHERE type = ?`, q.Type).Scan(&n); err != nil {
			return nil, fmt.Errorf("index: search: pages of type %s: %w", q.Type, translate(err))
		}
		s.byType = n*rareType < ts.Pages
	}
	if q.Folder != "" {
		// A folder's files are found through their path keys, and when
		// they are few (FolderFirst) only they are read: with no MATCH,
		// else the keys are read in order until enough of them are under
		// it, which for a folder of few pages is nearly all of them; with
		// a MATCH, its matches are kept by their files alone before their
		// rows are read. (A MATCH of each page of the folder by its rowid
		// was slower for a word in one page of eight.)
		limit := int64(max(q.Limit, 1))
		under, n, err := r.filesUnder(ctx, q.Folder, index.FolderFiles(limit, ts.Pages))
		if err != nil || n == 0 {
			return nil, err
		}
		if index.FolderFirst(n, limit, ts.Pages) {
			s.under = under
		}
	}
	s.filter, s.args = searchFilter(q)
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
			seen[i] = h.key
		}
		rest, err := s.rank(ctx, "fts", limit-len(hits), seen)
		if err != nil {
			return nil, err
		}
		hits = append(hits, rest...)
	}
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
	st, err := r.textTotals(ctx)
	if err != nil {
		return index.TextStats{}, err
	}
	out := index.TextStats{Pages: st.pages, Words: st.words, Holding: make([]int64, len(terms)), Broad: make([]bool, len(terms))}
	if st.pages == 0 {
		return out, nil
	}
	holding, broad, err := r.pagesHolding(ctx, terms, st.pages)
	if err != nil {
		return index.TextStats{}, err
	}
	for i, n := range holding {
		out.Holding[i], out.Broad[i] = int64(n), broad[i]
	}
	return out, nil
}

// unknownInitials reports whether a page of the full text lacks its
// initials: a cairn from before them wrote its row (its writes leave them
// NULL; cairn reindex writes them again).
func (r *indexReader) unknownInitials(ctx context.Context) (bool, error) {
	var unknown bool
	err := r.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM fts_keys WHERE text_initials IS NULL OR title_initials IS NULL)`).Scan(&unknown)
	if err != nil {
		return false, fmt.Errorf("index: search: pages without initials: %w", translate(err))
	}
	return unknown, nil
}

// search is one full-text search being ranked.
type search struct {
	r        *indexReader
	expr     string // the MATCH expression; "" for none (every term is in initials)
	initials []int  // the bits of the initials a page must have (initialBit)
	byType   bool   // with no MATCH, the pages of the filter's type are read first
	filter   string // " AND ..." on files f, for Type and Folder
	args     []any  // filter's
	// under, when set, bounds the folded path keys of the folder's files
	// (filesUnder): with no MATCH they are read first, and only they;
	// with one, only their matches are read.
	under []any
}

// ranked is a hit with its text key and the length that ranks it.
type ranked struct {
	index.SearchHit
	key, words int64
}

// filesUnder returns the bounds of the folded path keys of the files
// under folder (index.FolderKeys), and how many files have one, up to
// most; searchFilter keeps those under the folder.
func (r *indexReader) filesUnder(ctx context.Context, folder string, most int64) ([]any, int64, error) {
	lo, hi := index.FolderKeys(folder)
	var n int64
	err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM keys
		WHERE value >= ? AND value < ? AND step = `+indexStepFile+` LIMIT ?)`, lo, hi, most).Scan(&n)
	if err != nil {
		return nil, 0, fmt.Errorf("index: search: files under %s: %w", folder, translate(err))
	}
	return []any{lo, hi}, n, nil
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
		// length() counts characters, as substr() does.
		sql += ` AND substr(f.path, 1, length(?)) = ? COLLATE NOCASE`
		args = append(args, q.Folder, q.Folder)
	}
	return sql, args
}

// rank returns the first k matches of table (fts or fts_title) whose keys
// are not in exclude, by words and path. The table gives its matches in
// key order, fewest words first, and the query stops after k+1 of them:
// when the one after the k-th has more words, the first k are the first k
// of all; when it has as many, every match of the k-th's key words is
// read, to cut the tie by path (and by words, for pages longer than
// maxKeyWords).
func (s *search) rank(ctx context.Context, table string, k int, exclude []int64) ([]ranked, error) {
	hits, err := s.query(ctx, table, k+1, exclude, -1)
	if err != nil {
		return nil, err
	}
	if len(hits) > k {
		w := keyWords(hits[k-1].key)
		if keyWords(hits[k].key) == w {
			tie, err := s.query(ctx, table, 0, exclude, w)
			if err != nil {
				return nil, err
			}
			hits = append(slices.DeleteFunc(hits, func(h ranked) bool { return keyWords(h.key) >= w }), tie...)
		}
	}
	slices.SortFunc(hits, func(a, b ranked) int { return cmp.Or(cmp.Compare(a.words, b.words), strings.Compare(a.Path, b.Path)) })
	return hits[:min(k, len(hits))], nil
}

// query returns, in key order, the matches of table whose keys are not in
// exclude: the first limit of them, or when words is not negative every
// match whose key leads with words.
func (s *search) query(ctx context.Context, table string, limit int, exclude []int64, words int64) ([]ranked, error) {
	// Without a MATCH, the keys are read in order and each page's
	// initials checked: CROSS JOIN keeps the keys the outer loop, or a
	// filter by type has SQLite read every page of the type through its
	// index and sort them all, which only a rare type wants (byType).
	key, from, where := `k.key`, `fts_keys k CROSS JOIN files f ON f.id = k.file`, `TRUE`
	if s.byType {
		from = `fts_keys k JOIN files f ON f.id = k.file`
	}
	var args []any
	switch {
	case s.expr != "":
		key, from, where = table+`.rowid`, table+` JOIN fts_keys k ON k.key = `+table+`.rowid JOIN files f ON f.id = k.file`, table+` MATCH ?`
		args = append(args, s.expr)
		if s.under != nil { // the matches of the folder's files
			where += ` AND k.file IN (SELECT p.file FROM keys p WHERE p.value >= ? AND p.value < ? AND p.step = ` + indexStepFile + `)`
			args = append(args, s.under...)
		}
	case s.under != nil: // no MATCH: the folder's files by their path keys
		from = `keys p CROSS JOIN files f ON f.id = p.file CROSS JOIN fts_keys k ON k.file = f.id`
		where = `p.value >= ? AND p.value < ? AND p.step = ` + indexStepFile
		args = append(args, s.under...)
	}
	initials := `k.text_initials`
	if table == "fts_title" {
		initials = `k.title_initials`
	}
	for _, bit := range s.initials {
		where += ` AND cairn_initial(` + initials + `, ?)`
		args = append(args, bit)
	}
	query := `SELECT ` + key + `, f.words, f.path, coalesce(f.page_id, substr(f.path, 1, length(f.path) - 3)), f.title,
		coalesce(f.type, ''), f.blob FROM ` + from + `
		WHERE ` + where + ` AND f.words IS NOT NULL` + s.filter
	args = append(args, s.args...)
	if len(exclude) > 0 {
		query += ` AND ` + key + ` NOT IN (?` + strings.Repeat(`, ?`, len(exclude)-1) + `)`
		for _, key := range exclude {
			args = append(args, key)
		}
	}
	if words >= 0 {
		query += ` AND ` + key + ` >= ? AND ` + key + ` < ?`
		args = append(args, words<<keySlotBits, (words+1)<<keySlotBits)
	}
	query += ` ORDER BY ` + key
	if limit > 0 {
		query += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", translate(err))
	}
	defer rows.Close()
	var out []ranked
	for rows.Next() {
		var h ranked
		var blob []byte
		if err := rows.Scan(&h.key, &h.words, &h.Path, &h.ID, &h.Title, &h.Type, &blob); err != nil {
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
// (up to prefixWords of them, else every page), which may exceed pages;
// and which terms are prefixes that start more than prefixWords words.
func (r *indexReader) pagesHolding(ctx context.Context, terms []index.FullTextTerm, pages int64) ([]float64, []bool, error) {
	out := make([]float64, len(terms))
	broad := make([]bool, len(terms))
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
				n, broad[i] = float64(pages), true
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("index: search: pages holding %q: %w", t.Word, translate(err))
		}
		out[i] = n
	}
	return out, broad, nil
}

// textTotals are the full text's totals that BM25 weighs by.
type textTotals struct {
	pages, words int64
	avgWords     float64
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
	t := textTotals{pages: int64(rows), words: int64(words)}
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

// keyBits is keySlotBits in SQL.
var keyBits = strconv.Itoa(keySlotBits)

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
	// Each page of the full text, with the word count its key leads with
	// (slots are handed out as pages come, so they differ between an
	// updated index and a rebuilt one).
	"fts":       `SELECT f.path, k.key >> ` + keyBits + ` FROM fts JOIN fts_keys k ON k.key = fts.rowid JOIN files f ON f.id = k.file`,
	"fts_title": `SELECT f.path, k.key >> ` + keyBits + ` FROM fts_title JOIN fts_keys k ON k.key = fts_title.rowid JOIN files f ON f.id = k.file`,
	// Each page's initials (SQLite's own: see initials).
	"fts_initials": `SELECT f.path, quote(k.text_initials), quote(k.title_initials) FROM fts_keys k JOIN files f ON f.id = k.file`,
	// The rows of the full text or of its keys that have no counterpart,
	// or whose key does not lead with their page's word count (up to
	// maxKeyWords).
	"fts_key_drift": `SELECT 'text ' || fts.rowid FROM fts LEFT JOIN fts_keys k ON k.key = fts.rowid LEFT JOIN files f ON f.id = k.file
			WHERE f.words IS NULL OR fts.rowid >> ` + keyBits + ` != min(f.words, ` + strconv.Itoa(maxKeyWords) + `)
		UNION ALL SELECT 'title ' || fts_title.rowid FROM fts_title LEFT JOIN fts_keys k ON k.key = fts_title.rowid WHERE k.key IS NULL
		UNION ALL SELECT 'key ' || k.key FROM fts_keys k LEFT JOIN fts_docsize d ON d.id = k.key WHERE d.id IS NULL`,
	// The page counts kept as pages change, and beside them the full
	// text's own count of each word: they must agree.
	"fts_words": `SELECT word, pages FROM fts_words`,
	// Not a FULL JOIN: SQLite joins the virtual table fts_vocab by
	// scanning it for every row of fts_words (a minute for 27,000 words);
	// each side here reads the other by its key. fts5vocab looks a term
	// up only for a comparison in BINARY: fts_words.word must keep that
	// collation, or this is quadratic again (BenchmarkCheckDeep).
	"fts_words_drift": `SELECT v.term, w.pages, v.doc FROM fts_vocab v LEFT JOIN fts_words w ON w.word = v.term
			WHERE v.doc > 0 AND w.pages IS NOT v.doc
		UNION ALL SELECT w.word, w.pages, NULL FROM fts_words w
			WHERE NOT EXISTS (SELECT 1 FROM fts_vocab v WHERE v.term = w.word AND v.doc > 0)`,
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
	rows, err := r.q.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	parts := make([]string, len(vals))
	if n < 0 {
		n = len(parts)
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			if v.Valid {
				parts[i] = v.String
			} else {
				parts[i] = "NULL"
			}
		}
		each(strings.Join(parts[:n], " | "), parts[n:])
	}
	return rows.Err()
}

// shadowedTables are the index's tables, as Shadow makes them again.
var shadowedTables = []string{"files", "keys", "links", "link_keys", "cites", "fields", "findings",
	"fts", "fts_title", "fts_keys", "fts_words", "fts_vocab", "index_state"}

// Shadow makes, in the transaction's temporary schema, an empty table of
// each of the index's tables (index.Shadower): the same definition from
// the database's own schema, its indexes (a full build drops and makes
// them by name), the full text's settings. SQLite looks an unqualified
// name up in the temporary schema first, so from here on every statement
// of the transaction reads and writes the shadows; the store's tables
// are not shadowed. Statements prepared before are closed, to be prepared
// again against the shadows. A rollback drops them.
func (t *indexTx) Shadow(ctx context.Context) error {
	if err := t.flushText(ctx); err != nil {
		return err
	}
	names := `'` + strings.Join(shadowedTables, `', '`) + `'`
	rows, err := t.p.tx.QueryContext(ctx, `SELECT type, name, sql FROM main.sqlite_master
		WHERE tbl_name IN (`+names+`) AND sql IS NOT NULL ORDER BY type = 'index', name`)
	if err != nil {
		return fmt.Errorf("index: shadow: %w", translate(err))
	}
	var stmts []string
	for rows.Next() {
		var kind, name, sql string
		if err := rows.Scan(&kind, &name, &sql); err != nil {
			rows.Close()
			return fmt.Errorf("index: shadow: %w", translate(err))
		}
		shadow, ok := shadowSQL(kind, name, sql)
		if !ok {
			rows.Close()
			return cairn.Errorf(cairn.EINTERNAL, "index: shadow: cannot shadow %s %s: %.60s", kind, name, sql)
		}
		stmts = append(stmts, shadow)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("index: shadow: %w", translate(err))
	}
	// The full text's settings (its hash size), but its version.
	for _, vt := range []string{"fts", "fts_title"} {
		stmts = append(stmts, `INSERT INTO temp.`+vt+` (`+vt+`, rank) SELECT k, v FROM main.`+vt+`_config WHERE k != 'version'`)
	}
	if err := t.p.close(); err != nil {
		return err
	}
	clear(t.p.stmts)
	for _, q := range stmts {
		if _, err := t.p.tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("index: shadow: %.60s: %w", q, translate(err))
		}
	}
	return nil
}

// shadowSQL is the statement that makes the temporary shadow of a table or
// index of the schema, from its own definition.
func shadowSQL(kind, name, sql string) (string, bool) {
	switch {
	case kind == "index" && strings.HasPrefix(sql, "CREATE INDEX "+name+" "):
		return "CREATE INDEX temp." + strings.TrimPrefix(sql, "CREATE INDEX "), true
	case kind == "index" && strings.HasPrefix(sql, "CREATE UNIQUE INDEX "+name+" "):
		return "CREATE UNIQUE INDEX temp." + strings.TrimPrefix(sql, "CREATE UNIQUE INDEX "), true
	case kind == "table" && strings.HasPrefix(sql, "CREATE VIRTUAL TABLE "+name+" USING fts5vocab ("):
		// A vocabulary of the temporary full text names its schema.
		return "CREATE VIRTUAL TABLE temp." + name + " USING fts5vocab (temp, " + strings.TrimPrefix(sql, "CREATE VIRTUAL TABLE "+name+" USING fts5vocab ("), true
	case kind == "table" && strings.HasPrefix(sql, "CREATE VIRTUAL TABLE "+name+" "):
		return "CREATE VIRTUAL TABLE temp." + strings.TrimPrefix(sql, "CREATE VIRTUAL TABLE "), true
	case kind == "table" && strings.HasPrefix(sql, "CREATE TABLE "+name+" "):
		return "CREATE TEMP TABLE " + strings.TrimPrefix(sql, "CREATE TABLE "), true
	}
	return "", false
}

var _ index.Shadower = (*indexTx)(nil)

// savedSnapshot is the temporary table in which SaveSnapshot keeps the
// rows of one of indexSnapshotQueries.
func savedSnapshot(table string) string { return "temp.snapshot_" + table }

// SaveSnapshot keeps what Snapshot would give in temporary tables of the
// transaction's connection (in SQLite's temporary folder), which
// SnapshotDrift and a rollback drop.
func (t *indexTx) SaveSnapshot(ctx context.Context) (bool, error) {
	if err := t.flushText(ctx); err != nil {
		return false, err
	}
	for table, query := range indexSnapshotQueries {
		if err := t.exec(ctx, "save snapshot", `DROP TABLE IF EXISTS `+savedSnapshot(table)); err != nil {
			return false, err
		}
		if err := t.exec(ctx, "save snapshot", `CREATE TABLE `+savedSnapshot(table)+` AS `+query); err != nil {
			return false, err
		}
	}
	return true, nil
}

// SnapshotDrift compares the rows with those SaveSnapshot kept, and drops
// them: both sets of a table sorted together once and grouped by every
// column, the groups of one side only are its drift. (EXCEPT each way
// took half as long again.)
func (t *indexTx) SnapshotDrift(ctx context.Context, limit int) ([]index.TableDrift, error) {
	if err := t.flushText(ctx); err != nil {
		return nil, err
	}
	var out []index.TableDrift
	for table, query := range indexSnapshotQueries {
		d, err := t.tableDrift(ctx, table, query, limit)
		if err != nil {
			return nil, fmt.Errorf("snapshot drift %s: %w", table, translate(err))
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

// tableDrift is SnapshotDrift of one table.
func (t *indexTx) tableDrift(ctx context.Context, table, query string, limit int) (index.TableDrift, error) {
	d := index.TableDrift{Table: table}
	// As a subquery: some are compounds.
	rows, err := t.q.QueryContext(ctx, `SELECT * FROM (`+query+`) LIMIT 0`)
	if err != nil {
		return d, err
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil {
		return d, err
	}
	by := make([]string, len(cols))
	for i := range by {
		by[i] = strconv.Itoa(i + 1)
	}
	grouped := `SELECT *, min(side) FROM (SELECT *, 1 AS side FROM (` + query + `) UNION ALL SELECT *, 2 FROM ` + savedSnapshot(table) + `)
		GROUP BY ` + strings.Join(by, ", ") + ` HAVING min(side) = max(side)`
	err = t.eachLineOf(ctx, grouped, len(cols), func(line string, rest []string) {
		if rest[len(rest)-1] == "1" {
			d.AddedAll++
			d.Added = index.KeepFirst(d.Added, line, limit)
		} else {
			d.GoneAll++
			d.Gone = index.KeepFirst(d.Gone, line, limit)
		}
	})
	return d, err
}
