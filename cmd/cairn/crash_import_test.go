package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashStreamedImport kills cairn import at moments spread over its
// whole run, while it streams a folder larger than what it holds in memory:
// its content goes to the store in several spills, its staged files to the
// folder as they are read, its index is built in several chunks. Each time
// the vault holds the old state or the new one, never a part of the
// import; doctor is clean; the folder holds main's head once a command has
// run in it; and the import run again ends with every file. (Kills after
// the commit, in the sync, are TestCrash's named points.)
func TestCrashStreamedImport(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	root := t.TempDir()
	// Over 32 MiB of content (the import's spill) in 120 attachments, and
	// over two index chunks of files in 2,300 pages.
	incoming := map[string]string{}
	for i := range 120 {
		incoming[fmt.Sprintf("big/b%03d.pdf", i)] = strings.Repeat(fmt.Sprintf("%%PDF-1.7 attachment %d\n", i), 16000)
	}
	for i := range 2300 {
		incoming[fmt.Sprintf("small/s%04d.md", i)] = fmt.Sprintf("# Small %d\n\nSee [[s%04d]] and ![[b%03d.pdf]].\n", i, (i+1)%2300, i%120)
	}
	src := filepath.Join(root, "incoming")
	writeFiles(t, src, incoming)
	// Into a new vault: the index of a change onto an empty tree is a
	// full build.
	old := map[string]string{}
	template := filepath.Join(root, "template")
	if err := os.Mkdir(template, 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, run(t, template, nil, "init"), "init")
	both := maps.Clone(old)
	maps.Copy(both, incoming)

	// How long an import takes here, uninterrupted.
	ref := copyVault(t, template, filepath.Join(root, "ref"))
	start := time.Now()
	must(t, run(t, ref, nil, "import", src), "import")
	took := time.Since(start)
	checkVault(t, ref, "the uninterrupted import", both)

	const rounds = 8
	var before, after int
	for k := range rounds {
		at := took * time.Duration(2*k+1) / (2 * rounds)
		vault := copyVault(t, template, filepath.Join(root, fmt.Sprint("v", k)))
		cmd := exec.Command(cairnBin(t), "import", src)
		cmd.Dir, cmd.Env = vault, append(os.Environ(), "CAIRN_USER=tester")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(at)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		killed := !cmd.ProcessState.Success()
		// A status finishes a sync the kill interrupted.
		must(t, run(t, vault, nil, "status"), "status")
		what := fmt.Sprintf("a kill %v into the import", at.Round(time.Millisecond))
		if main := checkVault(t, vault, what, old, both); len(main) == len(old) {
			before++
		} else if killed {
			after++
		}
		// Run again, the import ends with every file.
		must(t, run(t, vault, nil, "import", src), "import again")
		checkVault(t, vault, what+" and the import run again", both)
		if stages, _ := filepath.Glob(filepath.Join(vault, ".cairn", "prewrite-*")); len(stages) > 0 {
			t.Errorf("after %s and the import run again, staging folders remain: %v", what, stages)
		}
	}
	t.Logf("%d kills over %v: %d left the old state, %d the new one after the commit", rounds, took.Round(time.Millisecond), before, after)
	if before == 0 {
		t.Errorf("no kill came before the import's commit: the moments do not cover the import")
	}
}

// copyVault copies the vault at src, whose processes have all ended, to
// dst.
func copyVault(t *testing.T, src, dst string) string {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// checkVault checks that doctor finds no problem, that main holds one of
// states exactly, and that the folder holds what main holds. It returns
// main's files.
func checkVault(t *testing.T, vault, what string, states ...map[string]string) map[string]string {
	t.Helper()
	d := run(t, vault, nil, "doctor")
	if d.code != 0 || !strings.Contains(d.stdout, "No problems found.") {
		t.Fatalf("doctor after %s:\n%s%s", what, d.stdout, d.stderr)
	}
	ex := filepath.Join(t.TempDir(), "export")
	must(t, run(t, vault, nil, "export", ex), "export")
	main := readTree(t, ex)
	found := false
	for _, s := range states {
		found = found || maps.Equal(main, s)
	}
	if !found {
		t.Fatalf("after %s main holds %d files, a part of the import (want %d or %d)", what, len(main), len(states[0]), len(states[len(states)-1]))
	}
	if folder := readTree(t, vault); !maps.Equal(folder, main) {
		t.Errorf("after %s the folder holds %d files, main %d", what, len(folder), len(main))
	}
	return main
}
