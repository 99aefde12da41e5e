package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
)

// Writes of the index inside a transaction. Rows are inserted many to a
// statement, bound straight to the driver (indexPrepared.exec): a full
// build of 10k pages writes some 200k rows.

// SetState records the commit the index reflects.
func (t *indexTx) SetState(ctx context.Context, st index.State) error {
	if err := t.saveTier(ctx); err != nil {
		return err
	}
	if err := t.saveWords(ctx); err != nil {
		return err
	}
	return t.exec(ctx, "write state", `INSERT INTO index_state (ref, commit_hash, tree) VALUES (?, ?, ?)
		ON CONFLICT (ref) DO UPDATE SET commit_hash = excluded.commit_hash, tree = excluded.tree`,
		index.Branch, st.Commit[:], st.Tree[:])
}

// NextFileID returns the next unused id of files, an AUTOINCREMENT table.
func (r *indexReader) NextFileID(ctx context.Context) (int64, error) {
	var seq sql.NullInt64
	err := r.q.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'files'`).Scan(&seq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("index: next file id: %w", translate(err))
	}
	return seq.Int64 + 1, nil
}

// The index's secondary indexes, as in the migrations: dropped while a
// full build loads rows in key order, made again afterwards.
var (
	indexDropIndexes = []string{`DROP INDEX IF EXISTS files_type`, `DROP INDEX IF EXISTS links_dst`, `DROP INDEX IF EXISTS findings_file`,
		`DROP INDEX IF EXISTS fields_name_value`, `DROP INDEX IF EXISTS fields_name_num`, `DROP INDEX IF EXISTS fields_file`}
	indexMakeIndexes = []string{
		`CREATE INDEX files_type ON files (type) WHERE type IS NOT NULL`,
		`CREATE INDEX links_dst ON links (dst) WHERE dst IS NOT NULL`,
		`CREATE INDEX findings_file ON findings (file)`,
		`CREATE INDEX fields_name_value ON fields (name, value)`,
		`CREATE INDEX fields_name_num ON fields (name, num) WHERE num IS NOT NULL`,
		`CREATE INDEX fields_file ON fields (file)`,
	}
)

// Clear removes every row and the secondary indexes.
func (t *indexTx) Clear(ctx context.Context) error {
	for _, stmt := range append([]string{
		`DELETE FROM files`, `DELETE FROM keys`, `DELETE FROM links`, `DELETE FROM link_keys`,
		`DELETE FROM cites`, `DELETE FROM fields`, `DELETE FROM findings`, `INSERT INTO fts (fts) VALUES ('delete-all')`,
		`INSERT INTO fts_title (fts_title) VALUES ('delete-all')`,
		`INSERT INTO fts_short (fts_short) VALUES ('delete-all')`,
		`INSERT INTO fts_title_short (fts_title_short) VALUES ('delete-all')`, `DELETE FROM fts_tier`,
		`DELETE FROM fts_words`,
	}, indexDropIndexes...) {
		if err := t.exec(ctx, "clear", stmt); err != nil {
			return err
		}
	}
	t.building, t.tier, t.words = &shortPages{}, nil, nil
	return nil
}

// FinishBuild makes the secondary indexes and merges the full text into
// one segment: the smallest full-text index, and the fastest to query.
func (t *indexTx) FinishBuild(ctx context.Context) error {
	for _, stmt := range indexMakeIndexes {
		if err := t.exec(ctx, "make indexes", stmt); err != nil {
			return err
		}
	}
	if t.building != nil {
		pages, tier := t.building.done()
		for _, p := range pages {
			if err := t.writeText(ctx, "_short", p.id, p.title, p.text); err != nil {
				return err
			}
		}
		t.building, t.tier = nil, &shortTierState{words: tier, pages: len(pages), changed: true}
		if err := t.saveTier(ctx); err != nil {
			return err
		}
	}
	for _, table := range []string{"fts", "fts_title", "fts_short", "fts_title_short"} {
		if err := t.exec(ctx, "full text", `INSERT INTO `+table+` (`+table+`) VALUES ('optimize')`); err != nil {
			return err
		}
	}
	// The words' page counts, read once from the merged full text (0.7 s
	// at 100k pages), rather than counted page by page in the build.
	return t.exec(ctx, "full text: words", `INSERT INTO fts_words (word, pages) SELECT term, doc FROM fts_vocab WHERE doc > 0`)
}

// indexBatch is the most rows one INSERT statement writes.
const indexBatch = 100

type indexInsertKey struct {
	head string
	rows int
}

// insert writes n rows of cols values each, with statements of up to
// indexBatch rows: head is "INSERT INTO t (a, b) VALUES ", and put appends
// row i's values to args.
func (t *indexTx) insert(ctx context.Context, what, head string, cols, n int, put func(args []any, i int) []any) error {
	return t.insertTail(ctx, what, head, "", cols, n, put)
}

// insertTail is insert with tail after each statement's rows (an ON
// CONFLICT clause).
func (t *indexTx) insertTail(ctx context.Context, what, head, tail string, cols, n int, put func(args []any, i int) []any) error {
	for start := 0; start < n; start += indexBatch {
		rows := min(indexBatch, n-start)
		k := indexInsertKey{head + tail, rows}
		q, ok := t.inserts[k]
		if !ok {
			row := "(" + placeholders(cols) + ")"
			q = head + strings.TrimSuffix(strings.Repeat(row+",", rows), ",") + tail
			if t.inserts == nil {
				t.inserts = map[indexInsertKey]string{}
			}
			t.inserts[k] = q
		}
		args := t.args[:0]
		for i := start; i < start+rows; i++ {
			args = put(args, i)
		}
		err := t.exec(ctx, what, q, args...)
		clear(args)
		t.args = args[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// indexFileValues appends a file's values from path to problems: the page
// columns are NULL for other files.
func indexFileValues(args []any, r *index.FileRow) []any {
	args = append(args, r.Path, int(r.Kind), r.Blob[:], r.Size)
	if r.Kind != lint.KindPage {
		return append(args, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
	}
	return append(args, indexNull(r.PageID), r.Title, r.TitleSource, indexNull(r.Type),
		indexNull(r.Frontmatter), indexNull(r.Aliases), indexNull(r.Sources),
		indexNull(r.Headings), indexNull(r.BlockIDs), indexNull(r.Problems), r.Words)
}

// indexNullDepth is d, or NULL when unreachable (negative).
func indexNullDepth(d int) any {
	if d < 0 {
		return nil
	}
	return d
}

// InsertFiles adds file rows.
func (t *indexTx) InsertFiles(ctx context.Context, rows []index.FileRow) error {
	return t.insert(ctx, "write files", `INSERT INTO files (id, path, kind, blob, size, page_id, title, title_source, type,
		frontmatter, aliases, sources, headings, block_ids, problems, words, inbound, depth) VALUES `, 18, len(rows),
		func(args []any, i int) []any {
			r := &rows[i]
			args = indexFileValues(append(args, r.ID), r)
			return append(args, r.Inbound, indexNullDepth(r.Depth))
		})
}

// UpdateFile replaces a file's row but for its inbound count and depth.
func (t *indexTx) UpdateFile(ctx context.Context, r index.FileRow) error {
	args := append(indexFileValues(make([]any, 0, 16), &r), r.ID)
	return t.exec(ctx, "write "+r.Path, `UPDATE files SET path = ?, kind = ?, blob = ?, size = ?, page_id = ?, title = ?,
		title_source = ?, type = ?, frontmatter = ?, aliases = ?, sources = ?, headings = ?, block_ids = ?, problems = ?,
		words = ? WHERE id = ?`, args...)
}

// DeleteFile removes a file's row.
func (t *indexTx) DeleteFile(ctx context.Context, id int64) error {
	return t.exec(ctx, "delete file", `DELETE FROM files WHERE id = ?`, id)
}

// AddInbound adds to a file's inbound count.
func (t *indexTx) AddInbound(ctx context.Context, id int64, delta int) error {
	return t.exec(ctx, "count inbound links", `UPDATE files SET inbound = inbound + ? WHERE id = ?`, delta, id)
}

// SetDepth sets a file's depth.
func (t *indexTx) SetDepth(ctx context.Context, id int64, depth int) error {
	return t.exec(ctx, "set depth", `UPDATE files SET depth = ? WHERE id = ?`, indexNullDepth(depth), id)
}

// ClearDepths makes every file unreachable.
func (t *indexTx) ClearDepths(ctx context.Context) error {
	return t.exec(ctx, "clear depths", `UPDATE files SET depth = NULL WHERE depth IS NOT NULL`)
}

// InsertKeys adds key rows.
func (t *indexTx) InsertKeys(ctx context.Context, rows []index.KeyRow) error {
	return t.insert(ctx, "write keys", `INSERT OR IGNORE INTO keys (value, step, file) VALUES `, 3, len(rows),
		func(args []any, i int) []any { return append(args, rows[i].Value, int(rows[i].Step), rows[i].File) })
}

// DeleteKeys removes a file's keys.
func (t *indexTx) DeleteKeys(ctx context.Context, file int64, keys []markdown.Key) error {
	for _, k := range keys {
		if err := t.exec(ctx, "delete keys", `DELETE FROM keys WHERE value = ? AND step = ? AND file = ?`, k.Value, int(k.Step), file); err != nil {
			return err
		}
	}
	return nil
}

// InsertFields adds frontmatter field rows.
func (t *indexTx) InsertFields(ctx context.Context, rows []index.FieldRow) error {
	return t.insert(ctx, "write fields", `INSERT INTO fields (file, name, value, num) VALUES `, 4, len(rows),
		func(args []any, i int) []any {
			return append(args, rows[i].File, rows[i].Name, rows[i].Value, rows[i].Num)
		})
}

// DeleteFields removes a file's field rows.
func (t *indexTx) DeleteFields(ctx context.Context, file int64) error {
	return t.exec(ctx, "delete fields", `DELETE FROM fields WHERE file = ?`, file)
}

// InsertCites adds citation rows.
func (t *indexTx) InsertCites(ctx context.Context, rows []index.CiteRow) error {
	return t.insert(ctx, "write citations", `INSERT OR IGNORE INTO cites (value, file) VALUES `, 2, len(rows),
		func(args []any, i int) []any { return append(args, rows[i].Value, rows[i].File) })
}

// DeleteCites removes a file's citations.
func (t *indexTx) DeleteCites(ctx context.Context, file int64, values []string) error {
	for _, v := range values {
		if err := t.exec(ctx, "delete citations", `DELETE FROM cites WHERE value = ? AND file = ?`, v, file); err != nil {
			return err
		}
	}
	return nil
}

// InsertLinks adds link rows.
func (t *indexTx) InsertLinks(ctx context.Context, rows []index.LinkRow) error {
	return t.insert(ctx, "write links", `INSERT INTO links (src, ord, flags, status, dst, step, detail, link) VALUES `, 8, len(rows),
		func(args []any, i int) []any {
			r := &rows[i]
			return append(args, r.Src, r.Ord, r.Flags, r.Status, indexNullID(r.Dst), r.Step, indexNull(r.Detail), r.Data)
		})
}

// InsertLinkKeys adds lookup rows.
func (t *indexTx) InsertLinkKeys(ctx context.Context, rows []index.LinkKeyRow) error {
	return t.insert(ctx, "write link lookups", `INSERT OR IGNORE INTO link_keys (hash, src, ord) VALUES `, 3, len(rows),
		func(args []any, i int) []any { return append(args, rows[i].Hash, rows[i].Src, rows[i].Ord) })
}

// DeleteLink removes a link and its lookups.
func (t *indexTx) DeleteLink(ctx context.Context, src int64, ord int, hashes []int64) error {
	for _, h := range hashes {
		if err := t.exec(ctx, "delete link lookups", `DELETE FROM link_keys WHERE hash = ? AND src = ? AND ord = ?`, h, src, ord); err != nil {
			return err
		}
	}
	return t.exec(ctx, "delete link", `DELETE FROM links WHERE src = ? AND ord = ?`, src, ord)
}

// SetResolution records how a link resolves.
func (t *indexTx) SetResolution(ctx context.Context, src int64, ord int, r index.LinkRow) error {
	return t.exec(ctx, "resolve link", `UPDATE links SET status = ?, dst = ?, step = ?, detail = ? WHERE src = ? AND ord = ?`,
		r.Status, indexNullID(r.Dst), r.Step, indexNull(r.Detail), src, ord)
}

// SetLinkData replaces a link's packed form.
func (t *indexTx) SetLinkData(ctx context.Context, src int64, ord int, data []byte) error {
	return t.exec(ctx, "write link", `UPDATE links SET link = ? WHERE src = ? AND ord = ?`, data, src, ord)
}

// InsertFindings adds findings.
func (t *indexTx) InsertFindings(ctx context.Context, rows []index.FindingRow) error {
	return t.insert(ctx, "write findings", `INSERT INTO findings (file, rule, severity, subject, message) VALUES `, 5, len(rows),
		func(args []any, i int) []any {
			f := &rows[i].Finding
			return append(args, rows[i].File, f.Rule, string(f.Severity), f.Subject, f.Message)
		})
}

// DeleteFindings removes a file's findings.
func (t *indexTx) DeleteFindings(ctx context.Context, file int64) error {
	return t.exec(ctx, "delete findings", `DELETE FROM findings WHERE file = ?`, file)
}

// WriteText adds a page to the full text, and to the short pages' when it
// has at most the tier's words (during a full build, the tier is chosen
// at its end; see shortPages). One row a statement: a statement of
// several rows opens a savepoint, which makes FTS5 flush its pending terms
// to a new segment every time.
func (t *indexTx) WriteText(ctx context.Context, id int64, title, text string) error {
	if err := t.writeText(ctx, "", id, title, text); err != nil {
		return err
	}
	words := ftsTokens(text)
	if t.building != nil {
		t.building.add(shortPage{id: id, words: words, title: title, text: text})
		return nil
	}
	t.countWords(text, 1)
	tier, err := t.shortTier(ctx)
	if err != nil || words > tier.words {
		return err
	}
	tier.pages, tier.changed = tier.pages+1, true
	return t.writeText(ctx, "_short", id, title, text)
}

// writeText inserts a page into fts and fts_title with the given suffix.
func (t *indexTx) writeText(ctx context.Context, suffix string, id int64, title, text string) error {
	if err := t.exec(ctx, "full text", `INSERT INTO fts`+suffix+` (rowid, text) VALUES (?, ?)`, id, text); err != nil {
		return err
	}
	return t.exec(ctx, "full text", `INSERT INTO fts_title`+suffix+` (rowid, title) VALUES (?, ?)`, id, title)
}

// DeleteText removes a page from the full text, and from the short pages'
// when its files row, which the index changes only after (see
// index.StorageTx.DeleteText), says it has at most the tier's words; the
// words of text, the page's text as it was written, are in one page less.
func (t *indexTx) DeleteText(ctx context.Context, id int64, text string) error {
	t.countWords(text, -1)
	var words sql.NullInt64
	err := t.q.QueryRowContext(ctx, `SELECT words FROM files WHERE id = ?`, id).Scan(&words)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("index: full text of file %d: %w", id, translate(err))
	}
	tier, err := t.shortTier(ctx)
	if err != nil {
		return err
	}
	if words.Valid && words.Int64 <= int64(tier.words) {
		if err := t.deleteText(ctx, "_short", id); err != nil {
			return err
		}
		tier.pages, tier.changed = tier.pages-1, true
	}
	return t.deleteText(ctx, "", id)
}

// deleteText removes a page from fts and fts_title with the given suffix.
func (t *indexTx) deleteText(ctx context.Context, suffix string, id int64) error {
	for _, table := range []string{"fts", "fts_title"} {
		if err := t.exec(ctx, "full text", `DELETE FROM `+table+suffix+` WHERE rowid = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

// shortTierState is fts_tier as a transaction changes it.
type shortTierState struct {
	words, pages int
	changed      bool
}

// shortTier returns the short pages' tier, read once a transaction; a
// vault never fully built has none (words -1).
func (t *indexTx) shortTier(ctx context.Context) (*shortTierState, error) {
	if t.tier != nil {
		return t.tier, nil
	}
	st := &shortTierState{words: -1}
	err := t.q.QueryRowContext(ctx, `SELECT words, pages FROM fts_tier`).Scan(&st.words, &st.pages)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("index: full text: short pages: %w", translate(err))
	}
	t.tier = st
	return st, nil
}

