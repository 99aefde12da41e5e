package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/admit"
	"cairn/index"
	"cairn/store"
	"cairn/vault"
	"cairn/worktree"
)

func (a *cli) branchCmd() *cobra.Command {
	var del bool
	cmd := &cobra.Command{
		Use:   "branch [NAME [FROM]]",
		Short: "List branches, make one, or delete one",
		Long: `Branch with no arguments lists the branches. With NAME it makes a branch at
FROM (default: the working tree's branch head). With --delete it removes the
branch NAME; main cannot be deleted, nor a branch that a working tree holds
(remove the tree first: cairn worktree remove DIR).`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, t, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			p, err := a.principal()
			if err != nil {
				return err
			}
			switch {
			case del:
				if len(args) != 1 {
					return usageError("branch --delete takes one branch name")
				}
				if args[0] == index.Branch {
					return cairn.Errorf(cairn.EINVALID, "main cannot be deleted")
				}
				head, err := v.Store.Head(a.ctx, args[0])
				if err != nil {
					return err
				}
				if err := v.Store.SetBranch(a.ctx, args[0], head, cairn.Hash{}, p, "delete"); err != nil {
					return err
				}
				return a.emit(items([]map[string]any{{"id": args[0], "deleted": true, "was": head}}), func(w io.Writer) {
					fmt.Fprintf(w, "Deleted branch %s (was %s)\n", args[0], head.Short())
				})
			case len(args) >= 1:
				from := branchOf(t)
				if len(args) == 2 {
					from = args[1]
				}
				at, err := v.Store.Resolve(a.ctx, from)
				if err != nil {
					return err
				}
				if err := v.Store.SetBranch(a.ctx, args[0], cairn.Hash{}, at, p, "branch from "+from); err != nil {
					return err
				}
				return a.emit(items([]map[string]any{{"id": args[0], "name": args[0], "commit": at}}), func(w io.Writer) {
					fmt.Fprintf(w, "Made branch %s at %s\n", args[0], at.Short())
				})
			}
			refs, err := v.Store.Branches(a.ctx)
			if err != nil {
				return err
			}
			return a.emit(refItems(refs), func(w io.Writer) {
				for _, r := range refs {
					mark := " "
					if r.Name == branchOf(t) {
						mark = "*"
					}
					fmt.Fprintf(w, "%s %-24s %s\n", mark, r.Name, r.Hash.Short())
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&del, "delete", "d", false, "delete the branch")
	return cmd
}

func refItems(refs []cairn.Ref) list {
	type item struct {
		ID string `json:"id"`
		cairn.Ref
	}
	var out []item
	for _, r := range refs {
		out = append(out, item{ID: r.Name, Ref: r})
	}
	return items(out)
}

func (a *cli) tagCmd() *cobra.Command {
	var message string
	cmd := &cobra.Command{
		Use:   "tag [NAME [REF]]",
		Short: "List tags, or make one (tags never move)",
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, t, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			if len(args) == 0 {
				tags, err := v.Store.Tags(a.ctx)
				if err != nil {
					return err
				}
				return a.emit(refItems(tags), func(w io.Writer) {
					for _, r := range tags {
						fmt.Fprintf(w, "%-24s %s\n", r.Name, r.Hash.Short())
					}
				})
			}
			p, err := a.principal()
			if err != nil {
				return err
			}
			rev := branchOf(t)
			if len(args) == 2 {
				rev = args[1]
			}
			at, err := v.Store.Resolve(a.ctx, rev)
			if err != nil {
				return err
			}
			if err := v.Store.CreateTag(a.ctx, args[0], at, p, message); err != nil {
				return err
			}
			return a.emit(items([]map[string]any{{"id": args[0], "name": args[0], "commit": at}}), func(w io.Writer) {
				fmt.Fprintf(w, "Tagged %s as %s\n", at.Short(), args[0])
			})
		},
	}
	cmd.Flags().StringVarP(&message, "message", "m", "", "a note kept in the ref log")
	return cmd
}

func (a *cli) mergeCmd() *cobra.Command {
	var into, message string
	cmd := &cobra.Command{
		Use:   "merge BRANCH [--into B]",
		Short: "Merge a branch into another (default: the working tree's)",
		Long: `Merge brings the changes of BRANCH since it split off into B. Changes to
different files combine; a file changed on both sides is merged structurally
(Markdown: frontmatter field by field, body by lines, list items as a union;
log.md as a union of entries). When something cannot be merged, the conflicts
are listed, nothing is applied, and the exit code is 1. A merge into main goes
through admission like any change; one that changes the vault's contract
(cairn.yaml, eva.json, EVA.md, AGENTS.md, CLAUDE.md) is held for review.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, t, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			p, err := a.principal()
			if err != nil {
				return err
			}
			if into == "" {
				into = branchOf(t)
			}
			defer v.MarkBusy("cairn merge " + args[0])()
			theirs, err := v.Store.Head(a.ctx, args[0])
			if err != nil {
				return err
			}
			ours, err := v.Store.Head(a.ctx, into)
			if err != nil {
				return err
			}
			msg := cmpOr(message, fmt.Sprintf("merge %s into %s", args[0], into))
			var outcome *admit.Outcome
			c, conflicts, err := mergeCommits(a, v, into, ours, theirs, p, msg, &outcome)
			if err != nil {
				return v.ExplainBusy(err)
			}
			if outcome != nil && !outcome.Admitted() && len(conflicts) == 0 {
				return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) { a.refused(w, outcome) })
			}
			if len(conflicts) > 0 {
				a.code = exitRefused
				return a.emit(conflictList(conflicts), func(w io.Writer) {
					fmt.Fprintf(w, "Not merged: %s between %s and %s; nothing was applied.\n", plural(len(conflicts), "conflict"), args[0], into)
					printConflicts(w, conflicts)
				})
			}
			rep, err := syncBranch(a, v, into)
			if err != nil {
				return err
			}
			item := map[string]any{"id": c.Hash, "commit": c, "sync": rep}
			if outcome != nil {
				item["admission"] = outcomeItem(outcome)
			}
			return a.emit(items([]map[string]any{item}), func(w io.Writer) {
				if c.Hash == ours {
					fmt.Fprintf(w, "%s already has everything in %s.\n", into, args[0])
					return
				}
				fmt.Fprintf(w, "Merged %s into %s: %s\n", args[0], into, c.Hash.Short())
				if outcome != nil {
					printAdmitted(w, outcome)
				}
				printSync(w, rep)
			})
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "the branch to merge into (default: the working tree's branch)")
	cmd.Flags().StringVarP(&message, "message", "m", "", "the merge commit's message")
	return cmd
}

// mergeCommits merges theirs into branch (at ours) and commits the result
// with both parents. It fast-forwards when ours is an ancestor of theirs,
// and does nothing when theirs is an ancestor of ours. Into main, the merge
// goes through admission (never a fast-forward: the admitting commit
// records the decision), and *outcome receives the verdict; a change not
// admitted returns a nil commit.
func mergeCommits(a *cli, v *vault.Vault, branch string, ours, theirs cairn.Hash, p cairn.Principal, msg string, outcome **admit.Outcome) (*cairn.Commit, []cairn.Conflict, error) {
	s := v.Store
	base, err := s.MergeBase(a.ctx, ours, theirs)
	if err != nil {
		return nil, nil, err
	}
	toMain := branch == admit.Branch
	switch {
	case base == theirs:
		c, err := s.ReadCommit(a.ctx, ours)
		return c, nil, err
	case base == ours && !toMain:
		if err := s.SetBranch(a.ctx, branch, ours, theirs, p, msg+" (fast-forward)"); err != nil {
			return nil, nil, err
		}
		c, err := s.ReadCommit(a.ctx, theirs)
		return c, nil, err
	}
	bt, err := treeOf(a, v, base)
	if err != nil {
		return nil, nil, err
	}
	ot, err := treeOf(a, v, ours)
	if err != nil {
		return nil, nil, err
	}
	tt, err := treeOf(a, v, theirs)
	if err != nil {
		return nil, nil, err
	}
	b := s.NewBatch()
	res, err := b.MergeTrees(a.ctx, bt, ot, tt, nil)
	if err != nil || len(res.Conflicts) > 0 {
		return nil, res.Conflicts, err
	}
	if toMain {
		out, err := v.Admit.Submit(a.ctx, admit.Request{
			Route: "merge", Base: ours, Tree: res.Tree, Batch: b, Parents: []cairn.Hash{theirs},
			Principal: p, Message: msg, AllowEmpty: true,
		})
		if err != nil {
			return nil, nil, err
		}
		*outcome = out
		return out.Commit, out.Conflicts, nil
	}
	c, err := s.Commit(a.ctx, b, store.CommitRequest{
		Branch: branch, Expected: ours, Parents: []cairn.Hash{ours, theirs}, Tree: res.Tree,
		Principal: p, Message: msg, AllowEmpty: true,
	})
	return c, nil, err
}

// syncBranch brings every working tree of branch to its head.
func syncBranch(a *cli, v *vault.Vault, branch string) (*worktree.SyncReport, error) {
	trees, err := v.Trees.List(a.ctx)
	if err != nil {
		return nil, err
	}
	all := &worktree.SyncReport{}
	for _, t := range trees {
		if t.Branch != branch {
			continue
		}
		rep, err := v.Trees.SyncHead(a.ctx, t)
		if err != nil {
			return nil, err
		}
		all.Updated = append(all.Updated, rep.Updated...)
		all.LeftAlone = append(all.LeftAlone, rep.LeftAlone...)
	}
	return all, nil
}

func (a *cli) revertCmd() *cobra.Command {
	var branch string
	cmd := &cobra.Command{
		Use:   "revert COMMIT",
		Short: "Make a commit that undoes COMMIT",
		Long: `Revert makes a new commit on the branch (default: the working tree's) that
undoes what COMMIT changed, merging three-way so later changes stay. History
is kept: the reverted commit remains, and log.md is left as it is. On main
the revert goes through admission like any change. Conflicts are listed with
exit code 1. When later commits have undone COMMIT already, there is nothing
to revert and no commit is made.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, t, err := a.open()
			if err != nil {
				return err
			}
			defer v.Close()
			p, err := a.principal()
			if err != nil {
				return err
			}
			if branch == "" {
				branch = branchOf(t)
			}
			target, err := commitAt(a, v, args[0])
			if err != nil {
				return err
			}
			if len(target.Parents) == 0 {
				return cairn.Errorf(cairn.EINVALID, "%s is the first commit; there is nothing before it to go back to", target.Hash.Short())
			}
			head, err := v.Store.Head(a.ctx, branch)
			if err != nil {
				return err
			}
			// A revert undoes the branch's own history: undoing a commit
			// of another line of history would bring in content the branch
			// never had (its parent's files), unseen by admission's
			// import and merge rules.
			if on, err := v.Store.IsAncestor(a.ctx, target.Hash, head); err != nil {
				return err
			} else if !on {
				return cairn.Errorf(cairn.EINVALID, "%s is not in the history of %s; a revert undoes a commit of the branch itself", target.Hash.Short(), branch).
					WithHint("To bring changes from another branch, cairn merge BRANCH; cairn log lists the branch's commits.")
			}
			parentTree, err := treeOf(a, v, target.Parents[0])
			if err != nil {
				return err
			}
			headTree, err := treeOf(a, v, head)
			if err != nil {
				return err
			}
			// log.md is the vault's history: a revert keeps main's log as
			// it is (reverting an ingest does not unwrite its entry), so the
			// merge leaves it out rather than conflict on it.
			b := v.Store.NewBatch()
			res, err := b.MergeTrees(a.ctx, target.Tree, headTree, parentTree, &store.MergeOptions{Keep: []string{"log.md"}})
			if err != nil {
				return err
			}
			if len(res.Conflicts) > 0 {
				a.code = exitRefused
				return a.emit(conflictList(res.Conflicts), func(w io.Writer) {
					fmt.Fprintf(w, "Not reverted: later changes conflict with undoing %s.\n", target.Hash.Short())
					printConflicts(w, res.Conflicts)
				})
			}
			if res.Tree == headTree {
				// Later commits have undone it already: nothing to commit.
				c, err := v.Store.ReadCommit(a.ctx, head)
				if err != nil {
					return err
				}
				return a.emit(items([]map[string]any{{"id": c.Hash, "commit": c}}), func(w io.Writer) {
					fmt.Fprintf(w, "Nothing to revert: %s already has none of the changes of %s.\n", branch, target.Hash.Short())
				})
			}
			msg := fmt.Sprintf("revert %s: %s", target.Hash.Short(), firstLine(target.Message))
			meta := map[string]string{"revert": target.Hash.String()}
			var c *cairn.Commit
			var outcome *admit.Outcome
			if branch == admit.Branch {
				outcome, err = v.Admit.Submit(a.ctx, admit.Request{Route: "revert", Base: head, Tree: res.Tree, Batch: b,
					Principal: p, Message: msg, Meta: meta})
				if err != nil {
					return err
				}
				if !outcome.Admitted() {
					if len(outcome.Conflicts) > 0 {
						a.code = exitRefused
						return a.emit(conflictList(outcome.Conflicts), func(w io.Writer) {
							fmt.Fprintf(w, "Not reverted: later changes conflict with undoing %s.\n", target.Hash.Short())
							printConflicts(w, outcome.Conflicts)
						})
					}
					return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) { a.refused(w, outcome) })
				}
				c = outcome.Commit
			} else if c, err = v.Store.Commit(a.ctx, b, store.CommitRequest{
				Branch: branch, Expected: head, Tree: res.Tree, Principal: p, Message: msg, Meta: meta,
			}); err != nil {
				return err
			}
			rep, err := syncBranch(a, v, branch)
			if err != nil {
				return err
			}
			return a.emit(items([]map[string]any{{"id": c.Hash, "commit": c, "sync": rep}}), func(w io.Writer) {
				fmt.Fprintf(w, "Reverted %s on %s: %s\n", target.Hash.Short(), branch, c.Hash.Short())
				if outcome != nil {
					printAdmitted(w, outcome)
				}
				printSync(w, rep)
			})
		},
	}
	cmd.Flags().StringVar(&branch, "branch", "", "the branch to revert on (default: the working tree's)")
	return cmd
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
