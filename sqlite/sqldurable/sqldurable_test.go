package sqldurable_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/riverqueue/river"

	"cairn"
	"cairn/durable"
	"cairn/sqlite"
	"cairn/sqlite/sqldurable"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

func open(t *testing.T, path string, busy time.Duration) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, &sqlite.Options{BusyTimeout: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// backend is a vault database with the job queue on it, as the tests use
// it: SQLite's, or PostgreSQL's (postgres_test.go runs the same tests on
// it). River's rows are in each backend's own layout, so the tests make,
// damage and read them through the backend's functions.
type backend struct {
	st durable.Storage
	q  *durable.Queue
	// running enqueues a job already running as attempt 1 of 2 under the
	// worker by, and returns its id.
	running func(t *testing.T, by string) int64
	// damage makes job id's attempted_by something else than a list of
	// worker ids.
	damage func(t *testing.T, id int64)
	// state returns job id's state and how many errors it has.
	state func(t *testing.T, id int64) (string, int)
}

// setup opens a new SQLite database with River's tables, the storage and
// the queue.
func setup(t *testing.T) *backend {
	t.Helper()
	db := open(t, filepath.Join(t.TempDir(), "cairn.db"), 0)
	if err := durable.Migrate(t.Context(), db.Read(), db.Write()); err != nil {
		t.Fatal(err)
	}
	st := sqldurable.New(db)
	q, err := durable.New(db.Write(), st, durable.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{st: st, q: q}
	b.running = func(t *testing.T, by string) int64 {
		t.Helper()
		ctx := t.Context()
		var id int64
		err := db.Update(ctx, func(tx cairn.Tx) error {
			var err error
			if id, err = q.InsertTx(ctx, tx, noopArgs{}, &river.InsertOpts{MaxAttempts: 2}); err != nil {
				return err
			}
			stx, err := sqlite.SQLTx(tx)
			if err != nil {
				return err
			}
			_, err = stx.ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_by = jsonb(?) WHERE id = ?`,
				fmt.Sprintf("[%q]", by), id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	b.damage = func(t *testing.T, id int64) {
		t.Helper()
		if _, err := db.Write().ExecContext(t.Context(), `UPDATE river_job SET attempted_by = jsonb('{"not": "a list"}') WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
	}
	b.state = func(t *testing.T, id int64) (string, int) {
		t.Helper()
		var s string
		var errs int
		if err := db.Read().QueryRowContext(t.Context(), `SELECT state, json_array_length(json(coalesce(errors, jsonb('[]')))) FROM river_job WHERE id = ?`, id).Scan(&s, &errs); err != nil {
			t.Fatal(err)
		}
		return s, errs
	}
	return b
}

func at(sec int64) time.Time { return time.Unix(sec, 0) }

func TestStorage_Workers(t *testing.T) { testStorageWorkers(t, setup(t)) }

// testStorageWorkers runs TestStorage_Workers on b, whatever its backend.
func testStorageWorkers(t *testing.T, be *backend) {
	st := be.st
	ctx := t.Context()
	a := durable.Worker{ID: "h:1:aa", Host: "h", PID: 1, Proc: "77", Started: at(10), Heartbeat: at(10)}
	b := durable.Worker{ID: "h:2:bb", Host: "h", PID: 2, Started: at(20), Heartbeat: at(20)}
	sorted := func(ws []durable.Worker) []durable.Worker {
		slices.SortFunc(ws, func(x, y durable.Worker) int { return strings.Compare(x.ID, y.ID) })
		return ws
	}
	t.Run("OK", func(t *testing.T) {
		for _, w := range []durable.Worker{a, b} {
			if err := st.PutWorker(ctx, w); err != nil {
				t.Fatalf("PutWorker(%s) = %v", w.ID, err)
			}
		}
		if err := st.Beat(ctx, a.ID, at(30)); err != nil {
			t.Fatal(err)
		}
		got, err := st.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a.Heartbeat = at(30)
		if diff := cmp.Diff([]durable.Worker{a, b}, sorted(got)); diff != "" {
			t.Errorf("Workers() (-want +got):\n%s", diff)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		b.Proc, b.Heartbeat = "88", at(40)
		if err := st.PutWorker(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := st.RemoveWorker(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		got, err := st.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]durable.Worker{b}, got); diff != "" {
			t.Errorf("Workers() after replacing b and removing a (-want +got):\n%s", diff)
		}
	})
	t.Run("NotThere", func(t *testing.T) {
		// Beating or forgetting a worker with no record does nothing.
		if err := st.Beat(ctx, "nobody", at(50)); err != nil {
			t.Errorf("Beat(nobody) = %v, want nil", err)
		}
		if err := st.RemoveWorker(ctx, "nobody"); err != nil {
			t.Errorf("RemoveWorker(nobody) = %v, want nil", err)
		}
	})
}

func TestStorage_Unavailable(t *testing.T) {
	// Another process holds the write lock: a write that cannot have it
	// within the busy timeout is EUNAVAILABLE.
	path := filepath.Join(t.TempDir(), "cairn.db")
	holder := open(t, path, 0)
	st := sqldurable.New(open(t, path, 50*time.Millisecond))
	var err error
	holdErr := holder.Update(t.Context(), func(cairn.Tx) error {
		err = st.PutWorker(t.Context(), durable.Worker{ID: "h:1:aa", Host: "h", PID: 1, Started: at(1), Heartbeat: at(1)})
		return nil
	})
	if holdErr != nil {
		t.Fatal(holdErr)
	}
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
		t.Errorf("PutWorker while another holds the lock = %v, want EUNAVAILABLE", err)
	}
}

func TestStorage_RunningJobs(t *testing.T) { testStorageRunningJobs(t, setup(t)) }

// testStorageRunningJobs runs TestStorage_RunningJobs on b, whatever its
// backend.
func testStorageRunningJobs(t *testing.T, b *backend) {
	st := b.st
	ctx := t.Context()
	id := b.running(t, "h:9:dd")
	t.Run("OK", func(t *testing.T) {
		got, err := st.RunningJobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]durable.RunningJob{{ID: id, Attempt: 1, MaxAttempts: 2, Worker: "h:9:dd"}}, got); diff != "" {
			t.Errorf("RunningJobs() (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		b.damage(t, id)
		if _, err := st.RunningJobs(ctx); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("RunningJobs() with a damaged row = %v, want EINTERNAL", err)
		}
		_, err := st.Rescue(ctx, func([]durable.Worker, []durable.RunningJob) (*durable.Plan, error) {
			t.Error("Rescue decided on a damaged row")
			return &durable.Plan{}, nil
		})
		if cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("Rescue() with a damaged row = %v, want EINTERNAL", err)
		}
	})
}

func TestStorage_Rescue(t *testing.T) { testStorageRescue(t, setup(t)) }

// testStorageRescue runs TestStorage_Rescue on b, whatever its backend.
func testStorageRescue(t *testing.T, b *backend) {
	st := b.st
	ctx := t.Context()
	dead := durable.Worker{ID: "h:1:aa", Host: "h", PID: 1, Started: at(1), Heartbeat: at(1)}
	if err := st.PutWorker(ctx, dead); err != nil {
		t.Fatal(err)
	}
	back := b.running(t, dead.ID)
	discard := b.running(t, dead.ID)
	moved := b.running(t, dead.ID) // decided for, then taken by another worker

	t.Run("ErrDecide", func(t *testing.T) {
		stop := errors.New("stop")
		_, err := st.Rescue(ctx, func([]durable.Worker, []durable.RunningJob) (*durable.Plan, error) { return nil, stop })
		if !errors.Is(err, stop) {
			t.Errorf("Rescue() with decide failing = %v, want its error", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		got, err := st.Rescue(ctx, func(ws []durable.Worker, js []durable.RunningJob) (*durable.Plan, error) {
			if len(ws) != 1 || len(js) != 3 {
				t.Errorf("decide got %d workers and %d running jobs, want 1 and 3", len(ws), len(js))
			}
			msg := "the worker died"
			return &durable.Plan{At: at(100), Dead: []string{dead.ID}, Jobs: []durable.Handback{
				{ID: back, Attempt: 1, Worker: dead.ID, Error: msg},
				{ID: discard, Attempt: 1, Worker: dead.ID, Discard: true, Error: msg},
				{ID: moved, Attempt: 1, Worker: "h:2:bb", Error: msg},
			}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{back, discard}, got); diff != "" {
			t.Errorf("Rescue() rescued (-want +got):\n%s", diff)
		}
		for _, c := range []struct {
			id    int64
			state string
			errs  int
		}{{back, "available", 1}, {discard, "discarded", 1}, {moved, "running", 0}} {
			if s, n := b.state(t, c.id); s != c.state || n != c.errs {
				t.Errorf("job %d is %s with %d errors, want %s with %d", c.id, s, n, c.state, c.errs)
			}
		}
		if ws, err := st.Workers(ctx); err != nil || len(ws) != 0 {
			t.Errorf("Workers() after the rescue = %v, %v, want none", ws, err)
		}
		// River reads the rows the rescue wrote: the error, and when the
		// discarded job was finalized.
		for _, id := range []int64{back, discard} {
			j, err := b.q.Get(ctx, id)
			if err != nil {
				t.Fatalf("Get(%d) after the rescue = %v", id, err)
			}
			if diff := cmp.Diff([]string{"the worker died"}, j.Errors); diff != "" {
				t.Errorf("job %d's errors as River reads them (-want +got):\n%s", id, diff)
			}
			if want := map[int64]time.Time{discard: at(100)}[id]; !j.Finalized.Equal(want) {
				t.Errorf("job %d finalized at %v, want %v", id, j.Finalized, want)
			}
		}
	})
}
