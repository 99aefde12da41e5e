package app

import (
	"context"

	"cairn"
	"cairn/admit"
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

// syncBranchFolders brings every working tree of branch to its head and
// returns what that did to the folders, together: files updated, and files
// left alone because they hold local edits.
func (a *App) syncBranchFolders(ctx context.Context, branch string) (*worktree.SyncReport, error) {
	trees, err := a.v.Trees.List(ctx)
	if err != nil {
		return nil, err
	}
	all := &worktree.SyncReport{}
	for _, t := range trees {
		if t.Branch != branch {
			continue
		}
		rep, err := a.v.Trees.SyncHead(ctx, t)
		if err != nil {
			return nil, err
		}
		all.Updated = append(all.Updated, rep.Updated...)
		all.LeftAlone = append(all.LeftAlone, rep.LeftAlone...)
	}
	return all, nil
}
