package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"cairn"
	"cairn/agent"
	"cairn/app"
	"cairn/internal/vaultgen"
	"cairn/llm"
	"cairn/mcpserver"
)

// stepper is a model that answers at once: each turn it reads a page, or
// searches, or writes one; it never finishes (the loop's step limit
// ends the run).
type stepper struct {
	v *vaultgen.Vault
	n int
}

func (s *stepper) Name() string  { return "bench" }
func (s *stepper) Model() string { return "instant" }

func (s *stepper) Complete(ctx context.Context, r *llm.Request) (*llm.Response, error) {
	s.n++
	var name string
	var args any
	switch s.n % 3 {
	case 0:
		name, args = "read_page", map[string]any{"id": s.v.Path((s.n * 7919) % len(s.v.Titles()))}
	case 1:
		name, args = "search", map[string]any{"query": s.v.Titles()[(s.n*104729)%len(s.v.Titles())]}
	default:
		name, args = "write_page", map[string]any{"path": fmt.Sprintf("notes/bench-%d.md", s.n), "content": "---\ntitle: Bench " + strconv.Itoa(s.n) + "\ntype: note\n---\n\nA page.\n", "expected_hash": ""}
	}
	in, _ := json.Marshal(args)
	return &llm.Response{StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 100, Output: 20},
		Content: []llm.Block{{Type: "tool_use", ID: "c" + strconv.Itoa(s.n), Name: name, Input: in}}}, nil
}

// BenchmarkLoopStep measures the built-in agent's own cost per step, the
// model excluded (it answers at once): building the request, recording
// the step, and one call of cairn's MCP tools on the job's draft, in
// process — a read_page, a search or a write_page in turn, the draft
// growing by a page every third step. 10k pages ($CAIRN_BENCH_PAGES to
// change it); ms/step is what issue 16 bounds (≤ 5 ms).
func BenchmarkLoopStep(b *testing.B) {
	ctx := context.Background()
	pages := 10000
	if n, err := strconv.Atoi(os.Getenv("CAIRN_BENCH_PAGES")); err == nil && n > 0 {
		pages = n
	}
	gen := vaultgen.New(vaultgen.Config{Pages: pages})
	dir := b.TempDir()
	if err := gen.WriteDir(ctx, dir); err != nil {
		b.Fatal(err)
	}
	a, err := app.Init(ctx, dir, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	res, err := a.Adopt(cairn.NewContextWithPrincipal(ctx, "user:bench"), "adopt")
	if err != nil {
		b.Fatal(err)
	}
	drafts := mcpserver.AgentDrafts("bench", nil)(a)
	const steps = 30
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		tb, err := drafts(ctx, res.Commit.Hash, agent.ToolsOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var errs []string
		loop := &agent.Loop{Provider: &stepper{v: gen}, Tools: tb, MaxSteps: steps, Repeats: steps,
			Activity: func(kind, text string) {
				if kind == "error" {
					errs = append(errs, text)
				}
			}}
		began := time.Now()
		out, err := loop.Run(ctx, "system", "prompt")
		total += time.Since(began)
		if f, ok := agent.IsFailure(err); !ok || len(out.Steps) != steps {
			b.Fatalf("the loop ended with %v after %d steps, want the step limit", f, len(out.Steps))
		}
		if len(errs) > 0 {
			b.Fatalf("tool calls failed: %q", errs)
		}
		tb.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N*steps), "ms/step")
}

// TestLoopOnDraft runs the loop with the instant model on a small vault:
// every read, search and write through cairn's tools on the draft
// succeeds, and the draft holds what was written (run it with -race too).
func TestLoopOnDraft(t *testing.T) {
	ctx := context.Background()
	gen := vaultgen.New(vaultgen.Config{Pages: 200})
	dir := t.TempDir()
	if err := gen.WriteDir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	a, err := app.Init(ctx, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Adopt(cairn.NewContextWithPrincipal(ctx, "user:test"), "adopt")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := mcpserver.AgentDrafts("test", nil)(a)(ctx, res.Commit.Hash, agent.ToolsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var errs []string
	loop := &agent.Loop{Provider: &stepper{v: gen}, Tools: tb, MaxSteps: 9, Repeats: 9,
		Activity: func(kind, text string) {
			if kind == "error" {
				errs = append(errs, text)
			}
		}}
	out, err := loop.Run(ctx, "system", "prompt")
	if _, ok := agent.IsFailure(err); !ok || len(out.Steps) != 9 || len(errs) > 0 {
		t.Fatalf("the loop ended with %v after %d steps; tool errors %q", err, len(out.Steps), errs)
	}
	if out.Usage.Turns != 9 || out.Usage.InputTokens != 900 {
		t.Errorf("usage %+v, want 9 turns and 900 tokens in", out.Usage)
	}
	s := a.Vault().Store
	b := s.NewBatch()
	tree, changed, err := tb.Tree(ctx, b)
	if err != nil || !changed {
		t.Fatalf("the draft's tree: changed %t, %v", changed, err)
	}
	for _, p := range []string{"notes/bench-2.md", "notes/bench-5.md", "notes/bench-8.md"} {
		if _, err := b.Get(ctx, tree, p); err != nil {
			t.Errorf("the draft lacks %s: %v", p, err)
		}
	}
}
