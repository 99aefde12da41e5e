package admit_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/admit"
	"cairn/agent/command"
	"cairn/index"
	"cairn/store"
)

type env struct {
	t   *testing.T
	ctx context.Context
	db  cairn.Backend
	s   *store.Store
	p   *admit.Pipeline
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	v := openBackend(t, nil)
	s, err := store.New(ctx, v.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix := index.New(s, v.index, nil)
	s.AddHook(ix.Hook())
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	p := admit.New(s, ix, v.admit, &admit.Options{Now: func() time.Time { return now }})
	e := &env{t: t, ctx: ctx, db: v.db, s: s, p: p}
	// A small Eva-like vault, as cairn's own first commit.
	e.submit(cairn.PrincipalSystem, map[string]string{
		"index.md":            "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[concepts/a|A]]\n- [[concepts/b|B]]\n",
		"concepts/a.md":       "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]].\n",
		"concepts/b.md":       "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n\none\ntwo\nthree\n",
		"raw/source.md":       "a source\n",
		"log.md":              "# Log\n",
		"eva.json":            `{"format":"eva-brain","version":1}`,
		"attachments/pic.png": "png",
	}, nil)
	return e
}

// head returns main's head and tree.
func (e *env) head() (cairn.Hash, cairn.Hash) {
	e.t.Helper()
	h, err := e.s.Head(e.ctx, "main")
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return cairn.Hash{}, store.EmptyTree
		}
		e.t.Fatal(err)
	}
	c, err := e.s.ReadCommit(e.ctx, h)
	if err != nil {
		e.t.Fatal(err)
	}
	return h, c.Tree
}

// edit builds the tree of main's head with files changed ("" deletes).
func (e *env) edit(base cairn.Hash, files map[string]string) (*store.Batch, cairn.Hash) {
	e.t.Helper()
	var changes []store.FileChange
	for p, d := range files {
		if d == "" {
			changes = append(changes, store.FileChange{Path: p, Delete: true})
		} else {
			changes = append(changes, store.FileChange{Path: p, Data: []byte(d)})
		}
	}
	b := e.s.NewBatch()
	tree, err := b.Edit(e.ctx, base, changes)
	if err != nil {
		e.t.Fatal(err)
	}
	return b, tree
}

// submit proposes files changed on main's head.
func (e *env) submit(who cairn.Principal, files map[string]string, mod func(*admit.Request)) *admit.Outcome {
	e.t.Helper()
	out, err := e.try(who, files, mod)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) try(who cairn.Principal, files map[string]string, mod func(*admit.Request)) (*admit.Outcome, error) {
	head, tree := e.head()
	b, proposed := e.edit(tree, files)
	req := admit.Request{Route: "test", Base: head, Tree: proposed, Batch: b, Principal: who, Message: "test change"}
	if mod != nil {
		mod(&req)
	}
	return e.p.Submit(e.ctx, req)
}

