package app

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"cairn"
	"cairn/admit"
	"cairn/store"
	"cairn/worktree"
)

// Branches returns the vault's branches, by name.
func (a *App) Branches(ctx context.Context) ([]cairn.Ref, error) {
	return a.v.Store.Branches(ctx)
}

// Tags returns the vault's tags, by name.
func (a *App) Tags(ctx context.Context) ([]cairn.Ref, error) {
	return a.v.Store.Tags(ctx)
}

// CreateBranch makes the branch name at the commit from resolves to
// (default: Branch()) and returns its ref. Errors: no principal
// (EUNAUTHORIZED); a bad name or a name taken by a tag (EINVALID); a
// branch that exists (ECONFLICT); a from that resolves to nothing
// (ENOTFOUND).
func (a *App) CreateBranch(ctx context.Context, name, from string) (cairn.Ref, error) {
	p, err := Principal(ctx)
	if err != nil {
		return cairn.Ref{}, err
	}
	if strings.HasPrefix(name, admit.ProposalPrefix) {
		return cairn.Ref{}, cairn.Errorf(cairn.EINVALID, "branch names under proposals/ are admission's: it keeps each held proposal there").
			WithHint("Choose another name, like drafts/" + strings.TrimPrefix(name, "proposals/") + ".")
	}
	from = cmp.Or(from, a.Branch())
	at, err := a.v.Store.Resolve(ctx, from)
	if err != nil {
		return cairn.Ref{}, err
	}
	if err := a.v.Store.SetBranch(ctx, name, cairn.Hash{}, at, p, "branch from "+from); err != nil {
		return cairn.Ref{}, err
	}
	return cairn.Ref{Name: name, Kind: cairn.RefBranch, Hash: at, Updated: a.now()}, nil
}

// DeleteBranch removes the branch name and returns the commit it was at.
// With a non-zero expected, only if the branch is still there
// (compare-and-swap); a zero expected deletes it wherever it is. Errors:
// no principal (EUNAUTHORIZED); main (EINVALID: it cannot be deleted); a
// branch that does not exist (ENOTFOUND); a branch a working tree holds,
// one not at expected, or one that moved meanwhile (ECONFLICT, with a
// hint; a stale expected carries a *Moved with the head).
func (a *App) DeleteBranch(ctx context.Context, name string, expected cairn.Hash) (cairn.Hash, error) {
	p, err := Principal(ctx)
	if err != nil {
		return cairn.Hash{}, err
	}
	if name == admit.Branch {
		return cairn.Hash{}, cairn.Errorf(cairn.EINVALID, "main cannot be deleted")
	}
	head, err := a.v.Store.Head(ctx, name)
	if err != nil {
		return cairn.Hash{}, err
	}
	if !expected.IsZero() && head != expected {
		return cairn.Hash{}, movedError(name, head, expected)
	}
	if err := a.v.Store.SetBranch(ctx, name, head, cairn.Hash{}, p, "delete"); err != nil {
		return cairn.Hash{}, err
	}
	return head, nil
}

// CreateTag makes the tag name at the commit rev resolves to (default:
// Branch()), with message kept in the ref log, and returns its ref. Tags
// never move. Errors: no principal (EUNAUTHORIZED); a bad name or a name
// taken by a branch (EINVALID); a tag that exists (ECONFLICT); a rev that
// resolves to nothing (ENOTFOUND).
func (a *App) CreateTag(ctx context.Context, name, rev, message string) (cairn.Ref, error) {
	p, err := Principal(ctx)
	if err != nil {
		return cairn.Ref{}, err
	}
	at, err := a.v.Store.Resolve(ctx, cmp.Or(rev, a.Branch()))
	if err != nil {
		return cairn.Ref{}, err
	}
	if err := a.v.Store.CreateTag(ctx, name, at, p, message); err != nil {
		return cairn.Ref{}, err
	}
	return cairn.Ref{Name: name, Kind: cairn.RefTag, Hash: at, Updated: a.now()}, nil
}

// MergeRequest asks to merge one branch into another.
type MergeRequest struct {
	// Branch is the branch whose changes are brought in (required).
	Branch string `json:"branch"`
	// Into is the branch that receives them. Default: Branch().
	Into string `json:"into,omitempty"`
	// Message is the merge commit's message. Default "merge BRANCH into
	// INTO".
	Message string `json:"message,omitempty"`
}