// saveTier writes the tier a transaction changed, first cutting it back
// when it holds more than twice shortTier of the pages: to the pages of
// at most the words of the shortTier-th shortest one. Only at the end of
// a build or update (SetState), when every page's row and text agree.
func (t *indexTx) saveTier(ctx context.Context) error {
	st := t.tier
	if st == nil || !st.changed {
		return nil
	}
	if st.pages > 2*shortTier(0) {
		// FTS5's own row count (one row read; a count of files would scan
		// them all, on every update of a short page, under the write lock).
		totals, err := t.textTotals(ctx)
		if err != nil {
			return err
		}
		if pages := int(totals.pages); st.pages > 2*shortTier(pages) {
			if err := t.cutTier(ctx, st, shortTier(pages)); err != nil {
				return err
			}
		}
	}
	st.changed = false
	return t.exec(ctx, "full text", `INSERT INTO fts_tier (id, words, pages) VALUES (1, ?, ?)
		ON CONFLICT (id) DO UPDATE SET words = excluded.words, pages = excluded.pages`, st.words, st.pages)
}

// cutTier keeps in the short pages' text those of at most the words of
// the n-th shortest page.
func (t *indexTx) cutTier(ctx context.Context, st *shortTierState, n int) error {
	var words int
	err := t.q.QueryRowContext(ctx, `SELECT words FROM files WHERE words IS NOT NULL ORDER BY words LIMIT 1 OFFSET ?`, n-1).Scan(&words)
	if err != nil || words >= st.words {
		return translate(err)
	}
	rows, err := t.q.QueryContext(ctx, `SELECT id FROM files WHERE words > ? AND words <= ?`, words, st.words)
	if err != nil {
		return fmt.Errorf("index: full text: short pages: %w", translate(err))
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("index: full text: short pages: %w", translate(err))
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("index: full text: short pages: %w", translate(err))
	}
	for _, id := range ids {
		if err := t.deleteText(ctx, "_short", id); err != nil {
			return err
		}
	}
	st.words, st.pages = words, st.pages-len(ids)
	return nil
}

