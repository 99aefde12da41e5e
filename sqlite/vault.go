package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"cairn"
)

// The vault's own records (vault.Storage): the meta values that say what a
// vault is, who it is and where it was opened, in the meta table that also
// holds the store's format version. They are methods of DB rather than of
// a type of their own because the table is the database's own, and because
// package vault, which wires this package in, cannot be imported here; the
// check that DB implements vault.Storage is in vault.

// Meta returns the value recorded in the meta table under key; ENOTFOUND
// when none is.
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var value string
	err := db.rq.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", cairn.Errorf(cairn.ENOTFOUND, "no %s recorded", key)
	}
	return value, translate(err)
}

// SetMeta records value under key in the meta table inside tx (a
// transaction of db.Update), replacing any value.
func (db *DB) SetMeta(ctx context.Context, tx cairn.Tx, key, value string) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return translate(err)
}
