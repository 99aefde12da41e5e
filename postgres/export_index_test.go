package postgres

import (
	"context"

	"cairn/index"
)

// SetLeastShortPages makes the fewest pages the shortest pages' tier of
// s holds least (1,000 by default), so that a test's small vault has
// tiers of a large one's proportions.
func SetLeastShortPages(s index.Storage, least int) {
	s.(*IndexStorage).sizes.least = least
}

// BuiltTables are the tables a vault's first build locks.
func BuiltTables() []string { return builtTables() }

// ReadsFolderFirst reports whether a search of r for limit pages under
// folder reads the folder's files first.
func ReadsFolderFirst(ctx context.Context, r index.StorageReader, folder string, limit int) (bool, error) {
	under, _, err := r.(*indexReader).folderFirst(ctx, folder, limit)
	return under != nil, err
}

// SetSideIndexes makes the side of db's first builds make at most n of
// the full text's indexes, and the build's transaction the others.
func SetSideIndexes(db *DB, n int) { db.sideMost = n }

// OnSideWait makes db call fn when a first build's transaction has done
// its part of the full text and waits for the side's.
func OnSideWait(db *DB, fn func()) { db.sideWaits = fn }

// OnWriteWait makes db call fn whenever one of its writes waits for
// another's turn.
func OnWriteWait(db *DB, fn func()) { db.waits = fn }
