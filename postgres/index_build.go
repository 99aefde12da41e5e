package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
)

// Writes of the index inside a transaction. Outside a full build, every
// write is queued (indexTx.exec) and rows are inserted many to a statement,
// from arrays (unnest). A full build, from Clear to FinishBuild, loads rows
// with COPY: a build of 100k pages writes some two million rows.

// SetState records the commit the index reflects, after fitting the
// tiers of the shortest pages to the vault (fitTiers).
func (t *indexTx) SetState(ctx context.Context, st index.State) error {
	if err := t.fitTiers(ctx); err != nil {
		return err
	}
	return t.exec(ctx, "write state", `INSERT INTO index_state (ref, commit_hash, tree) VALUES ($1, $2, $3)
		ON CONFLICT (ref) DO UPDATE SET commit_hash = excluded.commit_hash, tree = excluded.tree`,
		index.Branch, st.Commit[:], st.Tree[:])
}

// Clear removes every row. DELETE rather than TRUNCATE: TRUNCATE would
// make readers of the committed index wait for this transaction.
//
// When the index is empty (a vault's first build) and no one is reading
// it, the indexes of the tables a build writes are dropped (dropIndexes),
// and FinishBuild makes them again from the rows: building the GIN index
// of 100k pages' text took two thirds of the time inserting them into it
// did, and a B-tree built from its rows a third to a quarter of the time
// inserting them one by one did. Readers then wait for the build to
// commit (DROP INDEX locks the table), at most the lock timeout
// (indexBusy); they would have found nothing before it.
func (t *indexTx) Clear(ctx context.Context) error {
	var dropped []indexDef
	var err error
	if !t.shadowed { // shadows keep their indexes, and their full text
		if dropped, err = t.dropIndexes(ctx); err != nil {
			return err
		}
	}
	stmts := []string{`UPDATE file_ids SET last = greatest(last, (SELECT max(id) FROM files))`}
	for _, table := range builtTables() {
		stmts = append(stmts, `DELETE FROM `+table)
	}
	stmts = append(stmts, `UPDATE fts_stats SET pages = 0, words = 0, more = 0, short_words = -1, short = 0, mid_words = -1, mid = 0`)
	for _, stmt := range stmts {
		if err := t.exec(ctx, "clear", stmt); err != nil {
			return err
		}
	}
	if err := t.sendQueued(ctx); err != nil {
		return err
	}
	t.building, t.bounds, t.textChanged = newTextBuild(), nil, false
	if len(dropped) > 0 {
		t.building.side, dropped, err = t.startSide(ctx, dropped)
		if err != nil {
			return err
		}
	}
	t.building.dropped = dropped
	if t.building.side == nil && !t.shadowed {
		t.dropLeftover(ctx)
	}
	return nil
}

// dropLeftover drops a table a first build left (see sideText), if it
// can: one it cannot (another holds it) stays for the next build, and
// this one goes on.
func (t *indexTx) dropLeftover(ctx context.Context) {
	if err := dropLeftover(ctx, t.tx, 0); err != nil { // in a savepoint
		t.db.log.Info("full build: a table a build left stays for the next", "table", sideTable, "reason", t.db.translate(err))
	}
}

// builtTables are the tables a full build fills, with COPY or from one
// another, and Clear empties.
func builtTables() []string {
	return []string{"files", "keys", "links", "link_keys", "cites", "fields", "findings",
		"fts", "fts_short", "fts_mid", "fts_more", "fts_vocab"}
}

// An indexDef is an index of one of builtTables, or the constraint (a
// primary key) it belongs to, as the catalog describes it: what Clear
// dropped and FinishBuild makes again, with the tablespace, storage
// options, comments and CLUSTER mark an operator may have given it since
// the migrations made it.
type indexDef struct {
	table, name string
	// def is pg_get_indexdef, or pg_get_constraintdef with the index's
	// storage options, which it leaves out.
	def        string
	constraint bool
	tablespace string // "": the database's default
	comment    string // the index's
	conComment string // the constraint's
	clustered  bool   // the table's CLUSTER index
	// unique and using are an index's definition apart from its name and
	// table (using: "USING gin (body)" and what follows); using is ""
	// for a constraint, or a definition not read so.
	unique bool
	using  string
}

