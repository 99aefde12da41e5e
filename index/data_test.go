package index

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"cairn/markdown"
)

func TestLinkCodec(t *testing.T) {
	for _, l := range []markdown.Link{
		{Kind: markdown.LinkWiki, Target: "Some Page", Label: "a label", Line: 3, Col: 7},
		{Kind: markdown.LinkEmbed, Target: "img.png", Embed: true, Line: 1, Col: 1},
		{Kind: markdown.LinkWiki, Target: "t", Heading: "Déjà vu", Escapes: true, Line: 100000, Col: 2},
		{Kind: markdown.LinkWiki, Block: "abc123", Line: 9},
		{Kind: markdown.LinkMarkdown, Target: "sub/f", Path: "sub/f.md", Label: "f", Line: 4, Col: 12},
		{Kind: markdown.LinkFrontmatter, Target: "x", Property: "related"},
	} {
		b := encodeLink(l)
		var got markdown.Link
		if err := decodeLink(b, linkFlags(l), &got); err != nil {
			t.Fatalf("decode %+v: %v", l, err)
		}
		if got != l {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, l)
		}
		for n := range len(b) {
			if err := decodeLink(b[:n], 0, &got); !errors.Is(err, errBadLink) {
				t.Errorf("decode of %d of %d bytes: err = %v, want errBadLink", n, len(b), err)
			}
		}
	}
}

// execDriver runs statements through database/sql when the transaction
// gives no driver connection, and binds them to the driver's when it does.
func TestExecDriver(t *testing.T) {
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
	for _, tc := range []struct {
		name string
		raw  func(func(any) error) (bool, error)
	}{
		{"without a driver connection", func(func(any) error) (bool, error) { return false, nil }},
		{"with the driver connection", func(fn func(any) error) (bool, error) { return true, conn.Raw(fn) }},
	} {
		q := newPrepared(tx)
		q.raw, q.driver = tc.raw, map[string]driver.Stmt{}
		for i := range 3 {
			if err := q.execDriver(ctx, `INSERT INTO t (a, b, c) VALUES (?, ?, ?)`, i, "x", []byte{1}); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		q.close()
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE b = 'x' AND c = x'01'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("rows written = %d, want 6", n)
	}
}
