package store

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"cairn"
)

// FileChange is one change to a tree: new content for a path, or its
// deletion.
type FileChange struct {
	Path   string
	Delete bool
	// Data is the new content. It is ignored when Blob is set.
	Data []byte
	// Blob names content that is already stored or in the batch; Size must
	// then be its length. Merges and renames use it to avoid copying.
	Blob cairn.Hash
	Size int64
	Mode cairn.Mode
}

// edit is a FileChange resolved to a tree key.
type edit struct {
	key string
	put *item // nil: delete
}

const collisionHint = "Rename one of them: macOS and Windows treat paths that differ only in case as the same file."

// Edit applies changes to the tree base and returns the new tree. Paths are
// checked with cairn.CleanPath; a path may appear once per call. Errors, all
// of which leave base untouched: a bad path (EINVALID); deleting a path that
// is not in the tree (ENOTFOUND); a path that differs only in case from
// another path, or whose folder differs only in case from an existing folder
// (EINVALID); a file where the tree has a folder, or a folder where it has a
// file (EINVALID).
func (b *Batch) Edit(ctx context.Context, base cairn.Hash, changes []FileChange) (cairn.Hash, error) {
	edits, err := b.resolveEdits(ctx, base, changes)
	if err != nil {
		return cairn.Hash{}, err
	}
	if len(edits) == 0 {
		return base, nil
	}
	root, err := b.node(ctx, base)
	if err != nil {
		return cairn.Hash{}, err
	}
	e := &editor{b: b, open: map[cairn.Hash]bool{}}
	refs, err := e.mutate(ctx, root, edits)
	if err != nil {
		return cairn.Hash{}, err
	}
	tree, err := e.finish(ctx, root.level, refs)
	if err != nil {
		return cairn.Hash{}, err
	}
	if err := b.checkFolders(ctx, tree, edits); err != nil {
		return cairn.Hash{}, err
	}
	return tree, nil
}

// BuildTree returns the tree holding exactly the given files.
func (b *Batch) BuildTree(ctx context.Context, files []FileChange) (cairn.Hash, error) {
	return b.Edit(ctx, EmptyTree, files)
}

// resolveEdits cleans the paths of changes, turns them into sorted edits by
// key and checks them against base.
func (b *Batch) resolveEdits(ctx context.Context, base cairn.Hash, changes []FileChange) ([]edit, error) {
	// The changes by key, in the order given within a key (the checks
	// below name the first of two changes of one path): one list, not a
	// map of lists, which took some 100 bytes a file of an import.
	type op struct {
		key, path string
		i         int
	}
	ops := make([]op, 0, len(changes))
	for i := range changes {
		p, err := cairn.CleanPath(changes[i].Path)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op{cairn.FoldPath(p), p, i})
	}
	slices.SortFunc(ops, func(a, b op) int { return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.i, b.i)) })
	if err := b.checkBlobs(ctx, changes); err != nil {
		return nil, err
	}
	hashes := hashAll(changes)
	edits := make([]edit, 0, len(ops))
	for len(ops) > 0 {
		k := ops[0].key
		n := 1
		for n < len(ops) && ops[n].key == k {
			n++
		}
		group := ops[:n]
		ops = ops[n:]
		old, exists, err := lookup(ctx, b, base, k)
		if err != nil {
			return nil, err
		}
		var put *op
		var ch *FileChange // put's change
		deleted := false
		for i := range group {
			o := &group[i]
			if changes[o.i].Delete {
				if !exists || old.filePath() != o.path {
					return nil, notInTree(o.path, base)
				}
				if deleted {
					return nil, cairn.Errorf(cairn.EINVALID, "%s is deleted twice in one change", o.path).WithHint("Name each path once per change.")
				}
				deleted = true
				continue
			}
			if put != nil {
				if put.path == o.path {
					return nil, cairn.Errorf(cairn.EINVALID, "%s is changed twice in one change", o.path).WithHint("Name each path once per change.")
				}
				return nil, clash(put.path, o.path, collisionHint, "%s and %s differ only in case", put.path, o.path)
			}
			put, ch = o, &changes[o.i]
		}
		if put == nil {
			edits = append(edits, edit{key: k})
			continue
		}
		if exists && !deleted && old.filePath() != put.path {
			return nil, clash(put.path, old.filePath(), collisionHint+" To rename, delete the old path in the same change.",
				"%s differs only in case from %s, which is in the vault", put.path, old.filePath())
		}
		it := &item{key: k, mode: ch.Mode}
		if put.path != k {
			it.path = put.path
		}
		if it.mode > cairn.ModeExecutable {
			return nil, cairn.Errorf(cairn.EINVALID, "%s: unknown mode %d", put.path, it.mode)
		}
		if ch.Blob.IsZero() {
			it.hash = hashes[ch]
			it.size = uint64(len(ch.Data))
			b.mu.Lock()
			b.addBlob(it.hash, ch.Data)
			b.mu.Unlock()
		} else {
			if ch.Size < 0 {
				return nil, cairn.Errorf(cairn.EINVALID, "%s: negative size", put.path)
			}
			it.hash, it.size = ch.Blob, uint64(ch.Size)
		}
		edits = append(edits, edit{key: k, put: it})
	}
	return edits, nil
}

