package gitio_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/text/unicode/norm"

	"cairn"
	"cairn/gitio"
	"cairn/store"
)

// importAll imports the repository's HEAD into branch main of a new store.
func importAll(t *testing.T, r *gitRepo, opts *gitio.ImportOptions) (*store.Store, *gitio.ImportResult) {
	t.Helper()
	s := newStore(t)
	res, err := gitio.ImportHistory(t.Context(), s, r.dir, opts)
	if err != nil {
		t.Fatalf("ImportHistory: %v", err)
	}
	return s, res
}

// checkMirror checks that the branch holds one commit per git commit of
// the first-parent history, with the same message, time and files (minus
// those in skip), and that res.Head is the branch head.
func checkMirror(t *testing.T, r *gitRepo, s *store.Store, branch string, res *gitio.ImportResult, skip func(commit, path string) bool) {
	t.Helper()
	ids := r.firstParents()
	cs := history(t, s, branch)
	if len(cs) != len(ids) || res.Commits != len(ids) {
		t.Fatalf("imported %d commits (result says %d), want %d", len(cs), res.Commits, len(ids))
	}
	if head := cs[len(cs)-1].Hash; res.Head != head {
		t.Errorf("Head = %s, want the branch head %s", res.Head.Short(), head.Short())
	}
	for i, c := range cs {
		id := ids[i]
		if got := c.Meta["git.commit"]; got != id {
			t.Errorf("commit %d: git.commit = %q, want %q", i, got, id)
		}
		if want := r.git("log", "-1", "--format=%B", id); c.Message != want {
			t.Errorf("commit %d: message %q, want %q", i, c.Message, want)
		}
		if want := r.git("log", "-1", "--format=%at", id); strconv.FormatInt(c.Time.Unix(), 10) != want {
			t.Errorf("commit %d: time %v, want unix %s", i, c.Time, want)
		}
		if i > 0 && (len(c.Parents) != 1 || c.Parents[0] != cs[i-1].Hash) {
			t.Errorf("commit %d: parents %v, want the commit before", i, c.Parents)
		}
		want := map[string]gitFile{}
		for p, f := range r.tree(id) {
			if skip == nil || !skip(id, p) {
				want[norm.NFC.String(p)] = f
			}
		}
		if diff := cmp.Diff(want, vaultFiles(t, s, c.Tree)); diff != "" {
			t.Errorf("commit %d (%s %q): files (-git +vault):\n%s", i, id[:8], c.Message, diff)
		}
	}
}

