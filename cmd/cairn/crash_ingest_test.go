package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ingestVault makes a vault with a few linked pages and writes the sources
// to ingest beside it; agent, when set, is a command agent's script body.
func ingestVault(t *testing.T, agent string) (root, vault string, sources []string) {
	t.Helper()
	root = t.TempDir()
	vault = filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{
		"index.md":          "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[concepts/paper|Paper]]\n- [[concepts/ink|Printing ink]]\n",
		"concepts/paper.md": "---\ntitle: Paper\ntype: concept\n---\n# Paper\n\nSee [[concepts/ink|Printing ink]].\n",
		"concepts/ink.md":   "---\ntitle: Printing ink\ntype: concept\n---\n# Printing ink\n\nSee [[concepts/paper|Paper]].\n",
		"log.md":            "# Log\n",
	})
	must(t, run(t, vault, nil, "init"), "init")
	if agent != "" {
		script := filepath.Join(root, "agent.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > /dev/null\n"+agent), 0o755); err != nil {
			t.Fatal(err)
		}
		must(t, run(t, vault, nil, "settings", "set", "agent.command", script), "settings")
		must(t, run(t, vault, nil, "settings", "set", "agent.runtime", "command"), "settings")
	}
	for i, text := range []string{
		"# Paper mills\n\nPaper mills beat rags into pulp. Paper from Fabriano was prized. Printing ink needed good paper.\n",
		"# Ink recipes\n\nPrinting ink was made from linseed oil and soot. Paper took the ink well when damp.\n",
	} {
		p := filepath.Join(root, fmt.Sprintf("source-%d.md", i))
		writeFiles(t, root, map[string]string{filepath.Base(p): text})
		sources = append(sources, p)
	}
	return root, vault, sources
}

type sourceRow struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Path     string `json:"path"`
	Status   string `json:"status"`
	Proposal int64  `json:"proposal"`
	Error    string `json:"error"`
}

func sourcesOf(t *testing.T, vault string) []sourceRow {
	t.Helper()
	r := run(t, vault, nil, "sources", "--json")
	must(t, r, "sources")
	var out struct{ Items []sourceRow }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("sources --json: %v\n%s", err, r.stdout)
	}
	return out.Items
}

// work runs cairn worker until every source has a verdict, and returns how
// long that took. It gives up (failing the test) after two minutes: a hang,
// not a timing assertion.
func work(t *testing.T, vault string) time.Duration {
	t.Helper()
	took, _ := workLog(t, vault)
	return took
}

