package worktree

import (
	"context"
	"time"

	"cairn"
)

// Storage keeps the records of a vault's working trees: the trees, the stat
// rows that let a scan skip files that have not changed, and the overrides
// (files whose base is not the base commit's version, because the person
// had edited them when the branch moved). The SQLite implementation is
// sqlite.WorktreeStorage; docs/storage.md lists the others.
//
// Methods that take a cairn.Tx write (or read) inside the store's write
// transaction, so that their rows commit with the ref update they go with;
// the others read what is committed. Errors of the database are returned
// with cairn's codes: a missing row has code ENOTFOUND, a write lock that
// cannot be had EUNAVAILABLE.
type Storage interface {
	// Trees returns every working tree, by path.
	Trees(ctx context.Context) ([]*Tree, error)
	// Tree returns the working tree with the given id; ENOTFOUND when there
	// is none.
	Tree(ctx context.Context, id int64) (*Tree, error)
	// TreeAt returns the working tree recorded at an absolute folder path;
	// ENOTFOUND when there is none.
	TreeAt(ctx context.Context, path string) (*Tree, error)
	// BranchTree returns, inside tx, the first by path of the working trees
	// that hold branch; ENOTFOUND when none does.
	BranchTree(ctx context.Context, tx cairn.Tx, branch string) (*Tree, error)

	// AddTree records, inside tx, a working tree at t.Path holding t.Branch
	// at t.Base (zero: no commit yet), made at created, and returns its id.
	// A tree already recorded at t.Path is ECONFLICT.
	AddTree(ctx context.Context, tx cairn.Tx, t *Tree, created time.Time) (int64, error)
	// MoveTree records, inside tx, that the working tree id, recorded at
	// the folder from, is now at the folder to. It does nothing when tree
	// id is not recorded at from; another tree recorded at to is ECONFLICT.
	MoveTree(ctx context.Context, tx cairn.Tx, id int64, from, to string) error
	// SetPending records, inside tx, that a sync of tree id to commit
	// target is under way (Tree.Pending).
	SetPending(ctx context.Context, tx cairn.Tx, id int64, target cairn.Hash) error
	// FinishSync records, inside tx, the end of a sync of tree id: what
	// the sync did (see Synced), then the tree's new base, with no sync
	// pending.
	FinishSync(ctx context.Context, tx cairn.Tx, id int64, done Synced) error
	// DeleteTree removes, inside tx, tree id with its stat rows and
	// overrides; it does nothing when there is no such tree.
	DeleteTree(ctx context.Context, tx cairn.Tx, id int64) error

	// Stats returns the stat rows of tree id by path (an empty map when it
	// has none).
	Stats(ctx context.Context, id int64) (map[string]FileStat, error)
	// Stat returns the stat row of one path of tree id; ENOTFOUND when
	// there is none.
	Stat(ctx context.Context, id int64, path string) (FileStat, error)
	// PutStats writes stat rows of tree id inside tx, replacing those of
	// the same paths.
	PutStats(ctx context.Context, tx cairn.Tx, id int64, stats []FileStat) error

	// Overrides returns the overrides of tree id by path (an empty map
	// when it has none). An entry with a zero Blob says the file was
	// absent from the base the person edited.
	Overrides(ctx context.Context, id int64) (map[string]cairn.Entry, error)
	// SetOverrides records overrides of tree id inside tx, replacing those
	// of the same paths; an entry with a zero Blob records an absent file.
	SetOverrides(ctx context.Context, tx cairn.Tx, id int64, over []cairn.Entry) error
}

// FileStat is what a file of a working tree looked like when cairn last
// read or wrote it, so that a scan reads only files whose size or
// modification time changed since.
type FileStat struct {
	Path  string
	Size  int64
	Mtime int64 // unix nanoseconds
	Blob  cairn.Hash
	// Checked is when the row was written, unix nanoseconds: a file
	// modified less than two seconds before it is read again (a change in
	// the same clock tick would not show in its modification time).
	Checked int64
}

// Synced is what a sync did to a working tree's records, written in one
// transaction with its new base (Storage.FinishSync), in this order. A
// sync of many files writes the stat rows of most of them before, with
// PutStats; Stats holds the others.
type Synced struct {
	// Resolved are the paths whose overrides go: the folder now holds the
	// target's version.
	Resolved []string
	// Overrides are the overrides to add: local edits the sync left alone,
	// with the base they were made from.
	Overrides []cairn.Entry
	// Deleted are the paths whose stat rows go: the target does not have
	// them (the sync deleted them, or left a local edit alone).
	Deleted []string
	// Stats are the stat rows to write: files written, or read, by the
	// sync, whose rows were not written before.
	Stats []FileStat
	// Base is the commit the folder now holds.
	Base cairn.Hash
}
