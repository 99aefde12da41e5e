package index

import (
	"context"

	"cairn"
	"cairn/markdown"
)

// BatchReader is what a storage whose every read is a round trip to a
// server adds to [StorageReader]: several lookups of one kind in one read.
// An incremental update knows most of what it will look up before it
// looks, and asks for it at once where the storage can answer so; where it
// cannot, the lookups are made one by one. Reads inside a write
// transaction see every write made before them, as the single reads do.
type BatchReader interface {
	// KeyHoldersOf returns, for each key, what KeyHolders(key.Value,
	// key.Step) returns, in the order of keys.
	KeyHoldersOf(ctx context.Context, keys []markdown.Key) ([][]FileRef, error)
	// LinksAt returns the links that exist among keys (DstPath not
	// filled), in any order; a missing one is left out.
	LinksAt(ctx context.Context, keys []LinkKey) ([]LinkRow, error)
	// Depths returns what Depth returns for each id, in the order of ids.
	Depths(ctx context.Context, ids []int64) ([]int, error)
}

// keyHoldersOf looks up the holders of keys, in one read where q can.
func keyHoldersOf(ctx context.Context, q StorageReader, keys []markdown.Key) ([][]FileRef, error) {
	if b, ok := q.(BatchReader); ok && len(keys) > 1 {
		return b.KeyHoldersOf(ctx, keys)
	}
	out := make([][]FileRef, len(keys))
	for i, k := range keys {
		fs, err := q.KeyHolders(ctx, k.Value, k.Step)
		if err != nil {
			return nil, err
		}
		out[i] = fs
	}
	return out, nil
}

// linksAt reads the links keys name that exist, in one read where q can.
func linksAt(ctx context.Context, q StorageReader, keys []LinkKey) ([]LinkRow, error) {
	if b, ok := q.(BatchReader); ok && len(keys) > 1 {
		return b.LinksAt(ctx, keys)
	}
	out := make([]LinkRow, 0, len(keys))
	for _, k := range keys {
		row, err := q.Link(ctx, k.Src, k.Ord)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			continue // its page went away
		}
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}

// batching reports whether q reads in batches ([BatchReader]): only then
// is it worth asking ahead for what may be needed. A storage that reads
// in-process is asked lazily, as the resolution goes (a link resolved at
// its first step looks up no other key).
func batching(q StorageReader) bool {
	_, ok := q.(BatchReader)
	return ok
}

// warmHolders reads the holders of the keys not cached yet, in one read,
// where the storage reads in batches, and caches them with the ids and
// paths of the files they name.
func (u *update) warmHolders(ctx context.Context, keys []markdown.Key) error {
	if !batching(u.q) {
		return nil
	}
	var missing []markdown.Key
	seen := map[markdown.Key]bool{}
	for _, k := range keys {
		if _, ok := u.holders[k]; !ok && !seen[k] {
			seen[k] = true
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	found, err := keyHoldersOf(ctx, u.q, missing)
	if err != nil {
		return err
	}
	for i, k := range missing {
		var paths []string
		for _, f := range found[i] {
			paths = append(paths, f.Path)
			u.ids[f.Path], u.paths[f.ID] = f.ID, f.Path
		}
		u.holders[k] = paths
	}
	return nil
}
