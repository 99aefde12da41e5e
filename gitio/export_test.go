package gitio_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/gitio"
	"cairn/store"
)

// stripTrailers removes what ExportGit appends to a message.
func stripTrailers(msg string) string {
	if i := strings.LastIndex(msg, "\n\n"+gitio.TrailerCommit+": "); i >= 0 {
		return msg[:i]
	}
	return msg
}

// exportTo exports branch main of s into a new folder and returns it as a
// gitRepo.
func exportTo(t *testing.T, s *store.Store, opts *gitio.ExportOptions) *gitRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := gitio.ExportGit(t.Context(), s, dir, opts); err != nil {
		t.Fatalf("ExportGit: %v", err)
	}
	return &gitRepo{t: t, dir: dir}
}

// workTree returns the files on disk under dir, .git aside.
func workTree(t *testing.T, dir string) map[string]gitFile {
	t.Helper()
	files := map[string]gitFile{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.Name() == ".git" {
				return filepath.SkipDir
			}
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		f := gitFile{Data: string(data)}
		if fi.Mode()&0o100 != 0 {
			f.Mode = cairn.ModeExecutable
		}
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// richVault builds a linear history that exercises what export must get
// right: additions, edits, deletions, renames, a change of case, a file
// that becomes a folder, modes, odd names and content.
func richVault(t *testing.T, s *store.Store) []*cairn.Commit {
	t.Helper()
	var cs []*cairn.Commit
	add := func(changes []store.FileChange, msg string) {
		cs = append(cs, vaultEdit(t, s, "main", changes, msg, nil))
	}
	put := func(p, data string) store.FileChange { return store.FileChange{Path: p, Data: []byte(data)} }
	del := func(p string) store.FileChange { return store.FileChange{Path: p, Delete: true} }
	add([]store.FileChange{
		put("index.md", "# Index\n\n[[notes/a]]\n"),
		put("notes/a.md", "alpha\n"),
		put("notes/b.md", "beta\n"),
		put("with space.md", "spaces\n"),
		put(`"quoted".md`, "starts with a quote\n"),
		put("café/日本.md", "unicode\n"),
		put("empty.md", ""),
		put("bin.dat", "\x00\x01\xff\xfe\x00"),
		{Path: "run.sh", Data: []byte("#!/bin/sh\necho hi\n"), Mode: cairn.ModeExecutable},
	}, "Start the vault")
	add([]store.FileChange{put("notes/a.md", "alpha, edited\n"), del("notes/b.md")}, "Edit a, drop b\n\nWith a body.")
	add([]store.FileChange{del("notes/a.md"), put("archive/a.md", "alpha, edited\n")}, "Move a")
	add([]store.FileChange{del("index.md"), put("Index.md", "# Index\n")}, "Change case")
	add([]store.FileChange{del("empty.md"), put("empty.md/inside.md", "a folder now\n")}, "File becomes a folder")
	add([]store.FileChange{{Path: "run.sh", Data: []byte("#!/bin/sh\necho hi\n"), Mode: cairn.ModeFile}}, "Not executable any more")
	add(nil, "An empty commit")
	return cs
}

func TestExportGit_RoundTrip(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	want := richVault(t, s)
	var progress int
	r := exportTo(t, s, &gitio.ExportOptions{Progress: func(done, total int) { progress = done }})
	if progress != len(want) {
		t.Errorf("progress reached %d, want %d", progress, len(want))
	}

	// The working tree is the head, and git sees nothing to commit.
	if diff := cmp.Diff(vaultFiles(t, s, want[len(want)-1].Tree), workTree(t, r.dir)); diff != "" {
		t.Errorf("working tree (-vault +disk):\n%s", diff)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("git status --porcelain = %q, want clean", st)
	}
	if got := r.git("symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("HEAD = %s, want refs/heads/main", got)
	}
	// Each git commit says where it came from.
	ids := r.firstParents()
	for i, id := range ids {
		c := want[i]
		msg := r.git("log", "-1", "--format=%B", id)
		wantMsg := c.Message + "\n\nCairn-Commit: " + c.Hash.String() + "\nCairn-Principal: user:ada\nCairn-Meta-job: " + c.Meta["job"]
		if msg != wantMsg {
			t.Errorf("commit %d message %q, want %q", i, msg, wantMsg)
		}
		if got := r.git("log", "-1", "--format=%an <%ae> %at %cn <%ce> %ct", id); got != "ada <ada@cairn.invalid> "+unix(c)+" ada <ada@cairn.invalid> "+unix(c) {
			t.Errorf("commit %d identity %q", i, got)
		}
	}

	// Importing the export gives the same trees and messages.
	s2, res := importAll(t, r, nil)
	got := history(t, s2, "main")
	if len(got) != len(want) || res.Commits != len(want) || len(res.Skipped) != 0 {
		t.Fatalf("re-imported %d commits (%+v), want %d", len(got), res, len(want))
	}
	for i := range want {
		if got[i].Tree != want[i].Tree {
			t.Errorf("commit %d (%q): tree %s, want %s", i, want[i].Message, got[i].Tree.Short(), want[i].Tree.Short())
		}
		if m := stripTrailers(got[i].Message); m != want[i].Message {
			t.Errorf("commit %d: message %q, want %q", i, m, want[i].Message)
		}
		if !got[i].Time.Equal(want[i].Time) {
			t.Errorf("commit %d: time %v, want %v", i, got[i].Time, want[i].Time)
		}
	}
}

func unix(c *cairn.Commit) string { return strconv.FormatInt(c.Time.Unix(), 10) }

// A merge keeps all its parents, including a second root.
func TestExportGit_Merge(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	c1 := vaultCommit(t, s, "main", map[string]string{"a.md": "a\n"}, "Start")
	side := vaultCommit(t, s, "side", map[string]string{"side.md": "from an unrelated root\n"}, "Side root")
	side2 := vaultCommit(t, s, "side", map[string]string{"side.md": "edited on the side\n"}, "Side edit")
	c2 := vaultCommit(t, s, "main", map[string]string{"b.md": "b\n"}, "Main work")
	m := vaultEdit(t, s, "main", []store.FileChange{{Path: "side.md", Data: []byte("edited on the side\n")}}, "Merge side", []cairn.Hash{side2.Hash})

	r := exportTo(t, s, nil)
	if got := r.git("rev-list", "--count", "HEAD"); got != "5" {
		t.Errorf("git has %s commits, want 5", got)
	}
	trailer := func(rev string) string {
		return r.git("log", "-1", "--format=%(trailers:key=Cairn-Commit,valueonly)", rev)
	}
	for rev, want := range map[string]*cairn.Commit{"HEAD": m, "HEAD^1": c2, "HEAD^2": side2, "HEAD^2^": side, "HEAD^1^": c1} {
		if got := trailer(rev); got != want.Hash.String() {
			t.Errorf("%s is %s, want cairn commit %s (%q)", rev, got, want.Hash, want.Message)
		}
	}
	if got := r.git("rev-list", "--max-parents=0", "HEAD"); len(strings.Fields(got)) != 2 {
		t.Errorf("root commits %q, want two", got)
	}
	if diff := cmp.Diff(vaultFiles(t, s, m.Tree), workTree(t, r.dir)); diff != "" {
		t.Errorf("working tree (-vault +disk):\n%s", diff)
	}
	// First-parent import gives back main's line.
	s2, _ := importAll(t, r, nil)
	got := history(t, s2, "main")
	want := []*cairn.Commit{c1, c2, m}
	if len(got) != len(want) {
		t.Fatalf("re-imported %d commits, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Tree != want[i].Tree {
			t.Errorf("commit %d: tree %s, want %s", i, got[i].Tree.Short(), want[i].Tree.Short())
		}
	}
}

func TestExportGit_Errors(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	vaultCommit(t, s, "main", map[string]string{"a.md": "a\n"}, "Start")

	t.Run("NotEmpty", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := gitio.ExportGit(t.Context(), s, dir, nil)
		wantCode(t, err, cairn.EINVALID)
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != "mine.txt" {
			t.Errorf("folder holds %v after a refused export, want only mine.txt", entries)
		}
	})
	t.Run("File", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := gitio.ExportGit(t.Context(), s, file, nil)
		wantCode(t, err, cairn.EINVALID)
	})
	t.Run("EmptyDir", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := gitio.ExportGit(t.Context(), s, dir, nil); err != nil {
			t.Fatalf("ExportGit into an empty folder: %v", err)
		}
	})
	t.Run("NoBranch", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x")
		_, err := gitio.ExportGit(t.Context(), s, dir, &gitio.ExportOptions{Branch: "nope"})
		wantCode(t, err, cairn.ENOTFOUND)
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want not exist", dir, err)
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		vaultCommit(t, s, "long", map[string]string{"a.md": "1"}, "One")
		vaultCommit(t, s, "long", map[string]string{"a.md": "2"}, "Two")
		dir := filepath.Join(t.TempDir(), "x")
		ctx, cancel := context.WithCancel(t.Context())
		_, err := gitio.ExportGit(ctx, s, dir, &gitio.ExportOptions{Branch: "long", Progress: func(int, int) { cancel() }})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ExportGit error = %v, want context.Canceled", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want not exist after a canceled export", dir, err)
		}
	})
	t.Run("BadAuthor", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x")
		_, err := gitio.ExportGit(t.Context(), s, dir, &gitio.ExportOptions{Author: func(cairn.Principal) (string, string) {
			return "Eve <evil>", "eve@example.com"
		}})
		wantCode(t, err, cairn.EINVALID)
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want not exist after a failed export", dir, err)
		}
	})
}

