package index

import (
	"context"
	"fmt"
	"slices"

	"cairn"
	"cairn/store"
)

// Drift is what [Index.Check] found wrong.
type Drift struct {
	// Problems describe each difference between the index and the store.
	Problems []string `json:"problems"`
}

// OK reports whether the index matches the store.
func (d *Drift) OK() bool { return len(d.Problems) == 0 }

// Check compares the index with the store: the indexed commit with main's
// head, and the indexed files with the tree. With deep, it also rebuilds
// the index from scratch, and compares every derived row (keys, links,
// findings, reachability, full text) with the committed ones. It keeps
// nothing (store.Inspect): the rebuild is written to shadows of the
// index's tables where the storage has them, and then the check holds no
// write lock. `cairn reindex` repairs what it reports.
func (ix *Index) Check(ctx context.Context, deep bool) (*Drift, error) {
	d := &Drift{}
	err := ix.s.Inspect(ctx, func(tx *store.Tx) error {
		return ix.inTx(ctx, tx, func(q StorageTx) error { return ix.check(ctx, q, tx, deep, d) })
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(d.Problems)
	return d, nil
}

// check finds the drift inside tx.
func (ix *Index) check(ctx context.Context, q StorageTx, tx *store.Tx, deep bool, d *Drift) error {
	st, err := readState(ctx, q)
	if err != nil {
		return err
	}
	head, err := tx.Head(ctx, Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return err
	}
	if head != st.Commit {
		d.Problems = append(d.Problems, fmt.Sprintf("the index reflects commit %s, but main is at %s", short(st.Commit), short(head)))
	}
	indexed, err := q.Blobs(ctx)
	if err != nil {
		return err
	}
	for e, err := range tx.Files(ctx, st.Tree, "") {
		if err != nil {
			return err
		}
		h, ok := indexed[e.Path]
		switch {
		case !ok:
			d.Problems = append(d.Problems, fmt.Sprintf("%s is in the tree but not in the index", e.Path))
		case h != e.Blob:
			d.Problems = append(d.Problems, fmt.Sprintf("%s: the index has content %s, the tree %s", e.Path, h.Short(), e.Blob.Short()))
		}
		delete(indexed, e.Path)
	}
	for p := range indexed {
		d.Problems = append(d.Problems, fmt.Sprintf("%s is in the index but not in the tree", p))
	}
	if !deep || !d.OK() {
		return nil
	}
	// The committed rows are kept in the transaction, not in memory, and
	// compared by the database with the rebuilt ones; in memory only
	// when the database may not keep them.
	kept, err := q.SaveSnapshot(ctx)
	if err != nil {
		return err
	}
	var before *Snapshot
	if !kept {
		if before, err = snapshot(ctx, q); err != nil {
			return err
		}
	}
	if sh, ok := q.(Shadower); ok {
		if err := sh.Shadow(ctx); err != nil {
			return err
		}
	}
	if err := ix.build(ctx, q, tx, st.Tree); err != nil {
		return err
	}
	if !kept {
		after, err := snapshot(ctx, q)
		if err != nil {
			return err
		}
		d.Problems = append(d.Problems, after.Diff(before)...)
		return nil
	}
	drift, err := q.SnapshotDrift(ctx, shownRows)
	if err != nil {
		return err
	}
	for _, t := range drift {
		d.Problems = append(d.Problems, driftProblems(t.Table, t.Added, t.AddedAll, t.Gone, t.GoneAll)...)
	}
	return nil
}

// shownRows is how many rows of a table's drift a check names; the rest
// it counts.
const shownRows = 5

// KeepFirst adds line to first, the lines seen so far that sort first, in
// order, and keeps at most limit of them: what a storage's SnapshotDrift
// names of a table's drift, whatever its length.
func KeepFirst(first []string, line string, limit int) []string {
	i, _ := slices.BinarySearch(first, line)
	if i >= limit {
		return first
	}
	first = slices.Insert(first, i, line)
	return first[:min(len(first), limit)]
}

// driftProblems describes the drift of one table of the committed index
// from a rebuild: missing are the rebuild's rows it lacks (the first of
// them, of missingAll), extra the rows it has and the rebuild does not.
func driftProblems(table string, missing []string, missingAll int, extra []string, extraAll int) []string {
	var out []string
	for _, l := range missing[:min(len(missing), shownRows)] {
		out = append(out, fmt.Sprintf("%s: missing %s", table, l))
	}
	if missingAll > shownRows {
		out = append(out, fmt.Sprintf("%s: %d more rows missing", table, missingAll-shownRows))
	}
	for _, l := range extra[:min(len(extra), shownRows)] {
		out = append(out, fmt.Sprintf("%s: unexpected %s", table, l))
	}
	if extraAll > shownRows {
		out = append(out, fmt.Sprintf("%s: %d more rows that should not be there", table, extraAll-shownRows))
	}
	return out
}

func short(h cairn.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.Short()
}

// Snapshot is the content of the index with file ids replaced by paths,
// one line per row, sorted: two indexes of one tree have equal snapshots.
type Snapshot struct {
	Tables map[string][]string
}

// TakeSnapshot returns the current content of the committed index.
func (ix *Index) TakeSnapshot(ctx context.Context) (*Snapshot, error) {
	return snapshot(ctx, ix.st.Committed())
}

func snapshot(ctx context.Context, q StorageReader) (*Snapshot, error) {
	tables, err := q.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Tables: tables}, nil
}

// Diff describes how s differs from other, at most five rows per table.
func (s *Snapshot) Diff(other *Snapshot) []string {
	var out []string
	for table, lines := range s.Tables {
		theirs := other.Tables[table]
		only := func(a, b []string) []string {
			var o []string
			for _, l := range a {
				if _, found := slices.BinarySearch(b, l); !found {
					o = append(o, l)
				}
			}
			return o
		}
		missing, extra := only(lines, theirs), only(theirs, lines)
		out = append(out, driftProblems(table, missing, len(missing), extra, len(extra))...)
	}
	slices.Sort(out)
	return out
}
