package app

import (
	"context"
	"fmt"
	"strings"

	"cairn"
	"cairn/admit"
	"cairn/auth"
	"cairn/store"
	"cairn/worktree"
)

// submission is a change to main as every route of the application layer
// submits it for admission. It holds the fields the routes fill in; submit
// adds the principal and builds the one admission request.
type submission struct {
	// Route is how the change came: commit, merge, revert, init, api,
	// import, settings (required).
	Route string
	// Base is the commit the change was made on (zero: main was empty);
	// BaseTree the tree it was made on (default: Base's tree).
	Base, BaseTree cairn.Hash
	// Tree is the proposed tree (required); Batch holds its new objects
	// (default: Tree is stored already).
	Tree  cairn.Hash
	Batch *store.Batch
	// Parents are further parents of the admitting commit (a merged head).
	Parents []cairn.Hash
	// Message says why (required); Meta is added to the commit's metadata.
	Message string
	Meta    map[string]string
	// AllowEmpty admits a change that changes nothing (a merge main has).
	AllowEmpty bool
	// Propose keeps the change for review whatever the gates say.
	Propose bool
	// Within runs inside the transaction that records the outcome; an
	// error rolls everything back.
	Within func(ctx context.Context, tx *store.Tx, out *admit.Outcome) error
	// OnHead runs before each judgement with main's head (see
	// admit.Request.OnHead).
	OnHead func(ctx context.Context, head cairn.Hash) error
}

// submit submits s for admission into main, made by the principal of ctx,
// and returns what admission decided. Errors: no principal (EUNAUTHORIZED);
// admission's own (admit.Pipeline.Submit: an empty change wraps
// admit.ErrEmpty); a write lock held too long by another process is
// EUNAVAILABLE and names that process.
func (a *App) submit(ctx context.Context, s submission) (*admit.Outcome, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.contractAuthority(ctx, s); err != nil {
		return nil, err
	}
	out, err := a.v.Admit.Submit(ctx, admit.Request{
		Route: s.Route, Base: s.Base, BaseTree: s.BaseTree, Tree: s.Tree, Batch: s.Batch, Parents: s.Parents,
		Principal: p, Message: s.Message, Meta: s.Meta, AllowEmpty: s.AllowEmpty, Propose: s.Propose, Within: s.Within, OnHead: s.OnHead,
	})
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	return out, nil
}

// landOnMain returns the Land function of a commit of a working tree's
// local edits to main: the edits go through admission by route, and
// *outcome receives what it decided.
func (a *App) landOnMain(route, message string, outcome **admit.Outcome) func(context.Context, *worktree.Landing) (*cairn.Commit, []cairn.Conflict, error) {
	return func(ctx context.Context, l *worktree.Landing) (*cairn.Commit, []cairn.Conflict, error) {
		out, err := a.submit(ctx, submission{
			Route: route, Base: l.Base, BaseTree: l.BaseTree, Tree: l.Tree, Batch: l.Batch, Message: message,
			Within: func(ctx context.Context, tx *store.Tx, out *admit.Outcome) error {
				if out.Admitted() {
					return l.Record(ctx, tx, out.Commit)
				}
				return nil
			},
		})
		if err != nil {
			return nil, nil, err
		}
		*outcome = out
		return out.Commit, out.Conflicts, nil
	}
}

// syncBranchFolders brings every working tree of branch to its head, once
// a change to it has landed, and returns what that did to the folders,
// together: files updated, files left alone because they hold local
// edits, and the folders it could not bring up (the change stands; the
// next command in such a folder catches it up).
func (a *App) syncBranchFolders(ctx context.Context, branch string) *worktree.SyncReport {
	all := &worktree.SyncReport{}
	trees, err := a.v.Trees.List(ctx)
	if err != nil {
		return a.syncFailed(all, branch, err)
	}
	for _, t := range trees {
		if t.Branch != branch {
			continue
		}
		rep, err := a.v.Trees.SyncHead(ctx, t)
		if err != nil {
			a.syncFailed(all, t.Path, err)
			continue
		}
		all.Updated = append(all.Updated, rep.Updated...)
		all.LeftAlone = append(all.LeftAlone, rep.LeftAlone...)
	}
	return all
}

// syncMain brings main's folder up to main once a change has landed,
// reporting a failure in the report rather than as an error: the change
// stands.
func (a *App) syncMain(ctx context.Context) *worktree.SyncReport {
	rep, err := a.v.SyncMain(ctx)
	if err != nil {
		return a.syncFailed(&worktree.SyncReport{}, "main's folder", err)
	}
	return rep
}

// syncFailed records in rep that the folder what could not be brought up
// to its branch, and logs it.
func (a *App) syncFailed(rep *worktree.SyncReport, what string, err error) *worktree.SyncReport {
	a.log.Warn("a change landed but a folder could not be brought up to it; the next command there catches it up", "folder", what, "err", err)
	rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %v", what, err))
	return rep
}

// contractAuthority refuses a change to the vault's contract (cairn.yaml
// and the agents' instructions: admit.IsContract) asked by a client whose
// token lacks the admin scope: the contract decides what agents run and
// what they may read, and changing it is changing the settings, which are
// admin's. A change asked without a token (the vault opened here, by
// whoever may write its files) is left to admission's gates.
func (a *App) contractAuthority(ctx context.Context, s submission) error {
	tok := auth.FromContext(ctx)
	if tok == nil || tok.Has(auth.Admin) {
		return nil
	}
	from := s.BaseTree
	if from.IsZero() {
		var err error
		if from, err = a.TreeOf(ctx, s.Base); err != nil {
			return err
		}
	}
	var changes []cairn.Change
	var err error
	if s.Batch != nil {
		changes, err = s.Batch.Diff(ctx, from, s.Tree, nil)
	} else {
		changes, err = a.v.Store.Diff(ctx, from, s.Tree, nil)
	}
	if err != nil {
		return err
	}
	return contractChange(tok, changes)
}

// contractChange returns EFORBIDDEN when changes touch the contract and
// tok lacks the admin scope.
func contractChange(tok *auth.Token, changes []cairn.Change) error {
	for _, c := range changes {
		for _, p := range []string{c.Path, c.Old.Path} {
			if p != "" && admit.IsContract(p) {
				return cairn.Errorf(cairn.EFORBIDDEN, "%s is the vault's contract; changing it needs the admin scope, which token %s (%s) lacks", p, tok.ID, tok.Principal).
					WithHint("Change the settings with a token holding admin (cairn settings set KEY VALUE), or ask who has one.")
			}
		}
	}
	return nil
}

// branchAuthority refuses a write to a held proposal's branch (proposals/N)
// asked by a client whose token lacks the admin scope: fixing a proposal
// changes what a reviewer is asked to accept. (Accept merges only what the
// gates last judged, so a change there is rechecked first, whoever made
// it.)
func branchAuthority(ctx context.Context, branch string) error {
	tok := auth.FromContext(ctx)
	if tok == nil || tok.Has(auth.Admin) || !strings.HasPrefix(branch, admit.ProposalPrefix) {
		return nil
	}
	return cairn.Errorf(cairn.EFORBIDDEN, "%s holds a proposal under review; changing it needs the admin scope, which token %s (%s) lacks", branch, tok.ID, tok.Principal).
		WithHint("Make a new proposal instead: POST /api/v1/proposals.")
}
