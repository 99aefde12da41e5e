package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/store"
)

// RunStore runs the tests of the versioned store over the backend.
func RunStore(t *testing.T, open Open) {
	setup := func(t *testing.T) *env {
		t.Helper()
		b := open(t)
		t.Cleanup(func() { b.Close() })
		s, err := store.New(t.Context(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &env{t: t, ctx: t.Context(), s: s}
	}
	t.Run("CommitAndRead", func(t *testing.T) { testCommitAndRead(t, setup(t)) })
	t.Run("CommitsImmutable", func(t *testing.T) { testCommitsImmutable(t, setup(t)) })
	t.Run("CommitErrors", func(t *testing.T) { testCommitErrors(t, setup(t)) })
	t.Run("EditErrors", func(t *testing.T) { testEditErrors(t, setup(t)) })
	t.Run("HistoryIndependence", func(t *testing.T) { testHistoryIndependence(t, setup(t)) })
	t.Run("Resolve", func(t *testing.T) { testResolve(t, setup(t)) })
	t.Run("Log", func(t *testing.T) { testLog(t, setup(t)) })
	t.Run("MergeBase", func(t *testing.T) { testMergeBase(t, setup(t)) })
	t.Run("Diff", func(t *testing.T) { testDiff(t, setup(t)) })
	t.Run("Merge", func(t *testing.T) { testMerge(t, setup(t)) })
	t.Run("MergeConflicts", func(t *testing.T) { testMergeConflicts(t, setup(t)) })
	t.Run("Tags", func(t *testing.T) { testStoreTags(t, setup(t)) })
	t.Run("GC", func(t *testing.T) { testGC(t, setup(t)) })
	t.Run("Purge", func(t *testing.T) { testPurge(t, setup(t)) })
	t.Run("Hooks", func(t *testing.T) { testHooks(t, setup(t)) })
}

type env struct {
	t   *testing.T
	ctx context.Context
	s   *store.Store
}

var alice = cairn.User("alice")

func put(path, data string) store.FileChange {
	return store.FileChange{Path: path, Data: []byte(data)}
}

func del(path string) store.FileChange { return store.FileChange{Path: path, Delete: true} }

// tree returns the tree of head with changes applied (head zero: empty).
func (e *env) tree(b *store.Batch, head cairn.Hash, changes ...store.FileChange) cairn.Hash {
	e.t.Helper()
	base := store.EmptyTree
	if !head.IsZero() {
		c, err := e.s.ReadCommit(e.ctx, head)
		if err != nil {
			e.t.Fatal(err)
		}
		base = c.Tree
	}
	tree, err := b.Edit(e.ctx, base, changes)
	if err != nil {
		e.t.Fatalf("Edit: %v", err)
	}
	return tree
}

// commit applies changes to the head of branch (creating it from from when
// it does not exist) and returns the new commit.
func (e *env) commit(branch string, msg string, changes ...store.FileChange) *cairn.Commit {
	e.t.Helper()
	head, err := e.s.Head(e.ctx, branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		e.t.Fatal(err)
	}
	b := e.s.NewBatch()
	c, err := e.s.Commit(e.ctx, b, store.CommitRequest{
		Branch: branch, Expected: head, Tree: e.tree(b, head, changes...), Principal: alice, Message: msg,
	})
	if err != nil {
		e.t.Fatalf("commit %q: %v", msg, err)
	}
	return c
}

// read returns the content of path at a revision.
func (e *env) read(rev, path string) (string, error) {
	e.t.Helper()
	h, err := e.s.Resolve(e.ctx, rev)
	if err != nil {
		return "", err
	}
	c, err := e.s.ReadCommit(e.ctx, h)
	if err != nil {
		return "", err
	}
	ent, err := e.s.Get(e.ctx, c.Tree, path)
	if err != nil {
		return "", err
	}
	data, err := e.s.ReadBlob(e.ctx, ent.Blob)
	return string(data), err
}

func (e *env) files(tree cairn.Hash) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for ent, err := range e.s.Files(e.ctx, tree, "") {
		if err != nil {
			e.t.Fatal(err)
		}
		data, err := e.s.ReadBlob(e.ctx, ent.Blob)
		if err != nil {
			e.t.Fatal(err)
		}
		out[ent.Path] = string(data)
	}
	return out
}

func (e *env) verify() {
	e.t.Helper()
	rep, err := e.s.Verify(e.ctx)
	if err != nil {
		e.t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() {
		e.t.Fatalf("Verify found problems: %v", rep.Problems)
	}
}

func testCommitAndRead(t *testing.T, e *env) {
	c1 := e.commit("main", "first", put("index.md", "# Home\n"), put("notes/a.md", "a\n"), put("notes/B.md", "b\n"))
	if c1.Principal != alice || c1.Message != "first" || len(c1.Parents) != 0 {
		t.Errorf("commit = %+v", c1)
	}
	c2 := e.commit("main", "second", put("notes/a.md", "a2\n"), del("index.md"))
	if len(c2.Parents) != 1 || c2.Parents[0] != c1.Hash {
		t.Errorf("second commit parents = %v, want [%s]", c2.Parents, c1.Hash.Short())
	}
	for _, tc := range []struct{ rev, path, want string }{
		{"main", "notes/a.md", "a2\n"},
		{"main~1", "notes/a.md", "a\n"},
		{c1.Hash.String(), "index.md", "# Home\n"},
		{"main", "notes/B.md", "b\n"},
	} {
		got, err := e.read(tc.rev, tc.path)
		if err != nil || got != tc.want {
			t.Errorf("read(%s, %s) = %q, %v; want %q", tc.rev, tc.path, got, err, tc.want)
		}
	}
	if _, err := e.read("main", "index.md"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("read deleted file: error = %v, want code %s", err, cairn.ENOTFOUND)
	}
	if _, err := e.read("main", "notes/b.md"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("read with the wrong case: error = %v, want code %s", err, cairn.ENOTFOUND)
	}
	got, err := e.s.ReadCommit(e.ctx, c2.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c2, got); diff != "" {
		t.Errorf("ReadCommit mismatch (-want +got):\n%s", diff)
	}
	if n, err := e.s.Count(e.ctx, c2.Tree); err != nil || n != 2 {
		t.Errorf("Count = %d, %v; want 2", n, err)
	}
	var paths []string
	for ent, err := range e.s.Files(e.ctx, c2.Tree, "NOTES/") {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, ent.Path)
	}
	if diff := cmp.Diff([]string{"notes/a.md", "notes/B.md"}, paths); diff != "" {
		t.Errorf("Files(NOTES/) mismatch (-want +got):\n%s", diff)
	}
	e.verify()
}

// testCommitsImmutable checks that a commit handed out (by Commit, and by
// ReadCommit from the store's cache or not) is the caller's own: changing
// it changes what nobody else reads.
func testCommitsImmutable(t *testing.T, e *env) {
	c1 := e.commit("main", "first", put("a.md", "a\n"))
	c2 := e.commit("main", "second", put("a.md", "b\n"))
	want, err := e.s.ReadCommit(e.ctx, c2.Hash)
	if err != nil {
		t.Fatal(err)
	}
	want = &cairn.Commit{Hash: want.Hash, Tree: want.Tree, Parents: slices.Clone(want.Parents),
		Principal: want.Principal, Time: want.Time, Message: want.Message}
	spoil := func(c *cairn.Commit) {
		c.Message = "spoiled"
		if len(c.Parents) > 0 {
			c.Parents[0] = cairn.Hash{}
		}
		if c.Meta == nil {
			c.Meta = map[string]string{}
		}
		c.Meta["spoiled"] = "yes"
	}
	spoil(c2)
	for range 2 { // the second read comes from the cache
		got, err := e.s.ReadCommit(e.ctx, c2.Hash)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("ReadCommit after the caller changed its commit (-want +got):\n%s", diff)
		}
		spoil(got)
	}
	if want.Parents[0] != c1.Hash {
		t.Fatalf("parents = %v, want [%s]", want.Parents, c1.Hash.Short())
	}
}