func (e *env) read(tree cairn.Hash, path string) string {
	e.t.Helper()
	ent, err := e.s.Get(e.ctx, tree, path)
	if err != nil {
		e.t.Fatalf("Get(%s): %v", path, err)
	}
	data, err := e.s.ReadBlob(e.ctx, ent.Blob)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func gates(out *admit.Outcome) []string {
	var gs []string
	for _, f := range out.Findings {
		if f.Verdict != cairn.Admit {
			gs = append(gs, f.Gate+"/"+f.Rule)
		}
	}
	slices.Sort(gs)
	return slices.Compact(gs)
}

func TestSubmit_VerdictTable(t *testing.T) {
	agent, person := cairn.Agent("extractive"), cairn.User("ada")
	page := "---\ntitle: C\ntype: concept\n---\n# C\n\nSee [[concepts/a|A]].\n"
	cases := []struct {
		name          string
		files         map[string]string
		agent, person cairn.Verdict
		gates         []string // the gates that did not admit the agent's change
	}{
		{"Clean", map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]]. More.\n"}, cairn.Admit, cairn.Admit, nil},
		{"Raw", map[string]string{"raw/source.md": "changed\n"}, cairn.Reject, cairn.Hold, []string{"protected/raw"}},
		{"RawAdded", map[string]string{"raw/new.md": "new\n"}, cairn.Reject, cairn.Hold, []string{"protected/raw"}},
		{"Log", map[string]string{"log.md": "# Log\n\nmine\n"}, cairn.Reject, cairn.Hold, []string{"protected/log"}},
		{"Contract", map[string]string{"eva.json": `{"format":"eva-brain","version":1,"profile":"business"}`}, cairn.Reject, cairn.Admit, []string{"contract/contract"}},
		{"Policy", map[string]string{"cairn.yaml": "agent:\n  runtime: extractive\n"}, cairn.Reject, cairn.Admit, []string{"contract/contract"}},
		{"Script", map[string]string{"concepts/run.sh": "echo hi\n"}, cairn.Reject, cairn.Hold, []string{"file-type/script", "lint/non-markdown-file"}},
		{"Shebang", map[string]string{"attachments/tool.txt": "#!/bin/sh\necho hi\n"}, cairn.Reject, cairn.Hold, []string{"file-type/script"}},
		{"Dotfile", map[string]string{"concepts/.hidden.md": "x\n"}, cairn.Reject, cairn.Hold, []string{"file-type/dotfile"}},
		{"Gitignore", map[string]string{".gitignore": "x\n"}, cairn.Reject, cairn.Admit, []string{"file-type/dotfile"}},
		{"Binary", map[string]string{"concepts/blob.bin": "\x00\x01"}, cairn.Reject, cairn.Hold, []string{"file-type/script", "lint/non-markdown-file"}},
		{"NoExtension", map[string]string{"concepts/README": "x\n"}, cairn.Reject, cairn.Hold, []string{"file-type/type", "lint/non-markdown-file"}},
		{"Misplaced", map[string]string{"private/var/folders/x/T/page.md": page}, cairn.Reject, cairn.Hold, []string{"lint/orphan", "misplaced-page/misplaced-page"}},
		{"Deletion", map[string]string{"concepts/a.md": ""}, cairn.Hold, cairn.Admit, []string{"deletion/delete", "lint/broken-link"}},
		{"NewBrokenLink", map[string]string{"concepts/c.md": page + "\n[[nowhere]]\n", "index.md": "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[concepts/a|A]]\n- [[concepts/b|B]]\n- [[concepts/c|C]]\n"}, cairn.Hold, cairn.Admit, []string{"lint/broken-link"}},
		{"NewOrphan", map[string]string{"concepts/c.md": page}, cairn.Hold, cairn.Admit, []string{"lint/orphan"}},
	}
	for _, tc := range cases {
		for _, side := range []struct {
			who  cairn.Principal
			want cairn.Verdict
		}{{agent, tc.agent}, {person, tc.person}} {
			t.Run(tc.name+"/"+side.who.Kind(), func(t *testing.T) {
				e := setup(t)
				before, _ := e.head()
				out := e.submit(side.who, tc.files, nil)
				if out.Verdict != side.want {
					t.Fatalf("verdict = %s, want %s; findings %v", out.Verdict, side.want, out.Findings)
				}
				after, _ := e.head()
				if got := after != before; got != (side.want == cairn.Admit) {
					t.Errorf("main moved = %v, want %v", got, side.want == cairn.Admit)
				}
				if side.who == agent {
					if diff := cmp.Diff(tc.gates, gates(out)); diff != "" {
						t.Errorf("gates that did not admit (-want +got):\n%s", diff)
					}
				}
				if out.Proposal == nil || out.Proposal.ID == 0 {
					t.Fatalf("no proposal recorded")
				}
				if side.want != cairn.Admit {
					// The proposal is kept on its branch, with its findings.
					h, err := e.s.Head(e.ctx, admit.ProposalBranch(out.Proposal.ID))
					if err != nil {
						t.Fatalf("proposal branch: %v", err)
					}
					c, _ := e.s.ReadCommit(e.ctx, h)
					if c.Tree != out.Proposal.Tree {
						t.Errorf("proposal branch tree = %s, want %s", c.Tree.Short(), out.Proposal.Tree.Short())
					}
					got, err := e.p.Get(e.ctx, out.Proposal.ID)
					if err != nil {
						t.Fatal(err)
					}
					wantStatus := map[cairn.Verdict]string{cairn.Hold: cairn.ProposalHeld, cairn.Reject: cairn.ProposalRejected}[side.want]
					if got.Status != wantStatus || len(got.Findings) != len(out.Findings) {
						t.Errorf("stored proposal: status %s with %d findings, want %s with %d", got.Status, len(got.Findings), wantStatus, len(out.Findings))
					}
				}
			})
		}
	}
}

