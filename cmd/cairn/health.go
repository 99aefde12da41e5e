package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
)

func (a *cli) healthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Run the agent's health check of the vault, and keep its report",
		Long: `Health asks the vault's agent to check main, read-only: contradictions
between pages, weak provenance, stale claims, coverage gaps and research
questions, each with the pages it rests on (pages main does not have are
dropped and counted). The report is kept: cairn health list lists the
reports, cairn health show ID shows one.

The check needs a model: the built-in agent (agent.runtime llm) or an
agent CLI (claude, codex, opencode), run read-only. The deterministic
checks — broken links, orphans, missing titles — are cairn lint's.`,
		Example: `  cairn health
  cairn health list
  cairn health show 3f9a`,
		Args: cobra.NoArgs,
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
			rep, err := c.Health(cairn.NewContextWithPrincipal(a.ctx, p))
			if err != nil {
				return err
			}
			return a.emit(rep, func(w io.Writer) { printHealth(w, rep) })
		},
	}
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List the kept health reports, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			reps, err := c.HealthReports(a.ctx, limit)
			if err != nil {
				return err
			}
			return a.emit(items(reps), func(w io.Writer) {
				if len(reps) == 0 {
					fmt.Fprintln(w, "No health reports. cairn health makes one.")
					return
				}
				for _, r := range reps {
					fmt.Fprintf(w, "%s  %s  %s  %d findings  %s\n", r.ID, r.Time.Local().Format(time.DateTime), r.Commit.Short(), len(r.Findings), headline(r.Summary))
				}
			})
		},
	}
	list.Flags().IntVar(&limit, "limit", 20, "the most reports to list")
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a kept health report",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			rep, err := c.HealthReportByID(a.ctx, args[0])
			if err != nil {
				return err
			}
			return a.emit(rep, func(w io.Writer) { printHealth(w, rep) })
		},
	}
	cmd.AddCommand(list, show)
	return cmd
}

// headline is the first line of s, at most 72 characters.
func headline(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 72 {
		line = string(r[:71]) + "…"
	}
	return shown(line)
}

func printHealth(w io.Writer, r *app.HealthReport) {
	fmt.Fprintf(w, "Health report %s of main at %s, by the %s agent (%s):\n\n%s\n", r.ID, r.Commit.Short(), r.Agent, r.Time.Local().Format(time.DateTime), shown(r.Summary))
	for i, f := range r.Findings {
		fmt.Fprintf(w, "\n%d. [%s] %s\n   %s\n", i+1, f.Kind, shown(f.Title), shown(f.Detail))
		if len(f.Pages) > 0 {
			fmt.Fprintf(w, "   pages: %s\n", strings.Join(f.Pages, ", "))
		}
		if f.NextStep != "" {
			fmt.Fprintf(w, "   next: %s\n", shown(f.NextStep))
		}
	}
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "\nNo findings.")
	}
	if r.Dropped > 0 {
		fmt.Fprintf(w, "(%d pages or findings the agent named were left out: not on main, or of no known kind)\n", r.Dropped)
	}
	if r.Usage != nil {
		fmt.Fprintf(w, "Used %s.\n", r.Usage)
	}
}
