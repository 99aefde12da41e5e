package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"cairn"
	"cairn/admit"
	"cairn/store"
	"cairn/worktree"
)

// CommitEditsRequest asks to commit the local edits of the working tree
// the vault was opened from.
type CommitEditsRequest struct {
	// Message says why (required).
	Message string `json:"message"`
	// Paths limits the commit to these files or folders, by their paths
	// from the working tree's root; only they are looked at. Default:
	// every local edit.
	Paths []string `json:"paths,omitempty"`
}

// CommitEditsResult is what a commit of local edits did: the working
// tree's result (the commit, the files, the conflicts, the folder's sync)
// and, on main, what admission decided.
type CommitEditsResult struct {
	// Branch is the working tree's branch.
	Branch string `json:"branch"`
	worktree.CommitResult
	// Admission is what admission decided, for a commit to main. The
	// edits stay in the folder as local edits when it did not admit them.
	Admission *admit.Outcome `json:"admission,omitempty"`
}

// CommitEdits records the local edits of the working tree as a commit on
// its branch. If the branch moved since the tree's base, the edits are
// merged three-way onto the new head; the folder then holds the committed
// result. On main the commit goes through admission (route "commit").
//
// Conflicts, and edits admission holds or rejects, are not errors: the
// result has no commit and says why. Errors: no principal
// (EUNAUTHORIZED); no message, or a vault opened outside every working
// tree (EINVALID, with a hint); the vault busy with another process
// (EUNAVAILABLE, naming it).
func (a *App) CommitEdits(ctx context.Context, req CommitEditsRequest) (*CommitEditsResult, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if req.Message == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "commit needs a message: cairn commit -m \"why\"")
	}
	t, err := a.NeedTree()
	if err != nil {
		return nil, err
	}
	defer a.v.MarkBusy("cairn commit")()
	wreq := worktree.CommitRequest{Message: req.Message, Paths: req.Paths, Principal: p}
	res := &CommitEditsResult{Branch: t.Branch}
	if t.Branch == admit.Branch {
		wreq.Land = a.landOnMain("commit", req.Message, &res.Admission)
	}
	cr, err := a.v.Trees.Commit(ctx, t, wreq)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	res.CommitResult = *cr
	return res, nil
}

// AdoptResult is what Adopt did.
type AdoptResult struct {
	// Commit is main's first commit; nil when admission did not admit the
	// files already in the folder.
	Commit *cairn.Commit `json:"commit,omitempty"`
	// Changes are the files adopted (none for a bare vault or an empty
	// folder: the first commit is then empty).
	Changes []worktree.Change `json:"changes"`
	// Skipped are the folder's files that cannot be vault files.
	Skipped []worktree.Skip `json:"skipped"`
	// Admission is what admission decided about the adopted files; nil
	// when there were none.
	Admission *admit.Outcome `json:"admission,omitempty"`
}

