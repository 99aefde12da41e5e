package gitio_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/gitio"
)

// markers is a folder that a hostile repository's programs write into when
// they run: each program is the script mark, given the name of what ran it.
type markers struct {
	t    *testing.T
	dir  string
	mark string // the script, an absolute path: it needs no PATH
}

func newMarkers(t *testing.T) *markers {
	t.Helper()
	root := t.TempDir()
	m := &markers{t: t, dir: filepath.Join(root, "ran"), mark: filepath.Join(root, "mark")}
	if err := os.Mkdir(m.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Shell built-ins only: a program that runs with an empty PATH still
	// leaves its marker.
	script := fmt.Sprintf("#!/bin/sh\n: > '%s/'\"$1\"\n", m.dir)
	if err := os.WriteFile(m.mark, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

// cmd is a command that leaves the marker name when it runs.
func (m *markers) cmd(name string) string { return m.mark + " " + name }

// check fails the test if any program left a marker.
func (m *markers) check() {
	m.t.Helper()
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		m.t.Fatal(err)
	}
	var ran []string
	for _, e := range entries {
		ran = append(ran, e.Name())
	}
	if len(ran) > 0 {
		m.t.Errorf("git ran programs named by the repository or the user's configuration: %v", ran)
	}
}

// gitHooks are the names of every hook git runs.
var gitHooks = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "post-index-change", "p4-changelist", "p4-prepare-changelist",
	"p4-post-changelist", "p4-pre-submit",
}

// hooks writes every hook into dir, each leaving its marker.
func (m *markers) hooks(dir string) {
	m.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		m.t.Fatal(err)
	}
	for _, h := range gitHooks {
		if err := os.WriteFile(filepath.Join(dir, h), []byte("#!/bin/sh\n"+m.cmd("hook-"+h)+"\n"), 0o755); err != nil {
			m.t.Fatal(err)
		}
	}
}

// config is git configuration that names a marking program in every
// setting that can run one.
func (m *markers) config(hooksDir string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("[core]")
	w("\tfsmonitor = %q", m.cmd("fsmonitor"))
	w("\thooksPath = %q", hooksDir)
	w("\tpager = %q", m.cmd("pager"))
	w("\teditor = %q", m.cmd("editor"))
	w("\tsshCommand = %q", m.cmd("ssh"))
	w("\tgitProxy = %q", m.cmd("proxy"))
	w("\taskPass = %q", m.cmd("askpass"))
	w("\talternateRefsCommand = %q", m.cmd("alternate-refs"))
	w("[sequence]\n\teditor = %q", m.cmd("sequence-editor"))
	w("[pager]\n\tlog = %q\n\tdiff-tree = %q\n\tcat-file = %q", m.cmd("pager-log"), m.cmd("pager-diff-tree"), m.cmd("pager-cat-file"))
	w("[filter \"evil\"]\n\tclean = %q\n\tsmudge = %q\n\tprocess = %q\n\trequired = true", m.cmd("clean"), m.cmd("smudge"), m.cmd("process"))
	w("[filter \"lfs\"]\n\tclean = %q\n\tsmudge = %q\n\tprocess = %q", m.cmd("lfs-clean"), m.cmd("lfs-smudge"), m.cmd("lfs-process"))
	w("[diff]\n\texternal = %q", m.cmd("diff-external"))
	w("[diff \"evil\"]\n\ttextconv = %q\n\tcommand = %q", m.cmd("textconv"), m.cmd("diff-command"))
	w("[merge \"evil\"]\n\tdriver = %q", m.cmd("merge-driver"))
	w("[credential]\n\thelper = %q", "!"+m.cmd("credential"))
	w("[gpg]\n\tprogram = %q", m.mark)
	w("[gpg \"ssh\"]\n\tprogram = %q", m.mark)
	w("[gpg \"x509\"]\n\tprogram = %q", m.mark)
	w("[log]\n\tshowSignature = true")
	w("[gc]\n\tauto = 1\n\tautoDetach = false")
	w("[uploadpack]\n\tpackObjectsHook = %q", m.cmd("pack-objects-hook"))
	w("[remote \"origin\"]\n\turl = %q\n\tuploadpack = %q\n\treceivepack = %q", "ext::"+m.cmd("ext"), m.cmd("uploadpack"), m.cmd("receivepack"))
	w("[protocol]\n\tallow = always")
	w("[protocol \"ext\"]\n\tallow = always")
	w("[alias]\n\tlog = %q\n\trev-parse = %q\n\tcat-file = %q", "!"+m.cmd("alias-log"), "!"+m.cmd("alias-rev-parse"), "!"+m.cmd("alias-cat-file"))
	w("[init]\n\ttemplateDir = %q", filepath.Dir(hooksDir))
	w("[web]\n\tbrowser = evil")
	w("[browser \"evil\"]\n\tcmd = %q", m.cmd("browser"))
	w("[submodule \"sub\"]\n\tupdate = %q", "!"+m.cmd("submodule-update"))
	w("[safe]\n\tdirectory = *")
	return b.String()
}