// drop is the statement that drops d.
func (d indexDef) drop() string {
	if d.constraint {
		return `ALTER TABLE ` + pgx.Identifier{d.table}.Sanitize() + ` DROP CONSTRAINT ` + pgx.Identifier{d.name}.Sanitize()
	}
	return `DROP INDEX ` + pgx.Identifier{d.name}.Sanitize()
}

// make returns the statements that make d again, with its comments and
// CLUSTER mark.
func (d indexDef) make(was string) []string {
	return append(d.create(was), d.marks()...)
}

// create returns the statements that make d. Neither definition names a
// tablespace: the index is made under default_tablespace set to its own
// ("", the database's, when it is in that, whatever the session's
// default), then set back to was.
func (d indexDef) create(was string) []string {
	create := d.def
	if d.constraint {
		create = `ALTER TABLE ` + pgx.Identifier{d.table}.Sanitize() + ` ADD CONSTRAINT ` + pgx.Identifier{d.name}.Sanitize() + ` ` + d.def
	}
	return []string{`SELECT set_config('default_tablespace', ` + quoteLiteral(d.tablespace) + `, true)`, create,
		`SELECT set_config('default_tablespace', ` + quoteLiteral(was) + `, true)`}
}

// marks returns the statements that give d what it has beside its
// definition: its comments, its CLUSTER mark.
func (d indexDef) marks() []string {
	var stmts []string
	if d.clustered {
		stmts = append(stmts, `ALTER TABLE `+pgx.Identifier{d.table}.Sanitize()+` CLUSTER ON `+pgx.Identifier{d.name}.Sanitize())
	}
	if d.comment != "" {
		stmts = append(stmts, `COMMENT ON INDEX `+pgx.Identifier{d.name}.Sanitize()+` IS `+quoteLiteral(d.comment))
	}
	if d.conComment != "" {
		stmts = append(stmts, `COMMENT ON CONSTRAINT `+pgx.Identifier{d.name}.Sanitize()+` ON `+pgx.Identifier{d.table}.Sanitize()+` IS `+quoteLiteral(d.conComment))
	}
	return stmts
}

// on returns d as an index or constraint named name of table, without
// comments; ok is false for an index whose definition could not be read
// apart from its table's name.
func (d indexDef) on(table, name string) (_ indexDef, ok bool) {
	m := indexDef{table: table, name: name, def: d.def, constraint: d.constraint, tablespace: d.tablespace}
	if !d.constraint {
		if d.using == "" {
			return m, false
		}
		unique := ""
		if d.unique {
			unique = "UNIQUE "
		}
		m.def = `CREATE ` + unique + `INDEX ` + pgx.Identifier{name}.Sanitize() + ` ON ` + pgx.Identifier{table}.Sanitize() + ` ` + d.using
	}
	return m, true
}

// quoteLiteral is s as an SQL string literal, for statements that take
// no parameters (COMMENT): an escape string, read the same whatever
// standard_conforming_strings says.
func quoteLiteral(s string) string {
	return `E'` + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + `'`
}