// Adopt makes main's first commit, through admission, right after Init:
// the files already in the vault's folder (route "commit"; they may hold
// a contract, whose findings say which agent command it sets), or, when
// there are none, an empty commit (route "init") so that main exists.
// message defaults to "adopt FOLDER" and "init".
//
// Files admission holds or rejects are not an error: the result has no
// commit. Errors: no principal (EUNAUTHORIZED); main has commits already
// (ECONFLICT).
func (a *App) Adopt(ctx context.Context, message string) (*AdoptResult, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if head, err := a.v.Store.Head(ctx, admit.Branch); err == nil {
		return nil, cairn.Errorf(cairn.ECONFLICT, "main has commits already (at %s); adopting makes a vault's first commit", head.Short()).
			WithHint("Commit the folder's files with cairn commit -m \"why\"")
	} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, err
	}
	res := &AdoptResult{}
	t, err := a.v.Main(ctx)
	if err != nil {
		return nil, err
	}
	if t != nil {
		// The folder's files are read once, by the commit: a status first
		// would read and hash every file, and the commit read them again.
		msg := cmp.Or(message, "adopt "+filepath.Base(a.v.Root))
		cr, err := a.v.Trees.Commit(ctx, t, worktree.CommitRequest{
			Message: msg, Principal: p, Land: a.landOnMain("commit", msg, &res.Admission),
		})
		switch {
		case err == nil:
			res.Commit, res.Changes, res.Skipped = cr.Commit, cr.Changes, cr.Skipped
			return res, nil
		case !errors.Is(err, worktree.ErrNothingToCommit):
			return nil, err
		}
		// No file to adopt: the folder's skips, and an empty first commit.
		st, err := a.v.Trees.Status(ctx, t)
		if err != nil {
			return nil, err
		}
		res.Skipped = st.Skipped
	}
	out, err := a.submit(ctx, submission{Route: "init", Tree: store.EmptyTree, Message: cmp.Or(message, "init"), AllowEmpty: true})
	if err != nil {
		return nil, err
	}
	if !out.Admitted() {
		return nil, fmt.Errorf("init: the empty first commit was not admitted (%s)", out.Verdict)
	}
	res.Commit = out.Commit
	if t != nil {
		if _, err := a.v.Trees.Sync(ctx, t, out.Commit.Hash); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// FileEdit is one change of a changeset: new content for a path, or its
// deletion.
type FileEdit struct {
	// Path is the vault path (cairn.CleanPath).
	Path string `json:"path"`
	// Content is the file's new content (a new file, or a replacement).
	Content []byte `json:"content,omitempty"`
	// Delete removes the file; Content must then be empty.
	Delete bool `json:"delete,omitempty"`
}

// ChangesRequest is a changeset made on an expected head of a branch.
type ChangesRequest struct {
	// Branch is the branch to change. Default: Branch(). A proposal is
	// always for main.
	Branch string `json:"branch,omitempty"`
	// Base is the head the changes were made on (required): if the
	// branch is elsewhere, nothing changes (compare-and-swap).
	Base cairn.Hash `json:"base"`
	// Changes are the edits, each path at most once (at least one).
	Changes []FileEdit `json:"changes"`
	// Message says why (required).
	Message string `json:"message"`
	// files, set by Write, makes the changeset a check of files rather
	// than of the head: it lands on main wherever main is, merged onto it,
	// provided each file named is still at the hash given ("" absent) in
	// the transaction that admits it; a *StaleFile error otherwise.
	files map[string]string
}

// ChangesResult is what a changeset did.
type ChangesResult struct {
	Branch string     `json:"branch"`
	Base   cairn.Hash `json:"base"`
	// Commit is the commit that holds the changes; nil when admission did
	// not admit them (a proposal, or changes it held or rejected).
	Commit *cairn.Commit `json:"commit,omitempty"`
	// Admission is what admission decided, for changes to main; its
	// Proposal names the proposal to review when it was not admitted.
	Admission *admit.Outcome `json:"admission,omitempty"`
	// Sync is what bringing the branch's working trees to it did.
	Sync *worktree.SyncReport `json:"sync,omitempty"`
}

// CommitChanges applies a changeset to req.Branch if, and only if, its
// head is still req.Base. On main the changes go through admission (route
// "api") like every other change, which admits, holds or rejects them;
// the branch's working trees are then brought to its head.
//
// Changes admission holds or rejects are not an error: the result has no
// commit and names the proposal. Errors, all leaving the vault as it was:
// no principal (EUNAUTHORIZED); no message, no changes, no base, a bad or
// repeated path, content on a deletion, a file over the size limit, or a
// file where the tree has a folder (EINVALID); deleting a file that is
// not there, or a branch that does not exist (ENOTFOUND); the branch's
// head is not req.Base, checked again in the transaction that writes
// (ECONFLICT, with a hint); changes that change nothing (EINVALID,
// wrapping admit.ErrEmpty on main).
func (a *App) CommitChanges(ctx context.Context, req ChangesRequest) (*ChangesResult, error) {
	return a.changeset(ctx, req, false)
}

// ProposeChanges keeps a changeset made on main's head req.Base as a
// proposal for a person's review, whatever admission's gates say (their
// findings are kept, and a rejecting finding still rejects): the result's
// Admission.Proposal is the held proposal, and main does not move. Errors
// are those of CommitChanges, and a branch other than main (EINVALID).
func (a *App) ProposeChanges(ctx context.Context, req ChangesRequest) (*ChangesResult, error) {
	return a.changeset(ctx, req, true)
}

func (a *App) changeset(ctx context.Context, req ChangesRequest, propose bool) (*ChangesResult, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	res := &ChangesResult{Branch: cmp.Or(req.Branch, a.Branch()), Base: req.Base}
	if propose {
		res.Branch = cmp.Or(req.Branch, admit.Branch)
		if res.Branch != admit.Branch {
			return nil, cairn.Errorf(cairn.EINVALID, "a proposal is a change to main, not to %s", res.Branch).
				WithHint("Commit the changes to " + res.Branch + " instead, and merge it into main when it is ready.")
		}
	}
	if err := branchAuthority(ctx, res.Branch); err != nil {
		return nil, err
	}
	changes, err := a.fileChanges(req)
	if err != nil {
		return nil, err
	}
	head, err := a.v.Store.Head(ctx, res.Branch)
	if err != nil {
		return nil, err
	}
	if head != req.Base && req.files == nil {
		return nil, movedError(res.Branch, head, req.Base)
	}
	head = req.Base
	baseTree, err := a.TreeOf(ctx, head)
	if err != nil {
		return nil, err
	}
	b := a.v.Store.NewBatch()
	tree, err := b.Edit(ctx, baseTree, changes)
	if err != nil {
		return nil, err
	}
	if tree == baseTree {
		return nil, cairn.Errorf(cairn.EINVALID, "the changes leave %s as it is: %w", res.Branch, admit.ErrEmpty).
			WithHint("Send only files whose content differs from the base.")
	}
	if res.Branch != admit.Branch {
		res.Commit, err = a.v.Store.Commit(ctx, b, store.CommitRequest{
			Branch: res.Branch, Expected: req.Base, Tree: tree, Principal: p, Message: req.Message,
		})
		if err != nil {
			if cairn.ErrorCode(err) == cairn.ECONFLICT {
				return nil, a.moved(ctx, res.Branch, req.Base, nil)
			}
			return nil, a.v.ExplainBusy(err)
		}
	} else {
		s := submission{
			Route: "api", Base: req.Base, BaseTree: baseTree, Tree: tree, Batch: b, Message: req.Message, Propose: propose,
			Within: func(ctx context.Context, tx *store.Tx, out *admit.Outcome) error {
				return checkBase(ctx, tx, out, req.Base)
			},
			// A changeset lands on its base or not at all: a head that
			// moved is refused before the gates run.
			OnHead: func(ctx context.Context, head cairn.Hash) error {
				if head != req.Base {
					return movedError(res.Branch, head, req.Base)
				}
				return nil
			},
		}
		if req.files != nil {
			// Checked by file: admission merges the change onto a head
			// that moved, and the files must still be as they were read.
			s.OnHead = nil
			s.Within = func(ctx context.Context, tx *store.Tx, out *admit.Outcome) error {
				return checkFiles(ctx, tx, out, req.files)
			}
		}
		out, err := a.submit(ctx, s)
		if err != nil {
			return nil, err
		}
		if len(out.Conflicts) > 0 {
			// A person's change that conflicts with a main that moved is
			// returned unrecorded.
			return nil, a.moved(ctx, res.Branch, req.Base, out.Conflicts)
		}
		res.Admission, res.Commit = out, out.Commit
		if !out.Admitted() {
			return res, nil
		}
	}
	res.Sync = a.syncBranchFolders(ctx, res.Branch)
	return res, nil
}

// fileChanges checks the edits of req and returns them as the store's
// changes; nothing is read or written.
func (a *App) fileChanges(req ChangesRequest) ([]store.FileChange, error) {
	if req.Message == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "the changes need a message that says why")
	}
	if req.Base.IsZero() {
		return nil, cairn.Errorf(cairn.EINVALID, "the changes need the base they were made on: the branch's head").
			WithHint("cairn branch lists each branch's head; send the one the changes were made on.")
	}
	if len(req.Changes) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "the changeset holds no changes")
	}
	limit := cmp.Or(a.v.Trees.MaxFileSize, worktree.DefaultMaxFileSize)
	seen := map[string]string{}
	out := make([]store.FileChange, 0, len(req.Changes))
	for _, e := range req.Changes {
		p, err := cairn.CleanPath(e.Path)
		if err != nil {
			return nil, err
		}
		if other, ok := seen[cairn.FoldPath(p)]; ok {
			return nil, cairn.Errorf(cairn.EINVALID, "path %s: changed twice in one changeset (as %s)", cairn.Quote(p), cairn.Quote(other)).
				WithHint("Send each file once.")
		}
		seen[cairn.FoldPath(p)] = p
		switch {
		case e.Delete && len(e.Content) > 0:
			return nil, cairn.Errorf(cairn.EINVALID, "path %s: a deletion has no content", cairn.Quote(p))
		case int64(len(e.Content)) > limit:
			return nil, cairn.Errorf(cairn.EINVALID, "path %s: %d MiB is over the %d MiB limit", cairn.Quote(p), len(e.Content)>>20, limit>>20)
		}
		out = append(out, store.FileChange{Path: p, Delete: e.Delete, Data: e.Content})
	}
	return out, nil
}

