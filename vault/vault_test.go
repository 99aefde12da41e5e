package vault_test

import (
	"context"
	"testing"

	"cairn"
	"cairn/admit"
	"cairn/index"
	"cairn/store"
	"cairn/vault"
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

	v, _, err = vault.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
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
