package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"cairn/internal/vaultgen"
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
	dir := filepath.Join(t.TempDir(), "vault")
	v := vaultgen.New(vaultgen.Config{Pages: 8000})
	if err := v.WriteDir(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	must(t, run(t, dir, nil, "init", "."), "init")
	page := filepath.Join(dir, filepath.FromSlash(v.Path(7)))
	for round := range 2 {
		doctor := exec.Command(cairnBin(t), "doctor")
		doctor.Dir, doctor.Env = dir, append(os.Environ(), "CAIRN_USER=tester")
		out, err := os.CreateTemp(t.TempDir(), "doctor")
		if err != nil {
			t.Fatal(err)
		}
		doctor.Stdout, doctor.Stderr = out, out
		start := time.Now()
		if err := doctor.Start(); err != nil {
			t.Fatal(err)
		}
		var doctorErr error
		var took time.Duration
		done := make(chan struct{})
		go func() {
			doctorErr = doctor.Wait()
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
		commits, during := 0, 0
		for !finished() {
			f, err := os.OpenFile(page, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, "\nline %d of round %d\n", commits, round)
			f.Close()
			r := run(t, dir, []string{"CAIRN_BUSY_TIMEOUT_MS=1000"}, "commit", "-m", "beside doctor", v.Path(7))
			if r.code != 0 {
				t.Fatalf("round %d: commit %d, %v into cairn doctor: exit %d\n%s%s", round, commits, time.Since(start).Round(time.Millisecond), r.code, r.stdout, r.stderr)
			}
			commits++
			if !finished() {
				during++ // it landed while the check ran
			}
		}
		if doctorErr != nil {
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("round %d: cairn doctor: %v\n%s", round, doctorErr, b)
		}
		t.Logf("round %d: cairn doctor took %v; %d commits landed while it ran", round, took.Round(time.Millisecond), during)
		if took < 2*time.Second || during < 3 {
			t.Fatalf("round %d: cairn doctor took %v and %d commits landed beside it; the test needs a longer check", round, took, during)
		}
	}
}