func testCommitErrors(t *testing.T, e *env) {
	c1 := e.commit("main", "first", put("a.md", "a"))
	b := e.s.NewBatch()
	tree := e.tree(b, c1.Hash, put("b.md", "b"))
	for name, tc := range map[string]struct {
		req  store.CommitRequest
		code string
	}{
		"StaleExpected":   {store.CommitRequest{Branch: "main", Tree: tree, Principal: alice, Message: "m"}, cairn.ECONFLICT},
		"WrongExpected":   {store.CommitRequest{Branch: "main", Expected: store.BlobHash(nil), Tree: tree, Principal: alice, Message: "m"}, cairn.ECONFLICT},
		"NoMessage":       {store.CommitRequest{Branch: "main", Expected: c1.Hash, Tree: tree, Principal: alice, Message: " "}, cairn.EINVALID},
		"BadPrincipal":    {store.CommitRequest{Branch: "main", Expected: c1.Hash, Tree: tree, Principal: "bob", Message: "m"}, cairn.EINVALID},
		"BadBranch":       {store.CommitRequest{Branch: "../x", Expected: c1.Hash, Tree: tree, Principal: alice, Message: "m"}, cairn.EINVALID},
		"NothingToCommit": {store.CommitRequest{Branch: "main", Expected: c1.Hash, Tree: c1.Tree, Principal: alice, Message: "m"}, cairn.EINVALID},
		"MissingTree":     {store.CommitRequest{Branch: "main", Expected: c1.Hash, Tree: store.BlobHash([]byte("x")), Principal: alice, Message: "m"}, cairn.ENOTFOUND},
		"MissingParent":   {store.CommitRequest{Branch: "main", Expected: c1.Hash, Parents: []cairn.Hash{store.BlobHash(nil)}, Tree: tree, Principal: alice, Message: "m"}, cairn.ENOTFOUND},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.s.Commit(e.ctx, b, tc.req)
			if cairn.ErrorCode(err) != tc.code {
				t.Fatalf("Commit error = %v, want code %s", err, tc.code)
			}
			if head, _ := e.s.Head(e.ctx, "main"); head != c1.Hash {
				t.Fatalf("main moved to %s after a refused commit", head.Short())
			}
		})
	}
	e.verify()
}

