package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cairn/internal/vaultgen"
)

// cairnBin is the cairn command that testscript.Main puts on $PATH (a copy
// of this test binary): the crash and concurrency tests run it as a child
// process.
func cairnBin(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("cairn")
	if err != nil {
		t.Fatalf("cairn is not on $PATH: %v", err)
	}
	return p
}

type result struct {
	code           int
	stdout, stderr string
	signal         syscall.Signal
}

func run(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(cairnBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAIRN_USER=tester")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	} else if err != nil {
		t.Fatalf("cairn %v: %v", args, err)
	}
	return r
}

func must(t *testing.T, r result, args ...string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("cairn %v exited %d:\n%s%s", args, r.code, r.stdout, r.stderr)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrash kills cairn import, commit, merge and gc at named points. On
// the next run doctor is clean, and once a command has run in the folder
// (which finishes an interrupted sync) the folder holds exactly main's
// head: the old state or the new one, never a mix.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	type scenario struct {
		cmd    []string
		points []string
	}
	for _, sc := range []scenario{
		{[]string{"import", "../incoming"}, []string{"commit:objects-written", "commit:ref-updated", "sync:journaled", "sync:file-written", "sync:files-written"}},
		{[]string{"commit", "-m", "person's edits"}, []string{"commit:objects-written", "commit:ref-updated", "commit:committed", "sync:journaled", "sync:files-written"}},
		{[]string{"merge", "side"}, []string{"commit:objects-written", "commit:ref-updated", "sync:file-written"}},
		{[]string{"gc", "--now"}, []string{"gc:marked", "gc:deleted-batch"}},
	} {
		for _, point := range sc.points {
			t.Run(sc.cmd[0]+"/"+point, func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				vault := filepath.Join(root, "vault")
				files := map[string]string{"index.md": "# Home\n- [[a]]\n"}
				for i := range 30 {
					files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("note %d\n", i)
				}
				writeFiles(t, vault, files)
				must(t, run(t, vault, nil, "init"), "init")
				// A branch to merge, edits to commit, files to import, and
				// garbage for gc (a deleted branch, collected with --now).
				must(t, run(t, vault, nil, "branch", "side"), "branch")
				side := filepath.Join(root, "side")
				must(t, run(t, vault, nil, "worktree", "add", side, "side"), "worktree add")
				writeFiles(t, side, map[string]string{"notes/n01.md": "changed on side\n", "side.md": "from side\n"})
				must(t, run(t, side, nil, "commit", "-m", "side"), "commit side")
				// Main moves too, so the merge makes a merge commit.
				writeFiles(t, vault, map[string]string{"notes/n03.md": "changed on main\n"})
				must(t, run(t, vault, nil, "commit", "-m", "main"), "commit main")
				must(t, run(t, vault, nil, "branch", "junk"), "branch junk")
				junk := filepath.Join(root, "junk")
				must(t, run(t, vault, nil, "worktree", "add", junk, "junk"), "worktree add junk")
				writeFiles(t, junk, map[string]string{"junk.md": strings.Repeat("junk\n", 1000)})
				must(t, run(t, junk, nil, "commit", "-m", "junk"), "commit junk")
				must(t, run(t, vault, nil, "worktree", "remove", junk), "worktree remove")
				must(t, run(t, vault, nil, "branch", "--delete", "junk"), "branch delete")
				incoming := map[string]string{}
				for i := range 40 {
					incoming[fmt.Sprintf("imported/p%02d.md", i)] = fmt.Sprintf("imported %d [[index]]\n", i)
				}
				writeFiles(t, filepath.Join(root, "incoming"), incoming)
				writeFiles(t, vault, map[string]string{"notes/n02.md": "person's edit\n", "new.md": "new\n"})

				r := run(t, vault, []string{"CAIRN_CRASH_AT=" + point}, sc.cmd...)
				if r.signal != syscall.SIGKILL {
					t.Fatalf("cairn %v was not killed at %s: exit %d\n%s%s", sc.cmd, point, r.code, r.stdout, r.stderr)
				}
				st := run(t, vault, nil, "status", "--json")
				must(t, st, "status")
				if sc.cmd[0] == "import" {
					// What the import staged is removed by the next sync.
					must(t, run(t, vault, nil, "commit", "-m", "after the crash"), "commit")
					if stages, _ := filepath.Glob(filepath.Join(vault, ".cairn", "prewrite-*")); len(stages) > 0 {
						t.Errorf("after a crash at %s and a commit, staging folders remain: %v", point, stages)
					}
				}
				d := run(t, vault, nil, "doctor")
				if d.code != 0 || !strings.Contains(d.stdout, "No problems found.") {
					t.Fatalf("doctor after a crash at %s:\n%s%s", point, d.stdout, d.stderr)
				}
				// The folder holds main's head plus the person's edits, if
				// the commit did not land.
				ex := filepath.Join(root, "export")
				must(t, run(t, vault, nil, "export", ex), "export")
				want := readTree(t, ex)
				got := readTree(t, vault)
				for p := range want {
					if got[p] != want[p] && p != "notes/n02.md" && p != "new.md" {
						t.Errorf("after a crash at %s, %s = %q in the folder, %q on main", point, p, got[p], want[p])
					}
				}
				for p := range got {
					if _, ok := want[p]; !ok && p != "new.md" {
						t.Errorf("after a crash at %s, %s is in the folder but not on main", point, p)
					}
				}
				if got["notes/n02.md"] != "person's edit\n" || got["new.md"] != "new\n" {
					t.Errorf("after a crash at %s the person's edits were lost", point)
				}
			})
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && info.Name() == ".cairn" {
			return filepath.SkipDir
		}
		if info.Mode().IsRegular() && info.Name() != ".cairn" {
			rel, _ := filepath.Rel(dir, p)
			data, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	return out
}

// TestTwoProcesses runs a large import while another process searches and
// commits: searches never wait for the import's write lock; a commit waits
// its turn, and one that cannot get the lock within its busy timeout fails
// with an error naming the import.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("imports a 10k-page vault")
	}
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n", "mine.md": "mine\n"})
	must(t, run(t, vault, nil, "init"), "init")
	big := filepath.Join(root, "big")
	if err := vaultgen.New(vaultgen.Config{Pages: 10000}).WriteDir(t.Context(), big); err != nil {
		t.Fatal(err)
	}
	imp := exec.Command(cairnBin(t), "import", big, "--prefix", "big")
	imp.Dir = vault
	imp.Env = append(os.Environ(), "CAIRN_USER=importer")
	var impOut bytes.Buffer
	imp.Stdout, imp.Stderr = &impOut, &impOut
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- imp.Wait() }()

	// While the import runs: searches answer, and quickly.
	var wg sync.WaitGroup
	searches, slowest := 0, time.Duration(0)
	var busyErr string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				done <- nil
				return
			default:
			}
			start := time.Now()
			r := run(t, vault, nil, "search", "mine")
			if r.code != 0 {
				t.Errorf("search during the import: exit %d\n%s", r.code, r.stderr)
				return
			}
			searches++
			slowest = max(slowest, time.Since(start))
			// A commit with a short busy timeout, while the import holds
			// the lock, must name the import.
			if busyErr == "" {
				writeFiles(t, vault, map[string]string{"mine.md": fmt.Sprintf("mine %d\n", searches)})
				c := run(t, vault, []string{"CAIRN_BUSY_TIMEOUT_MS=50"}, "commit", "-m", "mine")
				if c.code != 0 && strings.Contains(c.stderr, "busy") {
					busyErr = c.stderr
				}
			}
		}
	}()
	wg.Wait()
	if err := <-done; err != nil {
		t.Fatalf("import: %v\n%s", err, impOut.String())
	}
	if searches == 0 {
		t.Fatal("no search ran during the import")
	}
	t.Logf("%d searches during the import, the slowest %v", searches, slowest)
	if busyErr != "" && !strings.Contains(busyErr, "cairn import") {
		t.Errorf("the lock error does not name the importer:\n%s", busyErr)
	}
	t.Logf("lock error seen: %q", busyErr)
	// Writers took turns: a commit now succeeds, and nothing is corrupt.
	writeFiles(t, vault, map[string]string{"mine.md": "final\n"})
	r := run(t, vault, nil, "commit", "-m", "after the import")
	if r.code != 0 && !strings.Contains(r.stderr, "nothing to commit") {
		t.Fatalf("commit after the import: %s%s", r.stdout, r.stderr)
	}
	d := run(t, vault, nil, "doctor", "--quick")
	if d.code != 0 {
		t.Fatalf("doctor: %s%s", d.stdout, d.stderr)
	}
}