// indexDefs reads the indexes of tables, and the constraints they belong
// to, from the catalog.
func indexDefs(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, tables []string) ([]indexDef, error) {
	// An index's definition names its table, schema-qualified: using is
	// what follows, when it starts as expected.
	rows, err := q.Query(ctx, `SELECT t.relname, i.relname, coalesce(pg_get_constraintdef(c.oid), d.def), c.oid IS NOT NULL,
			coalesce(s.spcname, ''), coalesce(obj_description(i.oid, 'pg_class'), ''), coalesce(obj_description(c.oid, 'pg_constraint'), ''),
			x.indisunique, CASE WHEN c.oid IS NULL AND starts_with(d.def, d.head) THEN substr(d.def, length(d.head) + 1) ELSE '' END,
			x.indisclustered, coalesce((SELECT string_agg(quote_ident(split_part(o, '=', 1)) || '=' || quote_literal(substr(o, strpos(o, '=') + 1)), ', ')
				FROM unnest(i.reloptions) o), '')
		FROM pg_index x
		JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		JOIN pg_class i ON i.oid = x.indexrelid
		LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
		LEFT JOIN pg_tablespace s ON s.oid = i.reltablespace,
		LATERAL (SELECT pg_get_indexdef(x.indexrelid) AS def, 'CREATE ' || CASE WHEN x.indisunique THEN 'UNIQUE ' ELSE '' END
			|| 'INDEX ' || quote_ident(i.relname) || ' ON ' || quote_ident(n.nspname) || '.' || quote_ident(t.relname) || ' ' AS head) d
		WHERE x.indrelid IN (SELECT unnest($1::text[])::regclass)
			-- An exclusion constraint with storage options: where they
			-- go in its definition (before a WHERE) is not found
			-- safely, and it stays.
			AND NOT (c.contype = 'x' AND i.reloptions IS NOT NULL)
		ORDER BY t.relname, i.relname`, tables)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (indexDef, error) {
		var d indexDef
		var options string
		err := r.Scan(&d.table, &d.name, &d.def, &d.constraint, &d.tablespace, &d.comment, &d.conComment, &d.unique, &d.using,
			&d.clustered, &options)
		if d.constraint && options != "" {
			// "PRIMARY KEY (id) [INCLUDE (…)] [DEFERRABLE …]": the options
			// go before DEFERRABLE.
			def, deferrable, found := strings.Cut(d.def, " DEFERRABLE")
			d.def = def + " WITH (" + options + ")"
			if found {
				d.def += " DEFERRABLE" + deferrable
			}
		}
		return d, err
	})
}

// dropIndexes drops every index of builtTables if the index is empty, this
// role may drop them and make them again, and no one holds a lock on
// those tables (NOWAIT: a reader under way keeps them), and returns what
// it dropped.
func (t *indexTx) dropIndexes(ctx context.Context) ([]indexDef, error) {
	var empty bool
	if err := t.queryRow(ctx, `SELECT NOT EXISTS (SELECT FROM files) AND NOT EXISTS (SELECT FROM fts)`, nil, &empty); err != nil {
		return nil, fmt.Errorf("index: clear: %w", err)
	}
	if !empty {
		return nil, nil
	}
	// Only the tables' owner may drop their indexes; indexes this role
	// may not make in their schema or tablespace could not be made again;
	// and a table that a publication publishes updates or deletes of may
	// not lose its primary key (its replica identity) while rows are
	// deleted. Any of these, and the build goes with the indexes in
	// place, only slower.
	var droppable bool
	if err := t.queryRow(ctx, `SELECT bool_and(pg_has_role(c.relowner, 'USAGE') AND has_schema_privilege(c.relnamespace, 'CREATE'))
			AND NOT EXISTS (SELECT FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
				WHERE x.indrelid = ANY (array_agg(c.oid)) AND i.reltablespace <> 0 AND NOT has_tablespace_privilege(i.reltablespace, 'CREATE'))
			AND NOT EXISTS (SELECT FROM pg_publication_tables p JOIN pg_publication b ON b.pubname = p.pubname
				JOIN pg_namespace n ON n.nspname = p.schemaname JOIN pg_class r ON r.relnamespace = n.oid AND r.relname = p.tablename
				WHERE r.oid = ANY (array_agg(c.oid)) AND (b.pubupdate OR b.pubdelete))
		FROM pg_class c WHERE c.oid IN (SELECT unnest($1::text[])::regclass)`, []any{builtTables()}, &droppable); err != nil {
		return nil, fmt.Errorf("index: clear: %w", err)
	}
	if !droppable {
		return nil, nil
	}
	sp, err := t.tx.Begin(ctx) // a savepoint
	if err != nil {
		return nil, fmt.Errorf("index: clear: %w", t.db.translate(err))
	}
	defs, err := func() ([]indexDef, error) {
		names := make([]string, len(builtTables()))
		for i, table := range builtTables() {
			names[i] = pgx.Identifier{table}.Sanitize()
		}
		if _, err := sp.Exec(ctx, `LOCK TABLE `+strings.Join(names, ", ")+` IN ACCESS EXCLUSIVE MODE NOWAIT`); err != nil {
			return nil, err
		}
		defs, err := indexDefs(ctx, sp, builtTables())
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			if _, err := sp.Exec(ctx, d.drop()); err != nil {
				return nil, err
			}
		}
		return defs, nil
	}()
	if err != nil {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return nil, fmt.Errorf("index: clear: %w", t.db.translate(rerr))
		}
		if !lockNotAvailable(err) {
			return nil, fmt.Errorf("index: clear: drop the indexes for the build: %w", t.db.translate(err))
		}
		return nil, nil
	}
	return defs, t.db.translate(sp.Commit(ctx))
}

