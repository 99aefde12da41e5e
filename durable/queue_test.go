package durable_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"cairn"
	"cairn/durable"
	"cairn/postgres"
	"cairn/postgres/pgdurable"
	"cairn/postgres/pgtest"
	"cairn/sqlite"
	"cairn/sqlite/sqldurable"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

// testDB is a vault's database as the tests reach it, on the backend
// the tests run on (SQLite, or PostgreSQL with CAIRN_TEST_BACKEND=postgres).
type testDB struct {
	be   cairn.Backend
	st   durable.Storage
	lite *sqlite.DB   // nil on PostgreSQL
	pg   *postgres.DB // nil on SQLite
}

// newDB returns where a test's database is: a file or a PostgreSQL URL;
// each openDB of it is a connection of its own, as a process's would be.
func newDB(t *testing.T) string {
	if pgtest.Enabled() {
		return pgtest.URL(t)
	}
	return filepath.Join(t.TempDir(), "cairn.db")
}

// openDB opens the database at where, with River's tables, waiting at
// most busy for another's write lock (0: the default).
func openDB(t *testing.T, where string, busy time.Duration) testDB {
	t.Helper()
	ctx := t.Context()
	if pgtest.Enabled() {
		db, err := postgres.Open(ctx, where, &postgres.Options{LockTimeout: busy})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := durable.MigratePostgres(ctx, db.RiverPool()); err != nil {
			t.Fatal(err)
		}
		return testDB{be: db, st: pgdurable.New(db), pg: db}
	}
	db, err := sqlite.Open(ctx, where, &sqlite.Options{BusyTimeout: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := durable.Migrate(ctx, db.Read(), db.Write()); err != nil {
		t.Fatal(err)
	}
	return testDB{be: db, st: sqldurable.New(db), lite: db}
}

// queue returns a queue on the database.
func (db testDB) queue(cfg durable.Config) (*durable.Queue, error) {
	if db.pg != nil {
		return durable.NewPostgres(db.pg.RiverPool(), db.st, cfg)
	}
	return durable.New(db.lite.Write(), db.st, cfg)
}

func setup(t *testing.T, now func() time.Time) (testDB, *durable.Queue) {
	t.Helper()
	db := openDB(t, newDB(t), 0)
	q, err := db.queue(durable.Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return db, q
}

// running enqueues a job already running, as a worker with id would have
// it, in one transaction: no worker can take it before.
func running(t *testing.T, db testDB, q *durable.Queue, by string) int64 {
	t.Helper()
	return runningArgs(t, db, q, noopArgs{}, by)
}

func runningArgs(t *testing.T, db testDB, q *durable.Queue, args river.JobArgs, by string) int64 {
	t.Helper()
	ctx := t.Context()
	var id int64
	err := db.be.Update(ctx, func(tx cairn.Tx) error {
		var err error
		if id, err = q.InsertTx(ctx, tx, args, &river.InsertOpts{MaxAttempts: 3}); err != nil {
			return err
		}
		if db.pg != nil {
			ptx, err := postgres.PgxTx(tx)
			if err != nil {
				return err
			}
			_, err = ptx.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
				attempted_at = now() - interval '1 minute', attempted_by = ARRAY[$1::text] WHERE id = $2`, by, id)
			return err
		}
		stx, err := sqlite.SQLTx(tx)
		if err != nil {
			return err
		}
		_, err = stx.ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 minute'), attempted_by = jsonb(?) WHERE id = ?`,
			fmt.Sprintf("[%q]", by), id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func worker(t *testing.T, db testDB, id, host string, pid int, proc string, heartbeat time.Time) {
	t.Helper()
	if err := db.st.PutWorker(t.Context(), durable.Worker{ID: id, Host: host, PID: pid, Proc: proc, Started: heartbeat, Heartbeat: heartbeat}); err != nil {
		t.Fatal(err)
	}
}

func TestRescue(t *testing.T) {
	now := time.Now()
	db, q := setup(t, func() time.Time { return now })
	host, _ := os.Hostname()
	me := os.Getpid()
	myProc := procStart(t, me)
	// A dead process on this host, with and without a record; a live one
	// (this process, under another worker id); a remote worker whose
	// heartbeat stopped, and one that beats.
	deadPID := 1 << 22 // above pid_max: no such process
	jobs := map[string]int64{
		"dead-local":   running(t, db, q, fmt.Sprintf("%s:%d:aa", host, deadPID)),
		"unrecorded":   running(t, db, q, fmt.Sprintf("%s:%d:bb", host, deadPID)),
		"reused-pid":   running(t, db, q, fmt.Sprintf("%s:%d:cc", host, me)),
		"alive-local":  running(t, db, q, fmt.Sprintf("%s:%d:dd", host, me)),
		"stale-remote": running(t, db, q, "elsewhere:42:ee"),
		"live-remote":  running(t, db, q, "elsewhere:43:ff"),
	}
	worker(t, db, fmt.Sprintf("%s:%d:aa", host, deadPID), host, deadPID, "1", now)
	worker(t, db, fmt.Sprintf("%s:%d:cc", host, me), host, me, "12345", now) // this pid, another process's start time
	worker(t, db, fmt.Sprintf("%s:%d:dd", host, me), host, me, myProc, now)
	worker(t, db, "elsewhere:42:ee", "elsewhere", 42, "", now.Add(-time.Minute))
	worker(t, db, "elsewhere:43:ff", "elsewhere", 43, "", now.Add(-time.Second))

	rescued, err := q.Rescue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{jobs["dead-local"], jobs["unrecorded"], jobs["reused-pid"], jobs["stale-remote"]}
	slices.Sort(want)
	slices.Sort(rescued)
	if !slices.Equal(rescued, want) {
		t.Errorf("rescued %v, want %v (jobs %v)", rescued, want, jobs)
	}
	for name, id := range jobs {
		j, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		wantState := durable.StateQueued
		if name == "alive-local" || name == "live-remote" {
			wantState = durable.StateRunning
		}
		if j.State != wantState {
			t.Errorf("%s: state %s, want %s", name, j.State, wantState)
		}
		if wantState == durable.StateQueued && len(j.Errors) == 0 {
			t.Errorf("%s: the rescue left no error on the job", name)
		}
	}
	// Dead workers are forgotten.
	ws, err := db.st.Workers(context.Background())
	if n := len(ws); err != nil || n != 2 {
		t.Errorf("%d workers recorded after the rescue, want the 2 alive", n)
	}
}

func procStart(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Skip("no /proc")
	}
	s := string(data)
	i := len(s) - 1
	for i > 0 && s[i] != ')' {
		i--
	}
	var fields []string
	field := ""
	for _, r := range s[i+1:] {
		if r == ' ' || r == '\n' {
			if field != "" {
				fields = append(fields, field)
			}
			field = ""
			continue
		}
		field += string(r)
	}
	return fields[19]
}

type blockArgs struct{}

func (blockArgs) Kind() string { return "block" }

// blockWorker says when a job starts, then works until released.
type blockWorker struct {
	river.WorkerDefaults[blockArgs]
	started chan<- int64
	release <-chan struct{}
}

func (w *blockWorker) Work(ctx context.Context, job *river.Job[blockArgs]) error {
	w.started <- job.ID
	select {
	case <-w.release:
	case <-ctx.Done():
	}
	return nil
}

// TestRescue_LiveWorker races a rescue with a worker. One process's rescue
// has decided to hand back a dead worker's job when another process's
// rescue hands it back first and a live worker picks it up: the first
// rescue must leave the job to the live worker, whose agent runs once.
func TestRescue_LiveWorker(t *testing.T) {
	ctx := t.Context()
	where := newDB(t)
	// newQueue is a queue on a database connection of its own, as a
	// process's would be.
	newQueue := func(busy time.Duration, cfg durable.Config) (*durable.Queue, error) {
		return openDB(t, where, busy).queue(cfg)
	}
	db := openDB(t, where, 0)
	started, release := make(chan int64, 8), make(chan struct{})
	workers := river.NewWorkers()
	river.AddWorker(workers, &blockWorker{started: started, release: release})
	live, err := newQueue(0, durable.Config{Workers: workers, PollInterval: 20 * time.Millisecond, RescueEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			close(release)
			live.Stop(context.Background())
		}
	}
	t.Cleanup(stop)

	host, _ := os.Hostname()
	deadPID := 1 << 22 // above pid_max: no such process
	dead := fmt.Sprintf("%s:%d:aa", host, deadPID)
	worker(t, db, dead, host, deadPID, "1", time.Now())
	job := runningArgs(t, db, live, blockArgs{}, dead)

	// The other process's rescue: it waits little for the write lock.
	other, err := newQueue(50*time.Millisecond, durable.Config{})
	if err != nil {
		t.Fatal(err)
	}
	picked := false
	var first *durable.Queue
	first, err = newQueue(0, durable.Config{Crash: func(point string) {
		if point != "rescue:decided" || picked {
			return
		}
		// Between the first rescue's decision and its effect, the
		// other rescue runs and, if it can, the live worker takes the
		// job.
		if _, err := other.Rescue(ctx); err != nil {
			t.Logf("the other rescue: %v", err)
			return
		}
		select {
		case <-started:
			picked = true
		case <-time.After(time.Minute):
			t.Error("the live worker never took the rescued job")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Rescue(ctx); err != nil {
		t.Fatal(err)
	}
	if !picked {
		select {
		case <-started:
		case <-time.After(time.Minute):
			t.Fatal("the live worker never took the rescued job")
		}
	}
	j, err := live.Get(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != durable.StateRunning || j.Attempt != 2 || j.Worker != live.ID() {
		t.Errorf("job %d is %s at attempt %d by %s; want running at attempt 2 by the live worker %s", job, j.State, j.Attempt, j.Worker, live.ID())
	}
	// Rescues now leave it alone, and it runs once.
	for _, q := range []*durable.Queue{first, other} {
		if got, err := q.Rescue(ctx); err != nil || len(got) != 0 {
			t.Errorf("a rescue with the worker alive = %v, %v; want nothing rescued", got, err)
		}
	}
	stop()
	if n := len(started); n != 0 {
		t.Errorf("the job started %d more times", n)
	}
}

// TestQueue_Jobs lists jobs by cairn's state names: an unknown state is
// refused with a hint, and River's names never show.
func TestQueue_Jobs(t *testing.T) {
	db, q := setup(t, time.Now)
	ctx := t.Context()
	var queued int64
	if err := db.be.Update(ctx, func(tx cairn.Tx) error {
		var err error
		queued, err = q.InsertTx(ctx, tx, noopArgs{}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	run := running(t, db, q, "elsewhere:1:aa")
	for _, tc := range []struct {
		states []string
		want   []int64
	}{
		{nil, []int64{run, queued}},
		{[]string{durable.StateQueued}, []int64{queued}},
		{[]string{durable.StateRunning, durable.StateRetrying}, []int64{run}},
		{[]string{durable.StateFailed}, nil},
	} {
		jobs, err := q.Jobs(ctx, 0, tc.states...)
		if err != nil {
			t.Fatalf("Jobs(%v): %v", tc.states, err)
		}
		var got []int64
		for _, j := range jobs {
			got = append(got, j.ID)
			if !slices.Contains(durable.States, j.State) {
				t.Errorf("job %d is in state %q, not one of %v", j.ID, j.State, durable.States)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Jobs(%v) = %v, want %v", tc.states, got, tc.want)
		}
	}
	if j, err := q.Get(ctx, queued); err != nil || j.State != durable.StateQueued {
		t.Errorf("Get(%d) = %+v, %v; want a job in state %s", queued, j, err, durable.StateQueued)
	}
	for _, bad := range []string{"bogus", "available", "discarded"} {
		if _, err := q.Jobs(ctx, 0, bad); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("Jobs(%q) = %v; want EINVALID with a hint", bad, err)
		}
	}
}

// TestRescue_DamagedRow checks that a running job whose attempted_by is not
// a list of worker ids stops the rescue with an internal error, rather than
// being taken for a job no worker ran.
func TestRescue_DamagedRow(t *testing.T) {
	if pgtest.Enabled() {
		t.Skip("PostgreSQL's river_job.attempted_by is a text[]: it cannot hold anything but a list")
	}
	db, q := setup(t, time.Now)
	id := running(t, db, q, "elsewhere:42:ee")
	if _, err := db.lite.Write().Exec(`UPDATE river_job SET attempted_by = jsonb('{"not": "a list"}') WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	_, err := q.Rescue(t.Context())
	if code := cairn.ErrorCode(err); code != cairn.EINTERNAL {
		t.Fatalf("Rescue of a damaged row: %v (code %q), want code %q", err, code, cairn.EINTERNAL)
	}
	var state string
	if err := db.lite.Write().QueryRow(`SELECT state FROM river_job WHERE id = ?`, id).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "running" {
		t.Errorf("the damaged job is %s after the rescue, want it left running", state)
	}
}

// TestMigratePostgres_WaitsForWriters: River's migrations wait for a
// write that holds its table however long, though the vault's pool
// bounds every lock wait of cairn's: River works on a pool of its own.
func TestMigratePostgres_WaitsForWriters(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	setup, err := postgres.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	if err := durable.MigratePostgres(ctx, setup.RiverPool()); err != nil {
		t.Fatal(err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(setup.RiverPool()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: 5}); err != nil {
		t.Fatal(err)
	}
	// Another process's write that enqueued a job holds river_job until it
	// commits.
	write, err := setup.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := write.Exec(ctx, `LOCK TABLE river_job IN ROW EXCLUSIVE MODE`); err != nil {
		write.Rollback(context.Background())
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, url, &postgres.Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		time.Sleep(time.Second)
		write.Rollback(context.Background())
	}()
	defer func() { <-ended }()
	start := time.Now()
	if err := durable.MigratePostgres(ctx, db.RiverPool()); err != nil {
		t.Fatalf("River's migrations while a write holds its table: %v, want them to wait for it", err)
	}
	if d := time.Since(start); d < 700*time.Millisecond {
		t.Errorf("the migrations took %v: they did not wait for the write (held 1s)", d)
	}
}
