package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBranchReadsBesideAWriter: reads of a branch that is not main (its
// findings, its pages) apply the branch's difference from main's index to
// a snapshot in memory and take no write lock. While cairn reindex holds
// the lock for seconds, cairn lint --at and cairn list --at of the branch,
// each allowed one second for the lock, all answer, twice over.
func TestBranchReadsBesideAWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("races child processes")
	}
	dir, v := adoptedVault(t, 8000)
	must(t, run(t, dir, nil, "branch", "old"), "branch old")
	page := filepath.Join(dir, filepath.FromSlash(v.Path(7)))
	if err := os.WriteFile(page, []byte("# Changed on main\n\n[[nowhere]] gardens\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, run(t, dir, nil, "commit", "-m", "main moves on", v.Path(7)), "commit")
	busy := []string{"CAIRN_BUSY_TIMEOUT_MS=1000"}
	besideLong(t, dir, []string{"reindex"}, func(round, n int) result {
		if n%2 == 0 {
			return run(t, dir, busy, "lint", "--at", "old")
		}
		return run(t, dir, busy, "list", "--at", "old", "--type", "concept")
	})
}
