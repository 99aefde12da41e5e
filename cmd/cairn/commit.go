package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
	"cairn/worktree"
)

func (a *cli) commitCmd() *cobra.Command {
	var message string
	cmd := &cobra.Command{
		Use:   "commit -m MESSAGE [PATH...]",
		Short: "Record your local edits (all, or under the given paths)",
		Long: `Commit records the local edits of the working tree as a commit on its
branch. If the branch moved since the working tree's base, the edits are
merged three-way onto the new head (Markdown structurally: frontmatter field
by field, list items as a union); a conflict is listed, nothing is written,
and the exit code is 1. Afterwards the folder holds the committed result.

On main, the commit goes through admission like every other change: a
change to raw/ or log.md, a script or a misplaced file is held for review
(exit 1, with the proposal's id); new lint findings are admitted and listed.

With paths (files or folders, relative to the current folder), only the
edits under them are committed, and nothing else in the folder is looked at.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if message == "" {
				return usageError("commit needs a message: cairn commit -m \"why\"")
			}
			p, err := a.principal()
			if err != nil {
				return err
			}
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			paths, err := treePaths(c, args)
			if err != nil {
				return err
			}
			res, err := c.CommitEdits(cairn.NewContextWithPrincipal(a.ctx, p), app.CommitEditsRequest{Message: message, Paths: paths})
			if err != nil {
				return err
			}
			outcome := res.Admission
			if outcome != nil && !outcome.Admitted() && len(outcome.Conflicts) == 0 {
				return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) {
					a.refused(w, outcome)
					fmt.Fprintln(w, "Your edits stay in the folder as local edits.")
				})
			}
			if len(res.Conflicts) > 0 {
				a.code = exitRefused
				return a.emit(conflictList(res.Conflicts), func(w io.Writer) {
					fmt.Fprintf(w, "Not committed: the branch %s moved and %s remain.\n", res.Branch, plural(len(res.Conflicts), "conflict"))
					printConflicts(w, res.Conflicts)
					fmt.Fprintln(w, "Edit the files to settle them, then commit again.")
				})
			}
			item := map[string]any{"id": res.Commit.Hash, "commit": res.Commit, "changes": res.Changes, "merged": res.Merged, "sync": res.Sync, "skipped": cmpSlice(res.Skipped)}
			if outcome != nil {
				item["admission"] = outcomeItem(outcome)
				res.Merged = outcome.Rebased
			}
			return a.emit(items([]map[string]any{item}), func(w io.Writer) {
				how := ""
				if res.Merged {
					how = " (merged onto the branch's new head)"
				}
				fmt.Fprintf(w, "Committed %s on %s: %s%s\n", res.Commit.Hash.Short(), res.Branch, plural(len(res.Changes), "file"), how)
				if outcome != nil {
					printAdmitted(w, outcome)
				}
				printSync(w, res.Sync)
				printSkips(w, res.Skipped)
			})
		},
	}
	cmd.Flags().StringVarP(&message, "message", "m", "", "why (required)")
	return cmd
}

func printSync(w io.Writer, rep *worktree.SyncReport) {
	if rep == nil {
		return
	}
	if n := len(rep.Updated); n > 0 {
		fmt.Fprintf(w, "Updated %s in the folder.\n", plural(n, "file"))
	}
	if len(rep.LeftAlone) > 0 {
		fmt.Fprintf(w, "Left alone %s you are editing (your next commit merges them):\n", plural(len(rep.LeftAlone), "file"))
		for _, p := range rep.LeftAlone {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(w, "The change stands, but a folder was not brought up to it (the next command there catches up): %s\n", f)
	}
}
