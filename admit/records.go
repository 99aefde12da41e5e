package admit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"cairn"
	"cairn/store"
)

// Audit records, inside tx, who decided what: an audit row of the action
// by who on proposal (0: none) at now, making commit (zero: none), with
// detail encoded as JSON. Errors are the storage's, wrapped.
func (p *Pipeline) Audit(ctx context.Context, tx *store.Tx, now time.Time, who cairn.Principal, action string, proposal int64, commit cairn.Hash, detail any) error {
	data, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := p.st.AddAudit(ctx, tx.Backend(), AuditRow{Time: now, Principal: who, Action: action, Proposal: proposal,
		Branch: Branch, Commit: commit, Detail: data}); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Event records, inside tx, that something happened at now, for progress
// displays and feeds: an event of kind about subject, with data encoded as
// JSON. Errors are the storage's, wrapped.
func (p *Pipeline) Event(ctx context.Context, tx *store.Tx, now time.Time, kind, subject string, data any) error {
	enc, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("event %s: %w", kind, err)
	}
	if err := p.st.AddEvent(ctx, tx.Backend(), EventRow{Time: now, Kind: kind, Subject: subject, Data: enc}); err != nil {
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

// Events returns the events after the one numbered after, oldest first, at
// most limit. Errors are the storage's, wrapped.
func (p *Pipeline) Events(ctx context.Context, after int64, limit int) ([]EventRow, error) {
	out, err := p.st.Events(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// EventsAbout returns the events about subject (a source's id, a
// proposal's, a ref's name) after the one numbered after, oldest first, at
// most limit. Errors are the storage's, wrapped.
func (p *Pipeline) EventsAbout(ctx context.Context, subject string, after int64, limit int) ([]EventRow, error) {
	out, err := p.st.EventsAbout(ctx, subject, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read the events of %s: %w", subject, err)
	}
	return out, nil
}

// LastEvent returns the id of the newest event recorded, 0 when there is
// none: a cursor for Events that skips what happened before. Errors are
// the storage's, wrapped.
func (p *Pipeline) LastEvent(ctx context.Context) (int64, error) {
	id, err := p.st.LastEvent(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the last event: %w", err)
	}
	return id, nil
}

// proposalError is the error of reading proposal id: ENOTFOUND with a hint
// when there is none, else the storage's error, wrapped.
func proposalError(id int64, err error) error {
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return cairn.Errorf(cairn.ENOTFOUND, "there is no proposal %d", id).WithHint("Try: cairn review list")
	}
	return fmt.Errorf("read proposal %d: %w", id, err)
}

// getProposal reads one committed proposal; ENOTFOUND when there is none.
func (p *Pipeline) getProposal(ctx context.Context, id int64) (*cairn.Proposal, error) {
	prop, err := p.st.Proposal(ctx, id)
	if err != nil {
		return nil, proposalError(id, err)
	}
	return prop, nil
}

// getProposalIn reads one proposal inside tx; ENOTFOUND when there is none.
func (p *Pipeline) getProposalIn(ctx context.Context, tx *store.Tx, id int64) (*cairn.Proposal, error) {
	prop, err := p.st.ProposalIn(ctx, tx.Backend(), id)
	if err != nil {
		return nil, proposalError(id, err)
	}
	return prop, nil
}

// insertProposal records a new proposal inside tx and sets its ID; a key
// submitted before is ECONFLICT.
func (p *Pipeline) insertProposal(ctx context.Context, tx *store.Tx, prop *cairn.Proposal) error {
	id, err := p.st.AddProposal(ctx, tx.Backend(), prop)
	if cairn.ErrorCode(err) == cairn.ECONFLICT {
		return cairn.Errorf(cairn.ECONFLICT, "%s was submitted already", prop.Key)
	}
	if err != nil {
		return fmt.Errorf("record proposal: %w", err)
	}
	prop.ID = id
	return nil
}

// decideProposal records the decision prop holds inside tx.
func (p *Pipeline) decideProposal(ctx context.Context, tx *store.Tx, prop *cairn.Proposal) error {
	if err := p.st.DecideProposal(ctx, tx.Backend(), prop); err != nil {
		return fmt.Errorf("record the decision of proposal %d: %w", prop.ID, err)
	}
	return nil
}

// ProposalFilter selects proposals. The zero value selects the held ones.
type ProposalFilter struct {
	// Status is one status, "all" for every one; default held.
	Status string
	// Limit is the most returned, newest first; default 100.
	Limit int
}

// listProposals lists proposals, newest first; an unknown status is
// EINVALID.
func (p *Pipeline) listProposals(ctx context.Context, f ProposalFilter) ([]*cairn.Proposal, error) {
	status := cmpOr(f.Status, cairn.ProposalHeld)
	switch status {
	case "all":
		status = ""
	case cairn.ProposalHeld, cairn.ProposalAdmitted, cairn.ProposalRejected, cairn.ProposalAccepted:
	default:
		return nil, cairn.Errorf(cairn.EINVALID, "unknown proposal status %q", status).
			WithHint("Use held, admitted, accepted, rejected or all.")
	}
	out, err := p.st.Proposals(ctx, status, cmpOr(f.Limit, 100))
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	return out, nil
}

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
