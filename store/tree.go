package store

import (
	"context"
	"iter"
	"sort"
	"strings"

	"cairn"
)

// nodeSource loads tree nodes: the store, or a batch whose new nodes are not
// written yet.
type nodeSource interface {
	node(ctx context.Context, h cairn.Hash) (*node, error)
}

// lookup returns the leaf item with the given key.
func lookup(ctx context.Context, src nodeSource, root cairn.Hash, key string) (item, bool, error) {
	n, err := src.node(ctx, root)
	if err != nil {
		return item{}, false, err
	}
	for n.level > 0 {
		i := sort.Search(len(n.items), func(i int) bool { return n.items[i].key >= key })
		if i == len(n.items) {
			return item{}, false, nil
		}
		if n, err = src.node(ctx, n.items[i].hash); err != nil {
			return item{}, false, err
		}
	}
	i := sort.Search(len(n.items), func(i int) bool { return n.items[i].key >= key })
	if i < len(n.items) && n.items[i].key == key {
		return n.items[i], true, nil
	}
	return item{}, false, nil
}

func entryOf(it item) cairn.Entry {
	return cairn.Entry{Path: it.filePath(), Blob: it.hash, Size: int64(it.size), Mode: it.mode}
}

func notInTree(path string, tree cairn.Hash) error {
	return cairn.Errorf(cairn.ENOTFOUND, "%s is not in tree %s", path, tree.Short()).
		WithHint("Paths are case-sensitive; try: cairn ls")
}

// Get returns the entry for path in tree. A missing path has code ENOTFOUND.
func (s *Store) Get(ctx context.Context, tree cairn.Hash, path string) (cairn.Entry, error) {
	return get(ctx, s, tree, path)
}

// Get returns the entry for path in a tree that may hold unwritten nodes.
func (b *Batch) Get(ctx context.Context, tree cairn.Hash, path string) (cairn.Entry, error) {
	return get(ctx, b, tree, path)
}

func get(ctx context.Context, src nodeSource, tree cairn.Hash, path string) (cairn.Entry, error) {
	p, err := cairn.CleanPath(path)
	if err != nil {
		return cairn.Entry{}, err
	}
	it, ok, err := lookup(ctx, src, tree, cairn.FoldPath(p))
	if err != nil {
		return cairn.Entry{}, err
	}
	if !ok || it.filePath() != p {
		return cairn.Entry{}, notInTree(p, tree)
	}
	return entryOf(it), nil
}

// GetFold returns the entry whose path equals path but for case: the file
// that would clash with a new file at path.
func (s *Store) GetFold(ctx context.Context, tree cairn.Hash, path string) (cairn.Entry, error) {
	p, err := cairn.CleanPath(path)
	if err != nil {
		return cairn.Entry{}, err
	}
	it, ok, err := lookup(ctx, s, tree, cairn.FoldPath(p))
	if err != nil {
		return cairn.Entry{}, err
	}
	if !ok {
		return cairn.Entry{}, notInTree(p, tree)
	}
	return entryOf(it), nil
}

// Count returns the number of files in tree.
func (s *Store) Count(ctx context.Context, tree cairn.Hash) (int, error) {
	n, err := s.node(ctx, tree)
	if err != nil {
		return 0, err
	}
	return int(n.count()), nil
}

// Files returns the files of tree whose paths start with prefix (a folder
// such as "notes/", matched without regard to case, or "" for all), in key
// order: case-folded path order.
func (s *Store) Files(ctx context.Context, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error] {
	return files(ctx, s, tree, prefix)
}

// Files is [Store.Files] for a tree that may hold unwritten nodes.
func (b *Batch) Files(ctx context.Context, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error] {
	return files(ctx, b, tree, prefix)
}

func files(ctx context.Context, src nodeSource, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error] {
	return func(yield func(cairn.Entry, error) bool) {
		fp := cairn.FoldPath(prefix)
		c, err := seek(ctx, src, tree, fp)
		if err != nil {
			yield(cairn.Entry{}, err)
			return
		}
		for c.valid() {
			it := c.item()
			if !strings.HasPrefix(it.key, fp) {
				return
			}
			if !yield(entryOf(it), nil) {
				return
			}
			if err := c.nextFile(ctx); err != nil {
				yield(cairn.Entry{}, err)
				return
			}
		}
	}
}

// cursor walks a tree in key order. It points at an item of the deepest
// loaded node: a file when that node is a leaf, or a whole subtree when it is
// an internal node that has not been descended into. Diff compares subtrees
// by hash before loading them.
type cursor struct {
	src   nodeSource
	stack []frame
}

type frame struct {
	n *node
	i int
}

// newCursor returns a cursor at the root's first item, not descended.
func newCursor(ctx context.Context, src nodeSource, root cairn.Hash) (*cursor, error) {
	n, err := src.node(ctx, root)
	if err != nil {
		return nil, err
	}
	c := &cursor{src: src}
	if len(n.items) > 0 {
		c.stack = append(c.stack, frame{n: n})
	}
	return c, nil
}

// seek returns a cursor at the first file whose key is ≥ key.
func seek(ctx context.Context, src nodeSource, root cairn.Hash, key string) (*cursor, error) {
	c, err := newCursor(ctx, src, root)
	if err != nil || !c.valid() {
		return c, err
	}
	for {
		top := &c.stack[len(c.stack)-1]
		top.i = sort.Search(len(top.n.items), func(i int) bool { return top.n.items[i].key >= key })
		if top.i == len(top.n.items) {
			// Every key in the tree is smaller (the search only moves into
			// children whose last key is ≥ key, so this is the root).
			c.stack = nil
			return c, nil
		}
		if top.n.level == 0 {
			return c, nil
		}
		if err := c.descend(ctx); err != nil {
			return nil, err
		}
	}
}

func (c *cursor) valid() bool { return len(c.stack) > 0 }

// level returns the level of the node the cursor is in: 0 when it points at
// a file.
func (c *cursor) level() int { return c.stack[len(c.stack)-1].n.level }

func (c *cursor) item() item {
	top := c.stack[len(c.stack)-1]
	return top.n.items[top.i]
}

// descend enters the subtree the cursor points at.
func (c *cursor) descend(ctx context.Context) error {
	child, err := c.src.node(ctx, c.item().hash)
	if err != nil {
		return err
	}
	c.stack = append(c.stack, frame{n: child})
	return nil
}

// first descends to the first file of the current subtree.
func (c *cursor) first(ctx context.Context) error {
	for c.valid() && c.level() > 0 {
		if err := c.descend(ctx); err != nil {
			return err
		}
	}
	return nil
}

// nextFile moves to the next file.
func (c *cursor) nextFile(ctx context.Context) error {
	if err := c.next(ctx); err != nil {
		return err
	}
	return c.first(ctx)
}

// next moves past the current item (a file or a whole subtree), popping out
// of exhausted nodes; it does not descend.
func (c *cursor) next(ctx context.Context) error {
	for c.valid() {
		top := &c.stack[len(c.stack)-1]
		top.i++
		if top.i < len(top.n.items) {
			return nil
		}
		c.stack = c.stack[:len(c.stack)-1]
	}
	return nil
}
