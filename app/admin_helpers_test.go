package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"cairn"
	"cairn/app"
)

// adminSetup returns a vault whose main holds index.md, imported by
// user:tester, and a context in which user:tester acts.
func adminSetup(t *testing.T) (*app.App, context.Context) {
	t.Helper()
	a, ctx := adminEmpty(t)
	src := adminFiles(t, map[string]string{"index.md": "# Home\n"})
	res, err := a.ImportFolder(ctx, src, nil)
	if err != nil || res.Commit == nil {
		t.Fatalf("ImportFolder(%q) = %+v, %v; want a commit", src, res, err)
	}
	return a, ctx
}

// adminEmpty returns a new vault without a commit, and a context in which
// user:tester acts.
func adminEmpty(t *testing.T) (*app.App, context.Context) {
	t.Helper()
	a, err := initApp(t, t.Context(), filepath.Join(t.TempDir(), "vault"), false, nil)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a, cairn.NewContextWithPrincipal(t.Context(), cairn.User("tester"))
}

// adminFiles writes files (path → content) into a new folder and returns it.
func adminFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// adminCode fails the test unless err has code want.
func adminCode(t *testing.T, what string, err error, want string) {
	t.Helper()
	if got := cairn.ErrorCode(err); err == nil || got != want {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, want)
	}
}

// adminHeld imports files that change the vault's contract, which
// admission holds for review, and returns the held proposal's id.
func adminHeld(t *testing.T, a *app.App, ctx context.Context, timeout string) int64 {
	t.Helper()
	src := adminFiles(t, map[string]string{"cairn.yaml": "agent:\n  timeout: " + timeout + "\n"})
	res, err := a.ImportFolder(ctx, src, nil)
	if err != nil {
		t.Fatalf("ImportFolder(cairn.yaml): %v", err)
	}
	if res.Outcome == nil || res.Outcome.Admitted() || res.Outcome.Proposal == nil || res.Outcome.Proposal.Status != cairn.ProposalHeld {
		t.Fatalf("ImportFolder(cairn.yaml) = %+v, want held", res.Outcome)
	}
	if res.Commit != nil || res.Sync != nil {
		t.Errorf("a held import has commit %v and sync %v, want none", res.Commit, res.Sync)
	}
	return res.Outcome.Proposal.ID
}
