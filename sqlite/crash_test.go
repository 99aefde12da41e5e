package sqlite_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"cairn"
	"cairn/sqlite"
	"cairn/store"
)

// The crash and multi-process tests run this test binary again as a child
// process; TestChild is its entry point there and does nothing otherwise.
const (
	envDB    = "CAIRN_TEST_CHILD_DB"
	envOp    = "CAIRN_TEST_CHILD_OP"
	envPoint = "CAIRN_TEST_CHILD_POINT"
	envN     = "CAIRN_TEST_CHILD_N"
)

func TestChild(t *testing.T) {
	path := os.Getenv(envDB)
	if path == "" {
		t.Skip("runs only as a child process of the crash tests")
	}
	if err := child(t, path, os.Getenv(envOp), os.Getenv(envPoint)); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
}

func kill(point, at string) {
	if point == at {
		syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
		select {}
	}
}

func child(t *testing.T, path, op, point string) error {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path, &sqlite.Options{Crash: func(p string) { kill(point, p) }})
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := store.New(ctx, db, &store.Options{Crash: func(p string) { kill(point, p) }})
	if err != nil {
		return err
	}
	switch op {
	case "commit":
		head, _ := s.Head(ctx, "main")
		c, _ := s.ReadCommit(ctx, head)
		b := s.NewBatch()
		tree, err := b.Edit(ctx, c.Tree, []store.FileChange{{Path: "notes/new.md", Data: []byte("new page\n")}})
		if err != nil {
			return err
		}
		_, err = s.Commit(ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.User("child"), Message: "child commit"})
		return err
	case "merge":
		ours, _ := s.Head(ctx, "main")
		theirs, _ := s.Head(ctx, "side")
		base, err := s.MergeBase(ctx, ours, theirs)
		if err != nil {
			return err
		}
		var trees [3]cairn.Hash
		for i, h := range []cairn.Hash{base, ours, theirs} {
			c, err := s.ReadCommit(ctx, h)
			if err != nil {
				return err
			}
			trees[i] = c.Tree
		}
		b := s.NewBatch()
		res, err := b.MergeTrees(ctx, trees[0], trees[1], trees[2], nil)
		if err != nil || len(res.Conflicts) > 0 {
			return fmt.Errorf("merge: %v %v", err, res.Conflicts)
		}
		kill(point, "merge:tree-built")
		_, err = s.Commit(ctx, b, store.CommitRequest{Branch: "main", Expected: ours, Parents: []cairn.Hash{ours, theirs},
			Tree: res.Tree, Principal: cairn.User("child"), Message: "merge side"})
		return err
	case "gc":
		_, err := s.GC(ctx, &store.GCOptions{Grace: -1})
		return err
	case "purge":
		_, err := s.PurgePath(ctx, "main", "secret.md", cairn.User("child"), "leaked")
		return err
	case "race":
		n, _ := strconv.Atoi(os.Getenv(envN))
		// Wait for the parent's start signal so both processes race.
		if _, err := os.Stdin.Read(make([]byte, 1)); err != nil {
			return err
		}
		conflicts := 0
		for i := 0; i < n; {
			head, err := s.Head(ctx, "main")
			if err != nil {
				return err
			}
			c, err := s.ReadCommit(ctx, head)
			if err != nil {
				return err
			}
			b := s.NewBatch()
			tree, err := b.Edit(ctx, c.Tree, []store.FileChange{{Path: fmt.Sprintf("p%d/%04d.md", os.Getpid(), i), Data: []byte("x")}})
			if err != nil {
				return err
			}
			_, err = s.Commit(ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.User("child"), Message: fmt.Sprint(i)})
			switch cairn.ErrorCode(err) {
			case "":
				i++
			case cairn.ECONFLICT, cairn.EUNAVAILABLE:
				conflicts++
			default:
				return err
			}
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]int{"pid": os.Getpid(), "commits": n, "conflicts": conflicts})
	}
	return fmt.Errorf("unknown op %q", op)
}

func runChild(t *testing.T, path, op, point string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envDB+"="+path, envOp+"="+op, envPoint+"="+point)
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

// seed builds a vault with history, a branch to merge, garbage to collect
// and a secret to purge, and returns the head of main.
func seed(t *testing.T, path string) cairn.Hash {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := store.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(branch string, expected cairn.Hash, changes ...store.FileChange) cairn.Hash {
		base := store.EmptyTree
		if !expected.IsZero() {
			c, _ := s.ReadCommit(ctx, expected)
			base = c.Tree
		}
		if branch == "junk" {
			expected = cairn.Hash{}
		}
		b := s.NewBatch()
		tree, err := b.Edit(ctx, base, changes)
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Commit(ctx, b, store.CommitRequest{Branch: branch, Expected: expected, Tree: tree, Principal: cairn.PrincipalSystem, Message: "seed"})
		if err != nil {
			t.Fatal(err)
		}
		return c.Hash
	}
	var files []store.FileChange
	for i := range 200 {
		files = append(files, store.FileChange{Path: fmt.Sprintf("notes/p-%03d.md", i), Data: fmt.Appendf(nil, "page %d\n", i)})
	}
	files = append(files, store.FileChange{Path: "secret.md", Data: []byte("API_KEY=sk-live")})
	root := commit("main", cairn.Hash{}, files...)
	if err := s.SetBranch(ctx, "side", cairn.Hash{}, root, cairn.PrincipalSystem, ""); err != nil {
		t.Fatal(err)
	}
	commit("side", root, store.FileChange{Path: "side.md", Data: []byte("from side")})
	main := commit("main", root, store.FileChange{Path: "notes/p-000.md", Data: []byte("changed on main")})
	// 2,500 objects of garbage, so gc deletes in several batches.
	var junk []store.FileChange
	for i := range 2500 {
		junk = append(junk, store.FileChange{Path: fmt.Sprintf("junk/%04d.md", i), Data: fmt.Appendf(nil, "junk %d", i)})
	}
	j := commit("junk", main, junk...)
	if err := s.SetBranch(ctx, "junk", j, cairn.Hash{}, cairn.PrincipalSystem, "drop"); err != nil {
		t.Fatal(err)
	}
	return main
}

