package admit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cairn"
	"cairn/store"
)

// dbtx is what reads and writes rows: a transaction or a pool.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Audit records who decided what.
func Audit(ctx context.Context, q dbtx, now time.Time, who cairn.Principal, action string, proposal int64, commit cairn.Hash, detail any) error {
	data, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO audit (time, principal, action, proposal, branch, commit_hash, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		now.UnixNano(), string(who), action, nullInt(proposal), Branch, nullHash(commit), string(data))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Event records that something happened, for progress displays and feeds.
func Event(ctx context.Context, q dbtx, now time.Time, kind, subject string, data any) error {
	enc, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO events (time, kind, subject, data) VALUES (?, ?, ?, ?)`,
		now.UnixNano(), kind, subject, string(enc)); err != nil {
		return fmt.Errorf("event %s: %w", kind, err)
	}
	return nil
}

// EventRow is one recorded event.
type EventRow struct {
	ID      int64           `json:"id"`
	Time    time.Time       `json:"time"`
	Kind    string          `json:"kind"`
	Subject string          `json:"subject"`
	Data    json.RawMessage `json:"data"`
}

// Events returns the events after id, oldest first, at most limit.
func Events(ctx context.Context, q dbtx, after int64, limit int) ([]EventRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, time, kind, subject, data FROM events WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []EventRow
	for rows.Next() {
		var e EventRow
		var t int64
		var data string
		if err := rows.Scan(&e.ID, &t, &e.Kind, &e.Subject, &data); err != nil {
			return nil, err
		}
		e.Time, e.Data = time.Unix(0, t), json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

const proposalColumns = `id, key, route, branch, base, tree, proposal, result, principal, origin, status, verdict,
	findings, summary, message, log, source, job, error, created, decided, decided_by, reason`

func insertProposal(ctx context.Context, q dbtx, p *cairn.Proposal) error {
	err := q.QueryRowContext(ctx, `INSERT INTO proposals (key, route, branch, base, tree, principal, origin, status, verdict,
		findings, summary, message, log, source, job, created, decided, decided_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		p.Key, p.Route, p.Branch, nullHash(p.Base), p.Tree[:], string(p.Principal), p.Origin, p.Status, string(p.Verdict),
		findingsJSON(p.Findings), p.Summary, p.Message, logJSON(p.Log), nullString(p.Source), nullInt(p.Job), p.Created.UnixNano(),
		nullTime(p.Decided), nullPrincipal(p.DecidedBy)).Scan(&p.ID)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return cairn.Errorf(cairn.ECONFLICT, "%s was submitted already", p.Key)
		}
		return fmt.Errorf("record proposal: %w", err)
	}
	return nil
}

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

// getProposal reads one proposal.
func getProposal(ctx context.Context, q dbtx, id int64) (*cairn.Proposal, error) {
	p, err := scanProposal(q.QueryRowContext(ctx, `SELECT `+proposalColumns+` FROM proposals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no proposal %d", id).WithHint("Try: cairn review list")
	}
	if err != nil {
		return nil, fmt.Errorf("read proposal %d: %w", id, err)
	}
	return p, nil
}

// ProposalFilter selects proposals. The zero value selects the held ones.
type ProposalFilter struct {
	// Status is one status, "all" for every one; default held.
	Status string
	// Limit is the most returned, newest first; default 100.
	Limit int
}

// listProposals lists proposals, newest first.
func listProposals(ctx context.Context, q dbtx, f ProposalFilter) ([]*cairn.Proposal, error) {
	status := cmpOr(f.Status, cairn.ProposalHeld)
	query := `SELECT ` + proposalColumns + ` FROM proposals`
	var args []any
	switch status {
	case "all":
	case cairn.ProposalHeld, cairn.ProposalAdmitted, cairn.ProposalRejected, cairn.ProposalAccepted:
		query += ` WHERE status = ?`
		args = append(args, status)
	default:
		return nil, cairn.Errorf(cairn.EINVALID, "unknown proposal status %q", status).
			WithHint("Use held, admitted, accepted, rejected or all.")
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, cmpOr(f.Limit, 100))
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	defer rows.Close()
	var out []*cairn.Proposal
	for rows.Next() {
		pr, err := scanProposal(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, rows.Err()
}

// findingsJSON encodes findings for their column. Findings and log entries
// are structs of strings, which json.Marshal always encodes.
func findingsJSON(fs []cairn.Finding) string {
	if fs == nil {
		fs = []cairn.Finding{}
	}
	data, _ := json.Marshal(fs)
	return string(data)
}

// logJSON encodes a log entry for its column ("" for none).
func logJSON(e *cairn.LogEntry) string {
	if e == nil {
		return ""
	}
	data, _ := json.Marshal(e)
	return string(data)
}

func nullHash(h cairn.Hash) any {
	if h.IsZero() {
		return nil
	}
	return h[:]
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

func nullPrincipal(p cairn.Principal) any { return nullString(string(p)) }

// appendLog returns tree with the entry appended to log.md (made if
// missing), in Eva's format.
func (p *Pipeline) appendLog(ctx context.Context, b *store.Batch, tree cairn.Hash, e *cairn.LogEntry) (cairn.Hash, error) {
	var data []byte
	if ent, err := b.Get(ctx, tree, "log.md"); err == nil {
		if data, err = b.ReadBlob(ctx, ent.Blob); err != nil {
			return cairn.Hash{}, fmt.Errorf("read log.md: %w", err)
		}
	} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return cairn.Hash{}, err
	} else {
		data = []byte("# Log\n")
	}
	text := string(data)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if !strings.HasSuffix(text, "\n\n") {
		text += "\n"
	}
	body := strings.TrimSpace(e.Body)
	text += fmt.Sprintf("## [%s] %s | %s\n", p.now().Format("2006-01-02"), e.Op, oneLine(e.Subject))
	if body != "" {
		text += body + "\n"
	}
	return b.Edit(ctx, tree, []store.FileChange{{Path: "log.md", Data: []byte(text)}})
}

// oneLine keeps a log heading on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
