package main

import (
	"context"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
	"cairn/gitio"
)

func (a *cli) importCmd() *cobra.Command {
	var prefix, message string
	var history bool
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Bring a folder of Markdown and attachments into main (an Eva brain keeps its layout)",
		Long: `Import reads DIR (any folder of Markdown and attachments; an Eva brain keeps
its layout) and commits its files to main, under --prefix if given; then the
vault's folder is updated. Symbolic links are not followed and nothing outside
DIR is read; files that cannot be vault paths (names that are not UTF-8, names
differing only in case, files over 64 MiB) are left out and listed.

With --history, DIR must be a git repository: its first-parent history
becomes cairn commits, one for each git commit, on the branch import/<name>;
when main is empty, that branch is merged into main, else it waits for you
to merge it. Into main, an import goes through admission like any change;
the vault's contract (cairn.yaml, eva.json, EVA.md, AGENTS.md, CLAUDE.md) is
never taken from what an import brings without a person's review: such a
change is held, even into a new vault (cairn review show ID, then accept or
reject it).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.principal()
			if err != nil {
				return err
			}
			a.bulkCommand() // an import reads every file it brings once
			c, err := a.local("import")
			if err != nil {
				return err
			}
			defer c.Close()
			ctx := cairn.NewContextWithPrincipal(a.ctx, p)
			if history {
				return a.importHistory(ctx, c, args[0])
			}
			return a.importFolder(ctx, c, args[0], &app.ImportOptions{Prefix: prefix, Message: message})
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", "", "put the files under this folder of the vault")
	cmd.Flags().StringVarP(&message, "message", "m", "", "the commit message (default: import NAME)")
	cmd.Flags().BoolVar(&history, "history", false, "DIR is a git repository: import its history")
	return cmd
}

func (a *cli) importFolder(ctx context.Context, c *app.App, dir string, opts *app.ImportOptions) error {
	bar := a.progress()
	opts.Progress = bar.update
	res, err := c.ImportFolder(ctx, dir, opts)
	bar.finish()
	if err != nil {
		return err
	}
	skips := res.Skipped
	if outcome := res.Outcome; outcome != nil && !outcome.Admitted() {
		return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) {
			a.refused(w, outcome)
			printSkips(w, skips)
		})
	}
	commit, outcome, rep, took := res.Commit, res.Outcome, res.Sync, res.Took
	out := items([]map[string]any{{"id": commitID(commit), "commit": commit, "added": res.Added, "updated": res.Updated, "unchanged": res.Unchanged, "seconds": took.Seconds()}})
	out["skipped"], out["sync"] = skips, rep
	return a.emit(out, func(w io.Writer) {
		if commit == nil {
			fmt.Fprintf(w, "Nothing to import: the %d files of %s are in the vault already.\n", res.Unchanged, dir)
		} else {
			fmt.Fprintf(w, "Imported %s as %s: %d added, %d updated, %d unchanged (%s)\n", dir, commit.Hash.Short(), res.Added, res.Updated, res.Unchanged, took.Round(time.Millisecond))
			printAdmitted(w, outcome)
		}
		printSkips(w, skips)
		if len(rep.LeftAlone) > 0 {
			printSync(w, rep)
		}
	})
}

// importBar draws an import's progress on a terminal; its zero value, for
// output that is not a terminal, draws nothing.
type importBar struct {
	a     *cli
	bar   *progressbar.ProgressBar
	stage string
}

// progress returns the progress bar of an import, which draws only when
// progress may be drawn (a.interactive).
func (a *cli) progress() *importBar {
	if !a.interactive() {
		return &importBar{}
	}
	return &importBar{a: a}
}

// update is an app Progress callback: nil when nothing is drawn.
func (b *importBar) update(stage string, done, total int) {
	if b.a == nil {
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(b.a.stderr), progressbar.OptionSetDescription(stage),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		b.stage = stage
	}
	if stage != b.stage {
		b.bar.Describe(stage)
		b.stage = stage
	}
	b.bar.Set(done)
}

func (b *importBar) finish() {
	if b.bar != nil {
		b.bar.Finish()
	}
}

// printPlaceholders lists the files an export wrote as a placeholder for
// content purged from the vault.
func printPlaceholders(w io.Writer, ps []gitio.Placeholder) {
	if len(ps) == 0 {
		return
	}
	printCapped(w, "Wrote "+plural(len(ps), "placeholder")+" for content purged from the vault", len(ps), func(i int) string {
		return ps[i].Path + " at " + ps[i].Commit.Short()
	})
	fmt.Fprintln(w, "Each says when, by whom and why its content was purged.")
}

func commitID(c *cairn.Commit) string {
	if c == nil {
		return ""
	}
	return c.Hash.String()
}

func (a *cli) exportCmd() *cobra.Command {
	var at string
	var git bool
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write the files of a commit (default: main) to a new folder, or the history to a git repository",
		Long: `Export writes the files of REF (default main) into DIR, which must be new or
empty. With --git, DIR becomes a git repository holding the history of the
branch REF (default main), one git commit per cairn commit: a commit imported
from git gets back its author, committer and message, with cairn's record of
it in a git note; any other carries its principal and metadata in trailers.

Content removed with cairn purge is written as a one-line placeholder that
says when, by whom and why it was purged; the export lists each file that got
one (with --git, each path at each commit that wrote it).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.local("export")
			if err != nil {
				return err
			}
			defer c.Close()
			dir := args[0]
			if git {
				return a.exportGit(c, dir, at)
			}
			res, err := c.ExportFiles(a.ctx, dir, at)
			if err != nil {
				return err
			}
			out := items([]map[string]any{{"id": dir, "commit": res.Head, "files": res.Files}})
			out["placeholders"] = res.Placeholders
			return a.emit(out, func(w io.Writer) {
				fmt.Fprintf(w, "Wrote %d files of %s to %s\n", res.Files, res.Head.Short(), path.Clean(dir))
				printPlaceholders(w, res.Placeholders)
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "the commit, branch or tag to export (default: main); with --git, a branch")
	cmd.Flags().BoolVar(&git, "git", false, "write a git repository with the whole history")
	return cmd
}
