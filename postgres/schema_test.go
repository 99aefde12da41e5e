package postgres_test

import (
	"context"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"cairn/postgres"
	"cairn/postgres/pgtest"
)

// TestSchemaOf: the schema a search_path makes tables in, as PostgreSQL
// reads it: the first element; unquoted, its ASCII letters in lower case
// and nothing else changed (a UTF-8 database folds no other letter);
// quoted, as written, with "" read as ".
func TestSchemaOf(t *testing.T) {
	for in, want := range map[string]string{
		"":                "public",
		"Vault":           "vault",
		" Vault , public": "vault",
		`"Vault"`:         "Vault",
		`"a ""b"" c",x`:   `a "b" c`,
		"ÄRGER_Ü":         "Ärger_Ü",
		`"ÄRGER"`:         "ÄRGER",
		"straße":          "straße",
		"ǅemal":           "ǅemal",
		"ÉCOLE_2, public": "École_2",
	} {
		if got := postgres.SchemaOf(in); got != want {
			t.Errorf("SchemaOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOpen_NonASCIISchema: a vault whose search_path names a schema with
// upper-case letters beyond ASCII, unquoted, is made in the schema
// PostgreSQL makes its tables in, and opens again.
func TestOpen_NonASCIISchema(t *testing.T) {
	ctx := t.Context()
	base := pgtest.Base(t)
	schema := "ÄRGER_" + strings.ToUpper(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "_"))
	u, err := neturl.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	made := postgres.SchemaOf(schema)
	t.Cleanup(func() {
		if err := pgtest.Drop(context.Background(), base, made); err != nil {
			t.Error(err)
		}
	})
	for range 2 {
		db, err := postgres.Open(ctx, u.String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var current string
		var tables int
		err = db.Pool().QueryRow(ctx, `SELECT current_schema(), (SELECT count(*) FROM pg_tables WHERE schemaname = $1)`, made).Scan(&current, &tables)
		db.Close()
		if err != nil || current != made || tables == 0 {
			t.Fatalf("current_schema() = %q, %d tables in %q, %v; want the vault's tables there", current, tables, made, err)
		}
	}
}
