package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"testing"
)

// exec binds values to the driver's statements, and runs a statement with
// a value of another type through database/sql.
func TestIndexPrepared_Exec(t *testing.T) {
	ctx := t.Context()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE t (a INTEGER, b TEXT, c BLOB)`); err != nil {
		t.Fatal(err)
	}
	p := &indexPrepared{tx: tx, raw: conn.Raw, stmts: map[string]*sql.Stmt{}, driver: map[string]driver.Stmt{}}
	for i := range 3 {
		if err := p.exec(ctx, `INSERT INTO t (a, b, c) VALUES (?, ?, ?)`, i, "x", []byte{1}); err != nil {
			t.Fatalf("exec on the driver: %v", err)
		}
	}
	if err := p.exec(ctx, `INSERT INTO t (a, b, c) VALUES (?, ?, ?)`, int32(3), "x", []byte{1}); err != nil {
		t.Fatalf("exec through database/sql: %v", err)
	}
	if len(p.driver) != 1 {
		t.Errorf("driver statements = %d, want 1 (prepared once)", len(p.driver))
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE b = 'x' AND c = x'01'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("rows written = %d, want 4", n)
	}
}
