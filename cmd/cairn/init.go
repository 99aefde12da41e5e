package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
	"cairn/eva"
	"cairn/worktree"
)

func (a *cli) initCmd() *cobra.Command {
	var bare bool
	var message, profile string
	var settings eva.Settings
	cmd := &cobra.Command{
		Use:   "init [DIR] [--profile P]",
		Short: "Make a vault; Markdown already in the folder becomes its first commit",
		Long: `Init makes DIR (default: the current folder) a vault. The folder becomes
the working tree of branch main and keeps working in Obsidian; the history
lives in DIR/.cairn/. Files already in the folder are adopted as the first
commit. In a git repository, .cairn/ is added to .gitignore; cairn never runs
git in a vault.

With --bare the vault has no working tree (for servers).

With --database postgres://USER@HOST:PORT/DATABASE (add ?search_path=SCHEMA
for a schema of its own) the vault lives in PostgreSQL, and must be --bare:
DIR/.cairn/database names the database, and cairn commands in DIR use it.
When the database holds a vault already, DIR becomes one more place it is
served from (cairn serve on several machines, one database).

With --profile P the folder becomes a new Eva brain (Eva Brain Standard v1)
of one of Eva's seven profiles: personal, research, reading, business,
planning, course or blank. It gets eva.json, EVA.md (its contract, with the
profile's focus and --language, --runtime and --purpose), AGENTS.md,
CLAUDE.md, index.md, log.md, a starter page in analyses/, the folders raw/,
entities/, concepts/, summaries/ and analyses/, and the profile's page types
declared in types/ (docs/types.md). Files already there are kept as they are.

A folder that is an Eva brain already (it has eva.json) opens in place with
plain cairn init: its eva.json must be one Eva accepts, its files are
adopted, its EVA.md settings are honoured, and its .git is left alone
(cairn import --history DIR brings a git history in).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := cmpOr(a.vaultDir, ".")
			if len(args) == 1 {
				dir = args[0]
			}
			p, err := a.principal()
			if err != nil {
				return err
			}
			if profile != "" {
				if bare {
					return usageError("--profile makes a brain in a folder; it cannot be --bare")
				}
				if _, err := app.BootstrapEva(dir, profile, settings, time.Now()); err != nil {
					return err
				}
			}
			a.bulkCommand() // an adoption reads every file once
			c, err := app.Init(a.ctx, dir, bare, a.appOptions())
			if err != nil {
				return err
			}
			defer c.Close()
			if c.Attached() {
				return a.emit(list{"root": c.Root(), "bare": true, "items": []map[string]any{{"id": c.Database(), "database": c.Database(), "attached": true}}}, func(w io.Writer) {
					fmt.Fprintf(w, "%s serves the vault in %s, which was there already\n", c.Root(), c.Database())
				})
			}
			res, err := c.Adopt(cairn.NewContextWithPrincipal(a.ctx, p), message)
			if err != nil {
				return err
			}
			outcome := res.Admission
			if res.Commit == nil {
				return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) {
					fmt.Fprintf(w, "Made a vault in %s, but the files already there were not adopted:\n", c.Root())
					a.refused(w, outcome)
				})
			}
			item := map[string]any{"id": res.Commit.Hash, "commit": res.Commit, "files": len(res.Changes)}
			if outcome != nil {
				item["admission"] = outcomeItem(outcome)
			}
			out := list{"root": c.Root(), "bare": bare, "items": []map[string]any{item}, "skipped": res.Skipped}
			return a.emit(out, func(w io.Writer) {
				kind := "vault"
				if bare {
					kind = "bare vault"
				}
				if db := c.Database(); !strings.HasPrefix(db, c.Root()) {
					fmt.Fprintf(w, "Made a %s in %s, served from %s\n", kind, db, c.Root())
				} else {
					fmt.Fprintf(w, "Made a %s in %s\n", kind, c.Root())
				}
				if n := len(res.Changes); n > 0 {
					fmt.Fprintf(w, "Adopted %s as commit %s\n", plural(n, "file"), res.Commit.Hash.Short())
				}
				if outcome != nil {
					printAdmitted(w, outcome)
				}
				printSkips(w, res.Skipped)
				if !bare {
					fmt.Fprintln(w, "Next: edit pages in the folder (Obsidian works), then cairn status and cairn commit -m \"why\"")
				}
			})
		},
	}
	cmd.Flags().BoolVar(&bare, "bare", false, "no working tree: only .cairn/")
	cmd.Flags().StringVarP(&message, "message", "m", "", "the first commit's message")
	cmd.Flags().StringVar(&profile, "profile", "", "make a new Eva brain of this profile: "+strings.Join(eva.IDs(), ", "))
	cmd.Flags().StringVar(&settings.Language, "language", "", "with --profile: the brain's working language (default English)")
	cmd.Flags().StringVar(&settings.Runtime, "runtime", "", "with --profile: the agent runtime EVA.md names: claude, codex or opencode (default none: cairn's default agent)")
	cmd.Flags().StringVar(&settings.Purpose, "purpose", "", "with --profile: what the brain is for, at most 240 characters")
	return cmd
}

func printSkips(w io.Writer, skips []worktree.Skip) {
	printCapped(w, "Left out "+plural(len(skips), "file"), len(skips), func(i int) string {
		return shown(skips[i].Path) + ": " + skips[i].Reason
	})
}

// printCapped prints title and the first 20 of n lines under it (line
// gives each), saying how many more --json lists; nothing when n is 0.
func printCapped(w io.Writer, title string, n int, line func(i int) string) {
	const most = 20
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for i := range min(n, most) {
		fmt.Fprintf(w, "  %s\n", line(i))
	}
	if n > most {
		fmt.Fprintf(w, "  ... and %d more (see --json)\n", n-most)
	}
}
