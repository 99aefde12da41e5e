package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"cairn"
	"cairn/app"
)

func (a *cli) askCmd() *cobra.Command {
	var save bool
	var scope []string
	cmd := &cobra.Command{
		Use:   "ask QUESTION",
		Short: "Ask the vault: its agent answers from main, with the pages it rests on",
		Long: `Ask answers a question from the vault, read-only, with the vault's agent as
main's cairn.yaml sets it: the default agent (extractive) answers offline,
with no key, by retrieval — the passages of the pages that best match the
question's words; the built-in agent (agent.runtime llm) answers through
its model, reading the vault with cairn's tools; an agent CLI (claude,
codex, opencode) answers read-only in a workspace of main. The answer lists the pages
it cites (each checked to exist on main, with the sources under raw/ it
rests on); citations that name no page are dropped and counted.

--scope names a working set (up to 250 pages): the agent's view of the
vault then holds only those pages, index.md and the vault's rules — a
search finds nothing else, a read of another page is refused — and a
citation of a page outside it is dropped.

--save keeps the answer as an analysis page (analyses/DATE-SLUG.md: the
question, the answer and the pages it rests on as links), proposed and
always held for a person's review, whatever the gates say.

The question is the arguments, joined; at most 4000 characters.`,
		Example: `  cairn ask "who printed the first book in English?"
  cairn ask what made oil-based ink necessary --json
  cairn ask --save "how did paper reach Mainz?"
  cairn ask --scope concepts/paper,entities/mainz "where did Mainz get its paper?"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ans, err := a.ask(app.AskRequest{Question: strings.Join(args, " "), Save: save, Scope: scope})
			if err != nil {
				return err
			}
			return a.emit(ans, func(w io.Writer) { printAnswer(w, ans) })
		},
	}
	cmd.Flags().BoolVar(&save, "save", false, "keep the answer as an analysis page, held for review")
	cmd.Flags().StringSliceVar(&scope, "scope", nil, "a working set: the only pages the answer may read and cite (repeat or comma-separate; at most 250)")
	return cmd
}

// ask asks the vault a question, or runs a tool: as the principal who
// saves, when the answer is to be saved.
func (a *cli) ask(req app.AskRequest) (*app.Answer, error) {
	ctx := a.ctx
	if req.Save {
		p, err := a.principal()
		if err != nil {
			return nil, err
		}
		ctx = cairn.NewContextWithPrincipal(ctx, p)
	}
	c, err := a.service()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Ask(ctx, req)
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
	if ans.Saved != "" {
		fmt.Fprintf(w, "Saved as %s, held for review as proposal %d. Next: cairn review show %d\n", ans.Saved, ans.Proposal, ans.Proposal)
	}
	by := "Answered by the " + ans.Agent + " agent at " + ans.Commit.Short()
	if ans.Usage != nil {
		by += ", " + ans.Usage.String()
	}
	fmt.Fprintln(w, by+".")
}
