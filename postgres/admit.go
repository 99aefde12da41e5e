package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/admit"
)

// AdmitStorage keeps admission's records in a vault's database: the
// tables proposals and audit of migration 0003 and the events of 0001.
type AdmitStorage struct {
	db *DB
}

var _ admit.Storage = (*AdmitStorage)(nil)

// NewAdmitStorage returns admission's storage in db. Its reads use db's
// pool; its writes run in the transactions of db.Update they are given.
func NewAdmitStorage(db *DB) *AdmitStorage { return &AdmitStorage{db: db} }

const proposalColumns = `id, key, route, branch, base, tree, proposal, result, principal, origin, status, verdict,
	findings, summary, message, log, source, job, error, created, decided, decided_by, reason`

// scanProposal reads a row of proposalColumns; findings and the log entry
// are JSON.
func scanProposal(row pgx.Row) (*cairn.Proposal, error) {
	var p cairn.Proposal
	var key, route, branch, principal, origin, status, verdict, findings, summary, message, logEntry, errMsg, reason string
	var base, tree, prop, result []byte
	var source, decidedBy *string
	var job, decided *int64
	var created int64
	if err := row.Scan(&p.ID, &key, &route, &branch, &base, &tree, &prop, &result, &principal, &origin, &status,
		&verdict, &findings, &summary, &message, &logEntry, &source, &job, &errMsg, &created, &decided, &decidedBy, &reason); err != nil {
		return nil, err
	}
	p.Key, p.Route, p.Branch, p.Origin, p.Status = key, route, branch, origin, status
	p.Summary, p.Message, p.Error, p.Reason = summary, message, errMsg, reason
	copy(p.Base[:], base)
	copy(p.Tree[:], tree)
	copy(p.Commit[:], prop)
	copy(p.Result[:], result)
	p.Principal, p.Verdict = cairn.Principal(principal), cairn.Verdict(verdict)
	if err := json.Unmarshal([]byte(findings), &p.Findings); err != nil {
		return nil, cairn.Errorf(cairn.EINTERNAL, "proposal %d: findings: %w", p.ID, err)
	}
	if logEntry != "" {
		p.Log = &cairn.LogEntry{}
		if err := json.Unmarshal([]byte(logEntry), p.Log); err != nil {
			return nil, cairn.Errorf(cairn.EINTERNAL, "proposal %d: log entry: %w", p.ID, err)
		}
	}
	if source != nil {
		p.Source = *source
	}
	if job != nil {
		p.Job = *job
	}
	p.Created = time.Unix(0, created)
	if decided != nil {
		p.Decided = time.Unix(0, *decided)
	}
	if decidedBy != nil {
		p.DecidedBy = cairn.Principal(*decidedBy)
	}
	return &p, nil
}

// oneProposal reads proposal id with q; a missing one is ENOTFOUND.
func (s *AdmitStorage) oneProposal(ctx context.Context, q queryer, id int64) (*cairn.Proposal, error) {
	p, err := scanProposal(q.QueryRow(ctx, `SELECT `+proposalColumns+` FROM proposals WHERE id = $1`, id))
	if err != nil {
		err = s.db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no proposal %d", id)
		}
		return nil, fmt.Errorf("read proposal %d: %w", id, err)
	}
	return p, nil
}

// Proposal returns proposal id; ENOTFOUND when there is none.
func (s *AdmitStorage) Proposal(ctx context.Context, id int64) (*cairn.Proposal, error) {
	return s.oneProposal(ctx, s.db.pool, id)
}

// ProposalIn returns proposal id inside tx; ENOTFOUND when there is none.
func (s *AdmitStorage) ProposalIn(ctx context.Context, tx cairn.Tx, id int64) (*cairn.Proposal, error) {
	q, err := PgxTx(tx)
	if err != nil {
		return nil, err
	}
	return s.oneProposal(ctx, q, id)
}

