package postgres

import (
	"context"

	"cairn"
)

// Meta returns the value recorded in the meta table under key; ENOTFOUND
// when none is (vault.Storage).
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var value string
	err := db.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, key).Scan(&value)
	if cairn.ErrorCode(db.translate(err)) == cairn.ENOTFOUND {
		return "", cairn.Errorf(cairn.ENOTFOUND, "no %s recorded", key)
	}
	return value, db.translate(err)
}

// SetMeta records value under key inside tx (a transaction of
// db.Update), replacing any value.
func (db *DB) SetMeta(ctx context.Context, tx cairn.Tx, key, value string) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return db.translate(err)
}
