package sqlite_test

import (
	"path/filepath"
	"testing"

	"cairn"
	"cairn/sqlite"
	"cairn/storetest"
)

func open(t *testing.T) cairn.Backend {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, open)
}
