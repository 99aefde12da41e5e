package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestImportContract: a folder, a git history or a branch that brings a
// cairn.yaml naming an agent command is held for a person, the verdict
// names the command, and until a person accepts it no ingest runs it.
func TestImportContract(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(root, "the-agent-ran")
	policy := "agent:\n  runtime: command\n  command: \"/bin/sh -c ': > " + marker + "'\"\n"
	incoming := map[string]string{"cairn.yaml": policy, "notes/imported.md": "# Imported\n"}
	source := filepath.Join(root, "source.md")
	writeFiles(t, root, map[string]string{"source.md": "# A source\n\nPaper was made from rags. Rags were scarce.\n"})

	// held checks that a command was held for review with the command
	// named, and returns the proposal's id.
	held := func(t *testing.T, r result, args ...string) string {
		t.Helper()
		m := regexp.MustCompile(`Held for review as proposal (\d+)`).FindStringSubmatch(r.stdout)
		if r.code != 1 || m == nil || !strings.Contains(r.stdout, marker) {
			t.Fatalf("cairn %v: exit %d, want 1, held, naming the command:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return m[1]
	}
	// noAgent checks that main has no cairn.yaml and that an ingest runs the
	// default agent.
	noAgent := func(t *testing.T, vault string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(vault, "cairn.yaml")); err == nil {
			t.Errorf("cairn.yaml is in the vault's folder")
		}
		must(t, run(t, vault, nil, "ingest", source), "ingest")
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the imported agent command ran")
		}
	}

	t.Run("IntoNewVault", func(t *testing.T) {
		vault, dir := filepath.Join(root, "new"), filepath.Join(root, "incoming1")
		writeFiles(t, dir, incoming)
		must(t, run(t, root, nil, "init", vault), "init")
		held(t, run(t, vault, nil, "import", dir), "import")
		noAgent(t, vault)
	})
	t.Run("IntoVault", func(t *testing.T) {
		vault, dir := filepath.Join(root, "old"), filepath.Join(root, "incoming2")
		writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
		writeFiles(t, dir, incoming)
		must(t, run(t, root, nil, "init", vault), "init")
		id := held(t, run(t, vault, nil, "import", dir), "import")
		noAgent(t, vault)
		// A person who looked at it may accept it.
		r := run(t, vault, nil, "review", "accept", id)
		must(t, r, "review accept")
		if data, err := os.ReadFile(filepath.Join(vault, "cairn.yaml")); err != nil || string(data) != policy {
			t.Errorf("after accept, cairn.yaml = %q, %v", data, err)
		}
	})
	t.Run("History", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("no git")
		}
		vault, repo := filepath.Join(root, "hist"), filepath.Join(root, "repo")
		writeFiles(t, repo, incoming)
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "--all"}, {"commit", "-q", "-m", "settings"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
				"GIT_AUTHOR_NAME=Eve", "GIT_AUTHOR_EMAIL=eve@example.org", "GIT_COMMITTER_NAME=Eve", "GIT_COMMITTER_EMAIL=eve@example.org")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		must(t, run(t, root, nil, "init", vault), "init")
		held(t, run(t, vault, nil, "import", "--history", repo), "import --history")
		noAgent(t, vault)
	})
	t.Run("Merge", func(t *testing.T) {
		vault, side := filepath.Join(root, "merge"), filepath.Join(root, "side")
		writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
		must(t, run(t, root, nil, "init", vault), "init")
		must(t, run(t, vault, nil, "branch", "side"), "branch")
		must(t, run(t, vault, nil, "worktree", "add", side, "side"), "worktree add")
		writeFiles(t, side, map[string]string{"cairn.yaml": policy})
		must(t, run(t, side, nil, "commit", "-m", "an agent of my own"), "commit on side")
		held(t, run(t, vault, nil, "merge", "side"), "merge")
		noAgent(t, vault)
	})
}