// Content purged from the store is exported as a placeholder that says
// when, by whom and why, and the result lists each file that got one.
func TestExportGit_Purged(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	c1 := vaultCommit(t, s, "main", map[string]string{"secret.md": "password: hunter2\n", "ok.md": "fine\n"}, "Oops")
	c2 := vaultCommit(t, s, "main", map[string]string{"secret.md": "password: (removed)\n"}, "Remove the secret")
	c3 := vaultCommit(t, s, "main", map[string]string{"copy.md": "password: hunter2\n"}, "Oops again")
	h, err := s.PurgePath(t.Context(), "main~2", "secret.md", cairn.User("ada"), "leaked secret")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "export")
	res, err := gitio.ExportGit(t.Context(), s, dir, nil)
	if err != nil {
		t.Fatalf("ExportGit: %v", err)
	}
	want := []gitio.Placeholder{{Commit: c1.Hash, Path: "secret.md", Blob: h}, {Commit: c3.Hash, Path: "copy.md", Blob: h}}
	if diff := cmp.Diff(want, res.Placeholders); diff != "" {
		t.Errorf("placeholders (-want +got):\n%s", diff)
	}
	if res.Head != c3.Hash || res.Commits != 3 {
		t.Errorf("result head %s, %d commits; want %s, 3", res.Head.Short(), res.Commits, c3.Hash.Short())
	}
	r := &gitRepo{t: t, dir: dir}
	old := r.git("show", "HEAD~2:secret.md")
	for _, want := range []string{"purged", "user:ada", "leaked secret", h.String()} {
		if !strings.Contains(old, want) {
			t.Errorf("purged file exported as %q, want a placeholder that says %q", old, want)
		}
	}
	if strings.Contains(old, "hunter2") || strings.Count(old, "\n") > 0 {
		t.Errorf("purged file exported as %q, want a one-line placeholder", old)
	}
	if got := r.git("show", "HEAD:copy.md"); got != old {
		t.Errorf("copy.md = %q, want the same placeholder %q", got, old)
	}
	if got := r.git("show", "HEAD~1:secret.md"); got != "password: (removed)" {
		t.Errorf("secret.md after the fix = %q", got)
	}
	wantFiles := vaultFiles(t, s, c2.Tree)
	wantFiles["copy.md"] = gitFile{Data: old + "\n"}
	if diff := cmp.Diff(wantFiles, workTree(t, dir)); diff != "" {
		t.Errorf("working tree (-want +disk):\n%s", diff)
	}
}