func testEditErrors(t *testing.T, e *env) {
	c := e.commit("main", "first", put("Notes/a.md", "a"), put("x.md", "x"), put("dir/sub/f.md", "f"))
	for name, tc := range map[string]struct {
		changes []store.FileChange
		code    string
	}{
		"DotDot":            {[]store.FileChange{put("../escape.md", "x")}, cairn.EINVALID},
		"Absolute":          {[]store.FileChange{put("/etc/passwd", "x")}, cairn.EINVALID},
		"NUL":               {[]store.FileChange{put("a\x00b.md", "x")}, cairn.EINVALID},
		"Control":           {[]store.FileChange{put("a\x1bb.md", "x")}, cairn.EINVALID},
		"CairnDir":          {[]store.FileChange{put(".cairn/cairn.db", "x")}, cairn.EINVALID},
		"GitDir":            {[]store.FileChange{put("sub/.git/config", "x")}, cairn.EINVALID},
		"Empty":             {[]store.FileChange{put("", "x")}, cairn.EINVALID},
		"TrailingSlash":     {[]store.FileChange{put("a/", "x")}, cairn.EINVALID},
		"LongSegment":       {[]store.FileChange{put(strings.Repeat("a", 256)+".md", "x")}, cairn.EINVALID},
		"LongPath":          {[]store.FileChange{put(strings.Repeat("abcdefgh/", 114)+"x.md", "x")}, cairn.EINVALID},
		"CaseCollision":     {[]store.FileChange{put("X.md", "x")}, cairn.EINVALID},
		"CaseInOneChange":   {[]store.FileChange{put("new.md", "1"), put("NEW.md", "2")}, cairn.EINVALID},
		"FolderCase":        {[]store.FileChange{put("notes/b.md", "b")}, cairn.EINVALID},
		"FileOverFolder":    {[]store.FileChange{put("dir/sub", "f")}, cairn.EINVALID},
		"FolderOverFile":    {[]store.FileChange{put("x.md/y.md", "y")}, cairn.EINVALID},
		"DeleteMissing":     {[]store.FileChange{del("nope.md")}, cairn.ENOTFOUND},
		"DeleteWrongCase":   {[]store.FileChange{del("notes/a.md")}, cairn.ENOTFOUND},
		"TwiceInOneChange":  {[]store.FileChange{put("y.md", "1"), put("y.md", "2")}, cairn.EINVALID},
		"UnknownStoredBlob": {[]store.FileChange{{Path: "y.md", Blob: store.BlobHash([]byte("never")), Size: 5}}, cairn.ENOTFOUND},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.s.NewBatch().Edit(e.ctx, c.Tree, tc.changes)
			if cairn.ErrorCode(err) != tc.code {
				t.Fatalf("Edit error = %v, want code %s", err, tc.code)
			}
			if cairn.ErrorHint(err) == "" && tc.code == cairn.EINVALID {
				t.Errorf("Edit error %q has no hint", err)
			}
		})
	}
	// A case-only rename is allowed when the old path goes in the same change.
	b := e.s.NewBatch()
	tree, err := b.Edit(e.ctx, c.Tree, []store.FileChange{del("x.md"), put("X.md", "x")})
	if err != nil {
		t.Fatalf("case-only rename: %v", err)
	}
	if _, err := b.Get(e.ctx, tree, "X.md"); err != nil {
		t.Errorf("after case-only rename: %v", err)
	}
	// NFC: a decomposed name is stored composed.
	tree, err = b.Edit(e.ctx, c.Tree, []store.FileChange{put("cafe\u0301.md", "c")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(e.ctx, tree, "caf\u00e9.md"); err != nil {
		t.Errorf("NFC path not found: %v", err)
	}
}

// testHistoryIndependence builds one set of files in different orders and
// batch sizes and expects one root hash.
func testHistoryIndependence(t *testing.T, e *env) {
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{}
	for i := range 3000 {
		dir := []string{"", "notes/", "concepts/", "entities/deep/"}[i%4]
		files[fmt.Sprintf("%sp-%05d.md", dir, rng.IntN(1_000_000))] = fmt.Sprintf("page %d\n", i)
	}
	var all []store.FileChange
	for p, d := range files {
		all = append(all, put(p, d))
	}
	slices.SortFunc(all, func(a, b store.FileChange) int { return strings.Compare(a.Path, b.Path) })
	b := e.s.NewBatch()
	want, err := b.BuildTree(e.ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	// Add in random batches, with extra files that are added and deleted
	// again on the way.
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	tree := store.EmptyTree
	for len(all) > 0 {
		n := min(len(all), 1+rng.IntN(300))
		changes := slices.Clone(all[:n])
		all = all[n:]
		extra := fmt.Sprintf("tmp/x-%d.md", len(all))
		changes = append(changes, put(extra, "temporary"))
		if tree, err = b.Edit(e.ctx, tree, changes); err != nil {
			t.Fatal(err)
		}
		if tree, err = b.Edit(e.ctx, tree, []store.FileChange{del(extra)}); err != nil {
			t.Fatal(err)
		}
	}
	if tree != want {
		t.Fatalf("incremental root %s != bulk root %s", tree.Short(), want.Short())
	}
	// Delete everything one batch at a time: back to the empty tree.
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for len(paths) > 0 {
		n := min(len(paths), 1+rng.IntN(500))
		var changes []store.FileChange
		for _, p := range paths[:n] {
			changes = append(changes, del(p))
		}
		paths = paths[n:]
		if tree, err = b.Edit(e.ctx, tree, changes); err != nil {
			t.Fatal(err)
		}
	}
	if tree != store.EmptyTree {
		t.Fatalf("after deleting everything, root = %s, want the empty tree", tree.Short())
	}
	// And the big tree commits and verifies.
	c, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "main", Tree: want, Principal: alice, Message: "import"})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := e.s.Count(e.ctx, c.Tree); n != len(files) {
		t.Errorf("Count = %d, want %d", n, len(files))
	}
	e.verify()
}

