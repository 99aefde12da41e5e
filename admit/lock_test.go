package admit_test

import (
	"strings"
	"sync"
	"testing"

	"cairn"
	"cairn/admit"
	"cairn/index"
	"cairn/store"
)

// lockEnv is setup's vault with a pipeline whose crash points call
// onPoint and whose database counts its write transactions.
type lockEnv struct {
	*env
	ix      *index.Index
	other   *env // another pipeline on the vault, as another process has
	mu      sync.Mutex
	writes  int
	onPoint func(point string)
}

func setupLock(t *testing.T) *lockEnv {
	t.Helper()
	ctx := t.Context()
	le := &lockEnv{}
	v := openBackend(t, func() {
		le.mu.Lock()
		le.writes++
		le.mu.Unlock()
	})
	s, err := store.New(ctx, v.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	le.ix = index.New(s, v.index, nil)
	s.AddHook(le.ix.Hook())
	p := admit.New(s, le.ix, v.admit, &admit.Options{Crash: func(point string) {
		if f := le.onPoint; f != nil {
			f(point)
		}
	}})
	le.env = &env{t: t, ctx: ctx, db: v.db, s: s, p: p}
	le.other = &env{t: t, ctx: ctx, db: v.db, s: s, p: admit.New(s, le.ix, v.admit, nil)}
	le.submit(cairn.PrincipalSystem, map[string]string{
		"index.md":      "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[concepts/a|A]]\n",
		"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[index|Home]].\n",
		"log.md":        "# Log\n",
	}, nil)
	return le
}

// written returns the number of write transactions since the last call.
func (le *lockEnv) written() int {
	le.mu.Lock()
	defer le.mu.Unlock()
	n := le.writes
	le.writes = 0
	return n
}

// agentRequest is an agent's change of files on main's head as it is now.
func (le *lockEnv) agentRequest(files map[string]string) admit.Request {
	le.t.Helper()
	head, tree := le.head()
	b, proposed := le.edit(tree, files)
	return admit.Request{Route: "ingest", Base: head, Tree: proposed, Batch: b, Principal: cairn.Agent("extractive"), Message: "ingest: a page"}
}

func TestSubmit_MainMoved(t *testing.T) {
	t.Run("Rebased", func(t *testing.T) {
		le := setupLock(t)
		req := le.agentRequest(map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n"})
		// A person commits while the agent's change is judged.
		moved := 0
		le.onPoint = func(point string) {
			if point != "admit:gated:ingest" || moved > 0 {
				return
			}
			moved++
			le.other.submit(cairn.User("ada"), map[string]string{"concepts/a.md": "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[index|Home]] and [[concepts/b|B]].\n"}, nil)
		}
		out, err := le.p.Submit(le.ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !out.Admitted() || !out.Rebased {
			t.Fatalf("Submit = admitted %v, rebased %v (%s %v), want admitted and rebased", out.Admitted(), out.Rebased, out.Verdict, out.Findings)
		}
		_, tree := le.head()
		for _, path := range []string{"concepts/a.md", "concepts/b.md"} {
			e, err := le.s.Get(le.ctx, tree, path)
			if err != nil {
				t.Fatalf("main lacks %s: %v", path, err)
			}
			data, err := le.s.ReadBlob(le.ctx, e.Blob)
			if err != nil {
				t.Fatal(err)
			}
			if path == "concepts/a.md" && string(data) != "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[index|Home]] and [[concepts/b|B]].\n" {
				t.Errorf("the person's change was lost: %q", data)
			}
		}
		// Judged on the new head, the agent's page is no longer an orphan.
		for _, f := range out.Lint {
			if f.Page == "concepts/b.md" {
				t.Errorf("lint of the rebased change: %v", f)
			}
		}
	})
	t.Run("Outrun", func(t *testing.T) {
		// Main moves while the change is judged, every time it is judged
		// without the lock: after three such judgements it is judged and
		// decided in one write transaction, which nothing outruns.
		le := setupLock(t)
		req := le.agentRequest(map[string]string{"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[index|Home]].\n"})
		moves := 0
		le.onPoint = func(point string) {
			if point != "admit:gated:ingest" {
				return
			}
			moves++
			le.other.submit(cairn.User("ada"), map[string]string{"notes/n.md": "---\ntitle: N\n---\n# N " + string(rune('a'+moves)) + "\n"}, nil)
		}
		req.Key = "job:1"
		out, err := le.p.Submit(le.ctx, req)
		le.onPoint = nil
		if err != nil || out.Verdict != cairn.Hold || !out.Rebased {
			t.Fatalf("Submit with main moving at every judgement without the lock: %+v, %v; want it judged on the last head (held: an orphan page)", out, err)
		}
		if moves != 3 {
			t.Errorf("main moved %d times, want 3 (the judgements before the locked one)", moves)
		}
		head, err := le.s.Head(le.ctx, admit.Branch)
		if err != nil {
			t.Fatal(err)
		}
		c, err := le.s.ReadCommit(le.ctx, head)
		if err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]string{"notes/n.md": "# N d"} {
			e, err := le.s.Get(le.ctx, c.Tree, path)
			if err != nil {
				t.Fatalf("main lacks %s: %v", path, err)
			}
			data, _ := le.s.ReadBlob(le.ctx, e.Blob)
			if !strings.Contains(string(data), want) {
				t.Errorf("%s in main = %q, want it to hold %q", path, data, want)
			}
		}
		props, err := le.p.List(le.ctx, admit.ProposalFilter{Status: "all"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, pr := range props {
			if pr.Key == "job:1" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("the change is recorded %d times, want once", n)
		}
	})
}

// TestSubmit_Held checks what a held change leaves: the index as main
// has it (the lint gate judged it on a snapshot, writing nothing), the
// proposal and its branch recorded by the one write transaction it takes,
// and a replay of its key refused before any write.
func TestSubmit_Held(t *testing.T) {
	le := setupLock(t)
	before, err := le.ix.State(le.ctx)
	if err != nil {
		t.Fatal(err)
	}
	findings, err := le.ix.Main().Findings(le.ctx, index.FindingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	req := le.agentRequest(map[string]string{
		"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[no such page]].\n",
		"index.md":      "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[concepts/a|A]]\n- [[concepts/b|B]]\n",
	})
	le.written()
	out, err := le.p.Submit(le.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != cairn.Hold || out.Proposal == nil || out.Proposal.Status != cairn.ProposalHeld {
		t.Fatalf("Submit = %s %v, want held", out.Verdict, out.Findings)
	}
	if len(out.Lint) == 0 {
		t.Errorf("the held change has no lint findings: %v", out.Findings)
	}
	if n := le.written(); n != 1 {
		t.Errorf("a held change took %d write transactions, want 1 (recorded; judged without the lock)", n)
	}
	// The index update lint needed is undone: the index is main's.
	after, err := le.ix.State(le.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("index state after a held change = %v, want %v", after, before)
	}
	now, err := le.ix.Main().Findings(le.ctx, index.FindingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(now) != len(findings) {
		t.Errorf("main's findings after a held change: %v, want %v", now, findings)
	}
	if _, err := le.s.Head(le.ctx, admit.ProposalBranch(out.Proposal.ID)); err != nil {
		t.Errorf("the held proposal's branch: %v", err)
	}
	// Its replay is refused before anything is judged.
	if _, err := le.p.Submit(le.ctx, admit.Request{Key: out.Proposal.Key, Route: req.Route, Base: req.Base, Tree: req.Tree,
		Principal: req.Principal, Message: req.Message}); cairn.ErrorCode(err) != cairn.ECONFLICT {
		t.Errorf("Submit of a key submitted before: %v, want ECONFLICT", err)
	}
	if n := le.written(); n != 0 {
		t.Errorf("a refused replay took %d write transactions, want 0", n)
	}
}

// TestSubmit_AdmittedFromPreview: an admitted change is judged on a
// snapshot and committed in one write transaction that makes the
// preview's index writes; when the index is rebuilt between the two (every
// file gets a new id), the write transaction judges it again by updating
// the index itself. Either way the index is the one a rebuild gives.
func TestSubmit_AdmittedFromPreview(t *testing.T) {
	for _, rebuilt := range []bool{false, true} {
		name := "current"
		if rebuilt {
			name = "rebuilt"
		}
		t.Run(name, func(t *testing.T) {
			le := setupLock(t)
			req := le.agentRequest(map[string]string{
				"concepts/b.md": "---\ntitle: B\ntype: concept\n---\n# B\n\nSee [[concepts/a|A]].\n",
				"index.md":      "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[concepts/a|A]]\n- [[concepts/b|B]]\n",
			})
			if rebuilt {
				le.onPoint = func(point string) {
					if point == "admit:gated:ingest" {
						le.onPoint = nil
						if err := le.ix.Rebuild(le.ctx); err != nil {
							t.Error(err)
						}
					}
				}
			}
			req.Route = "ingest"
			le.written()
			out, err := le.p.Submit(le.ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if rebuilt {
				le.written() // the rebuild's
			}
			if !out.Admitted() {
				t.Fatalf("Submit = %s %v, want admitted", out.Verdict, out.Findings)
			}
			if n := le.written(); !rebuilt && n != 1 {
				t.Errorf("an admitted change took %d write transactions, want 1", n)
			}
			if len(out.Lint) != 0 {
				t.Errorf("lint of the admitted change = %v, want none", out.Lint)
			}
			head, _ := le.head()
			st, err := le.ix.State(le.ctx)
			if err != nil || st.Commit != head {
				t.Fatalf("index state %v (%v), want main's head %s", st, err, head.Short())
			}
			d, err := le.ix.Check(le.ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if !d.OK() {
				t.Fatalf("the index after admission differs from a rebuild: %v", d.Problems)
			}
		})
	}
}
