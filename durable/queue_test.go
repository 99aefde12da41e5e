package durable_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"cairn/durable"
	"cairn/sqlite"
)

type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

func setup(t *testing.T, now func() time.Time) (*sql.DB, *durable.Queue) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := durable.Migrate(t.Context(), db.Write()); err != nil {
		t.Fatal(err)
	}
	q, err := durable.New(db.Write(), durable.Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return db.Write(), q
}

// running enqueues a job and marks it running, as a worker with id would.
func running(t *testing.T, db *sql.DB, q *durable.Queue, by string) int64 {
	t.Helper()
	ctx := t.Context()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := q.InsertTx(ctx, tx, noopArgs{}, &river.InsertOpts{MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 minute'), attempted_by = jsonb(?) WHERE id = ?`,
		fmt.Sprintf("[%q]", by), id); err != nil {
		t.Fatal(err)
	}
	return id
}

func worker(t *testing.T, db *sql.DB, id, host string, pid int, proc string, heartbeat time.Time) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), `INSERT INTO workers (id, host, pid, proc, started, heartbeat) VALUES (?, ?, ?, ?, ?, ?)`,
		id, host, pid, proc, heartbeat.UnixNano(), heartbeat.UnixNano()); err != nil {
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
		wantState := "available"
		if name == "alive-local" || name == "live-remote" {
			wantState = "running"
		}
		if j.State != wantState {
			t.Errorf("%s: state %s, want %s", name, j.State, wantState)
		}
		if wantState == "available" && len(j.Errors) == 0 {
			t.Errorf("%s: the rescue left no error on the job", name)
		}
	}
	// Dead workers are forgotten.
	var n int
	db.QueryRow(`SELECT count(*) FROM workers`).Scan(&n)
	if n != 2 {
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