// hashAll names the new content of changes, on every core when there is
// much of it.
func hashAll(changes []FileChange) map[*FileChange]cairn.Hash {
	var todo []*FileChange
	for i := range changes {
		if ch := &changes[i]; !ch.Delete && ch.Blob.IsZero() {
			todo = append(todo, ch)
		}
	}
	// Sized for the content to hash: an import names stored content, and
	// a map with room for each of its files would be so much empty room.
	out := make(map[*FileChange]cairn.Hash, len(todo))
	hs := make([]cairn.Hash, len(todo))
	workers := 1
	if len(todo) >= 64 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(todo); i += workers {
				hs[i] = BlobHash(todo[i].Data)
			}
		}()
	}
	wg.Wait()
	for i, ch := range todo {
		out[ch] = hs[i]
	}
	return out
}

// checkBlobs makes sure that every change naming stored content names
// content that exists, so a tree never refers to a missing blob.
func (b *Batch) checkBlobs(ctx context.Context, changes []FileChange) error {
	var hs []cairn.Hash
	b.mu.Lock()
	for _, ch := range changes {
		if !ch.Delete && !ch.Blob.IsZero() {
			if _, ok := b.blobs[ch.Blob]; !ok {
				hs = append(hs, ch.Blob)
			}
		}
	}
	b.mu.Unlock()
	if len(hs) == 0 {
		return nil
	}
	have, err := b.s.b.HasObjects(ctx, hs)
	if err != nil {
		return err
	}
	for i, ok := range have {
		if !ok {
			return cairn.Errorf(cairn.ENOTFOUND, "content %s is not stored", hs[i].Short())
		}
	}
	return nil
}

// editor rewrites the nodes that edits reach. A level of the tree is cut
// into nodes by one scan over its items, left to right (docs/format.md): a
// node ends at an item whose key is a boundary at the level, or at the item
// that brings the node to maxNodeBytes. Where a node ends therefore depends
// on where it started, and an edit re-cuts from the start of the first node
// it changes until a cut falls where the old tree had one: from there on the
// scan, and so the old nodes, are the same.
type editor struct {
	b *Batch
	// open holds the nodes made by this edit that do not end where the
	// scan of their level ends a node: their last item is not a cut, or
	// the last node under it is open. Such a node is joined with the node
	// after it, when there is one. A node of the tree being edited is never
	// open: its successor started where the scan had cut.
	open map[cairn.Hash]bool
}

// mutate applies sorted edits to the subtree n and returns the nodes that
// replace it, all at n's level. Every returned node but the last is
// closed; the last may be open (when n's own last key was deleted, or the
// sizes moved a cut), and the caller joins it with the node that follows.
func (e *editor) mutate(ctx context.Context, n *node, edits []edit) ([]item, error) {
	if n.level == 0 {
		return e.chunk(0, applyEdits(n.items, edits)), nil
	}
	out := make([]item, 0, len(n.items)+2)
	j := 0
	for i, child := range n.items {
		k := j
		if i == len(n.items)-1 {
			k = len(edits)
		} else {
			for k < len(edits) && edits[k].key <= child.key {
				k++
			}
		}
		if k == j {
			out = append(out, child)
			continue
		}
		cn, err := e.b.node(ctx, child.hash)
		if err != nil {
			return nil, err
		}
		refs, err := e.mutate(ctx, cn, edits[j:k])
		if err != nil {
			return nil, err
		}
		out = append(out, refs...)
		j = k
	}
	out, err := e.joinOpen(ctx, n.level-1, out)
	if err != nil {
		return nil, err
	}
	return e.chunk(n.level, out), nil
}

// applyEdits merges sorted edits into sorted leaf items.
func applyEdits(items []item, edits []edit) []item {
	out := make([]item, 0, len(items)+len(edits))
	i := 0
	for _, e := range edits {
		for i < len(items) && items[i].key < e.key {
			out = append(out, items[i])
			i++
		}
		if i < len(items) && items[i].key == e.key {
			i++ // replaced or deleted
		}
		if e.put != nil {
			out = append(out, *e.put)
		}
	}
	return append(out, items[i:]...)
}

