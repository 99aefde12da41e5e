package worktree_test

import (
	"context"
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
	"cairn/store"
	"cairn/worktree"
)

// TestStatusWatched_Property runs random sequences of edits of a folder —
// new and changed files, touches without change, edits within one
// timestamp tick (same size, same modification time), renames of files
// and folders, deletions of both, folders made with files at once,
// ignored names — with commits of some paths and moves of main between
// them, and checks after every step that the whole-tree status is what a
// full re-hash of the folder against the effective base says: without a
// watcher, with one journaling the folder (most statuses then made from
// the journal, without a walk), and with folders' listings kept from one
// status to the next (most folders then not listed again).
func TestStatusWatched_Property(t *testing.T) {
	seeds, steps := 3, 40
	if testing.Short() {
		seeds, steps = 2, 15
	}
	for _, mode := range []string{"walk", "watched", "listed"} {
		watched, listed := mode == "watched", mode == "listed"
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed%d", mode, seed), func(t *testing.T) {
				e := setup(t)
				if watched {
					e.watch()
				}
				if listed {
					// A folder changed 30 ms before a status has its
					// listing kept, instead of two seconds: the steps
					// below sleep past it. Sound where the file system's
					// clock ticks faster than that.
					if fi, err := os.Stat(e.dir); err != nil || fi.ModTime().Nanosecond()%int(time.Millisecond) == 0 {
						t.Skip("the file system's times are too coarse to keep listings 30 ms after a change")
					}
					e.m.SetListingRacy(30 * time.Millisecond)
				}
				e.write("index.md", "# Home\n")
				e.commit("first")
				rng := rand.New(rand.NewPCG(uint64(seed), 11))
				for step := range steps {
					for range 1 + rng.IntN(4) {
						e.randomEdit(rng, step)
					}
					switch rng.IntN(6) {
					case 0:
						if st, err := e.m.Status(e.ctx, e.wt); err == nil && len(st.Changes) > 0 {
							c := st.Changes[rng.IntN(len(st.Changes))]
							e.commit("some", c.Path)
						}
					case 1:
						e.commitElsewhere(map[string]string{"notes/" + names[rng.IntN(len(names))]: fmt.Sprintf("from main %d\n", step)})
						if _, err := e.m.Sync(e.ctx, e.wt, e.head()); err != nil {
							t.Fatal(err)
						}
					}
					if listed && rng.IntN(3) > 0 {
						time.Sleep(40 * time.Millisecond) // the folders' listings can be kept
					}
					want := e.rehash()
					got := e.status()
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d: status (-full re-hash +status):\n%s", step, diff)
					}
				}
				if n := e.m.WatchedStatuses(); watched && n < int64(steps)/2 {
					t.Errorf("%d of about %d statuses came from the journal; want most", n, steps)
				} else if !watched && n != 0 {
					t.Errorf("%d statuses came from a journal without a watcher", n)
				}
				if n := e.m.ReusedListings(); listed && n < int64(steps) {
					t.Errorf("%d folders' listings were reused in %d steps; want more", n, steps)
				}
			})
		}
	}
}

var (
	folders = []string{"", "notes/", "notes/deep/", "concepts/", "raw/"}
	names   = []string{"a.md", "b.md", "c.md", "pic.png"}
)

