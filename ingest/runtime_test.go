package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"cairn"
	"cairn/admit"
	"cairn/agent"
	"cairn/ingest"
	"cairn/store"

	// The runtimes cairn ships, for the tests that name them in cairn.yaml.
	_ "cairn/agent/command"
	_ "cairn/agent/extractive"
)

// The echo runtime exists only in this test binary: it registers itself
// the way a runtime's package does, and neither admit nor ingest knows it.
func init() {
	agent.Register(agent.Factory{
		Name: "echo",
		Help: "a test runtime that writes one fixed page",
		Validate: func(s agent.Settings) error {
			if s.Command != "" {
				return cairn.Errorf(cairn.EINVALID, "the echo runtime takes no agent.command").
					WithHint("Try: cairn settings set agent.command ''")
			}
			return nil
		},
		New: func(env agent.Env) (agent.Runtime, error) { return &echo{store: env.Store}, nil },
	})
}

// echo writes concepts/echo.md, which links to a seed page, and lists it
// in index.md: a change the gates admit.
type echo struct{ store *store.Store }

func (e *echo) Name() string { return "echo" }

func (e *echo) Run(ctx context.Context, t *agent.Task) (*agent.Result, error) {
	c, err := e.store.ReadCommit(ctx, t.Base)
	if err != nil {
		return nil, err
	}
	ent, err := e.store.Get(ctx, c.Tree, "index.md")
	if err != nil {
		return nil, err
	}
	index, err := e.store.ReadBlob(ctx, ent.Blob)
	if err != nil {
		return nil, err
	}
	index = bytes.Replace(index, []byte("- [[concepts/type|"), []byte("- [[concepts/echo|Echo]]\n- [[concepts/type|"), 1)
	b := e.store.NewBatch()
	tree, err := b.Edit(ctx, c.Tree, []store.FileChange{
		{Path: "concepts/echo.md", Data: []byte(page("Echo", "It heard "+t.Source.Path+". See [[concepts/paper|Paper]]."))},
		{Path: "index.md", Data: index},
	})
	if err != nil {
		return nil, err
	}
	if t.Activity != nil {
		t.Activity("file", "concepts/echo.md")
	}
	return &agent.Result{Batch: b, Tree: tree, Summary: "The echo agent wrote concepts/echo.md.", Mode: "store"}, nil
}

// TestIngest_RegisteredRuntime proves that a runtime is added by
// registering it: the echo runtime, registered by this test package
// alone, is accepted by the policy's validation (as cairn settings set
// checks it), its own validation is applied, and the worker runs it end to
// end, its change admitted under its name.
func TestIngest_RegisteredRuntime(t *testing.T) {
	t.Run("Settings", func(t *testing.T) {
		out, err := admit.SetPolicy(nil, "agent.runtime", "echo")
		if err != nil {
			t.Fatalf("SetPolicy(agent.runtime, echo) = %v, want it accepted", err)
		}
		p, err := admit.ParsePolicy(out)
		if err != nil || p.Runtime() != "echo" {
			t.Fatalf("ParsePolicy(%q) = %v, %v; want runtime echo", out, p, err)
		}
		withCommand, err := admit.SetPolicy(nil, "agent.command", "my-agent")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admit.SetPolicy(withCommand, "agent.runtime", "echo"); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("SetPolicy(agent.runtime, echo) with a command = %v, want EINVALID from echo's own Validate", err)
		}
	})
	t.Run("Runs", func(t *testing.T) {
		var (
			mu       sync.Mutex
			activity []string
		)
		e := setup(t, "agent:\n  runtime: echo\n", func(o *ingest.Options) {
			o.Activity = func(_ *ingest.Source, kind, text string) {
				mu.Lock()
				defer mu.Unlock()
				activity = append(activity, kind+" "+text)
			}
		})
		added := e.ingest(e.file("fabriano.md", article))
		src := added[0].Source
		if src.Status != ingest.Merged {
			t.Fatalf("status %s (error %q), want %s", src.Status, src.Error, ingest.Merged)
		}
		p := e.proposal(src)
		if p.Principal != cairn.Agent("echo") || p.Status != cairn.ProposalAdmitted {
			t.Errorf("proposal by %s is %s, want by %s, admitted", p.Principal, p.Status, cairn.Agent("echo"))
		}
		if got, want := e.read("concepts/echo.md"), page("Echo", "It heard raw/fabriano.md. See [[concepts/paper|Paper]]."); got != want {
			t.Errorf("concepts/echo.md = %q, want %q", got, want)
		}
		mu.Lock()
		defer mu.Unlock()
		want := []string{"file concepts/echo.md"}
		if !slices.Equal(activity, want) {
			t.Errorf("activity = %q, want %q", activity, want)
		}
		// Every process records the activity as events, before the verdict.
		evs, err := e.v.Admit.Events(e.ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var kinds, recorded []string
		for _, ev := range evs {
			if ev.Subject != src.ID {
				continue
			}
			kinds = append(kinds, ev.Kind)
			if ev.Kind == "ingest.activity" {
				recorded = append(recorded, string(ev.Data))
			}
		}
		wantRecorded := []string{fmt.Sprintf(`{"activity":"file","attempt":1,"job":%d,"text":"concepts/echo.md"}`, src.Job)}
		if !slices.Equal(recorded, wantRecorded) {
			t.Errorf("recorded activity = %q, want %q", recorded, wantRecorded)
		}
		if i, j := slices.Index(kinds, "ingest.activity"), slices.Index(kinds, "ingest.merged"); i < 0 || j < i {
			t.Errorf("events of the source = %q, want the activity before ingest.merged", kinds)
		}
	})
}

// fickleBroken makes the fickle runtime's settings invalid: a cairn.yaml
// admitted while it was valid then no longer parses, as one a newer cairn
// wrote would not for this one.
var fickleBroken atomic.Bool

func init() {
	agent.Register(agent.Factory{
		Name: "fickle",
		Help: "a test runtime whose settings stop being valid",
		Validate: func(agent.Settings) error {
			if fickleBroken.Load() {
				return cairn.Errorf(cairn.EINVALID, "the fickle runtime is not known here")
			}
			return nil
		},
		New: func(env agent.Env) (agent.Runtime, error) { return &echo{store: env.Store}, nil },
	})
}

// TestIngest_PolicyDoesNotParse: when main's cairn.yaml no longer parses,
// the worker fails the source with the reason and a hint, and runs no
// agent in place of the one the vault names (the default extractive one
// would have run before).
func TestIngest_PolicyDoesNotParse(t *testing.T) {
	e := setup(t, "agent:\n  runtime: fickle\n")
	fickleBroken.Store(true)
	defer fickleBroken.Store(false)
	added := e.ingest(e.file("fabriano.md", article))
	src := added[0].Source
	if src.Status != ingest.Failed {
		t.Fatalf("status %s (error %q), want %s", src.Status, src.Error, ingest.Failed)
	}
	if !strings.Contains(src.Error, "cairn.yaml") || !strings.Contains(src.Error, "fickle") {
		t.Errorf("error %q, want it to name cairn.yaml and why it does not parse", src.Error)
	}
	if !strings.Contains(src.Hint, "cairn sources retry") {
		t.Errorf("hint %q, want how to retry", src.Hint)
	}
	props, err := e.v.Admit.List(e.ctx, admit.ProposalFilter{Status: "all"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range props {
		if p.Source == src.ID {
			t.Errorf("an agent ran for the source: proposal %d by %s", p.ID, p.Principal)
		}
	}
}