// Proposals returns the proposals with status ("" for all), newest first,
// at most limit.
func (s *AdmitStorage) Proposals(ctx context.Context, status string, limit int) ([]*cairn.Proposal, error) {
	query := `SELECT ` + proposalColumns + ` FROM proposals`
	args := []any{}
	if status != "" {
		query += ` WHERE status = $1`
		args = append(args, status)
	}
	query += ` ORDER BY id DESC LIMIT $` + strconv.Itoa(len(args)+1)
	args = append(args, limitArg(limit))
	rows, err := s.db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", s.db.translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*cairn.Proposal, error) { return scanProposal(r) })
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", s.db.translate(err))
	}
	return out, nil
}

// limitArg is a LIMIT as SQLite reads it: a negative limit is none.
func limitArg(limit int) *int {
	if limit < 0 {
		return nil
	}
	return &limit
}

// proposalOfKey reads with q the id of the proposal submitted with key;
// ENOTFOUND when none was.
func (s *AdmitStorage) proposalOfKey(ctx context.Context, q queryer, key string) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, `SELECT id FROM proposals WHERE key = $1`, key).Scan(&id)
	if err != nil {
		err = s.db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return 0, cairn.Errorf(cairn.ENOTFOUND, "no proposal was submitted as %s", key)
		}
		return 0, fmt.Errorf("read the proposal submitted as %s: %w", key, err)
	}
	return id, nil
}

// ProposalOfKey returns the id of the proposal submitted with key;
// ENOTFOUND when none was.
func (s *AdmitStorage) ProposalOfKey(ctx context.Context, key string) (int64, error) {
	return s.proposalOfKey(ctx, s.db.pool, key)
}

// ProposalOfKeyIn returns, inside tx, the id of the proposal submitted with
// key; ENOTFOUND when none was.
func (s *AdmitStorage) ProposalOfKeyIn(ctx context.Context, tx cairn.Tx, key string) (int64, error) {
	q, err := PgxTx(tx)
	if err != nil {
		return 0, err
	}
	return s.proposalOfKey(ctx, q, key)
}

// AddProposal records p inside tx and returns its id; ECONFLICT when a
// proposal has p.Key already, and tx goes on.
func (s *AdmitStorage) AddProposal(ctx context.Context, tx cairn.Tx, p *cairn.Proposal) (int64, error) {
	q, err := PgxTx(tx)
	if err != nil {
		return 0, err
	}
	var id int64
	err = q.QueryRow(ctx, `INSERT INTO proposals (key, route, branch, base, tree, proposal, result, principal, origin, status, verdict,
		findings, summary, message, log, source, job, error, created, decided, decided_by, reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
		ON CONFLICT (key) DO NOTHING RETURNING id`,
		p.Key, p.Route, p.Branch, nullHash(p.Base), p.Tree[:], nullHash(p.Commit), nullHash(p.Result), string(p.Principal), p.Origin,
		p.Status, string(p.Verdict), admit.FindingsJSON(p.Findings), p.Summary, p.Message, admit.LogJSON(p.Log), stringOrNull(p.Source),
		int64OrNull(p.Job), p.Error, p.Created.UnixNano(), timeOrNull(p.Decided), stringOrNull(string(p.DecidedBy)), p.Reason).Scan(&id)
	if err != nil {
		err = s.db.translate(err)
		// The key's row is kept without an error of the statement, which
		// would end the transaction: as in SQLite, it goes on.
		if cairn.ErrorCode(err) == cairn.ENOTFOUND || cairn.ErrorCode(err) == cairn.ECONFLICT {
			return 0, cairn.Errorf(cairn.ECONFLICT, "a proposal was submitted as %s already", p.Key)
		}
		return 0, fmt.Errorf("record proposal %s: %w", p.Key, err)
	}
	return id, nil
}

// DecideProposal records the decision p holds inside tx; ENOTFOUND when
// there is no proposal p.ID.
func (s *AdmitStorage) DecideProposal(ctx context.Context, tx cairn.Tx, p *cairn.Proposal) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	tag, err := q.Exec(ctx, `UPDATE proposals SET status = $1, verdict = $2, findings = $3, proposal = $4, result = $5,
		decided = $6, decided_by = $7, reason = $8, error = $9 WHERE id = $10`,
		p.Status, string(p.Verdict), admit.FindingsJSON(p.Findings), nullHash(p.Commit), nullHash(p.Result),
		timeOrNull(p.Decided), stringOrNull(string(p.DecidedBy)), p.Reason, p.Error, p.ID)
	if err != nil {
		return fmt.Errorf("record the decision of proposal %d: %w", p.ID, s.db.translate(err))
	}
	if tag.RowsAffected() == 0 {
		return cairn.Errorf(cairn.ENOTFOUND, "there is no proposal %d", p.ID)
	}
	return nil
}