// hostileRepo makes a repository with a .gitattributes that gives every
// file a filter, a diff and a merge driver, and the history the vault should
// hold of it. makeHostile then turns its git folder against its reader.
func hostileRepo(t *testing.T) (*gitRepo, want) {
	t.Helper()
	r := newGitRepo(t)
	r.write(map[string]string{
		".gitattributes": "* filter=evil diff=evil merge=evil\n*.md filter=lfs diff=lfs merge=lfs -text\n",
		"a.md":           "# A\n",
	})
	r.commit("first")
	r.write(map[string]string{"a.md": "# A, again\n", "b.md": "# B\n"})
	r.commit("second")
	return r, wantOf(r)
}

// want is what an import of a repository must give: computed before the
// repository turns hostile, so that the test's own git runs nothing.
type want struct {
	commits int
	head    map[string]gitFile
}

func wantOf(r *gitRepo) want {
	ids := r.firstParents()
	return want{commits: len(ids), head: r.tree(ids[len(ids)-1])}
}

// makeHostile makes git run programs for the configuration and hooks of
// a git folder: every hook, in its hooks folder and in a hooks path, and
// every setting that can name a program.
func makeHostile(t *testing.T, m *markers, gitDir string) {
	t.Helper()
	hooks := filepath.Join(t.TempDir(), "template", "hooks")
	m.hooks(hooks)
	m.hooks(filepath.Join(gitDir, "hooks"))
	appendFile(t, filepath.Join(gitDir, "config"), m.config(hooks))
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// wantImported checks that an import of dir gives w.
func wantImported(t *testing.T, w want, dir string) {
	t.Helper()
	s := newStore(t)
	res, err := gitio.ImportHistory(t.Context(), s, dir, nil)
	if err != nil {
		t.Fatalf("ImportHistory: %v", err)
	}
	if res.Commits != w.commits {
		t.Fatalf("imported %d commits, want %d", res.Commits, w.commits)
	}
	got := history(t, s, "main")
	if diff := cmp.Diff(w.head, vaultFiles(t, s, got[len(got)-1].Tree)); diff != "" {
		t.Errorf("head tree (-git +vault):\n%s", diff)
	}
}

// A repository's own configuration, and whatever it includes, never makes
// an import run a program.
func TestImportHistory_HostileConfig(t *testing.T) {
	t.Parallel()
	t.Run("Config", func(t *testing.T) {
		t.Parallel()
		m := newMarkers(t)
		r, w := hostileRepo(t)
		makeHostile(t, m, filepath.Join(r.dir, ".git"))
		wantImported(t, w, r.dir)
		m.check()
	})
	// A revision that names a file of the index (":a.md") makes git read
	// the index, which runs core.fsmonitor.
	t.Run("IndexRef", func(t *testing.T) {
		t.Parallel()
		m := newMarkers(t)
		r, _ := hostileRepo(t)
		makeHostile(t, m, filepath.Join(r.dir, ".git"))
		s := newStore(t)
		_, err := gitio.ImportHistory(t.Context(), s, r.dir, &gitio.ImportOptions{Ref: ":a.md"})
		wantCode(t, err, cairn.ENOTFOUND)
		m.check()
	})
	t.Run("Include", func(t *testing.T) {
		t.Parallel()
		m := newMarkers(t)
		r, w := hostileRepo(t)
		hooks := filepath.Join(t.TempDir(), "hooks")
		m.hooks(hooks)
		inc := filepath.Join(t.TempDir(), "included")
		if err := os.WriteFile(inc, []byte(m.config(hooks)), 0o644); err != nil {
			t.Fatal(err)
		}
		appendFile(t, filepath.Join(r.dir, ".git", "config"), fmt.Sprintf(
			"[include]\n\tpath = %q\n[includeIf \"gitdir:%s/\"]\n\tpath = %q\n[includeIf \"onbranch:main\"]\n\tpath = %q\n",
			inc, r.dir, inc, inc))
		wantImported(t, w, r.dir)
		m.check()
	})
	t.Run("WorktreeConfig", func(t *testing.T) {
		t.Parallel()
		m := newMarkers(t)
		r, w := hostileRepo(t)
		hooks := filepath.Join(t.TempDir(), "hooks")
		m.hooks(hooks)
		r.git("config", "core.repositoryformatversion", "1")
		r.git("config", "extensions.worktreeConfig", "true")
		appendFile(t, filepath.Join(r.dir, ".git", "config.worktree"), m.config(hooks))
		wantImported(t, w, r.dir)
		m.check()
	})
	// .git may be a file that names the git folder (a linked worktree, a
	// submodule), or a symbolic link to it: the import follows it, under
	// the same rules.
	t.Run("GitFile", func(t *testing.T) {
		t.Parallel()
		m := newMarkers(t)
		r, w := hostileRepo(t)
		gitDir := filepath.Join(r.dir, ".git")
		elsewhere := filepath.Join(t.TempDir(), "git")
		if err := os.Rename(gitDir, elsewhere); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(gitDir, []byte("gitdir: "+elsewhere+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		makeHostile(t, m, elsewhere)
		wantImported(t, w, r.dir)
		m.check()
	})
	t.Run("GitSymlink", func(t *testing.T) {
		t.Parallel()
		m := newMarkers(t)
		r, w := hostileRepo(t)
		gitDir := filepath.Join(r.dir, ".git")
		elsewhere := filepath.Join(t.TempDir(), "git")
		if err := os.Rename(gitDir, elsewhere); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, gitDir); err != nil {
			t.Fatal(err)
		}
		makeHostile(t, m, elsewhere)
		wantImported(t, w, r.dir)
		m.check()
	})
	t.Run("LinkedWorktree", func(t *testing.T) {
		t.Parallel()
		m := newMarkers(t)
		r, _ := hostileRepo(t)
		wt := filepath.Join(t.TempDir(), "wt")
		r.git("worktree", "add", "--quiet", "-b", "side", wt)
		side := &gitRepo{t: t, dir: wt, n: r.n}
		side.write(map[string]string{"c.md": "# C\n"})
		side.commit("on the side")
		w := wantOf(side)
		makeHostile(t, m, filepath.Join(r.dir, ".git"))
		wantImported(t, w, wt)
		m.check()
	})
	// A partial clone fetches what it lacks from its promisor remote; an
	// import never does, so a missing object is an error.
	t.Run("PartialClone", func(t *testing.T) {
		t.Parallel()
		for _, missing := range []string{"blob", "commit"} {
			t.Run(missing, func(t *testing.T) {
				t.Parallel()
				m := newMarkers(t)
				r := newGitRepo(t)
				r.write(map[string]string{"a.md": "a\n"})
				r.commit("first")
				id := r.git("rev-parse", "HEAD:a.md")
				if missing == "commit" {
					id = r.git("rev-parse", "HEAD")
				}
				if err := os.Remove(filepath.Join(r.dir, ".git", "objects", id[:2], id[2:])); err != nil {
					t.Fatal(err)
				}
				r.git("config", "core.repositoryformatversion", "1")
				r.git("config", "extensions.partialClone", "origin")
				appendFile(t, filepath.Join(r.dir, ".git", "config"), fmt.Sprintf(
					"[remote \"origin\"]\n\turl = %q\n\tpromisor = true\n[protocol]\n\tallow = always\n[protocol \"ext\"]\n\tallow = always\n",
					"ext::"+m.cmd("ext")))
				s := newStore(t)
				if _, err := gitio.ImportHistory(t.Context(), s, r.dir, nil); err == nil {
					t.Errorf("ImportHistory of a repository missing a %s succeeded", missing)
				}
				wantNoBranch(t, s, "main")
				m.check()
			})
		}
	})
}

// The user's own git configuration, wherever git would look for it, does
// not reach the git that cairn runs either.
func TestImportExport_UserConfig(t *testing.T) {
	m := newMarkers(t)
	r, _ := hostileRepo(t)
	makeHostile(t, m, filepath.Join(r.dir, ".git"))
	home := t.TempDir()
	hooks := filepath.Join(home, "template", "hooks")
	m.hooks(hooks)
	cfg := m.config(hooks)
	xdg := filepath.Join(home, "xdg")
	for _, p := range []string{filepath.Join(home, ".gitconfig"), filepath.Join(xdg, "git", "config"), filepath.Join(home, "global"), filepath.Join(home, "system")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "global"))
	t.Setenv("GIT_CONFIG_SYSTEM", filepath.Join(home, "system"))
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", m.cmd("env-fsmonitor"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='"+hooks+"'")
	t.Setenv("GIT_TEMPLATE_DIR", filepath.Dir(hooks))
	t.Setenv("GIT_EXTERNAL_DIFF", m.cmd("env-external-diff"))
	t.Setenv("GIT_PAGER", m.cmd("env-pager"))
	t.Setenv("PAGER", m.cmd("env-pager2"))
	t.Setenv("GIT_SSH_COMMAND", m.cmd("env-ssh"))
	t.Setenv("GIT_ASKPASS", m.cmd("env-askpass"))
	t.Setenv("SSH_ASKPASS", m.cmd("env-ssh-askpass"))
	t.Setenv("GIT_EDITOR", m.cmd("env-editor"))

	// The import, of a repository with hostile configuration too.
	s := newStore(t)
	if _, err := gitio.ImportHistory(t.Context(), s, r.dir, nil); err != nil {
		t.Fatalf("ImportHistory: %v", err)
	}
	// The export of a vault whose .gitattributes names filters that the
	// user's configuration defines.
	vaultCommit(t, s, "main", map[string]string{"c.md": "# C\n"}, "third")
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := gitio.ExportGit(t.Context(), s, dir, nil); err != nil {
		t.Fatalf("ExportGit: %v", err)
	}
	head := history(t, s, "main")
	want := vaultFiles(t, s, head[len(head)-1].Tree)
	if diff := cmp.Diff(want, workTree(t, dir)); diff != "" {
		t.Errorf("exported working tree (-vault +disk):\n%s", diff)
	}
	entries, err := os.ReadDir(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "hooks" }) {
		t.Errorf("the exported repository has a hooks folder, copied from a template")
	}
	m.check()
}