// FinishBuild writes the rest of the full text, its tiers, totals and
// words' page counts, and makes or tidies its GIN indexes (textBuild's
// finish).
func (t *indexTx) FinishBuild(ctx context.Context) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	b := t.building
	if b == nil {
		return nil
	}
	if err := b.finish(ctx, t); err != nil {
		return err
	}
	t.building = nil
	return nil
}

// OverlapWrites says that a full build may prepare rows while the
// server writes the ones before: its writes take the server's time, not
// the build's (index.OverlappingWriter).
func (t *indexTx) OverlapWrites() bool { return true }

// copyRows loads rows into table with COPY.
func (t *indexTx) copyRows(ctx context.Context, what, table string, cols []string, n int, row func(i int) []any) error {
	if n == 0 {
		return nil
	}
	if err := t.sendQueued(ctx); err != nil {
		return err
	}
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromSlice(n, func(i int) ([]any, error) { return row(i), nil }))
	if err != nil {
		return fmt.Errorf("index: %s: %w", what, t.db.translate(err))
	}
	return nil
}

// fileColumns are the columns of files in the order InsertFiles gives
// them.
func fileColumns() []string {
	return []string{"id", "path", "kind", "blob", "size", "page_id", "title", "title_source", "type",
		"frontmatter", "aliases", "sources", "headings", "block_ids", "problems", "words", "inbound", "depth"}
}

// fileValues returns a file's values from path to words: the page columns
// are NULL for other files. The values are copies: writes may be queued
// after the caller has reused its rows.
func fileValues(r *index.FileRow) []any {
	blob := r.Blob
	vals := []any{r.Path, int32(r.Kind), blob[:], r.Size}
	if r.Kind != lint.KindPage {
		return append(vals, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
	}
	words, ts, title := int32(r.Words), int32(r.TitleSource), r.Title
	return append(vals, indexNull(r.PageID), &title, &ts, indexNull(r.Type),
		indexNull(r.Frontmatter), indexNull(r.Aliases), indexNull(r.Sources),
		indexNull(r.Headings), indexNull(r.BlockIDs), indexNull(r.Problems), &words)
}

// InsertFiles adds file rows.
func (t *indexTx) InsertFiles(ctx context.Context, rows []index.FileRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t.building != nil {
		return t.copyRows(ctx, "write files", "files", fileColumns(), len(rows), func(i int) []any {
			r := &rows[i]
			return append(append([]any{r.ID}, fileValues(r)...), int32(r.Inbound), indexNullDepth(r.Depth))
		})
	}
	cols := make([][]any, len(fileColumns()))
	for i := range rows {
		r := &rows[i]
		vals := append(append([]any{r.ID}, fileValues(r)...), int32(r.Inbound), indexNullDepth(r.Depth))
		for c, v := range vals {
			cols[c] = append(cols[c], v)
		}
	}
	return t.exec(ctx, "write files", `INSERT INTO files (`+strings.Join(fileColumns(), ", ")+`)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::bytea[], $5::bigint[], $6::text[], $7::text[],
			$8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
			$16::int[], $17::int[], $18::int[])`,
		typedColumns(cols)...)
}

// typedColumns turns columns of values into arrays pgx encodes: each
// column's values are of one Go type, or nil.
func typedColumns(cols [][]any) []any {
	out := make([]any, len(cols))
	for c, vals := range cols {
		out[c] = column(vals)
	}
	return out
}

// column returns vals as a slice of their type (pointers where some are
// nil).
func column(vals []any) any {
	var kind any
	for _, v := range vals {
		if v != nil {
			kind = v
			break
		}
	}
	switch kind.(type) {
	case int64:
		return columnOf[int64](vals)
	case *int64:
		return columnOf[*int64](vals)
	case int32:
		return columnOf[int32](vals)
	case *int32:
		return columnOf[*int32](vals)
	case string:
		return columnOf[string](vals)
	case *string:
		return columnOf[*string](vals)
	case []byte:
		return columnOf[[]byte](vals)
	default: // every value NULL
		return make([]*string, len(vals))
	}
}

func columnOf[T any](vals []any) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		if v != nil {
			out[i] = v.(T)
		}
	}
	return out
}