func TestSubmit_OutsideAndSkipped(t *testing.T) {
	e := setup(t)
	out := e.submit(cairn.Agent("command"), map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]]. Edited.\n"}, func(r *admit.Request) {
		r.Outside = []string{"/home/someone/.bashrc"}
		r.Skipped = []admit.Skipped{{Path: "concepts/link.md", Reason: "a symbolic link"}}
	})
	if out.Verdict != cairn.Reject {
		t.Fatalf("verdict = %s, want reject", out.Verdict)
	}
	if diff := cmp.Diff([]string{"file-type/special", "outside/outside-write"}, gates(out)); diff != "" {
		t.Errorf("gates (-want +got):\n%s", diff)
	}
}

func TestSubmit_Rebase(t *testing.T) {
	t.Run("Disjoint", func(t *testing.T) {
		e := setup(t)
		base, baseTree := e.head()
		b, proposed := e.edit(baseTree, map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]]. Agent.\n"})
		// main moves meanwhile.
		e.submit(cairn.User("ada"), map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n\none\ntwo\nthree\nfour\n"}, nil)
		out, err := e.p.Submit(e.ctx, admit.Request{Route: "test", Base: base, Tree: proposed, Batch: b, Principal: cairn.Agent("x"), Message: "agent edit"})
		if err != nil {
			t.Fatal(err)
		}
		if !out.Admitted() || !out.Rebased {
			t.Fatalf("admitted %v rebased %v, want both; %v", out.Admitted(), out.Rebased, out.Findings)
		}
		_, tree := e.head()
		if !strings.Contains(e.read(tree, "concepts/a.md"), "Agent.") || !strings.Contains(e.read(tree, "concepts/b.md"), "four") {
			t.Errorf("the merged tree lacks one side's change")
		}
		// The agent's own commit is a parent of the commit that admits it.
		if len(out.Commit.Parents) != 2 || out.Commit.Principal != cairn.PrincipalSystem {
			t.Errorf("admitting commit: parents %d principal %s, want 2 and system", len(out.Commit.Parents), out.Commit.Principal)
		}
	})
	t.Run("ConflictHoldsAgent", func(t *testing.T) {
		e := setup(t)
		base, baseTree := e.head()
		b, proposed := e.edit(baseTree, map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n\none\nTWO agent\nthree\n"})
		e.submit(cairn.User("ada"), map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n\none\nTWO person\nthree\n"}, nil)
		head, _ := e.head()
		out, err := e.p.Submit(e.ctx, admit.Request{Route: "test", Base: base, Tree: proposed, Batch: b, Principal: cairn.Agent("x"), Message: "agent edit"})
		if err != nil {
			t.Fatal(err)
		}
		if out.Verdict != cairn.Hold || len(out.Conflicts) == 0 || out.Proposal == nil {
			t.Fatalf("verdict %s, %d conflicts, proposal %v; want a held proposal with conflicts", out.Verdict, len(out.Conflicts), out.Proposal)
		}
		if now, _ := e.head(); now != head {
			t.Errorf("main moved")
		}
		// Accepting cannot merge either: the review stays held with the error.
		_, err = e.p.Accept(e.ctx, out.Proposal.ID, cairn.User("bob"))
		if cairn.ErrorCode(err) != cairn.ECONFLICT {
			t.Fatalf("Accept = %v, want a conflict", err)
		}
		got, _ := e.p.Get(e.ctx, out.Proposal.ID)
		if got.Status != cairn.ProposalHeld || got.Error == "" {
			t.Errorf("after a failed accept: status %s error %q, want held with an error", got.Status, got.Error)
		}
	})
	t.Run("ConflictReturnedToPerson", func(t *testing.T) {
		e := setup(t)
		base, baseTree := e.head()
		b, proposed := e.edit(baseTree, map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n\none\nTWO mine\nthree\n"})
		e.submit(cairn.User("bob"), map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n\none\nTWO bob\nthree\n"}, nil)
		out, err := e.p.Submit(e.ctx, admit.Request{Route: "test", Base: base, Tree: proposed, Batch: b, Principal: cairn.User("ada"), Message: "edit"})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Conflicts) == 0 || out.Proposal != nil {
			t.Fatalf("%d conflicts, proposal %v; want conflicts and nothing recorded", len(out.Conflicts), out.Proposal)
		}
	})
}

// TestSubmit_OnHead: a submission whose OnHead refuses main's head ends
// before any gate with that error, and nothing is recorded; one that
// accepts it is admitted.
func TestSubmit_OnHead(t *testing.T) {
	e := setup(t)
	base, baseTree := e.head()
	b, proposed := e.edit(baseTree, map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]]. Mine.\n"})
	e.submit(cairn.User("ada"), map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]]. Moved.\n"}, nil)
	moved, _ := e.head()
	before, _ := e.p.List(e.ctx, admit.ProposalFilter{Status: "all"})
	refuse := cairn.Errorf(cairn.ECONFLICT, "moved")
	var saw []cairn.Hash
	_, err := e.p.Submit(e.ctx, admit.Request{Route: "test", Base: base, Tree: proposed, Batch: b, Principal: cairn.User("ada"), Message: "cas",
		OnHead: func(_ context.Context, head cairn.Hash) error {
			saw = append(saw, head)
			if head != base {
				return refuse
			}
			return nil
		}})
	if err != refuse || !slices.Equal(saw, []cairn.Hash{moved}) {
		t.Fatalf("Submit with OnHead refusing a moved head = %v (saw %v), want its error, seeing %s once", err, saw, moved.Short())
	}
	if ps, _ := e.p.List(e.ctx, admit.ProposalFilter{Status: "all"}); len(ps) != len(before) {
		t.Errorf("a refused submission recorded %d proposals", len(ps)-len(before))
	}
	out := e.submit(cairn.User("ada"), map[string]string{"concepts/a.md": "# A again\n"}, func(r *admit.Request) {
		r.OnHead = func(context.Context, cairn.Hash) error { return nil }
	})
	if !out.Admitted() {
		t.Errorf("a submission whose OnHead accepts the head was not admitted: %v", out.Findings)
	}
}

func TestSubmit_Replay(t *testing.T) {
	e := setup(t)
	edit := map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]]. Once.\n"}
	key := func(r *admit.Request) { r.Key = "job:7:1" }
	e.submit(cairn.Agent("x"), edit, key)
	head, _ := e.head()
	_, err := e.try(cairn.Agent("x"), map[string]string{"concepts/b.md": "x"}, key)
	if cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Fatalf("second Submit with the same key = %v, want a conflict", err)
	}
	if now, _ := e.head(); now != head {
		t.Errorf("main moved on a replay")
	}
}

