package app_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cairn"
	"cairn/admit"
	"cairn/app"
)

func TestApp_Review(t *testing.T) {
	t.Run("Accept", func(t *testing.T) {
		a, ctx := adminSetup(t)
		id := adminHeld(t, a, ctx, "10m")
		props, err := a.Proposals(ctx, admit.ProposalFilter{})
		if err != nil || len(props) != 1 || props[0].ID != id {
			t.Fatalf("Proposals() = %v, %v; want proposal %d", props, err, id)
		}
		view, err := a.ShowProposal(ctx, id, app.ProposalOptions{Patch: true})
		if err != nil {
			t.Fatalf("ShowProposal(%d): %v", id, err)
		}
		if view.Proposal.ID != id || len(view.Changes) != 1 || view.Changes[0].Path != admit.PolicyFile {
			t.Errorf("ShowProposal(%d) = %+v, want its one change to %s", id, view, admit.PolicyFile)
		}
		if patch := view.Patches[0]; len(view.Patches) != 1 || !strings.Contains(patch, "+  timeout: 10m") {
			t.Errorf("Patch = %q, want the added timeout", patch)
		}
		d, err := a.Accept(ctx, id)
		if err != nil {
			t.Fatalf("Accept(%d): %v", id, err)
		}
		if !d.Outcome.Admitted() || d.Proposal.Status != cairn.ProposalAccepted || d.Proposal.DecidedBy != cairn.User("tester") {
			t.Errorf("Accept(%d) = %+v, proposal %+v; want admitted, accepted by user:tester", id, d.Outcome, d.Proposal)
		}
		if d.Sync == nil || !slices.Contains(d.Sync.Updated, admit.PolicyFile) {
			t.Errorf("Accept(%d).Sync = %+v, want %s written", id, d.Sync, admit.PolicyFile)
		}
		if _, err := os.Stat(filepath.Join(a.Root(), admit.PolicyFile)); err != nil {
			t.Errorf("after Accept, the folder has no %s: %v", admit.PolicyFile, err)
		}
		if s, err := a.Setting(ctx, "agent.timeout"); err != nil || s.Value != "10m0s" {
			t.Errorf("after Accept, Setting(agent.timeout) = %+v, %v; want 10m0s", s, err)
		}
		_, err = a.Accept(ctx, id)
		adminCode(t, "Accept of an accepted proposal", err, cairn.ECONFLICT)
		accepted, err := a.Proposals(ctx, admit.ProposalFilter{Status: cairn.ProposalAccepted})
		if err != nil || len(accepted) != 1 {
			t.Errorf("Proposals(accepted) = %v, %v; want one", accepted, err)
		}
	})
	t.Run("Reject", func(t *testing.T) {
		a, ctx := adminSetup(t)
		id := adminHeld(t, a, ctx, "10m")
		d, err := a.Reject(ctx, id, "not now")
		if err != nil {
			t.Fatalf("Reject(%d): %v", id, err)
		}
		if d.Proposal.Status != cairn.ProposalRejected || d.Proposal.Reason != "not now" || d.Outcome != nil {
			t.Errorf("Reject(%d) = %+v, proposal %+v; want rejected for the reason", id, d, d.Proposal)
		}
		if _, err := os.Stat(filepath.Join(a.Root(), admit.PolicyFile)); err == nil {
			t.Errorf("after Reject, the folder has %s", admit.PolicyFile)
		}
		_, err = a.Reject(ctx, id, "again")
		adminCode(t, "Reject of a rejected proposal", err, cairn.ECONFLICT)
	})
	t.Run("Recheck", func(t *testing.T) {
		a, ctx := adminSetup(t)
		id := adminHeld(t, a, ctx, "10m")
		d, err := a.Recheck(ctx, id)
		if err != nil {
			t.Fatalf("Recheck(%d): %v", id, err)
		}
		if d.Outcome.Admitted() || d.Proposal.Status != cairn.ProposalHeld || d.Sync != nil {
			t.Errorf("Recheck(%d) = %+v, want still held, no sync", id, d)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		a, ctx := adminSetup(t)
		_, err := a.Proposals(ctx, admit.ProposalFilter{Status: "pending"})
		adminCode(t, "Proposals(pending)", err, cairn.EINVALID)
		_, err = a.ShowProposal(ctx, 0, app.ProposalOptions{})
		adminCode(t, "ShowProposal(0)", err, cairn.EINVALID)
		_, err = a.Accept(ctx, -1)
		adminCode(t, "Accept(-1)", err, cairn.EINVALID)
		id := adminHeld(t, a, ctx, "10m")
		_, err = a.Reject(ctx, id, strings.Repeat("x", 5000))
		adminCode(t, "Reject with a 5000-byte reason", err, cairn.EINVALID)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		a, ctx := adminSetup(t)
		_, err := a.ShowProposal(ctx, 99, app.ProposalOptions{})
		adminCode(t, "ShowProposal(99)", err, cairn.ENOTFOUND)
		_, err = a.Accept(ctx, 99)
		adminCode(t, "Accept(99)", err, cairn.ENOTFOUND)
		_, err = a.Recheck(ctx, 99)
		adminCode(t, "Recheck(99)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		a, ctx := adminSetup(t)
		id := adminHeld(t, a, ctx, "10m")
		anon := t.Context()
		_, err := a.Accept(anon, id)
		adminCode(t, "Accept without a principal", err, cairn.EUNAUTHORIZED)
		_, err = a.Reject(anon, id, "")
		adminCode(t, "Reject without a principal", err, cairn.EUNAUTHORIZED)
		_, err = a.Recheck(anon, id)
		adminCode(t, "Recheck without a principal", err, cairn.EUNAUTHORIZED)
		if view, err := a.ShowProposal(anon, id, app.ProposalOptions{}); err != nil || view.Proposal.Status != cairn.ProposalHeld {
			t.Errorf("ShowProposal without a principal = %v, %v; want the held proposal (reading needs no one)", view, err)
		}
	})
}
