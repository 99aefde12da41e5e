package app_test

import (
	"context"
	"testing"

	"cairn/app"
	"cairn/postgres/pgtest"
)

// initApp is app.Init on the backend the tests run on: SQLite, or, with
// CAIRN_TEST_BACKEND=postgres, a schema of its own in PostgreSQL. A vault
// in PostgreSQL is bare: a test that needs a working tree is skipped
// there.
func initApp(t *testing.T, ctx context.Context, dir string, bare bool, opts *app.Options) (*app.App, error) {
	t.Helper()
	if pgtest.Enabled() {
		if !bare {
			t.Skip("needs a working tree, which a vault in PostgreSQL has not")
		}
		o := app.Options{}
		if opts != nil {
			o = *opts
		}
		o.Database = pgtest.URL(t)
		opts = &o
	}
	return app.Init(ctx, dir, bare, opts)
}
