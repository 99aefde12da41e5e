package worktree_test

import (
	"path/filepath"
	"testing"

	"cairn"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/sqlite"
	"cairn/worktree"
)

// openBackend opens a new vault database, closed when the test ends, and
// the working trees' storage in it: SQLite's, with its file in dir, or,
// when CAIRN_TEST_BACKEND=postgres (pgtest.Enabled), PostgreSQL's, in a
// schema of its own.
func openBackend(tb testing.TB, dir string) (cairn.Backend, worktree.Storage) {
	tb.Helper()
	ctx := tb.Context()
	if pgtest.Enabled() {
		db, err := postgres.Open(ctx, pgtest.URL(tb), nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		return db, postgres.NewWorktreeStorage(db)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "cairn.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, sqlite.NewWorktreeStorage(db)
}
