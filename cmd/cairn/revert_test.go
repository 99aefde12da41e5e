package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRevert_OlderIngest ingests three sources and reverts the first and
// the last: each revert removes the ingest's summary and index line, keeps
// the later ingests, and leaves log.md as main has it (the log is history;
// undoing an ingest does not unwrite its entry).
func TestRevert_OlderIngest(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	writeFiles(t, vault, map[string]string{
		"index.md": "---\ntitle: Home\ntype: index\n---\n# Home\n\n## Summaries\n\n- A note kept by hand\n\n## About\n\nA vault of sources about paper.\n",
	})
	must(t, run(t, vault, nil, "init"), "init")
	ingest := func(name, text string) {
		t.Helper()
		writeFiles(t, root, map[string]string{name: text})
		must(t, run(t, vault, nil, "ingest", filepath.Join(root, name)), "ingest", name)
	}
	// The three index lines end up next to each other under one heading:
	// undoing the first one's combines with the two added after it.
	ingest("one.md", "# Paper mills\n\nPaper mills beat rags into pulp. Paper from Fabriano was prized.\n")
	ingest("two.md", "# Ink recipes\n\nPrinting ink was made from linseed oil and soot. Paper took the ink well when damp.\n")
	ingest("three.md", "# Presses\n\nThe screw press came from wine making. Printers damped the paper before pressing.\n")

	ingests := admittedIngests(t, vault)
	if len(ingests) != 3 {
		t.Fatalf("log shows %d admitted ingests, want 3", len(ingests))
	}
	before := readTree(t, vault)
	for _, p := range []string{"summaries/one.md", "summaries/two.md", "summaries/three.md"} {
		if _, ok := before[p]; !ok {
			t.Fatalf("after the ingests %s is missing; the folder has %v", p, keys(before))
		}
	}
	for _, tc := range []struct {
		name, commit, gone string
	}{
		{"First", ingests[2], "one"},
		{"Last", ingests[0], "three"},
	} {
		r := run(t, vault, nil, "revert", tc.commit)
		must(t, r, "revert", tc.name)
		after := readTree(t, vault)
		if after["log.md"] != before["log.md"] {
			t.Errorf("revert %s changed log.md:\n%s", tc.name, cmp.Diff(before["log.md"], after["log.md"]))
		}
		if _, ok := after["summaries/"+tc.gone+".md"]; ok {
			t.Errorf("after revert %s, summaries/%s.md is still in the folder", tc.name, tc.gone)
		}
		if strings.Contains(after["index.md"], "summaries/"+tc.gone) {
			t.Errorf("after revert %s, index.md still lists summaries/%s:\n%s", tc.name, tc.gone, after["index.md"])
		}
		if _, ok := after["summaries/two.md"]; !ok || !strings.Contains(after["index.md"], "summaries/two") {
			t.Errorf("revert %s undid more than its ingest: summaries/two.md or its index line is gone", tc.name)
		}
		if _, ok := after["raw/"+tc.gone+".md"]; !ok {
			t.Errorf("revert %s removed the source raw/%s.md", tc.name, tc.gone)
		}
		// The folder is main's head.
		ex := filepath.Join(root, "export-"+tc.name)
		must(t, run(t, vault, nil, "export", ex), "export")
		if diff := cmp.Diff(readTree(t, ex), after); diff != "" {
			t.Errorf("after revert %s the folder differs from main (-main +folder):\n%s", tc.name, diff)
		}
	}
}

// admittedIngests returns the commits that admitted an ingest into main,
// newest first.
func admittedIngests(t *testing.T, vault string) []string {
	t.Helper()
	r := run(t, vault, nil, "log", "--json")
	must(t, r, "log")
	var log struct {
		Items []struct {
			ID   string            `json:"id"`
			Meta map[string]string `json:"meta"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &log); err != nil {
		t.Fatalf("cairn log --json: %v", err)
	}
	var out []string
	for _, c := range log.Items {
		if c.Meta["route"] == "ingest" && c.Meta["verdict"] == "admit" {
			out = append(out, c.ID)
		}
	}
	return out
}

func keys[V any](m map[string]V) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return fmt.Sprint(ks)
}

// TestRevert_AlreadyUndone: reverting a commit whose changes later commits
// have already undone has nothing to do; it says so, succeeds and makes no
// commit.
func TestRevert_AlreadyUndone(t *testing.T) {
	t.Parallel()
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
	must(t, run(t, vault, nil, "init"), "init")
	writeFiles(t, vault, map[string]string{"x.md": "x\n"})
	must(t, run(t, vault, nil, "commit", "-m", "add x"), "commit")
	added := headOf(t, vault)
	if err := os.Remove(filepath.Join(vault, "x.md")); err != nil {
		t.Fatal(err)
	}
	must(t, run(t, vault, nil, "commit", "-m", "remove x"), "commit")
	head := headOf(t, vault)
	r := run(t, vault, nil, "revert", added)
	must(t, r, "revert")
	if !strings.Contains(r.stdout, "Nothing to revert") {
		t.Errorf("cairn revert of an undone commit said:\n%s", r.stdout)
	}
	if got := headOf(t, vault); got != head {
		t.Errorf("cairn revert of an undone commit moved main from %s to %s", head, got)
	}
}