func testResolve(t *testing.T, e *env) {
	c1 := e.commit("main", "one", put("a.md", "1"))
	c2 := e.commit("main", "two", put("a.md", "2"))
	c3 := e.commit("main", "three", put("a.md", "3"))
	if err := e.s.SetBranch(e.ctx, "side", cairn.Hash{}, c1.Hash, alice, "branch"); err != nil {
		t.Fatal(err)
	}
	s1 := e.commit("side", "side one", put("b.md", "b"))
	// A merge commit with two parents.
	b := e.s.NewBatch()
	m, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "main", Expected: c3.Hash, Parents: []cairn.Hash{c3.Hash, s1.Hash},
		Tree: e.tree(b, c3.Hash, put("b.md", "b")), Principal: alice, Message: "merge side"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.s.CreateTag(e.ctx, "v1", c2.Hash, alice, "release"); err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]cairn.Hash{
		"main": m.Hash, "main~": c3.Hash, "main~1": c3.Hash, "main~3": c1.Hash, "main^2": s1.Hash,
		"main^": c3.Hash, "main^2~1": c1.Hash, "main^0": m.Hash, "v1": c2.Hash, "v1~1": c1.Hash, "side": s1.Hash,
		c2.Hash.String(): c2.Hash, c2.Hash.String()[:20]: c2.Hash, strings.ToUpper(c2.Hash.String()[:20]): c2.Hash,
	} {
		got, err := e.s.Resolve(e.ctx, rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, got.Short(), err, want.Short())
		}
	}
	for rev, code := range map[string]string{
		"nope": cairn.ENOTFOUND, "main~9": cairn.ENOTFOUND, "main^3": cairn.ENOTFOUND, "": cairn.EINVALID,
		"~1": cairn.EINVALID, "abc": cairn.ENOTFOUND, "0000000000": cairn.ENOTFOUND, "main~x": cairn.EINVALID,
	} {
		if _, err := e.s.Resolve(e.ctx, rev); cairn.ErrorCode(err) != code {
			t.Errorf("Resolve(%q) error = %v, want code %s", rev, err, code)
		}
	}
}

func testLog(t *testing.T, e *env) {
	c1 := e.commit("main", "one", put("a.md", "1"), put("b.md", "1"))
	c2 := e.commit("main", "two", put("b.md", "2"))
	c3 := e.commit("main", "three", put("a.md", "3"))
	var got []string
	for c, err := range e.s.Log(e.ctx, c3.Hash, store.LogOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Message)
	}
	if diff := cmp.Diff([]string{"three", "two", "one"}, got); diff != "" {
		t.Errorf("Log mismatch (-want +got):\n%s", diff)
	}
	got = nil
	for c, err := range e.s.Log(e.ctx, c3.Hash, store.LogOptions{Path: "a.md"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Message)
	}
	if diff := cmp.Diff([]string{"three", "one"}, got); diff != "" {
		t.Errorf("Log(path a.md) mismatch (-want +got):\n%s", diff)
	}
	got = nil
	for c, err := range e.s.Log(e.ctx, c3.Hash, store.LogOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Message)
	}
	if len(got) != 1 {
		t.Errorf("Log(limit 1) = %v", got)
	}
	_, _ = c1, c2
}

