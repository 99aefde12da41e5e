package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
)

func (a *cli) lsCmd() *cobra.Command {
	var recursive, long bool
	cmd := &cobra.Command{
		Use:   "ls [REF:][PATH]",
		Short: "List the files and folders of a folder as it is at a commit",
		Long: `Ls lists what the folder PATH holds at REF (a branch, tag, commit hash or
prefix, main~3...; default: the head of the working tree's branch), folders
first marked with a slash: the files and folders at the top of the vault
without PATH. A PATH that is a file lists that file. With --recursive it lists
every file below PATH; with --long, sizes (a folder's: of all it holds) and
executable files. Paths match whatever their case, as in the store.`,
		Example: `  cairn ls
  cairn ls notes/
  cairn ls main~3:summaries -l
  cairn ls v1: --recursive`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			opts := app.ListOptions{Recursive: recursive}
			rev, dir, hasRev := strings.Cut(arg, ":")
			if !hasRev {
				rev, dir = ap.Branch(), arg
			}
			l, err := ap.List(a.ctx, rev, dir, opts)
			switch {
			case cairn.ErrorCode(err) == cairn.ENOTFOUND && !hasRev && dir != "":
				// Not a path: perhaps a revision, as in cairn show.
				if rl, rerr := ap.List(a.ctx, arg, "", opts); rerr == nil {
					l, err = rl, nil
				}
			case cairn.ErrorCode(err) == cairn.ENOTFOUND && hasRev:
				// No such revision: perhaps a path with a colon in it.
				if rl, rerr := ap.List(a.ctx, ap.Branch(), arg, opts); rerr == nil {
					l, err = rl, nil
				}
			}
			if err != nil {
				return err
			}
			out := l.Entries
			res := items(out)
			res["commit"] = l.Commit
			return a.emit(res, func(w io.Writer) {
				for _, e := range out {
					if !long {
						fmt.Fprintln(w, e.ID)
						continue
					}
					what := humanize.IBytes(uint64(e.Size))
					switch {
					case e.Kind == "folder":
						what += fmt.Sprintf(", %d files", e.Files)
					case e.Mode != "":
						what += ", " + e.Mode
					}
					fmt.Fprintf(w, "%-24s %s\n", what, e.ID)
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "list every file below the folder")
	cmd.Flags().BoolVarP(&long, "long", "l", false, "give sizes, file counts and executable files")
	return cmd
}
