// Package index keeps the derived index of a vault's main branch: every
// file with what its parse found, the keys links resolve by, every link and
// where it leads, backlinks, reachability from index.md, lint findings and
// full-text search (page bodies live only in the store). Its rows are kept
// by a [Storage] (sqlite.IndexStorage).
//
// The index is updated in the transaction that moves main, by a store hook,
// and the work is proportional to what the change affects: the files that
// changed, the links whose lookups a changed key answers, the pages whose
// reachability or inbound links changed. It can be rebuilt from any commit,
// checked against the store, and applied to any other tree without being
// kept ([Index.View]), which is how branches and old commits are read. A
// change is judged without the write lock by [Index.Preview], which runs
// the same incremental update on an in-memory overlay of a snapshot and
// keeps its writes for [Index.ApplyPreview] to make in the transaction
// that admits the change.
package index

import (
	"cmp"
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"

	"cairn"
	"cairn/store"
)

// Branch is the branch the index follows.
const Branch = "main"

// Options configure an Index. The zero value gives the defaults.
type Options struct {
	// Logger receives the index's logs. Default: discard.
	Logger *slog.Logger
}

// Index is the derived index of branch main. It is safe for concurrent use.
type Index struct {
	s   *store.Store
	st  Storage
	log *slog.Logger
	// types are the compiled types of recent trees.
	types typeCache
	// snapshots holds a place for each open snapshot, when the storage
	// bounds them (SnapshotLimiter).
	snapshots chan struct{}
	// contentMax is the most content a full build keeps on disk for its
	// second pass: contentSpillMax, but in tests.
	contentMax int64
}

// New returns the index over the store s, keeping its rows in st, which
// must write in the transactions of s's backend. Register [Index.Hook]
// with the store so that main never moves without the index.
func New(s *store.Store, st Storage, opts *Options) *Index {
	if opts == nil {
		opts = &Options{}
	}
	ix := &Index{s: s, st: st, log: cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))), contentMax: contentSpillMax}
	if l, ok := st.(SnapshotLimiter); ok {
		ix.snapshots = make(chan struct{}, max(0, l.MaxSnapshots()))
	}
	return ix
}

// inTx calls fn with the index's rows inside tx, and releases them.
func (ix *Index) inTx(ctx context.Context, tx *store.Tx, fn func(StorageTx) error) error {
	q, err := ix.st.Begin(ctx, tx.Backend())
	if err != nil {
		return err
	}
	err = fn(q)
	if cerr := q.Close(); err == nil {
		err = cerr
	}
	return err
}

// trees reads trees and content: the store, or a store transaction whose new
// objects are not committed yet.
type trees interface {
	Diff(ctx context.Context, a, b cairn.Hash, opts *store.DiffOptions) ([]cairn.Change, error)
	Files(ctx context.Context, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error]
	ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error)
	ReadBlobs(ctx context.Context, hs []cairn.Hash, fn func(h cairn.Hash, data []byte) error) error
	ReadCommit(ctx context.Context, h cairn.Hash) (*cairn.Commit, error)
}

// State is the commit the index reflects.
type State struct {
	Commit cairn.Hash `json:"commit"`
	Tree   cairn.Hash `json:"tree"`
}

// State returns the commit the index reflects; a zero State when main has
// never been indexed.
func (ix *Index) State(ctx context.Context) (State, error) {
	return readState(ctx, ix.st.Committed())
}

// readState is q's state, the empty tree when nothing was indexed.
func readState(ctx context.Context, q StorageReader) (State, error) {
	st, err := q.State(ctx)
	if err == nil && st.Tree.IsZero() {
		st.Tree = store.EmptyTree
	}
	return st, err
}

// Hook returns the store hook that updates the index whenever main moves,
// inside the same transaction.
func (ix *Index) Hook() store.RefHook {
	return func(ctx context.Context, tx *store.Tx, u cairn.RefUpdate) error {
		if u.Name != "heads/"+Branch {
			return nil
		}
		return ix.inTx(ctx, tx, func(q StorageTx) error { return ix.follow(ctx, q, tx, u.New) })
	}
}

