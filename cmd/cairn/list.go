package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"cairn/app"
)

func (a *cli) listCmd() *cobra.Command {
	var at string
	var f app.PageFilter
	cmd := &cobra.Command{
		Use:   "list [--type T] [--folder F] [--where 'FIELD OP VALUE']...",
		Short: "List pages by type, folder and frontmatter fields",
		Long: `List lists the pages of main (or of --at REF) by path, with their title and
type, keeping those of --type and under --folder, and those whose
frontmatter meets every --where condition:

  --where 'status = done'      a value (or an item of a list) equals
  --where 'status != done'     has the field, and no value equals
  --where 'year >= 2020'       numbers compare as numbers; dates and other
  --where 'updated < 2026-01'  text compare as text, in order
  --where 'tags ~ ink'         a value contains it, ignoring case
  --where owner                the field is there

Conditions are answered from the index's field rows, not by reading pages.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ap, err := a.service()
			if err != nil {
				return err
			}
			defer ap.Close()
			l, err := ap.Pages(a.ctx, at, f)
			if err != nil {
				return err
			}
			return a.emit(l, func(w io.Writer) {
				for _, p := range l.Pages {
					fmt.Fprintf(w, "%-40s %-14s %s\n", p.Path, p.Type, p.Title)
				}
				shown := plural(l.Total, "page")
				if l.Next > 0 {
					shown = fmt.Sprintf("%d of %d pages; --offset %d lists the next", len(l.Pages), l.Total, l.Next)
				}
				fmt.Fprintln(w, shown)
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "list the pages of this commit, branch or tag instead of main")
	cmd.Flags().StringVar(&f.Type, "type", "", "only pages of this type")
	cmd.Flags().StringVar(&f.Folder, "folder", "", "only pages under this folder")
	cmd.Flags().StringArrayVar(&f.Where, "where", nil, "a condition on a frontmatter field (repeat for several): 'FIELD OP VALUE' with OP one of = != < <= > >= ~, or FIELD")
	cmd.Flags().IntVar(&f.Limit, "limit", 100, "at most this many pages (at most 1000)")
	cmd.Flags().IntVar(&f.Offset, "offset", 0, "skip this many pages")
	return cmd
}
