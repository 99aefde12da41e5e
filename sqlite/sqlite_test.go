package sqlite_test

import (
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
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

// TestCheckpoint_Background checks that committed pages reach the
// database file while the database is open, copied by the background
// checkpointer rather than by a commit, and that the log is empty after
// Close.
func TestCheckpoint_Background(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []cairn.Object
	for i := range 2000 {
		data := make([]byte, 1000+i) // random: it does not compress
		rand.Read(data)
		objs = append(objs, cairn.Object{Hash: cairn.Hash(sha256.Sum256(data)), Kind: cairn.KindBlob, Data: data})
	}
	if err := db.Update(ctx, func(tx cairn.Tx) error { return tx.PutObjects(ctx, objs) }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > before.Size()+1<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database file is still %d bytes 10s after a 2 MB commit: no checkpoint ran", fi.Size())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Fatalf("the log holds %d bytes after Close", fi.Size())
	}
}

// TestOpen_NewerSchema checks that a database a newer cairn migrated is
// refused, with a hint, and left as it was: an older cairn's writes would
// leave out what the newer one keeps.
func TestOpen_NewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := sqlite.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write().Exec(`INSERT INTO schema_migrations (version, name, applied) VALUES (9999, '9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(t.Context(), path, nil)
	if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), "version 9999, newer than this cairn knows") ||
		!strings.Contains(cairn.ErrorHint(err), "cairn --version") {
		t.Fatalf("open a newer schema: %v (hint %q), want EINVALID naming the versions, with a hint", err, cairn.ErrorHint(err))
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM schema_migrations WHERE version = 9999`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the newer migration's row: %d (%v), want it kept", n, err)
	}
}