// workLog is work returning also what the worker printed, standard error
// (its log) included.
func workLog(t *testing.T, vault string) (took time.Duration, log string) {
	t.Helper()
	cmd := exec.Command(cairnBin(t), "worker")
	cmd.Dir = vault
	cmd.Env = append(os.Environ(), "CAIRN_USER=tester")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The worker stops (and brings the folder to main's head) before the
	// checks.
	defer func() {
		for !strings.Contains(out.String(), "running jobs") && time.Since(start) < time.Minute {
			time.Sleep(10 * time.Millisecond) // interrupt a worker that started, not one opening
		}
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("worker: %v", err)
		}
		log = out.String()
		t.Logf("worker:\n%s", log)
	}()
	for {
		done := true
		for _, s := range sourcesOf(t, vault) {
			if s.Status == "queued" || s.Status == "running" {
				done = false
			}
		}
		if done {
			return time.Since(start), ""
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("sources still unfinished after two minutes: %+v", sourcesOf(t, vault))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// accounted checks that every source is accounted for exactly once: one
// record each, a verdict, at most one admitted proposal, one log entry per
// merged source, its file under raw/ once; and doctor is clean.
func accounted(t *testing.T, vault string, sources []string, want string) {
	t.Helper()
	srcs := sourcesOf(t, vault)
	if len(srcs) != len(sources) {
		t.Fatalf("%d source records for %d sources: %+v", len(srcs), len(sources), srcs)
	}
	r := run(t, vault, nil, "review", "list", "--status", "all", "--json")
	must(t, r, "review list")
	var props struct {
		Items []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
			Source string `json:"source"`
			Route  string `json:"route"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &props); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(vault, "log.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		if s.Status != want {
			t.Errorf("%s is %s (%s), want %s", s.Name, s.Status, s.Error, want)
		}
		admitted := 0
		for _, p := range props.Items {
			if p.Source == s.ID && (p.Status == "admitted" || p.Status == "accepted") {
				admitted++
			}
		}
		entries := strings.Count(string(log), "] ingest | "+s.Name+"\n")
		wantAdmitted := 0
		if s.Status == "merged" {
			wantAdmitted = 1
		}
		if admitted != wantAdmitted || entries != wantAdmitted {
			t.Errorf("%s (%s): %d admitted proposals and %d log entries, want %d", s.Name, s.Status, admitted, entries, wantAdmitted)
		}
		if data, err := os.ReadFile(filepath.Join(vault, s.Path)); err != nil || len(data) == 0 {
			t.Errorf("%s: %v", s.Path, err)
		}
	}
	raws, _ := os.ReadDir(filepath.Join(vault, "raw"))
	if len(raws) != len(sources) {
		t.Errorf("raw/ holds %d files for %d sources", len(raws), len(sources))
	}
	d := run(t, vault, nil, "doctor")
	if d.code != 0 || !strings.Contains(d.stdout, "No problems found.") {
		t.Errorf("doctor:\n%s%s", d.stdout, d.stderr)
	}
}

// TestCrashIngest kills cairn ingest at named points of the main job. A
// worker started afterwards rescues the dead process's jobs; every source
// is accounted for exactly once, no proposal is admitted twice, and doctor
// is clean.
func TestCrashIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	// The page is named by the job's workspace (job-<id>-<attempt>): in
	// its PID namespace, every agent's $$ is the same.
	const writer = `job=$(basename "$(dirname "$PWD")")
printf -- '---\ntitle: Mills '$job'\ntype: concept\n---\n# Mills\n\nSee [[concepts/paper|Paper]].\n' > concepts/mills-$job.md
sed -i 's|- \[\[concepts/ink|- [[concepts/mills-'$job'\|Mills]]\n- [[concepts/ink|' index.md
echo "Wrote a page on mills."
sleep 0.2
echo "Done."`
	for _, tc := range []struct {
		point string
		agent string
	}{
		{"ingest:enqueued", ""},
		{"ingest:running", ""},
		{"agent:running", writer},
		{"ingest:proposed", ""},
		{"admit:judged:ingest", ""},
		{"ingest:deciding", ""},
		{"admit:main-moved:ingest", ""},
		{"admit:committed:ingest", ""},
		{"ingest:decided", ""},
		{"admit:main-moved:source", ""},
	} {
		t.Run(strings.ReplaceAll(tc.point, ":", "-"), func(t *testing.T) {
			t.Parallel()
			_, vault, sources := ingestVault(t, tc.agent)
			r := run(t, vault, []string{"CAIRN_CRASH_AT=" + tc.point}, append([]string{"ingest"}, sources...)...)
			if r.signal != syscall.SIGKILL {
				t.Fatalf("cairn ingest was not killed at %s: exit %d\n%s%s", tc.point, r.code, r.stdout, r.stderr)
			}
			if strings.HasSuffix(tc.point, ":source") {
				// Killed before the sources were stored: nothing is
				// recorded, and ingesting again does it all.
				if srcs := sourcesOf(t, vault); len(srcs) != 0 {
					t.Fatalf("sources recorded by a transaction that never committed: %+v", srcs)
				}
				must(t, run(t, vault, nil, append([]string{"ingest"}, sources...)...), "ingest again")
			}
			took := work(t, vault)
			t.Logf("the worker finished the dead process's jobs in %v", took)
			accounted(t, vault, sources, "merged")
		})
	}
}

// TestCrashReviewAccept kills cairn review accept inside its admission: the
// proposal stays held, main does not move, and accepting again works once.
func TestCrashReviewAccept(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	_, vault, sources := ingestVault(t, "rm concepts/ink.md\necho removed ink")
	r := run(t, vault, nil, "ingest", sources[0])
	if r.code != exitRefused || !strings.Contains(r.stdout, "held for review") {
		t.Fatalf("ingest: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	held := sourcesOf(t, vault)[0]
	id := fmt.Sprint(held.Proposal)
	head := run(t, vault, nil, "log", "-n", "1", "--json").stdout
	for _, point := range []string{"admit:judged:ingest", "admit:main-moved:ingest"} {
		c := run(t, vault, []string{"CAIRN_CRASH_AT=" + point}, "review", "accept", id)
		if c.signal != syscall.SIGKILL {
			t.Fatalf("review accept was not killed at %s: exit %d\n%s%s", point, c.code, c.stdout, c.stderr)
		}
		if now := run(t, vault, nil, "log", "-n", "1", "--json").stdout; now != head {
			t.Fatalf("main moved by a review accept killed at %s", point)
		}
		if s := sourcesOf(t, vault)[0]; s.Status != "held" {
			t.Fatalf("after a crash at %s the source is %s", point, s.Status)
		}
	}
	must(t, run(t, vault, nil, "review", "accept", id), "review accept")
	if again := run(t, vault, nil, "review", "accept", id); again.code == 0 {
		t.Errorf("a second accept succeeded:\n%s", again.stdout)
	}
	if _, err := os.Stat(filepath.Join(vault, "concepts", "ink.md")); !os.IsNotExist(err) {
		t.Errorf("the accepted deletion is not in the folder: %v", err)
	}
	sources = sources[:1]
	accounted(t, vault, sources, "merged")
}

// TestDeadWorker kills a worker while its agent runs: a worker started
// afterwards hands the job back to the queue within seconds (River's own
// rescue waits an hour) and runs it again.
func TestDeadWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	// The first attempt hangs; the workspace's name holds the attempt.
	agent := `case "$PWD" in *-1/vault) echo "stuck"; sleep 600;; esac
printf -- '---\ntitle: Mills\ntype: concept\n---\n# Mills\n\nSee [[concepts/paper|Paper]].\n' > concepts/mills.md
sed -i 's|- \[\[concepts/ink|- [[concepts/mills\|Mills]]\n- [[concepts/ink|' index.md
echo "Wrote a page on mills."`
	_, vault, sources := ingestVault(t, agent)
	sources = sources[:1]
	must(t, run(t, vault, nil, "ingest", "--detach", sources[0]), "ingest --detach")
	first := exec.Command(cairnBin(t), "worker")
	first.Dir = vault
	first.Env = append(os.Environ(), "CAIRN_USER=tester")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for sourcesOf(t, vault)[0].Status != "running" {
		if time.Now().After(deadline) {
			t.Fatal("the first worker never started the job")
		}
		time.Sleep(50 * time.Millisecond)
	}
	first.Process.Kill()
	first.Wait()
	took, log := workLog(t, vault)
	t.Logf("a new worker rescued and finished the job in %v", took)
	accounted(t, vault, sources, "merged")
	// The rescue is logged on the worker's standard error.
	if !strings.Contains(log, "rescued jobs of dead workers") {
		t.Errorf("the worker's log does not say it rescued a job:\n%s", log)
	}
}

// syncBuffer is a buffer a child process writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
