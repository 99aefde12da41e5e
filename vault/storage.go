package vault

import (
	"context"

	"cairn"
	"cairn/sqlite"
)

// Storage keeps the vault's own records: the meta values that say what the
// vault is (bare), who it is (its identity) and where it was last opened
// (its root). The SQLite implementation is sqlite.DB itself
// (sqlite/vault.go): the meta table is the database's own.
//
// Errors of the database are returned with cairn's codes.
type Storage interface {
	// Meta returns the value recorded under key; ENOTFOUND when none is.
	Meta(ctx context.Context, key string) (string, error)
	// SetMeta records value under key inside tx, replacing any value.
	SetMeta(ctx context.Context, tx cairn.Tx, key, value string) error
}

// The check sqlite cannot make itself: it cannot import this package,
// which wires it in.
var _ Storage = (*sqlite.DB)(nil)
