package index

import (
	"context"
	"errors"
	"fmt"

	"cairn"
	"cairn/lint"
	"cairn/store"
)

// Delta is how a change of tree changed the findings: what went and what
// came, as multisets of findings.
type Delta struct {
	Removed []lint.Finding `json:"removed"`
	Added   []lint.Finding `json:"added"`
}

// New returns the findings the change brought that the base did not have,
// compared by identity as multisets (lint.New): the lint regression of the
// change. Findings of files the change did not affect are in neither list.
func (d *Delta) New() []lint.Finding {
	out := lint.New(d.Removed, d.Added)
	lint.Sort(out)
	return out
}

// dropFindings removes a file's findings, first noting them in the delta.
func (w *writer) dropFindings(ctx context.Context, id int64) error {
	if w.delta != nil {
		fs, err := w.q.Findings(ctx, id, "")
		if err != nil {
			return err
		}
		w.delta.Removed = append(w.delta.Removed, fs...)
	}
	return w.q.DeleteFindings(ctx, id)
}

// Apply brings the index, inside tx, from the tree it reflects to tree, as
// the hook does when main moves to a commit of that tree, and returns how
// the findings changed. The admission pipeline calls it before moving main,
// to judge a change by the findings it brings; the hook that runs when main
// then moves to a commit of tree has nothing left to do. If main does not
// move, the caller must roll tx back.
func (ix *Index) Apply(ctx context.Context, tx *store.Tx, tree cairn.Hash) (*Delta, error) {
	d := &Delta{}
	err := ix.inTx(ctx, tx, func(q StorageTx) error {
		st, err := readState(ctx, q)
		if err != nil {
			return err
		}
		if err := ix.apply(ctx, q, tx, st.Tree, tree, d); err != nil {
			return fmt.Errorf("index %s: %w", tree.Short(), err)
		}
		return q.SetState(ctx, State{Commit: st.Commit, Tree: tree})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// SnapshotLimiter is a Storage whose snapshots hold a connection of a
// pool that the reads of trees and contents share: a view or preview
// holds its snapshot while it reads them, so as many snapshots as the
// pool has connections would each wait for one more, for ever.
// MaxSnapshots is how many may be open at once; the index waits for one
// to close before it opens another. With 0 (a pool too small to spare a
// connection) no snapshot is opened: views and previews are made in
// write transactions (ErrBulk).
type SnapshotLimiter interface {
	MaxSnapshots() int
}

// snapshotSlot waits until a snapshot may be opened ([SnapshotLimiter])
// and returns the function that frees its place.
func (ix *Index) snapshotSlot(ctx context.Context) (func(), error) {
	if ix.snapshots == nil {
		return func() {}, nil
	}
	if cap(ix.snapshots) == 0 {
		return nil, ErrBulk
	}
	select {
	case ix.snapshots <- struct{}{}:
		return func() { <-ix.snapshots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("index: wait for a snapshot: %w", ctx.Err())
	}
}

// ErrStale is what [Index.Preview] returns when the committed index no
// longer reflects the commit the caller judged against: main moved.
var ErrStale = errors.New("the index reflects another commit of main")

// ErrBulk is what [Index.Preview] returns for a change too large to judge
// incrementally (the first commit of a vault, or an import): [Index.Apply]
// inside the write transaction judges it instead.
var ErrBulk = errors.New("the change is judged by a full build")

// batchTrees reads trees through a batch, commits through its store.
type batchTrees struct{ *store.Batch }

func (b batchTrees) ReadCommit(ctx context.Context, h cairn.Hash) (*cairn.Commit, error) {
	return b.Store().ReadCommit(ctx, h)
}

// A Preview is a change of tree judged on a snapshot of the committed
// index ([Index.Preview]): how its findings change, and the writes that
// bring the index there, kept to be made in a write transaction
// ([Index.ApplyPreview]) without reading, parsing or resolving again.
type Preview struct {
	// Delta is how the change changes the findings, as Apply reports it.
	Delta *Delta

	base    State // the committed state the preview started from
	next    int64 // the base's next file id: a rebuild changes every id
	journal []func(context.Context, StorageTx) error
}

// Preview returns how the findings would change if main moved from commit
// at to a commit of tree, as [Index.Apply] would report it, without the
// write lock and without writing: the incremental update runs on a
// snapshot of the committed index with its writes kept in memory. b reads
// the trees (its new objects need not be written). The admission pipeline
// judges a change's lint with it while other processes commit.
//
// Errors: ErrStale when the committed index reflects another commit than
// at; ErrBulk when the change is too large to update incrementally.
func (ix *Index) Preview(ctx context.Context, b *store.Batch, at, tree cairn.Hash) (*Preview, error) {
	var pv *Preview
	err := ix.preview(ctx, b, at, tree, func(o *overlay, p *Preview) error {
		pv = p
		return nil
	})
	return pv, err
}

// preview brings an overlay of a snapshot from commit at to tree and calls
// fn with it and the preview.
func (ix *Index) preview(ctx context.Context, b *store.Batch, at, tree cairn.Hash, fn func(*overlay, *Preview) error) error {
	return ix.onSnapshot(ctx, b, tree, func(st State) error {
		if st.Commit != at {
			return ErrStale
		}
		return nil
	}, fn)
}

// onSnapshot brings an overlay of a snapshot of the committed index to
// tree and calls fn with it and the preview. A preview's check accepts the
// snapshot's state, and its Delta is kept; a view (check nil) keeps none.
func (ix *Index) onSnapshot(ctx context.Context, b *store.Batch, tree cairn.Hash, check func(State) error,
	fn func(*overlay, *Preview) error) (err error) {
	release, err := ix.snapshotSlot(ctx)
	if err != nil {
		return err
	}
	defer release()
	snap, err := ix.st.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("index: read a snapshot: %w", err)
	}
	defer func() {
		if cerr := snap.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("index: close the snapshot: %w", cerr)
		}
	}()
	st, err := readState(ctx, snap)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(st); err != nil {
			return err
		}
	}
	if st.Tree == store.EmptyTree {
		return ErrBulk
	}
	next, err := snap.NextFileID(ctx)
	if err != nil {
		return err
	}
	o := newOverlay(snap, next)
	pv := &Preview{base: st, next: next}
	if check != nil {
		pv.Delta = &Delta{}
	}
	if err := ix.apply(ctx, o, batchTrees{b}, st.Tree, tree, pv.Delta); err != nil {
		if errors.Is(err, errBuild) {
			return ErrBulk
		}
		return fmt.Errorf("index %s: %w", tree.Short(), err)
	}
	if err := o.SetState(ctx, State{Commit: st.Commit, Tree: tree}); err != nil {
		return err
	}
	pv.journal = o.journal
	return fn(o, pv)
}

// ApplyPreview brings the index, inside tx, where pv says, as [Index.Apply]
// to pv's tree would, by making the preview's writes. The index in tx must
// be the one the preview read: at the same commit, with the same next file
// id (a rebuild at one commit gives every file a new id); ErrStale when it
// is not, and then nothing is written. As with Apply, the caller must roll
// tx back if main does not move.
func (ix *Index) ApplyPreview(ctx context.Context, tx *store.Tx, pv *Preview) error {
	return ix.inTx(ctx, tx, func(q StorageTx) error {
		st, err := readState(ctx, q)
		if err != nil {
			return err
		}
		next, err := q.NextFileID(ctx)
		if err != nil {
			return err
		}
		if st != pv.base || next != pv.next {
			return ErrStale
		}
		for _, w := range pv.journal {
			if err := w(ctx, q); err != nil {
				return fmt.Errorf("index: apply a preview: %w", err)
			}
		}
		return nil
	})
}
