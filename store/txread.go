package store

import (
	"context"
	"iter"

	"cairn"
)

// Reads inside a transaction. The objects a transaction wrote are not
// visible to the store's readers until it commits, so hooks (the index)
// read through the transaction, which also looks in the batches it wrote.

// node implements nodeSource: the transaction's batches first.
func (tx *Tx) node(ctx context.Context, h cairn.Hash) (*node, error) {
	for _, b := range tx.batches {
		b.mu.Lock()
		n, ok := b.nodes[h]
		b.mu.Unlock()
		if ok {
			return n, nil
		}
	}
	return tx.s.node(ctx, h)
}

// ReadBlob returns content written by the transaction or stored before.
func (tx *Tx) ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error) {
	for _, b := range tx.batches {
		if data, ok := b.blob(h); ok {
			return data, nil
		}
	}
	return tx.s.ReadBlob(ctx, h)
}

// ReadBlobs is [Store.ReadBlobs] inside the transaction.
func (tx *Tx) ReadBlobs(ctx context.Context, hs []cairn.Hash, fn func(h cairn.Hash, data []byte) error) error {
	var rest []cairn.Hash
	for _, h := range hs {
		found := false
		for _, b := range tx.batches {
			if data, ok := b.blob(h); ok {
				if err := fn(h, data); err != nil {
					return err
				}
				found = true
				break
			}
		}
		if !found {
			rest = append(rest, h)
		}
	}
	return tx.s.ReadBlobs(ctx, rest, fn)
}

// ReadCommit returns a commit, including one written by the transaction;
// the commit is the caller's own, as with [Store.ReadCommit].
func (tx *Tx) ReadCommit(ctx context.Context, h cairn.Hash) (*cairn.Commit, error) {
	if c, ok := tx.s.commits.Get(h); ok {
		return c.Clone(), nil
	}
	if c, ok := tx.pending[h]; ok {
		return c.Clone(), nil
	}
	return tx.s.ReadCommit(ctx, h)
}

// Diff is [Store.Diff] inside the transaction.
func (tx *Tx) Diff(ctx context.Context, a, b cairn.Hash, opts *DiffOptions) ([]cairn.Change, error) {
	return diffTrees(ctx, tx, a, b, opts)
}

// Files is [Store.Files] inside the transaction.
func (tx *Tx) Files(ctx context.Context, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error] {
	return files(ctx, tx, tree, prefix)
}

// Get is [Store.Get] inside the transaction.
func (tx *Tx) Get(ctx context.Context, tree cairn.Hash, path string) (cairn.Entry, error) {
	return get(ctx, tx, tree, path)
}

// Backend returns the backend's transaction that tx runs in, for the
// storage of subsystems whose rows commit with the ref update (the working
// trees'): their implementation beside the backend takes it.
func (tx *Tx) Backend() cairn.Tx { return tx.tx }
