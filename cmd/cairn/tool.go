package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"cairn/app"
	"cairn/eva"
)

func (a *cli) toolCmd() *cobra.Command {
	var req app.AskRequest
	cmd := &cobra.Command{
		Use:   "tool [NAME] [--focus TEXT] [--format F] [--count N]",
		Short: "Run one of Eva's profile tools on the vault (read-only); without NAME, list them",
		Long: `Tool runs one of Eva's seven profile tools through the vault's agent, read-only,
as cairn ask does: the result cites the pages it rests on, each checked to
exist on main, and --save keeps it as an analysis page held for review.

  personal-review   Reflection      (personal)   patterns, movement, questions to revisit
  evidence-map      Evidence map    (research)   claims, evidence for and against, confidence
  reading-threads   Threads map     (reading)    characters and events on the plot's threads
  decision-brief    Decision brief  (business)   decision, evidence, options, owners, risks
  options-review    Options review  (planning)   options against objectives and constraints
  flashcards        Flashcards      (course)     --count 6 to 30 cards (default 15)
  practice-exam     Practice exam   (course)     --count 4 to 20 questions (default 8),
                                                 --format mixed, multiple-choice, written or short-answer

Any vault may run any tool; in an Eva brain the prompt names its profile.
--focus (at most 400 characters) narrows the subject. The default agent
(extractive, offline) makes flashcards, practice exams and evidence maps
from the pages' own sentences; the others need a model (agent.runtime llm,
claude, codex or opencode) and it says so.`,
		Example: `  cairn tool
  cairn tool flashcards --focus "paper making" --count 10
  cairn tool practice-exam --format multiple-choice --save
  cairn tool evidence-map --scope concepts/paper,concepts/printing-ink`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				ts := eva.Tools()
				return a.emit(items(ts), func(w io.Writer) {
					for _, t := range ts {
						fmt.Fprintf(w, "%-16s %-15s (%s)\n", t.ID, t.Label, t.Origin)
					}
				})
			}
			req.Tool = args[0]
			ans, err := a.ask(req)
			if err != nil {
				return err
			}
			return a.emit(ans, func(w io.Writer) {
				fmt.Fprintf(w, "# %s\n\n", strings.TrimSpace(ans.Question))
				printAnswer(w, ans)
			})
		},
	}
	cmd.Flags().StringVar(&req.Focus, "focus", "", "narrow the tool to a subject (at most 400 characters)")
	cmd.Flags().StringVar(&req.Format, "format", "", "practice-exam: mixed (default), multiple-choice, written or short-answer")
	cmd.Flags().IntVar(&req.Count, "count", 0, "flashcards (6 to 30, default 15) or practice-exam questions (4 to 20, default 8)")
	cmd.Flags().BoolVar(&req.Save, "save", false, "keep the result as an analysis page, held for review")
	cmd.Flags().StringSliceVar(&req.Scope, "scope", nil, "a working set: the only pages the tool may read and cite")
	return cmd
}