// MergeResult is what a merge did.
type MergeResult struct {
	Branch string `json:"branch"`
	Into   string `json:"into"`
	// Commit is Into's head afterwards: the merge commit, the head Into
	// was fast-forwarded to, or its unchanged head (UpToDate). Nil when
	// nothing was applied: Conflicts, or admission did not admit it.
	Commit *cairn.Commit `json:"commit,omitempty"`
	// UpToDate is set when Into had everything in Branch already.
	UpToDate bool `json:"up_to_date,omitempty"`
	// FastForward is set when Into only moved to Branch's head.
	FastForward bool `json:"fast_forward,omitempty"`
	// Conflicts are what could not be merged; nothing was applied.
	Conflicts []cairn.Conflict `json:"conflicts,omitempty"`
	// Admission is what admission decided, for a merge into main.
	Admission *admit.Outcome `json:"admission,omitempty"`
	// Sync is what bringing Into's working trees to the result did.
	Sync *worktree.SyncReport `json:"sync,omitempty"`
}

// Merge brings the changes of req.Branch since it split off into
// req.Into. Changes to different files combine; a file changed on both
// sides is merged structurally. It does nothing when Into has everything
// (UpToDate) and fast-forwards when Into is an ancestor of Branch, except
// into main: a merge into main goes through admission (route "merge") and
// is never a fast-forward, the admitting commit recording the decision.
// Into's working trees are then brought to its head.
//
// A merge that conflicts, or that admission holds or rejects, is not an
// error: the result has no commit and says why. Errors: no principal
// (EUNAUTHORIZED); a branch that does not exist (ENOTFOUND); Into moved
// meanwhile (ECONFLICT); the vault busy with another process
// (EUNAVAILABLE).
func (a *App) Merge(ctx context.Context, req MergeRequest) (*MergeResult, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if req.Branch == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "merge: name the branch to merge").WithHint("Try: cairn branch")
	}
	res := &MergeResult{Branch: req.Branch, Into: cmp.Or(req.Into, a.Branch())}
	if err := branchAuthority(ctx, res.Into); err != nil {
		return nil, err
	}
	defer a.v.MarkBusy("cairn merge " + req.Branch)()
	theirs, err := a.v.Store.Head(ctx, res.Branch)
	if err != nil {
		return nil, err
	}
	ours, err := a.v.Store.Head(ctx, res.Into)
	if err != nil {
		return nil, err
	}
	msg := cmp.Or(req.Message, fmt.Sprintf("merge %s into %s", res.Branch, res.Into))
	if err := a.mergeHeads(ctx, res, ours, theirs, p, msg); err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	if res.Commit == nil {
		return res, nil
	}
	res.Sync = a.syncBranchFolders(ctx, res.Into)
	return res, nil
}

// mergeHeads merges theirs into res.Into (at ours) and fills in res.
func (a *App) mergeHeads(ctx context.Context, res *MergeResult, ours, theirs cairn.Hash, p cairn.Principal, msg string) error {
	s := a.v.Store
	base, err := s.MergeBase(ctx, ours, theirs)
	if err != nil {
		return err
	}
	toMain := res.Into == admit.Branch
	switch {
	case base == theirs:
		res.UpToDate = true
		res.Commit, err = s.ReadCommit(ctx, ours)
		return err
	case base == ours && !toMain:
		if err := s.SetBranch(ctx, res.Into, ours, theirs, p, msg+" (fast-forward)"); err != nil {
			return err
		}
		res.FastForward = true
		res.Commit, err = s.ReadCommit(ctx, theirs)
		return err
	}
	bt, err := a.TreeOf(ctx, base)
	if err != nil {
		return err
	}
	ot, err := a.TreeOf(ctx, ours)
	if err != nil {
		return err
	}
	tt, err := a.TreeOf(ctx, theirs)
	if err != nil {
		return err
	}
	b := s.NewBatch()
	mr, err := b.MergeTrees(ctx, bt, ot, tt, nil)
	if err != nil {
		return err
	}
	if len(mr.Conflicts) > 0 {
		res.Conflicts = mr.Conflicts
		return nil
	}
	if toMain {
		out, err := a.submit(ctx, submission{
			Route: "merge", Base: ours, Tree: mr.Tree, Batch: b, Parents: []cairn.Hash{theirs},
			Message: msg, AllowEmpty: true,
		})
		if err != nil {
			return err
		}
		res.Admission, res.Commit, res.Conflicts = out, out.Commit, out.Conflicts
		return nil
	}
	res.Commit, err = s.Commit(ctx, b, store.CommitRequest{
		Branch: res.Into, Expected: ours, Parents: []cairn.Hash{ours, theirs}, Tree: mr.Tree,
		Principal: p, Message: msg, AllowEmpty: true,
	})
	return err
}

// RevertRequest asks to undo a commit.
type RevertRequest struct {
	// Commit is the revision to undo (required).
	Commit string `json:"commit"`
	// Branch is the branch to revert on. Default: Branch().
	Branch string `json:"branch,omitempty"`
}