// UpdateFile replaces a file's row but for its inbound count and depth.
func (t *indexTx) UpdateFile(ctx context.Context, r index.FileRow) error {
	args := append(fileValues(&r), r.ID)
	return t.exec(ctx, "write "+r.Path, `UPDATE files SET path = $1, kind = $2, blob = $3, size = $4, page_id = $5, title = $6,
		title_source = $7, type = $8, frontmatter = $9, aliases = $10, sources = $11, headings = $12, block_ids = $13,
		problems = $14, words = $15 WHERE id = $16`, args...)
}

// DeleteFile removes a file's row, recording its id as used.
func (t *indexTx) DeleteFile(ctx context.Context, id int64) error {
	return t.exec(ctx, "delete file", `WITH d AS (DELETE FROM files WHERE id = $1 RETURNING id)
		UPDATE file_ids SET last = greatest(last, d.id) FROM d`, id)
}

// AddInbound adds to a file's inbound count.
func (t *indexTx) AddInbound(ctx context.Context, id int64, delta int) error {
	return t.exec(ctx, "count inbound links", `UPDATE files SET inbound = inbound + $1 WHERE id = $2`, int32(delta), id)
}

// SetDepth sets a file's depth.
func (t *indexTx) SetDepth(ctx context.Context, id int64, depth int) error {
	return t.exec(ctx, "set depth", `UPDATE files SET depth = $1 WHERE id = $2`, indexNullDepth(depth), id)
}

// ClearDepths makes every file unreachable.
func (t *indexTx) ClearDepths(ctx context.Context) error {
	return t.exec(ctx, "clear depths", `UPDATE files SET depth = NULL WHERE depth IS NOT NULL`)
}

// sortedUnique reports whether rows are in key order, and returns them
// without repeats when they are.
func sortedUnique[T any](rows []T, compare func(a, b T) int) ([]T, bool) {
	repeats := false
	for i := 1; i < len(rows); i++ {
		switch c := compare(rows[i-1], rows[i]); {
		case c > 0:
			return rows, false
		case c == 0:
			repeats = true
		}
	}
	if repeats {
		rows = slices.CompactFunc(slices.Clone(rows), func(a, b T) bool { return compare(a, b) == 0 })
	}
	return rows, true
}

// InsertKeys adds key rows; a row already there is kept.
func (t *indexTx) InsertKeys(ctx context.Context, rows []index.KeyRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t.building != nil {
		// A full build writes each file's rows at once, in key order:
		// the only rows already there are repeats in rows.
		if rows, ok := sortedUnique(rows, func(a, b index.KeyRow) int {
			return cmp.Or(strings.Compare(a.Value, b.Value), cmp.Compare(a.Step, b.Step), cmp.Compare(a.File, b.File))
		}); ok {
			return t.copyRows(ctx, "write keys", "keys", []string{"value", "step", "file"}, len(rows), func(i int) []any {
				return []any{rows[i].Value, int32(rows[i].Step), rows[i].File}
			})
		}
	}
	values, steps, files := make([]string, len(rows)), make([]int32, len(rows)), make([]int64, len(rows))
	for i, r := range rows {
		values[i], steps[i], files[i] = r.Value, int32(r.Step), r.File
	}
	return t.exec(ctx, "write keys", `INSERT INTO keys (value, step, file)
		SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[]) ON CONFLICT DO NOTHING`, values, steps, files)
}

