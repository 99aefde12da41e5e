package worktree_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/store"
)

// inode returns the inode number of a file, 0 when it cannot be read.
func inode(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// leftovers lists the temporary files a sync may leave in the folder.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".cairn-tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestPrewrite(t *testing.T) {
	e := setup(t)
	e.write("a.md", "a\n")
	e.write("b.md", "b\n")
	e.commit("first")
	e.write("a.md", "a by the person\n") // a local edit
	// What a killed import left is cleared by the next one; a live
	// process's staging folder is not.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadStage := filepath.Join(e.vdir, fmt.Sprintf("prewrite-%d-0000", dead.Process.Pid))
	liveStage := filepath.Join(e.vdir, fmt.Sprintf("prewrite-%d-0000", os.Getppid()))
	for _, d := range []string{deadStage, liveStage} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "junk"), []byte("x"), 0o644)
	}

	files := map[string]string{"a.md": "a from the import\n", "c/d.md": "new\n", "b.md": "b from the import\n", "e.md": "e, second\n"}
	// c/d.md is queued by its blob, read back from the batch that holds it.
	from := e.s.NewBatch()
	changes := []store.FileChange{
		{Path: "a.md", Data: []byte(files["a.md"])},
		{Path: "c/d.md", Blob: from.PutBlob([]byte(files["c/d.md"])), Size: int64(len(files["c/d.md"]))},
		{Path: "b.md", Data: []byte(files["b.md"])},
		{Path: "run.sh", Data: []byte("#!/bin/sh\n"), Mode: cairn.ModeExecutable},
		// Staged twice: the later is the one placed.
		{Path: "e.md", Data: []byte("e, first\n")},
		{Path: "e.md", Data: []byte(files["e.md"])},
	}
	pre, err := e.m.Prewrite(e.ctx, e.wt, from)
	if err != nil {
		t.Fatal(err)
	}
	defer pre.Discard()
	if err := pre.Add(t.Context(), changes); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(deadStage); !os.IsNotExist(err) {
		t.Errorf("a killed prewrite's staging folder is still there (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(liveStage, "junk")); err != nil {
		t.Errorf("a live process's staging folder was removed: %v", err)
	}
	stages, _ := filepath.Glob(filepath.Join(e.vdir, fmt.Sprintf("prewrite-%d-*", os.Getpid())))
	if len(stages) != 1 {
		t.Fatalf("staging folders of this process: %v, want one", stages)
	}
	stage := stages[0]
	// The staged copy of c/d.md, once written, is the file the sync puts
	// in place: same inode.
	stagedIno := func(name, want string) uint64 {
		staged := filepath.Join(stage, name)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if data, _ := os.ReadFile(staged); string(data) == want {
				return inode(staged)
			}
		}
		t.Fatalf("%s was never staged", want)
		return 0
	}
	ino, eIno := stagedIno("1", files["c/d.md"]), stagedIno("5", files["e.md"])
	if got := e.read("c/d.md"); got != "<missing>" {
		t.Errorf("c/d.md is in the folder before the sync: %q", got)
	}
	head := e.commitElsewhere(files)
	rep, err := e.m.SyncHeadPrewritten(e.ctx, e.wt, pre)
	if err != nil {
		t.Fatal(err)
	}
	if e.wt.Base != head {
		t.Errorf("tree base = %s, want %s", e.wt.Base.Short(), head.Short())
	}
	if diff := cmp.Diff([]string{"a.md"}, rep.LeftAlone); diff != "" {
		t.Errorf("left alone mismatch (-want +got):\n%s", diff)
	}
	if got := e.read("a.md"); got != "a by the person\n" {
		t.Errorf("a.md = %q: the person's edit was overwritten", got)
	}
	if got := e.read("b.md"); got != files["b.md"] {
		t.Errorf("b.md = %q, want %q", got, files["b.md"])
	}
	if got := e.read("c/d.md"); got != files["c/d.md"] {
		t.Errorf("c/d.md = %q, want %q", got, files["c/d.md"])
	}
	if got := inode(filepath.Join(e.dir, "c/d.md")); got != ino {
		t.Errorf("c/d.md was written again (inode %d), not renamed from the staging folder (inode %d)", got, ino)
	}
	if got := inode(filepath.Join(e.dir, "e.md")); got != eIno || e.read("e.md") != files["e.md"] {
		t.Errorf("e.md, staged twice, is %q (inode %d), not the later staged file (inode %d)", e.read("e.md"), got, eIno)
	}
	if got := e.read("run.sh"); got != "<missing>" {
		t.Errorf("run.sh, which main does not hold, is in the folder: %q", got)
	}
	pre.Discard()
	if _, err := os.Stat(stage); !os.IsNotExist(err) {
		t.Errorf("the staging folder outlived Discard (stat: %v)", err)
	}
	if l := leftovers(t, e.dir); len(l) > 0 {
		t.Errorf("temporary files left in the folder: %v", l)
	}
	if diff := cmp.Diff([]string{"modified a.md (incoming)"}, e.status()); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
}

// A change that is not admitted is discarded without a sync: the folder is
// untouched and the staging folder gone.
func TestPrewriteDiscarded(t *testing.T) {
	e := setup(t)
	e.write("a.md", "a\n")
	e.commit("first")
	pre, err := e.m.Prewrite(e.ctx, e.wt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pre.Add(t.Context(), []store.FileChange{{Path: "new/x.md", Data: []byte("x\n")}, {Path: "a.md", Data: []byte("changed\n")}}); err != nil {
		t.Fatal(err)
	}
	pre.Discard()
	pre.Discard() // a second call does nothing
	if _, err := os.Stat(filepath.Join(e.dir, "new")); !os.IsNotExist(err) {
		t.Errorf("the folder of a discarded file exists (stat: %v)", err)
	}
	if got := e.read("a.md"); got != "a\n" {
		t.Errorf("a.md = %q after a discarded prewrite", got)
	}
	if stages, _ := filepath.Glob(filepath.Join(e.vdir, "prewrite-*")); len(stages) > 0 {
		t.Errorf("staging folders left after Discard: %v", stages)
	}
	if got := e.status(); len(got) != 0 {
		t.Errorf("status = %v, want clean", got)
	}
}

// A sync that deletes the only file of a folder and writes another into it
// keeps the folder: deletions go first, emptied folders are removed last.
func TestSyncMovesWithinFolder(t *testing.T) {
	e := setup(t)
	for i := range 20 {
		e.write(fmt.Sprintf("f%d/a.md", i), "a\n")
	}
	e.commit("first")
	changes := map[string]string{}
	for i := range 20 {
		changes[fmt.Sprintf("f%d/a.md", i)] = ""
		changes[fmt.Sprintf("f%d/b.md", i)] = "b\n"
	}
	head := e.commitElsewhere(changes)
	if _, err := e.m.Sync(e.ctx, e.wt, head); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if got := e.read(fmt.Sprintf("f%d/b.md", i)); got != "b\n" {
			t.Errorf("f%d/b.md = %q", i, got)
		}
		if got := e.read(fmt.Sprintf("f%d/a.md", i)); got != "<missing>" {
			t.Errorf("f%d/a.md = %q, want deleted", i, got)
		}
	}
}
