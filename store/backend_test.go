package store_test

import (
	"path/filepath"
	"testing"

	"cairn"
	"cairn/sqlite"
	"cairn/store"
)

func init() {
	store.OpenTestBackend = func(tb testing.TB) cairn.Backend {
		tb.Helper()
		db, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "cairn.db"), nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		return db
	}
}
