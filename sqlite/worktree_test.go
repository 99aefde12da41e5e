package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/sqlite"
	"cairn/worktree"
)

// setupWorktreeStorage opens a SQLite database and its working trees'
// storage.
func setupWorktreeStorage(t *testing.T) (*sqlite.DB, worktree.Storage) {
	t.Helper()
	db := openSQLite(t)
	return db, sqlite.NewWorktreeStorage(db)
}

// addWorktree records a tree at path and returns it as read back.
func addWorktree(t *testing.T, db storageDB, st worktree.Storage, path, branch string) *worktree.Tree {
	t.Helper()
	ctx := t.Context()
	var id int64
	err := db.Update(ctx, func(tx cairn.Tx) error {
		var err error
		id, err = st.AddTree(ctx, tx, &worktree.Tree{Path: path, Branch: branch}, time.Now())
		return err
	})
	if err != nil {
		t.Fatalf("AddTree(%s) = %v", path, err)
	}
	tr, err := st.Tree(ctx, id)
	if err != nil {
		t.Fatalf("Tree(%d) = %v", id, err)
	}
	return tr
}

func TestWorktreeStorage_Trees(t *testing.T) {
	db, st := setupWorktreeStorage(t)
	testWorktreeStorageTrees(t, db, st)
}

// testWorktreeStorageTrees runs TestWorktreeStorage_Trees on st, a new storage in db, whatever its backend.
func testWorktreeStorageTrees(t *testing.T, db storageDB, st worktree.Storage) {
	ctx := t.Context()
	b := addWorktree(t, db, st, "/vault/b", "main")
	a := addWorktree(t, db, st, "/vault/a", "draft")

	t.Run("OK", func(t *testing.T) {
		trees, err := st.Trees(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]*worktree.Tree{a, b}, trees); diff != "" {
			t.Errorf("Trees() (-want +got):\n%s", diff)
		}
		got, err := st.TreeAt(ctx, "/vault/b")
		if err != nil || got.ID != b.ID {
			t.Errorf("TreeAt(/vault/b) = %v, %v, want tree %d", got, err, b.ID)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := st.Tree(ctx, 999); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Tree(999) = %v, want ENOTFOUND", err)
		}
		if _, err := st.TreeAt(ctx, "/elsewhere"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("TreeAt(/elsewhere) = %v, want ENOTFOUND", err)
		}
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			_, err := st.BranchTree(ctx, tx, "nobody")
			return err
		})
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("BranchTree(nobody) = %v, want ENOTFOUND", err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			_, err := st.AddTree(ctx, tx, &worktree.Tree{Path: "/vault/a", Branch: "main"}, time.Now())
			return err
		})
		if cairn.ErrorCode(err) != cairn.ECONFLICT {
			t.Errorf("AddTree(/vault/a) again = %v, want ECONFLICT", err)
		}
		err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.MoveTree(ctx, tx, a.ID, a.Path, b.Path) })
		if cairn.ErrorCode(err) != cairn.ECONFLICT {
			t.Errorf("MoveTree onto /vault/b = %v, want ECONFLICT", err)
		}
	})
	t.Run("GoesOnAfterConflict", func(t *testing.T) {
		// A caller that expects the conflicts writes on in the transaction.
		var id int64
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			if _, err := st.AddTree(ctx, tx, &worktree.Tree{Path: "/vault/a", Branch: "main"}, time.Now()); cairn.ErrorCode(err) != cairn.ECONFLICT {
				t.Errorf("AddTree(/vault/a) again = %v, want ECONFLICT", err)
			}
			if err := st.MoveTree(ctx, tx, a.ID, a.Path, b.Path); cairn.ErrorCode(err) != cairn.ECONFLICT {
				t.Errorf("MoveTree onto /vault/b = %v, want ECONFLICT", err)
			}
			var err error
			id, err = st.AddTree(ctx, tx, &worktree.Tree{Path: "/vault/c", Branch: "main"}, time.Now())
			return err
		})
		if err != nil {
			t.Fatalf("a write after conflicts = %v", err)
		}
		if got, err := st.TreeAt(ctx, "/vault/c"); err != nil || got.ID != id {
			t.Errorf("TreeAt(/vault/c) = %v, %v, want tree %d", got, err, id)
		}
		// Moving a tree that is not at from onto another's folder does
		// nothing.
		if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.MoveTree(ctx, tx, a.ID, "/elsewhere", b.Path) }); err != nil {
			t.Errorf("MoveTree from where it is not = %v, want nil", err)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		// A transaction of another backend is refused, not misused.
		var other cairn.Tx
		if _, err := st.AddTree(ctx, other, &worktree.Tree{Path: "/x", Branch: "main"}, time.Now()); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("AddTree(foreign tx) = %v, want EINTERNAL", err)
		}
	})
}

func TestWorktreeStorage_MoveTree(t *testing.T) {
	db, st := setupWorktreeStorage(t)
	testWorktreeStorageMoveTree(t, db, st)
}

