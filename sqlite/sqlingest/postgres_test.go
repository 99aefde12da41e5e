package sqlingest_test

import (
	"testing"

	"cairn/postgres"
	"cairn/postgres/pgingest"
	"cairn/postgres/pgtest"
)

// The tests of this package run on PostgreSQL too, on pgingest's
// storage, when CAIRN_TEST_BACKEND=postgres (pgtest.Enabled): the same
// test functions, so both backends keep the same rows and answer with the
// same codes.

// setupPostgres opens a new PostgreSQL vault database in a schema of its
// own and the sources' storage in it; it skips the test unless the tests
// run on PostgreSQL.
func setupPostgres(t *testing.T) (*postgres.DB, *pgingest.Storage) {
	t.Helper()
	if !pgtest.Enabled() {
		t.Skipf("%s is not postgres", pgtest.BackendEnv)
	}
	db, err := postgres.Open(t.Context(), pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, pgingest.New(db)
}

func TestStorage_PutSource_Postgres(t *testing.T) {
	db, st := setupPostgres(t)
	testStoragePutSource(t, db, st)
}

func TestStorage_SetStatus_Postgres(t *testing.T) {
	db, st := setupPostgres(t)
	testStorageSetStatus(t, db, st)
}

func TestStorage_Source_Postgres(t *testing.T) {
	db, st := setupPostgres(t)
	testStorageSource(t, db, st)
}
