package index_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"cairn"
	"cairn/index"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/sqlite"
)

// backend is a vault database of a test's own with the index's storage in
// it: PostgreSQL when the tests run there (pgtest.Enabled), else SQLite.
type backend struct {
	db cairn.Backend
	st index.Storage
	// size returns the bytes the database takes.
	size func(testing.TB) int64
}

func openBackend(t testing.TB) *backend {
	t.Helper()
	ctx := context.Background()
	if pgtest.Enabled() {
		db, err := postgres.Open(ctx, pgtest.URL(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return &backend{db: db, st: postgres.NewIndexStorage(db), size: func(t testing.TB) int64 {
			// Every table of the vault's schema, with its indexes and TOAST.
			var n int64
			err := db.Pool().QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
				WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'`).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}}
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &backend{db: db, st: sqlite.NewIndexStorage(db), size: func(t testing.TB) int64 {
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}}
}
