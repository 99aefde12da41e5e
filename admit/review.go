package admit

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"cairn"
	"cairn/store"
)

// held reads a proposal that must be held, and the head of its branch
// (which a person may have moved by fixing the proposal in a working tree).
func (p *Pipeline) held(ctx context.Context, id int64) (*cairn.Proposal, cairn.Hash, cairn.Hash, error) {
	prop, err := p.getProposal(ctx, id)
	if err != nil {
		return nil, cairn.Hash{}, cairn.Hash{}, err
	}
	if prop.Status != cairn.ProposalHeld {
		return nil, cairn.Hash{}, cairn.Hash{}, cairn.Errorf(cairn.ECONFLICT, "proposal %d is %s; only a held proposal can be decided", id, prop.Status).
			WithHint("Try: cairn review list")
	}
	head, err := p.s.Head(ctx, ProposalBranch(id))
	if err != nil {
		return nil, cairn.Hash{}, cairn.Hash{}, fmt.Errorf("proposal %d: %w", id, err)
	}
	c, err := p.s.ReadCommit(ctx, head)
	if err != nil {
		return nil, cairn.Hash{}, cairn.Hash{}, err
	}
	return prop, head, c.Tree, nil
}

// Accept admits a held proposal by a person's decision: the change its
// gates last judged (Recheck judges a fix committed on its branch) is
// merged onto main, whatever the gates say, and recorded as decided by
// who. A branch that moved since that judgement is ECONFLICT, and nothing
// changes: what a reviewer accepts is what was judged and shown. When
// main changed the same places, nothing is merged: the proposal stays
// held with the error (ECONFLICT).
func (p *Pipeline) Accept(ctx context.Context, id int64, who cairn.Principal) (*Outcome, error) {
	prop, head, tree, err := p.held(ctx, id)
	if err != nil {
		return nil, err
	}
	if !prop.Commit.IsZero() && head != prop.Commit {
		return nil, cairn.Errorf(cairn.ECONFLICT, "proposal %d changed since its gates judged it: its branch is at %s, not %s", id, head.Short(), prop.Commit.Short()).
			WithHint(fmt.Sprintf("Judge it again, then decide: cairn review recheck %d; cairn review show %d", id, id))
	}
	return p.Submit(ctx, Request{
		Key: "accept:" + strconv.FormatInt(id, 10), Route: prop.Route,
		Base: prop.Base, Tree: tree, Commit: head, Principal: prop.Principal, Origin: Origin(prop.Origin),
		Message: prop.Message, Summary: prop.Summary, Log: prop.Log, Source: prop.Source, Job: prop.Job,
		Proposal: id, Decider: who, Force: true, AllowEmpty: true,
	})
}

// Recheck runs the gates again on a held proposal (after a person fixed it
// on its branch, or after main changed): admitted when they now admit it,
// else held or rejected with the new findings. A change its submitter
// proposed for review (Request.Propose) stays held for it: only a
// reviewer's accept admits it.
func (p *Pipeline) Recheck(ctx context.Context, id int64) (*Outcome, error) {
	prop, head, tree, err := p.held(ctx, id)
	if err != nil {
		return nil, err
	}
	return p.Submit(ctx, Request{
		Key: "recheck:" + strconv.FormatInt(id, 10), Route: prop.Route,
		Base: prop.Base, Tree: tree, Commit: head, Principal: prop.Principal, Origin: Origin(prop.Origin),
		Message: prop.Message, Summary: prop.Summary, Log: prop.Log, Source: prop.Source, Job: prop.Job,
		Proposal: id, Propose: forReview(prop),
	})
}

