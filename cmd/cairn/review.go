package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"cairn"
	"cairn/admit"
	"cairn/app"
)

func (a *cli) reviewCmd() *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "review",
		Short: "List the proposals held for a person's decision",
		Long: `Review lists held proposals: changes to main that admission held for a person
(a deletion, a rename, new lint findings, a protected file a person changed,
a conflict). Each is kept as the branch proposals/ID.

  cairn review show ID            the diff and the findings
  cairn review accept ID          merge it into main (whatever the findings)
  cairn review reject ID -r WHY   reject it (an ingest's source stays rejected)
  cairn review recheck ID         run the gates again, e.g. after fixing it in
                                  cairn worktree add DIR proposals/ID

Accept and reject are atomic: when main changed the same places since, accept
merges nothing and the proposal stays held with the error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			props, err := c.Proposals(a.ctx, admit.ProposalFilter{Status: status})
			if err != nil {
				return err
			}
			return a.emit(items(props), func(w io.Writer) {
				if len(props) == 0 {
					if status == "" {
						fmt.Fprintln(w, "No proposals are held for review.")
					} else {
						fmt.Fprintf(w, "No %s proposals.\n", status)
					}
					return
				}
				for _, p := range props {
					fmt.Fprintf(w, "%-4d %-9s %-8s %-20s %s\n", p.ID, p.Status, p.Route, p.Principal, firstLine(p.Message))
					fmt.Fprintf(w, "     %s\n", app.HeldReasons(p.Findings))
					if p.Error != "" {
						fmt.Fprintf(w, "     error: %s\n", p.Error)
					}
				}
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "list proposals with this status instead: admitted, accepted, rejected, all")
	list := &cobra.Command{Use: "list", Short: "List the held proposals (the same as cairn review)", Args: cobra.NoArgs, RunE: cmd.RunE}
	list.Flags().StringVar(&status, "status", "", "list proposals with this status instead: admitted, accepted, rejected, all")
	cmd.AddCommand(list, a.reviewShowCmd(), a.reviewAcceptCmd(), a.reviewRejectCmd(), a.reviewRecheckCmd())
	return cmd
}

// openAdmin opens the vault (service) for a command of review, settings,
// maint or tokens that acts as a principal: the principal is read first,
// so a bad --as opens nothing, and travels in the returned context.
func (a *cli) openAdmin() (app.Service, context.Context, error) {
	p, err := a.principal()
	if err != nil {
		return nil, nil, err
	}
	c, err := a.service()
	if err != nil {
		return nil, nil, err
	}
	return c, cairn.NewContextWithPrincipal(a.ctx, p), nil
}

func proposalID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "proposals/"), 10, 64)
	if err != nil || id <= 0 {
		return 0, usageError("%q is not a proposal id (a number; cairn review list shows them)", s)
	}
	return id, nil
}

func (a *cli) reviewShowCmd() *cobra.Command {
	var color string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a proposal: what it changes (a unified diff) and the gates' findings",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := proposalID(args[0])
			if err != nil {
				return err
			}
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			view, err := c.ShowProposal(a.ctx, id, app.ProposalOptions{Patch: !a.json})
			if err != nil {
				return err
			}
			p, changes, patches := view.Proposal, view.Changes, view.Patches
			colored, err := a.colored(color)
			if err != nil {
				return err
			}
			out := items([]*cairn.Proposal{p})
			out["changes"] = changes
			return a.emit(out, func(w io.Writer) {
				fmt.Fprintf(w, "proposal %d: %s (%s, %s)\n", p.ID, p.Status, p.Route, p.Origin)
				fmt.Fprintf(w, "by       %s, %s\n", p.Principal, p.Created.Local().Format(time.DateTime))
				fmt.Fprintf(w, "message  %s\n", firstLine(p.Message))
				if p.Summary != "" {
					fmt.Fprintf(w, "summary  %s\n", p.Summary)
				}
				if !p.Decided.IsZero() {
					fmt.Fprintf(w, "decided  %s by %s", p.Decided.Local().Format(time.DateTime), p.DecidedBy)
					if p.Reason != "" {
						fmt.Fprintf(w, ": %s", p.Reason)
					}
					fmt.Fprintln(w)
				}
				if p.Error != "" {
					fmt.Fprintf(w, "error    %s\n", p.Error)
				}
				fmt.Fprintf(w, "verdict  %s\n", p.Verdict)
				if len(p.Findings) > 0 {
					fmt.Fprintln(w, "findings:")
					printFindings(w, p.Findings, cairn.Admit)
				}
				fmt.Fprintf(w, "changes: %s\n", plural(len(changes), "file"))
				printChanges(w, changes)
				for _, patch := range patches {
					io.WriteString(w, colorPatch(patch, colored))
				}
			})
		},
	}
	cmd.Flags().StringVar(&color, "color", "auto", "colour the diff: auto (on a terminal), always, never")
	return cmd
}

// colored decides whether to colour output: auto colours a terminal
// unless NO_COLOR is set.
func (a *cli) colored(mode string) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		f, ok := a.stdout.(*os.File)
		return ok && !a.json && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd())), nil
	}
	return false, usageError("--color is auto, always or never, not %q", mode)
}

// colorPatch colours a unified diff: additions green, deletions red, hunk
// headers cyan.
func colorPatch(patch string, on bool) string {
	if !on {
		return patch
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(patch, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			b.WriteString("\x1b[1m" + strings.TrimSuffix(line, "\n") + "\x1b[0m")
		case strings.HasPrefix(line, "+"):
			b.WriteString("\x1b[32m" + strings.TrimSuffix(line, "\n") + "\x1b[0m")
		case strings.HasPrefix(line, "-"):
			b.WriteString("\x1b[31m" + strings.TrimSuffix(line, "\n") + "\x1b[0m")
		case strings.HasPrefix(line, "@@"):
			b.WriteString("\x1b[36m" + strings.TrimSuffix(line, "\n") + "\x1b[0m")
		default:
			b.WriteString(strings.TrimSuffix(line, "\n"))
		}
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func (a *cli) reviewAcceptCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "accept ID",
		Short: "Merge a held proposal into main (your decision is recorded)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := proposalID(args[0])
			if err != nil {
				return err
			}
			c, ctx, err := a.openAdmin()
			if err != nil {
				return err
			}
			defer c.Close()
			d, err := c.Accept(ctx, id)
			if err != nil {
				return err
			}
			out, rep := d.Outcome, d.Sync
			item := outcomeItem(out)
			item["sync"] = rep
			return a.emit(items([]map[string]any{item}), func(w io.Writer) {
				fmt.Fprintf(w, "Accepted proposal %d: main is now %s.\n", id, out.Commit.Hash.Short())
				printSync(w, rep)
			})
		},
	}
}

func (a *cli) reviewRejectCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "reject ID [--reason WHY]",
		Short: "Reject a held proposal; an ingest's source stays rejected until retried",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := proposalID(args[0])
			if err != nil {
				return err
			}
			c, ctx, err := a.openAdmin()
			if err != nil {
				return err
			}
			defer c.Close()
			d, err := c.Reject(ctx, id, reason)
			if err != nil {
				return err
			}
			prop, rep := d.Proposal, d.Sync
			return a.emit(items([]*cairn.Proposal{prop}), func(w io.Writer) {
				fmt.Fprintf(w, "Rejected proposal %d; it stays as the branch %s.\n", id, admit.ProposalBranch(id))
				if prop.Source != "" {
					fmt.Fprintf(w, "Its source stays rejected until cairn sources retry %.12s.\n", prop.Source)
				}
				printSync(w, rep)
			})
		},
	}
	cmd.Flags().StringVarP(&reason, "reason", "r", "", "why, for the record")
	return cmd
}

func (a *cli) reviewRecheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "recheck ID",
		Short: "Run the gates again on a held proposal (after fixing it on its branch)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := proposalID(args[0])
			if err != nil {
				return err
			}
			c, ctx, err := a.openAdmin()
			if err != nil {
				return err
			}
			defer c.Close()
			d, err := c.Recheck(ctx, id)
			if err != nil {
				return err
			}
			out, rep := d.Outcome, d.Sync
			if !out.Admitted() {
				return a.emit(items([]map[string]any{outcomeItem(out)}), func(w io.Writer) { a.refused(w, out) })
			}
			item := outcomeItem(out)
			item["sync"] = rep
			return a.emit(items([]map[string]any{item}), func(w io.Writer) {
				fmt.Fprintf(w, "Proposal %d passes the gates now: admitted as %s.\n", id, out.Commit.Hash.Short())
				printSync(w, rep)
			})
		},
	}
}