func TestExportFiles(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	c1 := vaultEdit(t, s, "main", []store.FileChange{
		{Path: "index.md", Data: []byte("# Home\n")},
		{Path: "notes/deep/a.md", Data: []byte("a\n")},
		{Path: "secret.md", Data: []byte("password: hunter2\n")},
		{Path: "run.sh", Data: []byte("#!/bin/sh\n"), Mode: cairn.ModeExecutable},
		{Path: "empty.md", Data: nil},
	}, "Start", nil)

	t.Run("OK", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		res, err := gitio.ExportFiles(t.Context(), s, c1.Hash, dir)
		if err != nil {
			t.Fatalf("ExportFiles: %v", err)
		}
		if diff := cmp.Diff(vaultFiles(t, s, c1.Tree), workTree(t, dir)); diff != "" {
			t.Errorf("folder (-vault +disk):\n%s", diff)
		}
		if res.Files != 5 || res.Head != c1.Hash || len(res.Placeholders) != 0 {
			t.Errorf("result %+v, want 5 files of %s and no placeholders", res, c1.Hash.Short())
		}
	})
	t.Run("NotEmpty", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := gitio.ExportFiles(t.Context(), s, c1.Hash, dir)
		wantCode(t, err, cairn.EINVALID)
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("folder holds %v after a refused export, want only mine.txt", entries)
		}
	})
	t.Run("Purged", func(t *testing.T) {
		s := newStore(t)
		c := vaultCommit(t, s, "main", map[string]string{"secret.md": "password: hunter2\n", "ok.md": "fine\n"}, "Oops")
		h, err := s.PurgePath(t.Context(), "main", "secret.md", cairn.User("ada"), "leaked\nsecret")
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "out")
		res, err := gitio.ExportFiles(t.Context(), s, c.Hash, dir)
		if err != nil {
			t.Fatalf("ExportFiles: %v", err)
		}
		if diff := cmp.Diff([]gitio.Placeholder{{Commit: c.Hash, Path: "secret.md", Blob: h}}, res.Placeholders); diff != "" {
			t.Errorf("placeholders (-want +got):\n%s", diff)
		}
		data, err := os.ReadFile(filepath.Join(dir, "secret.md"))
		if err != nil {
			t.Fatal(err)
		}
		got := string(data)
		if strings.Contains(got, "hunter2") || !strings.Contains(got, "purged") || !strings.Contains(got, "leaked secret") || strings.Count(got, "\n") != 1 {
			t.Errorf("secret.md = %q, want a one-line placeholder naming the reason", got)
		}
		if ok, _ := os.ReadFile(filepath.Join(dir, "ok.md")); string(ok) != "fine\n" {
			t.Errorf("ok.md = %q", ok)
		}
	})
	t.Run("NoCommit", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		_, err := gitio.ExportFiles(t.Context(), s, cairn.Hash{1}, dir)
		wantCode(t, err, cairn.ENOTFOUND)
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want not exist", dir, err)
		}
	})
}