// Reject rejects a held proposal by a person's decision. Its branch stays,
// as the record of what was rejected. A proposal that would have written a
// log entry (an ingest) gets one saying it was rejected, written to main
// in the same transaction, as Eva does.
func (p *Pipeline) Reject(ctx context.Context, id int64, who cairn.Principal, reason string) (*cairn.Proposal, error) {
	if err := who.Validate(); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	if len(reason) > 4096 {
		return nil, cairn.Errorf(cairn.EINVALID, "the reason is %d bytes; at most 4096", len(reason))
	}
	var out *cairn.Proposal
	err := p.s.Update(ctx, func(tx *store.Tx) error {
		prop, err := p.getProposalIn(ctx, tx, id)
		if err != nil {
			return err
		}
		if prop.Status != cairn.ProposalHeld {
			return cairn.Errorf(cairn.ECONFLICT, "proposal %d is %s; only a held proposal can be decided", id, prop.Status).
				WithHint("Try: cairn review list")
		}
		now := p.now()
		var commit cairn.Hash
		if prop.Log != nil {
			head, err := tx.Head(ctx, Branch)
			if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
				return err
			}
			headTree, err := treeOf(ctx, tx, head)
			if err != nil {
				return err
			}
			body := "Rejected in review by " + string(who) + "; the proposal is kept as " + ProposalBranch(id) + "."
			if reason != "" {
				body += " Reason: " + reason
			}
			b := p.s.NewBatch()
			tree, err := p.appendLog(ctx, b, headTree, &cairn.LogEntry{Op: prop.Log.Op, Subject: prop.Log.Subject, Body: body})
			if err != nil {
				return err
			}
			tx.SetValue(admittingKey{}, true)
			c, err := tx.Commit(ctx, b, store.CommitRequest{
				Branch: Branch, Expected: head, Tree: tree, Principal: who,
				Message: fmt.Sprintf("log: reject %s %s", prop.Log.Op, prop.Log.Subject),
				Meta:    map[string]string{"proposal": strconv.FormatInt(id, 10), "route": "review", "verdict": string(cairn.Reject)},
			})
			tx.SetValue(admittingKey{}, false)
			if err != nil {
				return err
			}
			commit = c.Hash
		}
		prop.Status, prop.Decided, prop.DecidedBy, prop.Reason, prop.Error = cairn.ProposalRejected, now, who, reason, ""
		if err := p.decideProposal(ctx, tx, prop); err != nil {
			return err
		}
		if err := p.Audit(ctx, tx, now, who, "reject", id, commit, map[string]any{"reason": reason}); err != nil {
			return err
		}
		if err := p.Event(ctx, tx, now, "proposal.rejected", strconv.FormatInt(id, 10), map[string]any{
			"route": prop.Route, "source": prop.Source, "by": who}); err != nil {
			return err
		}
		out = prop
		return p.runDecided(ctx, tx, nil, &Outcome{Proposal: prop, Verdict: cairn.Reject})
	})
	return out, err
}

// Changes returns what a proposal changes against its base: the diff of
// its branch's head (or, once decided, of its recorded commit).
func (p *Pipeline) Changes(ctx context.Context, prop *cairn.Proposal) (base, tree cairn.Hash, changes []cairn.Change, err error) {
	tree = prop.Tree
	// A decided proposal's branch may be gone: its recorded tree stands.
	head, err := p.s.Head(ctx, ProposalBranch(prop.ID))
	switch {
	case err == nil:
		c, err := p.s.ReadCommit(ctx, head)
		if err != nil {
			return base, tree, nil, err
		}
		tree = c.Tree
	case cairn.ErrorCode(err) != cairn.ENOTFOUND:
		return base, tree, nil, fmt.Errorf("proposal %d: %w", prop.ID, err)
	}
	base = store.EmptyTree
	if !prop.Base.IsZero() {
		c, err := p.s.ReadCommit(ctx, prop.Base)
		if err != nil {
			return base, tree, nil, err
		}
		base = c.Tree
	}
	changes, err = p.s.Diff(ctx, base, tree, nil)
	return base, tree, changes, err
}

// Get reads one proposal.
func (p *Pipeline) Get(ctx context.Context, id int64) (*cairn.Proposal, error) {
	return p.getProposal(ctx, id)
}

// List lists proposals, newest first.
func (p *Pipeline) List(ctx context.Context, f ProposalFilter) ([]*cairn.Proposal, error) {
	return p.listProposals(ctx, f)
}

// Check reports proposals whose records disagree with the store: a held
// proposal without its branch, an admitted one whose commit is missing.
func (p *Pipeline) Check(ctx context.Context) ([]string, error) {
	props, err := p.List(ctx, ProposalFilter{Status: "all", Limit: 1 << 30})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, pr := range props {
		switch pr.Status {
		case cairn.ProposalHeld:
			_, err := p.s.Head(ctx, ProposalBranch(pr.ID))
			if cairn.ErrorCode(err) == cairn.ENOTFOUND {
				out = append(out, fmt.Sprintf("proposal %d is held but its branch %s is missing", pr.ID, ProposalBranch(pr.ID)))
			} else if err != nil {
				return nil, fmt.Errorf("proposal %d: %w", pr.ID, err)
			}
		case cairn.ProposalAdmitted, cairn.ProposalAccepted:
			if _, err := p.s.ReadCommit(ctx, pr.Result); err != nil {
				out = append(out, fmt.Sprintf("proposal %d is %s but its commit %s is missing: %v", pr.ID, pr.Status, pr.Result.Short(), err))
			}
		}
	}
	// Admission falls back to the defaults for a cairn.yaml on main that
	// does not parse (it never locks itself out), which drops its
	// protected paths and verdicts: say so.
	head, err := p.s.Head(ctx, Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, fmt.Errorf("read main: %w", err)
	}
	if err == nil {
		c, err := p.s.ReadCommit(ctx, head)
		if err != nil {
			return nil, err
		}
		if _, err := PolicyAt(ctx, p.s, c.Tree); err != nil {
			out = append(out, fmt.Sprintf("%s on main does not parse, so admission uses the default policy: %v (fix it, then cairn commit)", PolicyFile, err))
		}
	}
	return out, nil
}

// forReview reports whether a proposal was submitted for review whatever
// the gates say (Request.Propose).
func forReview(prop *cairn.Proposal) bool {
	for _, f := range prop.Findings {
		if f.Gate == GateReview && f.Rule == "proposed" {
			return true
		}
	}
	return false
}
