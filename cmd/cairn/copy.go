package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"cairn"
)

func (a *cli) copyCmd() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "copy --to DEST",
		Short: "Copy the whole vault, with its history, into PostgreSQL or back into a SQLite folder",
		Long: `Copy moves the whole vault into a new one: from SQLite into the PostgreSQL
database DEST (postgres://USER@HOST:PORT/DATABASE, ?search_path=SCHEMA for a
schema of its own), or from PostgreSQL into the folder DEST (a bare vault
with its own SQLite file). Every commit keeps its hash: cairn log and cairn
doctor agree on both sides. The proposals and their audit, the events, the
sources and their history, the tokens and the OAuth records come along; the
copy's index is rebuilt from its commits. Jobs do not: a vault with sources
still queued or running is refused, as is a destination that has history.

The original stays as it was; serve the copy with cairn serve --database
DEST (or -C DEST).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return usage{msg: "cairn copy needs --to DEST", hint: "Give a PostgreSQL URL or a new folder."}
			}
			p, err := a.principal()
			if err != nil {
				return err
			}
			c, err := a.local("copy")
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Copy(cairn.NewContextWithPrincipal(a.ctx, p), to)
			if err != nil {
				return err
			}
			item := map[string]any{"id": res.To, "to": res.To, "root": res.Root, "rows": res.Rows, "head": res.Head}
			return a.emit(items([]map[string]any{item}), func(w io.Writer) {
				fmt.Fprintf(w, "Copied the vault to %s (served from %s); main is at %s.\n", res.To, res.Root, res.Head.Short())
				for _, t := range slices.Sorted(maps.Keys(res.Rows)) {
					if n := res.Rows[t]; n > 0 {
						fmt.Fprintf(w, "  %-15s %d\n", t, n)
					}
				}
			})
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "where the copy goes: postgres://… or a new folder")
	return cmd
}
