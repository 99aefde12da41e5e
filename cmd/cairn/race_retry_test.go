package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRetryRace: several cairn sources retry processes at once on one
// failed source, round after round. Each round queues it once: one
// process retries it, the others are told it changed meanwhile (exit 1),
// and its history gains one retry, not one per process.
func TestRetryRace(t *testing.T) {
	if testing.Short() {
		t.Skip("races child processes")
	}
	_, vault, sources := ingestVault(t, "echo failing on purpose\nexit 3")
	if r := run(t, vault, nil, "ingest", sources[0]); r.code != exitRefused {
		t.Fatalf("ingest with a failing agent: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := sourcesOf(t, vault)[0].ID
	const rounds, procs = 5, 4
	for round := range rounds {
		calls := make([][]string, procs)
		for i := range calls {
			calls[i] = []string{"sources", "retry", id}
		}
		ok := 0
		for _, res := range racing(t, vault, calls) {
			switch res.code {
			case exitOK:
				ok++
			case exitRefused, exitUsage:
				// Changed meanwhile (exit 1), or no longer failed when this
				// process read it (exit 2): either way, refused.
			default:
				t.Errorf("round %d: sources retry: exit %d\n%s%s", round, res.code, res.stdout, res.stderr)
			}
		}
		if ok != 1 {
			t.Errorf("round %d: %d of %d concurrent retries succeeded, want 1", round, ok, procs)
		}
		r := run(t, vault, nil, "sources", "show", id, "--json")
		must(t, r, "sources show")
		var shown struct {
			Items []struct {
				Status  string `json:"status"`
				History []struct {
					Status string `json:"status"`
					Detail string `json:"detail"`
				} `json:"history"`
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || len(shown.Items) != 1 {
			t.Fatalf("sources show --json: %v\n%s", err, r.stdout)
		}
		retries := 0
		for _, h := range shown.Items[0].History {
			if strings.HasPrefix(h.Detail, "retried") {
				retries++
			}
		}
		if retries != round+1 {
			t.Fatalf("round %d: the history holds %d retries, want %d", round, retries, round+1)
		}
		// The agent fails again, and the next round retries it again.
		must(t, run(t, vault, nil, "worker", "--drain"), "worker --drain")
		if s := sourcesOf(t, vault)[0]; s.Status != "failed" {
			t.Fatalf("round %d: after the worker the source is %s", round, s.Status)
		}
	}
}
