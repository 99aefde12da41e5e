package sqlite_test

import (
	"testing"

	"cairn/auth"
	"cairn/postgres"
	"cairn/postgres/pgtest"
)

// The storages' tests of this package run on PostgreSQL too, on the
// storages of package postgres, when CAIRN_TEST_BACKEND=postgres
// (pgtest.Enabled): the same test functions, so both backends keep the
// same rows and answer with the same codes.

// openPostgres opens a new PostgreSQL vault database in a schema of its
// own, closed when the test ends; it skips the test unless the tests run
// on PostgreSQL.
func openPostgres(t *testing.T) *postgres.DB {
	t.Helper()
	if !pgtest.Enabled() {
		t.Skipf("%s is not postgres", pgtest.BackendEnv)
	}
	return openPostgresAt(t, pgtest.URL(t))
}

func openPostgresAt(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// postgresAuth returns the opener of a new PostgreSQL database.
func postgresAuth(t *testing.T) authOpener {
	if !pgtest.Enabled() {
		t.Skipf("%s is not postgres", pgtest.BackendEnv)
	}
	url := pgtest.URL(t)
	return func(t *testing.T) (storageDB, auth.Storage) {
		t.Helper()
		db := openPostgresAt(t, url)
		return db, postgres.NewAuthStorage(db)
	}
}

func TestAdmitStorage_Proposals_Postgres(t *testing.T) {
	db := openPostgres(t)
	testAdmitStorageProposals(t, db, postgres.NewAdmitStorage(db))
}

func TestAdmitStorage_Events_Postgres(t *testing.T) {
	db := openPostgres(t)
	testAdmitStorageEvents(t, db, postgres.NewAdmitStorage(db))
}

func TestWorktreeStorage_Trees_Postgres(t *testing.T) {
	db := openPostgres(t)
	testWorktreeStorageTrees(t, db, postgres.NewWorktreeStorage(db))
}

func TestWorktreeStorage_MoveTree_Postgres(t *testing.T) {
	db := openPostgres(t)
	testWorktreeStorageMoveTree(t, db, postgres.NewWorktreeStorage(db))
}

func TestWorktreeStorage_Sync_Postgres(t *testing.T) {
	db := openPostgres(t)
	testWorktreeStorageSync(t, db, postgres.NewWorktreeStorage(db))
}

func TestDB_Meta_Postgres(t *testing.T) { testDBMeta(t, openPostgres(t)) }

func TestAuthStorage_Tokens_Postgres(t *testing.T)    { testAuthStorageTokens(t, postgresAuth(t)) }
func TestAuthStorage_Requests_Postgres(t *testing.T)  { testAuthStorageRequests(t, postgresAuth(t)) }
func TestAuthStorage_OAuth_Postgres(t *testing.T)     { testAuthStorageOAuth(t, postgresAuth(t)) }
func TestAuthStorage_SpendOnce_Postgres(t *testing.T) { testAuthStorageSpendOnce(t, postgresAuth(t)) }
func TestAuthStorage_TakeOnce_Postgres(t *testing.T)  { testAuthStorageTakeOnce(t, postgresAuth(t)) }
