package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"cairn/app"
)

func (a *cli) askCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ask QUESTION",
		Short: "Ask the vault: its agent answers from main, with the pages it rests on",
		Long: `Ask answers a question from the vault, read-only, with the vault's agent as
main's cairn.yaml sets it: the default agent (extractive) answers offline,
with no key, by retrieval — the passages of the pages that best match the
question's words; the built-in agent (agent.runtime llm) answers through
its model, reading the vault with cairn's tools. The answer lists the pages
it cites (each checked to exist on main, with the sources under raw/ it
rests on); citations that name no page are dropped and counted.

The question is the arguments, joined; at most 4000 characters. The agent
CLIs (claude, codex, opencode) do not answer questions yet.`,
		Example: `  cairn ask "who printed the first book in English?"
  cairn ask what made oil-based ink necessary --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.service()
			if err != nil {
				return err
			}
			defer c.Close()
			ans, err := c.Ask(a.ctx, app.AskRequest{Question: strings.Join(args, " ")})
			if err != nil {
				return err
			}
			return a.emit(ans, func(w io.Writer) { printAnswer(w, ans) })
		},
	}
}

func printAnswer(w io.Writer, ans *app.Answer) {
	fmt.Fprintln(w, ans.Answer)
	if len(ans.Citations) > 0 {
		fmt.Fprintln(w, "\nCited:")
		for _, c := range ans.Citations {
			line := "  " + shown(c.Page)
			if c.Title != "" {
				line += " — " + shown(c.Title)
			}
			if len(c.Sources) > 0 {
				line += " (from " + strings.Join(c.Sources, ", ") + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
	if ans.Dropped > 0 {
		fmt.Fprintf(w, "(%d citations named no page on main and were left out)\n", ans.Dropped)
	}
	by := "Answered by the " + ans.Agent + " agent at " + ans.Commit.Short()
	if ans.Usage != nil {
		by += ", " + ans.Usage.String()
	}
	fmt.Fprintln(w, by+".")
}
