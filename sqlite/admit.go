package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cairn"
	"cairn/admit"
)

// AdmitStorage keeps admission's records in a vault's database: the
// tables proposals, audit and events of migration 0004.
type AdmitStorage struct {
	db *DB
}

var _ admit.Storage = (*AdmitStorage)(nil)

// NewAdmitStorage returns admission's storage in db. Its reads use db's
// read-only pool; its writes run in the transactions of db.Update they are
// given.
func NewAdmitStorage(db *DB) *AdmitStorage { return &AdmitStorage{db: db} }

const proposalColumns = `id, key, route, branch, base, tree, proposal, result, principal, origin, status, verdict,
	findings, summary, message, log, source, job, error, created, decided, decided_by, reason`

// scanProposal reads a row of proposalColumns; findings and the log entry
// are JSON.
func scanProposal(sc interface{ Scan(...any) error }) (*cairn.Proposal, error) {
	var p cairn.Proposal
	var base, tree, prop, result []byte
	var principal, verdict, findings, logEntry string
	var source, decidedBy sql.NullString
	var job, decided sql.NullInt64
	var created int64
	if err := sc.Scan(&p.ID, &p.Key, &p.Route, &p.Branch, &base, &tree, &prop, &result, &principal, &p.Origin, &p.Status,
		&verdict, &findings, &p.Summary, &p.Message, &logEntry, &source, &job, &p.Error, &created, &decided, &decidedBy, &p.Reason); err != nil {
		return nil, err
	}
	copy(p.Base[:], base)
	copy(p.Tree[:], tree)
	copy(p.Commit[:], prop)
	copy(p.Result[:], result)
	p.Principal, p.Verdict = cairn.Principal(principal), cairn.Verdict(verdict)
	if err := json.Unmarshal([]byte(findings), &p.Findings); err != nil {
		return nil, fmt.Errorf("proposal %d: findings: %w", p.ID, err)
	}
	if logEntry != "" {
		p.Log = &cairn.LogEntry{}
		if err := json.Unmarshal([]byte(logEntry), p.Log); err != nil {
			return nil, fmt.Errorf("proposal %d: log entry: %w", p.ID, err)
		}
	}
	p.Source, p.Job = source.String, job.Int64
	p.Created = time.Unix(0, created)
	if decided.Valid {
		p.Decided = time.Unix(0, decided.Int64)
	}
	p.DecidedBy = cairn.Principal(decidedBy.String)
	return &p, nil
}

// oneProposal reads one proposal; a missing one is ENOTFOUND.
func oneProposal(row *sql.Row, id int64) (*cairn.Proposal, error) {
	p, err := scanProposal(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no proposal %d", id)
	}
	if err != nil {
		return nil, translate(err)
	}
	return p, nil
}

// Proposal returns proposal id; ENOTFOUND when there is none.
func (s *AdmitStorage) Proposal(ctx context.Context, id int64) (*cairn.Proposal, error) {
	return oneProposal(s.db.rq.QueryRowContext(ctx, `SELECT `+proposalColumns+` FROM proposals WHERE id = ?`, id), id)
}

// ProposalIn returns proposal id inside tx; ENOTFOUND when there is none.
func (s *AdmitStorage) ProposalIn(ctx context.Context, tx cairn.Tx, id int64) (*cairn.Proposal, error) {
	q, err := asSQLTx(tx)
	if err != nil {
		return nil, err
	}
	return oneProposal(q.QueryRowContext(ctx, `SELECT `+proposalColumns+` FROM proposals WHERE id = ?`, id), id)
}

// Proposals returns the proposals with status ("" for all), newest first,
// at most limit.
func (s *AdmitStorage) Proposals(ctx context.Context, status string, limit int) ([]*cairn.Proposal, error) {
	query := `SELECT ` + proposalColumns + ` FROM proposals`
	var args []any
	if status != "" {
		query += ` WHERE status = ?`
		args = append(args, status)
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit)
	rows, err := s.db.rq.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []*cairn.Proposal
	for rows.Next() {
		p, err := scanProposal(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, p)
	}
	return out, translate(rows.Err())
}

// proposalOfKey reads the id of the proposal submitted with key; ENOTFOUND
// when none was.
func proposalOfKey(row *sql.Row, key string) (int64, error) {
	var id int64
	err := row.Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, cairn.Errorf(cairn.ENOTFOUND, "no proposal was submitted as %s", key)
	}
	return id, translate(err)
}

// ProposalOfKey returns the id of the proposal submitted with key;
// ENOTFOUND when none was.
func (s *AdmitStorage) ProposalOfKey(ctx context.Context, key string) (int64, error) {
	return proposalOfKey(s.db.rq.QueryRowContext(ctx, `SELECT id FROM proposals WHERE key = ?`, key), key)
}

// ProposalOfKeyIn returns, inside tx, the id of the proposal submitted with
// key; ENOTFOUND when none was.
func (s *AdmitStorage) ProposalOfKeyIn(ctx context.Context, tx cairn.Tx, key string) (int64, error) {
	q, err := asSQLTx(tx)
	if err != nil {
		return 0, err
	}
	return proposalOfKey(q.QueryRowContext(ctx, `SELECT id FROM proposals WHERE key = ?`, key), key)
}