// An export never runs a hook or filter, and its checkout writes the
// vault's bytes even when the vault's .gitattributes asks for conversions
// that git would otherwise configure from the machine.
func TestExportGit_Attributes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	files := map[string]string{
		".gitattributes": "* filter=lfs diff=lfs merge=lfs\n",
		"a.md":           "# A\n",
	}
	vaultCommit(t, s, "main", files, "attributes")
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := gitio.ExportGit(t.Context(), s, dir, nil); err != nil {
		t.Fatalf("ExportGit: %v", err)
	}
	want := map[string]gitFile{}
	for p, d := range files {
		want[p] = gitFile{Data: d, Mode: cairn.ModeFile}
	}
	if diff := cmp.Diff(want, workTree(t, dir)); diff != "" {
		t.Errorf("exported working tree (-vault +disk):\n%s", diff)
	}
}

// The repository the import reads objects through has the other's shallow
// list and object format: a shallow clone and a SHA-256 repository import.
func TestImportHistory_ReadingRepository(t *testing.T) {
	t.Parallel()
	t.Run("Shallow", func(t *testing.T) {
		t.Parallel()
		r := newGitRepo(t)
		for i := range 3 {
			r.write(map[string]string{"a.md": fmt.Sprintf("version %d\n", i)})
			r.commit(fmt.Sprintf("commit %d", i))
		}
		clone := filepath.Join(t.TempDir(), "clone")
		runGit(t, r.dir, gitEnv(r.date()), "", "clone", "--quiet", "--depth", "2", "file://"+r.dir, clone)
		c := &gitRepo{t: t, dir: clone, n: r.n}
		if n := len(c.firstParents()); n != 2 {
			t.Fatalf("the clone has %d commits, want 2", n)
		}
		wantImported(t, wantOf(c), clone)
	})
	t.Run("SHA256", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		runGit(t, dir, gitEnv(epoch), "", "init", "--quiet", "--object-format=sha256", "--initial-branch=main")
		r := &gitRepo{t: t, dir: dir}
		r.write(map[string]string{"a.md": "a\n"})
		r.commit("first")
		r.write(map[string]string{"b.md": "b\n"})
		id := r.commit("second")
		if len(id) != 64 {
			t.Fatalf("commit id %q is not SHA-256", id)
		}
		wantImported(t, wantOf(r), dir)
	})
}
