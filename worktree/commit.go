package worktree

import (
	"context"
	"fmt"
	"strings"

	"cairn"
	"cairn/store"
)

// CommitRequest describes a commit of local edits.
type CommitRequest struct {
	// Message says why (required).
	Message string
	// Paths limits the commit to these files or folders; empty means every
	// local edit.
	Paths []string
	// Principal makes the commit (required).
	Principal cairn.Principal
	// Meta is the commit's metadata.
	Meta map[string]string
	// Land, when set, lands the edits instead of a plain commit: the
	// admission pipeline, for main. It returns the commit that landed
	// them (nil when they did not land, e.g. held for review) and the
	// conflicts with the branch's head, if any.
	Land func(ctx context.Context, l *Landing) (*cairn.Commit, []cairn.Conflict, error)
}

// Landing is a commit of local edits handed to a CommitRequest's Land.
type Landing struct {
	// Batch holds the trees' new objects.
	Batch *store.Batch
	// Base is the working tree's base commit; BaseTree the tree the edits
	// were made on (the base with the files left alone by syncs).
	Base, BaseTree cairn.Hash
	// Tree is BaseTree with the edits.
	Tree cairn.Hash
	// Record writes the working tree's rows; Land calls it inside the
	// transaction that moves the branch.
	Record func(ctx context.Context, tx *store.Tx, c *cairn.Commit) error
}

// CommitResult is the outcome of a commit of local edits.
type CommitResult struct {
	// Commit is the new commit; nil when there were conflicts.
	Commit *cairn.Commit `json:"commit,omitempty"`
	// Changes are the local edits committed.
	Changes []Change `json:"changes"`
	// Conflicts, when the branch moved and could not be merged with the
	// edits; nothing was written.
	Conflicts []cairn.Conflict `json:"conflicts,omitempty"`
	// Merged is set when the branch had moved since the base and the edits
	// were merged onto its head.
	Merged bool `json:"merged,omitempty"`
	// Sync is what bringing the folder to the new commit did.
	Sync *SyncReport `json:"sync,omitempty"`
	// Skipped are the files of the folder that cannot be vault files and
	// were left out (as cairn status lists them).
	Skipped []Skip `json:"skipped,omitempty"`
}

// ErrNothingToCommit is wrapped by the error of a commit of a folder that
// matches its branch (errors.Is).
var ErrNothingToCommit = &cairn.Error{Code: cairn.EINVALID, Message: "nothing to commit"}

// Commit turns local edits into a commit on the tree's branch. When the
// branch moved since the base, the edits are merged three-way onto its head
// (each file from the version the person edited); a conflict is returned in
// the result and nothing is written. The folder is then brought to the new
// commit: files the branch changed meanwhile are written, and merged files
// get their merged content.
func (m *Manager) Commit(ctx context.Context, t *Tree, req CommitRequest) (*CommitResult, error) {
	paths, err := cleanSelection(req.Paths)
	if err != nil {
		return nil, err
	}
	req.Paths = paths
	unlock, err := m.lock(t)
	if err != nil {
		return nil, err
	}
	if err := m.reload(ctx, t); err != nil {
		unlock()
		return nil, err
	}
	if !t.Pending.IsZero() {
		if _, err := m.sync(ctx, t, t.Pending, true, nil); err != nil {
			unlock()
			return nil, err
		}
	}
	res, err := m.commit(ctx, t, req)
	if err != nil || res.Commit == nil {
		unlock()
		return res, err
	}
	// The sync the commit journaled, under the same lock: released in
	// between, another process (cairn doctor) could find the journal with
	// no one holding the tree, as a dead process leaves it.
	res.Sync, err = m.syncHead(ctx, t, nil, false)
	unlock()
	return res, err
}

func (m *Manager) commit(ctx context.Context, t *Tree, req CommitRequest) (*CommitResult, error) {
	// The files the scan reads go to b as they are read, and to the store
	// when b fills: a commit of a whole folder holds a bounded part of it.
	b := m.s.NewBatch()
	snap, err := m.scanSelected(ctx, t, req.Paths, b)
	if err != nil {
		return nil, err
	}
	all := snap.changes()
	res := &CommitResult{Skipped: snap.skips}
	for _, c := range all {
		if selected(c.Path, req.Paths) {
			res.Changes = append(res.Changes, c)
		}
	}
	for _, p := range req.Paths {
		found := false
		for _, c := range res.Changes {
			found = found || selected(c.Path, []string{p})
		}
		if !found {
			return nil, cairn.Errorf(cairn.EINVALID, "%s has no local edits", p).WithHint("Try: cairn status")
		}
	}
	if len(res.Changes) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "%w: the folder matches %s", ErrNothingToCommit, t.Branch).WithHint("Try: cairn status")
	}
	// The committed files' entries, for the record: taken once, before the
	// attempts below, and so that a landing does not hold the snapshot
	// (every file of the folder, for a whole-folder commit) while Land
	// admits the edits.
	over := committedBase(snap, res.Changes)
	if req.Land != nil {
		base, err := m.baseTree(ctx, b, snap)
		if err != nil {
			return nil, err
		}
		ours, err := m.applyEdits(ctx, b, snap, base, res.Changes)
		if err != nil {
			return nil, err
		}
		snap = nil
		c, conflicts, err := req.Land(ctx, &Landing{Batch: b, Base: t.Base, BaseTree: base, Tree: ours,
			Record: func(ctx context.Context, tx *store.Tx, c *cairn.Commit) error {
				return m.recordCommit(ctx, tx, t, over, c)
			}})
		if err != nil {
			return nil, err
		}
		res.Commit, res.Conflicts = c, conflicts
		if c != nil {
			m.point("commit:committed")
		}
		return res, nil
	}
	// Each attempt builds its trees in b too; what a failed one left there
	// is never reachable.
	for attempt := 0; ; attempt++ {
		base, err := m.baseTree(ctx, b, snap)
		if err != nil {
			return nil, err
		}
		ours, err := m.applyEdits(ctx, b, snap, base, res.Changes)
		if err != nil {
			return nil, err
		}
		head, err := m.s.Head(ctx, t.Branch)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, err
		}
		result := ours
		if head != t.Base || len(snap.over) > 0 {
			headTree, err := m.treeOf(ctx, head)
			if err != nil {
				return nil, err
			}
			mr, err := b.MergeTrees(ctx, base, ours, headTree, nil)
			if err != nil {
				return nil, err
			}
			if len(mr.Conflicts) > 0 {
				res.Conflicts = mr.Conflicts
				return res, nil
			}
			result, res.Merged = mr.Tree, head != t.Base
		}
		var c *cairn.Commit
		err = m.s.Update(ctx, func(tx *store.Tx) error {
			c, err = tx.Commit(ctx, b, store.CommitRequest{
				Branch: t.Branch, Expected: head, Tree: result,
				Principal: req.Principal, Message: req.Message, Meta: req.Meta,
			})
			if err != nil {
				return err
			}
			return m.recordCommit(ctx, tx, t, over, c)
		})
		if cairn.ErrorCode(err) == cairn.ECONFLICT && attempt < 3 {
			continue // the branch moved again under us: merge onto the new head
		}
		if err != nil {
			return nil, err
		}
		m.point("commit:committed")
		res.Commit = c
		return res, nil
	}
}

