package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

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
