package store

import (
	"context"
	"sync"

	"cairn"
)

// Batch collects new objects (blobs and tree nodes) in memory until they are
// written: by [Store.Commit] or [Tx.Commit], which write the objects the new
// commit reaches in the commit's own transaction, or by [Batch.Flush]. A
// Batch is safe for concurrent use; a failed operation may leave unneeded
// objects in it, which are never written unless flushed.
type Batch struct {
	s     *Store
	mu    sync.Mutex
	blobs map[cairn.Hash][]byte
	nodes map[cairn.Hash]*node
	// pending is the size of the content in blobs.
	pending int64
	// flushing serializes Flush, so that concurrent Spills write each
	// object once.
	flushing sync.Mutex
}

// blob returns content the batch holds.
func (b *Batch) blob(h cairn.Hash) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.blobs[h]
	return data, ok
}

// NewBatch returns an empty batch.
func (s *Store) NewBatch() *Batch {
	return &Batch{s: s, blobs: make(map[cairn.Hash][]byte), nodes: make(map[cairn.Hash]*node)}
}

// Store returns the store the batch belongs to.
func (b *Batch) Store() *Store { return b.s }

// PutBlob adds content to the batch and returns its hash. The batch keeps
// data; the caller must not modify it afterwards.
func (b *Batch) PutBlob(data []byte) cairn.Hash {
	h := BlobHash(data)
	b.mu.Lock()
	b.addBlob(h, data)
	b.mu.Unlock()
	return h
}

// addBlob holds a blob's content; the caller holds mu.
func (b *Batch) addBlob(h cairn.Hash, data []byte) {
	if _, ok := b.blobs[h]; !ok {
		b.pending += int64(len(data))
	}
	b.blobs[h] = data
}

// dropBlob forgets a blob that was written; the caller holds mu.
func (b *Batch) dropBlob(h cairn.Hash) {
	if data, ok := b.blobs[h]; ok {
		b.pending -= int64(len(data))
		delete(b.blobs, h)
	}
}

// Len returns the number of objects waiting to be written.
func (b *Batch) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.blobs) + len(b.nodes)
}

func (b *Batch) putNode(n *node) {
	b.mu.Lock()
	b.nodes[n.hash] = n
	b.mu.Unlock()
}

// node returns a node from the batch or the store.
func (b *Batch) node(ctx context.Context, h cairn.Hash) (*node, error) {
	b.mu.Lock()
	n, ok := b.nodes[h]
	b.mu.Unlock()
	if ok {
		return n, nil
	}
	return b.s.node(ctx, h)
}

// ReadBlob returns content from the batch or the store.
func (b *Batch) ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error) {
	if data, ok := b.blob(h); ok {
		return data, nil
	}
	return b.s.ReadBlob(ctx, h)
}

// ReadBlobs is [Store.ReadBlobs] through the batch: the content the batch
// holds first, then the store's, read in bulk. fn may be called from
// several goroutines at once.
func (b *Batch) ReadBlobs(ctx context.Context, hs []cairn.Hash, fn func(h cairn.Hash, data []byte) error) error {
	var rest []cairn.Hash
	for _, h := range hs {
		if data, ok := b.blob(h); ok {
			if err := fn(h, data); err != nil {
				return err
			}
			continue
		}
		rest = append(rest, h)
	}
	return b.s.ReadBlobs(ctx, rest, fn)
}

// Flush writes every object in the batch, in transactions of its own, and
// empties the batch. Bulk imports flush as they go so memory stays bounded.
// Objects written this way are unreachable until a commit names them: a
// crash leaves them to GC, never a part of a change.
func (b *Batch) Flush(ctx context.Context) error {
	b.flushing.Lock()
	defer b.flushing.Unlock()
	return b.flush(ctx)
}

// flush is Flush; the caller holds flushing.
func (b *Batch) flush(ctx context.Context) error {
	b.mu.Lock()
	objs := make([]cairn.Object, 0, len(b.blobs)+len(b.nodes))
	for h, data := range b.blobs {
		objs = append(objs, cairn.Object{Hash: h, Kind: cairn.KindBlob, Data: data})
	}
	for h, n := range b.nodes {
		objs = append(objs, cairn.Object{Hash: h, Kind: cairn.KindNode, Data: n.enc})
	}
	b.mu.Unlock()
	if err := b.s.b.PutObjects(ctx, objs); err != nil {
		return err
	}
	b.mu.Lock()
	for _, o := range objs {
		if o.Kind == cairn.KindNode {
			b.s.nodes.Add(o.Hash, b.nodes[o.Hash])
			delete(b.nodes, o.Hash)
		} else {
			b.dropBlob(o.Hash)
		}
	}
	b.mu.Unlock()
	return nil
}

// spillBytes is how much content Spill lets a batch hold.
const spillBytes = 32 << 20

// Spill flushes the batch when the content of its blobs passes 32 MiB, so
// that a caller adding many files (an import, the commit of a whole folder)
// holds about that much of them in memory however many there are. It is
// safe to call from several goroutines: one flushes while the others wait,
// and they find the batch below the limit. Below it nothing is written, so
// a small change still goes to the store in its commit's one transaction.
func (b *Batch) Spill(ctx context.Context) error {
	b.flushing.Lock()
	defer b.flushing.Unlock()
	b.mu.Lock()
	over := b.pending >= spillBytes
	b.mu.Unlock()
	if !over {
		return nil
	}
	return b.flush(ctx)
}

// reachable returns the batch's objects that tree reaches: the pending nodes
// under it and the pending blobs they name. Subtrees already stored are not
// entered.
func (b *Batch) reachable(tree cairn.Hash) []cairn.Object {
	b.mu.Lock()
	defer b.mu.Unlock()
	var objs []cairn.Object
	seen := make(map[cairn.Hash]bool)
	var walk func(h cairn.Hash)
	walk = func(h cairn.Hash) {
		n, ok := b.nodes[h]
		if !ok || seen[h] {
			return
		}
		seen[h] = true
		objs = append(objs, cairn.Object{Hash: h, Kind: cairn.KindNode, Data: n.enc})
		for _, it := range n.items {
			if n.level > 0 {
				walk(it.hash)
				continue
			}
			if data, ok := b.blobs[it.hash]; ok && !seen[it.hash] {
				seen[it.hash] = true
				objs = append(objs, cairn.Object{Hash: it.hash, Kind: cairn.KindBlob, Data: data})
			}
		}
	}
	walk(tree)
	return objs
}

// written moves objects that were committed out of the batch into the
// store's node cache.
func (b *Batch) written(objs []cairn.Object) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range objs {
		if o.Kind == cairn.KindNode {
			if n, ok := b.nodes[o.Hash]; ok {
				n.enc = nil
				b.s.nodes.Add(o.Hash, n)
			}
			delete(b.nodes, o.Hash)
		} else {
			b.dropBlob(o.Hash)
		}
	}
}