// AddProposal records p inside tx and returns its id; ECONFLICT when a
// proposal has p.Key already.
func (s *AdmitStorage) AddProposal(ctx context.Context, tx cairn.Tx, p *cairn.Proposal) (int64, error) {
	q, err := asSQLTx(tx)
	if err != nil {
		return 0, err
	}
	var id int64
	err = q.QueryRowContext(ctx, `INSERT INTO proposals (key, route, branch, base, tree, proposal, result, principal, origin, status, verdict,
		findings, summary, message, log, source, job, error, created, decided, decided_by, reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		p.Key, p.Route, p.Branch, nullHash(p.Base), p.Tree[:], nullHash(p.Commit), nullHash(p.Result), string(p.Principal), p.Origin,
		p.Status, string(p.Verdict), admit.FindingsJSON(p.Findings), p.Summary, p.Message, admit.LogJSON(p.Log), nullString(p.Source),
		nullInt(p.Job), p.Error, p.Created.UnixNano(), nullTime(p.Decided), nullString(string(p.DecidedBy)), p.Reason).Scan(&id)
	if isUnique(err) {
		return 0, cairn.Errorf(cairn.ECONFLICT, "a proposal was submitted as %s already", p.Key)
	}
	return id, translate(err)
}

// DecideProposal records the decision p holds inside tx; ENOTFOUND when
// there is no proposal p.ID.
func (s *AdmitStorage) DecideProposal(ctx context.Context, tx cairn.Tx, p *cairn.Proposal) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, `UPDATE proposals SET status = ?, verdict = ?, findings = ?, proposal = ?, result = ?,
		decided = ?, decided_by = ?, reason = ?, error = ? WHERE id = ?`,
		p.Status, string(p.Verdict), admit.FindingsJSON(p.Findings), nullHash(p.Commit), nullHash(p.Result),
		nullTime(p.Decided), nullString(string(p.DecidedBy)), p.Reason, p.Error, p.ID)
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return cairn.Errorf(cairn.ENOTFOUND, "there is no proposal %d", p.ID)
	}
	return nil
}

// SetProposalError records inside tx why the last decision of proposal id
// failed; it does nothing when there is no such proposal.
func (s *AdmitStorage) SetProposalError(ctx context.Context, tx cairn.Tx, id int64, msg string) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `UPDATE proposals SET error = ? WHERE id = ?`, msg, id)
	return translate(err)
}

// AddAudit records an audit row inside tx.
func (s *AdmitStorage) AddAudit(ctx context.Context, tx cairn.Tx, a admit.AuditRow) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO audit (time, principal, action, proposal, branch, commit_hash, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.Time.UnixNano(), string(a.Principal), a.Action, nullInt(a.Proposal), a.Branch, nullHash(a.Commit), string(a.Detail))
	return translate(err)
}

// AddEvent records an event inside tx.
func (s *AdmitStorage) AddEvent(ctx context.Context, tx cairn.Tx, e admit.EventRow) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	data := string(e.Data)
	if data == "" {
		data = "{}"
	}
	_, err = q.ExecContext(ctx, `INSERT INTO events (time, kind, subject, data) VALUES (?, ?, ?, ?)`,
		e.Time.UnixNano(), e.Kind, e.Subject, data)
	return translate(err)
}

// Events returns the events after the one numbered after, oldest first, at
// most limit.
func (s *AdmitStorage) Events(ctx context.Context, after int64, limit int) ([]admit.EventRow, error) {
	rows, err := s.db.rq.QueryContext(ctx, `SELECT id, time, kind, subject, data FROM events WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, translate(err)
	}
	return scanEvents(rows)
}

// scanEvents reads rows of events and closes them.
func scanEvents(rows *sql.Rows) ([]admit.EventRow, error) {
	defer rows.Close()
	var out []admit.EventRow
	for rows.Next() {
		var e admit.EventRow
		var t int64
		var data string
		if err := rows.Scan(&e.ID, &t, &e.Kind, &e.Subject, &data); err != nil {
			return nil, translate(err)
		}
		e.Time, e.Data = time.Unix(0, t), json.RawMessage(data)
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// EventsAbout returns the events about subject after the one numbered
// after, oldest first, at most limit.
func (s *AdmitStorage) EventsAbout(ctx context.Context, subject string, after int64, limit int) ([]admit.EventRow, error) {
	rows, err := s.db.rq.QueryContext(ctx, `SELECT id, time, kind, subject, data FROM events WHERE subject = ? AND id > ? ORDER BY id LIMIT ?`, subject, after, limit)
	if err != nil {
		return nil, translate(err)
	}
	return scanEvents(rows)
}

// LastEvent returns the number of the newest event, 0 when there is none.
func (s *AdmitStorage) LastEvent(ctx context.Context) (int64, error) {
	var id int64
	err := s.db.rq.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&id)
	return id, translate(err)
}

func nullInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}
