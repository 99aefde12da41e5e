package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/eva"
)

// TestInitProfile makes a brain of each of Eva's profiles with the real
// binary: Eva's layout, adopted as the first commit, lint-clean, with the
// profile's types declared and enforced on the next commit.
func TestInitProfile(t *testing.T) {
	for _, p := range eva.Profiles() {
		t.Run(p.ID, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "brain")
			must(t, run(t, "", nil, "init", "--profile", p.ID, "--language", "English", "--purpose", "Test the "+p.ID+" profile.", dir), "init --profile")
			for _, f := range []string{"eva.json", "EVA.md", "AGENTS.md", "CLAUDE.md", "index.md", "log.md", "analyses/starting-point.md", "types/summary.md"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
			for _, f := range eva.Folders {
				if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.IsDir() {
					t.Errorf("folder %s: %v", f, err)
				}
			}
			if st := run(t, dir, nil, "status"); st.code != 0 || strings.Contains(st.stdout, "??") {
				t.Errorf("status after init:\n%s%s", st.stdout, st.stderr)
			}
			l := run(t, dir, nil, "--json", "lint")
			var report struct{ Errors, Warnings, Infos int }
			if err := json.Unmarshal([]byte(l.stdout), &report); err != nil || report.Errors+report.Warnings+report.Infos != 0 {
				t.Errorf("lint of a new %s brain: %+v %v\n%s", p.ID, report, err, l.stdout)
			}
			ty := run(t, dir, nil, "--json", "types")
			var types struct{ Items []struct{ Name string } }
			if err := json.Unmarshal([]byte(ty.stdout), &types); err != nil || len(types.Items) != len(p.AllTypes()) {
				t.Errorf("types: %v\n%s", err, ty.stdout)
			}
			// Pages by field, from the index.
			ls := run(t, dir, nil, "list", "--type", "analysis", "--where", "updated >= 2000-01-01", "--where", "title")
			if ls.code != 0 || !strings.Contains(ls.stdout, "analyses/starting-point.md") || !strings.Contains(ls.stdout, "1 page") {
				t.Errorf("list --where: exit %d\n%s%s", ls.code, ls.stdout, ls.stderr)
			}
			if l := run(t, dir, nil, "list", "--where", "year >"); l.code == 0 || !strings.Contains(l.stderr, "the value after > is missing") {
				t.Errorf("list with a bad condition: exit %d\n%s", l.code, l.stderr)
			}
			// A summary without its source breaks its type: held.
			writeFiles(t, dir, map[string]string{"summaries/x.md": "---\ntitle: X\ntype: summary\n---\n# X\n\nSee [[index|Home]].\n"})
			c := run(t, dir, nil, "commit", "-m", "a summary without a source")
			if c.code != exitRefused || !strings.Contains(c.stdout, "schema/schema-required") {
				t.Errorf("commit of a summary without its source: exit %d\n%s%s", c.code, c.stdout, c.stderr)
			}
		})
	}
	t.Run("Refusals", func(t *testing.T) {
		if r := run(t, "", nil, "init", "--profile", "cooking", filepath.Join(t.TempDir(), "b")); r.code == 0 || !strings.Contains(r.stderr, `"cooking" is not a profile`) {
			t.Errorf("an unknown profile: exit %d\n%s", r.code, r.stderr)
		}
		// A brain whose eva.json Eva would refuse is refused, and nothing
		// is made.
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"eva.json": `{"format":"eva-brain","version":2}`, "index.md": "# Home\n"})
		r := run(t, dir, nil, "init")
		if r.code == 0 || !strings.Contains(r.stderr, "eva.json: the brain uses version 2") {
			t.Errorf("init of a v2 brain: exit %d\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, ".cairn")); err == nil {
			t.Errorf("a refused init made .cairn/")
		}
		if r := run(t, dir, nil, "init", "--profile", "research"); r.code == 0 || !strings.Contains(r.stderr, "is an Eva brain already") {
			t.Errorf("--profile in a brain: exit %d\n%s", r.code, r.stderr)
		}
		// A valid brain opens in place, its .git left alone.
		writeFiles(t, dir, map[string]string{"eva.json": `{"format":"eva-brain","version":1,"profile":"reading"}`, ".git/HEAD": "ref: refs/heads/main\n"})
		must(t, run(t, dir, nil, "init"), "init of a brain")
		if data, err := os.ReadFile(filepath.Join(dir, ".git", "HEAD")); err != nil || string(data) != "ref: refs/heads/main\n" {
			t.Errorf(".git/HEAD: %q %v", data, err)
		}
		if r := run(t, dir, nil, "show", ".git/HEAD"); r.code == 0 {
			t.Errorf(".git was adopted")
		}
	})
}
