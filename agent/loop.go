package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cairn"
	"cairn/llm"
	"cairn/store"
)

// Toolbox is what the built-in agent works with: cairn's MCP tools on a
// draft of the job's change (package mcpserver serves them, in process),
// and the tree the draft makes when the agent is done. It has no file
// system and no shell.
type Toolbox interface {
	// Tools lists the tools the model may call.
	Tools(ctx context.Context) ([]llm.Tool, error)
	// Call calls one; isError marks a result that is the tool's error, for
	// the model to read. err is the infrastructure's.
	Call(ctx context.Context, name string, args json.RawMessage) (text string, isError bool, err error)
	// Tree writes the draft's tree into b; changed says whether the agent
	// changed anything.
	Tree(ctx context.Context, b *store.Batch) (tree cairn.Hash, changed bool, err error)
	// Close ends the tools' session.
	Close() error
}

// DraftTools opens a Toolbox on a new draft of the commit base: what the
// worker hands a runtime that works through cairn's tools (Env.Drafts).
type DraftTools func(ctx context.Context, base cairn.Hash, opts ToolsOptions) (Toolbox, error)

// ToolsOptions narrow a Toolbox.
type ToolsOptions struct {
	// ReadOnly offers only the tools that read (to answer a question).
	ReadOnly bool
	// Scope, when set, is a working set: the paths of the only pages the
	// tools read (and the vault's index and rules).
	Scope []string
}

// Step is one model call of a run, as recorded with the job.
type Step struct {
	N           int
	Provider    string
	Model       string
	Usage       llm.Usage
	Latency     time.Duration
	Stop        string // llm.StopEnd, ...; "" when the call failed
	RequestHash string
	Err         string
}

// String says it in a line.
func (s Step) String() string {
	line := fmt.Sprintf("step %d: %s %s, %d tokens in, %d out, %d ms", s.N, s.Provider, s.Model,
		s.Usage.Input, s.Usage.Output, s.Latency.Milliseconds())
	if s.Stop != "" {
		line += ", " + s.Stop
	}
	line += ", request " + s.RequestHash
	if s.Err != "" {
		line += ", error: " + s.Err
	}
	return line
}

// Loop is the built-in agent's tool loop: ask the model, call the tools it
// calls, give it their results, until it answers without a call or a
// limit stops it.
type Loop struct {
	Provider llm.Provider
	Tools    Toolbox
	// MaxSteps bounds the model calls. Default 40.
	MaxSteps int
	// MaxTokens bounds the tokens read and written over the run. 0: none.
	MaxTokens int64
	// PriceIn and PriceOut are US dollars per million input and output
	// tokens; with Budget (US dollars) they bound the run's cost.
	PriceIn, PriceOut, Budget float64
	// ResultBytes cuts each tool result to this many bytes. Default 16 KiB.
	ResultBytes int
	// Repeats is how often the same call (tool and arguments) may be
	// made before the loop stops. Default 3.
	Repeats int
	// Activity receives what the agent does (Task.Activity's kinds, and
	// "step" for each model call).
	Activity func(kind, text string)
}

// Outcome is what a loop run gave.
type Outcome struct {
	// Text is the model's final answer.
	Text  string
	Steps []Step
	Usage Usage
}

