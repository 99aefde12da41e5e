// Package pgdurable keeps the job queue's own records in a vault's
// PostgreSQL database: the workers table of package postgres's migration
// 0003, and the rescue's reads and resets of River's river_job rows, in
// the layout River's PostgreSQL migrations (riverpgxv5) give them: state
// is the enum river_job_state, attempted_by a text[], errors a jsonb[].
// River itself reaches its tables through its driver, not through this
// package. It is the PostgreSQL counterpart of sqlite/sqldurable.
package pgdurable

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river/rivertype"

	"cairn"
	"cairn/durable"
	"cairn/postgres"
)

// Storage keeps the workers, and resets River's jobs for a rescue, in a
// vault's database.
type Storage struct {
	db *postgres.DB
}

var _ durable.Storage = (*Storage)(nil)

// New returns the job queue's storage in db. Its reads and writes use
// db's pool, each write in a transaction of its own (not the store's, and
// without the vault's write lock: they touch no row the store's writes
// do).
func New(db *postgres.DB) *Storage { return &Storage{db: db} }

// PutWorker records w, replacing the record of the same id.
func (s *Storage) PutWorker(ctx context.Context, w durable.Worker) error {
	_, err := s.db.Q().Exec(ctx, `INSERT INTO workers (id, host, pid, proc, started, heartbeat) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, proc = excluded.proc,
			started = excluded.started, heartbeat = excluded.heartbeat`,
		w.ID, w.Host, int32(w.PID), w.Proc, w.Started.UnixNano(), w.Heartbeat.UnixNano())
	if err != nil {
		return fmt.Errorf("record worker %s: %w", w.ID, postgres.Translate(err))
	}
	return nil
}

// Beat records that worker id was alive at t.
func (s *Storage) Beat(ctx context.Context, id string, t time.Time) error {
	if _, err := s.db.Q().Exec(ctx, `UPDATE workers SET heartbeat = $1 WHERE id = $2`, t.UnixNano(), id); err != nil {
		return fmt.Errorf("record the heartbeat of worker %s: %w", id, postgres.Translate(err))
	}
	return nil
}

// RemoveWorker forgets worker id.
func (s *Storage) RemoveWorker(ctx context.Context, id string) error {
	if _, err := s.db.Q().Exec(ctx, `DELETE FROM workers WHERE id = $1`, id); err != nil {
		return fmt.Errorf("forget worker %s: %w", id, postgres.Translate(err))
	}
	return nil
}

// querier reads rows: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Workers returns every recorded worker.
func (s *Storage) Workers(ctx context.Context) ([]durable.Worker, error) {
	return workers(ctx, s.db.Q())
}

// workers reads every worker with q.
func workers(ctx context.Context, q querier) ([]durable.Worker, error) {
	rows, err := q.Query(ctx, `SELECT id, host, pid, proc, started, heartbeat FROM workers`)
	if err != nil {
		return nil, fmt.Errorf("read workers: %w", postgres.Translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (durable.Worker, error) {
		var w durable.Worker
		var pid int32
		var started, hb int64
		err := r.Scan(&w.ID, &w.Host, &pid, &w.Proc, &started, &hb)
		w.PID, w.Started, w.Heartbeat = int(pid), time.Unix(0, started), time.Unix(0, hb)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("read workers: %w", postgres.Translate(err))
	}
	return out, nil
}

// RunningJobs returns the jobs River has running; EINTERNAL for one whose
// attempted_by is not a list of worker ids.
func (s *Storage) RunningJobs(ctx context.Context) ([]durable.RunningJob, error) {
	return runningJobs(ctx, s.db.Q())
}

// runningJobs reads with q the jobs River has running.
func runningJobs(ctx context.Context, q querier) ([]durable.RunningJob, error) {
	rows, err := q.Query(ctx, `SELECT id, attempted_by, attempt, max_attempts FROM river_job WHERE state = 'running'`)
	if err != nil {
		return nil, fmt.Errorf("read running jobs: %w", postgres.Translate(err))
	}
	defer rows.Close()
	var out []durable.RunningJob
	for rows.Next() {
		var j durable.RunningJob
		var by pgtype.Array[pgtype.Text]
		var attempt, maxAttempts int16
		if err := rows.Scan(&j.ID, &by, &attempt, &maxAttempts); err != nil {
			return nil, fmt.Errorf("read running jobs: %w", postgres.Translate(err))
		}
		j.Attempt, j.MaxAttempts = int(attempt), int(maxAttempts)
		// A list of worker ids is one-dimensional, without NULLs.
		if len(by.Dims) > 1 {
			return nil, damaged(j.ID, fmt.Errorf("it has %d dimensions", len(by.Dims)))
		}
		for i, e := range by.Elements {
			if !e.Valid {
				return nil, damaged(j.ID, fmt.Errorf("element %d is NULL", i+1))
			}
		}
		if n := len(by.Elements); n > 0 {
			j.Worker = by.Elements[n-1].String
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read running jobs: %w", postgres.Translate(err))
	}
	return out, nil
}

// damaged is the error for a running job whose attempted_by is not a list
// of worker ids.
func damaged(id int64, err error) error {
	return cairn.Errorf(cairn.EINTERNAL, "job %d: its attempted_by is not a list of worker ids: %w", id, err).
		WithHint("The job queue's table is damaged: cairn doctor checks the vault.")
}

// Rescue reads the workers and running jobs, asks decide for a plan and
// carries it out, in one transaction. A job is reset only while it is
// still running under the attempt and the worker it was decided for: a
// rescue racing another, or a worker that took the job meanwhile, finds
// the row changed once the other's row lock is released, and leaves it.
func (s *Storage) Rescue(ctx context.Context, decide func([]durable.Worker, []durable.RunningJob) (*durable.Plan, error)) ([]int64, error) {
	tx, err := s.db.Q().Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("rescue: %w", postgres.Translate(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	ws, err := workers(ctx, tx)
	if err != nil {
		return nil, err
	}
	js, err := runningJobs(ctx, tx)
	if err != nil {
		return nil, err
	}
	p, err := decide(ws, js)
	if err != nil {
		return nil, err
	}
	at := p.At.UTC()
	var rescued []int64
	for _, j := range p.Jobs {
		state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
		if j.Discard {
			state, finalized = rivertype.JobStateDiscarded, &at
		}
		msg, err := json.Marshal(rivertype.AttemptError{At: p.At, Attempt: j.Attempt, Error: j.Error})
		if err != nil {
			return nil, fmt.Errorf("rescue job %d: %w", j.ID, err)
		}
		// The error is appended as River appends a rescue's (JobRescueMany).
		tag, err := tx.Exec(ctx, `UPDATE river_job SET
			errors = array_append(errors, $1::jsonb),
			finalized_at = $2, scheduled_at = $3, state = $4::text::river_job_state
			WHERE id = $5 AND state = 'running' AND attempt = $6 AND attempted_by[array_upper(attempted_by, 1)] = $7`,
			string(msg), finalized, at, string(state), j.ID, int16(j.Attempt), j.Worker)
		if err != nil {
			return nil, fmt.Errorf("rescue job %d: %w", j.ID, postgres.Translate(err))
		}
		if tag.RowsAffected() == 1 {
			rescued = append(rescued, j.ID)
		}
	}
	if len(p.Dead) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM workers WHERE id = ANY($1)`, p.Dead); err != nil {
			return nil, fmt.Errorf("forget workers %v: %w", p.Dead, postgres.Translate(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("rescue: %w", postgres.Translate(err))
	}
	return rescued, nil
}
