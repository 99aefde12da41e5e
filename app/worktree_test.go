package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"cairn"
)

func TestApp_Worktrees(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		dir := filepath.Join(t.TempDir(), "draft")
		res, err := a.AddWorktree(ctx, dir, "draft")
		if err != nil {
			t.Fatalf("AddWorktree: %v", err)
		}
		if res.Tree.Branch != "draft" || res.Files != 2 {
			t.Errorf("AddWorktree = %+v (tree %+v), want draft with 2 files", res, res.Tree)
		}
		if got := readChangesFile(t, dir, "page.md"); got != "# Page\n\nThe original line.\n" {
			t.Errorf("page.md in the new tree = %q", got)
		}
		trees, err := a.Worktrees(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(trees) != 2 {
			t.Errorf("Worktrees = %d trees, want 2", len(trees))
		}
		removed, err := a.RemoveWorktree(ctx, dir, false)
		if err != nil {
			t.Fatalf("RemoveWorktree: %v", err)
		}
		if removed.Path != res.Tree.Path {
			t.Errorf("RemoveWorktree removed %s, want %s", removed.Path, res.Tree.Path)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the folder is still there: %v", err)
		}
		if trees, _ := a.Worktrees(ctx); len(trees) != 1 {
			t.Errorf("Worktrees after remove = %d trees, want 1", len(trees))
		}
	})
	t.Run("ErrLocalEdits", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		dir := filepath.Join(t.TempDir(), "draft")
		if _, err := a.AddWorktree(ctx, dir, "draft"); err != nil {
			t.Fatal(err)
		}
		writeChangesFile(t, dir, "page.md", "edited\n")
		_, err := a.RemoveWorktree(ctx, dir, false)
		wantChangesCode(t, "RemoveWorktree(with local edits)", err, cairn.ECONFLICT)
		if _, err := a.RemoveWorktree(ctx, dir, true); err != nil {
			t.Errorf("RemoveWorktree(force): %v", err)
		}
	})
	t.Run("ErrBadBranch", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.AddWorktree(ctx, filepath.Join(t.TempDir(), "x"), "nope")
		wantChangesCode(t, "AddWorktree(nope)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrNotEmpty", func(t *testing.T) {
		a, ctx := setupChanges(t)
		dir := t.TempDir()
		writeChangesFile(t, dir, "x.md", "x\n")
		_, err := a.AddWorktree(ctx, dir, "main")
		wantChangesCode(t, "AddWorktree(not empty)", err, cairn.EINVALID)
	})
	t.Run("ErrNotATree", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.RemoveWorktree(ctx, t.TempDir(), false)
		wantChangesCode(t, "RemoveWorktree(not a tree)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrVaultFolder", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.RemoveWorktree(ctx, a.Root(), true)
		wantChangesCode(t, "RemoveWorktree(the vault's folder)", err, cairn.EINVALID)
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		dir := filepath.Join(t.TempDir(), "draft")
		_, err := a.AddWorktree(t.Context(), dir, "draft")
		wantChangesCode(t, "AddWorktree without principal", err, cairn.EUNAUTHORIZED)
		a.AddWorktree(ctx, dir, "draft")
		_, err = a.RemoveWorktree(t.Context(), dir, false)
		wantChangesCode(t, "RemoveWorktree without principal", err, cairn.EUNAUTHORIZED)
	})
}
