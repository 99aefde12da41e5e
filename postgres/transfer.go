package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"cairn"
)

// A copy of a vault between SQLite and PostgreSQL moves the rows of the
// tables both keep in the same layout (the store's, the proposals and
// their audit, the events, the sources, the tokens and the OAuth records),
// column by column, in one read snapshot of the source; the destination's
// index is rebuilt from its commits, not copied, and its working-tree
// records, workers and jobs stay its own. Every value keeps its bytes, so
// every object and commit keeps its hash.

// transferTable is one table a copy moves: its columns, and whether its
// id is a sequence the destination must continue after.
type transferTable struct {
	name    string
	columns []string
	serial  bool
}

// transferTables returns the tables a copy moves, in an order their
// references allow.
func transferTables() []transferTable {
	return []transferTable{
		{name: "objects", columns: []string{"hash", "kind", "codec", "size", "data", "created"}},
		{name: "purges", columns: []string{"hash", "principal", "reason", "time"}},
		{name: "refs", columns: []string{"name", "kind", "hash", "updated"}},
		{name: "reflog", columns: []string{"id", "name", "old", "new", "principal", "message", "time"}, serial: true},
		{name: "pins", columns: []string{"hash", "reason", "created", "expires"}},
		// After reflog: the events its trigger wrote at the destination
		// are replaced by the source's.
		{name: "events", columns: []string{"id", "time", "kind", "subject", "data"}, serial: true},
		{name: "proposals", columns: []string{"id", "key", "route", "branch", "base", "tree", "proposal", "result", "principal", "origin",
			"status", "verdict", "findings", "summary", "message", "log", "source", "job", "error", "created", "decided", "decided_by", "reason"}, serial: true},
		{name: "audit", columns: []string{"id", "time", "principal", "action", "proposal", "branch", "commit_hash", "detail"}, serial: true},
		{name: "sources", columns: []string{"id", "name", "path", "size", "status", "job", "attempt", "proposal", "error", "hint", "created", "updated"}},
		{name: "source_history", columns: []string{"source", "seq", "time", "status", "principal", "detail"}},
		{name: "tokens", columns: []string{"id", "name", "principal", "scopes", "hash", "created", "created_by", "expires", "revoked"}},
		{name: "requests", columns: []string{"id", "time", "principal", "token", "surface", "route", "remote", "status"}, serial: true},
		{name: "oauth_clients", columns: []string{"id", "name", "redirect_uris", "created"}},
		{name: "oauth_codes", columns: []string{"hash", "client", "redirect_uri", "challenge", "principal", "scopes", "expires"}},
	}
}

// TransferStats says what a copy moved: rows per table.
type TransferStats map[string]int64

// checkEmpty refuses a destination that holds history already.
func checkEmpty(n int64, where string) error {
	if n > 0 {
		return cairn.Errorf(cairn.ECONFLICT, "%s holds a vault with history already (%d refs)", where, n).
			WithHint("Copy into a new database or schema (?search_path=NEW in the URL), or a new folder.")
	}
	return nil
}

// unfinished refuses a source with sources still being integrated: their
// jobs are not copied.
func unfinished(n int64) error {
	if n > 0 {
		return cairn.Errorf(cairn.ECONFLICT, "%d sources are still queued or running: their jobs would not come along", n).
			WithHint("Wait for them (cairn jobs), or cancel them, then copy.")
	}
	return nil
}