// itemBytes returns the length of an item's encoding in a node at level.
func itemBytes(level int, it item) int {
	n := uvarintLen(uint64(len(it.key))) + len(it.key) + len(it.hash) + uvarintLen(it.size)
	if level == 0 {
		n += uvarintLen(uint64(len(it.path))) + len(it.path) + uvarintLen(uint64(it.mode))
	}
	return n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// chunk cuts items, which start a node at the given level, into nodes: it
// ends a node after every item whose key's boundary level exceeds the node
// level, and after the item that brings the node's items to maxNodeBytes.
// It stores the nodes in the batch and returns references to them; the
// last node is open when its last item is not such a cut, or the last node
// under that item is open.
func (e *editor) chunk(level int, items []item) []item {
	var refs []item
	start, size := 0, 0
	for i := range items {
		size += itemBytes(level, items[i])
		cut := keyLevel(items[i].key) > level || size >= maxNodeBytes
		if cut || i == len(items)-1 {
			n := newNode(level, slices.Clone(items[start:i+1]))
			e.b.putNode(n)
			if !cut || level > 0 && e.open[items[i].hash] {
				e.open[n.hash] = true
			}
			refs = append(refs, item{key: items[i].key, hash: n.hash, size: n.count()})
			start, size = i+1, 0
		}
	}
	return refs
}

// joinOpen joins every open node in refs (nodes at level) with the node
// after it and cuts the two again, until only the last node may be open.
// The open node's last child may be open too: the children are joined
// first.
func (e *editor) joinOpen(ctx context.Context, level int, refs []item) ([]item, error) {
	for i := 0; i < len(refs)-1; {
		if !e.open[refs[i].hash] {
			i++
			continue
		}
		left, err := e.b.node(ctx, refs[i].hash)
		if err != nil {
			return nil, err
		}
		right, err := e.b.node(ctx, refs[i+1].hash)
		if err != nil {
			return nil, err
		}
		items := append(slices.Clone(left.items), right.items...)
		if level > 0 {
			if items, err = e.joinOpen(ctx, level-1, items); err != nil {
				return nil, err
			}
		}
		joined := e.chunk(level, items)
		refs = slices.Replace(refs, i, i+2, joined...)
		i += len(joined) - 1
	}
	return refs, nil
}

// finish turns the nodes that replace the root into a canonical root: it
// builds levels above them until one node remains, then drops single-child
// roots.
func (e *editor) finish(ctx context.Context, level int, refs []item) (cairn.Hash, error) {
	for len(refs) > 1 {
		level++
		refs = e.chunk(level, refs)
	}
	if len(refs) == 0 {
		return EmptyTree, nil
	}
	h := refs[0].hash
	for {
		n, err := e.b.node(ctx, h)
		if err != nil {
			return cairn.Hash{}, err
		}
		if n.level == 0 || len(n.items) > 1 {
			return h, nil
		}
		h = n.items[0].hash
	}
}

// checkFolders refuses new paths that clash with the folder structure of
// tree: a file where a folder is, a folder where a file is, or a folder
// spelled with different case than the folder that is already there.
func (b *Batch) checkFolders(ctx context.Context, tree cairn.Hash, edits []edit) error {
	checked := make(map[string]bool)
	for _, e := range edits {
		if e.put == nil {
			continue
		}
		p := e.put.filePath()
		// The path must not be a folder of other files.
		c, err := seek(ctx, b, tree, e.key+"/")
		if err != nil {
			return err
		}
		if c.valid() && strings.HasPrefix(c.item().key, e.key+"/") {
			return clash(p, c.item().filePath(), "Choose another name for the file.",
				"%s would be a file, but the vault has a folder there (%s)", p, c.item().filePath())
		}
		// Each folder above it must not be a file, and must be spelled as the
		// folder already in the vault.
		for i := strings.IndexByte(p, '/'); i >= 0; i = next(p, i) {
			dir := p[:i]
			if checked[dir] {
				continue
			}
			checked[dir] = true
			fd := cairn.FoldPath(dir)
			if it, ok, err := lookup(ctx, b, tree, fd); err != nil {
				return err
			} else if ok {
				return clash(p, it.filePath(), "Choose another folder.",
					"%s would be inside the folder %s, but %s is a file", p, dir, it.filePath())
			}
			// Every file under the folder has the same spelling of it, so
			// one file other than this one is enough to compare with.
			c, err := seek(ctx, b, tree, fd+"/")
			if err != nil {
				return err
			}
			if c.valid() && c.item().key == e.key {
				if err := c.nextFile(ctx); err != nil {
					return err
				}
			}
			if !c.valid() || !strings.HasPrefix(c.item().key, fd+"/") {
				continue
			}
			op := c.item().filePath()
			if prefixSegments(op, strings.Count(dir, "/")+1) != dir {
				return clash(p, op, collisionHint, "the folder of %s differs only in case from the folder of %s", p, op)
			}
		}
	}
	return nil
}

func next(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// prefixSegments returns the first n segments of p.
func prefixSegments(p string, n int) string {
	i := 0
	for ; n > 0; n-- {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			return p
		}
		i += j + 1
	}
	return p[:i-1]
}

// clashError is the cause of the errors Edit returns when a path clashes
// with another one by case or by folder structure; MergeTrees reports it as
// a conflict.
type clashError struct{ path, other, msg string }

func (e *clashError) Error() string { return e.msg }

func clash(path, other, hint, format string, args ...any) error {
	return &cairn.Error{Code: cairn.EINVALID, Hint: hint, Err: &clashError{path, other, fmt.Sprintf(format, args...)}}
}
