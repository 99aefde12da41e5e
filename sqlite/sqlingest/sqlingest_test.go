package sqlingest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/ingest"
	"cairn/sqlite"
	"cairn/sqlite/sqlingest"
)

// storageDB is a vault database as the tests use it: SQLite's, or
// PostgreSQL's (postgres_test.go runs the same tests on it).
type storageDB interface {
	Update(ctx context.Context, fn func(cairn.Tx) error) error
}

// setup opens a new SQLite database and the sources' storage in it.
func setup(t *testing.T) (storageDB, ingest.Storage) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, sqlingest.New(db)
}

func inWriteTx(t *testing.T, db storageDB, fn func(ctx context.Context, tx cairn.Tx) error) error {
	t.Helper()
	return db.Update(t.Context(), func(tx cairn.Tx) error { return fn(t.Context(), tx) })
}

// at is sec seconds after the epoch, as the storage reads a time back.
func at(sec int64) time.Time { return time.Unix(sec, 0) }

// put records src with a first step at t.
func put(t *testing.T, db storageDB, st ingest.Storage, src *ingest.Source, when time.Time) {
	t.Helper()
	err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		return st.PutSource(ctx, tx, src, ingest.Step{Time: when, Status: src.Status, Principal: cairn.PrincipalSystem, Detail: "recorded"})
	})
	if err != nil {
		t.Fatalf("PutSource(%s) = %v", src.Name, err)
	}
}

const (
	idA = "aaaa1111" + "0000000000000000000000000000000000000000000000000000000a"
	idB = "aaaa2222" + "0000000000000000000000000000000000000000000000000000000b"
	idC = "cccc0000" + "0000000000000000000000000000000000000000000000000000000c"
)

func TestStorage_PutSource(t *testing.T) {
	db, st := setup(t)
	testStoragePutSource(t, db, st)
}

// testStoragePutSource runs TestStorage_PutSource on st, a new storage in db,
// whatever its backend.
func testStoragePutSource(t *testing.T, db storageDB, st ingest.Storage) {
	ctx := t.Context()

	t.Run("OK", func(t *testing.T) {
		src := &ingest.Source{ID: idA, Name: "a.md", Path: "raw/a.md", Size: 3, Status: ingest.Queued, Job: 7}
		put(t, db, st, src, at(100))
		got, err := st.Source(ctx, idA)
		if err != nil {
			t.Fatal(err)
		}
		want := &ingest.Source{ID: idA, Name: "a.md", Path: "raw/a.md", Size: 3, Status: ingest.Queued, Job: 7, Created: at(100), Updated: at(100)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Source(a) (-want +got):\n%s", diff)
		}
		if src.Created != (time.Time{}) {
			t.Errorf("PutSource changed its argument: Created = %v", src.Created)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		// A source refused at the door, ingested again: the record is
		// replaced but for its creation time, and its history goes on.
		refused := &ingest.Source{ID: idB, Name: "b.bin", Size: 9, Status: ingest.Failed, Error: "binary", Hint: "fix it"}
		put(t, db, st, refused, at(200))
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			return st.SetStatus(ctx, tx, idB, ingest.StatusChange{Step: ingest.Step{Time: at(250), Status: ingest.Failed, Principal: cairn.PrincipalSystem}, Proposal: 4, Attempt: 2, Error: "binary"})
		})
		if err != nil {
			t.Fatal(err)
		}
		again := &ingest.Source{ID: idB, Name: "b.md", Path: "raw/b.md", Size: 9, Status: ingest.Queued, Job: 8}
		put(t, db, st, again, at(300))
		got, err := st.Source(ctx, idB)
		if err != nil {
			t.Fatal(err)
		}
		want := &ingest.Source{ID: idB, Name: "b.md", Path: "raw/b.md", Size: 9, Status: ingest.Queued, Job: 8, Created: at(200), Updated: at(300)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Source(b) after PutSource again (-want +got):\n%s", diff)
		}
		h, err := st.History(ctx, idB)
		if err != nil {
			t.Fatal(err)
		}
		var statuses []string
		for _, s := range h {
			statuses = append(statuses, s.Status)
		}
		if diff := cmp.Diff([]string{ingest.Failed, ingest.Failed, ingest.Queued}, statuses); diff != "" {
			t.Errorf("History(b) statuses (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		var other cairn.Tx
		src := &ingest.Source{ID: idC, Name: "c.md", Status: ingest.Queued}
		if err := st.PutSource(ctx, other, src, ingest.Step{Time: at(1), Status: ingest.Queued}); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("PutSource(foreign tx) = %v, want EINTERNAL", err)
		}
	})
}

