package worktree_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/store"
	"cairn/worktree"
)

type env struct {
	t   *testing.T
	ctx context.Context
	s   *store.Store
	m   *worktree.Manager
	dir string
	wt  *worktree.Tree
	// vdir is where the database, locks and staging folders live.
	vdir string
}

func setup(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	s, m, wt := openVault(t, dir)
	return &env{t: t, ctx: t.Context(), s: s, m: m, dir: dir, wt: wt, vdir: filepath.Join(dir, ".cairn")}
}

// openVault makes folder dir a vault, with the database in its .cairn,
// and registers dir as the working tree of main.
func openVault(tb testing.TB, dir string) (*store.Store, *worktree.Manager, *worktree.Tree) {
	tb.Helper()
	ctx := tb.Context()
	vdir := filepath.Join(dir, ".cairn")
	if err := os.Mkdir(vdir, 0o755); err != nil {
		tb.Fatal(err)
	}
	db, wst := openBackend(tb, vdir)
	s, err := store.New(ctx, db, nil)
	if err != nil {
		tb.Fatal(err)
	}
	m := worktree.NewManager(s, wst, vdir)
	wt, err := m.Register(ctx, dir, "main", cairn.Hash{})
	if err != nil {
		tb.Fatal(err)
	}
	return s, m, wt
}

func (e *env) write(path, data string) {
	e.t.Helper()
	p := filepath.Join(e.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
	// A later mtime than any stat row, whatever the clock's resolution.
	later := time.Now().Add(time.Duration(len(data)+1) * time.Millisecond)
	os.Chtimes(p, later, later)
}

func (e *env) read(path string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, path))
	if err != nil {
		return "<missing>"
	}
	return string(data)
}

func (e *env) status(paths ...string) []string {
	e.t.Helper()
	st, err := e.m.Status(e.ctx, e.wt, paths...)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, c := range st.Changes {
		s := string(c.Kind) + " " + c.Path
		if c.Incoming {
			s += " (incoming)"
		}
		out = append(out, s)
	}
	return out
}

func (e *env) commit(msg string, paths ...string) *worktree.CommitResult {
	e.t.Helper()
	res, err := e.m.Commit(e.ctx, e.wt, worktree.CommitRequest{Message: msg, Paths: paths, Principal: cairn.User("ada")})
	if err != nil {
		e.t.Fatalf("commit %q: %v", msg, err)
	}
	return res
}

// commitElsewhere moves main without the working tree, as an admission or
// a merge would.
func (e *env) commitElsewhere(files map[string]string) cairn.Hash {
	e.t.Helper()
	head, _ := e.s.Head(e.ctx, "main")
	c, _ := e.s.ReadCommit(e.ctx, head)
	var changes []store.FileChange
	for p, d := range files {
		if d == "" {
			changes = append(changes, store.FileChange{Path: p, Delete: true})
		} else {
			changes = append(changes, store.FileChange{Path: p, Data: []byte(d)})
		}
	}
	b := e.s.NewBatch()
	tree, err := b.Edit(e.ctx, c.Tree, changes)
	if err != nil {
		e.t.Fatal(err)
	}
	nc, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.Agent("test"), Message: "elsewhere"})
	if err != nil {
		e.t.Fatal(err)
	}
	return nc.Hash
}

