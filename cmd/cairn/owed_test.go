package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
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

// TestCatchUpProblem: a working tree that cannot be brought up to its
// branch (a symbolic link where the branch needs a folder) is a warning on
// every command, and a problem doctor lists; it does not stop the vault
// from working, and removing the tree clears it.
func TestCatchUpProblem(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
	must(t, run(t, vault, nil, "init"), "init")
	must(t, run(t, vault, nil, "branch", "draft"), "branch")
	draft := filepath.Join(root, "draft")
	must(t, run(t, vault, nil, "worktree", "add", draft, "draft"), "worktree add")
	if err := os.Mkdir(filepath.Join(root, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(draft, "sub")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, vault, map[string]string{"sub/x.md": "x\n"})
	must(t, run(t, vault, nil, "commit", "-m", "sub"), "commit")
	// The merge moves draft; writing sub/x.md through the link is refused.
	run(t, vault, nil, "merge", "main", "--into", "draft")
	for _, args := range [][]string{{"status"}, {"log", "-n", "1"}} {
		r := run(t, vault, nil, args...)
		must(t, r, args...)
		if !strings.Contains(r.stderr, "warning: "+draft+" is behind its branch draft") || !strings.Contains(r.stderr, "Hint: ") {
			t.Errorf("cairn %v does not warn about the tree it cannot bring up:\n%s", args, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "elsewhere", "x.md")); err == nil {
		t.Errorf("a sync wrote through the symbolic link")
	}
	d := run(t, vault, nil, "doctor")
	if d.code != exitRefused || !strings.Contains(d.stdout, draft+" is behind its branch draft") {
		t.Errorf("doctor does not list the tree as a problem: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
	must(t, run(t, vault, nil, "worktree", "remove", "--force", draft), "worktree remove")
	if d := run(t, vault, nil, "doctor"); d.code != 0 {
		t.Errorf("doctor after the tree was removed: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// TestCatchUpBusy: a sync cut short, while another process holds the
// vault's write lock: a read command neither waits nor writes any of the
// folder's files; once the lock is free, the next command finishes it.
func TestCatchUpBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	files := map[string]string{"index.md": "# Home\n"}
	for i := range 20 {
		files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("note %d\n", i)
	}
	writeFiles(t, vault, files)
	must(t, run(t, vault, nil, "init"), "init")
	incoming := map[string]string{}
	for i := range 20 {
		incoming[fmt.Sprintf("imported/p%02d.md", i)] = fmt.Sprintf("imported %d\n", i)
	}
	writeFiles(t, filepath.Join(root, "incoming"), incoming)
	r := run(t, vault, []string{"CAIRN_CRASH_AT=sync:file-written"}, "import", "../incoming")
	if r.signal != syscall.SIGKILL {
		t.Fatalf("import was not killed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	before := readTree(t, vault)
	tx := holdWriteLock(t, vault)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cairnBin(t), "status")
	cmd.Dir = vault
	cmd.Env = append(os.Environ(), "CAIRN_USER=tester", "CAIRN_BUSY_TIMEOUT_MS=600000")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil || err != nil {
		t.Fatalf("status while another process writes: %v (killed after a minute: %v)\n%s", err, ctx.Err() != nil, out)
	}
	if diff := gocmp.Diff(before, readTree(t, vault)); diff != "" {
		t.Errorf("status wrote into the folder while the vault was busy (-before +after):\n%s", diff)
	}
	tx.Rollback()
	n := run(t, vault, nil, "status")
	must(t, n, "status")
	if diff := differences(readTree(t, vault), exportMain(t, vault)); len(diff) > 0 {
		t.Errorf("once the lock is free, the folder still differs from main: %v", diff)
	}
}