func TestStorage_SetStatus(t *testing.T) {
	db, st := setup(t)
	testStorageSetStatus(t, db, st)
}

// testStorageSetStatus runs TestStorage_SetStatus on st, a new storage in db,
// whatever its backend.
func testStorageSetStatus(t *testing.T, db storageDB, st ingest.Storage) {
	ctx := t.Context()
	put(t, db, st, &ingest.Source{ID: idA, Name: "a.md", Path: "raw/a.md", Size: 3, Status: ingest.Queued, Job: 7}, at(100))

	t.Run("OK", func(t *testing.T) {
		steps := []ingest.StatusChange{
			{Step: ingest.Step{Time: at(110), Status: ingest.Running, Principal: cairn.Job("7"), Detail: "attempt 1"}, Job: 7, Attempt: 1},
			{Step: ingest.Step{Time: at(120), Status: ingest.Failed, Principal: cairn.Job("7"), Detail: "boom"}, Error: "boom", Hint: "retry"},
			// Zero job, attempt and proposal keep theirs; "" clears the error.
			{Step: ingest.Step{Time: at(130), Status: ingest.Held, Principal: cairn.PrincipalSystem, Detail: "proposal 3 held"}, Proposal: 3},
		}
		for _, c := range steps {
			if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.SetStatus(ctx, tx, idA, c) }); err != nil {
				t.Fatalf("SetStatus(%s) = %v", c.Status, err)
			}
		}
		got, err := st.Source(ctx, idA)
		if err != nil {
			t.Fatal(err)
		}
		want := &ingest.Source{ID: idA, Name: "a.md", Path: "raw/a.md", Size: 3, Status: ingest.Held, Job: 7, Attempt: 1, Proposal: 3, Created: at(100), Updated: at(130)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Source(a) (-want +got):\n%s", diff)
		}
		h, err := st.History(ctx, idA)
		if err != nil {
			t.Fatal(err)
		}
		wantH := []ingest.Step{{Time: at(100), Status: ingest.Queued, Principal: cairn.PrincipalSystem, Detail: "recorded"}}
		for _, c := range steps {
			wantH = append(wantH, c.Step)
		}
		if diff := cmp.Diff(wantH, h); diff != "" {
			t.Errorf("History(a) (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			return st.SetStatus(ctx, tx, idC, ingest.StatusChange{Step: ingest.Step{Time: at(1), Status: ingest.Failed}})
		})
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("SetStatus(unrecorded) = %v, want ENOTFOUND", err)
		}
		if h, err := st.History(ctx, idC); err != nil || len(h) != 0 {
			t.Errorf("History(unrecorded) = %v, %v, want none", h, err)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		var other cairn.Tx
		if err := st.SetStatus(ctx, other, idA, ingest.StatusChange{Step: ingest.Step{Status: ingest.Failed}}); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("SetStatus(foreign tx) = %v, want EINTERNAL", err)
		}
	})
}

func TestStorage_Source(t *testing.T) {
	db, st := setup(t)
	testStorageSource(t, db, st)
}

