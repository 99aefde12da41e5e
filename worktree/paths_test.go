package worktree_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/worktree"
)

// TestStatusPaths_Property runs random edits of a folder (new, changed,
// touched without change, deleted files, whole folders gone, ignored and
// case-clashing names), commits of some paths and moves of main with
// incoming changes, and checks after every step that the status of a
// random selection of files and folders is the whole status restricted to
// them, and that committing a selection commits exactly its edits.
func TestStatusPaths_Property(t *testing.T) {
	seeds, steps := 4, 40
	if testing.Short() {
		seeds, steps = 2, 15
	}
	folders := []string{"", "notes/", "notes/deep/", "concepts/", "raw/"}
	names := []string{"a.md", "b.md", "c.md", "pic.png"}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e := setup(t)
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			pick := func() string { return folders[rng.IntN(len(folders))] + names[rng.IntN(len(names))] }
			e.write("index.md", "# Home\n")
			e.commit("first")
			for step := range steps {
				for range 1 + rng.IntN(5) {
					p := pick()
					switch rng.IntN(8) {
					case 0:
						os.Remove(filepath.Join(e.dir, p))
					case 1:
						os.RemoveAll(filepath.Join(e.dir, folders[1+rng.IntN(len(folders)-1)]))
					case 2:
						// Touched: the same content, a new modification time.
						if data, err := os.ReadFile(filepath.Join(e.dir, p)); err == nil {
							e.write(p, string(data))
						}
					case 3:
						e.write(".obsidian/"+names[rng.IntN(len(names))], "ignored")
					default:
						e.write(p, fmt.Sprintf("content %d of %s\n", rng.IntN(4), p))
					}
				}
				if rng.IntN(4) == 0 {
					// main moves under the folder: an incoming change.
					p := pick()
					e.commitElsewhere(map[string]string{p: "from main " + fmt.Sprint(step) + "\n"})
					if _, err := e.m.Sync(e.ctx, e.wt, e.head()); err != nil {
						t.Fatal(err)
					}
				}
				all := e.status()
				sel := e.selection(rng, folders, names)
				var want []string
				for _, c := range all {
					if under(c[strings.Index(c, " ")+1:], sel) {
						want = append(want, c)
					}
				}
				got := e.status(sel...)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("step %d: status %q (-whole status under them +status of them):\n%s", step, sel, diff)
				}
				if len(want) > 0 && rng.IntN(3) == 0 {
					res, err := e.m.Commit(e.ctx, e.wt, worktree.CommitRequest{Message: "some", Paths: sel, Principal: cairn.User("ada")})
					if err != nil && cairn.ErrorCode(err) != cairn.EINVALID {
						t.Fatalf("step %d: commit %q: %v", step, sel, err)
					}
					if err == nil && res.Commit != nil {
						if len(res.Changes) != len(want) {
							t.Fatalf("step %d: commit %q committed %v, want %v", step, sel, res.Changes, want)
						}
						left := e.status()
						for _, c := range left {
							if under(c[strings.Index(c, " ")+1:], sel) && !strings.HasSuffix(c, "(incoming)") {
								t.Fatalf("step %d: after a commit of %q, %s is still an edit", step, sel, c)
							}
						}
					}
				}
			}
		})
	}
}

// selection picks one to three files or folders, some of them gone.
func (e *env) selection(rng *rand.Rand, folders, names []string) []string {
	var sel []string
	for range 1 + rng.IntN(3) {
		f := folders[1+rng.IntN(len(folders)-1)]
		if rng.IntN(2) == 0 {
			sel = append(sel, strings.TrimSuffix(f, "/"))
		} else {
			sel = append(sel, f+names[rng.IntN(len(names))])
		}
	}
	return sel
}