func testMergeBase(t *testing.T, e *env) {
	root := e.commit("main", "root", put("a.md", "a"))
	if err := e.s.SetBranch(e.ctx, "x", cairn.Hash{}, root.Hash, alice, ""); err != nil {
		t.Fatal(err)
	}
	m1 := e.commit("main", "m1", put("m.md", "1"))
	x1 := e.commit("x", "x1", put("x.md", "1"))
	m2 := e.commit("main", "m2", put("m.md", "2"))
	for _, tc := range []struct {
		a, b, want cairn.Hash
	}{
		{m2.Hash, x1.Hash, root.Hash},
		{x1.Hash, m2.Hash, root.Hash},
		{m2.Hash, m1.Hash, m1.Hash},
		{m1.Hash, m1.Hash, m1.Hash},
		{root.Hash, m2.Hash, root.Hash},
	} {
		got, err := e.s.MergeBase(e.ctx, tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("MergeBase(%s, %s) = %s, %v; want %s", tc.a.Short(), tc.b.Short(), got.Short(), err, tc.want.Short())
		}
	}
	if ok, err := e.s.IsAncestor(e.ctx, m1.Hash, m2.Hash); !ok || err != nil {
		t.Errorf("IsAncestor(m1, m2) = %v, %v; want true", ok, err)
	}
	if ok, err := e.s.IsAncestor(e.ctx, x1.Hash, m2.Hash); ok || err != nil {
		t.Errorf("IsAncestor(x1, m2) = %v, %v; want false", ok, err)
	}
	// Unrelated histories have no merge base.
	b := e.s.NewBatch()
	other, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "other", Tree: e.tree(b, cairn.Hash{}, put("o.md", "o")), Principal: alice, Message: "other root"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.s.MergeBase(e.ctx, other.Hash, m2.Hash); err != nil || !got.IsZero() {
		t.Errorf("MergeBase(unrelated) = %s, %v; want none", got.Short(), err)
	}
}

func testDiff(t *testing.T, e *env) {
	c1 := e.commit("main", "one", put("keep.md", "k"), put("mod.md", "m1"), put("gone.md", "g"), put("old/name.md", "moving content"), put("Case.md", "c"), put("empty.md", ""))
	c2 := e.commit("main", "two", put("mod.md", "m2"), del("gone.md"), del("old/name.md"), put("new/name.md", "moving content"),
		del("Case.md"), put("case.md", "c"), put("added.md", "a"), del("empty.md"), put("empty2.md", ""))
	got, err := e.s.DiffCommits(e.ctx, c1.Hash, c2.Hash, nil)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Kind, Path, From string }
	var rows []row
	for _, c := range got {
		r := row{Kind: string(c.Kind), Path: c.Path}
		if c.Kind == cairn.Renamed {
			r.From = c.Old.Path
		}
		rows = append(rows, r)
	}
	want := []row{
		{"added", "added.md", ""},
		{"renamed", "case.md", "Case.md"},
		{"deleted", "empty.md", ""},
		{"added", "empty2.md", ""},
		{"deleted", "gone.md", ""},
		{"modified", "mod.md", ""},
		{"renamed", "new/name.md", "old/name.md"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Diff mismatch (-want +got):\n%s", diff)
	}
	noRen, _ := e.s.DiffCommits(e.ctx, c1.Hash, c2.Hash, &store.DiffOptions{NoRenames: true})
	if len(noRen) != 8 {
		t.Errorf("Diff(NoRenames) = %d changes, want 8: %+v", len(noRen), noRen)
	}
	if d, err := e.s.DiffCommits(e.ctx, c2.Hash, c2.Hash, nil); err != nil || len(d) != 0 {
		t.Errorf("Diff(same) = %v, %v", d, err)
	}
	// From no commit at all: everything is added.
	if d, err := e.s.DiffCommits(e.ctx, cairn.Hash{}, c1.Hash, nil); err != nil || len(d) != 6 {
		t.Errorf("Diff(none, c1) = %d changes, %v; want 6", len(d), err)
	}
}

