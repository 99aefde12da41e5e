// Package sqlingest keeps the records of a vault's sources in its SQLite
// database: the tables sources and source_history of migration 0004. It
// implements ingest.Storage beside package sqlite, not in it, because
// package ingest imports vault, which imports sqlite.
package sqlingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"cairn"
	"cairn/ingest"
	"cairn/sqlite"
)

// Storage keeps the sources and their histories in a vault's database.
type Storage struct {
	db *sqlite.DB
}

var _ ingest.Storage = (*Storage)(nil)

// New returns the sources' storage in db. Its reads use db's read-only
// pool; its writes run in the transactions of db.Update they are given.
func New(db *sqlite.DB) *Storage { return &Storage{db: db} }

// querier is what a read runs on: the read pool or a write transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const columns = `id, name, path, size, status, coalesce(job, 0), attempt, coalesce(proposal, 0), error, hint, created, updated`

func scan(sc interface{ Scan(...any) error }) (*ingest.Source, error) {
	var s ingest.Source
	var created, updated int64
	if err := sc.Scan(&s.ID, &s.Name, &s.Path, &s.Size, &s.Status, &s.Job, &s.Attempt, &s.Proposal, &s.Error, &s.Hint, &created, &updated); err != nil {
		return nil, err
	}
	s.Created, s.Updated = time.Unix(0, created), time.Unix(0, updated)
	return &s, nil
}

// one reads one source; a missing one is ENOTFOUND, named by what.
func one(row *sql.Row, what string) (*ingest.Source, error) {
	s, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "no source %s", what)
	}
	return s, sqlite.Translate(err)
}

// many reads the sources a query returns.
func many(ctx context.Context, q querier, query string, args ...any) ([]*ingest.Source, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, sqlite.Translate(err)
	}
	defer rows.Close()
	var out []*ingest.Source
	for rows.Next() {
		s, err := scan(rows)
		if err != nil {
			return nil, sqlite.Translate(err)
		}
		out = append(out, s)
	}
	return out, sqlite.Translate(rows.Err())
}

func byID(ctx context.Context, q querier, id string) (*ingest.Source, error) {
	return one(q.QueryRowContext(ctx, `SELECT `+columns+` FROM sources WHERE id = ?`, id), fmt.Sprintf("%.12s is recorded", id))
}

func byJob(ctx context.Context, q querier, job int64) (*ingest.Source, error) {
	return one(q.QueryRowContext(ctx, `SELECT `+columns+` FROM sources WHERE job = ?`, job), fmt.Sprintf("is ingested by job %d", job))
}

// Source returns the source with the full id; ENOTFOUND when there is none.
func (s *Storage) Source(ctx context.Context, id string) (*ingest.Source, error) {
	return byID(ctx, s.db.Read(), id)
}

// SourceTx returns, inside tx, the source with the full id; ENOTFOUND when
// there is none.
func (s *Storage) SourceTx(ctx context.Context, tx cairn.Tx, id string) (*ingest.Source, error) {
	q, err := sqlite.SQLTx(tx)
	if err != nil {
		return nil, err
	}
	return byID(ctx, q, id)
}

// SourceOfJob returns the source recorded under job; ENOTFOUND when there
// is none.
func (s *Storage) SourceOfJob(ctx context.Context, job int64) (*ingest.Source, error) {
	return byJob(ctx, s.db.Read(), job)
}

// SourceOfJobTx returns, inside tx, the source recorded under job;
// ENOTFOUND when there is none.
func (s *Storage) SourceOfJobTx(ctx context.Context, tx cairn.Tx, job int64) (*ingest.Source, error) {
	q, err := sqlite.SQLTx(tx)
	if err != nil {
		return nil, err
	}
	return byJob(ctx, q, job)
}

// SourcesWithPrefix returns at most limit sources whose id starts with
// prefix, by id. The ids are lower-case hex, so every id with the prefix
// sorts at or after it and before the prefix followed by "g".
func (s *Storage) SourcesWithPrefix(ctx context.Context, prefix string, limit int) ([]*ingest.Source, error) {
	return many(ctx, s.db.Read(), `SELECT `+columns+` FROM sources WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`,
		prefix, prefix+"g", limit)
}

// SourcesNamed returns at most limit sources whose name or path is name,
// newest first.
func (s *Storage) SourcesNamed(ctx context.Context, name string, limit int) ([]*ingest.Source, error) {
	return many(ctx, s.db.Read(), `SELECT `+columns+` FROM sources WHERE name = ? OR path = ? ORDER BY created DESC LIMIT ?`,
		name, name, limit)
}