func TestSubmit_Empty(t *testing.T) {
	e := setup(t)
	_, err := e.try(cairn.Agent("x"), map[string]string{}, nil)
	if !errors.Is(err, admit.ErrEmpty) {
		t.Fatalf("Submit of nothing = %v, want ErrEmpty", err)
	}
}

func TestSubmit_InvalidPolicy(t *testing.T) {
	e := setup(t)
	head, _ := e.head()
	_, err := e.try(cairn.User("ada"), map[string]string{"cairn.yaml": "agent:\n  runtme: command\n"}, nil)
	if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), "runtme") {
		t.Fatalf("Submit of a bad cairn.yaml = %v, want EINVALID naming the key", err)
	}
	if now, _ := e.head(); now != head {
		t.Errorf("main moved")
	}
}

func TestSubmit_PolicyOverride(t *testing.T) {
	e := setup(t)
	e.submit(cairn.User("ada"), map[string]string{"cairn.yaml": "verdicts:\n  deletion:\n    agent: admit\n"}, nil)
	out := e.submit(cairn.Agent("x"), map[string]string{"attachments/pic.png": ""}, nil)
	if out.Verdict != cairn.Admit {
		t.Fatalf("deletion with verdicts.deletion.agent=admit: %s %v", out.Verdict, out.Findings)
	}
}

func TestGuard(t *testing.T) {
	e := setup(t)
	head, tree := e.head()
	b, proposed := e.edit(tree, map[string]string{"concepts/a.md": "sneaky\n"})
	_, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: proposed, Principal: cairn.User("ada"), Message: "around admission"})
	if cairn.ErrorCode(err) != cairn.EINTERNAL {
		t.Fatalf("a direct commit to main = %v, want it refused", err)
	}
	if now, _ := e.head(); now != head {
		t.Errorf("main moved")
	}
	// Other branches are not guarded.
	if _, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "draft", Tree: proposed, Parents: []cairn.Hash{head}, Principal: cairn.User("ada"), Message: "draft"}); err != nil {
		t.Fatal(err)
	}
}