// checkBase refuses, inside the transaction that records an outcome, a
// change to main whose head is no longer base: admission would merge it
// onto the new head, which a compare-and-swap must not do.
func checkBase(ctx context.Context, tx *store.Tx, out *admit.Outcome, base cairn.Hash) error {
	head, err := judgedHead(ctx, tx, out)
	if err != nil {
		return err
	}
	if head != base || out.Rebased || len(out.Conflicts) > 0 {
		return movedError(admit.Branch, head, base)
	}
	return nil
}

// judgedHead is main's head as admission found it, inside the transaction
// that records out: the head the admitting commit follows, or main's head
// when the change was not admitted (zero: main was empty).
func judgedHead(ctx context.Context, tx *store.Tx, out *admit.Outcome) (cairn.Hash, error) {
	if out.Admitted() {
		if len(out.Commit.Parents) > 0 {
			return out.Commit.Parents[0], nil
		}
		return cairn.Hash{}, nil
	}
	h, err := tx.Head(ctx, admit.Branch)
	if err != nil {
		return cairn.Hash{}, fmt.Errorf("check main's head: %w", err)
	}
	return h, nil
}

// checkFiles fails with a *StaleFile when a file of files is not at its
// hash ("" absent) in main's head as admission found it (judgedHead).
func checkFiles(ctx context.Context, tx *store.Tx, out *admit.Outcome, files map[string]string) error {
	head, err := judgedHead(ctx, tx, out)
	if err != nil {
		return err
	}
	c, err := tx.ReadCommit(ctx, head)
	if err != nil {
		return fmt.Errorf("read main's head: %w", err)
	}
	for _, path := range slices.Sorted(maps.Keys(files)) {
		cur := ""
		e, err := tx.Get(ctx, c.Tree, path)
		switch {
		case err == nil:
			cur = e.Blob.String()
		case cairn.ErrorCode(err) != cairn.ENOTFOUND:
			return err
		}
		if cur != files[path] {
			return staleError(&StaleFile{Path: path, Expected: files[path], Current: cur, Head: head.String()})
		}
	}
	if len(out.Conflicts) > 0 {
		return movedError(admit.Branch, head, cairn.Hash{}, out.Conflicts...)
	}
	return nil
}