// randomEdit makes one random change to the folder, as a person or a
// program would, with no care for the timestamps' resolution.
func (e *env) randomEdit(rng *rand.Rand, step int) {
	e.t.Helper()
	pick := func() string { return folders[rng.IntN(len(folders))] + names[rng.IntN(len(names))] }
	abs := func(p string) string { return filepath.Join(e.dir, filepath.FromSlash(p)) }
	put := func(p, data string) {
		os.MkdirAll(filepath.Dir(abs(p)), 0o755)
		if err := os.WriteFile(abs(p), []byte(data), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	p := pick()
	switch rng.IntN(11) {
	case 0:
		os.Remove(abs(p))
	case 1:
		os.RemoveAll(abs(folders[1+rng.IntN(len(folders)-1)]))
	case 2: // touched: the same content, a new modification time
		if data, err := os.ReadFile(abs(p)); err == nil {
			put(p, string(data))
		}
	case 3: // two edits within one tick, the second after a status
		put(p, fmt.Sprintf("tick %d first\n", step))
		fi, err := os.Stat(abs(p))
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.m.Status(e.ctx, e.wt); err != nil {
			e.t.Fatal(err)
		}
		put(p, fmt.Sprintf("tick %d other\n", step))
		os.Chtimes(abs(p), fi.ModTime(), fi.ModTime())
	case 4: // a file renamed
		q := pick()
		os.MkdirAll(filepath.Dir(abs(q)), 0o755)
		os.Rename(abs(p), abs(q))
	case 5: // a folder renamed, within the tree or to a new name
		from := folders[1+rng.IntN(len(folders)-1)]
		to := fmt.Sprintf("moved%d/", rng.IntN(3))
		if rng.IntN(2) == 0 {
			to = folders[1+rng.IntN(len(folders)-1)]
		}
		os.RemoveAll(abs(to))
		os.MkdirAll(filepath.Dir(strings.TrimSuffix(abs(to), "/")), 0o755)
		os.Rename(abs(from), strings.TrimSuffix(abs(to), "/"))
	case 6: // a folder made with files in it at once
		dir := fmt.Sprintf("new%d/sub%d/", rng.IntN(3), rng.IntN(2))
		for i := range 1 + rng.IntN(3) {
			put(dir+names[i], fmt.Sprintf("new %d %d\n", step, i))
		}
	case 7:
		put(".obsidian/"+names[rng.IntN(len(names))], "ignored")
	case 8: // a file made in a folder whose time is then set back
		dir := filepath.Dir(abs(p))
		if fi, err := os.Stat(dir); err == nil {
			put(p, fmt.Sprintf("hidden %d\n", step))
			os.Chtimes(dir, fi.ModTime(), fi.ModTime())
		}
	default:
		put(p, fmt.Sprintf("content %d of %s\n", rng.IntN(4), p))
	}
}

// rehash works out the tree's status on its own: every file of the folder
// read and hashed, compared with the effective base (the base commit's
// files with the overrides applied).
func (e *env) rehash() []string {
	e.t.Helper()
	t, err := e.m.Get(e.ctx, e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	base := map[string]cairn.Entry{}
	if !t.Base.IsZero() {
		c, err := e.s.ReadCommit(e.ctx, t.Base)
		if err != nil {
			e.t.Fatal(err)
		}
		for ent, err := range e.s.Files(e.ctx, c.Tree, "") {
			if err != nil {
				e.t.Fatal(err)
			}
			base[ent.Path] = ent
		}
	}
	over, err := e.m.OverridesOf(e.ctx, t)
	if err != nil {
		e.t.Fatal(err)
	}
	for p, ent := range over {
		if ent.Blob.IsZero() {
			delete(base, p)
		} else {
			base[p] = ent
		}
	}
	var out []string
	seen := map[string]bool{}
	_, err = worktree.Walk(e.dir, nil, func(f worktree.File) error {
		seen[f.Path] = true
		data, err := os.ReadFile(f.Abs)
		if err != nil {
			return err
		}
		b, ok := base[f.Path]
		switch {
		case !ok:
			out = append(out, "added "+f.Path)
		case b.Blob != store.BlobHash(data) || b.Mode != f.Mode:
			out = append(out, "modified "+f.Path)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for p := range base {
		if !seen[p] {
			out = append(out, "deleted "+p)
		}
	}
	for i, s := range out {
		if _, ok := over[s[strings.Index(s, " ")+1:]]; ok {
			out[i] += " (incoming)"
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return strings.Compare(a[strings.Index(a, " ")+1:], b[strings.Index(b, " ")+1:])
	})
	return out
}

// watch runs a watcher of the vault's trees until the test ends, and waits
// for its journal.
func (e *env) watch() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.m.Watch(ctx, nil)
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(10 * time.Second); ; {
		if m, _ := filepath.Glob(filepath.Join(e.vdir, "status-*.watch")); len(m) > 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatal("the watcher wrote no journal")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStatusWatched_Folders: the cases the watcher must get right beyond
// single files, each checked against a full re-hash: a folder renamed and
// a file under it edited afterwards (inotify's watches of the folders
// under it go on naming their old paths), a folder made with folders and
// files in it at once, a folder removed with all it holds.
func TestStatusWatched_Folders(t *testing.T) {
	e := setup(t)
	e.watch()
	e.write("notes/deep/a.md", "a\n")
	e.write("notes/deep/b.md", "b\n")
	e.write("notes/c.md", "c\n")
	e.commit("first")
	check := func(what string) {
		t.Helper()
		if diff := cmp.Diff(e.rehash(), e.status()); diff != "" {
			t.Fatalf("%s: status (-full re-hash +status):\n%s", what, diff)
		}
	}
	check("committed")
	if err := os.Rename(filepath.Join(e.dir, "notes"), filepath.Join(e.dir, "moved")); err != nil {
		t.Fatal(err)
	}
	check("folder renamed")
	before := e.m.WatchedStatuses()
	check("again")
	os.WriteFile(filepath.Join(e.dir, "moved/deep/a.md"), []byte("a edited after the rename\n"), 0o644)
	check("a file under the renamed folder edited")
	if e.m.WatchedStatuses() == before {
		t.Error("no status came from the journal after the watcher started over")
	}
	os.MkdirAll(filepath.Join(e.dir, "made/x/y"), 0o755)
	os.WriteFile(filepath.Join(e.dir, "made/x/y/z.md"), []byte("z\n"), 0o644)
	os.WriteFile(filepath.Join(e.dir, "made/w.md"), []byte("w\n"), 0o644)
	check("folders made with files")
	os.WriteFile(filepath.Join(e.dir, "made/x/y/z.md"), []byte("z edited\n"), 0o644)
	check("a file in a new folder edited")
	os.RemoveAll(filepath.Join(e.dir, "moved"))
	check("a folder removed")
}
