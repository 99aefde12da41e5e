package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"cairn"
	"cairn/app"
)

// casChildEnv names the vault a child process of TestCommitChanges_Race
// works on; casChild reads its other settings from the environment too.
const casChildEnv = "CAIRN_TEST_CAS_VAULT"

// casReport is what a child says of one CommitChanges: the base it
// passed, and the commit it made or the error code it got.
type casReport struct {
	Base   cairn.Hash `json:"base"`
	Commit cairn.Hash `json:"commit"`
	Parent cairn.Hash `json:"parent"`
	Code   string     `json:"code"`
	File   string     `json:"file"`
}

// casChild is a child process: it opens the vault, and for each round
// reads main's head and commits one new page against it, printing a
// casReport line per try.
func casChild() int {
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("child"))
	a, err := app.Open(ctx, os.Getenv(casChildEnv), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer a.Close()
	id := os.Getenv("CAIRN_TEST_CAS_ID")
	rounds, _ := strconv.Atoi(os.Getenv("CAIRN_TEST_CAS_ROUNDS"))
	out := json.NewEncoder(os.Stdout)
	for i := range rounds {
		head, err := a.ResolveCommit(ctx, "main")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		file := fmt.Sprintf("notes/p%s-%d.md", id, i)
		r := casReport{Base: head.Hash, File: file}
		res, err := a.CommitChanges(ctx, app.ChangesRequest{
			Branch: "main", Base: head.Hash, Message: "page " + file,
			Changes: []app.FileEdit{{Path: file, Content: []byte(fmt.Sprintf("---\ntitle: P%s %d\n---\n# P%s %d\n\nA page.\n", id, i, id, i))}},
		})
		switch {
		case err != nil:
			r.Code = cairn.ErrorCode(err)
		case res.Commit == nil:
			r.Code = "not admitted"
		default:
			r.Commit = res.Commit.Hash
			if len(res.Commit.Parents) > 0 {
				r.Parent = res.Commit.Parents[0]
			}
		}
		out.Encode(r)
	}
	return 0
}

// TestCommitChanges_Race runs several processes that each commit pages
// to main against the head they read, over many rounds: the
// compare-and-swap holds across processes. Every change admitted was made
// on the head it names as parent (no change is merged onto a head it did
// not see), every admitted change is in main's history once, and every
// refusal is a conflict (or a busy vault), never a lost or doubled change.
func TestCommitChanges_Race(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("tester"))
	dir := filepath.Join(t.TempDir(), "vault")
	a, err := initApp(t, ctx, dir, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Adopt(ctx, "start"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	const children, rounds = 4, 15
	reports := runChildren[casReport](t, children, func(c int) []string {
		return []string{casChildEnv + "=" + dir, "CAIRN_TEST_CAS_ID=" + strconv.Itoa(c), "CAIRN_TEST_CAS_ROUNDS=" + strconv.Itoa(rounds)}
	})
	if t.Failed() {
		return
	}

	a, err = app.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	history, err := a.Log(ctx, "main", app.LogOptions{FirstParent: true})
	if err != nil {
		t.Fatal(err)
	}
	onMain := map[cairn.Hash]int{}
	for _, c := range history {
		onMain[c.Hash]++
	}
	admitted, refused := 0, 0
	for c, rs := range reports {
		if len(rs) != rounds {
			t.Errorf("child %d reported %d tries, want %d", c, len(rs), rounds)
		}
		for _, r := range rs {
			if r.Commit.IsZero() {
				refused++
				if r.Code != cairn.ECONFLICT && r.Code != cairn.EUNAVAILABLE {
					t.Errorf("child %d: %s refused with %q, want a conflict", c, r.File, r.Code)
				}
				if _, err := a.ReadFile(ctx, "main", r.File); cairn.ErrorCode(err) != cairn.ENOTFOUND {
					t.Errorf("child %d: %s was refused, yet main holds it (%v)", c, r.File, err)
				}
				continue
			}
			admitted++
			if r.Parent != r.Base {
				t.Errorf("child %d: %s was admitted onto %s, not the head %s it was made on", c, r.File, r.Parent.Short(), r.Base.Short())
			}
			if onMain[r.Commit] != 1 {
				t.Errorf("child %d: commit %s of %s is %d times in main's history, want once", c, r.Commit.Short(), r.File, onMain[r.Commit])
			}
			if _, err := a.ReadFile(ctx, "main", r.File); err != nil {
				t.Errorf("child %d: %s was admitted, but main lacks it: %v", c, r.File, err)
			}
		}
	}
	// main's history is the first commit and exactly the admitted ones.
	if want := admitted + 1; len(history) != want {
		t.Errorf("main has %d commits, want %d (the first and %d admitted)", len(history), want, admitted)
	}
	t.Logf("%d processes × %d rounds: %d admitted, %d refused as conflicts", children, rounds, admitted, refused)
}
