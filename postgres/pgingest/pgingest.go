// Package pgingest keeps the records of a vault's sources in its
// PostgreSQL database: the tables sources and source_history of package
// postgres's migration 0003. It implements ingest.Storage beside package
// postgres, not in it, because package ingest imports vault, which wires
// postgres in; it is the PostgreSQL counterpart of sqlite/sqlingest.
package pgingest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/ingest"
	"cairn/postgres"
)

// Storage keeps the sources and their histories in a vault's database.
type Storage struct {
	db *postgres.DB
}

var _ ingest.Storage = (*Storage)(nil)

// New returns the sources' storage in db. Its reads use db's pool; its
// writes run in the transactions of db.Update they are given.
func New(db *postgres.DB) *Storage { return &Storage{db: db} }

// querier is what a read runs on: the pool or a write transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const columns = `id, name, path, size, status, coalesce(job, 0), attempt, coalesce(proposal, 0), error, hint, created, updated`

// scan reads a row of columns.
func scan(row pgx.Row) (*ingest.Source, error) {
	var s ingest.Source
	var created, updated int64
	if err := row.Scan(&s.ID, &s.Name, &s.Path, &s.Size, &s.Status, &s.Job, &s.Attempt, &s.Proposal, &s.Error, &s.Hint, &created, &updated); err != nil {
		return nil, err
	}
	s.Created, s.Updated = time.Unix(0, created), time.Unix(0, updated)
	return &s, nil
}

// one reads one source, named by which; a missing one is ENOTFOUND,
// "no source " followed by missing.
func one(row pgx.Row, which, missing string) (*ingest.Source, error) {
	s, err := scan(row)
	if err != nil {
		err = postgres.Translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "no source %s", missing)
		}
		return nil, fmt.Errorf("read %s: %w", which, err)
	}
	return s, nil
}

// many reads the sources a query returns.
func many(ctx context.Context, q querier, query string, args ...any) ([]*ingest.Source, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", postgres.Translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*ingest.Source, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", postgres.Translate(err))
	}
	return out, nil
}

// byID reads with q the source with the full id.
func byID(ctx context.Context, q querier, id string) (*ingest.Source, error) {
	return one(q.QueryRow(ctx, `SELECT `+columns+` FROM sources WHERE id = $1`, id),
		fmt.Sprintf("source %.12s", id), fmt.Sprintf("%.12s is recorded", id))
}

// byJob reads with q the source recorded under job.
func byJob(ctx context.Context, q querier, job int64) (*ingest.Source, error) {
	return one(q.QueryRow(ctx, `SELECT `+columns+` FROM sources WHERE job = $1`, job),
		fmt.Sprintf("the source of job %d", job), fmt.Sprintf("is ingested by job %d", job))
}

// Source returns the source with the full id; ENOTFOUND when there is none.
func (s *Storage) Source(ctx context.Context, id string) (*ingest.Source, error) {
	return byID(ctx, s.db.Q(), id)
}

// SourceTx returns, inside tx, the source with the full id; ENOTFOUND when
// there is none.
func (s *Storage) SourceTx(ctx context.Context, tx cairn.Tx, id string) (*ingest.Source, error) {
	q, err := postgres.PgxTx(tx)
	if err != nil {
		return nil, err
	}
	return byID(ctx, q, id)
}

// SourceOfJob returns the source recorded under job; ENOTFOUND when there
// is none.
func (s *Storage) SourceOfJob(ctx context.Context, job int64) (*ingest.Source, error) {
	return byJob(ctx, s.db.Q(), job)
}

// SourceOfJobTx returns, inside tx, the source recorded under job;
// ENOTFOUND when there is none.
func (s *Storage) SourceOfJobTx(ctx context.Context, tx cairn.Tx, job int64) (*ingest.Source, error) {
	q, err := postgres.PgxTx(tx)
	if err != nil {
		return nil, err
	}
	return byJob(ctx, q, job)
}

// limit is a LIMIT as SQLite reads it: a negative limit is none.
func limit(n int) *int {
	if n < 0 {
		return nil
	}
	return &n
}

// SourcesWithPrefix returns at most n sources whose id starts with
// prefix, by id. The ids are lower-case hex and sort by their bytes, so
// every id with the prefix sorts at or after it and before the prefix
// followed by "g".
func (s *Storage) SourcesWithPrefix(ctx context.Context, prefix string, n int) ([]*ingest.Source, error) {
	return many(ctx, s.db.Q(), `SELECT `+columns+` FROM sources WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3`,
		prefix, prefix+"g", limit(n))
}

// SourcesNamed returns at most n sources whose name or path is name,
// newest first.
func (s *Storage) SourcesNamed(ctx context.Context, name string, n int) ([]*ingest.Source, error) {
	return many(ctx, s.db.Q(), `SELECT `+columns+` FROM sources WHERE name = $1 OR path = $1 ORDER BY created DESC LIMIT $2`,
		name, limit(n))
}