// CopyFromSQLite copies the vault in the SQLite database src (read in one
// transaction) into db, whose vault must have no refs yet, in one
// transaction.
func (db *DB) CopyFromSQLite(ctx context.Context, src *sql.DB) (TransferStats, error) {
	stats := TransferStats{}
	rtx, err := src.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read the source: %w", err)
	}
	defer rtx.Rollback()
	var n int64
	if err := rtx.QueryRowContext(ctx, `SELECT count(*) FROM sources WHERE status IN ('queued', 'running')`).Scan(&n); err != nil {
		return nil, fmt.Errorf("read the source: %w", err)
	}
	if err := unfinished(n); err != nil {
		return nil, err
	}
	err = db.update(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM refs`).Scan(&n); err != nil {
			return err
		}
		if err := checkEmpty(n, db.where); err != nil {
			return err
		}
		for _, t := range transferTables() {
			if t.name == "events" {
				if _, err := tx.Exec(ctx, `DELETE FROM events`); err != nil {
					return err
				}
			}
			rows, err := rtx.QueryContext(ctx, `SELECT `+strings.Join(t.columns, ", ")+` FROM `+t.name)
			if err != nil {
				return fmt.Errorf("read %s: %w", t.name, err)
			}
			src := &sqlSource{rows: rows, vals: make([]any, len(t.columns))}
			copied, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.columns, src)
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
			if err != nil {
				return fmt.Errorf("copy %s: %w", t.name, err)
			}
			stats[t.name] = copied
			if t.serial {
				if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, 'id'), coalesce(max(id), 0) + 1, false) FROM `+t.name, t.name); err != nil {
					return fmt.Errorf("continue the ids of %s: %w", t.name, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("copy into %s: %w", db.where, err)
	}
	return stats, nil
}

// sqlSource feeds the rows of a SQLite query to CopyFrom.
type sqlSource struct {
	rows *sql.Rows
	vals []any
}

func (s *sqlSource) Next() bool { return s.rows.Next() }

func (s *sqlSource) Values() ([]any, error) {
	ptrs := make([]any, len(s.vals))
	for i := range s.vals {
		ptrs[i] = &s.vals[i]
	}
	if err := s.rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	return s.vals, nil
}

func (s *sqlSource) Err() error { return s.rows.Err() }

// CopyToSQLite copies the vault in db (read in one REPEATABLE READ
// transaction) into the SQLite database dst, whose vault must have no refs
// yet, in one transaction of dst.
func (db *DB) CopyToSQLite(ctx context.Context, dst *sql.DB) (TransferStats, error) {
	stats := TransferStats{}
	rtx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", db.where, db.translate(err))
	}
	defer rtx.Rollback(context.WithoutCancel(ctx))
	var n int64
	if err := rtx.QueryRow(ctx, `SELECT count(*) FROM sources WHERE status IN ('queued', 'running')`).Scan(&n); err != nil {
		return nil, fmt.Errorf("read %s: %w", db.where, db.translate(err))
	}
	if err := unfinished(n); err != nil {
		return nil, err
	}
	wtx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("write the copy: %w", err)
	}
	defer wtx.Rollback()
	if err := wtx.QueryRowContext(ctx, `SELECT count(*) FROM refs`).Scan(&n); err != nil {
		return nil, fmt.Errorf("write the copy: %w", err)
	}
	if err := checkEmpty(n, "the destination"); err != nil {
		return nil, err
	}
	for _, t := range transferTables() {
		if t.name == "events" {
			if _, err := wtx.ExecContext(ctx, `DELETE FROM events`); err != nil {
				return nil, fmt.Errorf("copy events: %w", err)
			}
		}
		ins, err := wtx.PrepareContext(ctx, `INSERT INTO `+t.name+` (`+strings.Join(t.columns, ", ")+`) VALUES (`+
			strings.TrimSuffix(strings.Repeat("?, ", len(t.columns)), ", ")+`)`)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", t.name, err)
		}
		rows, err := rtx.Query(ctx, `SELECT `+strings.Join(t.columns, ", ")+` FROM `+t.name)
		if err != nil {
			ins.Close()
			return nil, fmt.Errorf("read %s: %w", t.name, db.translate(err))
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err == nil {
				for i, v := range vals {
					if b, ok := v.([]byte); ok && b != nil && len(b) == 0 {
						vals[i] = []byte{} // kept apart from NULL: the driver binds an empty slice as NULL
					}
				}
				_, err = ins.ExecContext(ctx, vals...)
			}
			if err != nil {
				rows.Close()
				ins.Close()
				return nil, fmt.Errorf("copy %s: %w", t.name, err)
			}
			stats[t.name]++
		}
		rows.Close()
		ins.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", t.name, db.translate(err))
		}
	}
	if err := wtx.Commit(); err != nil {
		return nil, fmt.Errorf("write the copy: %w", err)
	}
	return stats, nil
}
