package admit

import (
	"context"
	"encoding/json"
	"time"
	"unsafe"

	"cairn"
)

// Storage keeps admission's records: the proposals (every change submitted
// to main, with its outcome), the audit rows (who decided what) and the
// events (what happened, in order, for progress displays and feeds). The
// SQLite implementation is sqlite.AdmitStorage; docs/storage.md lists the
// others.
//
// Methods that take a cairn.Tx write (or read) inside the store's write
// transaction, so that their rows commit with the ref update they go with;
// the others read what is committed. A transaction of another backend is
// EINTERNAL. Errors of the database are returned with cairn's codes: a
// missing row has code ENOTFOUND, a duplicate a unique key refuses
// ECONFLICT, a write lock that cannot be had EUNAVAILABLE.
type Storage interface {
	// Proposal returns the proposal with the given id; ENOTFOUND when
	// there is none.
	Proposal(ctx context.Context, id int64) (*cairn.Proposal, error)
	// ProposalIn returns, inside tx, the proposal with the given id;
	// ENOTFOUND when there is none.
	ProposalIn(ctx context.Context, tx cairn.Tx, id int64) (*cairn.Proposal, error)
	// Proposals returns the proposals with the given status ("" for every
	// one), newest first, at most limit.
	Proposals(ctx context.Context, status string, limit int) ([]*cairn.Proposal, error)
	// ProposalOfKey returns the id of the proposal submitted with key;
	// ENOTFOUND when none was.
	ProposalOfKey(ctx context.Context, key string) (int64, error)
	// ProposalOfKeyIn returns, inside tx, the id of the proposal submitted
	// with key; ENOTFOUND when none was.
	ProposalOfKeyIn(ctx context.Context, tx cairn.Tx, key string) (int64, error)

	// AddProposal records p inside tx (p.ID is ignored) and returns its
	// id. A proposal recorded already with p.Key is ECONFLICT.
	AddProposal(ctx context.Context, tx cairn.Tx, p *cairn.Proposal) (int64, error)
	// DecideProposal records, inside tx, the decision of proposal p.ID as
	// p holds it: its Status, Verdict, Findings, Commit, Result, Decided,
	// DecidedBy, Reason and Error. ENOTFOUND when there is no such
	// proposal.
	DecideProposal(ctx context.Context, tx cairn.Tx, p *cairn.Proposal) error
	// SetProposalError records, inside tx, why the last decision of
	// proposal id failed; it does nothing when there is no such proposal.
	SetProposalError(ctx context.Context, tx cairn.Tx, id int64, msg string) error

	// AddAudit records an audit row inside tx.
	AddAudit(ctx context.Context, tx cairn.Tx, a AuditRow) error
	// AddEvent records an event inside tx (e.ID is ignored): events are
	// numbered in the order they commit.
	AddEvent(ctx context.Context, tx cairn.Tx, e EventRow) error
	// Events returns the events numbered after after, oldest first, at
	// most limit.
	Events(ctx context.Context, after int64, limit int) ([]EventRow, error)
	// LastEvent returns the number of the newest event, 0 when there is
	// none.
	LastEvent(ctx context.Context) (int64, error)
	// EventsAbout returns the events about subject numbered after after,
	// oldest first, at most limit.
	EventsAbout(ctx context.Context, subject string, after int64, limit int) ([]EventRow, error)
}

// AuditRow is one audit row: who decided what, when.
type AuditRow struct {
	Time      time.Time
	Principal cairn.Principal
	// Action is admit, hold, reject, accept or recheck.
	Action string
	// Proposal is the proposal decided (0: none).
	Proposal int64
	// Branch is the branch the decision is about.
	Branch string
	// Commit is the commit the decision made (zero: none).
	Commit cairn.Hash
	// Detail is a JSON value.
	Detail json.RawMessage
}

// FindingsJSON encodes a proposal's findings for a storage's column: a JSON
// array, "[]" for none. Findings are structs of strings, which json.Marshal
// always encodes. The string is the encoding's own memory, not a copy of
// it: the findings of a large import's proposal run to tens of megabytes.
func FindingsJSON(fs []cairn.Finding) string {
	if fs == nil {
		fs = []cairn.Finding{}
	}
	data, _ := json.Marshal(fs)
	return unsafe.String(unsafe.SliceData(data), len(data))
}

// LogJSON encodes a proposal's log entry for a storage's column, "" for
// none.
func LogJSON(e *cairn.LogEntry) string {
	if e == nil {
		return ""
	}
	data, _ := json.Marshal(e)
	return string(data)
}