// TestCrash kills a child process at named points of commit, merge, gc and
// purge, then reopens the vault: the last committed state is intact and
// Verify passes.
func TestCrash(t *testing.T) {
	for _, tc := range []struct {
		op, point string
		moved     bool // whether main must have moved (the commit had committed)
		purged    bool
	}{
		{"commit", "commit:objects-written", false, false},
		{"commit", "commit:ref-updated", false, false},
		{"commit", "commit:committed", true, false},
		{"merge", "merge:tree-built", false, false},
		{"merge", "commit:ref-updated", false, false},
		{"merge", "commit:committed", true, false},
		{"gc", "gc:marked", false, false},
		{"gc", "gc:deleted-batch", false, false},
		{"purge", "purge:start", false, false},
		{"purge", "purge:updated", false, false},
		{"purge", "purge:committed", false, true},
	} {
		t.Run(tc.op+"/"+tc.point, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "cairn.db")
			before := seed(t, path)
			out, err := runChild(t, path, tc.op, tc.point).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed at %s: %v\n%s", tc.point, err, out)
			}
			ctx := t.Context()
			db, err := sqlite.Open(ctx, path, nil)
			if err != nil {
				t.Fatalf("reopen after crash: %v", err)
			}
			defer db.Close()
			s, err := store.New(ctx, db, nil)
			if err != nil {
				t.Fatal(err)
			}
			head, err := s.Head(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			if moved := head != before; moved != tc.moved {
				t.Errorf("after a crash at %s main moved = %v, want %v", tc.point, moved, tc.moved)
			}
			rep, err := s.Verify(ctx)
			if err != nil || !rep.OK() {
				t.Fatalf("Verify after crash: %v %v", err, rep.Problems)
			}
			c, _ := s.ReadCommit(ctx, head)
			e, err := s.Get(ctx, c.Tree, "secret.md")
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.ReadBlob(ctx, e.Blob)
			if purged := errors.Is(err, cairn.ErrPurged); purged != tc.purged {
				t.Errorf("after a crash at %s purged = %v (%v), want %v", tc.point, purged, err, tc.purged)
			}
			// The vault keeps working: a commit succeeds.
			b := s.NewBatch()
			tree, err := b.Edit(ctx, c.Tree, []store.FileChange{{Path: "after.md", Data: []byte("after the crash")}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Commit(ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.PrincipalSystem, Message: "after"}); err != nil {
				t.Fatalf("commit after crash: %v", err)
			}
		})
	}
}

// TestTwoProcesses has two processes commit to one branch with
// compare-and-swap at the same time: every commit of both lands exactly
// once and history stays linear.
func TestTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cairn.db")
	before := seed(t, path)
	const n = 100
	type report struct{ PID, Commits, Conflicts int }
	reports := make([]report, 2)
	var wg sync.WaitGroup
	var starts []io.WriteCloser
	for i := range reports {
		cmd := runChild(t, path, "race", "", envN+"="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		start, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, start)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := json.NewDecoder(out).Decode(&reports[i]); err != nil {
				t.Errorf("child %d output: %v", i, err)
			}
			io.Copy(io.Discard, out)
			if err := cmd.Wait(); err != nil {
				t.Errorf("child %d: %v", i, err)
			}
		}()
	}
	for _, s := range starts {
		s.Write([]byte{1})
		s.Close()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := store.New(ctx, db, nil)
	head, _ := s.Head(ctx, "main")
	count := 0
	for c, err := range s.Log(ctx, head, store.LogOptions{FirstParent: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Hash == before {
			break
		}
		count++
	}
	if count != 2*n {
		t.Errorf("main has %d new commits, want %d", count, 2*n)
	}
	c, _ := s.ReadCommit(ctx, head)
	for _, r := range reports {
		got := 0
		for _, err := range s.Files(ctx, c.Tree, fmt.Sprintf("p%d/", r.PID)) {
			if err != nil {
				t.Fatal(err)
			}
			got++
		}
		if got != n {
			t.Errorf("process %d: %d of its %d files are on main", r.PID, got, n)
		}
	}
	t.Logf("conflicts: %d and %d", reports[0].Conflicts, reports[1].Conflicts)
}
