package app

import (
	"context"

	"cairn"
	"cairn/admit"
	"cairn/auth"
	"cairn/worktree"
)

// ProposalView is one proposal as a reviewer reads it: the record, with
// its findings, and what it changes against the main it was made on.
type ProposalView struct {
	Proposal *cairn.Proposal `json:"proposal"`
	// Changes are the files the proposal changes, against its base.
	Changes []cairn.Change `json:"changes"`
	// Patches are the changes rendered as unified diffs, one for each of
	// Changes, in order, when ProposalOptions.Patch asks for them.
	Patches []string `json:"patches,omitempty"`
}

// ProposalOptions adjust ShowProposal. The zero value lists the changes
// only.
type ProposalOptions struct {
	// Patch renders each change as a unified diff.
	Patch bool
}

// Decision is what a review decision (accept, reject, recheck) did.
type Decision struct {
	// Proposal is the proposal as decided (for a recheck that did not
	// admit it, as it is held or rejected now).
	Proposal *cairn.Proposal `json:"proposal"`
	// Outcome is admission's outcome: set for accept and recheck, nil for
	// reject.
	Outcome *admit.Outcome `json:"outcome,omitempty"`
	// Sync is what bringing main's folder up to main changed; nil when
	// main did not move (a recheck that still holds the proposal).
	Sync *worktree.SyncReport `json:"sync,omitempty"`
}

// checkProposalID refuses an id no proposal can have.
func checkProposalID(id int64) error {
	if id <= 0 {
		return cairn.Errorf(cairn.EINVALID, "%d is not a proposal id (a positive number)", id).
			WithHint("Try: cairn review list")
	}
	return nil
}

// Proposals returns the proposals f selects, newest first: the held ones
// for the zero filter. An unknown status is refused with EINVALID.
func (a *App) Proposals(ctx context.Context, f admit.ProposalFilter) ([]*cairn.Proposal, error) {
	return a.v.Admit.List(ctx, f)
}

// ShowProposal returns proposal id with what it changes. An id that names
// no proposal gives ENOTFOUND; one that cannot be an id, EINVALID.
func (a *App) ShowProposal(ctx context.Context, id int64, opts ProposalOptions) (*ProposalView, error) {
	if err := checkProposalID(id); err != nil {
		return nil, err
	}
	p, err := a.v.Admit.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	_, _, changes, err := a.v.Admit.Changes(ctx, p)
	if err != nil {
		return nil, err
	}
	view := &ProposalView{Proposal: p, Changes: changes}
	if opts.Patch {
		view.Patches = a.patches(ctx, a.v.Store, changes)
	}
	return view, nil
}

// Accept merges held proposal id into main as the decision of the
// principal in ctx, whatever its findings, and brings main's folder up to
// it. It needs a principal (EUNAUTHORIZED); a proposal that is not held
// gives ECONFLICT, as does a main that changed the same places since (the
// proposal then stays held with the error).
func (a *App) Accept(ctx context.Context, id int64) (*Decision, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkProposalID(id); err != nil {
		return nil, err
	}
	if err := a.proposalAuthority(ctx, id); err != nil {
		return nil, err
	}
	defer a.v.MarkBusy("cairn review accept")()
	out, err := a.v.Admit.Accept(ctx, id, p)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	return &Decision{Proposal: out.Proposal, Outcome: out, Sync: a.syncMain(ctx)}, nil
}

// Reject rejects held proposal id as the decision of the principal in ctx,
// for reason (kept in the record; at most 4096 bytes). Its branch stays;
// an ingest's source stays rejected until retried, and the log entry an
// ingest would have written says it was rejected. It needs a principal
// (EUNAUTHORIZED); a proposal that is not held gives ECONFLICT.
func (a *App) Reject(ctx context.Context, id int64, reason string) (*Decision, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkProposalID(id); err != nil {
		return nil, err
	}
	defer a.v.MarkBusy("cairn review reject")()
	prop, err := a.v.Admit.Reject(ctx, id, p, reason)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	return &Decision{Proposal: prop, Sync: a.syncMain(ctx)}, nil
}

// Recheck runs the gates again on held proposal id (after it was fixed on
// its branch, or main changed): when they admit it now, it is merged and
// main's folder brought up to it; else the outcome says why not and Sync
// is nil. The proposal keeps its own principal, but asking for a recheck
// needs one too (EUNAUTHORIZED): it may change main. A proposal that is not
// held gives ECONFLICT.
func (a *App) Recheck(ctx context.Context, id int64) (*Decision, error) {
	if _, err := Principal(ctx); err != nil {
		return nil, err
	}
	if err := checkProposalID(id); err != nil {
		return nil, err
	}
	if err := a.proposalAuthority(ctx, id); err != nil {
		return nil, err
	}
	defer a.v.MarkBusy("cairn review recheck")()
	out, err := a.v.Admit.Recheck(ctx, id)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	d := &Decision{Proposal: out.Proposal, Outcome: out}
	if !out.Admitted() {
		return d, nil
	}
	d.Sync = a.syncMain(ctx)
	return d, nil
}

// proposalAuthority refuses to a client whose token lacks the admin scope
// a decision that would admit a change to the vault's contract (see
// contractAuthority): accepting it, or a recheck that may admit it.
func (a *App) proposalAuthority(ctx context.Context, id int64) error {
	tok := auth.FromContext(ctx)
	if tok == nil || tok.Has(auth.Admin) {
		return nil
	}
	p, err := a.v.Admit.Get(ctx, id)
	if err != nil {
		return err
	}
	_, _, changes, err := a.v.Admit.Changes(ctx, p)
	if err != nil {
		return err
	}
	return contractChange(tok, changes)
}