func TestStatusAndCommit(t *testing.T) {
	e := setup(t)
	e.write("index.md", "# Home\n")
	e.write("notes/a.md", "a\n")
	e.write(".obsidian/workspace.json", "{}")
	e.write(".DS_Store", "x")
	if diff := cmp.Diff([]string{"added index.md", "added notes/a.md"}, e.status()); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
	res := e.commit("first")
	if res.Commit == nil || len(res.Changes) != 2 {
		t.Fatalf("commit = %+v", res)
	}
	if got := e.status(); len(got) != 0 {
		t.Errorf("status after commit = %v, want clean", got)
	}
	e.write("notes/a.md", "a changed\n")
	os.Remove(filepath.Join(e.dir, "index.md"))
	e.write("notes/b.md", "b\n")
	if diff := cmp.Diff([]string{"added notes/b.md", "deleted index.md", "modified notes/a.md"}, sorted(e.status())); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
	// Commit one path only.
	e.commit("only b", "notes/b.md")
	if diff := cmp.Diff([]string{"deleted index.md", "modified notes/a.md"}, sorted(e.status())); diff != "" {
		t.Errorf("status after a partial commit mismatch (-want +got):\n%s", diff)
	}
	if _, err := e.m.Commit(e.ctx, e.wt, worktree.CommitRequest{Message: "x", Paths: []string{"nope.md"}, Principal: cairn.User("ada")}); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("commit of a path without edits: error = %v, want invalid", err)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

func TestSyncLeavesLocalEditsAlone(t *testing.T) {
	e := setup(t)
	e.write("index.md", "- [[a]]\n")
	e.write("a.md", "line 1\nline 2\nline 3\n")
	e.write("b.md", "b\n")
	e.commit("first")
	// The person edits a.md; main changes a.md (another line) and b.md.
	e.write("a.md", "line 1 by the person\nline 2\nline 3\n")
	head := e.commitElsewhere(map[string]string{"a.md": "line 1\nline 2\nline 3 from main\n", "b.md": "b from main\n", "c.md": "new\n"})
	rep, err := e.m.Sync(e.ctx, e.wt, head)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.md"}, rep.LeftAlone); diff != "" {
		t.Errorf("left alone mismatch (-want +got):\n%s", diff)
	}
	if got := e.read("b.md"); got != "b from main\n" {
		t.Errorf("b.md = %q, want main's version", got)
	}
	if got := e.read("a.md"); got != "line 1 by the person\nline 2\nline 3\n" {
		t.Errorf("a.md = %q: the person's edit was overwritten", got)
	}
	if diff := cmp.Diff([]string{"modified a.md (incoming)"}, e.status()); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
	// The commit merges the person's edit with main's.
	res := e.commit("person's edit")
	if res.Commit == nil {
		t.Fatalf("commit: %+v", res)
	}
	if got := e.read("a.md"); got != "line 1 by the person\nline 2\nline 3 from main\n" {
		t.Errorf("a.md after commit = %q, want both edits", got)
	}
	if got := e.status(); len(got) != 0 {
		t.Errorf("status after commit = %v", got)
	}
}