// DeleteKeys removes a file's keys.
func (t *indexTx) DeleteKeys(ctx context.Context, file int64, keys []markdown.Key) error {
	if len(keys) == 0 {
		return nil
	}
	values, steps := make([]string, len(keys)), make([]int32, len(keys))
	for i, k := range keys {
		values[i], steps[i] = k.Value, int32(k.Step)
	}
	return t.exec(ctx, "delete keys", `DELETE FROM keys k USING unnest($1::text[], $2::int[]) d (value, step)
		WHERE k.value = d.value AND k.step = d.step AND k.file = $3`, values, steps, file)
}

// InsertFields adds frontmatter field rows: copied in a full build,
// inserted from arrays otherwise.
func (t *indexTx) InsertFields(ctx context.Context, rows []index.FieldRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t.building != nil {
		return t.copyRows(ctx, "write fields", "fields", []string{"file", "name", "value", "num"}, len(rows), func(i int) []any {
			return []any{rows[i].File, rows[i].Name, rows[i].Value, rows[i].Num}
		})
	}
	files, names, values, nums := make([]int64, len(rows)), make([]string, len(rows)), make([]string, len(rows)), make([]*float64, len(rows))
	for i, r := range rows {
		files[i], names[i], values[i], nums[i] = r.File, r.Name, r.Value, r.Num
	}
	return t.exec(ctx, "write fields", `INSERT INTO fields (file, name, value, num)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::float8[])`, files, names, values, nums)
}

// DeleteFields removes a file's field rows.
func (t *indexTx) DeleteFields(ctx context.Context, file int64) error {
	return t.exec(ctx, "delete fields", `DELETE FROM fields WHERE file = $1`, file)
}

// InsertCites adds citation rows; a row already there is kept.
func (t *indexTx) InsertCites(ctx context.Context, rows []index.CiteRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t.building != nil {
		if rows, ok := sortedUnique(rows, func(a, b index.CiteRow) int {
			return cmp.Or(strings.Compare(a.Value, b.Value), cmp.Compare(a.File, b.File))
		}); ok {
			return t.copyRows(ctx, "write citations", "cites", []string{"value", "file"}, len(rows), func(i int) []any {
				return []any{rows[i].Value, rows[i].File}
			})
		}
	}
	values, files := make([]string, len(rows)), make([]int64, len(rows))
	for i, r := range rows {
		values[i], files[i] = r.Value, r.File
	}
	return t.exec(ctx, "write citations", `INSERT INTO cites (value, file)
		SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT DO NOTHING`, values, files)
}

// DeleteCites removes a file's citations.
func (t *indexTx) DeleteCites(ctx context.Context, file int64, values []string) error {
	if len(values) == 0 {
		return nil
	}
	return t.exec(ctx, "delete citations", `DELETE FROM cites WHERE value = ANY($1) AND file = $2`, values, file)
}

// InsertLinks adds link rows.
func (t *indexTx) InsertLinks(ctx context.Context, rows []index.LinkRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t.building != nil {
		return t.copyRows(ctx, "write links", "links", []string{"src", "ord", "flags", "status", "dst", "step", "detail", "link"}, len(rows), func(i int) []any {
			r := &rows[i]
			return []any{r.Src, int32(r.Ord), int32(r.Flags), int32(r.Status), indexNullID(r.Dst), int32(r.Step), indexNull(r.Detail), orEmpty(r.Data)}
		})
	}
	n := len(rows)
	srcs, ords, flags, statuses := make([]int64, n), make([]int32, n), make([]int32, n), make([]int32, n)
	dsts, steps, details, data := make([]*int64, n), make([]int32, n), make([]*string, n), make([][]byte, n)
	for i := range rows {
		r := &rows[i]
		srcs[i], ords[i], flags[i], statuses[i] = r.Src, int32(r.Ord), int32(r.Flags), int32(r.Status)
		dsts[i], steps[i], details[i], data[i] = indexNullID(r.Dst), int32(r.Step), indexNull(r.Detail), slices.Clone(orEmpty(r.Data))
	}
	return t.exec(ctx, "write links", `INSERT INTO links (src, ord, flags, status, dst, step, detail, link)
		SELECT * FROM unnest($1::bigint[], $2::int[], $3::int[], $4::int[], $5::bigint[], $6::int[], $7::text[], $8::bytea[])`,
		srcs, ords, flags, statuses, dsts, steps, details, data)
}

