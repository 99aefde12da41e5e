// Package sqldurable keeps the job queue's own records in a vault's SQLite
// database: the workers table of migration 0004, and the rescue's reads
// and resets of River's river_job rows, in the layout River's SQLite
// driver (riversqlite) gives them. River itself reaches its tables through
// that driver, not through this package. It implements durable.Storage
// beside package sqlite, as sqlingest does ingest.Storage.
package sqldurable

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river/rivertype"

	"cairn"
	"cairn/durable"
	"cairn/sqlite"
)

// Storage keeps the workers, and resets River's jobs for a rescue, in a
// vault's database.
type Storage struct {
	db *sqlite.DB
}

var _ durable.Storage = (*Storage)(nil)

// New returns the job queue's storage in db. Its reads use db's read-only
// pool; its writes run on db's write connection, each in a transaction of
// its own.
func New(db *sqlite.DB) *Storage { return &Storage{db: db} }

// PutWorker records w, replacing the record of the same id.
func (s *Storage) PutWorker(ctx context.Context, w durable.Worker) error {
	_, err := s.db.Write().ExecContext(ctx, `INSERT OR REPLACE INTO workers (id, host, pid, proc, started, heartbeat) VALUES (?, ?, ?, ?, ?, ?)`,
		w.ID, w.Host, w.PID, w.Proc, w.Started.UnixNano(), w.Heartbeat.UnixNano())
	return sqlite.Translate(err)
}

// Beat records that worker id was alive at t.
func (s *Storage) Beat(ctx context.Context, id string, t time.Time) error {
	_, err := s.db.Write().ExecContext(ctx, `UPDATE workers SET heartbeat = ? WHERE id = ?`, t.UnixNano(), id)
	return sqlite.Translate(err)
}

// RemoveWorker forgets worker id.
func (s *Storage) RemoveWorker(ctx context.Context, id string) error {
	_, err := s.db.Write().ExecContext(ctx, `DELETE FROM workers WHERE id = ?`, id)
	return sqlite.Translate(err)
}

// querier reads rows: the read pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Workers returns every recorded worker.
func (s *Storage) Workers(ctx context.Context) ([]durable.Worker, error) {
	return workers(ctx, s.db.Read())
}

func workers(ctx context.Context, q querier) ([]durable.Worker, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, host, pid, proc, started, heartbeat FROM workers`)
	if err != nil {
		return nil, sqlite.Translate(err)
	}
	defer rows.Close()
	var out []durable.Worker
	for rows.Next() {
		var w durable.Worker
		var started, hb int64
		if err := rows.Scan(&w.ID, &w.Host, &w.PID, &w.Proc, &started, &hb); err != nil {
			return nil, sqlite.Translate(err)
		}
		w.Started, w.Heartbeat = time.Unix(0, started), time.Unix(0, hb)
		out = append(out, w)
	}
	return out, sqlite.Translate(rows.Err())
}

// RunningJobs returns the jobs River has running; EINTERNAL for one whose
// attempted_by is not a list of worker ids.
func (s *Storage) RunningJobs(ctx context.Context) ([]durable.RunningJob, error) {
	return runningJobs(ctx, s.db.Read())
}

func runningJobs(ctx context.Context, q querier) ([]durable.RunningJob, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, json(attempted_by), attempt, max_attempts FROM river_job WHERE state = 'running'`)
	if err != nil {
		return nil, sqlite.Translate(err)
	}
	defer rows.Close()
	var out []durable.RunningJob
	for rows.Next() {
		var j durable.RunningJob
		var by sql.NullString
		if err := rows.Scan(&j.ID, &by, &j.Attempt, &j.MaxAttempts); err != nil {
			return nil, sqlite.Translate(err)
		}
		var ids []string
		if by.String != "" {
			if err := json.Unmarshal([]byte(by.String), &ids); err != nil {
				return nil, cairn.Errorf(cairn.EINTERNAL, "job %d: its attempted_by is not a list of worker ids: %w", j.ID, err).
					WithHint("The job queue's table is damaged: cairn doctor checks the vault.")
			}
		}
		if len(ids) > 0 {
			j.Worker = ids[len(ids)-1]
		}
		out = append(out, j)
	}
	return out, sqlite.Translate(rows.Err())
}

// Rescue reads the workers and running jobs, asks decide for a plan and
// carries it out, in one transaction on the write connection.
func (s *Storage) Rescue(ctx context.Context, decide func([]durable.Worker, []durable.RunningJob) (*durable.Plan, error)) ([]int64, error) {
	tx, err := s.db.Write().BeginTx(ctx, nil)
	if err != nil {
		return nil, sqlite.Translate(err)
	}
	defer tx.Rollback()
	ws, err := workers(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("read workers: %w", err)
	}
	js, err := runningJobs(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("read running jobs: %w", err)
	}
	p, err := decide(ws, js)
	if err != nil {
		return nil, err
	}
	var rescued []int64
	for _, j := range p.Jobs {
		state, finalized := rivertype.JobStateAvailable, (*string)(nil)
		if j.Discard {
			state, finalized = rivertype.JobStateDiscarded, ptr(riverTime(p.At))
		}
		msg, err := json.Marshal(rivertype.AttemptError{At: p.At, Attempt: j.Attempt, Error: j.Error})
		if err != nil {
			return nil, fmt.Errorf("rescue job %d: %w", j.ID, err)
		}
		// The error is appended as River appends a rescue's (JobRescue).
		res, err := tx.ExecContext(ctx, `UPDATE river_job SET
			errors = CASE WHEN typeof(errors) = 'text' AND NOT json_valid(errors) THEN jsonb(json_array(errors, json(?)))
				WHEN coalesce(json_type(errors), 'array') <> 'array' THEN jsonb(json_array(json(errors), json(?)))
				ELSE jsonb(json_insert(json(coalesce(errors, jsonb('[]'))), '$[#]', json(?))) END,
			finalized_at = ?, scheduled_at = ?, state = ?
			WHERE id = ? AND state = 'running' AND attempt = ? AND json_extract(attempted_by, '$[#-1]') = ?`,
			msg, msg, msg, finalized, riverTime(p.At), string(state), j.ID, j.Attempt, j.Worker)
		if err != nil {
			return nil, fmt.Errorf("rescue job %d: %w", j.ID, sqlite.Translate(err))
		}
		if n, _ := res.RowsAffected(); n == 1 {
			rescued = append(rescued, j.ID)
		}
	}
	for _, id := range p.Dead {
		if _, err := tx.ExecContext(ctx, `DELETE FROM workers WHERE id = ?`, id); err != nil {
			return nil, fmt.Errorf("forget worker %s: %w", id, sqlite.Translate(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, sqlite.Translate(err)
	}
	return rescued, nil
}

// riverTime formats a time as River's SQLite driver stores it.
func riverTime(t time.Time) string {
	return t.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
}

func ptr[T any](v T) *T { return &v }