// mergeInto merges branch from into branch into and commits the result.
func (e *env) merge(into, from string) (*cairn.Commit, store.MergeResult) {
	e.t.Helper()
	ours, _ := e.s.Head(e.ctx, into)
	theirs, _ := e.s.Head(e.ctx, from)
	base, err := e.s.MergeBase(e.ctx, ours, theirs)
	if err != nil {
		e.t.Fatal(err)
	}
	bt, _ := e.s.ReadCommit(e.ctx, base)
	ot, _ := e.s.ReadCommit(e.ctx, ours)
	tt, _ := e.s.ReadCommit(e.ctx, theirs)
	b := e.s.NewBatch()
	res, err := b.MergeTrees(e.ctx, bt.Tree, ot.Tree, tt.Tree, nil)
	if err != nil {
		e.t.Fatalf("MergeTrees: %v", err)
	}
	if len(res.Conflicts) > 0 {
		return nil, res
	}
	c, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: into, Expected: ours, Parents: []cairn.Hash{ours, theirs},
		Tree: res.Tree, Principal: alice, Message: "merge " + from})
	if err != nil {
		e.t.Fatalf("commit merge: %v", err)
	}
	return c, res
}

func testMerge(t *testing.T, e *env) {
	base := e.commit("main", "base",
		put("index.md", "---\ntitle: Home\ntype: index\n---\n# Home\n\n## Entities\n- [[alpha]]\n"),
		put("page.md", "---\ntitle: Page\n---\nline 1\nline 2\nline 3\nline 4\nline 5\n"),
		put("log.md", "# Log\n\n## [2026-11-01] ingest | a.md\nfirst\n"),
		put("moved.md", "content that moves\n"),
		put("shared.md", "s"))
	if err := e.s.SetBranch(e.ctx, "agent", cairn.Hash{}, base.Hash, alice, ""); err != nil {
		t.Fatal(err)
	}
	e.commit("main", "main side",
		put("index.md", "---\ntitle: Home\ntype: index\n---\n# Home\n\n## Entities\n- [[alpha]]\n- [[beta]]\n"),
		put("page.md", "---\ntitle: Page\ntags: [x]\n---\nline 1 changed on main\nline 2\nline 3\nline 4\nline 5\n"),
		put("log.md", "# Log\n\n## [2026-11-01] ingest | a.md\nfirst\n\n## [2026-11-02] ingest | b.md\nsecond\n"),
		put("moved.md", "content that moves\nand an edit on main\n"),
		put("main-only.md", "m"))
	e.commit("agent", "agent side",
		put("index.md", "---\ntitle: Home\ntype: index\n---\n# Home\n\n## Entities\n- [[alpha]]\n- [[gamma]]\n"),
		put("page.md", "---\ntitle: A Page\n---\nline 1\nline 2\nline 3\nline 4\nline 5 changed by agent\n"),
		put("log.md", "# Log\n\n## [2026-11-01] ingest | a.md\nfirst\n\n## [2026-11-03] ingest | c.md\nthird\n"),
		del("moved.md"), put("archive/moved.md", "content that moves\n"),
		put("agent-only.md", "g"))
	c, res := e.merge("main", "agent")
	if len(res.Conflicts) > 0 {
		t.Fatalf("merge conflicts: %+v", res.Conflicts)
	}
	got := e.files(c.Tree)
	want := map[string]string{
		"index.md":         "---\ntitle: Home\ntype: index\n---\n# Home\n\n## Entities\n- [[alpha]]\n- [[beta]]\n- [[gamma]]\n",
		"page.md":          "---\ntitle: A Page\ntags: [x]\n---\nline 1 changed on main\nline 2\nline 3\nline 4\nline 5 changed by agent\n",
		"log.md":           "# Log\n\n## [2026-11-01] ingest | a.md\nfirst\n\n## [2026-11-02] ingest | b.md\nsecond\n\n## [2026-11-03] ingest | c.md\nthird\n",
		"archive/moved.md": "content that moves\nand an edit on main\n",
		"shared.md":        "s",
		"main-only.md":     "m",
		"agent-only.md":    "g",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged files mismatch (-want +got):\n%s", diff)
	}
	e.verify()
}