func TestReview(t *testing.T) {
	logEntry := &cairn.LogEntry{Op: "ingest", Subject: "paper.md", Body: "Created a page."}
	hold := func(e *env) *admit.Outcome {
		out := e.submit(cairn.Agent("command"), map[string]string{"attachments/pic.png": ""}, func(r *admit.Request) {
			r.Route, r.Log, r.Message = "ingest", logEntry, "ingest: paper.md — Created a page."
		})
		if out.Verdict != cairn.Hold {
			t.Fatalf("verdict %s, want hold", out.Verdict)
		}
		return out
	}
	t.Run("Accept", func(t *testing.T) {
		e := setup(t)
		out := hold(e)
		acc, err := e.p.Accept(e.ctx, out.Proposal.ID, cairn.User("bob"))
		if err != nil {
			t.Fatal(err)
		}
		if !acc.Admitted() || acc.Commit.Principal != cairn.User("bob") || !strings.Contains(acc.Commit.Message, "ingest (reviewed): paper.md") {
			t.Fatalf("accept: admitted %v by %s: %q", acc.Admitted(), acc.Commit.Principal, acc.Commit.Message)
		}
		_, tree := e.head()
		if _, err := e.s.Get(e.ctx, tree, "attachments/pic.png"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("the accepted deletion did not land")
		}
		if log := e.read(tree, "log.md"); !strings.Contains(log, "## [2026-11-29] ingest | paper.md\nCreated a page.\n") {
			t.Errorf("log.md = %q, want the ingest entry", log)
		}
		got, _ := e.p.Get(e.ctx, out.Proposal.ID)
		if got.Status != cairn.ProposalAccepted || got.DecidedBy != cairn.User("bob") || got.Result != acc.Commit.Hash {
			t.Errorf("proposal after accept: %s by %s result %s", got.Status, got.DecidedBy, got.Result.Short())
		}
		if _, err := e.s.Head(e.ctx, admit.ProposalBranch(out.Proposal.ID)); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("the proposal branch outlived its acceptance")
		}
		if _, err := e.p.Accept(e.ctx, out.Proposal.ID, cairn.User("bob")); cairn.ErrorCode(err) != cairn.ECONFLICT {
			t.Errorf("accepting twice = %v, want a conflict", err)
		}
	})
	t.Run("Reject", func(t *testing.T) {
		e := setup(t)
		out := hold(e)
		prop, err := e.p.Reject(e.ctx, out.Proposal.ID, cairn.User("bob"), "keep the picture")
		if err != nil {
			t.Fatal(err)
		}
		if prop.Status != cairn.ProposalRejected || prop.Reason != "keep the picture" {
			t.Errorf("rejected proposal: %s %q", prop.Status, prop.Reason)
		}
		_, tree := e.head()
		if _, err := e.s.Get(e.ctx, tree, "attachments/pic.png"); err != nil {
			t.Errorf("the rejected deletion landed")
		}
		if log := e.read(tree, "log.md"); !strings.Contains(log, "## [2026-11-29] ingest | paper.md\nRejected in review by user:bob") {
			t.Errorf("log.md = %q, want the rejection", log)
		}
		if _, err := e.s.Head(e.ctx, admit.ProposalBranch(out.Proposal.ID)); err != nil {
			t.Errorf("the rejected proposal's branch is gone: %v", err)
		}
	})
	t.Run("ErrAcceptChangedSinceJudged", func(t *testing.T) {
		e := setup(t)
		out := hold(e)
		branch := admit.ProposalBranch(out.Proposal.ID)
		ph, _ := e.s.Head(e.ctx, branch)
		pc, _ := e.s.ReadCommit(e.ctx, ph)
		b, changed := e.edit(pc.Tree, map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nDefaced after the review was shown.\n"})
		fix, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: branch, Expected: ph, Tree: changed, Principal: cairn.User("mallory"), Message: "change"})
		if err != nil {
			t.Fatal(err)
		}
		before, _ := e.head()
		if _, err := e.p.Accept(e.ctx, out.Proposal.ID, cairn.User("bob")); cairn.ErrorCode(err) != cairn.ECONFLICT {
			t.Fatalf("Accept of a proposal whose branch moved since it was judged = %v, want ECONFLICT", err)
		}
		if now, _ := e.head(); now != before {
			t.Fatalf("main moved")
		}
		// Judged again (still held: the picture), it can be accepted: what
		// is merged is what the recheck judged.
		re, err := e.p.Recheck(e.ctx, out.Proposal.ID)
		if err != nil || re.Admitted() {
			t.Fatalf("Recheck = %+v, %v; want it held again", re, err)
		}
		if got, _ := e.p.Get(e.ctx, out.Proposal.ID); got.Commit != fix.Hash {
			t.Errorf("after the recheck the proposal records commit %s, want the branch's head %s", got.Commit.Short(), fix.Hash.Short())
		}
		acc, err := e.p.Accept(e.ctx, out.Proposal.ID, cairn.User("bob"))
		if err != nil || !acc.Admitted() {
			t.Fatalf("Accept after the recheck = %+v, %v", acc, err)
		}
	})
	t.Run("Recheck", func(t *testing.T) {
		e := setup(t)
		out := hold(e)
		// A person fixes the proposal on its branch: the picture stays.
		branch := admit.ProposalBranch(out.Proposal.ID)
		ph, _ := e.s.Head(e.ctx, branch)
		pc, _ := e.s.ReadCommit(e.ctx, ph)
		b, fixed := e.edit(pc.Tree, map[string]string{"attachments/pic.png": "png", "concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[concepts/b|B]]. Fixed.\n"})
		if _, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: branch, Expected: ph, Tree: fixed, Principal: cairn.User("bob"), Message: "fix"}); err != nil {
			t.Fatal(err)
		}
		re, err := e.p.Recheck(e.ctx, out.Proposal.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !re.Admitted() {
			t.Fatalf("recheck of the fixed proposal: %s %v", re.Verdict, re.Findings)
		}
		_, tree := e.head()
		if !strings.Contains(e.read(tree, "concepts/a.md"), "Fixed.") {
			t.Errorf("the fix did not land")
		}
	})
}

