package index

import (
	"context"

	"cairn"
	"cairn/store"
)

// PreviewRows calls fn with the rows a preview of tree ends with: the
// overlay [Index.Preview] judges on.
func (ix *Index) PreviewRows(ctx context.Context, b *store.Batch, at, tree cairn.Hash, fn func(StorageReader) error) error {
	return ix.preview(ctx, b, at, tree, func(o *overlay, _ *Preview) error { return fn(o) })
}

// LookupHash is the hash of a key value in the lookup rows.
func LookupHash(v string) int64 { return lookupHash(v) }

// SnapshotIn returns the rows of the index inside tx.
func (ix *Index) SnapshotIn(ctx context.Context, tx *store.Tx) (*Snapshot, error) {
	var s *Snapshot
	err := ix.inTx(ctx, tx, func(q StorageTx) error {
		var err error
		s, err = snapshot(ctx, q)
		return err
	})
	return s, err
}

// FTSText is the words of s as the full text indexes them.
func FTSText(s string) string { return ftsText(s) }

// SetContentSpillMax makes the most content a full build of ix keeps on
// disk for its second pass n bytes.
func SetContentSpillMax(ix *Index, n int64) { ix.contentMax = n }

// BuildChunk is the most files a full build reads at a time.
const BuildChunk = buildChunk

// SharedNames remembers the sharers of names, as pageFacts asks them.
type SharedNames = sharedNames

// NewSharedNames returns an empty memory of shared names.
func NewSharedNames() *SharedNames { return newSharedNames() }

// Others is sharedNames.others, for one title or alias.
func (s *SharedNames) Others(value, self string, keep func(string) bool, a, b []string) ([]string, int) {
	return s.others(sharedName{value: value}, self, keep, a, b)
}