// under reports whether path is one of paths or in a folder of them.
func under(path string, paths []string) bool {
	path = strings.TrimSuffix(path, " (incoming)")
	for _, p := range paths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

func (e *env) head() cairn.Hash {
	e.t.Helper()
	h, err := e.s.Head(e.ctx, "main")
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// TestStatusPaths_Outside: a path outside the working tree is refused
// with EINVALID, and ignored paths have no edits.
func TestStatusPaths_Outside(t *testing.T) {
	e := setup(t)
	e.write("index.md", "# Home\n")
	e.commit("first")
	for _, p := range []string{"../x.md", "/etc/passwd", "notes/../../x"} {
		if _, err := e.m.Status(e.ctx, e.wt, p); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Status(%q) = %v, want EINVALID", p, err)
		}
		if _, err := e.m.Commit(e.ctx, e.wt, worktree.CommitRequest{Message: "x", Paths: []string{p}, Principal: cairn.User("ada")}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Commit(%q) = %v, want EINVALID", p, err)
		}
	}
	e.write(".obsidian/workspace.json", "{}")
	if got := e.status(".obsidian", ".obsidian/workspace.json"); len(got) != 0 {
		t.Errorf("status of ignored paths = %v, want none", got)
	}
	if got := e.status("./", "."); len(got) != 0 {
		t.Errorf("status of the root = %v, want none", got)
	}
}

// TestStatus_RemembersEveryFile: a status that had to read many files (a
// folder just written, whose stat rows cannot vouch for it) remembers
// them all, so the next status trusts their sizes and modification
// times: a file changed in place with both kept is not read again (as
// git, cairn trusts them; it re-reads only what changed or is racy).
func TestStatus_RemembersEveryFile(t *testing.T) {
	e := setup(t)
	const n = 8000
	for i := range n {
		e.write(fmt.Sprintf("notes/%02d/p%d.md", i%50, i), fmt.Sprintf("page %d\n", i))
	}
	e.commit("first")
	// Every file an hour old: the rows the commit wrote no longer match.
	old := time.Now().Add(-time.Hour)
	for i := range n {
		os.Chtimes(filepath.Join(e.dir, fmt.Sprintf("notes/%02d/p%d.md", i%50, i)), old, old)
	}
	if got := e.status(); len(got) != 0 {
		t.Fatalf("status = %v, want clean", got)
	}
	// The same size and time, another content: only a read would see it.
	p := filepath.Join(e.dir, "notes/07/p4007.md")
	if err := os.WriteFile(p, []byte("PAGE 4007\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
	if got := e.status(); len(got) != 0 {
		t.Errorf("status = %v: the file was read again, its row was not remembered", got)
	}
}

// TestStatus_CacheDamaged: a status cache cut short, or of another vault
// state, is not trusted: the status is the folder's all the same.
func TestStatus_CacheDamaged(t *testing.T) {
	e := setup(t)
	e.write("index.md", "# Home\n")
	e.write("notes/a.md", "a\n")
	e.commit("first")
	e.status() // writes the cache
	cache := filepath.Join(e.vdir, fmt.Sprintf("status-%d.cache", e.wt.ID))
	data, err := os.ReadFile(cache)
	if err != nil {
		t.Fatalf("no status cache after a status: %v", err)
	}
	e.write("notes/b.md", "b\n")
	os.Remove(filepath.Join(e.dir, "index.md"))
	want := []string{"added notes/b.md", "deleted index.md"}
	for name, damaged := range map[string][]byte{
		"cut short":   data[:len(data)-7],
		"empty":       nil,
		"other bytes": append([]byte("cairn-status-3\n"), make([]byte, 80)...),
		"one bit":     flip(data, len(data)/2),
	} {
		if err := os.WriteFile(cache, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, sorted(e.status())); diff != "" {
			t.Errorf("%s: status (-want +got):\n%s", name, diff)
		}
	}
}

// flip returns data with one bit of byte i flipped.
func flip(data []byte, i int) []byte {
	out := slices.Clone(data)
	out[i] ^= 0x10
	return out
}

// TestStatus_CacheFollowsOverrides: the status cache follows the tree's
// left-alone files as they come and go, including one that goes in a sync
// whose difference does not name it.
func TestStatus_CacheFollowsOverrides(t *testing.T) {
	e := setup(t)
	e.write("a.md", "v1\n")
	e.write("b.md", "b\n")
	e.commit("first")
	e.status() // the cache
	check := func(step string) {
		t.Helper()
		whole := e.status()
		var under []string
		for _, p := range []string{"a.md", "b.md"} {
			under = append(under, e.status(p)...)
		}
		if diff := cmp.Diff(under, whole); diff != "" {
			t.Errorf("%s: the whole status (cached) differs from the files' (-files +whole):\n%s", step, diff)
		}
	}
	e.write("a.md", "mine\n")
	if _, err := e.m.Sync(e.ctx, e.wt, e.commitElsewhere(map[string]string{"a.md": "v2\n"})); err != nil {
		t.Fatal(err)
	}
	check("a.md left alone")
	e.write("a.md", "v2\n") // the person takes main's version
	check("a.md as main has it")
	if _, err := e.m.Sync(e.ctx, e.wt, e.commitElsewhere(map[string]string{"b.md": "b2\n"})); err != nil {
		t.Fatal(err)
	}
	check("after a sync of b.md")
	e.write("b.md", "b3\n")
	e.commit("b3", "b.md")
	check("after a commit of b.md")
}

// TestStatus_CacheLeftovers: the temporary file of a cache whose writer
// was killed is removed by a later write, once it is old.
func TestStatus_CacheLeftovers(t *testing.T) {
	e := setup(t)
	e.write("a.md", "a\n")
	e.commit("first")
	left := filepath.Join(e.vdir, ".cairn-tmp-status-12345")
	if err := os.WriteFile(left, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(left, old, old)
	os.Remove(filepath.Join(e.vdir, fmt.Sprintf("status-%d.cache", e.wt.ID)))
	e.status() // writes the cache again
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the dead writer's temporary file is still there: %v", err)
	}
}

// A status or commit of named paths does not read through a folder of the
// tree that is a symbolic link to elsewhere: a file, a folder below it, or
// the link itself count as absent, as a walk of the whole tree skips the
// link.
func TestPaths_ThroughLink(t *testing.T) {
	e := setup(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"secret.md", "sub/deeper.md"} {
		if err := os.WriteFile(filepath.Join(outside, p), []byte("secret"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(e.dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"lnk/secret.md", "lnk/sub", "lnk/sub/deeper.md", "lnk"} {
		st, err := e.m.Status(e.ctx, e.wt, p)
		if err != nil {
			t.Fatalf("status %s: %v", p, err)
		}
		if len(st.Changes) > 0 {
			t.Errorf("status %s through a link = %+v, want no change", p, st.Changes)
		}
		res, err := e.m.Commit(e.ctx, e.wt, worktree.CommitRequest{Message: "through " + p, Paths: []string{p}, Principal: cairn.User("ada")})
		if err == nil {
			t.Errorf("commit %s through a link committed %+v", p, res.Changes)
		} else if !strings.Contains(err.Error(), "no local edits") {
			t.Errorf("commit %s through a link: %v, want no local edits", p, err)
		}
	}
}
