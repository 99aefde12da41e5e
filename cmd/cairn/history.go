package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
)

func (a *cli) logCmd() *cobra.Command {
	var opts app.LogOptions
	cmd := &cobra.Command{
		Use:   "log [REF]",
		Short: "Show the history, newest first",
		Long: `Log lists the commits reachable from REF (default: the working tree's branch),
newest first, with who made each and why. With --path, only commits that
changed that file.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			rev := ap.Branch()
			if len(args) == 1 {
				rev = args[0]
			}
			commits, err := ap.Log(a.ctx, rev, opts)
			if err != nil {
				return err
			}
			type item struct {
				ID string `json:"id"`
				*cairn.Commit
			}
			var out []item
			for _, c := range commits {
				out = append(out, item{ID: c.Hash.String(), Commit: c})
			}
			return a.emit(items(out), func(w io.Writer) {
				for _, c := range out {
					merge := ""
					if len(c.Parents) > 1 {
						merge = "  (merge)"
					}
					fmt.Fprintf(w, "%s  %s  %s%s\n", c.Hash.Short(), c.Time.Local().Format("2006-01-02 15:04"), c.Principal, merge)
					for _, line := range strings.Split(strings.TrimSpace(c.Message), "\n") {
						fmt.Fprintf(w, "    %s\n", line)
					}
				}
			})
		},
	}
	cmd.Flags().StringVar(&opts.Path, "path", "", "only commits that changed this file")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 0, "at most this many commits")
	cmd.Flags().BoolVar(&opts.FirstParent, "first-parent", false, "follow only the branch's own line")
	return cmd
}

func (a *cli) showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show [REF:]PATH | show REF",
		Short: "Print a file as it is at a commit (default: the branch head), or a commit",
		Long: `Show prints the content of PATH at REF (a branch, tag, commit hash or
prefix, main~3...). Without REF, at the head of the working tree's branch.
Given a revision alone, it shows that commit and what it changed.`,
		Example: `  cairn show index.md
  cairn show main~2:notes/idea.md
  cairn show v1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			rev, path, hasRev := strings.Cut(args[0], ":")
			if !hasRev {
				rev, path = ap.Branch(), args[0]
			}
			f, err := ap.ReadFile(a.ctx, rev, path)
			if err != nil && !hasRev {
				// Not a file: perhaps a revision.
				if d, rerr := ap.ShowCommit(a.ctx, args[0]); rerr == nil {
					return a.showCommit(d)
				}
			}
			if err != nil {
				return err
			}
			e := f.Entry
			out := items([]map[string]any{{"id": f.Commit.Short() + ":" + e.Path, "path": e.Path, "commit": f.Commit, "blob": e.Blob, "size": e.Size, "content": f.Content}})
			return a.emit(out, func(w io.Writer) { io.WriteString(w, f.Content) })
		},
	}
}

func (a *cli) showCommit(d *app.CommitDetail) error {
	c, changes := d.Commit, d.Changes
	out := items([]map[string]any{{"id": c.Hash, "commit": c, "changes": changes}})
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "commit %s\n", c.Hash)
		fmt.Fprintf(w, "by %s on %s\n", c.Principal, c.Time.Local().Format(time.RFC1123))
		for _, k := range slices.Sorted(maps.Keys(c.Meta)) {
			fmt.Fprintf(w, "%s: %s\n", k, c.Meta[k])
		}
		fmt.Fprintf(w, "\n    %s\n\n", strings.ReplaceAll(strings.TrimSpace(c.Message), "\n", "\n    "))
		printChanges(w, changes)
	})
}

func printChanges(w io.Writer, changes []cairn.Change) {
	for _, ch := range changes {
		switch ch.Kind {
		case cairn.Renamed:
			fmt.Fprintf(w, "  R %s -> %s\n", ch.Old.Path, ch.Path)
		default:
			fmt.Fprintf(w, "  %s %s\n", strings.ToUpper(string(ch.Kind[:1])), ch.Path)
		}
	}
}

func (a *cli) diffCmd() *cobra.Command {
	var stat bool
	cmd := &cobra.Command{
		Use:   "diff [A [B]]",
		Short: "Show changes: your local edits, a commit against your folder, or two commits",
		Long: `Diff without arguments shows your local edits (the working tree against its
base). With one revision, that commit against the working tree. With two,
the first against the second. Text files get a unified diff.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			var from, to string
			if len(args) > 0 {
				from = args[0]
			}
			if len(args) > 1 {
				to = args[1]
			}
			d, err := ap.Diff(a.ctx, from, to, app.DiffOptions{Patch: !stat})
			if err != nil {
				return err
			}
			type item struct {
				ID string `json:"id"`
				cairn.Change
				Patch string `json:"patch,omitempty"`
			}
			var out []item
			for i, ch := range d.Changes {
				patch := ""
				if !stat && i < len(d.Patches) {
					patch = d.Patches[i]
				}
				out = append(out, item{ID: ch.Path, Change: ch, Patch: patch})
			}
			return a.emit(items(out), func(w io.Writer) {
				if len(out) == 0 {
					fmt.Fprintln(w, "No differences.")
				}
				for _, it := range out {
					if stat || it.Patch == "" {
						printChanges(w, []cairn.Change{it.Change})
						continue
					}
					io.WriteString(w, it.Patch)
				}
			})
		},
	}
	cmd.Flags().BoolVar(&stat, "stat", false, "list the changed files only")
	return cmd
}
