package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"cairn"
	"cairn/sqlite"
)

// storageDB is a vault database as the storages' tests use it: SQLite's,
// or PostgreSQL's (postgres_test.go runs the same tests on it).
type storageDB interface {
	Update(ctx context.Context, fn func(cairn.Tx) error) error
}

// openSQLite opens a new SQLite vault database, closed when the test ends.
func openSQLite(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// inWriteTx runs fn in a write transaction of db.
func inWriteTx(t *testing.T, db storageDB, fn func(ctx context.Context, tx cairn.Tx) error) error {
	t.Helper()
	return db.Update(t.Context(), func(tx cairn.Tx) error { return fn(t.Context(), tx) })
}

// foreignTx is a transaction of some other backend.
type foreignTx struct{ cairn.Tx }
