package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/store"
)

// admitChildEnv names the vault a child process of TestSubmit_Race works on.
const admitChildEnv = "CAIRN_TEST_ADMIT_VAULT"

// admitReport is what a child says of one submission.
type admitReport struct {
	Key      string        `json:"key"`
	File     string        `json:"file"`
	Broken   bool          `json:"broken"`
	Schema   bool          `json:"schema"` // a value its type refuses
	Type     bool          `json:"type"`   // a change of the type's declaration
	Verdict  cairn.Verdict `json:"verdict"`
	Commit   cairn.Hash    `json:"commit"`
	Proposal int64         `json:"proposal"`
	Rebased  bool          `json:"rebased"`
	Code     string        `json:"code"`
	Findings string        `json:"findings"`
}

// admitChild is a child process: for each round it submits an agent's
// rewrite of a page of its own, made on the head it read one round before
// (so that admission merges it onto a head that moved), every third one
// with a broken link that holds it, and some others with a value their
// type refuses, which holds them too. Child 0 also changes the type's
// declaration every eighth round (a field declared, or no longer), which
// re-checks every page of the type while the others commit.
func admitChild() int {
	ctx := cairn.NewContextWithPrincipal(context.Background(), cairn.User("child"))
	a, err := app.Open(ctx, os.Getenv(admitChildEnv), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer a.Close()
	v := a.Vault()
	id := os.Getenv("CAIRN_TEST_ADMIT_ID")
	rounds, _ := strconv.Atoi(os.Getenv("CAIRN_TEST_ADMIT_ROUNDS"))
	out := json.NewEncoder(os.Stdout)
	base, err := v.Store.Head(ctx, "main")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := range 2 * rounds {
		c, err := v.Store.ReadCommit(ctx, base)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		r := admitReport{Key: fmt.Sprintf("race:%s:%d", id, i/2), File: fmt.Sprintf("notes/c%s-%d.md", id, i/2), Broken: i/2%3 == 2, Schema: i/2%5 == 4}
		var body string
		switch {
		case i%2 == 1 && id == "0" && i/2%8 == 0:
			r.Key, r.File, r.Broken, r.Schema, r.Type = fmt.Sprintf("race:type:%d", i/2), raceType, false, false, true
			body = raceTypeDecl
			if i/2%16 == 0 {
				body = strings.Replace(raceTypeDecl, "  rank: integer\n", "  rank: integer\n  note: string\n", 1)
			}
		case i%2 == 1:
			continue
		default:
			rank := "3"
			if r.Schema && !r.Broken {
				rank = "high" // not an integer: the schema gate holds it
			} else {
				r.Schema = false
			}
			body = fmt.Sprintf("---\ntitle: C%s %d\ntype: concept\nrank: %s\n---\n# C%s %d\n\nSee [[index|Home]].\n", id, i/2, rank, id, i/2)
			if r.Broken {
				body += fmt.Sprintf("And [[missing %s %d]].\n", id, i/2)
			}
		}
		b := v.Store.NewBatch()
		tree, err := b.Edit(ctx, c.Tree, []store.FileChange{{Path: r.File, Data: []byte(body)}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		next, err := v.Store.Head(ctx, "main") // the base of the next round
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		res, err := v.Admit.Submit(ctx, admit.Request{Key: r.Key, Route: "ingest", Base: base, Tree: tree, Batch: b,
			Principal: cairn.Agent("race"), Message: "ingest: " + r.File})
		base = next
		if err != nil {
			r.Code = cairn.ErrorCode(err)
		} else {
			r.Verdict, r.Rebased = res.Verdict, res.Rebased
			for _, f := range res.Findings {
				r.Findings += fmt.Sprintf("%s/%s %s %s; ", f.Gate, f.Rule, f.Subject, f.Verdict)
			}
			if res.Commit != nil {
				r.Commit = res.Commit.Hash
			}
			if res.Proposal != nil {
				r.Proposal = res.Proposal.ID
			}
		}
		out.Encode(r)
	}
	return 0
}

// raceType is the type of the race's pages, declared from the start.
const (
	raceType     = "types/concept.md"
	raceTypeDecl = "---\ntitle: Concept\nrequires: [title]\nfields:\n  rank: integer\n---\nA concept of the race.\n"
)

// TestSubmit_Race runs several processes that each submit agents' pages
// to main over many rounds, made on heads that moved since, a third of
// them held by a broken link: the lint gate judges each on a snapshot
// while the others commit. Every submission is decided once, as its
// content says (admitted when its links resolve, held otherwise); every
// admitted page is on main and every held one only on its proposal's
// branch; and the index main ends with is the one a rebuild gives.
func TestSubmit_Race(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("tester"))
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const children, rounds = 4, 40
	// Every page the children write is there from the start, linked from
	// index.md, so that what holds a change is only the link it breaks.
	home := "---\ntitle: Home\ntype: index\n---\n# Home\n\n"
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for c := range children {
		for i := range rounds {
			home += fmt.Sprintf("- [[notes/c%d-%d]]\n", c, i)
			page := fmt.Sprintf("---\ntitle: C%d %d\ntype: concept\n---\n# C%d %d\n\nTo be written.\n", c, i, c, i)
			if err := os.WriteFile(filepath.Join(dir, "notes", fmt.Sprintf("c%d-%d.md", c, i)), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "index.md"), []byte(home), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "types"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, raceType), []byte(raceTypeDecl), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := initApp(t, ctx, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Adopt(ctx, "start"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	reports := runChildren[admitReport](t, children, func(c int) []string {
		return []string{admitChildEnv + "=" + dir, "CAIRN_TEST_ADMIT_ID=" + strconv.Itoa(c), "CAIRN_TEST_ADMIT_ROUNDS=" + strconv.Itoa(rounds)}
	})
	if t.Failed() {
		return
	}

	a, err = app.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	props, err := a.Proposals(ctx, admit.ProposalFilter{Status: "all", Limit: 10 * children * rounds})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]int{}
	for _, p := range props {
		byKey[p.Key]++
	}
	admitted, held, schemaHeld, typeChanges, rebased, busy := 0, 0, 0, 0, 0, 0
	for c, rs := range reports {
		want := rounds
		if c == 0 {
			want += (rounds + 7) / 8
		}
		if len(rs) != want {
			t.Errorf("child %d reported %d submissions, want %d", c, len(rs), want)
		}
		for _, r := range rs {
			if r.Code != "" {
				if r.Code != cairn.EUNAVAILABLE {
					t.Errorf("%s: error %q, want a decision (or a busy vault)", r.Key, r.Code)
				}
				busy++
				if byKey[r.Key] != 0 {
					t.Errorf("%s failed, yet %d proposals have its key", r.Key, byKey[r.Key])
				}
				continue
			}
			if byKey[r.Key] != 1 {
				t.Errorf("%s: %d proposals have its key, want 1", r.Key, byKey[r.Key])
			}
			if r.Rebased {
				rebased++
			}
			written := func(ref string) bool {
				f, err := a.ReadFile(ctx, ref, r.File)
				if err != nil {
					t.Errorf("%s: read %s at %s: %v", r.Key, r.File, ref, err)
					return false
				}
				return strings.Contains(f.Content, "See [[index|Home]]") || r.Type && strings.Contains(f.Content, "A concept of the race.")
			}
			onMain := written("main")
			switch {
			case r.Type:
				typeChanges++
				if r.Verdict != cairn.Admit || r.Commit.IsZero() {
					t.Errorf("%s, a type change that breaks no page: %s (%s); want admitted", r.Key, r.Verdict, r.Findings)
				}
			case r.Schema:
				schemaHeld++
				if r.Verdict != cairn.Hold || !strings.Contains(r.Findings, "schema/schema-value rank hold") {
					t.Errorf("%s with rank: high: %s (%s); want held by the schema gate", r.Key, r.Verdict, r.Findings)
				}
				if onMain {
					t.Errorf("%s was held, yet main has its %s", r.Key, r.File)
				}
			case r.Broken:
				held++
				if r.Verdict != cairn.Hold || !r.Commit.IsZero() {
					t.Errorf("%s with a broken link: %s, commit %s; want held", r.Key, r.Verdict, r.Commit.Short())
				}
				if onMain {
					t.Errorf("%s was held, yet main has its %s", r.Key, r.File)
				}
				if !written(admit.ProposalBranch(r.Proposal)) {
					t.Errorf("%s: its proposal's branch lacks its %s", r.Key, r.File)
				}
			default:
				admitted++
				if r.Verdict != cairn.Admit || r.Commit.IsZero() {
					t.Errorf("%s: %s (%s); want admitted", r.Key, r.Verdict, r.Findings)
				}
				if !onMain {
					t.Errorf("%s was admitted, but main lacks its %s", r.Key, r.File)
				}
			}
		}
	}
	d, err := a.Vault().Index.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if !d.OK() {
		t.Errorf("main's index after the race differs from a rebuild:\n%s", strings.Join(d.Problems, "\n"))
	}
	if rebased == 0 {
		t.Errorf("no submission was merged onto a moved head: the race does not exercise it")
	}
	if schemaHeld == 0 || typeChanges == 0 {
		t.Errorf("%d held by the schema gate, %d type changes: the race does not exercise them", schemaHeld, typeChanges)
	}
	t.Logf("%d processes × %d rounds: %d admitted (%d merged onto a moved head), %d held by a broken link, %d by the schema gate, %d type changes, %d busy",
		children, rounds, admitted, rebased, held, schemaHeld, typeChanges, busy)
}
