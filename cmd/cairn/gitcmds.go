package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/schollz/progressbar/v3"

	"cairn"
	"cairn/admit"
	"cairn/gitio"
	"cairn/index"
	"cairn/store"
	"cairn/vault"
	"cairn/worktree"
)

// importHistory turns a git repository's first-parent history into cairn
// commits on a new branch import/<name>; when main holds nothing yet, the
// branch is then merged into main through admission.
func (a *cli) importHistory(v *vault.Vault, dir string, p cairn.Principal) error {
	branch := "import/" + filepath.Base(filepath.Clean(dir))
	head, err := v.Store.Head(a.ctx, index.Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return err
	}
	mainTree, err := treeOf(a, v, head)
	if err != nil {
		return err
	}
	// main holds nothing (a new vault): the history becomes main's, merged
	// through admission once it is imported.
	intoMain := mainTree == store.EmptyTree
	var bar *progressbar.ProgressBar
	opts := &gitio.ImportOptions{Branch: branch, Skip: worktree.Ignored}
	if a.interactive() {
		opts.Progress = func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("importing history"),
					progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			}
			bar.Set(done)
		}
	}
	res, err := gitio.ImportHistory(a.ctx, v.Store, dir, opts)
	if err != nil {
		return v.ExplainBusy(err)
	}
	if bar != nil {
		bar.Finish()
	}
	var rep *worktree.SyncReport
	var outcome *admit.Outcome
	if intoMain {
		c, err := v.Store.ReadCommit(a.ctx, res.Head)
		if err != nil {
			return err
		}
		outcome, err = v.Admit.Submit(a.ctx, admit.Request{
			Route: "import", Base: head, Tree: c.Tree, Parents: []cairn.Hash{res.Head}, Principal: p,
			Message: fmt.Sprintf("import %s: %s of history", filepath.Base(filepath.Clean(dir)), plural(res.Commits, "commit")),
			Meta:    map[string]string{"import": dir}, AllowEmpty: true,
		})
		if err != nil {
			return v.ExplainBusy(err)
		}
		if !outcome.Admitted() {
			return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) {
				fmt.Fprintf(w, "Imported %s of %s onto %s (head %s), but main did not take it:\n", plural(res.Commits, "commit"), dir, branch, res.Head.Short())
				a.refused(w, outcome)
			})
		}
		if rep, err = v.SyncMain(a.ctx); err != nil {
			return err
		}
	}
	out := items([]map[string]any{{"id": res.Head, "branch": branch, "commits": res.Commits}})
	out["skipped"], out["sync"] = res.Skipped, rep
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
		if !intoMain {
			fmt.Fprintf(w, "main already has files, so the history is on its own branch: cairn merge %s\n", branch)
		}
	})
}

// exportGit writes the history of a branch as a new git repository.
func (a *cli) exportGit(v *vault.Vault, dir, branch string) error {
	res, err := gitio.ExportGit(a.ctx, v.Store, dir, &gitio.ExportOptions{Branch: branch})
	if err != nil {
		return err
	}
	out := items([]map[string]any{{"id": dir, "branch": branch, "head": res.Head, "commits": res.Commits}})
	out["placeholders"] = placeholdersOrEmpty(res.Placeholders)
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Wrote the history of %s to the git repository %s (%s)\n", branch, dir, plural(res.Commits, "commit"))
		printPlaceholders(w, res.Placeholders)
	})
}