// Sources returns limit of the sources of a status ("" for all) from the
// off-th on (limit 0: all), newest first, then by name.
func (s *Storage) Sources(ctx context.Context, status string, off, limit int) ([]*ingest.Source, error) {
	query := `SELECT ` + columns + ` FROM sources`
	var args []any
	if status != "" {
		query += ` WHERE status = ?`
		args = append(args, status)
	}
	if limit <= 0 {
		limit = -1 // no limit
	}
	return many(ctx, s.db.Read(), query+` ORDER BY created DESC, name LIMIT ? OFFSET ?`, append(args, limit, max(off, 0))...)
}

// CountSources counts the sources of a status ("" for all).
func (s *Storage) CountSources(ctx context.Context, status string) (int, error) {
	var n int
	err := s.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM sources WHERE ? = '' OR status = ?`, status, status).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count sources: %w", sqlite.Translate(err))
	}
	return n, nil
}

// History returns the history of source id, oldest first.
func (s *Storage) History(ctx context.Context, id string) ([]ingest.Step, error) {
	rows, err := s.db.Read().QueryContext(ctx, `SELECT time, status, principal, detail FROM source_history WHERE source = ? ORDER BY seq`, id)
	if err != nil {
		return nil, sqlite.Translate(err)
	}
	defer rows.Close()
	var out []ingest.Step
	for rows.Next() {
		var st ingest.Step
		var t int64
		var p string
		if err := rows.Scan(&t, &st.Status, &p, &st.Detail); err != nil {
			return nil, sqlite.Translate(err)
		}
		st.Time, st.Principal = time.Unix(0, t), cairn.Principal(p)
		out = append(out, st)
	}
	return out, sqlite.Translate(rows.Err())
}

// PutSource records src inside tx, replacing the record of the same id
// but for its creation time, and adds step to its history.
func (s *Storage) PutSource(ctx context.Context, tx cairn.Tx, src *ingest.Source, step ingest.Step) error {
	q, err := sqlite.SQLTx(tx)
	if err != nil {
		return err
	}
	now := step.Time.UnixNano()
	_, err = q.ExecContext(ctx, `INSERT INTO sources (id, name, path, size, status, job, attempt, proposal, error, hint, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, path = excluded.path, size = excluded.size,
			status = excluded.status, job = excluded.job, attempt = 0, proposal = NULL,
			error = excluded.error, hint = excluded.hint, updated = excluded.updated`,
		src.ID, src.Name, src.Path, src.Size, src.Status, nullInt(src.Job), src.Error, src.Hint, now, now)
	if err != nil {
		return sqlite.Translate(err)
	}
	return addStep(ctx, q, src.ID, step)
}

// SetStatus changes the status of source id inside tx and adds c.Step to
// its history; ENOTFOUND when there is no such source.
func (s *Storage) SetStatus(ctx context.Context, tx cairn.Tx, id string, c ingest.StatusChange) error {
	q, err := sqlite.SQLTx(tx)
	if err != nil {
		return err
	}
	var set strings.Builder
	set.WriteString(`UPDATE sources SET status = ?, updated = ?, error = ?, hint = ?`)
	args := []any{c.Status, c.Time.UnixNano(), c.Error, c.Hint}
	for _, f := range []struct {
		col string
		v   int64
	}{{"job", c.Job}, {"attempt", c.Attempt}, {"proposal", c.Proposal}} {
		if f.v != 0 {
			set.WriteString(", " + f.col + " = ?")
			args = append(args, f.v)
		}
	}
	set.WriteString(` WHERE id = ?`)
	res, err := q.ExecContext(ctx, set.String(), append(args, id)...)
	if err != nil {
		return sqlite.Translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return sqlite.Translate(err)
	} else if n == 0 {
		return cairn.Errorf(cairn.ENOTFOUND, "no source %.12s is recorded", id)
	}
	return addStep(ctx, q, id, c.Step)
}

// addStep adds step to the end of source id's history.
func addStep(ctx context.Context, q *sql.Tx, id string, step ingest.Step) error {
	_, err := q.ExecContext(ctx, `INSERT INTO source_history (source, seq, time, status, principal, detail)
		VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM source_history WHERE source = ?), ?, ?, ?, ?)`,
		id, id, step.Time.UnixNano(), step.Status, string(step.Principal), step.Detail)
	return sqlite.Translate(err)
}

// nullInt stores zero as NULL.
func nullInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
