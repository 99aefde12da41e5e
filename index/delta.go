package index

import (
	"context"
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