// Moved is the cause of the ECONFLICT error of a change whose base is no
// longer its branch's head: the head it is at, and, when the change did
// not merge onto it, what conflicts.
type Moved struct {
	Head      cairn.Hash       `json:"head"`
	Conflicts []cairn.Conflict `json:"conflicts,omitempty"`
}

func (m *Moved) Error() string { return "the branch moved to " + m.Head.Short() }

// movedError says that branch is not at base but at head (zero: unknown),
// with conflicts when the change did not merge onto it; its cause is a
// *Moved.
func movedError(branch string, head, base cairn.Hash, conflicts ...cairn.Conflict) error {
	at := ""
	if !head.IsZero() {
		at = " (it is at " + head.Short() + ")"
	}
	e := cairn.Errorf(cairn.ECONFLICT, "%s moved since %s, the base the changes were made on%s; nothing was changed", branch, base.Short(), at).
		WithHint("Read the branch's head again (cairn branch), apply the changes to it, and send them with that base.")
	e.Err = &Moved{Head: head, Conflicts: conflicts}
	return e
}

// moved is movedError with the branch's head read now.
func (a *App) moved(ctx context.Context, branch string, base cairn.Hash, conflicts []cairn.Conflict) error {
	head, _ := a.v.Store.Head(ctx, branch) // zero when it cannot be read: the error says less
	return movedError(branch, head, base, conflicts...)
}
