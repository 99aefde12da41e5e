package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"cairn/admit"
	"cairn/store"
	"cairn/vault"
	"cairn/worktree"
)

func (a *cli) initCmd() *cobra.Command {
	var bare bool
	var message string
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Make a vault; Markdown already in the folder becomes its first commit",
		Long: `Init makes DIR (default: the current folder) a vault. The folder becomes
the working tree of branch main and keeps working in Obsidian; the history
lives in DIR/.cairn/. Files already in the folder are adopted as the first
commit. In a git repository, .cairn/ is added to .gitignore; cairn never runs
git in a vault.

With --bare the vault has no working tree (for servers).`,
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
			v, err := vault.Init(a.ctx, dir, bare, a.vaultOptions())
			if err != nil {
				return err
			}
			defer v.Close()
			out := list{"root": v.Root, "bare": bare}
			var res *worktree.CommitResult
			var skipped []worktree.Skip
			var outcome *admit.Outcome
			if t, _ := v.Main(a.ctx); t != nil {
				st, err := v.Trees.Status(a.ctx, t)
				if err != nil {
					return err
				}
				skipped = st.Skipped
				if len(st.Changes) > 0 {
					// The adopted files may hold a contract: its findings,
					// which name the agent command it sets, are printed.
					msg := cmpOr(message, "adopt "+filepath.Base(v.Root))
					res, err = v.Trees.Commit(a.ctx, t, worktree.CommitRequest{
						Message: msg, Principal: p, Land: landOnMain(v, "commit", p, msg, &outcome),
					})
					if err != nil {
						return err
					}
					if res.Commit == nil {
						return a.emit(items([]map[string]any{outcomeItem(outcome)}), func(w io.Writer) {
							fmt.Fprintf(w, "Made a vault in %s, but the files already there were not adopted:\n", v.Root)
							a.refused(w, outcome)
						})
					}
				}
			}
			if res == nil {
				// An empty vault still has a first commit, so main exists.
				out, err := v.Admit.Submit(a.ctx, admit.Request{
					Route: "init", Tree: store.EmptyTree, Principal: p, Message: cmpOr(message, "init"), AllowEmpty: true,
				})
				if err != nil {
					return err
				}
				c := out.Commit
				if t, _ := v.Main(a.ctx); t != nil {
					if _, err := v.Trees.Sync(a.ctx, t, c.Hash); err != nil {
						return err
					}
				}
				res = &worktree.CommitResult{Commit: c}
			}
			item := map[string]any{"id": res.Commit.Hash, "commit": res.Commit, "files": len(res.Changes)}
			if outcome != nil {
				item["admission"] = outcomeItem(outcome)
			}
			out["items"] = []map[string]any{item}
			out["skipped"] = skipped
			return a.emit(out, func(w io.Writer) {
				kind := "vault"
				if bare {
					kind = "bare vault"
				}
				fmt.Fprintf(w, "Made a %s in %s\n", kind, v.Root)
				if n := len(res.Changes); n > 0 {
					fmt.Fprintf(w, "Adopted %s as commit %s\n", plural(n, "file"), res.Commit.Hash.Short())
				}
				if outcome != nil {
					printAdmitted(w, outcome)
				}
				printSkips(w, skipped)
				if !bare {
					fmt.Fprintln(w, "Next: edit pages in the folder (Obsidian works), then cairn status and cairn commit -m \"why\"")
				}
			})
		},
	}
	cmd.Flags().BoolVar(&bare, "bare", false, "no working tree: only .cairn/")
	cmd.Flags().StringVarP(&message, "message", "m", "", "the first commit's message")
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
