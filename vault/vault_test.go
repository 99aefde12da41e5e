package vault_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"cairn"
	"cairn/admit"
	"cairn/index"
	"cairn/store"
	"cairn/vault"
	"cairn/worktree"
)

// TestOpen_RebuildsEmptiedIndex checks what a migration that changes the
// index's tables relies on: it empties the index, and the next open
// rebuilds it from main's head.
func TestOpen_RebuildsEmptiedIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, err := vault.Init(ctx, dir, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := v.Store.NewBatch()
	tree, err := b.BuildTree(ctx, []store.FileChange{
		{Path: "notes/alpha.md", Data: []byte("# Alpha\n\nQuartz and [[beta]].\n")},
		{Path: "notes/beta.md", Data: []byte("# Beta\n\nBack to [[alpha]].\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Admit.Submit(ctx, admit.Request{Route: "init", Tree: tree, Batch: b, Principal: cairn.User("ada"), Message: "first"}); err != nil {
		t.Fatal(err)
	}
	// What migration 0005 does to the index's rows.
	for _, q := range []string{`DELETE FROM files`, `DELETE FROM keys`, `DELETE FROM links`, `DELETE FROM link_keys`,
		`DELETE FROM cites`, `DELETE FROM findings`, `DELETE FROM index_state`,
		`INSERT INTO fts (fts) VALUES ('delete-all')`, `INSERT INTO fts_title (fts_title) VALUES ('delete-all')`} {
		if _, err := v.DB.Write().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	v.Close()

	var logged bytes.Buffer
	v, _, err = vault.Open(ctx, dir, &vault.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	// The command that meets it says why it waits.
	if !strings.Contains(logged.String(), "rebuilding main's index") {
		t.Errorf("opening logged %q; want the rebuild said", logged.String())
	}
	st, err := v.Index.State(ctx)
	if err != nil || st.Commit.IsZero() {
		t.Fatalf("index state after open: %+v, %v", st, err)
	}
	res, err := v.Index.Main().Search(ctx, index.SearchQuery{Text: "quartz"})
	if err != nil || len(res) != 1 || res[0].Path != "notes/alpha.md" {
		t.Fatalf("search after the rebuild: %+v, %v", res, err)
	}
	back, err := v.Index.Main().Backlinks(ctx, "notes/beta.md")
	if err != nil || len(back) != 1 {
		t.Fatalf("backlinks after the rebuild: %+v, %v", back, err)
	}
}

// TestTreeAt_Forged: a folder whose .cairn was made up to take a working
// tree of the vault gets none: not the vault's own folder (even naming its
// identity), not a tree whose folder is still there, not a tree without
// the vault's identity; and a pointer file that is a named pipe, a link or
// a huge file is refused without being read.
func TestTreeAt_Forged(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	dir := filepath.Join(root, "vault")
	v, err := vault.Init(ctx, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	own, err := v.Trees.Get(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	forge := func(name, content string) string {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, ".cairn"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, pointer, code string
	}{
		{"own-no-id", fmt.Sprintf("vault: %s\ntree: %d\n", dir, own.ID), cairn.ENOTFOUND},
		{"own-with-id", fmt.Sprintf("vault: %s\ntree: %d\nid: %s\n", dir, own.ID, v.Trees.VaultID), cairn.EINVALID},
		{"other-vault", fmt.Sprintf("vault: %s\ntree: %d\nid: %s\n", root, own.ID, v.Trees.VaultID), cairn.ENOTFOUND},
	} {
		p := forge(tc.name, tc.pointer)
		if _, _, err := v.TreeAt(ctx, p); cairn.ErrorCode(err) != tc.code {
			t.Errorf("TreeAt(%s) = %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, _, err := v.TreeAt(ctx, "relative/path"); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("TreeAt(a relative path) = %v, want EINVALID", err)
	}
	if got, err := v.Trees.Get(ctx, dir); err != nil || got.Path != dir {
		t.Fatalf("the vault's own tree is at %v (%v), want %s", got, err, dir)
	}
	// Pointer files that are not small regular files.
	fifo := filepath.Join(root, "fifo")
	os.MkdirAll(fifo, 0o755)
	if err := syscall.Mkfifo(filepath.Join(fifo, ".cairn"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := forge("big", strings.Repeat("vault: x\n", 10000))
	link := filepath.Join(root, "link")
	os.MkdirAll(link, 0o755)
	os.Symlink(filepath.Join(big, ".cairn"), filepath.Join(link, ".cairn"))
	for _, p := range []string{fifo, big, link} {
		if _, err := worktree.ReadPointer(p); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("ReadPointer(%s) = %v, want EINVALID", filepath.Base(p), err)
		}
	}
}
