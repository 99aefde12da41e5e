package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"cairn"
	"cairn/app"
)

func TestApp_ImportFolder(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := adminSetup(t)
		src := adminFiles(t, map[string]string{"index.md": "# Home\n", "a.md": "# A\n", "b/c.md": "# C\n"})
		var stages []string
		last := map[string][2]int{}
		res, err := a.ImportFolder(ctx, src, &app.ImportOptions{Progress: func(stage string, done, total int) {
			if !slices.Contains(stages, stage) {
				stages = append(stages, stage)
			}
			last[stage] = [2]int{done, total}
		}})
		if err != nil {
			t.Fatalf("ImportFolder: %v", err)
		}
		if res.Commit == nil || res.Added != 2 || res.Updated != 0 || res.Unchanged != 1 || !res.Outcome.Admitted() {
			t.Errorf("ImportFolder = %+v, want a commit of 2 added, 1 unchanged", res)
		}
		if got := res.Commit.Message; got != "import "+filepath.Base(src) {
			t.Errorf("the commit's message is %q, want the default", got)
		}
		if want := []string{app.StageReading, app.StageCommit, app.StageSync}; !slices.Equal(stages, want) {
			t.Errorf("progress stages %q, want %q", stages, want)
		}
		if r := last[app.StageReading]; r != [2]int{3, 3} {
			t.Errorf("the last reading progress is %v, want 3 of 3", r)
		}
		if _, err := os.Stat(filepath.Join(a.Root(), "b", "c.md")); err != nil {
			t.Errorf("b/c.md is not in the folder: %v", err)
		}
		again, err := a.ImportFolder(ctx, src, &app.ImportOptions{Message: "again"})
		if err != nil || again.Commit != nil || again.Outcome != nil || again.Unchanged != 3 {
			t.Errorf("ImportFolder again = %+v, %v; want nothing imported, 3 unchanged", again, err)
		}
	})
	t.Run("Prefix", func(t *testing.T) {
		a, ctx := adminSetup(t)
		res, err := a.ImportFolder(ctx, adminFiles(t, map[string]string{"a.md": "# A\n"}), &app.ImportOptions{Prefix: "inbox", Message: "inbox"})
		if err != nil || res.Commit == nil || res.Commit.Message != "inbox" {
			t.Fatalf("ImportFolder(prefix inbox) = %+v, %v", res, err)
		}
		if _, err := os.Stat(filepath.Join(a.Root(), "inbox", "a.md")); err != nil {
			t.Errorf("inbox/a.md is not in the folder: %v", err)
		}
	})
	t.Run("Err", func(t *testing.T) {
		a, ctx := adminSetup(t)
		src := adminFiles(t, map[string]string{"a.md": "# A\n"})
		_, err := a.ImportFolder(t.Context(), src, nil)
		adminCode(t, "ImportFolder without a principal", err, cairn.EUNAUTHORIZED)
		_, err = a.ImportFolder(ctx, filepath.Join(src, "nowhere"), nil)
		adminCode(t, "ImportFolder of a missing folder", err, cairn.EINVALID)
		_, err = a.ImportFolder(ctx, filepath.Join(src, "a.md"), nil)
		adminCode(t, "ImportFolder of a file", err, cairn.EINVALID)
		_, err = a.ImportFolder(ctx, src, &app.ImportOptions{Prefix: "../out"})
		adminCode(t, "ImportFolder under ../out", err, cairn.EINVALID)
		if _, err := os.Stat(filepath.Join(a.Root(), "a.md")); err == nil {
			t.Errorf("a refused import wrote a.md")
		}
	})
}

// adminGitRepo makes a git repository with one commit per map of files.
func adminGitRepo(t *testing.T, commits ...map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=Eve", "GIT_AUTHOR_EMAIL=eve@example.org", "GIT_COMMITTER_NAME=Eve", "GIT_COMMITTER_EMAIL=eve@example.org")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for i, files := range commits {
		for p, content := range files {
			if err := os.WriteFile(filepath.Join(repo, p), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "--all")
		git("commit", "-q", "-m", "commit "+string(rune('1'+i)))
	}
	return repo
}

