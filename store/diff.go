package store

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"

	"cairn"
)

// DiffOptions adjust [Store.Diff]. The zero value detects renames.
type DiffOptions struct {
	// NoRenames reports a rename as a deletion and an addition.
	NoRenames bool
}

// Diff returns how tree b differs from tree a, sorted by path (a rename by
// its new path). Subtrees with equal hashes are skipped without being read,
// so the cost follows the number of changes, not the size of the trees. A
// deletion and an addition of the same non-empty content are reported as one
// rename; so is a change of case alone.
func (s *Store) Diff(ctx context.Context, a, b cairn.Hash, opts *DiffOptions) ([]cairn.Change, error) {
	return diffTrees(ctx, s, a, b, opts)
}

// Diff is [Store.Diff] for trees that may hold unwritten nodes.
func (b *Batch) Diff(ctx context.Context, x, y cairn.Hash, opts *DiffOptions) ([]cairn.Change, error) {
	return diffTrees(ctx, b, x, y, opts)
}

// DiffCommits returns the changes from commit a to commit b.
func (s *Store) DiffCommits(ctx context.Context, a, b cairn.Hash, opts *DiffOptions) ([]cairn.Change, error) {
	ta, err := s.treeOf(ctx, a)
	if err != nil {
		return nil, err
	}
	tb, err := s.treeOf(ctx, b)
	if err != nil {
		return nil, err
	}
	return s.Diff(ctx, ta, tb, opts)
}

// treeOf returns a commit's tree; the zero hash stands for "no commit" and
// gives the empty tree.
func (s *Store) treeOf(ctx context.Context, c cairn.Hash) (cairn.Hash, error) {
	if c.IsZero() {
		return EmptyTree, nil
	}
	cm, err := s.ReadCommit(ctx, c)
	if err != nil {
		return cairn.Hash{}, err
	}
	return cm.Tree, nil
}

// keyChange is a difference at one key; a zero item means absent.
type keyChange struct {
	key      string
	old, new item
}

// diffKeys walks two trees in key order and reports every key whose item
// differs. It compares subtrees by hash before reading them.
func diffKeys(ctx context.Context, src nodeSource, a, b cairn.Hash, fn func(keyChange) error) error {
	if a == b {
		return nil
	}
	ca, err := newCursor(ctx, src, a)
	if err != nil {
		return err
	}
	cb, err := newCursor(ctx, src, b)
	if err != nil {
		return err
	}
	for ca.valid() && cb.valid() {
		la, lb := ca.level(), cb.level()
		switch {
		case la > 0 && la == lb && ca.item().hash == cb.item().hash:
			// Equal subtrees at the same position: nothing differs in them.
			ca.next(ctx)
			cb.next(ctx)
			continue
		case la > 0 && la >= lb:
			if err := ca.descend(ctx); err != nil {
				return err
			}
			if la == lb {
				if err := cb.descend(ctx); err != nil {
					return err
				}
			}
			continue
		case lb > 0:
			if err := cb.descend(ctx); err != nil {
				return err
			}
			continue
		}
		ia, ib := ca.item(), cb.item()
		switch strings.Compare(ia.key, ib.key) {
		case -1:
			if err := fn(keyChange{key: ia.key, old: ia}); err != nil {
				return err
			}
			ca.next(ctx)
		case 1:
			if err := fn(keyChange{key: ib.key, new: ib}); err != nil {
				return err
			}
			cb.next(ctx)
		default:
			if ia != ib {
				if err := fn(keyChange{key: ia.key, old: ia, new: ib}); err != nil {
					return err
				}
			}
			ca.next(ctx)
			cb.next(ctx)
		}
	}
	for _, rest := range []struct {
		c   *cursor
		old bool
	}{{ca, true}, {cb, false}} {
		c := rest.c
		if err := c.first(ctx); err != nil {
			return err
		}
		for c.valid() {
			kc := keyChange{key: c.item().key}
			if rest.old {
				kc.old = c.item()
			} else {
				kc.new = c.item()
			}
			if err := fn(kc); err != nil {
				return err
			}
			if err := c.nextFile(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func diffTrees(ctx context.Context, src nodeSource, a, b cairn.Hash, opts *DiffOptions) ([]cairn.Change, error) {
	var changes []cairn.Change
	err := diffKeys(ctx, src, a, b, func(kc keyChange) error {
		changes = append(changes, changeOf(kc))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if opts == nil || !opts.NoRenames {
		changes = pairRenames(changes)
	}
	return changes, nil
}

// changeOf is the change a difference at one key makes: a change of case
// alone, the content the same, is a rename.
func changeOf(kc keyChange) cairn.Change {
	switch {
	case kc.old.hash.IsZero():
		return cairn.Change{Kind: cairn.Added, Path: kc.new.filePath(), New: entryOf(kc.new)}
	case kc.new.hash.IsZero():
		return cairn.Change{Kind: cairn.Deleted, Path: kc.old.filePath(), Old: entryOf(kc.old)}
	case kc.old.filePath() != kc.new.filePath() && kc.old.hash == kc.new.hash && kc.old.mode == kc.new.mode:
		return cairn.Change{Kind: cairn.Renamed, Path: kc.new.filePath(), Old: entryOf(kc.old), New: entryOf(kc.new)}
	}
	return cairn.Change{Kind: cairn.Modified, Path: kc.new.filePath(), Old: entryOf(kc.old), New: entryOf(kc.new)}
}

// Changes returns how tree b differs from tree a one change at a time, in
// key order (case-folded path order), as [Store.Diff] with NoRenames: a
// diff of a whole vault's trees is not held at once. Subtrees with equal
// hashes are skipped without being read.
func (s *Store) Changes(ctx context.Context, a, b cairn.Hash) iter.Seq2[cairn.Change, error] {
	return func(yield func(cairn.Change, error) bool) {
		stop := errors.New("stopped")
		err := diffKeys(ctx, s, a, b, func(kc keyChange) error {
			if !yield(changeOf(kc), nil) {
				return stop
			}
			return nil
		})
		if err != nil && err != stop {
			yield(cairn.Change{}, err)
		}
	}
}

// pairRenames turns a deletion and an addition of the same non-empty content
// into a rename. When several files share the content, deletions and
// additions are paired in path order.
func pairRenames(changes []cairn.Change) []cairn.Change {
	deleted := map[cairn.Hash][]int{}
	for i, c := range changes {
		if c.Kind == cairn.Deleted && c.Old.Size > 0 {
			deleted[c.Old.Blob] = append(deleted[c.Old.Blob], i)
		}
	}
	if len(deleted) == 0 {
		return changes
	}
	drop := map[int]bool{}
	for i, c := range changes {
		if c.Kind != cairn.Added {
			continue
		}
		ds := deleted[c.New.Blob]
		if len(ds) == 0 {
			continue
		}
		d := ds[0]
		deleted[c.New.Blob] = ds[1:]
		changes[i] = cairn.Change{Kind: cairn.Renamed, Path: c.Path, Old: changes[d].Old, New: c.New}
		drop[d] = true
	}
	out := changes[:0]
	for i, c := range changes {
		if !drop[i] {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(x, y cairn.Change) int {
		return strings.Compare(cairn.FoldPath(x.Path), cairn.FoldPath(y.Path))
	})
	return out
}