func TestPolicy(t *testing.T) {
	t.Run("UnknownKey", func(t *testing.T) {
		_, err := admit.ParsePolicy([]byte("agent:\n  runtim: command\n"))
		if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), "runtim") {
			t.Fatalf("ParsePolicy = %v, want EINVALID naming the key", err)
		}
	})
	t.Run("BadValues", func(t *testing.T) {
		for _, doc := range []string{
			"agent:\n  runtime: llm\n", "agent:\n  timeout: soon\n", "sources:\n  max_size: big\n",
			"agent:\n  runtime: command\n", "verdicts:\n  deletion:\n    agent: maybe\n", "verdicts:\n  nope:\n    agent: hold\n",
			"paths:\n  protected: [../x]\n",
		} {
			if _, err := admit.ParsePolicy([]byte(doc)); cairn.ErrorCode(err) != cairn.EINVALID {
				t.Errorf("ParsePolicy(%q) = %v, want EINVALID", doc, err)
			}
		}
	})
	t.Run("SetKeepsComments", func(t *testing.T) {
		doc := "# the policy\nagent:\n  # our agent\n  runtime: extractive\n"
		out, err := admit.SetPolicy([]byte(doc), "agent.command", `my-agent --flag "two words"`)
		if err != nil {
			t.Fatal(err)
		}
		out, err = admit.SetPolicy(out, "agent.runtime", "command")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "# our agent") || !strings.Contains(string(out), "# the policy") {
			t.Errorf("comments lost:\n%s", out)
		}
		p, err := admit.ParsePolicy(out)
		if err != nil {
			t.Fatal(err)
		}
		argv, err := command.Argv(p.Agent.Command)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"my-agent", "--flag", "two words"}, argv); diff != "" || p.Runtime() != "command" {
			t.Errorf("runtime %s argv (-want +got):\n%s", p.Runtime(), diff)
		}
		out, err = admit.SetPolicy(out, "agent.timeout", "5m")
		if err != nil {
			t.Fatal(err)
		}
		p, _ = admit.ParsePolicy(out)
		if p.Timeout() != 5*time.Minute {
			t.Errorf("timeout = %v", p.Timeout())
		}
		if _, err := admit.SetPolicy(out, "agent.timeout", "soon"); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("a bad value = %v, want EINVALID", err)
		}
		if _, err := admit.SetPolicy(out, "agent.colour", "red"); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("an unknown key = %v, want EINVALID", err)
		}
		out, err = admit.SetPolicy(nil, "verdicts.deletion.agent", "admit")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := mustParse(t, out).Get("verdicts.deletion.agent"); v != "admit" {
			t.Errorf("verdicts.deletion.agent = %s", v)
		}
	})
	t.Run("Defaults", func(t *testing.T) {
		p := &admit.Policy{}
		if p.Runtime() != "extractive" || p.Timeout() != 30*time.Minute || p.Inactivity() != 180*time.Second || p.Attempts() != 3 || p.MaxSize() != 64<<20 {
			t.Errorf("defaults: %s %v %v %d %d", p.Runtime(), p.Timeout(), p.Inactivity(), p.Attempts(), p.MaxSize())
		}
	})
}

func mustParse(t *testing.T, data []byte) *admit.Policy {
	t.Helper()
	p, err := admit.ParsePolicy(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
