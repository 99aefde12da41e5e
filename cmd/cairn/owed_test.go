package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCrashBeforeSync kills each command that moves main after its
// admission commits and before it writes the folder. The folder is then
// behind main; the next command of any kind (doctor, or a read such as
// log) brings it up to main and says so, and doctor is clean.
func TestCrashBeforeSync(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	for _, sc := range []struct {
		name  string
		route string // the admission route killed; default name
		// prepare readies the vault and returns the command to kill.
		prepare func(t *testing.T, root, vault string) []string
	}{
		{"import", "", func(t *testing.T, root, vault string) []string {
			writeFiles(t, filepath.Join(root, "incoming"), map[string]string{"imported/a.md": "imported a\n", "imported/b.md": "imported b\n"})
			return []string{"import", "../incoming"}
		}},
		{"merge", "", func(t *testing.T, root, vault string) []string {
			must(t, run(t, vault, nil, "branch", "side"), "branch")
			side := filepath.Join(root, "side")
			must(t, run(t, vault, nil, "worktree", "add", side, "side"), "worktree add")
			writeFiles(t, side, map[string]string{"notes/n01.md": "changed on side\n", "side.md": "from side\n"})
			must(t, run(t, side, nil, "commit", "-m", "side"), "commit side")
			writeFiles(t, vault, map[string]string{"notes/n03.md": "changed on main\n"})
			must(t, run(t, vault, nil, "commit", "-m", "main"), "commit main")
			return []string{"merge", "side"}
		}},
		{"revert", "", func(t *testing.T, root, vault string) []string {
			writeFiles(t, vault, map[string]string{"notes/n02.md": "to be reverted\n"})
			must(t, run(t, vault, nil, "commit", "-m", "change n02"), "commit")
			return []string{"revert", "main"}
		}},
		{"settings", "", func(t *testing.T, root, vault string) []string {
			return []string{"settings", "set", "agent.timeout", "10m"}
		}},
		{"ingest", "", func(t *testing.T, root, vault string) []string {
			writeFiles(t, root, map[string]string{"paper.md": "# Paper mills\n\nPaper mills beat rags into pulp. Paper from Fabriano was prized.\n"})
			return []string{"ingest", "../paper.md"}
		}},
		{"accept", "ingest", func(t *testing.T, root, vault string) []string {
			// An agent's deletion is held; accepting it deletes the page.
			script := filepath.Join(root, "agent.sh")
			writeFiles(t, root, map[string]string{"agent.sh": "#!/bin/sh\ncat >/dev/null\nrm notes/n04.md\necho removed n04\n",
				"paper.md": "# Paper mills\n\nPaper mills beat rags into pulp.\n"})
			if err := os.Chmod(script, 0o755); err != nil {
				t.Fatal(err)
			}
			must(t, run(t, vault, nil, "settings", "set", "agent.command", script), "settings")
			must(t, run(t, vault, nil, "settings", "set", "agent.runtime", "command"), "settings")
			if r := run(t, vault, nil, "ingest", "../paper.md"); r.code != exitRefused || !strings.Contains(r.stdout, "held") {
				t.Fatalf("ingest: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			return []string{"review", "accept", fmt.Sprint(sourcesOf(t, vault)[0].Proposal)}
		}},
	} {
		for _, first := range [][]string{{"doctor"}, {"log", "-n", "1"}} {
			t.Run(sc.name+"/"+first[0], func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				vault := filepath.Join(root, "vault")
				files := map[string]string{"index.md": "# Home\n- [[notes/n01]]\n"}
				for i := range 5 {
					files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("note %d\n", i)
				}
				writeFiles(t, vault, files)
				must(t, run(t, vault, nil, "init"), "init")
				cmd := sc.prepare(t, root, vault)
				point := "admit:committed:" + cmp.Or(sc.route, sc.name)
				r := run(t, vault, []string{"CAIRN_CRASH_AT=" + point}, cmd...)
				if r.signal != syscall.SIGKILL {
					t.Fatalf("cairn %v was not killed at %s: exit %d\n%s%s", cmd, point, r.code, r.stdout, r.stderr)
				}
				n := run(t, vault, nil, first...)
				must(t, n, first...)
				if !strings.Contains(n.stdout+n.stderr, "brought "+vault+" up to branch main") {
					t.Errorf("cairn %v did not say it brought the folder up to main:\n%s%s", first, n.stdout, n.stderr)
				}
				if diff := differences(readTree(t, vault), exportMain(t, vault)); len(diff) > 0 {
					t.Errorf("after cairn %v the folder still differs from main: %v", first, diff)
				}
				d := run(t, vault, nil, "doctor")
				if d.code != 0 || !strings.Contains(d.stdout, "No problems found.") || strings.Contains(d.stdout, "Repaired") {
					t.Errorf("doctor after the repair:\n%s%s", d.stdout, d.stderr)
				}
			})
		}
	}
}

// exportMain writes main's head to a new folder and reads it back.
func exportMain(t *testing.T, vault string) map[string]string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "export")
	must(t, run(t, vault, nil, "export", dir), "export")
	return readTree(t, dir)
}

// differences lists the paths whose content differs between two trees.
func differences(got, want map[string]string) []string {
	var out []string
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			out = append(out, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}