// Run runs the loop on a system prompt and a first user message. A limit
// reached, a repeated call, a provider that refused the key, rate limited
// it past the retries or refused the request are *Failure (the agent's
// own: not retried); a provider that failed, could not be reached or
// broke its stream is the infrastructure's error (the job's next attempt
// may get past it). A cancelled context stops the model's stream at once.
func (l *Loop) Run(ctx context.Context, system, prompt string) (*Outcome, error) {
	maxSteps := l.MaxSteps
	if maxSteps <= 0 {
		maxSteps = 40
	}
	resultBytes := l.ResultBytes
	if resultBytes <= 0 {
		resultBytes = 16 << 10
	}
	repeats := l.Repeats
	if repeats <= 0 {
		repeats = 3
	}
	tools, err := l.Tools.Tools(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the agent's tools: %w", err)
	}
	out := &Outcome{}
	req := &llm.Request{System: system, Tools: tools,
		Messages: []llm.Message{{Role: "user", Content: []llm.Block{{Type: "text", Text: prompt}}}}}
	seen := map[[32]byte]int{}
	for n := 1; ; n++ {
		if n > maxSteps {
			return out, &Failure{Reason: "agent", Message: fmt.Sprintf("the agent reached its step limit (%d model calls; agent.turns) before it finished", maxSteps)}
		}
		began := time.Now()
		step := Step{N: n, Provider: l.Provider.Name(), Model: l.Provider.Model(), RequestHash: req.Hash()}
		res, err := l.Provider.Complete(ctx, req)
		step.Latency = time.Since(began)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			step.Err = err.Error()
			l.record(out, step)
			return out, modelFailure(err)
		}
		step.Stop, step.Usage = res.StopReason, res.Usage
		if res.Model != "" {
			step.Model = res.Model
		}
		l.record(out, step)
		if t := strings.TrimSpace(res.Text()); t != "" {
			l.activity("text", t)
		}
		if why := l.over(out); why != "" {
			return out, &Failure{Reason: "agent", Message: why}
		}
		calls := res.Calls()
		if len(calls) == 0 {
			switch res.StopReason {
			case llm.StopMaxTokens:
				return out, &Failure{Reason: "agent", Message: "the model ran out of output tokens before it finished"}
			case llm.StopRefusal:
				return out, &Failure{Reason: "agent", Message: "the model refused the task"}
			}
			out.Text = res.Text()
			return out, nil
		}
		req.Messages = append(req.Messages, llm.Message{Role: "assistant", Content: res.Content})
		var results []llm.Block
		for _, c := range calls {
			key := sha256.Sum256(append([]byte(c.Name+"\x00"), c.Input...))
			seen[key]++
			if seen[key] > repeats {
				return out, &Failure{Reason: "agent", Message: fmt.Sprintf("the agent called %s with the same arguments %d times: it is going round in circles", c.Name, seen[key])}
			}
			l.activity("tool", c.Name+" "+clip(string(c.Input), 300))
			text, isErr, err := l.call(ctx, c)
			if err != nil {
				return out, err
			}
			if isErr {
				l.activity("error", c.Name+": "+clip(text, 300))
			}
			if len(text) > resultBytes {
				text = clip(text, resultBytes) + fmt.Sprintf("\n… (cut: the result had %d bytes; ask for less)", len(text))
			}
			results = append(results, llm.Block{Type: "tool_result", ID: c.ID, Text: text, IsError: isErr})
		}
		req.Messages = append(req.Messages, llm.Message{Role: "user", Content: results})
	}
}

// call calls one tool, refusing arguments that are not a JSON object.
func (l *Loop) call(ctx context.Context, c llm.Block) (string, bool, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(c.Input, &args); err != nil {
		return fmt.Sprintf("the arguments of %s are not a JSON object: %s", c.Name, clip(string(c.Input), 200)), true, nil
	}
	text, isErr, err := l.Tools.Call(ctx, c.Name, c.Input)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		return "", false, fmt.Errorf("call the tool %s: %w", c.Name, err)
	}
	return text, isErr, nil
}

// record adds a step to the outcome and its usage, and shows it.
func (l *Loop) record(out *Outcome, s Step) {
	out.Steps = append(out.Steps, s)
	out.Usage.Turns++
	out.Usage.InputTokens += s.Usage.Input
	out.Usage.OutputTokens += s.Usage.Output
	out.Usage.CachedTokens += s.Usage.Cached
	out.Usage.CostUSD = (float64(out.Usage.InputTokens)*l.PriceIn + float64(out.Usage.OutputTokens)*l.PriceOut) / 1e6
	l.activity("step", s.String())
}

// over says which limit the run is over, or "".
func (l *Loop) over(out *Outcome) string {
	u := out.Usage
	if l.MaxTokens > 0 && u.InputTokens+u.OutputTokens > l.MaxTokens {
		return fmt.Sprintf("the agent used %d tokens, more than its limit of %d (agent.max_tokens)", u.InputTokens+u.OutputTokens, l.MaxTokens)
	}
	if l.Budget > 0 && u.CostUSD > l.Budget {
		return fmt.Sprintf("the agent cost $%.4f, more than its budget of $%g (agent.budget)", u.CostUSD, l.Budget)
	}
	return ""
}

func (l *Loop) activity(kind, text string) {
	if l.Activity != nil {
		l.Activity(kind, text)
	}
}

// modelFailure is the failure of a run whose model call failed.
func modelFailure(err error) error {
	var e *llm.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Kind {
	case llm.ErrAuth:
		return &Failure{Reason: "agent", Message: fmt.Sprintf("the model provider refused the key (%d: %s): check agent.key_env and agent.base_url", e.Status, clip(e.Message, 200))}
	case llm.ErrRate:
		return &Failure{Reason: "agent", Message: "the model provider kept answering 429 (rate limited) after the retries: try again later"}
	case llm.ErrRequest:
		return &Failure{Reason: "agent", Message: clip(e.Error(), 500)}
	}
	// The provider failed, could not be reached or broke its stream:
	// the infrastructure's, which the job's next attempt may get past.
	return fmt.Errorf("built-in agent: %w", err)
}