// Sources returns limit of the sources of a status ("" for all) from the
// off-th on (limit 0: all), newest first, then by name.
func (s *Storage) Sources(ctx context.Context, status string, off, n int) ([]*ingest.Source, error) {
	var lim *int // NULL: no limit
	if n > 0 {
		lim = &n
	}
	return many(ctx, s.db.Q(), `SELECT `+columns+` FROM sources WHERE $1 = '' OR status = $1
		ORDER BY created DESC, name LIMIT $2 OFFSET $3`, status, lim, max(off, 0))
}

// CountSources counts the sources of a status ("" for all).
func (s *Storage) CountSources(ctx context.Context, status string) (int, error) {
	var n int
	if err := s.db.Q().QueryRow(ctx, `SELECT count(*) FROM sources WHERE $1 = '' OR status = $1`, status).Scan(&n); err != nil {
		return 0, fmt.Errorf("count sources: %w", postgres.Translate(err))
	}
	return n, nil
}

// History returns the history of source id, oldest first.
func (s *Storage) History(ctx context.Context, id string) ([]ingest.Step, error) {
	rows, err := s.db.Q().Query(ctx, `SELECT time, status, principal, detail FROM source_history WHERE source = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("read the history of source %.12s: %w", id, postgres.Translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ingest.Step, error) {
		var st ingest.Step
		var t int64
		var p string
		err := r.Scan(&t, &st.Status, &p, &st.Detail)
		st.Time, st.Principal = time.Unix(0, t), cairn.Principal(p)
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the history of source %.12s: %w", id, postgres.Translate(err))
	}
	return out, nil
}

// PutSource records src inside tx, replacing the record of the same id
// but for its creation time, and adds step to its history.
func (s *Storage) PutSource(ctx context.Context, tx cairn.Tx, src *ingest.Source, step ingest.Step) error {
	q, err := postgres.PgxTx(tx)
	if err != nil {
		return err
	}
	now := step.Time.UnixNano()
	_, err = q.Exec(ctx, `INSERT INTO sources (id, name, path, size, status, job, attempt, proposal, error, hint, created, updated)
		VALUES ($1, $2, $3, $4, $5, $6, 0, NULL, $7, $8, $9, $9)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, path = excluded.path, size = excluded.size,
			status = excluded.status, job = excluded.job, attempt = 0, proposal = NULL,
			error = excluded.error, hint = excluded.hint, updated = excluded.updated`,
		src.ID, src.Name, src.Path, src.Size, src.Status, nullInt(src.Job), src.Error, src.Hint, now)
	if err != nil {
		return fmt.Errorf("record source %.12s: %w", src.ID, postgres.Translate(err))
	}
	if err := addStep(ctx, q, src.ID, step); err != nil {
		return fmt.Errorf("record source %.12s: %w", src.ID, err)
	}
	return nil
}

// SetStatus changes the status of source id inside tx and adds c.Step to
// its history; ENOTFOUND when there is no such source.
func (s *Storage) SetStatus(ctx context.Context, tx cairn.Tx, id string, c ingest.StatusChange) error {
	q, err := postgres.PgxTx(tx)
	if err != nil {
		return err
	}
	var set strings.Builder
	set.WriteString(`UPDATE sources SET status = $1, updated = $2, error = $3, hint = $4`)
	args := []any{c.Status, c.Time.UnixNano(), c.Error, c.Hint}
	for _, f := range []struct {
		col string
		v   int64
	}{{"job", c.Job}, {"attempt", c.Attempt}, {"proposal", c.Proposal}} {
		if f.v != 0 {
			args = append(args, f.v)
			set.WriteString(", " + f.col + " = $" + strconv.Itoa(len(args)))
		}
	}
	args = append(args, id)
	set.WriteString(` WHERE id = $` + strconv.Itoa(len(args)))
	tag, err := q.Exec(ctx, set.String(), args...)
	if err != nil {
		return fmt.Errorf("change the status of source %.12s: %w", id, postgres.Translate(err))
	}
	if tag.RowsAffected() == 0 {
		return cairn.Errorf(cairn.ENOTFOUND, "no source %.12s is recorded", id)
	}
	if err := addStep(ctx, q, id, c.Step); err != nil {
		return fmt.Errorf("change the status of source %.12s: %w", id, err)
	}
	return nil
}

// addStep adds step to the end of source id's history. The transaction
// holds the vault's write lock, so no other writer numbers a step of the
// source at once.
func addStep(ctx context.Context, q pgx.Tx, id string, step ingest.Step) error {
	_, err := q.Exec(ctx, `INSERT INTO source_history (source, seq, time, status, principal, detail)
		VALUES ($1, (SELECT coalesce(max(seq), 0) + 1 FROM source_history WHERE source = $1), $2, $3, $4, $5)`,
		id, step.Time.UnixNano(), step.Status, string(step.Principal), step.Detail)
	return postgres.Translate(err)
}

// nullInt stores zero as NULL.
func nullInt(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}
