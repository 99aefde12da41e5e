package sqlite

import (
	"database/sql"

	"cairn"
)

// SQLTx returns the database transaction of a transaction of DB.Update,
// for the storage implementations in the subpackages of sqlite (this
// package cannot import the subsystems they serve: ingest imports vault,
// which imports sqlite); another backend's transaction is EINTERNAL.
func SQLTx(tx cairn.Tx) (*sql.Tx, error) { return asSQLTx(tx) }

// Translate maps an error of the database driver to cairn's codes, as this
// package's own methods return them: sql.ErrNoRows is ENOTFOUND, a write
// lock not had within the busy timeout or a full disk EUNAVAILABLE, a
// read-only database EFORBIDDEN; cairn errors and nil pass unchanged, and
// any other error is returned as it is.
func Translate(err error) error { return translate(err) }