func TestDefaultAuthor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p           cairn.Principal
		name, email string
	}{
		{cairn.User("ada"), "ada", "ada@cairn.invalid"},
		{cairn.User("ada@example.com"), "ada@example.com", "ada@example.com"},
		{cairn.Agent("extractive"), "agent extractive", "agent.extractive@cairn.invalid"},
		{cairn.Job("42"), "job 42", "job.42@cairn.invalid"},
		{cairn.PrincipalSystem, "cairn", "system@cairn.invalid"},
	} {
		name, email := gitio.DefaultAuthor(tc.p)
		if name != tc.name || email != tc.email {
			t.Errorf("DefaultAuthor(%q) = %q, %q; want %q, %q", tc.p, name, email, tc.name, tc.email)
		}
	}
}

// Metadata with awkward keys and values stays one trailer per key.
func TestExportGit_Trailers(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	b := s.NewBatch()
	tree, err := b.Edit(t.Context(), store.EmptyTree, []store.FileChange{{Path: "a.md", Data: []byte("a")}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Commit(t.Context(), b, store.CommitRequest{
		Branch: "main", Tree: tree, Principal: cairn.Agent("extractive"), Message: "Extract\n\n",
		Meta: map[string]string{"git.commit": "abc", "odd key:x": "two\nlines", "100%": "full", "job": "7", "a=b": "c=d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := exportTo(t, s, nil)
	want := "Extract\n\nCairn-Commit: " + c.Hash.String() + "\nCairn-Principal: agent:extractive\n" +
		"Cairn-Meta: 100%25=full\nCairn-Meta: a%3Db=c=d\nCairn-Meta: git.commit=abc\nCairn-Meta-job: 7\nCairn-Meta: odd key:x=two\n lines"
	if got := r.git("log", "-1", "--format=%B"); got != want {
		t.Errorf("message:\n%s\nwant:\n%s", got, want)
	}
	// Git reads them as trailers.
	if got := r.git("log", "-1", "--format=%(trailers:key=Cairn-Commit,valueonly)"); got != c.Hash.String() {
		t.Errorf("git finds Cairn-Commit %q, want %s", got, c.Hash)
	}
	if got := r.git("log", "-1", "--format=%(trailers:key=Cairn-Meta,valueonly,separator=|)"); got != "100%25=full|a%3Db=c=d|git.commit=abc|odd key:x=two\n lines" {
		t.Errorf("git finds Cairn-Meta %q", got)
	}
	if got := r.git("log", "-1", "--format=%an <%ae>"); got != "agent extractive <agent.extractive@cairn.invalid>" {
		t.Errorf("author %q", got)
	}
}
