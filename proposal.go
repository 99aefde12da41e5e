package cairn

import "time"

// Verdict is what admission decides about a proposal.
type Verdict string

// Verdicts, from least to most severe.
const (
	Admit  Verdict = "admit"  // the change lands
	Hold   Verdict = "hold"   // a person must decide (a review)
	Reject Verdict = "reject" // the change never lands
)

// Rank orders verdicts: reject 2, hold 1, admit 0.
func (v Verdict) Rank() int {
	switch v {
	case Reject:
		return 2
	case Hold:
		return 1
	}
	return 0
}

// Worst returns the more severe of two verdicts.
func Worst(a, b Verdict) Verdict {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Finding is what one gate found in a proposal. Its identity is (Gate,
// Rule, Page, Subject); Message is for people and never part of it.
type Finding struct {
	Gate     string  `json:"gate"`
	Rule     string  `json:"rule"`
	Page     string  `json:"page,omitempty"`
	Subject  string  `json:"subject,omitempty"`
	Severity string  `json:"severity,omitempty"` // for lint findings
	Verdict  Verdict `json:"verdict"`
	Message  string  `json:"message"`
}

// Key returns the finding's identity as one comparable string.
func (f Finding) Key() string {
	return f.Gate + "\x00" + f.Rule + "\x00" + f.Page + "\x00" + f.Subject
}

// Proposal statuses.
const (
	ProposalAdmitted = "admitted" // admitted by the gates
	ProposalHeld     = "held"     // waiting for a review
	ProposalRejected = "rejected" // rejected by the gates or by a person
	ProposalAccepted = "accepted" // admitted by a person's review
)

// Proposal is a change submitted for admission into a branch, with the
// verdict it got.
type Proposal struct {
	ID        int64     `json:"id"`
	Key       string    `json:"key"`
	Route     string    `json:"route"`
	Branch    string    `json:"branch"`
	Base      Hash      `json:"base"`
	Tree      Hash      `json:"tree"`
	Commit    Hash      `json:"commit"`            // the commit holding the proposed tree, if any
	Result    Hash      `json:"result,omitzero"`   // the commit that admitted it
	Principal Principal `json:"principal"`         // who made the change
	Origin    string    `json:"origin"`            // agent, person, system
	Status    string    `json:"status"`            // admitted, held, rejected, accepted
	Verdict   Verdict   `json:"verdict"`           // what the gates said
	Findings  []Finding `json:"findings"`          // why
	Summary   string    `json:"summary,omitempty"` // the agent's account of its change
	Message   string    `json:"message,omitempty"`
	Log       *LogEntry `json:"log,omitempty"`    // the log.md entry admitting it writes
	Source    string    `json:"source,omitempty"` // the source an ingest integrates
	Job       int64     `json:"job,omitempty"`
	Error     string    `json:"error,omitempty"` // why the last decision failed
	Created   time.Time `json:"created"`
	Decided   time.Time `json:"decided,omitzero"`
	DecidedBy Principal `json:"decided_by,omitempty"`
	Reason    string    `json:"reason,omitempty"`
}

// LogEntry is an entry cairn writes to log.md when it admits a change, in
// Eva's format: "## [YYYY-MM-DD] op | subject", then the body.
type LogEntry struct {
	Op      string `json:"op"`      // ingest
	Subject string `json:"subject"` // the source's name
	Body    string `json:"body"`    // the agent's summary, or why it was rejected
}