// InsertLinkKeys adds lookup rows; a row already there is kept.
func (t *indexTx) InsertLinkKeys(ctx context.Context, rows []index.LinkKeyRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t.building != nil {
		if rows, ok := sortedUnique(rows, func(a, b index.LinkKeyRow) int {
			return cmp.Or(cmp.Compare(a.Hash, b.Hash), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Ord, b.Ord))
		}); ok {
			return t.copyRows(ctx, "write link lookups", "link_keys", []string{"hash", "src", "ord"}, len(rows), func(i int) []any {
				return []any{rows[i].Hash, rows[i].Src, int32(rows[i].Ord)}
			})
		}
	}
	hashes, srcs, ords := make([]int64, len(rows)), make([]int64, len(rows)), make([]int32, len(rows))
	for i, r := range rows {
		hashes[i], srcs[i], ords[i] = r.Hash, r.Src, int32(r.Ord)
	}
	return t.exec(ctx, "write link lookups", `INSERT INTO link_keys (hash, src, ord)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[]) ON CONFLICT DO NOTHING`, hashes, srcs, ords)
}

// DeleteLink removes a link and its lookups.
func (t *indexTx) DeleteLink(ctx context.Context, src int64, ord int, hashes []int64) error {
	if len(hashes) > 0 {
		if err := t.exec(ctx, "delete link lookups", `DELETE FROM link_keys WHERE hash = ANY($1) AND src = $2 AND ord = $3`,
			hashes, src, int32(ord)); err != nil {
			return err
		}
	}
	return t.exec(ctx, "delete link", `DELETE FROM links WHERE src = $1 AND ord = $2`, src, int32(ord))
}

// SetResolution records how a link resolves.
func (t *indexTx) SetResolution(ctx context.Context, src int64, ord int, r index.LinkRow) error {
	return t.exec(ctx, "resolve link", `UPDATE links SET status = $1, dst = $2, step = $3, detail = $4 WHERE src = $5 AND ord = $6`,
		int32(r.Status), indexNullID(r.Dst), int32(r.Step), indexNull(r.Detail), src, int32(ord))
}

// SetLinkData replaces a link's packed form.
func (t *indexTx) SetLinkData(ctx context.Context, src int64, ord int, data []byte) error {
	return t.exec(ctx, "write link", `UPDATE links SET link = $1 WHERE src = $2 AND ord = $3`, slices.Clone(orEmpty(data)), src, int32(ord))
}

// InsertFindings adds findings.
func (t *indexTx) InsertFindings(ctx context.Context, rows []index.FindingRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t.building != nil {
		return t.copyRows(ctx, "write findings", "findings", []string{"file", "rule", "severity", "subject", "message"}, len(rows), func(i int) []any {
			f := &rows[i].Finding
			return []any{rows[i].File, f.Rule, string(f.Severity), f.Subject, f.Message}
		})
	}
	n := len(rows)
	files, rules, sevs, subjects, messages := make([]int64, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range rows {
		f := &rows[i].Finding
		files[i], rules[i], sevs[i], subjects[i], messages[i] = rows[i].File, f.Rule, string(f.Severity), f.Subject, f.Message
	}
	return t.exec(ctx, "write findings", `INSERT INTO findings (file, rule, severity, subject, message)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])`, files, rules, sevs, subjects, messages)
}

// DeleteFindings removes a file's findings.
func (t *indexTx) DeleteFindings(ctx context.Context, file int64) error {
	return t.exec(ctx, "delete findings", `DELETE FROM findings WHERE file = $1`, file)
}

// lockNotAvailable reports whether err is PostgreSQL's answer to a lock
// taken with NOWAIT that another transaction holds.
func lockNotAvailable(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pe.Code == "55P03"
}
