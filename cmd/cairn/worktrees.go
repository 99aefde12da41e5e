package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"cairn"
)

func (a *cli) worktreeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktree",
		Short: "Keep more working trees: folders holding other branches",
		Long: `A vault's own folder is the working tree of main. worktree add makes another
folder hold another branch, for editing it side by side (a draft, or a held
proposal to fix before accepting it). Commands run in that folder work on its
branch.`,
	}
	var force bool
	add := &cobra.Command{
		Use:   "add DIR BRANCH",
		Short: "Make DIR (new or empty) a working tree of BRANCH",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.principal()
			if err != nil {
				return err
			}
			c, err := a.local("worktree add")
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.AddWorktree(cairn.NewContextWithPrincipal(a.ctx, p), args[0], args[1])
			if err != nil {
				return err
			}
			t := res.Tree
			return a.emit(items([]map[string]any{{"id": t.Path, "path": t.Path, "branch": t.Branch, "base": t.Base, "files": res.Files}}), func(w io.Writer) {
				fmt.Fprintf(w, "Made %s a working tree of %s (%d files)\n", t.Path, t.Branch, res.Files)
			})
		},
	}
	ls := &cobra.Command{
		Use:   "list",
		Short: "List the working trees",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			trees, err := c.Worktrees(a.ctx)
			if err != nil {
				return err
			}
			type item struct {
				ID     string `json:"id"`
				Path   string `json:"path"`
				Branch string `json:"branch"`
				Base   string `json:"base"`
			}
			var out []item
			for _, t := range trees {
				out = append(out, item{ID: t.Path, Path: t.Path, Branch: t.Branch, Base: t.Base.String()})
			}
			return a.emit(items(out), func(w io.Writer) {
				for _, t := range trees {
					fmt.Fprintf(w, "%-50s %-20s %s\n", t.Path, t.Branch, short(t.Base))
				}
			})
		},
	}
	rm := &cobra.Command{
		Use:   "remove DIR",
		Short: "Delete a working tree's folder (refused when it has local edits, unless --force)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.principal()
			if err != nil {
				return err
			}
			c, err := a.local("worktree remove")
			if err != nil {
				return err
			}
			defer c.Close()
			t, err := c.RemoveWorktree(cairn.NewContextWithPrincipal(a.ctx, p), args[0], force)
			if err != nil {
				return err
			}
			return a.emit(items([]map[string]any{{"id": t.Path, "removed": true}}), func(w io.Writer) {
				fmt.Fprintf(w, "Removed the working tree %s\n", t.Path)
			})
		},
	}
	rm.Flags().BoolVar(&force, "force", false, "remove even with local edits (they are lost)")
	cmd.AddCommand(add, ls, rm)
	return cmd
}