func TestApp_ImportHistory(t *testing.T) {
	t.Run("IntoMain", func(t *testing.T) {
		repo := adminGitRepo(t, map[string]string{"a.md": "one\n"}, map[string]string{"a.md": "two\n", "b.md": "b\n"})
		a, ctx := adminEmpty(t)
		var calls int
		res, err := a.ImportHistory(ctx, repo, &app.HistoryOptions{Progress: func(stage string, done, total int) {
			if stage != app.StageHistory || total != 2 {
				t.Errorf("progress (%q, %d, %d), want %q of 2", stage, done, total, app.StageHistory)
			}
			calls++
		}})
		if err != nil {
			t.Fatalf("ImportHistory: %v", err)
		}
		if res.Commits != 2 || res.Branch != "import/"+filepath.Base(repo) || !res.IntoMain || !res.Outcome.Admitted() || res.Sync == nil || calls != 2 {
			t.Errorf("ImportHistory = %+v (progress called %d times), want 2 commits merged into main", res, calls)
		}
		if data, err := os.ReadFile(filepath.Join(a.Root(), "a.md")); err != nil || string(data) != "two\n" {
			t.Errorf("a.md in the folder = %q, %v; want the last version", data, err)
		}
	})
	t.Run("OwnBranch", func(t *testing.T) {
		repo := adminGitRepo(t, map[string]string{"a.md": "one\n"})
		a, ctx := adminSetup(t)
		res, err := a.ImportHistory(ctx, repo, nil)
		if err != nil {
			t.Fatalf("ImportHistory: %v", err)
		}
		if res.IntoMain || res.Outcome != nil || res.Sync != nil || res.Commits != 1 {
			t.Errorf("ImportHistory into a main with files = %+v, want its own branch only", res)
		}
		if _, err := a.ResolveCommit(ctx, res.Branch); err != nil {
			t.Errorf("ResolveCommit(%s): %v", res.Branch, err)
		}
		_, err = a.ImportHistory(ctx, repo, nil)
		adminCode(t, "ImportHistory onto an existing branch", err, cairn.ECONFLICT)
	})
	t.Run("Err", func(t *testing.T) {
		a, ctx := adminSetup(t)
		plain := adminFiles(t, map[string]string{"a.md": "# A\n"})
		_, err := a.ImportHistory(t.Context(), plain, nil)
		adminCode(t, "ImportHistory without a principal", err, cairn.EUNAUTHORIZED)
		_, err = a.ImportHistory(ctx, filepath.Join(plain, "nowhere"), nil)
		adminCode(t, "ImportHistory of a missing folder", err, cairn.EINVALID)
		if _, err := exec.LookPath("git"); err == nil {
			_, err = a.ImportHistory(ctx, plain, nil)
			adminCode(t, "ImportHistory of a folder that is not a repository", err, cairn.EINVALID)
		}
	})
}

func TestApp_Export(t *testing.T) {
	t.Run("Files", func(t *testing.T) {
		a, _ := adminSetup(t)
		dir := filepath.Join(t.TempDir(), "out")
		// Exporting reads: it needs no principal.
		res, err := a.ExportFiles(t.Context(), dir, "")
		if err != nil {
			t.Fatalf("ExportFiles: %v", err)
		}
		head, err := a.ResolveCommit(t.Context(), "main")
		if err != nil {
			t.Fatal(err)
		}
		if res.Files != 1 || res.Head != head.Hash || res.Placeholders == nil {
			t.Errorf("ExportFiles = %+v, want main's one file", res)
		}
		if data, err := os.ReadFile(filepath.Join(dir, "index.md")); err != nil || string(data) != "# Home\n" {
			t.Errorf("exported index.md = %q, %v", data, err)
		}
		_, err = a.ExportFiles(t.Context(), dir, "")
		adminCode(t, "ExportFiles into a folder with files", err, cairn.EINVALID)
		_, err = a.ExportFiles(t.Context(), filepath.Join(t.TempDir(), "out"), "nosuchbranch")
		adminCode(t, "ExportFiles of a missing revision", err, cairn.ENOTFOUND)
	})
	t.Run("Git", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("no git")
		}
		a, _ := adminSetup(t)
		dir := filepath.Join(t.TempDir(), "repo")
		var calls int
		res, err := a.ExportGit(t.Context(), dir, &app.ExportOptions{Progress: func(stage string, done, total int) {
			if stage != app.StageExporting {
				t.Errorf("progress stage %q, want %q", stage, app.StageExporting)
			}
			calls++
		}})
		if err != nil {
			t.Fatalf("ExportGit: %v", err)
		}
		if res.Branch != "main" || res.Commits != 1 || calls == 0 {
			t.Errorf("ExportGit = %+v (progress called %d times), want main's one commit", res, calls)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
			t.Errorf("no git repository in %s: %v", dir, err)
		}
		_, err = a.ExportGit(t.Context(), dir, nil)
		adminCode(t, "ExportGit into a folder with files", err, cairn.EINVALID)
		_, err = a.ExportGit(t.Context(), filepath.Join(t.TempDir(), "repo"), &app.ExportOptions{Branch: "nosuchbranch"})
		adminCode(t, "ExportGit of a missing branch", err, cairn.ENOTFOUND)
	})
}
