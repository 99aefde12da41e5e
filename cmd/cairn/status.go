package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"cairn"
)

func (a *cli) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [PATH...]",
		Short: "List the files you changed in the working tree (all, or under the given paths)",
		Long: `Status compares the working tree with the commit it is based on and lists
local edits: added, modified, deleted. A file marked "incoming" was also
changed on the branch since you started editing it; your next commit merges
the two. Status also says when the branch moved ahead of the working tree.

With paths (files or folders, relative to the current folder), only those
are looked at: on a large vault, the quick way to check a few files.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			a.scanning()
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			paths, err := treePaths(ap, args)
			if err != nil {
				return err
			}
			st, err := ap.Status(a.ctx, paths...)
			if err != nil {
				return err
			}
			t := st.Tree
			type item struct {
				ID       string           `json:"id"`
				Path     string           `json:"path"`
				Kind     cairn.ChangeKind `json:"kind"`
				Incoming bool             `json:"incoming,omitempty"`
			}
			var out []item
			for _, c := range st.Changes {
				out = append(out, item{ID: c.Path, Path: c.Path, Kind: c.Kind, Incoming: c.Incoming})
			}
			res := items(out)
			res["branch"], res["base"], res["head"], res["skipped"] = t.Branch, t.Base, st.Head, st.Skipped
			return a.emit(res, func(w io.Writer) {
				fmt.Fprintf(w, "On branch %s at %s\n", t.Branch, short(t.Base))
				if st.Head != t.Base {
					fmt.Fprintf(w, "The branch has moved to %s; your next commit merges onto it.\n", short(st.Head))
				}
				if len(st.Changes) == 0 {
					fmt.Fprintln(w, "Nothing changed.")
				}
				for _, c := range st.Changes {
					mark := map[cairn.ChangeKind]string{cairn.Added: "A", cairn.Modified: "M", cairn.Deleted: "D"}[c.Kind]
					note := ""
					if c.Incoming {
						note = "  (also changed on the branch; commit merges them)"
					}
					fmt.Fprintf(w, "  %s %s%s\n", mark, c.Path, note)
				}
				printSkips(w, st.Skipped)
			})
		},
	}
}

func short(h cairn.Hash) string {
	if h.IsZero() {
		return "(nothing yet)"
	}
	return h.Short()
}

// bulkCommand marks a command that writes the whole vault once (adopting a
// folder, an import): the vault it opens keeps small caches
// (app.Options.Bulk), and, unless $GOGC says otherwise, its garbage is
// collected when the heap has grown by three quarters rather than doubled.
// What such a command keeps while it indexes (the links' keys and targets
// of every page) is most of its heap: at 100k pages the default let its
// memory reach 420-430 MB, 75 kept it to 380-400 MB in the same time, and
// 50 to 350 MB with some runs slower (BENCHMARKS.md).
func (a *cli) bulkCommand() {
	a.bulk = true
	a.gc.set(75)
}

// scanning sets the garbage collector of a status, unless $GOGC says
// otherwise: a collection when the heap has grown fivefold rather than
// twofold. What a status allocates about each file (its stat, its cached
// row) it keeps until it answers, so collecting on the way finds little
// garbage: at 100k pages the default collected four times (twice now), a
// tenth of the command's time. A commit keeps the default: one of many
// changed files holds their contents.
func (a *cli) scanning() {
	a.gc.set(400)
}
