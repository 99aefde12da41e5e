package app

import (
	"context"
	"slices"
	"sync"

	"cairn"
	"cairn/store"
)

// Draft is a change being made on a base commit and not yet proposed: the
// work in progress of an agent that writes only through cairn (the
// built-in agent). Writes go into it, each checked as Write checks one
// against main, but against the draft: a file changed since the writer
// read it is a *StaleFile. Its View shows the base with the draft's
// files, so that what was written is found at once. When the agent is
// done, Tree makes the proposed tree, which admission judges like any.
// A Draft is safe for concurrent use.
type Draft struct {
	a    *App
	base cairn.Hash // the commit
	tree cairn.Hash // its tree
	mu   sync.Mutex
	// files are the draft's files by path, in the order first written.
	files map[string]FileEdit
	order []string
}

// NewDraft starts a draft on the commit base.
func (a *App) NewDraft(ctx context.Context, base cairn.Hash) (*Draft, error) {
	c, err := a.v.Store.ReadCommit(ctx, base)
	if err != nil {
		return nil, err
	}
	return &Draft{a: a, base: base, tree: c.Tree, files: map[string]FileEdit{}}, nil
}

// View returns the view of the draft: its base with its files.
func (d *Draft) View() *View {
	return d.a.DraftView(d.base.String(), func(context.Context) ([]FileEdit, error) { return d.Edits(), nil })
}

// Edits returns the draft's files, in the order first written.
func (d *Draft) Edits() []FileEdit {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]FileEdit, 0, len(d.order))
	for _, p := range d.order {
		out = append(out, d.files[p])
	}
	return out
}

// Changed returns the paths the draft changes, sorted.
func (d *Draft) Changed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(slices.Values(d.order))
}

// lookup says what a path holds in the draft.
func (d *Draft) lookup(ctx context.Context, p string) (string, func() ([]byte, error), error) {
	if e, ok := d.files[p]; ok {
		if e.Delete {
			return "", nil, nil
		}
		return store.BlobHash(e.Content).String(), func() ([]byte, error) { return e.Content, nil }, nil
	}
	return d.a.treeFiles(d.tree)(ctx, p)
}

// Write writes req's files into the draft if each is the version its
// writer read (a *StaleFile, ECONFLICT, when not: nothing is written), and
// returns their new content hashes by path ("" for a deletion).
func (d *Draft) Write(ctx context.Context, req WriteRequest) (map[string]string, error) {
	if len(req.Writes) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "the write holds no files")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	edits, _, err := checkWrites(ctx, d.lookup, "the draft", req.Writes)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(edits))
	for _, e := range edits {
		if _, ok := d.files[e.Path]; !ok {
			d.order = append(d.order, e.Path)
		}
		d.files[e.Path] = e
		out[e.Path] = ""
		if !e.Delete {
			out[e.Path] = store.BlobHash(e.Content).String()
		}
	}
	return out, nil
}

// Move moves the file from to the free path to, in the draft, if from is
// still at the hash expected.
func (d *Draft) Move(ctx context.Context, from, to, expected string) (map[string]string, error) {
	d.mu.Lock()
	_, read, err := d.lookup(ctx, from)
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if read == nil {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s is not in the draft", cairn.Quote(from))
	}
	data, err := read()
	if err != nil {
		return nil, err
	}
	return d.Write(ctx, WriteRequest{Writes: []PageWrite{
		{Path: from, Expected: expected, Delete: true},
		{Path: to, Content: data},
	}})
}

// Tree writes the draft's tree into b: the base's tree with its files.
func (d *Draft) Tree(ctx context.Context, b *store.Batch) (cairn.Hash, error) {
	edits := d.Edits()
	fcs := make([]store.FileChange, 0, len(edits))
	for _, e := range edits {
		fcs = append(fcs, store.FileChange{Path: e.Path, Delete: e.Delete, Data: e.Content})
	}
	return b.Edit(ctx, d.tree, fcs)
}

// Base returns the commit the draft is on.
func (d *Draft) Base() cairn.Hash { return d.base }

// String names the draft for messages.
func (d *Draft) String() string { return "draft on " + d.base.Short() }
