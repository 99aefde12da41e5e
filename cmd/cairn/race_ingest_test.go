package main

import (
	"bytes"
	"encoding/json"
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
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		for p := range procs {
			name := fmt.Sprintf("round-%d-%c.md", r, 'a'+p)
			if p == procs-1 {
				name = fmt.Sprintf("round-%d-a.md", r)
			}
			dir := filepath.Join(root, fmt.Sprintf("in-%d-%d", r, p))
			writeFiles(t, dir, map[string]string{name: text})
			cmd := exec.Command(cairnBin(t), "ingest", "--detach", filepath.Join(dir, name))
			cmd.Dir = vault
			cmd.Env = append(os.Environ(), "CAIRN_USER=tester")
			out := &bytes.Buffer{}
			cmd.Stdout, cmd.Stderr = out, out
			cmds, outs = append(cmds, cmd), append(outs, out)
		}
		for _, cmd := range cmds {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("round %d: cairn %v: %v\n%s", r, cmd.Args[1:], err, outs[i])
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
