package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

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

// TestOpen_NeverWaits checks that opening a vault's database takes no write
// lock: a read-only command runs while another process writes.
func TestOpen_NeverWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	first, err := sqlite.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	var vacuum int
	if err := first.Read().QueryRow(`PRAGMA auto_vacuum`).Scan(&vacuum); err != nil || vacuum != 2 {
		t.Errorf("auto_vacuum = %d (%v), want 2 (incremental)", vacuum, err)
	}
	tx, err := first.Write().Begin() // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES ('held', '1')`); err != nil {
		t.Fatal(err)
	}
	second, err := sqlite.Open(t.Context(), path, &sqlite.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("open while another connection writes: %v", err)
	}
	second.Close()
}
