package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestIngestRace starts several cairn ingest --detach processes at once,
// round after round, each with the same bytes under another name (and one
// under the same name from another folder): whatever the interleaving,
// each content is one source, one raw file and one job, and once a worker
// ran them, one proposal, merged.
func TestIngestRace(t *testing.T) {
	if testing.Short() {
		t.Skip("races child processes")
	}
	_, vault, _ := ingestVault(t, "")
	root := filepath.Dir(vault)
	const rounds, procs = 8, 4
	var contents []string
	for r := range rounds {
		text := fmt.Sprintf("# Round %d\n\nPaper mills of round %d beat rags into pulp. Printing ink of round %d dried on the paper.\n", r, r, r)
		contents = append(contents, text)
		var calls [][]string
		for p := range procs {
			name := fmt.Sprintf("round-%d-%c.md", r, 'a'+p)
			if p == procs-1 {
				name = fmt.Sprintf("round-%d-a.md", r)
			}
			dir := filepath.Join(root, fmt.Sprintf("in-%d-%d", r, p))
			writeFiles(t, dir, map[string]string{name: text})
			calls = append(calls, []string{"ingest", "--detach", filepath.Join(dir, name)})
		}
		for i, res := range racing(t, vault, calls) {
			if res.code != 0 {
				t.Errorf("round %d: cairn %v: exit %d\n%s%s", r, calls[i], res.code, res.stdout, res.stderr)
			}
		}
	}
	srcs := sourcesOf(t, vault)
	ids := map[string]bool{}
	for _, s := range srcs {
		if ids[s.ID] {
			t.Errorf("source %.12s is recorded twice", s.ID)
		}
		ids[s.ID] = true
		if s.Status != "queued" {
			t.Errorf("%s is %s (%s), want queued", s.Name, s.Status, s.Error)
		}
	}
	if len(srcs) != rounds {
		t.Errorf("%d sources for %d contents: %+v", len(srcs), rounds, srcs)
	}
	r := run(t, vault, nil, "jobs", "--json", "--limit", "1000")
	must(t, r, "jobs")
	var jobs struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(r.stdout), &jobs); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != rounds {
		t.Errorf("%d jobs for %d contents", len(jobs.Items), rounds)
	}
	work(t, vault)
	accounted(t, vault, contents, "merged")
}

// racing starts cairn with each of calls in vault, all at once, and waits
// for them all; their results, in order.
func racing(t *testing.T, vault string, calls [][]string) []result {
	t.Helper()
	cmds := make([]*exec.Cmd, len(calls))
	outs := make([][2]bytes.Buffer, len(calls))
	for i, args := range calls {
		cmds[i] = exec.Command(cairnBin(t), args...)
		cmds[i].Dir = vault
		cmds[i].Env = append(os.Environ(), "CAIRN_USER=tester")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i][0], &outs[i][1]
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	res := make([]result, len(calls))
	for i, cmd := range cmds {
		err := cmd.Wait()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("cairn %v: %v", calls[i], err)
		}
		res[i] = result{code: cmd.ProcessState.ExitCode(), stdout: outs[i][0].String(), stderr: outs[i][1].String()}
	}
	return res
}
