package main

import (
	"fmt"
	"io"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
	"cairn/ingest"
)

func (a *cli) sourcesCmd() *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "sources",
		Short: "List the sources and where each stands (queued, running, merged, held, rejected, failed)",
		Long: `Sources lists every source ingested, newest first: its id (the SHA-256 of its
content; any 4 or more leading hex digits name it), its name, where it is under
raw/, and its status. cairn sources show ID prints its history; cairn sources
retry ID queues a failed or rejected source again (or a queued one whose job
is gone).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			l, err := c.Sources(a.ctx, app.SourceFilter{Status: status})
			if err != nil {
				return err
			}
			srcs := l.Sources
			return a.emit(items(srcs), func(w io.Writer) {
				if len(srcs) == 0 {
					fmt.Fprintln(w, "No sources. Try: cairn ingest FILE")
					return
				}
				for _, s := range srcs {
					detail := s.Path
					switch {
					case s.Status == ingest.Failed:
						detail = s.Error
					case s.Proposal != 0:
						detail += fmt.Sprintf(" (proposal %d)", s.Proposal)
					}
					fmt.Fprintf(w, "%s  %-8s  %-32s  %s\n", s.ID[:12], s.Status, shown(s.Name), detail)
				}
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only sources with this status")
	cmd.AddCommand(a.sourcesShowCmd(), a.sourcesRetryCmd())
	return cmd
}

func (a *cli) sourcesShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a source and its history",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			src, err := c.Source(a.ctx, args[0])
			if err != nil {
				return err
			}
			return a.emit(items([]*ingest.Source{src}), func(w io.Writer) {
				fmt.Fprintf(w, "source   %s\nname     %s\npath     %s\nsize     %d bytes\nstatus   %s\n", src.ID, shown(src.Name), src.Path, src.Size, src.Status)
				if src.Job != 0 {
					fmt.Fprintf(w, "job      %d\n", src.Job)
				}
				if src.Proposal != 0 {
					fmt.Fprintf(w, "proposal %d\n", src.Proposal)
				}
				if src.Error != "" {
					fmt.Fprintf(w, "error    %s\n", src.Error)
				}
				if src.Hint != "" {
					fmt.Fprintf(w, "hint     %s\n", src.Hint)
				}
				fmt.Fprintln(w, "history:")
				for _, st := range src.History {
					fmt.Fprintf(w, "  %s  %-8s  %-20s  %s\n", st.Time.Local().Format(time.DateTime), st.Status, st.Principal, st.Detail)
				}
			})
		},
	}
}

func (a *cli) sourcesRetryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "retry ID",
		Short: "Queue a failed or rejected source again (or one whose job is gone)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.principal()
			if err != nil {
				return err
			}
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			src, err := c.RetrySource(cairn.NewContextWithPrincipal(a.ctx, p), args[0])
			if err != nil {
				return err
			}
			return a.emit(items([]*ingest.Source{src}), func(w io.Writer) {
				fmt.Fprintf(w, "Queued %s again (job %d); cairn worker runs it.\n", shown(src.Name), src.Job)
			})
		},
	}
}

// shown is a file name as it can be printed: quoted, with escapes
// (cairn.Quote), when it holds a character that does not print or does not
// show (a control, format or other invisible character: U+202E would
// reorder the rest of the line, U+E0100 would make notes.md of it); as it
// is otherwise. Stored sources never hold one; refused ones may.
func shown(name string) string {
	if !utf8.ValidString(name) {
		return cairn.Quote(name)
	}
	prev := rune(-1)
	for _, r := range name {
		if !unicode.IsPrint(r) || cairn.IsInvisible(prev, r) {
			return cairn.Quote(name)
		}
		prev = r
	}
	return name
}
