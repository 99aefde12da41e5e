package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"cairn/internal/vaultgen"
	"cairn/postgres/pgtest"
)

// TestDoctorBesideWriters: cairn doctor's deep check (an index rebuilt and
// compared with the committed one, seconds on a vault of thousands of
// pages) takes no write lock on SQLite. Commits made by other processes
// all the while, each allowed to wait one second for the lock, land; the
// check still finds nothing wrong, at the view it started from.
func TestDoctorBesideWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("races child processes")
	}
	dir, v := adoptedVault(t, 8000)
	page := filepath.Join(dir, filepath.FromSlash(v.Path(7)))
	doctorBesideWriters(t, dir, func(round, n int) result {
		f, err := os.OpenFile(page, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\nline %d of round %d\n", n, round)
		f.Close()
		return run(t, dir, []string{"CAIRN_BUSY_TIMEOUT_MS=1000"}, "commit", "-m", "beside doctor", v.Path(7))
	})
}

// TestPostgres_DoctorBesideWriters: the same on PostgreSQL, where the
// check's view is a REPEATABLE READ transaction of its own and its rebuild
// goes into temporary tables. Imports by other processes, each allowed to
// wait one second for the vault's lock, land while it runs.
func TestPostgres_DoctorBesideWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("races child processes")
	}
	url := pgtest.URL(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := vaultgen.New(vaultgen.Config{Pages: 8000}).WriteDir(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "vault")
	must(t, run(t, t.TempDir(), nil, "init", "--bare", "--database", url, dir), "init --bare --database")
	must(t, run(t, dir, nil, "import", src), "import")
	beside := filepath.Join(t.TempDir(), "beside")
	doctorBesideWriters(t, dir, func(round, n int) result {
		writeFiles(t, beside, map[string]string{"note.md": fmt.Sprintf("# Beside\n\nline %d of round %d\n", n, round)})
		return run(t, dir, []string{"CAIRN_BUSY_TIMEOUT_MS=1000"}, "import", "--prefix", "beside", beside)
	})
}

// adoptedVault generates a vault of pages pages and makes it a vault with
// cairn init; it returns its folder and the generator.
func adoptedVault(t *testing.T, pages int) (string, *vaultgen.Vault) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	v := vaultgen.New(vaultgen.Config{Pages: pages})
	if err := v.WriteDir(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	must(t, run(t, dir, nil, "init", "."), "init")
	return dir, v
}

// doctorBesideWriters runs cairn doctor at dir, twice, and write, a write
// by a child process (the n-th of the round), over and over while each
// runs. It fails when a write fails, when the check finds anything, or
// when the check was too short for three writes to land beside it.
func doctorBesideWriters(t *testing.T, dir string, write func(round, n int) result) {
	t.Helper()
	besideLong(t, dir, []string{"doctor"}, write)
}

// besideLong runs cairn with args long at dir, twice, and short, a command
// of a child process (the n-th of the round), over and over while each
// runs. It fails when short fails, when the long command fails, or when
// the long command was too short for three of short to end beside it.
func besideLong(t *testing.T, dir string, long []string, short func(round, n int) result) {
	t.Helper()
	for round := range 2 {
		cmd := exec.Command(cairnBin(t), long...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "CAIRN_USER=tester")
		out, err := os.CreateTemp(t.TempDir(), "long")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var longErr error
		var took time.Duration
		done := make(chan struct{})
		go func() {
			longErr = cmd.Wait()
			took = time.Since(start)
			close(done)
		}()
		finished := func() bool {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}
		n, during := 0, 0
		for !finished() {
			if r := short(round, n); r.code != 0 {
				t.Fatalf("round %d: command %d, %v into cairn %s: exit %d\n%s%s", round, n, time.Since(start).Round(time.Millisecond), long[0], r.code, r.stdout, r.stderr)
			}
			n++
			if !finished() {
				during++ // it ended while the long command ran
			}
		}
		if longErr != nil {
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("round %d: cairn %s: %v\n%s", round, long[0], longErr, b)
		}
		t.Logf("round %d: cairn %s took %v; %d commands ended while it ran", round, long[0], took.Round(time.Millisecond), during)
		if during < 3 { // what it is for; how long it took depends on the machine
			t.Fatalf("round %d: cairn %s took %v and %d commands ended beside it; the test needs a longer one", round, long[0], took, during)
		}
	}
}
