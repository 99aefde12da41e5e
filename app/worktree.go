package app

import (
	"context"
	"fmt"
	"path/filepath"

	"cairn/worktree"
)

// AddWorktreeResult is a new working tree and what writing its folder did.
type AddWorktreeResult struct {
	Tree *worktree.Tree `json:"tree"`
	// Files is how many files were written into the folder.
	Files int `json:"files"`
}

// AddWorktree makes dir (missing or empty; relative to the current
// folder) a working tree of branch, for editing that branch side by side
// with main, and writes the branch's files into it. Errors: no principal
// (EUNAUTHORIZED); a branch that does not exist (ENOTFOUND); a dir that is
// not empty, or that is inside a working tree or holds one (EINVALID, with
// a hint).
func (a *App) AddWorktree(ctx context.Context, dir, branch string) (*AddWorktreeResult, error) {
	if _, err := Principal(ctx); err != nil {
		return nil, err
	}
	t, rep, err := a.v.Trees.Add(ctx, dir, branch, a.v.Root)
	if err != nil {
		return nil, err
	}
	return &AddWorktreeResult{Tree: t, Files: len(rep.Updated)}, nil
}

// Worktrees returns the vault's working trees, the vault's own folder
// among them.
func (a *App) Worktrees(ctx context.Context) ([]*worktree.Tree, error) {
	return a.v.Trees.List(ctx)
}

// RemoveWorktree forgets the working tree whose folder is dir (relative to
// the current folder) and deletes the folder, and returns the tree it
// removed. Errors: no principal (EUNAUTHORIZED); a dir that is no working
// tree (ENOTFOUND); the vault's own folder (EINVALID); a tree with local
// edits, unless force (ECONFLICT, with a hint: force throws them away).
func (a *App) RemoveWorktree(ctx context.Context, dir string, force bool) (*worktree.Tree, error) {
	if _, err := Principal(ctx); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("remove working tree %s: %w", dir, err)
	}
	t, err := a.v.Trees.Get(ctx, abs)
	if err != nil {
		return nil, err
	}
	if err := a.v.Trees.Remove(ctx, t, force); err != nil {
		return nil, err
	}
	return t, nil
}
