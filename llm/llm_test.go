package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"cairn/internal/llmtest"
	"cairn/llm"
)

// provider is one API and the server speaking it.
type provider struct {
	name   string
	server func(testing.TB, llmtest.Script) *llmtest.Server
	base   string
}

var providers = []provider{
	{"anthropic", llmtest.Anthropic, ""},
	{"openai", llmtest.Chat, llmtest.OpenAIBase},
}

func newProvider(t *testing.T, p provider, srv *llmtest.Server, retries int) llm.Provider {
	t.Helper()
	pr, err := llm.New(llm.Config{Provider: p.name, BaseURL: srv.URL + p.base, Key: "sk-test", Model: "test-model", MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

var tools = []llm.Tool{
	{Name: "search", Description: "Full-text search", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)},
	{Name: "read_page", Description: "Read a page", Schema: json.RawMessage(`{"type":"object","properties":{"page":{"type":"string"}},"required":["page"]}`)},
}

func ask(text string) []llm.Message {
	return []llm.Message{{Role: "user", Content: []llm.Block{{Type: "text", Text: text}}}}
}

// TestConversation: a text answer, parallel tool calls, and the next turn
// with their results, on each API, streamed.
func TestConversation(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.server(t, llmtest.Script{
				{Text: "Let me look.", Calls: []llmtest.Call{
					{Tool: "search", Args: func(*llmtest.Request) any { return map[string]any{"query": "ink"} }},
					{Tool: "read_page", Args: func(*llmtest.Request) any { return map[string]any{"page": "index"} }},
				}},
				{Text: "Ink is oil-based."},
			})
			pr := newProvider(t, p, srv, -1)
			ctx := context.Background()
			req := &llm.Request{System: "You answer from the vault.", Messages: ask("What is ink?"), Tools: tools}
			res, err := pr.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			calls := res.Calls()
			if res.StopReason != llm.StopToolUse || len(calls) != 2 || calls[0].Name != "search" || calls[1].Name != "read_page" {
				t.Fatalf("first turn: stop %q, calls %+v", res.StopReason, calls)
			}
			var args map[string]string
			if err := json.Unmarshal(calls[0].Input, &args); err != nil || args["query"] != "ink" {
				t.Errorf("search's arguments: %s", calls[0].Input)
			}
			if res.Text() != "Let me look." || res.Usage.Input == 0 || res.Usage.Output == 0 {
				t.Errorf("first turn: text %q, usage %+v", res.Text(), res.Usage)
			}
			req.Messages = append(req.Messages, llm.Message{Role: "assistant", Content: res.Content}, llm.Message{Role: "user", Content: []llm.Block{
				{Type: "tool_result", ID: calls[0].ID, Text: "concepts/ink.md"},
				{Type: "tool_result", ID: calls[1].ID, Text: "no such page", IsError: true},
			}})
			res, err = pr.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != llm.StopEnd || res.Text() != "Ink is oil-based." || len(res.Calls()) != 0 {
				t.Errorf("second turn: stop %q, text %q", res.StopReason, res.Text())
			}
			reqs := srv.Main()
			if len(reqs) != 2 || !reqs[0].Stream || reqs[1].Turn != 1 || len(reqs[1].Results) != 2 {
				t.Fatalf("the server saw %d requests", len(reqs))
			}
			if !strings.Contains(reqs[1].Results[0], "concepts/ink.md") || !strings.Contains(reqs[0].System, "You answer from the vault.") {
				t.Errorf("the server got results %q, system %q", reqs[1].Results, reqs[0].System)
			}
			if got := reqs[0].Tools; len(got) != 2 {
				t.Errorf("tools offered: %v", got)
			}
		})
	}
}

// TestErrors: what a provider's failures become, after the retries that
// the SDKs make honouring Retry-After.
func TestErrors(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				script  llmtest.Script
				retries int
				kind    string // "" for success
				calls   int    // requests the server gets
				wait    time.Duration
			}{
				{"Unauthorized", llmtest.Script{{Status: 401, Text: "invalid x-api-key"}}, 2, llm.ErrAuth, 1, 0},
				{"RateLimitedOnce", llmtest.Script{{Status: 429, RetryAfter: "1", Times: 1, Text: "slow down"}, {Text: "ok"}}, 2, "", 2, 900 * time.Millisecond},
				{"RateLimitedForever", llmtest.Script{{Status: 429, RetryAfter: "0", Text: "slow down"}}, 1, llm.ErrRate, 2, 0},
				{"ServerErrorOnce", llmtest.Script{{Status: 500, RetryAfter: "0", Times: 1, Text: "boom"}, {Text: "ok"}}, 2, "", 2, 0},
				{"ServerError", llmtest.Script{{Status: 500, RetryAfter: "0", Text: "boom"}}, 1, llm.ErrServer, 2, 0},
				{"Malformed", llmtest.Script{{Raw: "data: {\"type\": \"message_start\", \"message\": \n\ndata: not json\n\n"}}, 0, llm.ErrStream, 1, 0},
				{"Empty", llmtest.Script{{Raw: "\n"}}, 0, llm.ErrStream, 1, 0},
			} {
				t.Run(tc.name, func(t *testing.T) {
					srv := p.server(t, tc.script)
					pr := newProvider(t, p, srv, tc.retries)
					began := time.Now()
					res, err := pr.Complete(context.Background(), &llm.Request{Messages: ask("hi"), Tools: tools})
					var e *llm.Error
					switch {
					case tc.kind == "" && err != nil:
						t.Fatalf("Complete = %v, want success", err)
					case tc.kind == "" && res.Text() != "ok":
						t.Errorf("text %q, want ok", res.Text())
					case tc.kind != "" && (!errors.As(err, &e) || e.Kind != tc.kind):
						t.Fatalf("Complete = %v (%#v), want an *llm.Error of kind %s", err, e, tc.kind)
					}
					if got := len(srv.Requests()); got != tc.calls {
						t.Errorf("the server got %d requests, want %d", got, tc.calls)
					}
					if d := time.Since(began); d < tc.wait {
						t.Errorf("took %s: Retry-After (%s) was not honoured", d, tc.wait)
					}
				})
			}
		})
	}
}

// TestCancel: cancelling the context stops a stream that stalls, at once.
func TestCancel(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
			if p.name == "openai" {
				start = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"I\"},\"finish_reason\":null}]}\n\n"
			}
			srv := p.server(t, llmtest.Script{{Raw: start, Hang: true}})
			pr := newProvider(t, p, srv, -1)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			began := time.Now()
			_, err := pr.Complete(ctx, &llm.Request{Messages: ask("hi"), Tools: tools})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Complete = %v, want context.Canceled", err)
			}
			if d := time.Since(began); d > 2*time.Second {
				t.Errorf("the stream stopped %s after it began, not at once", d)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, cfg := range []llm.Config{
		{Provider: "anthropic"},
		{Provider: "gemini", Model: "m"},
	} {
		if _, err := llm.New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error", cfg)
		}
	}
}