func TestImportHistory(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write(map[string]string{"a.md": "alpha\n", "notes/b.md": "beta\n", "notes/c.md": "gamma\n"})
	r.commit("Add notes")
	r.write(map[string]string{"a.md": "alpha, edited\n", "d.md": "delta\n"})
	r.commit("Edit a, add d\n\nWith a body.\n\nAnd another paragraph.")
	r.remove("notes/b.md")
	r.commit("Remove b")
	r.write(map[string]string{"archive/.keep": ""})
	r.git("mv", "notes/c.md", "archive/c.md")
	r.git("mv", "d.md", "D.md") // a change of case alone
	r.commit("Move c, rename d")
	r.commit("An empty commit")
	r.remove("archive")
	r.write(map[string]string{"archive": "a file where a folder was\n"})
	r.commit("Folder becomes a file")
	if err := os.Chmod(filepath.Join(r.dir, "a.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.commit("Make a.md executable")
	r.remove("D.md")
	if err := os.Symlink("a.md", filepath.Join(r.dir, "D.md")); err != nil {
		t.Fatal(err)
	}
	last := r.commit("Replace D.md by a link")

	before := snapshot(t, r.dir)
	var progress [][2]int
	s, res := importAll(t, r, &gitio.ImportOptions{Progress: func(done, total int) {
		progress = append(progress, [2]int{done, total})
	}})
	if diff := cmp.Diff(before, snapshot(t, r.dir)); diff != "" {
		t.Errorf("the import changed the repository (-before +after):\n%s", diff)
	}
	checkMirror(t, r, s, "main", res, nil)
	checkSkipped(t, res.Skipped, []gitio.Skipped{{Commit: last, Path: "D.md", Kind: gitio.SkipSymlink}})
	want := [][2]int{{1, 8}, {2, 8}, {3, 8}, {4, 8}, {5, 8}, {6, 8}, {7, 8}, {8, 8}}
	if diff := cmp.Diff(want, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	cs := history(t, s, "main")
	for _, c := range cs {
		if c.Principal != cairn.User("Ada.Lovelace") {
			t.Errorf("commit %q: principal %q, want user:Ada.Lovelace", c.Message, c.Principal)
		}
	}
	if got, want := cs[0].Time, epoch; !got.Equal(want) {
		t.Errorf("first commit time %v, want %v", got, want)
	}
	if got, want := cs[1].Message, "Edit a, add d\n\nWith a body.\n\nAnd another paragraph."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// snapshot returns the size, mode and time of every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files[path] = fmt.Sprint(fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestImportHistory_Merge(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write(map[string]string{"a.md": "a\n"})
	r.commit("Start")
	r.git("checkout", "--quiet", "-b", "side")
	r.write(map[string]string{"side1.md": "s1\n"})
	r.commit("Side one")
	r.write(map[string]string{"side2.md": "s2\n"})
	r.commit("Side two")
	r.git("checkout", "--quiet", "main")
	r.write(map[string]string{"main.md": "m\n"})
	r.commit("Main work")
	r.git("merge", "--quiet", "--no-ff", "-m", "Merge side", "side")
	if n := len(r.firstParents()); n != 3 {
		t.Fatalf("first-parent history has %d commits, want 3", n)
	}

	s, res := importAll(t, r, nil)
	checkMirror(t, r, s, "main", res, nil)
	cs := history(t, s, "main")
	last := vaultFiles(t, s, cs[2].Tree)
	if _, ok := last["side2.md"]; !ok || len(cs[2].Parents) != 1 {
		t.Errorf("merge commit: files %v, parents %d; want the side's files and one parent", last, len(cs[2].Parents))
	}
}

func TestImportHistory_Paths(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	binary := "\x00\x01\xff\xfe binary \x00"
	r.write(map[string]string{
		"with space.md":  "spaces\n",
		`quote"d.md`:     "quoted\n",
		"cafe\u0301.md":  "decomposed é\n", // as macOS writes it
		"日本/メモ.md":       "unicode\n",
		".cairn/evil":    "not for the vault\n",
		"A.md":           "upper\n",
		"a.md":           "lower\n",
		"empty.md":       "",
		"bin.dat":        binary,
		"run.sh":         "#!/bin/sh\necho hi\n",
		"bad\xff.md":     "not UTF-8\n",
		"big.md":         "0123456789abcdef, more than the limit of 32 bytes\n",
		"notes/keep.md":  "keep\n",
		"private/key.md": "left out by the caller\n",
	})
	if err := os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.md", filepath.Join(r.dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "--all")
	r.git("update-index", "--add", "--cacheinfo", "160000,1234567890123456789012345678901234567890,sub")
	c1 := r.commitIndex("Everything at once")

	// Changes to files that were left out must not disturb the import.
	r.write(map[string]string{"a.md": "lower, edited\n", "private/key.md": "edited\n"})
	r.remove(".cairn", "link.md", "bad\xff.md", "big.md")
	r.commit("Touch what was left out")

	// With A.md gone, a.md fits.
	r.remove("A.md")
	r.commit("Remove A.md")

	s, res := importAll(t, r, &gitio.ImportOptions{
		MaxFileSize: 32,
		Skip:        func(p string) bool { return filepath.Dir(p) == "private" },
	})
	checkMirror(t, r, s, "main", res, func(commit, path string) bool {
		switch path {
		case ".cairn/evil", "bad\xff.md", "big.md", "private/key.md":
			return true
		case "a.md":
			return commit != r.git("rev-parse", "HEAD")
		case "cafe\u0301.md", "日本/メモ.md", "with space.md", `quote"d.md`, "A.md", "empty.md", "bin.dat", "run.sh", "notes/keep.md":
			return false
		}
		t.Fatalf("unexpected path %q", path)
		return false
	})
	want := []gitio.Skipped{
		{Commit: c1, Path: ".cairn/evil", Kind: gitio.SkipInvalidPath},
		{Commit: c1, Path: "a.md", Kind: gitio.SkipCollision},
		{Commit: c1, Path: "bad\xff.md", Kind: gitio.SkipInvalidPath},
		{Commit: c1, Path: "big.md", Kind: gitio.SkipTooLarge},
		{Commit: c1, Path: "link.md", Kind: gitio.SkipSymlink},
		{Commit: c1, Path: "sub", Kind: gitio.SkipSubmodule},
	}
	checkSkipped(t, res.Skipped, want)
}

// A commit larger than a chunk is written as it goes and still lands whole.
func TestImportHistory_LargeCommit(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	var stream strings.Builder
	commit := func(msg string, files func(w *strings.Builder)) {
		when := epoch.Unix()
		fmt.Fprintf(&stream, "commit refs/heads/main\nauthor Ada <ada@example.com> %d +0000\ncommitter Ada <ada@example.com> %d +0000\ndata %d\n%s\n",
			when, when, len(msg), msg)
		files(&stream)
		stream.WriteString("\n")
	}
	commit("Many files", func(w *strings.Builder) {
		for i := range 5000 {
			body := fmt.Sprintf("note %d\n", i%4000) // some content twice
			fmt.Fprintf(w, "M 100644 inline n/%d/%d.md\ndata %d\n%s\n", i%10, i, len(body), body)
		}
	})
	commit("Edit and delete some", func(w *strings.Builder) {
		for i := 0; i < 5000; i += 50 {
			fmt.Fprintf(w, "D n/%d/%d.md\n", i%10, i)
			body := "edited\n"
			fmt.Fprintf(w, "M 100644 inline n/%d/%d.md\ndata %d\n%s\n", (i+1)%10, i+1, len(body), body)
		}
	})
	stream.WriteString("done\n")
	runGit(t, r.dir, gitEnv(epoch), stream.String(), "fast-import", "--quiet", "--done")

	s, res := importAll(t, r, nil)
	checkMirror(t, r, s, "main", res, nil)
}

// The vault holds NFC names: a name git has in NFD (as macOS wrote it)
// arrives composed.
func TestImportHistory_NFD(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write(map[string]string{"cafe\u0301/the\u0301.md": "x\n"})
	r.commit("Decomposed names")
	s, _ := importAll(t, r, nil)
	cs := history(t, s, "main")
	got := vaultFiles(t, s, cs[0].Tree)
	if _, ok := got["café/thé.md"]; !ok || len(got) != 1 {
		t.Errorf("files %v, want only the NFC name café/thé.md", got)
	}
}

func checkSkipped(t *testing.T, got, want []gitio.Skipped) {
	t.Helper()
	for _, s := range got {
		if s.Reason == "" {
			t.Errorf("skipped %q has no reason", s.Path)
		}
	}
	opts := cmp.Options{
		cmpopts.IgnoreFields(gitio.Skipped{}, "Reason"),
		cmpopts.SortSlices(func(a, b gitio.Skipped) bool { return a.Path < b.Path }),
	}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
}

// Files that collide with others in the vault are left out until what they
// collide with leaves.
func TestImportHistory_Collisions(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write(map[string]string{"Docs/a.md": "a\n", "docs/b.md": "b\n", "note": "a file\n", "Note/x.md": "x\n"})
	c1 := r.commit("Folders that differ in case")
	r.write(map[string]string{"caf\u00e9.md": "composed\n"})
	r.commit("Add the composed twin")
	r.write(map[string]string{"cafe\u0301.md": "decomposed\n"})
	c3 := r.commit("Add the decomposed twin")
	r.remove("Docs", "note")
	r.commit("Remove what blocked them")
	r.remove("caf\u00e9.md")
	r.commit("Remove the composed twin")
	r.write(map[string]string{"cafe\u0301.md": "decomposed, edited\n"})
	r.commit("Edit the decomposed twin")

	s, res := importAll(t, r, nil)
	ids := r.firstParents()
	checkMirror(t, r, s, "main", res, func(commit, path string) bool {
		switch path {
		case "docs/b.md", "note": // until Docs/a.md and note leave
			return index(ids, commit) < 3
		case "cafe\u0301.md": // until the composed twin leaves
			return index(ids, commit) < 4
		}
		return false
	})
	checkSkipped(t, res.Skipped, []gitio.Skipped{
		{Commit: c3, Path: "cafe\u0301.md", Kind: gitio.SkipCollision},
		{Commit: c1, Path: "docs/b.md", Kind: gitio.SkipCollision},
		{Commit: c1, Path: "note", Kind: gitio.SkipCollision},
	})
}

func index(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// A path with a .git segment can only come from a hand-made tree: git
// refuses to add one.
func TestImportHistory_DotGit(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	blob := strings.TrimSpace(runGit(t, r.dir, gitEnv(r.date()), "hello\n", "hash-object", "-w", "--stdin"))
	inner := mktree(r, "100644 blob "+blob+"\tx\n")
	dotgit := mktree(r, "040000 tree "+inner+"\t.git\n")
	root := mktree(r, "100644 blob "+blob+"\tok.md\n040000 tree "+dotgit+"\tsub\n")
	c := r.git("commit-tree", "-m", "Hand-made tree", root)
	r.git("update-ref", "refs/heads/main", c)

	s, res := importAll(t, r, nil)
	checkMirror(t, r, s, "main", res, func(_, path string) bool { return path == "sub/.git/x" })
	checkSkipped(t, res.Skipped, []gitio.Skipped{{Commit: c, Path: "sub/.git/x", Kind: gitio.SkipInvalidPath}})
}

func mktree(r *gitRepo, entries string) string {
	r.t.Helper()
	return runGit(r.t, r.dir, gitEnv(r.date()), entries, "mktree")[:40]
}

func TestImportHistory_Options(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write(map[string]string{"a.md": "one\n"})
	r.commit("One")
	r.git("tag", "v1")
	r.write(map[string]string{"a.md": "two\n"})
	r.commit("Two")
	r.write(map[string]string{"big.md": "small\n"})
	r.commit("Small file")
	r.write(map[string]string{"big.md": "now larger than the limit\n"})
	r.commit("The file grows")

	t.Run("Ref", func(t *testing.T) {
		s, res := importAll(t, r, &gitio.ImportOptions{Ref: "v1", Branch: "imported/v1"})
		cs := history(t, s, "imported/v1")
		if len(cs) != 1 || res.Commits != 1 || cs[0].Message != "One" {
			t.Errorf("imported %d commits (%+v), want only the first", len(cs), res)
		}
	})
	t.Run("Bare", func(t *testing.T) {
		bare := filepath.Join(t.TempDir(), "bare.git")
		r.git("clone", "--quiet", "--bare", r.dir, bare)
		s, res := importAll(t, &gitRepo{t: t, dir: bare}, nil)
		checkMirror(t, r, s, "main", res, nil)
	})
	t.Run("Subfolder", func(t *testing.T) {
		// A folder inside a repository is not a repository.
		sub := filepath.Join(r.dir, "sub")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := gitio.ImportHistory(t.Context(), newStore(t), sub, nil)
		wantCode(t, err, cairn.EINVALID)
	})
	t.Run("Principal", func(t *testing.T) {
		s, _ := importAll(t, r, &gitio.ImportOptions{Principal: func(name, email string) cairn.Principal {
			return cairn.Agent("git-" + email[:3])
		}})
		if p := history(t, s, "main")[0].Principal; p != cairn.Agent("git-ada") {
			t.Errorf("principal %q, want agent:git-ada", p)
		}
	})
	t.Run("ErrPrincipal", func(t *testing.T) {
		s := newStore(t)
		_, err := gitio.ImportHistory(t.Context(), s, r.dir, &gitio.ImportOptions{Principal: func(string, string) cairn.Principal {
			return "nobody"
		}})
		wantCode(t, err, cairn.EINVALID)
		wantNoBranch(t, s, "main")
	})
	t.Run("MaxFileSize", func(t *testing.T) {
		s, res := importAll(t, r, &gitio.ImportOptions{MaxFileSize: 10})
		ids := r.firstParents()
		checkMirror(t, r, s, "main", res, func(commit, path string) bool {
			return path == "big.md" && commit == ids[3]
		})
		checkSkipped(t, res.Skipped, []gitio.Skipped{{Commit: ids[3], Path: "big.md", Kind: gitio.SkipTooLarge}})
	})
}

func TestImportHistory_Errors(t *testing.T) {
	t.Parallel()
	withCommit := newGitRepo(t)
	withCommit.write(map[string]string{"a.md": "a\n"})
	withCommit.commit("One")

	for _, tc := range []struct {
		name string
		dir  string
		opts *gitio.ImportOptions
		code string
	}{
		{"NotARepo", t.TempDir(), nil, cairn.EINVALID},
		{"NoSuchDir", filepath.Join(t.TempDir(), "missing"), nil, cairn.ENOTFOUND},
		{"NoCommits", newGitRepo(t).dir, nil, cairn.ENOTFOUND},
		{"UnknownRef", withCommit.dir, &gitio.ImportOptions{Ref: "no-such-branch"}, cairn.ENOTFOUND},
		{"OptionRef", withCommit.dir, &gitio.ImportOptions{Ref: "--all"}, cairn.EINVALID},
		{"BadBranch", withCommit.dir, &gitio.ImportOptions{Branch: "a b"}, cairn.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			_, err := gitio.ImportHistory(t.Context(), s, tc.dir, tc.opts)
			wantCode(t, err, tc.code)
			if cairn.ErrorHint(err) == "" && tc.code != cairn.EINVALID {
				t.Errorf("error %v has no hint", err)
			}
			wantNoBranch(t, s, "main")
		})
	}
	t.Run("NotARepoHint", func(t *testing.T) {
		_, err := gitio.ImportHistory(t.Context(), newStore(t), t.TempDir(), nil)
		if cairn.ErrorHint(err) == "" {
			t.Errorf("error %v has no hint", err)
		}
	})
	t.Run("ErrBranchExists", func(t *testing.T) {
		s := newStore(t)
		vaultCommit(t, s, "main", map[string]string{"x.md": "x"}, "Existing")
		_, err := gitio.ImportHistory(t.Context(), s, withCommit.dir, nil)
		wantCode(t, err, cairn.ECONFLICT)
	})
	t.Run("Canceled", func(t *testing.T) {
		r := newGitRepo(t)
		for i := range 3 {
			r.write(map[string]string{"a.md": string(rune('a' + i))})
			r.commit("Commit")
		}
		s := newStore(t)
		ctx, cancel := context.WithCancel(t.Context())
		_, err := gitio.ImportHistory(ctx, s, r.dir, &gitio.ImportOptions{Progress: func(done, _ int) {
			if done == 1 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ImportHistory error = %v, want context.Canceled", err)
		}
		wantNoBranch(t, s, "main")
	})
}

func TestDefaultPrincipal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, email string
		want        cairn.Principal
	}{
		{"Ada Lovelace", "ada@example.com", "user:Ada.Lovelace"},
		{"ada", "", "user:ada"},
		{"José Núñez", "", "user:Jose.Nunez"},
		{"  O'Brien, Pat  ", "", "user:O.Brien.Pat"},
		{"李雷", "li.lei@example.com", "user:li.lei@example.com"},
		{"李雷", "", "user:git"},
		{"", "", "user:git"},
		{strings.Repeat("a", 200), "", cairn.Principal("user:" + strings.Repeat("a", 128))},
		{"\x00\x01", "", "user:git"},
	} {
		got := gitio.DefaultPrincipal(tc.name, tc.email)
		if got != tc.want {
			t.Errorf("DefaultPrincipal(%q, %q) = %q, want %q", tc.name, tc.email, got, tc.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("DefaultPrincipal(%q, %q) = %q: %v", tc.name, tc.email, got, err)
		}
	}
}
