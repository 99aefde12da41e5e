package admit_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/index"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/sqlite"
)

// vaultDB is a new vault database with the index's and admission's
// storages in it.
type vaultDB struct {
	db    cairn.Backend
	index index.Storage
	admit admit.Storage
}

// openBackend opens a new vault database, closed when the test ends:
// SQLite's, or, when CAIRN_TEST_BACKEND=postgres (pgtest.Enabled),
// PostgreSQL's, in a schema of its own. onWrite, when set, is called after
// every transaction that held the vault's write lock: on SQLite every
// write transaction (sqlite.Options.WriteHeld), on PostgreSQL every one of
// Update (its objects are written without the lock).
func openBackend(t *testing.T, onWrite func()) vaultDB {
	t.Helper()
	ctx := t.Context()
	if pgtest.Enabled() {
		db, err := postgres.Open(ctx, pgtest.URL(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		v := vaultDB{db: db, index: postgres.NewIndexStorage(db), admit: postgres.NewAdmitStorage(db)}
		if onWrite != nil {
			v.db = countingBackend{Backend: db, onWrite: onWrite}
		}
		return v
	}
	var opts *sqlite.Options
	if onWrite != nil {
		opts = &sqlite.Options{WriteHeld: func(time.Duration) { onWrite() }}
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return vaultDB{db: db, index: sqlite.NewIndexStorage(db), admit: sqlite.NewAdmitStorage(db)}
}

// countingBackend is a backend that calls onWrite after each of its write
// transactions.
type countingBackend struct {
	cairn.Backend
	onWrite func()
}

func (c countingBackend) Update(ctx context.Context, fn func(cairn.Tx) error) error {
	defer c.onWrite()
	return c.Backend.Update(ctx, fn)
}