// ftsTokens counts the tokens FTS5's ascii tokenizer makes of s: runs of
// ASCII letters and digits and of bytes of other characters.
func ftsTokens(s string) int {
	n := 0
	ftsEachToken(s, func(string) { n++ })
	return n
}

// ftsEachToken calls fn with each token FTS5's ascii tokenizer makes of s,
// as its vocabulary holds it (ASCII letters in lower case).
func ftsEachToken(s string, fn func(string)) {
	start := -1
	lower := true
	for i := 0; i <= len(s); i++ {
		tok := false
		if i < len(s) {
			c := s[i]
			tok = c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
			if tok && c >= 'A' && c <= 'Z' {
				lower = false
			}
		}
		switch {
		case tok && start < 0:
			start = i
		case !tok && start >= 0:
			if w := s[start:i]; lower {
				fn(w)
			} else {
				fn(strings.ToLower(w))
			}
			start, lower = -1, true
		}
	}
}

// countWords adds n to the page count of each distinct word of text.
func (t *indexTx) countWords(text string, n int) {
	if text == "" {
		return
	}
	if t.words == nil {
		t.words = map[string]int{}
	}
	seen := make(map[string]bool, len(text)/8)
	ftsEachToken(text, func(w string) {
		if !seen[w] {
			seen[w] = true
			t.words[w] += n
		}
	})
}

