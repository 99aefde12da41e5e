package main

import (
	"fmt"
	"io"
	"strings"

	"cairn"
	"cairn/admit"
)

// outcomeItem is the JSON shape of an admission outcome.
func outcomeItem(out *admit.Outcome) map[string]any {
	m := map[string]any{"verdict": out.Verdict, "findings": findingsOrEmpty(out.Findings), "origin": out.Origin}
	if out.Proposal != nil {
		m["id"] = out.Proposal.ID
		m["proposal"] = out.Proposal.ID
		m["status"] = out.Proposal.Status
	}
	if out.Commit != nil {
		m["commit"] = out.Commit
		if out.Proposal == nil {
			m["id"] = out.Commit.Hash
		}
	}
	if len(out.Lint) > 0 {
		m["lint"] = out.Lint
	}
	if out.Rebased {
		m["rebased"] = true
	}
	return m
}

func findingsOrEmpty(fs []cairn.Finding) []cairn.Finding {
	if fs == nil {
		return []cairn.Finding{}
	}
	return fs
}

// refused prints why admission did not admit a change and sets exit code 1.
func (a *cli) refused(w io.Writer, out *admit.Outcome) {
	a.code = exitRefused
	id := out.Proposal.ID
	switch out.Verdict {
	case cairn.Reject:
		fmt.Fprintf(w, "Rejected: the change was refused and kept as proposal %d (branch %s).\n", id, admit.ProposalBranch(id))
	default:
		fmt.Fprintf(w, "Held for review as proposal %d: a person must decide.\n", id)
	}
	printFindings(w, out.Findings, cairn.Admit)
	if out.Verdict == cairn.Hold {
		fmt.Fprintf(w, "Next: cairn review show %d, then cairn review accept %d or cairn review reject %d\n", id, id, id)
	}
}

// printFindings prints the findings whose verdict is at least min.
func printFindings(w io.Writer, fs []cairn.Finding, min cairn.Verdict) {
	for _, f := range fs {
		if f.Verdict.Rank() < min.Rank() {
			continue
		}
		msg := f.Message
		if f.Page != "" && !strings.HasPrefix(msg, f.Page) {
			msg = f.Page + ": " + msg
		}
		fmt.Fprintf(w, "  %-6s %s/%s  %s\n", f.Verdict, f.Gate, f.Rule, msg)
	}
}

// printAdmitted prints what an admitted change brought that a person
// should see: the changes to the vault's contract (which name the agent
// command ingests will run from now on) and the new lint findings.
func printAdmitted(w io.Writer, out *admit.Outcome) {
	for _, f := range out.Findings {
		if f.Gate == admit.GateContract {
			fmt.Fprintf(w, "Contract: %s\n", f.Message)
		}
	}
	if len(out.Lint) == 0 {
		return
	}
	fmt.Fprintf(w, "The change brings %s (admitted; cairn lint lists them):\n", plural(len(out.Lint), "new finding"))
	for i, f := range out.Lint {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more\n", len(out.Lint)-10)
			break
		}
		fmt.Fprintf(w, "  %-7s %-16s %s: %s\n", f.Severity, f.Rule, f.Page, f.Message)
	}
}
