package main

import (
	"context"
	"fmt"
	"io"

	"cairn/app"
)

// importHistory imports a git repository's first-parent history onto the
// branch import/<name> (merged into main when main holds nothing yet) and
// prints what it did.
func (a *cli) importHistory(ctx context.Context, c *app.App, dir string) error {
	bar := a.progress()
	res, err := c.ImportHistory(ctx, dir, &app.HistoryOptions{Progress: bar.update})
	bar.finish()
	if err != nil {
		return err
	}
	branch, outcome := res.Branch, res.Outcome
	if outcome != nil && !outcome.Admitted() {
		return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) {
			fmt.Fprintf(w, "Imported %s of %s onto %s (head %s), but main did not take it:\n", plural(res.Commits, "commit"), dir, branch, res.Head.Short())
			a.refused(w, outcome)
		})
	}
	out := items([]map[string]any{{"id": res.Head, "branch": branch, "commits": res.Commits}})
	out["skipped"], out["sync"] = res.Skipped, res.Sync
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Imported %s of %s onto %s (head %s)\n", plural(res.Commits, "commit"), dir, branch, res.Head.Short())
		if outcome != nil {
			fmt.Fprintf(w, "Merged into main: %s\n", outcome.Commit.Hash.Short())
			printAdmitted(w, outcome)
		} else {
			fmt.Fprintf(w, "Next: cairn merge %s (into main)\n", branch)
		}
		printCapped(w, "Left out "+plural(len(res.Skipped), "file"), len(res.Skipped), func(i int) string {
			s := res.Skipped[i]
			return fmt.Sprintf("%s (git commit %.12s): %s", shown(s.Path), s.Commit, s.Reason)
		})
		if !res.IntoMain {
			fmt.Fprintf(w, "main already has files, so the history is on its own branch: cairn merge %s\n", branch)
		}
	})
}

// exportGit writes the history of a branch (default main) as a new git
// repository.
func (a *cli) exportGit(c *app.App, dir, branch string) error {
	res, err := c.ExportGit(a.ctx, dir, &app.ExportOptions{Branch: branch})
	if err != nil {
		return err
	}
	out := items([]map[string]any{{"id": dir, "branch": res.Branch, "head": res.Head, "commits": res.Commits}})
	out["placeholders"] = res.Placeholders
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Wrote the history of %s to the git repository %s (%s)\n", res.Branch, dir, plural(res.Commits, "commit"))
		printPlaceholders(w, res.Placeholders)
	})
}