// follow brings the index to commit c (zero: main was deleted), updating
// incrementally from the indexed commit.
func (ix *Index) follow(ctx context.Context, q StorageTx, t trees, c cairn.Hash) error {
	st, err := readState(ctx, q)
	if err != nil {
		return err
	}
	to := store.EmptyTree
	if !c.IsZero() {
		cm, err := t.ReadCommit(ctx, c)
		if err != nil {
			return err
		}
		to = cm.Tree
	}
	if err := ix.apply(ctx, q, t, st.Tree, to, nil); err != nil {
		return err
	}
	return q.SetState(ctx, State{Commit: c, Tree: to})
}

// Update brings the index up to the current head of main in its own
// transaction; it is a no-op when the index is current. Use it after
// opening a vault whose index may lag (a vault indexed by an older cairn,
// or a rebuilt database).
func (ix *Index) Update(ctx context.Context) error {
	return ix.s.Update(ctx, func(tx *store.Tx) error {
		head, err := tx.Head(ctx, Branch)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return err
		}
		return ix.inTx(ctx, tx, func(q StorageTx) error {
			st, err := readState(ctx, q)
			if err != nil {
				return err
			}
			if st.Commit == head {
				return nil
			}
			return ix.follow(ctx, q, tx, head)
		})
	})
}

// errRollback ends a view's transaction without keeping anything.
var errRollback = errors.New("index view: roll back")

// View calls fn with a Reader of the index of tree, without keeping it: it
// serves branches, proposals, drafts and old commits without indexing
// them, at a cost that follows the size of their difference from the
// indexed tree. b, when not nil, holds objects of tree that are not stored
// (a draft's): they are read from it and never written.
//
// The difference is applied in memory to a snapshot of the committed index
// (the overlay the lint gate judges changes on, [Index.Preview]), so a
// view takes no lock and neither waits for writers nor holds them up:
// searches merge the snapshot's hits with the changed pages' words, and
// titles, counts and queries by field merge the snapshot's rows with the
// overlay's. The one read an overlay does not answer itself, a query of a
// field's containment (which ignores case as each storage's SQL does), is
// made in a write transaction of its own, holding the vault's write lock
// for that call: what it returns (paths, titles) follows from tree alone,
// so it agrees with the overlay's other answers whatever committed
// meanwhile. A difference too large to apply in memory (a full build) is
// applied inside a write transaction that is rolled back, holding the lock
// while fn runs. fn runs once.
//
// One answer may differ from the index of tree: a search for a prefix
// that starts more words than a storage sums for its score (64) in the
// snapshot and no more in tree, or the reverse, is scored as in the
// snapshot (its matches and their order do not change).
func (ix *Index) View(ctx context.Context, b *store.Batch, tree cairn.Hash, fn func(*Reader) error) error {
	batch := b
	if batch == nil {
		batch = ix.s.NewBatch()
	}
	var fnErr error
	ran := false
	err := ix.onSnapshot(ctx, batch, tree, nil, func(o *overlay, _ *Preview) error {
		o.locked = func(ctx context.Context, read func(StorageReader) error) error {
			return ix.lockedView(ctx, b, tree, func(r *Reader) error { return read(r.q) })
		}
		ran, fnErr = true, fn(&Reader{q: o, t: batchTrees{batch}})
		return nil
	})
	switch {
	case ran && fnErr != nil:
		return fnErr // what fn met, whatever closing the snapshot then met
	case errors.Is(err, ErrBulk):
		return ix.lockedView(ctx, b, tree, fn)
	}
	return err
}

// lockedView applies the difference between the indexed tree and tree
// inside a write transaction, calls fn with a Reader of the result, and
// rolls back. It holds the write lock while fn runs.
func (ix *Index) lockedView(ctx context.Context, b *store.Batch, tree cairn.Hash, fn func(*Reader) error) error {
	var fnErr error
	err := ix.s.Update(ctx, func(tx *store.Tx) error {
		if b != nil {
			tx.Use(b)
		}
		err := ix.inTx(ctx, tx, func(q StorageTx) error {
			st, err := readState(ctx, q)
			if err != nil {
				return err
			}
			if err := ix.apply(ctx, q, tx, st.Tree, tree, nil); err != nil {
				return err
			}
			fnErr = fn(&Reader{q: q, t: tx})
			return nil
		})
		if err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		return fnErr
	}
	return err
}

// Main returns a Reader of the committed index of main.
func (ix *Index) Main() *Reader {
	return &Reader{q: ix.st.Committed(), t: ix.s, snapshot: ix.st.Snapshot}
}