// testWorktreeStorageMoveTree runs TestWorktreeStorage_MoveTree on st, a new storage in db, whatever its backend.
func testWorktreeStorageMoveTree(t *testing.T, db storageDB, st worktree.Storage) {
	ctx := t.Context()
	tr := addWorktree(t, db, st, "/vault/a", "main")
	t.Run("OK", func(t *testing.T) {
		if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.MoveTree(ctx, tx, tr.ID, "/vault/a", "/moved") }); err != nil {
			t.Fatal(err)
		}
		got, err := st.Tree(ctx, tr.ID)
		if err != nil || got.Path != "/moved" {
			t.Errorf("Tree(%d) = %v, %v, want it at /moved", tr.ID, got, err)
		}
	})
	t.Run("NotThere", func(t *testing.T) {
		// Recorded elsewhere than from: nothing changes.
		if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.MoveTree(ctx, tx, tr.ID, "/vault/a", "/again") }); err != nil {
			t.Fatal(err)
		}
		got, err := st.Tree(ctx, tr.ID)
		if err != nil || got.Path != "/moved" {
			t.Errorf("Tree(%d) = %v, %v, want it still at /moved", tr.ID, got, err)
		}
	})
}

func TestWorktreeStorage_Sync(t *testing.T) {
	db, st := setupWorktreeStorage(t)
	testWorktreeStorageSync(t, db, st)
}

// testWorktreeStorageSync runs TestWorktreeStorage_Sync on st, a new storage in db, whatever its backend.
func testWorktreeStorageSync(t *testing.T, db storageDB, st worktree.Storage) {
	ctx := t.Context()
	tr := addWorktree(t, db, st, "/vault", "main")
	h1, h2 := cairn.Hash{1}, cairn.Hash{2}
	stat := func(p string, blob cairn.Hash) worktree.FileStat {
		return worktree.FileStat{Path: p, Size: 5, Mtime: 100, Blob: blob, Checked: 200}
	}

	err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		if err := st.PutStats(ctx, tx, tr.ID, []worktree.FileStat{stat("a.md", h1), stat("b.md", h1)}); err != nil {
			return err
		}
		if err := st.SetOverrides(ctx, tx, tr.ID, []cairn.Entry{{Path: "a.md", Blob: h1, Size: 5}, {Path: "gone.md"}}); err != nil {
			return err
		}
		return st.SetPending(ctx, tx, tr.ID, h2)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Tree(ctx, tr.ID); err != nil || got.Pending != h2 {
		t.Errorf("Tree(%d).Pending = %v (%v), want %v", tr.ID, got.Pending, err, h2)
	}
	over, err := st.Overrides(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]cairn.Entry{"a.md": {Path: "a.md", Blob: h1, Size: 5}, "gone.md": {Path: "gone.md"}}
	if diff := cmp.Diff(want, over); diff != "" {
		t.Errorf("Overrides() (-want +got):\n%s", diff)
	}

	// The sync resolves a.md, deletes b.md, writes c.md and reaches h2.
	err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		return st.FinishSync(ctx, tx, tr.ID, worktree.Synced{
			Resolved:  []string{"a.md"},
			Overrides: []cairn.Entry{{Path: "kept.md", Blob: h1, Size: 5}},
			Deleted:   []string{"b.md"},
			Stats:     []worktree.FileStat{stat("c.md", h2)},
			Base:      h2,
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Tree(ctx, tr.ID)
	if err != nil || got.Base != h2 || !got.Pending.IsZero() {
		t.Errorf("Tree(%d) = %+v, %v, want base %v and nothing pending", tr.ID, got, err, h2)
	}
	stats, err := st.Stats(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]worktree.FileStat{"a.md": stat("a.md", h1), "c.md": stat("c.md", h2)}, stats); diff != "" {
		t.Errorf("Stats() (-want +got):\n%s", diff)
	}
	if over, err = st.Overrides(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	want = map[string]cairn.Entry{"gone.md": {Path: "gone.md"}, "kept.md": {Path: "kept.md", Blob: h1, Size: 5}}
	if diff := cmp.Diff(want, over); diff != "" {
		t.Errorf("Overrides() after the sync (-want +got):\n%s", diff)
	}
	if r, err := st.Stat(ctx, tr.ID, "c.md"); err != nil || r != stat("c.md", h2) {
		t.Errorf("Stat(c.md) = %+v, %v, want %+v", r, err, stat("c.md", h2))
	}
	if _, err := st.Stat(ctx, tr.ID, "b.md"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("Stat(b.md) after its deletion = %v, want ENOTFOUND", err)
	}

	// Forgetting the tree takes its rows with it.
	if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.DeleteTree(ctx, tx, tr.ID) }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Tree(ctx, tr.ID); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("Tree(%d) after DeleteTree = %v, want ENOTFOUND", tr.ID, err)
	}
	if stats, err := st.Stats(ctx, tr.ID); err != nil || len(stats) != 0 {
		t.Errorf("Stats() after DeleteTree = %v, %v, want none", stats, err)
	}
	if over, err := st.Overrides(ctx, tr.ID); err != nil || len(over) != 0 {
		t.Errorf("Overrides() after DeleteTree = %v, %v, want none", over, err)
	}
}

func TestDB_Meta(t *testing.T) {
	testDBMeta(t, openSQLite(t))
}

// metaDB is a database that keeps the vault's meta values (vault.Storage).
type metaDB interface {
	storageDB
	Meta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, tx cairn.Tx, key, value string) error
}

// testDBMeta runs TestDB_Meta on db, a new database of any backend.
func testDBMeta(t *testing.T, db metaDB) {
	ctx := t.Context()
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := db.Meta(ctx, "id"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Meta(id) = %v, want ENOTFOUND", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		for _, v := range []string{"one", "two"} {
			if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return db.SetMeta(ctx, tx, "id", v) }); err != nil {
				t.Fatal(err)
			}
			if got, err := db.Meta(ctx, "id"); err != nil || got != v {
				t.Errorf("Meta(id) = %q, %v, want %q", got, err, v)
			}
		}
	})
}
