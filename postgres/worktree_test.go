package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/worktree"
)

// TestWorktreeStorage_ManyRows: stat rows and overrides are written many a
// statement, as arrays; a path given twice in one call keeps its last row,
// as SQLite's inserts in order do, though one statement of PostgreSQL
// cannot update a row twice.
func TestWorktreeStorage_ManyRows(t *testing.T) {
	db, err := postgres.Open(t.Context(), pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	st := postgres.NewWorktreeStorage(db)
	var id int64
	err = db.Update(ctx, func(tx cairn.Tx) error {
		id, err = st.AddTree(ctx, tx, &worktree.Tree{Path: "/vault", Branch: "main"}, time.Unix(1, 0))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	const n = 12000 // more than one statement's rows
	var stats []worktree.FileStat
	want := map[string]worktree.FileStat{}
	for i := range n {
		r := worktree.FileStat{Path: fmt.Sprintf("pages/%05d.md", i), Size: int64(i), Mtime: 100, Blob: cairn.Hash{byte(i), byte(i >> 8)}, Checked: 200}
		stats = append(stats, r)
		want[r.Path] = r
	}
	// Given again, later in the call: the later row wins.
	again := worktree.FileStat{Path: "pages/00007.md", Size: 7777, Mtime: 300, Blob: cairn.Hash{9}, Checked: 400}
	stats = append(stats, again)
	want[again.Path] = again
	over := []cairn.Entry{{Path: "a.md", Blob: cairn.Hash{1}, Size: 1}, {Path: "b.md"}, {Path: "a.md", Blob: cairn.Hash{2}, Size: 2, Mode: 1}}
	err = db.Update(ctx, func(tx cairn.Tx) error {
		if err := st.PutStats(ctx, tx, id, stats); err != nil {
			return err
		}
		return st.SetOverrides(ctx, tx, id, over)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Stats(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
	gotOver, err := st.Overrides(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	wantOver := map[string]cairn.Entry{"a.md": {Path: "a.md", Blob: cairn.Hash{2}, Size: 2, Mode: 1}, "b.md": {Path: "b.md"}}
	if diff := cmp.Diff(wantOver, gotOver); diff != "" {
		t.Errorf("Overrides() (-want +got):\n%s", diff)
	}

	// A sync that deletes and resolves many paths at once.
	var deleted []string
	for i := range n / 2 {
		deleted = append(deleted, fmt.Sprintf("pages/%05d.md", i))
		delete(want, deleted[i])
	}
	err = db.Update(ctx, func(tx cairn.Tx) error {
		return st.FinishSync(ctx, tx, id, worktree.Synced{Resolved: []string{"a.md", "b.md"}, Deleted: deleted, Base: cairn.Hash{5}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Stats(ctx, id); err != nil || len(got) != len(want) {
		t.Errorf("Stats() after the sync: %d rows, %v, want %d", len(got), err, len(want))
	}
	if over, err := st.Overrides(ctx, id); err != nil || len(over) != 0 {
		t.Errorf("Overrides() after the sync = %v, %v, want none", over, err)
	}
	if tr, err := st.Tree(ctx, id); err != nil || tr.Base != (cairn.Hash{5}) || !tr.Pending.IsZero() {
		t.Errorf("Tree() after the sync = %+v, %v, want base 05 and nothing pending", tr, err)
	}
}
