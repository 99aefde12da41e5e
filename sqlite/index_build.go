package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	if err := t.flushText(ctx); err != nil {
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
		`DROP INDEX IF EXISTS fields_name_value`, `DROP INDEX IF EXISTS fields_name_num`, `DROP INDEX IF EXISTS fields_file`,
		`DROP INDEX IF EXISTS fts_keys_file`}
	indexMakeIndexes = []string{
		`CREATE INDEX files_type ON files (type) WHERE type IS NOT NULL`,
		`CREATE INDEX links_dst ON links (dst) WHERE dst IS NOT NULL`,
		`CREATE INDEX findings_file ON findings (file)`,
		`CREATE INDEX fields_name_value ON fields (name, value)`,
		`CREATE INDEX fields_name_num ON fields (name, num) WHERE num IS NOT NULL`,
		`CREATE INDEX fields_file ON fields (file)`,
		`CREATE UNIQUE INDEX fts_keys_file ON fts_keys (file)`,
	}
)

// Clear removes every row and the secondary indexes.
func (t *indexTx) Clear(ctx context.Context) error {
	for _, stmt := range append([]string{
		`DELETE FROM files`, `DELETE FROM keys`, `DELETE FROM links`, `DELETE FROM link_keys`,
		`DELETE FROM cites`, `DELETE FROM fields`, `DELETE FROM findings`, `INSERT INTO fts (fts) VALUES ('delete-all')`,
		`INSERT INTO fts_title (fts_title) VALUES ('delete-all')`, `DELETE FROM fts_keys`, `DELETE FROM fts_words`,
	}, indexDropIndexes...) {
		if err := t.exec(ctx, "clear", stmt); err != nil {
			return err
		}
	}
	t.text, t.textBytes, t.textKeys, t.slots, t.freed = nil, 0, nil, nil, nil
	t.building, t.words = true, nil
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
	if err := t.flushText(ctx); err != nil {
		return err
	}
	t.building = false
	for _, table := range []string{"fts", "fts_title"} {
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
