package app

import (
	"context"

	"cairn"
	"cairn/store"
	"cairn/worktree"
)

// LogOptions filter Log. The zero value gives the whole history.
type LogOptions struct {
	// Path keeps only the commits that changed this file (relative to
	// their first parent). Default: every commit.
	Path string
	// Limit stops after this many commits. Default (0 or less): no limit.
	Limit int
	// FirstParent follows only first parents: the branch's own line.
	FirstParent bool
	// Skip leaves out the first commits, for a next page: Limit commits
	// are returned after them.
	Skip int
}

// maxSkip bounds how many commits a log skips or shows.
const maxSkip = 1 << 30

// Log returns the commits reachable from the revision rev (see ReadFile),
// newest first, each once. An unknown revision gives ENOTFOUND; a
// malformed one, or a Path that is not a vault path, EINVALID.
func (a *App) Log(ctx context.Context, rev string, opts LogOptions) ([]*cairn.Commit, error) {
	c, err := a.ResolveCommit(ctx, rev)
	if err != nil {
		return nil, err
	}
	if opts.Path != "" {
		if _, err := cairn.CleanPath(opts.Path); err != nil {
			return nil, err
		}
	}
	if opts.Skip < 0 || opts.Skip > maxSkip || opts.Limit > maxSkip {
		return nil, cairn.Errorf(cairn.EINVALID, "a log skips and shows 0 to %d commits, not %d and %d", maxSkip, opts.Skip, opts.Limit).
			WithHint("Skip 0 or more.")
	}
	limit := opts.Limit
	if limit > 0 {
		limit += opts.Skip
	}
	var out []*cairn.Commit
	skip := opts.Skip
	for c, err := range a.v.Store.Log(ctx, c.Hash, store.LogOptions{Path: opts.Path, Limit: limit, FirstParent: opts.FirstParent}) {
		if err != nil {
			return nil, err
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// CommitDetail is a commit and what it changed.
type CommitDetail struct {
	Commit *cairn.Commit `json:"commit"`
	// Changes are relative to the first parent (for a root commit: to the
	// empty tree), by path.
	Changes []cairn.Change `json:"changes"`
}

// ShowCommit returns the commit the revision rev names and what it
// changed. An unknown revision gives ENOTFOUND.
func (a *App) ShowCommit(ctx context.Context, rev string) (*CommitDetail, error) {
	c, err := a.ResolveCommit(ctx, rev)
	if err != nil {
		return nil, err
	}
	var parent cairn.Hash
	if len(c.Parents) > 0 {
		parent = c.Parents[0]
	}
	changes, err := a.v.Store.DiffCommits(ctx, parent, c.Hash, nil)
	if err != nil {
		return nil, err
	}
	return &CommitDetail{Commit: c, Changes: changes}, nil
}

// TreeDiff is the difference between two trees.
type TreeDiff struct {
	From    cairn.Hash     `json:"from"` // the tree compared from
	To      cairn.Hash     `json:"to"`   // the tree compared to; a folder's is not stored
	Changes []cairn.Change `json:"changes"`
	// Patches are the changes rendered as unified diffs, one for each of
	// Changes, in order, when DiffOptions.Patch asks for them.
	Patches []string `json:"patches,omitempty"`
}

// DiffOptions adjust Diff. The zero value lists the changes only.
type DiffOptions struct {
	// Patch renders each change as a unified diff (a binary file, or one
	// whose content was purged, as git's one line saying they differ).
	Patch bool
}

// Diff returns the changes from the revision from to the revision to.
// With to "", the changes from the revision to the working tree's folder;
// with both "", the folder's local edits (relative to the working tree's
// base).
//
// Comparing with the folder needs a working tree (NeedTree's EINVALID); a
// to without a from gives EINVALID and an unknown revision ENOTFOUND.
func (a *App) Diff(ctx context.Context, from, to string, opts DiffOptions) (*TreeDiff, error) {
	b := a.v.Store.NewBatch()
	d := &TreeDiff{}
	switch {
	case from == "" && to != "":
		return nil, cairn.Errorf(cairn.EINVALID, "a diff to %s needs the revision it starts from", to).
			WithHint("Try: cairn diff REV " + to)
	case to != "":
		ca, err := a.ResolveCommit(ctx, from)
		if err != nil {
			return nil, err
		}
		cb, err := a.ResolveCommit(ctx, to)
		if err != nil {
			return nil, err
		}
		d.From, d.To = ca.Tree, cb.Tree
	default:
		t, err := a.NeedTree()
		if err != nil {
			return nil, err
		}
		var base cairn.Hash
		if from != "" {
			c, err := a.ResolveCommit(ctx, from)
			if err != nil {
				return nil, err
			}
			base = c.Hash
		}
		// Reading the folder brings t up to date: its base is read after.
		if d.To, err = a.v.Trees.FolderTree(ctx, t, b); err != nil {
			return nil, err
		}
		if from == "" {
			// Local edits are relative to the working tree's own base.
			base = t.Base
		}
		if d.From, err = a.TreeOf(ctx, base); err != nil {
			return nil, err
		}
	}
	changes, err := b.Diff(ctx, d.From, d.To, nil)
	if err != nil {
		return nil, err
	}
	d.Changes = changes
	if opts.Patch {
		// The folder's edits are in the batch, not the store.
		d.Patches = a.patches(ctx, b, changes)
	}
	return d, nil
}

// Status returns the local edits of the working tree's folder against the
// commit it is based on, whether the branch moved since, and the files
// that were skipped; with paths (files or folders, from the tree's root),
// only under them, and only they are looked at. It needs a working tree
// (NeedTree's EINVALID).
func (a *App) Status(ctx context.Context, paths ...string) (*worktree.Status, error) {
	t, err := a.NeedTree()
	if err != nil {
		return nil, err
	}
	return a.v.Trees.Status(ctx, t, paths...)
}