func testMergeConflicts(t *testing.T, e *env) {
	base := e.commit("main", "base", put("page.md", "---\ntitle: Page\n---\nbody\n"), put("other.md", "o\n"), put("bin.png", "\x89PNG\x00\x01"))
	if err := e.s.SetBranch(e.ctx, "theirs", cairn.Hash{}, base.Hash, alice, ""); err != nil {
		t.Fatal(err)
	}
	ours := e.commit("main", "ours", put("page.md", "---\ntitle: Ours\n---\nbody changed by us\n"), del("other.md"), put("bin.png", "\x89PNG\x00\x02"), put("new.md", "ours\n"))
	e.commit("theirs", "theirs", put("page.md", "---\ntitle: Theirs\n---\nbody changed by them\n"), put("other.md", "o2\n"), put("bin.png", "\x89PNG\x00\x03"), put("NEW.md", "theirs\n"))
	c, res := e.merge("main", "theirs")
	if c != nil {
		t.Fatalf("conflicting merge was committed: %s", c.Hash.Short())
	}
	if !res.Tree.IsZero() {
		t.Errorf("conflicting merge returned tree %s", res.Tree.Short())
	}
	kinds := map[string][]string{}
	for _, cf := range res.Conflicts {
		kinds[cf.Path] = append(kinds[cf.Path], string(cf.Kind)+":"+cf.Field)
	}
	want := map[string][]string{
		"page.md":  {"content:", "field:title"},
		"other.md": {"modify-delete:"},
		"bin.png":  {"binary:"},
		"new.md":   {"case:"},
	}
	for p := range kinds {
		slices.Sort(kinds[p])
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("conflicts mismatch (-want +got):\n%s\nconflicts: %+v", diff, res.Conflicts)
	}
	for _, cf := range res.Conflicts {
		if cf.Kind == cairn.ConflictField && (cf.Ours != "Ours" || cf.Theirs != "Theirs" || cf.Base != "Page") {
			t.Errorf("field conflict = %+v, want base/ours/theirs Page/Ours/Theirs", cf)
		}
		if cf.Kind == cairn.ConflictContent && (cf.Lines == nil || !strings.Contains(cf.Ours, "by us") || !strings.Contains(cf.Theirs, "by them")) {
			t.Errorf("content conflict = %+v, want line ranges and both sides' text", cf)
		}
	}
	if head, _ := e.s.Head(e.ctx, "main"); head != ours.Hash {
		t.Errorf("main moved after a refused merge")
	}
	// With markers, a tree comes back with the conflicts written into it.
	bt, _ := e.s.ReadCommit(e.ctx, base.Hash)
	ot, _ := e.s.ReadCommit(e.ctx, ours.Hash)
	th, _ := e.s.Head(e.ctx, "theirs")
	tt, _ := e.s.ReadCommit(e.ctx, th)
	b := e.s.NewBatch()
	res, err := b.MergeTrees(e.ctx, bt.Tree, ot.Tree, tt.Tree, &store.MergeOptions{Markers: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) == 0 {
		t.Fatalf("merge with markers returned no conflicts")
	}
	ent, err := b.Get(e.ctx, res.Tree, "page.md")
	if err != nil {
		t.Fatalf("merge with markers: %v", err)
	}
	data, _ := b.ReadBlob(e.ctx, ent.Blob)
	if !strings.Contains(string(data), "<<<<<<<") {
		t.Errorf("merge with markers: page.md = %q, want conflict markers", data)
	}
}

func testStoreTags(t *testing.T, e *env) {
	c1 := e.commit("main", "one", put("a.md", "1"))
	if err := e.s.CreateTag(e.ctx, "v1", c1.Hash, alice, "first release"); err != nil {
		t.Fatal(err)
	}
	c2 := e.commit("main", "two", put("a.md", "2"))
	if err := e.s.CreateTag(e.ctx, "v1", c2.Hash, alice, "again"); cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Errorf("CreateTag(existing) error = %v, want code %s", err, cairn.ECONFLICT)
	}
	if err := e.s.CreateTag(e.ctx, "main", c2.Hash, alice, ""); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("CreateTag(branch name) error = %v, want code %s", err, cairn.EINVALID)
	}
	if err := e.s.SetBranch(e.ctx, "v1", cairn.Hash{}, c2.Hash, alice, ""); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("SetBranch(tag name) error = %v, want code %s", err, cairn.EINVALID)
	}
	tags, err := e.s.Tags(e.ctx)
	if err != nil || len(tags) != 1 || tags[0].Name != "v1" || tags[0].Hash != c1.Hash {
		t.Errorf("Tags() = %+v, %v", tags, err)
	}
	if got, _ := e.read("v1", "a.md"); got != "1" {
		t.Errorf("read at tag = %q, want 1", got)
	}
}

