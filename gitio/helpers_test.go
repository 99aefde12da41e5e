package gitio_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/sqlite"
	"cairn/store"
)

// epoch is the author time of a test repository's first commit; each later
// commit is an hour after the one before.
var epoch = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

// gitRepo is a scratch git repository in a test's temporary folder.
type gitRepo struct {
	t   testing.TB
	dir string
	n   int // commits made, for their dates
}

func newGitRepo(t testing.TB) *gitRepo {
	t.Helper()
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "--quiet", "--initial-branch=main")
	return r
}

// gitEnv makes git's behaviour independent of the machine: no system or
// global config, fixed identities and dates, nothing inherited from a hook.
func gitEnv(date time.Time) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	d := fmt.Sprintf("@%d +0000", date.Unix())
	return append(env,
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_AUTHOR_DATE="+d,
		"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_COMMITTER_DATE="+d,
	)
}

// runGit runs git in dir and returns its output, failing the test on error.
func runGit(t testing.TB, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// git runs a git command in the repository and returns its trimmed output.
func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	return strings.TrimSpace(runGit(r.t, r.dir, gitEnv(r.date()), "", args...))
}

func (r *gitRepo) date() time.Time { return epoch.Add(time.Duration(r.n) * time.Hour) }

// write writes files into the working tree: path → content.
func (r *gitRepo) write(files map[string]string) {
	r.t.Helper()
	for p, content := range files {
		full := filepath.Join(r.dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// remove deletes files from the working tree.
func (r *gitRepo) remove(paths ...string) {
	r.t.Helper()
	for _, p := range paths {
		if err := os.RemoveAll(filepath.Join(r.dir, p)); err != nil {
			r.t.Fatal(err)
		}
	}
}

// commit stages everything and commits it; it returns the commit hash.
func (r *gitRepo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "--all")
	return r.commitIndex(msg)
}

// commitIndex commits what is staged; it returns the commit hash.
func (r *gitRepo) commitIndex(msg string) string {
	r.t.Helper()
	r.git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", msg)
	r.n++
	return r.git("rev-parse", "HEAD")
}

// firstParents returns the first-parent history of HEAD, oldest first.
func (r *gitRepo) firstParents() []string {
	r.t.Helper()
	return strings.Fields(r.git("rev-list", "--first-parent", "--reverse", "HEAD"))
}

// gitFile is a file of a git tree as the vault should hold it.
type gitFile struct {
	Data string
	Mode cairn.Mode
}

// tree returns the regular files of a commit's tree, by path.
func (r *gitRepo) tree(commit string) map[string]gitFile {
	r.t.Helper()
	env := gitEnv(r.date())
	out := runGit(r.t, r.dir, env, "", "ls-tree", "-r", "-z", commit)
	var paths, ids []string
	var modes []cairn.Mode
	for rec := range strings.SplitSeq(strings.TrimSuffix(out, "\x00"), "\x00") {
		meta, path, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if len(f) != 3 || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		paths, ids = append(paths, path), append(ids, f[2])
		modes = append(modes, map[string]cairn.Mode{"100644": cairn.ModeFile, "100755": cairn.ModeExecutable}[f[0]])
	}
	// One cat-file reads every blob: "<id> blob <size>\n<content>\n".
	data := runGit(r.t, r.dir, env, strings.Join(ids, "\n")+"\n", "cat-file", "--batch")
	files := map[string]gitFile{}
	for i, p := range paths {
		header, rest, _ := strings.Cut(data, "\n")
		var id, kind string
		var size int
		if _, err := fmt.Sscanf(header, "%s %s %d", &id, &kind, &size); err != nil {
			r.t.Fatalf("cat-file header %q: %v", header, err)
		}
		files[p] = gitFile{Data: rest[:size], Mode: modes[i]}
		data = rest[size+1:]
	}
	return files
}

// newStore returns a store over a fresh SQLite database.
func newStore(t testing.TB) *store.Store {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := store.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// vaultFiles returns the files of a tree, by path.
func vaultFiles(t testing.TB, s *store.Store, tree cairn.Hash) map[string]gitFile {
	t.Helper()
	files := map[string]gitFile{}
	for e, err := range s.Files(t.Context(), tree, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, err := s.ReadBlob(t.Context(), e.Blob)
		if err != nil {
			t.Fatal(err)
		}
		files[e.Path] = gitFile{Data: string(data), Mode: e.Mode}
	}
	return files
}

// history returns the first-parent history of a branch, oldest first.
func history(t testing.TB, s *store.Store, branch string) []*cairn.Commit {
	t.Helper()
	head, err := s.Head(t.Context(), branch)
	if err != nil {
		t.Fatal(err)
	}
	var cs []*cairn.Commit
	for c, err := range s.Log(t.Context(), head, store.LogOptions{FirstParent: true}) {
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	slices.Reverse(cs)
	return cs
}

// vaultCommit applies changes to a branch: path → content, or "" to delete.
// It returns the new commit.
func vaultCommit(t testing.TB, s *store.Store, branch string, files map[string]string, msg string) *cairn.Commit {
	t.Helper()
	var changes []store.FileChange
	for p, data := range files {
		if data == "" {
			changes = append(changes, store.FileChange{Path: p, Delete: true})
		} else {
			changes = append(changes, store.FileChange{Path: p, Data: []byte(data)})
		}
	}
	return vaultEdit(t, s, branch, changes, msg, nil)
}

// vaultEdit applies changes to a branch, which may not exist yet, with
// extra parents after its head.
func vaultEdit(t testing.TB, s *store.Store, branch string, changes []store.FileChange, msg string, merge []cairn.Hash) *cairn.Commit {
	t.Helper()
	ctx := t.Context()
	head, err := s.Head(ctx, branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Fatal(err)
	}
	base := store.EmptyTree
	if !head.IsZero() {
		c, err := s.ReadCommit(ctx, head)
		if err != nil {
			t.Fatal(err)
		}
		base = c.Tree
	}
	b := s.NewBatch()
	tree, err := b.Edit(ctx, base, changes)
	if err != nil {
		t.Fatal(err)
	}
	var parents []cairn.Hash
	if len(merge) > 0 {
		parents = append([]cairn.Hash{head}, merge...)
	}
	n := 0
	for range s.Log(ctx, head, store.LogOptions{}) {
		n++
	}
	c, err := s.Commit(ctx, b, store.CommitRequest{
		Branch: branch, Expected: head, Parents: parents, Tree: tree,
		Principal: cairn.User("ada"), Message: msg, Time: epoch.Add(time.Duration(n) * time.Minute),
		Meta: map[string]string{"job": "j-" + fmt.Sprint(n)}, AllowEmpty: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantCode fails the test unless err has the given cairn error code.
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := cairn.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}

// wantNoBranch fails the test if the branch exists.
func wantNoBranch(t testing.TB, s *store.Store, branch string) {
	t.Helper()
	if _, err := s.Head(t.Context(), branch); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Fatalf("Head(%q) error = %v, want not found", branch, err)
	}
}
