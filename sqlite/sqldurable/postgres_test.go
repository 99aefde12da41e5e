package sqldurable_test

import (
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"cairn"
	"cairn/durable"
	"cairn/postgres"
	"cairn/postgres/pgdurable"
	"cairn/postgres/pgtest"
)

// The tests of this package run on PostgreSQL too, on pgdurable's
// storage and River's riverpgxv5 layout of river_job, when
// CAIRN_TEST_BACKEND=postgres (pgtest.Enabled): the same test functions,
// with River's rows made, damaged and read in that layout.

// setupPostgres opens a new PostgreSQL vault database in a schema of its
// own, runs River's migrations in it and returns the storage and the
// queue on it; it skips the test unless the tests run on PostgreSQL.
func setupPostgres(t *testing.T) *backend {
	t.Helper()
	b, _ := setupPostgresDB(t)
	return b
}

// setupPostgresDB is setupPostgres that returns the database too.
func setupPostgresDB(t *testing.T) (*backend, *postgres.DB) {
	t.Helper()
	if !pgtest.Enabled() {
		t.Skipf("%s is not postgres", pgtest.BackendEnv)
	}
	ctx := t.Context()
	db, err := postgres.Open(ctx, pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m, err := rivermigrate.New(riverpgxv5.New(db.RiverPool()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatal(err)
	}
	st := pgdurable.New(db)
	q, err := durable.NewPostgres(db.RiverPool(), st, durable.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{st: st, q: q}
	b.running = func(t *testing.T, by string) int64 {
		t.Helper()
		ctx := t.Context()
		var id int64
		err := db.Update(ctx, func(tx cairn.Tx) error {
			var err error
			if id, err = q.InsertTx(ctx, tx, noopArgs{}, &river.InsertOpts{MaxAttempts: 2}); err != nil {
				return err
			}
			ptx, err := postgres.PgxTx(tx)
			if err != nil {
				return err
			}
			_, err = ptx.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(), attempted_by = ARRAY[$1::text] WHERE id = $2`,
				by, id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	b.damage = func(t *testing.T, id int64) {
		t.Helper()
		// A text[] column takes an array of two dimensions.
		if _, err := db.Pool().Exec(t.Context(), `UPDATE river_job SET attempted_by = '{{a,b},{c,d}}' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	b.state = func(t *testing.T, id int64) (string, int) {
		t.Helper()
		var s string
		var errs int
		err := db.Pool().QueryRow(t.Context(), `SELECT state::text, coalesce(array_length(errors, 1), 0) FROM river_job WHERE id = $1`, id).
			Scan(&s, &errs)
		if err != nil {
			t.Fatal(err)
		}
		return s, errs
	}
	return b, db
}

func TestStorage_Workers_Postgres(t *testing.T)     { testStorageWorkers(t, setupPostgres(t)) }
func TestStorage_RunningJobs_Postgres(t *testing.T) { testStorageRunningJobs(t, setupPostgres(t)) }
func TestStorage_Rescue_Postgres(t *testing.T)      { testStorageRescue(t, setupPostgres(t)) }

// TestStorage_RunningJobs_NullWorker_Postgres: an attempted_by holding a
// NULL names no worker: it is not a list of worker ids either.
func TestStorage_RunningJobs_NullWorker_Postgres(t *testing.T) {
	b, db := setupPostgresDB(t)
	id := b.running(t, "h:9:dd")
	if _, err := db.Pool().Exec(t.Context(), `UPDATE river_job SET attempted_by = ARRAY['h:1:aa', NULL] WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.RunningJobs(t.Context()); cairn.ErrorCode(err) != cairn.EINTERNAL {
		t.Errorf("RunningJobs() with a NULL worker = %v, want EINTERNAL", err)
	}
}