// committedBase returns the committed files' entries as they are on disk:
// the working tree's overrides once they are committed.
func committedBase(snap *snapshot, changes []Change) []cairn.Entry {
	over := make([]cairn.Entry, 0, len(changes))
	for _, ch := range changes {
		e := cairn.Entry{Path: ch.Path} // a deleted file: absent from the base
		if d := snap.disk[ch.Path]; d != nil {
			e.Blob, e.Size, e.Mode = d.blob, d.Size, d.Mode
		}
		over = append(over, e)
	}
	return over
}

// recordCommit writes, inside the transaction of a commit of local edits,
// the committed files' base (over: what is on disk, so the sync that
// follows writes merged content over them) and the sync to come.
func (m *Manager) recordCommit(ctx context.Context, tx *store.Tx, t *Tree, over []cairn.Entry, c *cairn.Commit) error {
	if err := m.st.SetOverrides(ctx, tx.Backend(), t.ID, over); err != nil {
		return fmt.Errorf("record the base of the committed files: %w", err)
	}
	if err := m.st.SetPending(ctx, tx.Backend(), t.ID, c.Hash); err != nil {
		return fmt.Errorf("record the sync to come: %w", err)
	}
	return nil
}

// baseTree builds in b the effective base: the base commit's tree with the
// overrides applied.
func (m *Manager) baseTree(ctx context.Context, b *store.Batch, snap *snapshot) (cairn.Hash, error) {
	var over []store.FileChange
	for p, e := range snap.over {
		if e.Blob.IsZero() {
			if _, inTree := lookupEntry(ctx, m.s, snap.baseTree, p); inTree {
				over = append(over, store.FileChange{Path: p, Delete: true})
			}
			continue
		}
		over = append(over, store.FileChange{Path: p, Blob: e.Blob, Size: e.Size, Mode: e.Mode})
	}
	return b.Edit(ctx, snap.baseTree, over)
}

// applyEdits builds in b the tree base with the given local edits applied.
// Files the scan did not store are read now, on every core, into b, which
// spills to the store as it fills.
func (m *Manager) applyEdits(ctx context.Context, b *store.Batch, snap *snapshot, base cairn.Hash, changes []Change) (cairn.Hash, error) {
	var unread []*onDisk
	for _, c := range changes {
		if d := snap.disk[c.Path]; c.Kind != cairn.Deleted && !d.stored {
			unread = append(unread, d)
		}
	}
	if err := readAll(ctx, unread, m.maxSize(), b); err != nil {
		return cairn.Hash{}, err
	}
	edits := make([]store.FileChange, 0, len(changes))
	for _, c := range changes {
		if c.Kind == cairn.Deleted {
			edits = append(edits, store.FileChange{Path: c.Path, Delete: true})
			continue
		}
		d := snap.disk[c.Path]
		edits = append(edits, store.FileChange{Path: c.Path, Blob: d.blob, Size: d.size, Mode: d.Mode})
	}
	return b.Edit(ctx, base, edits)
}

// FolderTree builds in b the tree of the folder as it is: the base with
// every local edit applied.
func (m *Manager) FolderTree(ctx context.Context, t *Tree, b *store.Batch) (cairn.Hash, error) {
	if err := m.reload(ctx, t); err != nil {
		return cairn.Hash{}, err
	}
	snap, err := m.scan(ctx, t, b)
	if err != nil {
		return cairn.Hash{}, err
	}
	base, err := m.baseTree(ctx, b, snap)
	if err != nil {
		return cairn.Hash{}, err
	}
	return m.applyEdits(ctx, b, snap, base, snap.changes())
}

// selected reports whether path is one of paths or under one of them.
func selected(path string, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, p := range paths {
		p = strings.Trim(p, "/")
		if p == "" || p == "." || path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

func lookupEntry(ctx context.Context, s *store.Store, tree cairn.Hash, p string) (cairn.Entry, bool) {
	e, err := s.Get(ctx, tree, p)
	return e, err == nil
}
