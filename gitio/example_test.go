package gitio_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"cairn"
	"cairn/gitio"
	"cairn/sqlite"
	"cairn/store"
)

// exampleGit runs git in dir for the examples.
func exampleGit(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitEnv(epoch)
	out, err := cmd.CombinedOutput()
	if err != nil {
		log.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// exampleStore opens a store in a new folder under tmp.
func exampleStore(ctx context.Context, tmp string) *store.Store {
	db, err := sqlite.Open(ctx, filepath.Join(tmp, "cairn.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := store.New(ctx, db, nil)
	if err != nil {
		log.Fatal(err)
	}
	return s
}

func ExampleImportHistory() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "gitio-example")
	defer os.RemoveAll(tmp)

	// A git repository with a note and a symbolic link.
	repo := filepath.Join(tmp, "brain")
	os.MkdirAll(repo, 0o755)
	exampleGit(repo, "init", "--quiet", "--initial-branch=main")
	os.WriteFile(filepath.Join(repo, "note.md"), []byte("# A note\n"), 0o644)
	os.Symlink("note.md", filepath.Join(repo, "link.md"))
	exampleGit(repo, "add", "--all")
	exampleGit(repo, "commit", "--quiet", "-m", "Add a note")

	s := exampleStore(ctx, tmp)
	res, err := gitio.ImportHistory(ctx, s, repo, nil)
	if err != nil {
		log.Fatal(err)
	}
	c, _ := s.ReadCommit(ctx, res.Head)
	fmt.Printf("%d commit by %s: %q\n", res.Commits, c.Principal, c.Message)
	for _, sk := range res.Skipped {
		fmt.Printf("skipped %s (%s)\n", sk.Path, sk.Kind)
	}
	// Output:
	// 1 commit by user:Ada.Lovelace: "Add a note"
	// skipped link.md (symlink)
}

func ExampleExportGit() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "gitio-example")
	defer os.RemoveAll(tmp)

	s := exampleStore(ctx, tmp)
	b := s.NewBatch()
	tree, _ := b.BuildTree(ctx, []store.FileChange{{Path: "note.md", Data: []byte("# A note\n")}})
	_, err := s.Commit(ctx, b, store.CommitRequest{
		Branch: "main", Tree: tree, Principal: cairn.Agent("extractive"),
		Message: "Extract a note", Meta: map[string]string{"job": "42"}, Time: epoch,
	})
	if err != nil {
		log.Fatal(err)
	}

	repo := filepath.Join(tmp, "export")
	if _, err := gitio.ExportGit(ctx, s, repo, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Print(exampleGit(repo, "log", "--format=%an <%ae>%n%(trailers:key=Cairn-Principal,key=Cairn-Meta-job)"))
	data, _ := os.ReadFile(filepath.Join(repo, "note.md"))
	fmt.Printf("note.md: %q\n", data)
	// Output:
	// agent extractive <agent.extractive@cairn.invalid>
	// Cairn-Principal: agent:extractive
	// Cairn-Meta-job: 42
	//
	// note.md: "# A note\n"
}
