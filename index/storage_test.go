package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/sqlite"
)

// backend is a vault database of a test's own with the index's storage in
// it: PostgreSQL when the tests run there (pgtest.Enabled), else SQLite.
type backend struct {
	db cairn.Backend
	st index.Storage
	// size returns the bytes the database takes.
	size func(testing.TB) int64
	// exec runs a statement on the database, outside the index.
	exec func(testing.TB, string)
}

func openBackend(t testing.TB) *backend {
	t.Helper()
	ctx := context.Background()
	if pgtest.Enabled() {
		db, err := postgres.Open(ctx, pgtest.URL(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return &backend{db: db, st: postgres.NewIndexStorage(db), size: func(t testing.TB) int64 {
			// Every table of the vault's schema, with its indexes and TOAST.
			var n int64
			err := db.Pool().QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
				WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'`).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}, exec: func(t testing.TB, stmt string) {
			if _, err := db.Pool().Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}}
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &backend{db: db, st: sqlite.NewIndexStorage(db), size: func(t testing.TB) int64 {
		if err := db.Checkpoint(ctx); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}, exec: func(t testing.TB, stmt string) {
		if _, err := db.Write().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}}
}

// The storage's own tests, on every implementation: what the index reads
// back is what it wrote, inside a transaction and after it.

// setupIndex returns a database of the test's own and its index storage
// (openBackend: SQLite, or PostgreSQL under CAIRN_TEST_BACKEND=postgres).
func setupIndex(t *testing.T) (cairn.Backend, index.Storage) {
	t.Helper()
	b := openBackend(t)
	return b.db, b.st
}

// inIndexTx runs fn with the index storage inside a write transaction
// that commits when fn succeeds.
func inIndexTx(t *testing.T, db cairn.Backend, s index.Storage, fn func(context.Context, index.StorageTx) error) error {
	t.Helper()
	ctx := t.Context()
	return db.Update(ctx, func(tx cairn.Tx) error {
		q, err := s.Begin(ctx, tx)
		if err != nil {
			return err
		}
		err = fn(ctx, q)
		if cerr := q.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

var (
	indexPageRow = index.FileRow{ID: 1, Path: "notes/a.md", Kind: lint.KindPage, Blob: cairn.Hash{1}, Size: 10,
		Title: "A", TitleSource: 2, Aliases: `["Alpha"]`, Inbound: 1, Depth: 0}
	indexImageRow = index.FileRow{ID: 2, Path: "img/b.png", Kind: lint.KindAttachment, Blob: cairn.Hash{2}, Size: 3,
		Title: "ignored", Type: "ignored", Depth: -1}
)

// fillIndex writes two files, a link between them and a finding.
func fillIndex(ctx context.Context, q index.StorageTx) error {
	if err := q.InsertFiles(ctx, []index.FileRow{indexPageRow, indexImageRow}); err != nil {
		return err
	}
	if err := q.InsertKeys(ctx, []index.KeyRow{
		{Value: "notes/a.md", Step: markdown.StepFile, File: 1},
		{Value: "a", Step: markdown.StepTitle, File: 1},
		{Value: "img/b.png", Step: markdown.StepFile, File: 2},
	}); err != nil {
		return err
	}
	if err := q.InsertLinks(ctx, []index.LinkRow{{Src: 1, Ord: 0, Flags: index.LinkAnchored, Status: 1, Dst: 2, Step: 1, Data: []byte{1}}}); err != nil {
		return err
	}
	if err := q.InsertLinkKeys(ctx, []index.LinkKeyRow{{Hash: 42, Src: 1, Ord: 0}}); err != nil {
		return err
	}
	return q.InsertFindings(ctx, []index.FindingRow{{File: 1, Finding: lint.Finding{Rule: "r", Severity: lint.Warning, Subject: "s", Message: "m"}}})
}

func TestIndexStorage_Begin(t *testing.T) {
	t.Run("ErrOtherDatabase", func(t *testing.T) {
		db, _ := setupIndex(t)
		_, other := setupIndex(t)
		err := db.Update(t.Context(), func(tx cairn.Tx) error {
			_, err := other.Begin(t.Context(), tx)
			return err
		})
		if cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("Begin with another database's transaction = %v, want EINTERNAL", err)
		}
	})
	t.Run("RollsBackWithTx", func(t *testing.T) {
		db, s := setupIndex(t)
		stop := errors.New("stop")
		err := inIndexTx(t, db, s, func(ctx context.Context, q index.StorageTx) error {
			if err := fillIndex(ctx, q); err != nil {
				return err
			}
			return stop
		})
		if !errors.Is(err, stop) {
			t.Fatal(err)
		}
		if _, err := s.Committed().File(t.Context(), 1); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("File(1) after a rollback = %v, want ENOTFOUND", err)
		}
	})
}

func TestIndexStorage_Reads(t *testing.T) {
	db, s := setupIndex(t)
	ctx := t.Context()
	r := s.Committed()
	if st, err := r.State(ctx); err != nil || st != (index.State{}) {
		t.Errorf("State of an empty index = %v, %v; want zero", st, err)
	}
	if err := inIndexTx(t, db, s, fillIndex); err != nil {
		t.Fatal(err)
	}

	t.Run("File", func(t *testing.T) {
		got, err := r.File(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(indexPageRow, got); diff != "" {
			t.Errorf("File(1) (-want +got):\n%s", diff)
		}
		// A file that is not a page keeps no page fields.
		got, err = r.File(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		want := indexImageRow
		want.Title, want.Type = "", ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("File(2) (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := r.File(ctx, 99); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("File(99) = %v, want ENOTFOUND", err)
		}
		if _, err := r.Path(ctx, 99); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Path(99) = %v, want ENOTFOUND", err)
		}
		if _, err := r.Link(ctx, 1, 5); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Link(1, 5) = %v, want ENOTFOUND", err)
		}
		if d, err := r.Depth(ctx, 99); d != -1 || err != nil {
			t.Errorf("Depth(99) = %d, %v; want -1, nil", d, err)
		}
		if fs, err := r.KeyHolders(ctx, "nobody", markdown.StepFile); len(fs) != 0 || err != nil {
			t.Errorf("KeyHolders(nobody) = %v, %v; want none", fs, err)
		}
	})
	t.Run("KeyHolders", func(t *testing.T) {
		got, err := r.KeyHolders(ctx, "a", markdown.StepPath, markdown.StepTitle)
		if err != nil {
			t.Fatal(err)
		}
		want := []index.FileRef{{ID: 1, Path: "notes/a.md", Kind: lint.KindPage, Blob: cairn.Hash{1}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("KeyHolders(a) (-want +got):\n%s", diff)
		}
	})
	t.Run("Links", func(t *testing.T) {
		from, err := r.LinksFrom(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		to, err := r.LinksTo(ctx, 2, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := index.LinkRow{Src: 1, Ord: 0, Flags: index.LinkAnchored, Status: 1, Dst: 2, Step: 1, Data: []byte{1}, DstPath: "img/b.png"}
		if diff := cmp.Diff([]index.LinkRow{want}, from); diff != "" {
			t.Errorf("LinksFrom(1) (-want +got):\n%s", diff)
		}
		want.SrcPath = "notes/a.md"
		if diff := cmp.Diff([]index.LinkRow{want}, to); diff != "" {
			t.Errorf("LinksTo(2) (-want +got):\n%s", diff)
		}
		anchored, err := r.AnchoredLinksTo(ctx, 2)
		if err != nil || len(anchored) != 1 {
			t.Errorf("AnchoredLinksTo(2) = %v, %v; want one", anchored, err)
		}
		looking, err := r.LinksLookingUp(ctx, 42)
		if err != nil || len(looking) != 1 {
			t.Errorf("LinksLookingUp(42) = %v, %v; want one", looking, err)
		}
	})
	t.Run("Findings", func(t *testing.T) {
		all, err := r.Findings(ctx, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		want := []lint.Finding{{Rule: "r", Severity: lint.Warning, Page: "notes/a.md", Subject: "s", Message: "m"}}
		if diff := cmp.Diff(want, all); diff != "" {
			t.Errorf("Findings(0, \"\") (-want +got):\n%s", diff)
		}
		if none, err := r.Findings(ctx, 2, ""); len(none) != 0 || err != nil {
			t.Errorf("Findings(2) = %v, %v; want none", none, err)
		}
	})
	t.Run("ErrSearchWithoutTerms", func(t *testing.T) {
		if _, err := r.Search(ctx, index.FullTextQuery{Limit: 10}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Search without terms = %v, want EINVALID", err)
		}
	})
}

func TestIndexStorage_Writes(t *testing.T) {
	db, s := setupIndex(t)
	ctx := t.Context()
	if err := inIndexTx(t, db, s, fillIndex); err != nil {
		t.Fatal(err)
	}
	err := inIndexTx(t, db, s, func(ctx context.Context, q index.StorageTx) error {
		if err := q.SetDepth(ctx, 2, 1); err != nil {
			return err
		}
		if err := q.AddInbound(ctx, 2, 3); err != nil {
			return err
		}
		if err := q.WriteText(ctx, 1, "a", "a quartz"); err != nil {
			return err
		}
		// Reads inside the transaction see its writes.
		if d, err := q.Depth(ctx, 2); d != 1 || err != nil {
			t.Errorf("Depth(2) inside the transaction = %d, %v; want 1", d, err)
		}
		if err := q.DeleteLink(ctx, 1, 0, []int64{42}); err != nil {
			return err
		}
		if err := q.DeleteFindings(ctx, 1); err != nil {
			return err
		}
		return q.SetState(ctx, index.State{Commit: cairn.Hash{7}, Tree: cairn.Hash{8}})
	})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Committed()
	if f, err := r.File(ctx, 2); err != nil || f.Depth != 1 || f.Inbound != 3 {
		t.Errorf("File(2) = %+v, %v; want depth 1, inbound 3", f, err)
	}
	if _, err := r.Link(ctx, 1, 0); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("Link(1, 0) after DeleteLink = %v, want ENOTFOUND", err)
	}
	if ls, err := r.LinksLookingUp(ctx, 42); len(ls) != 0 || err != nil {
		t.Errorf("LinksLookingUp(42) after DeleteLink = %v, %v; want none", ls, err)
	}
	if st, err := r.State(ctx); err != nil || st.Commit != (cairn.Hash{7}) || st.Tree != (cairn.Hash{8}) {
		t.Errorf("State = %v, %v", st, err)
	}
	hits, err := r.Search(ctx, index.FullTextQuery{Terms: []index.FullTextTerm{{Word: "quar", Prefix: true}}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Path != "notes/a.md" || hits[0].ID != "notes/a" || hits[0].InTitle {
		t.Errorf("Search(quar*) = %+v; want notes/a.md, not in its title", hits)
	}

	// A full build: Clear, rows, FinishBuild.
	err = inIndexTx(t, db, s, func(ctx context.Context, q index.StorageTx) error {
		next, err := q.NextFileID(ctx)
		if err != nil {
			return err
		}
		if next != 3 {
			t.Errorf("NextFileID = %d, want 3", next)
		}
		if err := q.Clear(ctx); err != nil {
			return err
		}
		if next, err = q.NextFileID(ctx); err != nil || next != 3 {
			t.Errorf("NextFileID after Clear = %d, %v; want 3 (ids are never reused)", next, err)
		}
		return q.FinishBuild(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := r.Stats(ctx); err != nil || st != (index.Stats{}) {
		t.Errorf("Stats after Clear = %+v, %v; want zero", st, err)
	}
}

// TestIndexStorage_Snapshot: a snapshot keeps the state it first read while
// another transaction commits, and reads the committed state once opened
// again; the read pool's next file id follows the inserts.
func TestIndexStorage_Snapshot(t *testing.T) {
	ctx := t.Context()
	db, s := setupIndex(t)
	if err := inIndexTx(t, db, s, fillIndex); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.File(ctx, 1); err != nil {
		t.Fatalf("File(1) in the snapshot: %v", err)
	}
	err = inIndexTx(t, db, s, func(ctx context.Context, q index.StorageTx) error {
		return q.InsertFiles(ctx, []index.FileRow{{ID: 3, Path: "c.md", Kind: lint.KindPage, Blob: cairn.Hash{3}, Title: "C", TitleSource: 3, Depth: -1}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.File(ctx, 3); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("File(3) in a snapshot taken before it was committed = %v, want ENOTFOUND", err)
	}
	if next, err := snap.NextFileID(ctx); err != nil || next != 3 {
		t.Errorf("NextFileID in the snapshot = %d, %v; want 3", next, err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	snap, err = s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if _, err := snap.File(ctx, 3); err != nil {
		t.Errorf("File(3) in a new snapshot: %v", err)
	}
	if next, err := s.Committed().NextFileID(ctx); err != nil || next != 4 {
		t.Errorf("NextFileID of the committed index = %d, %v; want 4", next, err)
	}
}