// saveWords adds the page counts the transaction changed to fts_words, in
// word order, and removes the words no page holds any more.
func (t *indexTx) saveWords(ctx context.Context) error {
	var words, gone []string
	for w, n := range t.words {
		if n != 0 {
			words = append(words, w)
		}
		if n < 0 {
			gone = append(gone, w)
		}
	}
	counts := t.words
	t.words = nil
	if len(words) == 0 {
		return nil
	}
	slices.Sort(words)
	err := t.insertTail(ctx, "full text: words", `INSERT INTO fts_words (word, pages) VALUES `,
		` ON CONFLICT (word) DO UPDATE SET pages = pages + excluded.pages`, 2, len(words),
		func(args []any, i int) []any { return append(args, words[i], counts[words[i]]) })
	if err != nil || len(gone) == 0 {
		return err
	}
	slices.Sort(gone)
	for start := 0; start < len(gone); start += indexBatch {
		batch := gone[start:min(len(gone), start+indexBatch)]
		args := make([]any, len(batch))
		for i, w := range batch {
			args[i] = w
		}
		if err := t.exec(ctx, "full text: words", `DELETE FROM fts_words WHERE pages <= 0 AND word IN (`+placeholders(len(batch))+`)`, args...); err != nil {
			return err
		}
	}
	return nil
}