// RevertResult is what a revert did.
type RevertResult struct {
	// Reverted is the commit undone.
	Reverted *cairn.Commit `json:"reverted"`
	Branch   string        `json:"branch"`
	// Commit is the commit that undoes it; Branch's unchanged head when
	// there was nothing to undo (Nothing); nil when nothing was applied
	// (Conflicts, or admission did not admit it).
	Commit *cairn.Commit `json:"commit,omitempty"`
	// Nothing is set when later commits have undone Reverted already.
	Nothing bool `json:"nothing,omitempty"`
	// Conflicts are the later changes that conflict with undoing it.
	Conflicts []cairn.Conflict `json:"conflicts,omitempty"`
	// Admission is what admission decided, for a revert on main.
	Admission *admit.Outcome `json:"admission,omitempty"`
	// Sync is what bringing Branch's working trees to the result did.
	Sync *worktree.SyncReport `json:"sync,omitempty"`
}

// Revert makes a commit on req.Branch that undoes what req.Commit changed,
// merging three-way so later changes stay. log.md is left as the branch
// has it (reverting an ingest does not unwrite its entry). On main the
// revert goes through admission (route "revert"). The branch's working
// trees are then brought to its head.
//
// Conflicts, and a revert admission holds or rejects, are not errors: the
// result has no commit and says why. Errors: no principal
// (EUNAUTHORIZED); a revision or branch that does not exist (ENOTFOUND);
// the first commit, or a commit outside the branch's history (EINVALID,
// with a hint); the branch moved meanwhile (ECONFLICT).
func (a *App) Revert(ctx context.Context, req RevertRequest) (*RevertResult, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	res := &RevertResult{Branch: cmp.Or(req.Branch, a.Branch())}
	if err := branchAuthority(ctx, res.Branch); err != nil {
		return nil, err
	}
	target, err := a.ResolveCommit(ctx, req.Commit)
	if err != nil {
		return nil, err
	}
	res.Reverted = target
	if len(target.Parents) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is the first commit; there is nothing before it to go back to", target.Hash.Short())
	}
	head, err := a.v.Store.Head(ctx, res.Branch)
	if err != nil {
		return nil, err
	}
	// A revert undoes the branch's own history: undoing a commit of
	// another line of history would bring in content the branch never
	// had (its parent's files), unseen by admission's import and merge
	// rules.
	if on, err := a.v.Store.IsAncestor(ctx, target.Hash, head); err != nil {
		return nil, err
	} else if !on {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is not in the history of %s; a revert undoes a commit of the branch itself", target.Hash.Short(), res.Branch).
			WithHint("To bring changes from another branch, cairn merge BRANCH; cairn log lists the branch's commits.")
	}
	parentTree, err := a.TreeOf(ctx, target.Parents[0])
	if err != nil {
		return nil, err
	}
	headTree, err := a.TreeOf(ctx, head)
	if err != nil {
		return nil, err
	}
	// log.md is the vault's history: a revert keeps main's log as it is,
	// so the merge leaves it out rather than conflict on it.
	b := a.v.Store.NewBatch()
	mr, err := b.MergeTrees(ctx, target.Tree, headTree, parentTree, &store.MergeOptions{Keep: []string{"log.md"}})
	if err != nil {
		return nil, err
	}
	if len(mr.Conflicts) > 0 {
		res.Conflicts = mr.Conflicts
		return res, nil
	}
	if mr.Tree == headTree {
		// Later commits have undone it already: nothing to commit.
		res.Nothing = true
		res.Commit, err = a.v.Store.ReadCommit(ctx, head)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	msg := fmt.Sprintf("revert %s: %s", target.Hash.Short(), revertSubject(target.Message))
	meta := map[string]string{"revert": target.Hash.String()}
	if res.Branch == admit.Branch {
		out, err := a.submit(ctx, submission{Route: "revert", Base: head, Tree: mr.Tree, Batch: b, Message: msg, Meta: meta})
		if err != nil {
			return nil, err
		}
		res.Admission, res.Commit, res.Conflicts = out, out.Commit, out.Conflicts
		if !out.Admitted() {
			return res, nil
		}
	} else if res.Commit, err = a.v.Store.Commit(ctx, b, store.CommitRequest{
		Branch: res.Branch, Expected: head, Tree: mr.Tree, Principal: p, Message: msg, Meta: meta,
	}); err != nil {
		return nil, err
	}
	res.Sync = a.syncBranchFolders(ctx, res.Branch)
	return res, nil
}

// revertSubject is the first line of a commit message.
func revertSubject(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