func testGC(t *testing.T, e *env) {
	base := e.commit("main", "base", put("keep.md", "kept forever"))
	if err := e.s.SetBranch(e.ctx, "scratch", cairn.Hash{}, base.Hash, alice, ""); err != nil {
		t.Fatal(err)
	}
	junk := e.commit("scratch", "junk", put("junk.md", "only on scratch"), put("keep.md", "old version on scratch"))
	e.commit("main", "more", put("main.md", "main content"))
	// Unreachable objects still under their grace period stay.
	if err := e.s.SetBranch(e.ctx, "scratch", junk.Hash, cairn.Hash{}, alice, "drop"); err != nil {
		t.Fatal(err)
	}
	st, err := e.s.GC(e.ctx, nil)
	if err != nil || st.Deleted != 0 {
		t.Fatalf("GC within grace = %+v, %v; want nothing deleted", st, err)
	}
	st, err = e.s.GC(e.ctx, &store.GCOptions{Grace: -1, DryRun: true})
	if err != nil || st.Deleted == 0 {
		t.Fatalf("GC dry run = %+v, %v; want something to delete", st, err)
	}
	if _, err := e.s.ReadCommit(e.ctx, junk.Hash); err != nil {
		t.Fatalf("dry run deleted: %v", err)
	}
	// Pinned objects stay.
	err = e.s.Update(e.ctx, func(tx *store.Tx) error { return tx.Pin(e.ctx, junk.Hash, "test", time.Time{}) })
	if err != nil {
		t.Fatal(err)
	}
	if st, err := e.s.GC(e.ctx, &store.GCOptions{Grace: -1}); err != nil || st.Deleted != 0 {
		t.Fatalf("GC with a pin = %+v, %v; want nothing deleted", st, err)
	}
	err = e.s.Update(e.ctx, func(tx *store.Tx) error { return tx.Unpin(e.ctx, junk.Hash, "test") })
	if err != nil {
		t.Fatal(err)
	}
	st, err = e.s.GC(e.ctx, &store.GCOptions{Grace: -1})
	if err != nil {
		t.Fatal(err)
	}
	// junk commit, its tree root, and one blob (the scratch version of keep.md; junk.md).
	if st.Deleted < 3 {
		t.Errorf("GC deleted %d objects, want at least 3", st.Deleted)
	}
	if _, err := e.s.Backend().GetObject(e.ctx, junk.Hash); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("unreachable commit survived GC: %v", err)
	}
	if got, err := e.read("main", "keep.md"); err != nil || got != "kept forever" {
		t.Errorf("after GC read(main, keep.md) = %q, %v", got, err)
	}
	if got, err := e.read("main~1", "keep.md"); err != nil || got != "kept forever" {
		t.Errorf("after GC history lost: %q, %v", got, err)
	}
	e.verify()
}

func testPurge(t *testing.T, e *env) {
	c1 := e.commit("main", "leak", put("notes/config.md", "API_KEY=sk-live-1"), put("other.md", "fine"))
	e.commit("main", "fix", put("notes/config.md", "API_KEY=<redacted>"))
	h, err := e.s.PurgePath(e.ctx, "main~1", "notes/config.md", alice, "leaked key")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.read(c1.Hash.String(), "notes/config.md")
	if !errors.Is(err, cairn.ErrPurged) {
		t.Fatalf("read purged content: error = %v, want ErrPurged", err)
	}
	// The hash stays in the tree and history is intact.
	ent, err := e.s.Get(e.ctx, c1.Tree, "notes/config.md")
	if err != nil || ent.Blob != h {
		t.Errorf("tree entry after purge = %+v, %v; want blob %s", ent, err, h.Short())
	}
	if got, _ := e.read("main", "notes/config.md"); got != "API_KEY=<redacted>" {
		t.Errorf("current content = %q", got)
	}
	if err := e.s.Purge(e.ctx, c1.Hash, alice, "x"); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("Purge(commit) error = %v, want code %s", err, cairn.EINVALID)
	}
	if err := e.s.Purge(e.ctx, h, alice, ""); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("Purge without a reason: error = %v, want code %s", err, cairn.EINVALID)
	}
	rep, err := e.s.Verify(e.ctx)
	if err != nil || !rep.OK() || rep.Purged != 1 {
		t.Errorf("Verify after purge = %+v, %v; want OK with one purged", rep, err)
	}
	if st, err := e.s.GC(e.ctx, &store.GCOptions{Grace: -1}); err != nil || st.Deleted != 0 {
		t.Errorf("GC after purge = %+v, %v; want nothing deleted", st, err)
	}
}

func testHooks(t *testing.T, e *env) {
	var seen []string
	boom := errors.New("index unavailable")
	fail := false
	e.s.AddHook(func(ctx context.Context, tx *store.Tx, u cairn.RefUpdate) error {
		if fail {
			return boom
		}
		seen = append(seen, u.Name)
		return nil
	})
	c := e.commit("main", "one", put("a.md", "1"))
	fail = true
	b := e.s.NewBatch()
	_, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "main", Expected: c.Hash, Tree: e.tree(b, c.Hash, put("a.md", "2")), Principal: alice, Message: "two"})
	if !errors.Is(err, boom) {
		t.Fatalf("commit with a failing hook: error = %v, want %v", err, boom)
	}
	if head, _ := e.s.Head(e.ctx, "main"); head != c.Hash {
		t.Errorf("main moved although a hook failed")
	}
	if diff := cmp.Diff([]string{"heads/main"}, seen); diff != "" {
		t.Errorf("hook saw (-want +got):\n%s", diff)
	}
}
