package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/index"
)

// keptTables are the tables whose one row of totals or counters a full
// build reads and updates rather than fills: Shadow copies their rows.
var keptTables = []string{"fts_stats", "file_ids", "index_state"}

// shadowedTables are the tables a full build writes (builtTables) and
// keptTables, as Shadow makes them again.
func shadowedTables() []string { return append(builtTables(), keptTables...) }

// Shadow makes, in the session's temporary schema, a table of each of the
// index's tables (index.Shadower): LIKE it, with its defaults, checks and
// storage, and its indexes and constraints under their own names (a build
// finds the full text's GIN indexes by name); the tables of totals and
// counters get their rows. PostgreSQL looks a table's unqualified name up
// in the temporary schema first, and every statement of the index names
// its tables so: from here on the transaction reads and writes the
// shadows, and the store's tables, which are not shadowed, as before. The
// statements prepared on the connection are deallocated, so that none
// runs against the table it was planned for. A full build into shadows
// drops no index and loads no table beside the transaction (Clear). The
// transaction's end drops the shadows. A role that may not make
// temporary tables gets none, and the rebuild writes the index's tables.
func (t *indexTx) Shadow(ctx context.Context) error {
	if t.building != nil {
		return cairn.Errorf(cairn.EINTERNAL, "index: shadow: a build is under way")
	}
	if err := t.flush(ctx); err != nil {
		return err
	}
	if err := t.saveText(ctx); err != nil {
		return err
	}
	var temp bool
	if err := t.queryRow(ctx, `SELECT has_database_privilege(current_database(), 'TEMP')`, nil, &temp); err != nil {
		return fmt.Errorf("index: shadow: %w", err)
	}
	if !temp {
		// The rebuild writes the index's own tables, which only a
		// transaction that holds the vault's lock may (DB.Inspect gives a
		// role without TEMP one).
		if t.view {
			return cairn.Errorf(cairn.EINTERNAL, "index: shadow: no temporary tables in a transaction that holds no lock")
		}
		return nil
	}
	tables := shadowedTables()
	defs, err := indexDefs(ctx, t.tx, tables)
	if err != nil {
		return fmt.Errorf("index: shadow: %w", t.db.translate(err))
	}
	var schema string
	if err := t.tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("index: shadow: %w", t.db.translate(err))
	}
	var stmts []string
	for _, table := range tables {
		committed := pgx.Identifier{schema, table}.Sanitize()
		stmts = append(stmts, `CREATE TEMP TABLE `+pgx.Identifier{table}.Sanitize()+` (LIKE `+committed+
			` INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING GENERATED INCLUDING IDENTITY) ON COMMIT DROP`)
		if slices.Contains(keptTables, table) {
			stmts = append(stmts, `INSERT INTO pg_temp.`+pgx.Identifier{table}.Sanitize()+` SELECT * FROM `+committed)
		}
	}
	for _, d := range defs {
		stmt, ok := d.shadow()
		if !ok {
			return cairn.Errorf(cairn.EINTERNAL, "index: shadow: cannot read the definition of index %s of %s: %.60s", d.name, d.table, d.def)
		}
		stmts = append(stmts, stmt)
	}
	// A search_path that names pg_temp after the vault's schema would
	// look the vault's tables up first: the temporary schema goes first,
	// for this transaction.
	stmts = append(stmts, `SELECT set_config('search_path', concat_ws(', ', 'pg_temp', nullif(current_setting('search_path'), '')), true)`)
	for _, stmt := range stmts {
		if _, err := t.tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("index: shadow: %.60s: %w", stmt, t.db.translate(err))
		}
	}
	if err := t.tx.Conn().DeallocateAll(ctx); err != nil {
		return fmt.Errorf("index: shadow: %w", t.db.translate(err))
	}
	// Every name the build writes by, its tables' and the full text's
	// GIN indexes' (found by name), must now be a shadow's.
	var stray []string
	if err := t.tx.QueryRow(ctx, `SELECT coalesce(array_agg(n ORDER BY n), '{}') FROM unnest($1::text[]) n
		WHERE to_regclass(quote_ident(n)) IS NULL
			OR (SELECT relnamespace FROM pg_class WHERE oid = to_regclass(quote_ident(n))) <> pg_my_temp_schema()`,
		slices.Concat(tables, ftsIndexNames())).Scan(&stray); err != nil {
		return fmt.Errorf("index: shadow: %w", t.db.translate(err))
	}
	if len(stray) > 0 {
		return cairn.Errorf(cairn.EINTERNAL, "index: shadow: %s still name the vault's own, not a temporary table's", strings.Join(stray, ", "))
	}
	t.shadowed = true
	return nil
}

// shadow is the statement that makes d on the temporary table of its
// table's name, under its own name; ok is false for an index whose
// definition could not be read apart from its table's name.
func (d indexDef) shadow() (_ string, ok bool) {
	table, name := `pg_temp.`+pgx.Identifier{d.table}.Sanitize(), pgx.Identifier{d.name}.Sanitize()
	switch {
	case d.constraint:
		return `ALTER TABLE ` + table + ` ADD CONSTRAINT ` + name + ` ` + d.def, true
	case d.using == "":
		return "", false
	case d.unique:
		return `CREATE UNIQUE INDEX ` + name + ` ON ` + table + ` ` + d.using, true
	}
	return `CREATE INDEX ` + name + ` ON ` + table + ` ` + d.using, true
}

var _ index.Shadower = (*indexTx)(nil)
