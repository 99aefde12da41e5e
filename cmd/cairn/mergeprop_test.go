package main

import (
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/store/mergetest"
)

// The property tests of cairn merge and cairn revert run the real command
// on a real vault over random edits of whole trees (store/mergetest), and
// judge each outcome from the edits alone: a merged or reverted main holds
// every one-sided change exactly and every two-sided change combined; a
// refused one names a conflict for each change that cannot combine and for
// no one-sided change, and leaves main where it was.

// propRounds is the number of random cases each property test runs.
func propRounds() int {
	if testing.Short() {
		return 3
	}
	return 15
}

// propRoot is the folder of the generated files; the vault's own files
// (index.md) stay outside it.
const propRoot = "p/"

// TestMerge_Property: cairn merge BRANCH, with the case's theirs committed
// on BRANCH and ours on main.
func TestMerge_Property(t *testing.T) {
	t.Parallel()
	for seed := range uint64(propRounds()) {
		c := mergetest.Generate(rand.New(rand.NewPCG(seed, 2)), &mergetest.Options{Root: propRoot})
		root := t.TempDir()
		vault, side := filepath.Join(root, "vault"), filepath.Join(root, "side")
		writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
		applyChanges(t, vault, mergetest.Changes(nil, c.Base))
		must(t, run(t, vault, nil, "init"), "init")
		must(t, run(t, vault, nil, "branch", "side"), "branch")
		must(t, run(t, vault, nil, "worktree", "add", side, "side"), "worktree add")
		commitChanges(t, side, mergetest.Changes(c.Base, c.Theirs), "theirs")
		commitChanges(t, vault, mergetest.Changes(c.Base, c.Ours), "ours")
		before := headOf(t, vault)
		r := run(t, vault, nil, "merge", "side", "--json")
		judge(t, c, root, vault, before, r, "merge side", seed)
	}
}

// TestRevert_Property: cairn revert COMMIT, with the case's theirs as
// COMMIT's parent, its base as COMMIT and its ours as main's head: undoing
// COMMIT merges the way back to theirs into main.
func TestRevert_Property(t *testing.T) {
	t.Parallel()
	for seed := range uint64(propRounds()) {
		c := mergetest.Generate(rand.New(rand.NewPCG(seed, 3)), &mergetest.Options{Root: propRoot})
		undo := mergetest.Changes(c.Theirs, c.Base)
		if len(undo) == 0 {
			continue // no commit to revert
		}
		root := t.TempDir()
		vault := filepath.Join(root, "vault")
		writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
		applyChanges(t, vault, mergetest.Changes(nil, c.Theirs))
		must(t, run(t, vault, nil, "init"), "init")
		commitChanges(t, vault, undo, "the commit to revert")
		target := headOf(t, vault)
		commitChanges(t, vault, mergetest.Changes(c.Base, c.Ours), "later")
		before := headOf(t, vault)
		r := run(t, vault, nil, "revert", target, "--json")
		judge(t, c, root, vault, before, r, "revert", seed)
	}
}

// judge checks the outcome of a merge or revert run on the case.
func judge(t *testing.T, c *mergetest.Case, root, vault, before string, r result, what string, seed uint64) {
	t.Helper()
	var problems []string
	switch r.code {
	case exitOK:
		ex := filepath.Join(root, "export")
		must(t, run(t, vault, nil, "export", ex), "export")
		merged := filesUnder(t, ex, propRoot)
		problems = c.Check(merged, nil)
		// The folder follows main: the sync wrote what the merge did.
		if diff := cmp.Diff(merged, filesUnder(t, vault, propRoot)); diff != "" {
			problems = append(problems, "the folder differs from main (-main +folder):\n"+diff)
		}
	case exitRefused:
		var out struct {
			Items []cairn.Conflict `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("seed %d: cairn %s --json: %v\n%s", seed, what, err, r.stdout)
		}
		var paths []string
		for _, cf := range out.Items {
			if cf.Path == "" {
				t.Fatalf("seed %d: cairn %s was refused, but not for a conflict:\n%s", seed, what, r.stdout)
			}
			paths = append(paths, cf.Path)
		}
		problems = c.Check(nil, paths)
		if head := headOf(t, vault); head != before {
			problems = append(problems, "a refused "+what+" moved main")
		}
	default:
		t.Fatalf("seed %d: cairn %s exited %d:\n%s%s", seed, what, r.code, r.stdout, r.stderr)
	}
	if len(problems) > 0 {
		t.Fatalf("seed %d: cairn %s (exit %d):\n%s\nproblems:\n  %s", seed, what, r.code, c, strings.Join(problems, "\n  "))
	}
}

// applyChanges writes changes into a folder.
func applyChanges(t *testing.T, dir string, changes []mergetest.Change) {
	t.Helper()
	for _, ch := range changes {
		full := filepath.Join(dir, filepath.FromSlash(ch.Path))
		if ch.Delete {
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		perm := fs.FileMode(0o644)
		if ch.Mode == cairn.ModeExecutable {
			perm = 0o755
		}
		if err := os.WriteFile(full, []byte(ch.Data), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, perm); err != nil {
			t.Fatal(err)
		}
	}
}

// commitChanges writes changes into a working tree and commits them, when
// there are any.
func commitChanges(t *testing.T, dir string, changes []mergetest.Change, msg string) {
	t.Helper()
	if len(changes) == 0 {
		return
	}
	applyChanges(t, dir, changes)
	must(t, run(t, dir, nil, "commit", "-m", msg), "commit", msg)
}

// headOf returns the hash of the working tree's branch head.
func headOf(t *testing.T, dir string) string {
	t.Helper()
	r := run(t, dir, nil, "log", "-n", "1", "--json")
	must(t, r, "log")
	var log struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &log); err != nil || len(log.Items) != 1 {
		t.Fatalf("cairn log -n 1 --json: %v\n%s", err, r.stdout)
	}
	return log.Items[0].ID
}

// filesUnder reads the files of a folder whose paths start with prefix.
func filesUnder(t *testing.T, dir, prefix string) []mergetest.File {
	t.Helper()
	var out []mergetest.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasPrefix(rel, prefix) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := cairn.ModeFile
		if info.Mode()&0o111 != 0 {
			mode = cairn.ModeExecutable
		}
		out = append(out, mergetest.File{Path: rel, Data: string(data), Mode: mode})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