// SetProposalError records inside tx why the last decision of proposal id
// failed; it does nothing when there is no such proposal.
func (s *AdmitStorage) SetProposalError(ctx context.Context, tx cairn.Tx, id int64, msg string) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `UPDATE proposals SET error = $1 WHERE id = $2`, msg, id); err != nil {
		return fmt.Errorf("record the error of proposal %d: %w", id, s.db.translate(err))
	}
	return nil
}

// AddAudit records an audit row inside tx.
func (s *AdmitStorage) AddAudit(ctx context.Context, tx cairn.Tx, a admit.AuditRow) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO audit (time, principal, action, proposal, branch, commit_hash, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.Time.UnixNano(), string(a.Principal), a.Action, int64OrNull(a.Proposal), a.Branch, nullHash(a.Commit), string(a.Detail))
	if err != nil {
		return fmt.Errorf("record the audit of %s: %w", a.Action, s.db.translate(err))
	}
	return nil
}

// AddEvent records an event inside tx. Its id is the events table's own,
// assigned under the vault's write lock that tx holds, so that ids follow
// the order the events commit.
func (s *AdmitStorage) AddEvent(ctx context.Context, tx cairn.Tx, e admit.EventRow) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	data := string(e.Data)
	if data == "" {
		data = "{}"
	}
	_, err = q.Exec(ctx, `INSERT INTO events (time, kind, subject, data) VALUES ($1, $2, $3, $4)`,
		e.Time.UnixNano(), e.Kind, e.Subject, data)
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.Kind, s.db.translate(err))
	}
	return nil
}

// Events returns the events after the one numbered after, oldest first, at
// most limit.
func (s *AdmitStorage) Events(ctx context.Context, after int64, limit int) ([]admit.EventRow, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id, time, kind, subject, data FROM events WHERE id > $1 ORDER BY id LIMIT $2`, after, limitArg(limit))
	out, err := s.scanEvents(rows, err)
	if err != nil {
		return nil, fmt.Errorf("read the events after %d: %w", after, err)
	}
	return out, nil
}

// EventsAbout returns the events about subject after the one numbered
// after, oldest first, at most limit.
func (s *AdmitStorage) EventsAbout(ctx context.Context, subject string, after int64, limit int) ([]admit.EventRow, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id, time, kind, subject, data FROM events WHERE subject = $1 AND id > $2 ORDER BY id LIMIT $3`,
		subject, after, limitArg(limit))
	out, err := s.scanEvents(rows, err)
	if err != nil {
		return nil, fmt.Errorf("read the events about %s after %d: %w", subject, after, err)
	}
	return out, nil
}

// scanEvents reads the rows of a query of events and closes them.
func (s *AdmitStorage) scanEvents(rows pgx.Rows, err error) ([]admit.EventRow, error) {
	if err != nil {
		return nil, s.db.translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (admit.EventRow, error) {
		var e admit.EventRow
		var t int64
		var data string
		err := r.Scan(&e.ID, &t, &e.Kind, &e.Subject, &data)
		e.Time, e.Data = time.Unix(0, t), json.RawMessage(data)
		return e, err
	})
	return out, s.db.translate(err)
}

// LastEvent returns the number of the newest event, 0 when there is none.
func (s *AdmitStorage) LastEvent(ctx context.Context) (int64, error) {
	var id int64
	if err := s.db.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("read the last event: %w", s.db.translate(err))
	}
	return id, nil
}

// int64OrNull stores zero as NULL.
func int64OrNull(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

// stringOrNull stores "" as NULL.
func stringOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// timeOrNull stores a time as unix nanoseconds, the zero time as NULL.
func timeOrNull(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}