func TestCommitMergesWhenBranchMoved(t *testing.T) {
	e := setup(t)
	e.write("index.md", "## Entities\n- [[a]]\n")
	e.commit("first")
	// Main moves (an ingest adds a line to index.md) without a sync; the
	// person adds another line.
	e.commitElsewhere(map[string]string{"index.md": "## Entities\n- [[a]]\n- [[b]]\n"})
	e.write("index.md", "## Entities\n- [[a]]\n- [[c]]\n")
	res := e.commit("add c")
	if res.Commit == nil || !res.Merged {
		t.Fatalf("commit = %+v, want a merged commit", res)
	}
	if got := e.read("index.md"); !strings.Contains(got, "[[b]]") || !strings.Contains(got, "[[c]]") {
		t.Errorf("index.md = %q, want both items", got)
	}
	// A real conflict is refused and nothing is written.
	e.write("index.md", "## Entities\nmine\n")
	head := e.commitElsewhere(map[string]string{"index.md": "## Entities\ntheirs\n"})
	res, err := e.m.Commit(e.ctx, e.wt, worktree.CommitRequest{Message: "conflict", Principal: cairn.User("ada")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit != nil || len(res.Conflicts) == 0 {
		t.Fatalf("conflicting commit = %+v", res)
	}
	if now, _ := e.s.Head(e.ctx, "main"); now != head {
		t.Errorf("main moved after a refused commit")
	}
	if got := e.read("index.md"); got != "## Entities\nmine\n" {
		t.Errorf("the person's file changed: %q", got)
	}
}

func TestWalkHostile(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644)
	os.WriteFile(filepath.Join(dir, "ok.md"), []byte("ok"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.md"), nil, 0o644)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "link.md"))
	os.Symlink(outside, filepath.Join(dir, "linkdir"))
	os.WriteFile(filepath.Join(dir, "Case.md"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(dir, "case.md"), []byte("2"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad\xffname.md"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "a..b.md"), []byte("dots are fine"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 2<<20), 0o644)
	var got []string
	skips, err := worktree.Walk(dir, &worktree.WalkOptions{MaxFileSize: 1 << 20}, func(f worktree.File) error {
		got = append(got, f.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Case.md", "a..b.md", "empty.md", "ok.md"}, got); diff != "" {
		t.Errorf("files mismatch (-want +got):\n%s", diff)
	}
	reasons := map[string]string{}
	for _, s := range skips {
		reasons[s.Path] = s.Reason
	}
	for p, want := range map[string]string{
		"link.md": "symbolic link", "linkdir": "symbolic link", "case.md": "differs only in case",
		"bad\uFFFDname.md": "not valid UTF-8", "big.bin": "limit",
	} {
		if !strings.Contains(reasons[p], want) {
			t.Errorf("skip of %q = %q, want it to mention %q (all: %v)", p, reasons[p], want, reasons)
		}
	}
}

// TestSyncCaseRename: a change of case alone (the same content under a new
// spelling) leaves the folder with the new spelling only.
func TestSyncCaseRename(t *testing.T) {
	e := setup(t)
	e.write("notes/idea.md", "an idea\n")
	e.write("index.md", "# Home\n")
	e.commit("first")
	head := e.commitElsewhere(map[string]string{"notes/idea.md": "", "notes/Idea.md": "an idea\n"})
	if _, err := e.m.Sync(e.ctx, e.wt, head); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(e.dir, "notes"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range entries {
		names = append(names, de.Name())
	}
	if diff := cmp.Diff([]string{"Idea.md"}, names); diff != "" {
		t.Errorf("notes/ after a case rename (-want +got):\n%s", diff)
	}
	if got := e.status(); len(got) != 0 {
		t.Errorf("status after the sync = %v, want clean", got)
	}
}

// A commit of more content than it holds in memory writes it to the store
// as it reads it: what it commits is every file, whole, and nothing else.
func TestCommitSpills(t *testing.T) {
	e := setup(t)
	e.write("a.md", "a\n")
	e.commit("first")
	files := map[string]string{}
	for i := range 48 { // 48 MiB, over the 32 MiB a commit holds
		files[fmt.Sprintf("big/f%02d.bin", i)] = strings.Repeat(fmt.Sprintf("%02d", i), 512<<10)
	}
	files["a.md"] = "a, edited\n"
	for p, data := range files {
		e.write(p, data)
	}
	res := e.commit("big")
	if len(res.Changes) != len(files) {
		t.Fatalf("committed %d changes, want %d", len(res.Changes), len(files))
	}
	if got := e.status(); len(got) != 0 {
		t.Errorf("status after the commit = %v, want clean", got)
	}
	c, err := e.s.ReadCommit(e.ctx, res.Commit.Hash)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for f, err := range e.s.Files(e.ctx, c.Tree, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		data, err := e.s.ReadBlob(e.ctx, f.Blob)
		if err != nil {
			t.Fatal(err)
		}
		if want, ok := files[f.Path]; ok && string(data) != want {
			t.Errorf("%s: committed %d bytes, not the file's %d", f.Path, len(data), len(want))
		}
		if f.Size != int64(len(data)) {
			t.Errorf("%s: the tree says %d bytes, its content has %d", f.Path, f.Size, len(data))
		}
	}
	if n != len(files) {
		t.Errorf("the commit holds %d files, want %d", n, len(files))
	}
}

// TestSync_StatRows: a sync leaves the stat rows the next status can
// trust: of the files it wrote, of those it read (a local edit it left
// alone), and none of those it deleted.
func TestSync_StatRows(t *testing.T) {
	e := setup(t)
	e.write("a.md", "a\n")
	e.write("b.md", "b\n")
	e.write("gone.md", "going\n")
	e.commit("first")
	for _, p := range []string{"a.md", "b.md", "gone.md"} {
		if _, ok := e.m.StatRow(e.ctx, e.wt, p); !ok {
			t.Fatalf("no stat row of %s after the commit", p)
		}
	}
	e.write("a.md", "a, mine\n") // left alone by the sync, read by its scan
	head := e.commitElsewhere(map[string]string{"a.md": "a2\n", "b.md": "b2\n", "c.md": "c\n", "gone.md": ""})
	if _, err := e.m.Sync(e.ctx, e.wt, head); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.md": "a, mine\n", "b.md": "b2\n", "c.md": "c\n"} {
		r, ok := e.m.StatRow(e.ctx, e.wt, p)
		if !ok || r.Blob != store.BlobHash([]byte(want)) {
			t.Errorf("stat row of %s = %+v (found %v), want one of %q", p, r, ok, want)
		}
	}
	if r, ok := e.m.StatRow(e.ctx, e.wt, "gone.md"); ok {
		t.Errorf("the deleted gone.md still has a stat row: %+v", r)
	}
	if diff := cmp.Diff([]string{"modified a.md (incoming)"}, e.status()); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
}

// TestSettled: a check of a working tree reads it again under the tree's
// lock, and not at all while another holder has the lock (a command that
// is syncing the folder now).
func TestSettled(t *testing.T) {
	e := setup(t)
	u, unlock, err := e.m.Settled(e.ctx, e.wt)
	if err != nil || u == nil || u.ID != e.wt.ID || u.Path != e.wt.Path {
		t.Fatalf("Settled of a tree nobody syncs = %+v, %v", u, err)
	}
	unlock()
	f, err := os.OpenFile(e.m.LockPath(e.wt), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if u, _, err := e.m.Settled(e.ctx, e.wt); err != nil || u != nil {
		t.Errorf("Settled while another holds the tree's lock = %+v, %v; want nothing", u, err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if u, unlock, err := e.m.Settled(e.ctx, e.wt); err != nil || u == nil {
		t.Errorf("Settled once the lock is let go = %+v, %v", u, err)
	} else {
		unlock()
	}
}
