// Package pgtest gives tests a PostgreSQL vault database of their own: a
// fresh schema in the database named by CAIRN_TEST_POSTGRES (for example
// postgres://postgres@127.0.0.1:5432/test), dropped when the test ends.
// Without that variable the tests that need PostgreSQL are skipped, except
// under CI=true, where they fail: CI must run them.
package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the environment variable naming the test database.
const Env = "CAIRN_TEST_POSTGRES"

// Base returns the URL of the test database, skipping the test when there
// is none (failing it under CI).
func Base(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI runs the PostgreSQL tests (.ci/run sets it)", Env)
		}
		t.Skipf("%s is not set: no PostgreSQL to test against", Env)
	}
	return base
}

// URL makes a schema of its own for the test and returns the URL of the
// test database with search_path set to it. The schema is dropped when the
// test ends.
func URL(t testing.TB) string {
	t.Helper()
	base := Base(t)
	schema := "cairn_test_" + strings.ToLower(rand.Text()[:12])
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := Drop(ctx, base, schema); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	return u.String()
}

// Drop removes a schema and everything in it.
func Drop(ctx context.Context, base, schema string) error {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, fmt.Sprintf(`DROP SCHEMA IF EXISTS %s CASCADE`, pgx.Identifier{schema}.Sanitize()))
	return err
}

// BackendEnv is the environment variable that moves the tests of every
// subsystem that keeps rows in the vault's database onto PostgreSQL:
// CAIRN_TEST_BACKEND=postgres (with CAIRN_TEST_POSTGRES naming the
// database). Unset or "sqlite": they run on SQLite, as by default.
const BackendEnv = "CAIRN_TEST_BACKEND"

// Enabled reports whether the subsystems' tests run on PostgreSQL
// (CAIRN_TEST_BACKEND=postgres).
func Enabled() bool { return os.Getenv(BackendEnv) == "postgres" }
