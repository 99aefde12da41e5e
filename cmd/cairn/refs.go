package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
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
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			p, err := a.principal()
			if err != nil {
				return err
			}
			ctx := cairn.NewContextWithPrincipal(a.ctx, p)
			switch {
			case del:
				if len(args) != 1 {
					return usageError("branch --delete takes one branch name")
				}
				was, err := c.DeleteBranch(ctx, args[0], cairn.Hash{})
				if err != nil {
					return err
				}
				return a.emit(items([]map[string]any{{"id": args[0], "deleted": true, "was": was}}), func(w io.Writer) {
					fmt.Fprintf(w, "Deleted branch %s (was %s)\n", args[0], was.Short())
				})
			case len(args) >= 1:
				from := ""
				if len(args) == 2 {
					from = args[1]
				}
				ref, err := c.CreateBranch(ctx, args[0], from)
				if err != nil {
					return err
				}
				return a.emit(items([]map[string]any{{"id": ref.Name, "name": ref.Name, "commit": ref.Hash}}), func(w io.Writer) {
					fmt.Fprintf(w, "Made branch %s at %s\n", ref.Name, ref.Hash.Short())
				})
			}
			refs, err := c.Branches(ctx)
			if err != nil {
				return err
			}
			return a.emit(refItems(refs), func(w io.Writer) {
				for _, r := range refs {
					mark := " "
					if r.Name == c.Branch() {
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
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			if len(args) == 0 {
				tags, err := c.Tags(a.ctx)
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
			rev := ""
			if len(args) == 2 {
				rev = args[1]
			}
			ref, err := c.CreateTag(cairn.NewContextWithPrincipal(a.ctx, p), args[0], rev, message)
			if err != nil {
				return err
			}
			return a.emit(items([]map[string]any{{"id": ref.Name, "name": ref.Name, "commit": ref.Hash}}), func(w io.Writer) {
				fmt.Fprintf(w, "Tagged %s as %s\n", ref.Hash.Short(), ref.Name)
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
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			p, err := a.principal()
			if err != nil {
				return err
			}
			res, err := c.Merge(cairn.NewContextWithPrincipal(a.ctx, p), app.MergeRequest{Branch: args[0], Into: into, Message: message})
			if err != nil {
				return err
			}
			outcome := res.Admission
			if outcome != nil && !outcome.Admitted() && len(res.Conflicts) == 0 {
				return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) { a.refused(w, outcome) })
			}
			if len(res.Conflicts) > 0 {
				a.code = exitRefused
				return a.emit(conflictList(res.Conflicts), func(w io.Writer) {
					fmt.Fprintf(w, "Not merged: %s between %s and %s; nothing was applied.\n", plural(len(res.Conflicts), "conflict"), res.Branch, res.Into)
					printConflicts(w, res.Conflicts)
				})
			}
			item := map[string]any{"id": res.Commit.Hash, "commit": res.Commit, "sync": res.Sync}
			if outcome != nil {
				item["admission"] = outcomeItem(outcome)
			}
			return a.emit(items([]map[string]any{item}), func(w io.Writer) {
				if res.UpToDate {
					fmt.Fprintf(w, "%s already has everything in %s.\n", res.Into, res.Branch)
					return
				}
				fmt.Fprintf(w, "Merged %s into %s: %s\n", res.Branch, res.Into, res.Commit.Hash.Short())
				if outcome != nil {
					printAdmitted(w, outcome)
				}
				printSync(w, res.Sync)
			})
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "the branch to merge into (default: the working tree's branch)")
	cmd.Flags().StringVarP(&message, "message", "m", "", "the merge commit's message")
	return cmd
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
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			p, err := a.principal()
			if err != nil {
				return err
			}
			res, err := c.Revert(cairn.NewContextWithPrincipal(a.ctx, p), app.RevertRequest{Commit: args[0], Branch: branch})
			if err != nil {
				return err
			}
			target := res.Reverted.Hash
			outcome := res.Admission
			switch {
			case len(res.Conflicts) > 0:
				a.code = exitRefused
				return a.emit(conflictList(res.Conflicts), func(w io.Writer) {
					fmt.Fprintf(w, "Not reverted: later changes conflict with undoing %s.\n", target.Short())
					printConflicts(w, res.Conflicts)
				})
			case res.Nothing:
				return a.emit(items([]map[string]any{{"id": res.Commit.Hash, "commit": res.Commit}}), func(w io.Writer) {
					fmt.Fprintf(w, "Nothing to revert: %s already has none of the changes of %s.\n", res.Branch, target.Short())
				})
			case outcome != nil && !outcome.Admitted():
				return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) { a.refused(w, outcome) })
			}
			return a.emit(items([]map[string]any{{"id": res.Commit.Hash, "commit": res.Commit, "sync": res.Sync}}), func(w io.Writer) {
				fmt.Fprintf(w, "Reverted %s on %s: %s\n", target.Short(), res.Branch, res.Commit.Hash.Short())
				if outcome != nil {
					printAdmitted(w, outcome)
				}
				printSync(w, res.Sync)
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
