package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"cairn"
	"cairn/sqlite"
)

func TestSQLTx(t *testing.T) {
	db, _ := setupWorktreeStorage(t)
	t.Run("OK", func(t *testing.T) {
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			q, err := sqlite.SQLTx(tx)
			if err != nil || q == nil {
				t.Errorf("SQLTx(a transaction of Update) = %v, %v, want its *sql.Tx", q, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		if _, err := sqlite.SQLTx(nil); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("SQLTx(nil) = %v, want EINTERNAL", err)
		}
	})
}

func TestTranslate(t *testing.T) {
	if err := sqlite.Translate(nil); err != nil {
		t.Errorf("Translate(nil) = %v, want nil", err)
	}
	in := cairn.Errorf(cairn.ECONFLICT, "taken")
	if err := sqlite.Translate(in); err != in {
		t.Errorf("Translate(a cairn error) = %v, want it unchanged", err)
	}
	if err := sqlite.Translate(fmt.Errorf("read: %w", sql.ErrNoRows)); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("Translate(sql.ErrNoRows) = %v, want ENOTFOUND", err)
	}
}

// TestInspect: a view takes no write lock (a write by another connection
// lands while it is open, and the view does not see it), and content
// purged while it is open makes its result void (EUNAVAILABLE).
func TestInspect(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, t.TempDir()+"/cairn.db", &sqlite.Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	data := []byte("a secret")
	blob := cairn.Object{Hash: cairn.Hash(sha256.Sum256(data)), Kind: cairn.KindBlob, Data: data}
	if err := db.PutObjects(ctx, []cairn.Object{blob}); err != nil {
		t.Fatal(err)
	}
	err = db.Inspect(ctx, func(tx cairn.Tx) error {
		q, err := sqlite.SQLTx(tx)
		if err != nil {
			return err
		}
		if _, err := db.Write().ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('beside', '1')`); err != nil {
			return fmt.Errorf("a write beside the view: %w", err)
		}
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM meta WHERE key = 'beside'`).Scan(&n); err != nil || n != 0 {
			return fmt.Errorf("the view sees %d rows written after it began (%v)", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Inspect(ctx, func(cairn.Tx) error {
		return db.Purge(ctx, cairn.Purge{Hash: blob.Hash, Principal: cairn.User("ada"), Reason: "leaked", Time: time.Now()})
	})
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
		t.Fatalf("a purge while the view was open: %v, want EUNAVAILABLE", err)
	}
}

// TestCheckpoint_BesideAView: a truncating checkpoint (after a purge) that
// a long view keeps from finishing does not stall another process's
// writes while it tries: each try waits for nothing.
func TestCheckpoint_BesideAView(t *testing.T) {
	ctx := t.Context()
	path := t.TempDir() + "/cairn.db"
	db, err := sqlite.Open(ctx, path, &sqlite.Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sqlite.Open(ctx, path, &sqlite.Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := db.Write().ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('before', '1')`); err != nil {
		t.Fatal(err)
	}
	err = db.Inspect(ctx, func(tx cairn.Tx) error {
		done := make(chan error, 1)
		go func() { done <- db.Checkpoint(ctx) }() // cannot truncate past the view: tries for a second
		writes := 0
		for start := time.Now(); time.Since(start) < 900*time.Millisecond; writes++ {
			if _, err := other.Write().ExecContext(ctx, `INSERT OR REPLACE INTO meta (key, value) VALUES ('beside', ?)`, writes); err != nil {
				return fmt.Errorf("write %d beside the checkpoint: %w", writes, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := <-done; cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
			return fmt.Errorf("the checkpoint past a view: %v, want EUNAVAILABLE", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