// testStorageSource runs TestStorage_Source on st, a new storage in db,
// whatever its backend.
func testStorageSource(t *testing.T, db storageDB, st ingest.Storage) {
	ctx := t.Context()
	put(t, db, st, &ingest.Source{ID: idA, Name: "a.md", Path: "raw/a.md", Status: ingest.Queued, Job: 7}, at(100))
	put(t, db, st, &ingest.Source{ID: idB, Name: "a.md", Path: "raw/a.aaaa2222.md", Status: ingest.Merged, Job: 8}, at(200))
	put(t, db, st, &ingest.Source{ID: idC, Name: "c.md", Status: ingest.Failed}, at(300))
	ids := func(srcs []*ingest.Source) []string {
		out := []string{}
		for _, s := range srcs {
			out = append(out, s.ID[:8])
		}
		return out
	}

	t.Run("OK", func(t *testing.T) {
		if got, err := st.SourceOfJob(ctx, 8); err != nil || got.ID != idB {
			t.Errorf("SourceOfJob(8) = %v, %v, want source b", got, err)
		}
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			if got, err := st.SourceTx(ctx, tx, idC); err != nil || got.Name != "c.md" {
				t.Errorf("SourceTx(c) = %v, %v, want c.md", got, err)
			}
			if got, err := st.SourceOfJobTx(ctx, tx, 7); err != nil || got.ID != idA {
				t.Errorf("SourceOfJobTx(7) = %v, %v, want source a", got, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Find", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			find func() ([]*ingest.Source, error)
			want []string
		}{
			{"Prefix", func() ([]*ingest.Source, error) { return st.SourcesWithPrefix(ctx, "aaaa", 3) }, []string{"aaaa1111", "aaaa2222"}},
			{"PrefixLimit", func() ([]*ingest.Source, error) { return st.SourcesWithPrefix(ctx, "aaaa", 1) }, []string{"aaaa1111"}},
			{"PrefixNone", func() ([]*ingest.Source, error) { return st.SourcesWithPrefix(ctx, "bbbb", 3) }, []string{}},
			{"Name", func() ([]*ingest.Source, error) { return st.SourcesNamed(ctx, "a.md", 3) }, []string{"aaaa2222", "aaaa1111"}},
			{"Path", func() ([]*ingest.Source, error) { return st.SourcesNamed(ctx, "raw/a.md", 3) }, []string{"aaaa1111"}},
			{"NameNone", func() ([]*ingest.Source, error) { return st.SourcesNamed(ctx, "z.md", 3) }, []string{}},
			{"All", func() ([]*ingest.Source, error) { return st.Sources(ctx, "", 0, 0) }, []string{"cccc0000", "aaaa2222", "aaaa1111"}},
			{"Part", func() ([]*ingest.Source, error) { return st.Sources(ctx, "", 1, 1) }, []string{"aaaa2222"}},
			{"Rest", func() ([]*ingest.Source, error) { return st.Sources(ctx, "", 1, 0) }, []string{"aaaa2222", "aaaa1111"}},
			{"PastTheEnd", func() ([]*ingest.Source, error) { return st.Sources(ctx, "", 3, 2) }, []string{}},
			{"Status", func() ([]*ingest.Source, error) { return st.Sources(ctx, ingest.Queued, 0, 0) }, []string{"aaaa1111"}},
			{"StatusNone", func() ([]*ingest.Source, error) { return st.Sources(ctx, "nonsense", 0, 0) }, []string{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := tc.find()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})
	t.Run("Count", func(t *testing.T) {
		for status, want := range map[string]int{"": 3, ingest.Queued: 1, "nonsense": 0} {
			if n, err := st.CountSources(ctx, status); n != want || err != nil {
				t.Errorf("CountSources(%q) = %d, %v; want %d", status, n, err, want)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		missing := "dddd" + idC[4:]
		if _, err := st.Source(ctx, missing); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Source(missing) = %v, want ENOTFOUND", err)
		}
		if _, err := st.SourceOfJob(ctx, 99); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("SourceOfJob(99) = %v, want ENOTFOUND", err)
		}
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			if _, err := st.SourceTx(ctx, tx, missing); cairn.ErrorCode(err) != cairn.ENOTFOUND {
				t.Errorf("SourceTx(missing) = %v, want ENOTFOUND", err)
			}
			if _, err := st.SourceOfJobTx(ctx, tx, 99); cairn.ErrorCode(err) != cairn.ENOTFOUND {
				t.Errorf("SourceOfJobTx(99) = %v, want ENOTFOUND", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		var other cairn.Tx
		if _, err := st.SourceTx(ctx, other, idA); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("SourceTx(foreign tx) = %v, want EINTERNAL", err)
		}
		if _, err := st.SourceOfJobTx(ctx, other, 7); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("SourceOfJobTx(foreign tx) = %v, want EINTERNAL", err)
		}
	})
}
