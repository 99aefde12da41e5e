package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn/llm"
)

// rawServer answers every request with the answers in turn (the last
// repeating), counting the requests and keeping the last one's header
// and body.
type rawServer struct {
	*httptest.Server
	n      atomic.Int32
	header atomic.Value // http.Header
	body   atomic.Value // []byte
}

type answer struct {
	status int
	header map[string]string
	body   string
}

func serveRaw(t *testing.T, answers ...answer) *rawServer {
	t.Helper()
	s := &rawServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(s.n.Add(1)) - 1
		body, _ := io.ReadAll(r.Body)
		s.body.Store(body)
		s.header.Store(r.Header.Clone())
		a := answers[min(i, len(answers)-1)]
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		if a.status == 0 {
			w.Header().Set("Content-Type", "text/event-stream")
			a.status = 200
		}
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func complete(t *testing.T, provider, url string, retries int) (*llm.Response, error) {
	t.Helper()
	pr, err := llm.New(llm.Config{Provider: provider, BaseURL: url, Key: "sk-test", Model: "m", MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a wait not cut short fails, not hangs
	defer cancel()
	return pr.Complete(ctx, &llm.Request{System: "sys", Messages: ask("hi"), Tools: tools})
}

// TestChatStreamPieces: a Chat Completions stream as OpenAI sends it —
// the text in pieces, two tool calls whose arguments arrive in pieces
// interleaved by index, usage in a last chunk without choices, CRLF line
// ends and a comment — is put together whole.
func TestChatStreamPieces(t *testing.T) {
	chunk := func(delta string, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\r\n\r\n"
	}
	body := ": keep-alive\r\n\r\n" +
		chunk(`{"role":"assistant","content":"Let "}`, "") +
		chunk(`{"content":"me look."}`, "") +
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":""}}]}`, "") +
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_page","arguments":"{\"pa"}}]}`, "") +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]}`, "") +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"ink\"}"}}]}`, "") +
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"ge\":\"index\"}"}}]}`, "") +
		chunk(`{}`, "tool_calls") +
		`data: {"id":"c","object":"chat.completion.chunk","model":"gpt-x","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":100}}}` + "\r\n\r\n" +
		"data: [DONE]\r\n\r\n"
	srv := serveRaw(t, answer{body: body})
	res, err := complete(t, "openai", srv.URL+"/v1", 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := res.Calls()
	if res.Text() != "Let me look." || res.StopReason != llm.StopToolUse || res.Model != "gpt-x" || len(calls) != 2 {
		t.Fatalf("response: text %q, stop %q, model %q, calls %+v", res.Text(), res.StopReason, res.Model, calls)
	}
	if calls[0].ID != "call_a" || calls[0].Name != "search" || string(calls[0].Input) != `{"query":"ink"}` ||
		calls[1].ID != "call_b" || calls[1].Name != "read_page" || string(calls[1].Input) != `{"page":"index"}` {
		t.Errorf("calls: %+v", calls)
	}
	if res.Usage != (llm.Usage{Input: 120, Output: 30, Cached: 100}) {
		t.Errorf("usage %+v", res.Usage)
	}
	h := srv.header.Load().(http.Header)
	if h.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("authorization %q", h.Get("Authorization"))
	}
	var sent map[string]any
	if err := json.Unmarshal(srv.body.Load().([]byte), &sent); err != nil || sent["stream"] != true || sent["model"] != "m" {
		t.Errorf("the request sent: %v (%v)", sent, err)
	}
}

// TestMessagesStreamPieces: a Messages stream with pings, the text and a
// call's input in several deltas, and usage counted across message_start
// and message_delta.
func TestMessagesStreamPieces(t *testing.T) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	body := ev("message_start", `{"type":"message_start","message":{"id":"msg","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":5,"output_tokens":1}}}`) +
		ev("ping", `{"type":"ping"}`) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let "}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"me look."}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"search","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\": "}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"ink\"}"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`) +
		ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"read_page","input":{}}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":2}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
	srv := serveRaw(t, answer{body: body})
	res, err := complete(t, "anthropic", srv.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := res.Calls()
	if res.Text() != "Let me look." || res.StopReason != llm.StopToolUse || res.RawStop != "tool_use" || res.Model != "claude-x" || len(calls) != 2 {
		t.Fatalf("response: text %q, stop %q, model %q, calls %+v", res.Text(), res.StopReason, res.Model, calls)
	}
	if calls[0].ID != "toolu_1" || string(calls[0].Input) != `{"query": "ink"}` || calls[1].Name != "read_page" || string(calls[1].Input) != `{}` {
		t.Errorf("calls: %+v", calls)
	}
	if res.Usage != (llm.Usage{Input: 105, Output: 42, Cached: 90}) {
		t.Errorf("usage %+v", res.Usage)
	}
	h := srv.header.Load().(http.Header)
	if h.Get("X-Api-Key") != "sk-test" || h.Get("Anthropic-Version") == "" {
		t.Errorf("header %v", h)
	}
	var sent struct {
		Tools []struct {
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(srv.body.Load().([]byte), &sent); err != nil || len(sent.Tools) != 2 ||
		sent.Tools[0].InputSchema["type"] != "object" || sent.Tools[0].InputSchema["additionalProperties"] != false {
		t.Errorf("the tools sent: %+v (%v)", sent.Tools, err)
	}
}

// TestStreamFaults: streams that stop short, report an error or are not
// what they should be give an *llm.Error of the right kind.
func TestStreamFaults(t *testing.T) {
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\n"
	chatStart := "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"I\"},\"finish_reason\":null}]}\n\n"
	for _, tc := range []struct {
		name, provider, body, kind, says string
	}{
		{"MessagesCutShort", "anthropic", start, llm.ErrStream, "ended before"},
		{"MessagesOverloaded", "anthropic", start + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", llm.ErrServer, "Overloaded"},
		{"MessagesBlockOutOfOrder", "anthropic", start + "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", llm.ErrStream, "did not start"},
		{"ChatCutShort", "openai", chatStart, llm.ErrStream, "ended before"},
		{"ChatError", "openai", chatStart + "data: {\"error\":{\"message\":\"model crashed\"}}\n\n", llm.ErrServer, "model crashed"},
		{"ChatNotJSON", "openai", "data: {\"choices\": [\n\n", llm.ErrStream, "not JSON"},
		{"ChatHugeLine", "openai", "data: " + strings.Repeat("x", 17<<20) + "\n\n", llm.ErrStream, "MiB"},
		{"ChatHugeEvent", "openai", strings.Repeat("data: "+strings.Repeat("x", 1<<20)+"\n", 17) + "\n", llm.ErrStream, "MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveRaw(t, answer{body: tc.body})
			url := srv.URL
			if tc.provider == "openai" {
				url += "/v1"
			}
			_, err := complete(t, tc.provider, url, 0)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(e.Error(), tc.says) {
				t.Fatalf("Complete = %v, want an *llm.Error of kind %s saying %q", err, tc.kind, tc.says)
			}
		})
	}
}

// TestRetryHeaders: Retry-After-Ms is honoured; x-should-retry: false
// stops the retries of a 500; a Retry-After beyond a minute is not waited
// for; the message of the provider's error body is kept.
func TestRetryHeaders(t *testing.T) {
	ok := "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	busy := func(h map[string]string) answer {
		return answer{status: 429, header: h, body: `{"error":{"message":"slow down","type":"rate_limit"}}`}
	}
	for _, tc := range []struct {
		name     string
		answers  []answer
		requests int32
		kind     string // "" for success
		says     string // what the error's message keeps
		minWait  time.Duration
		maxWait  time.Duration
	}{
		{"RetryAfterMs", []answer{busy(map[string]string{"Retry-After-Ms": "700", "Retry-After": "30"}), {body: ok}}, 2, "", "", 650 * time.Millisecond, 5 * time.Second},
		{"RetryAfterDate", []answer{busy(map[string]string{"Retry-After": time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)}), {body: ok}}, 2, "", "", time.Second, 5 * time.Second},
		{"ShouldNotRetry", []answer{{status: 500, header: map[string]string{"X-Should-Retry": "false"}, body: `{"error":{"message":"boom"}}`}}, 1, llm.ErrServer, "boom", 0, 2 * time.Second},
		{"ShouldRetry", []answer{{status: 400, header: map[string]string{"X-Should-Retry": "true", "Retry-After": "0.1"}, body: "no"}, {body: ok}}, 2, "", "", 50 * time.Millisecond, 5 * time.Second},
		{"TooLongToWait", []answer{busy(map[string]string{"Retry-After": "3600"})}, 1, llm.ErrRate, "slow down", 0, 2 * time.Second},
		{"BadRequest", []answer{{status: 400, body: `{"error":{"message":"max_tokens is too large"}}`}}, 1, llm.ErrRequest, "max_tokens is too large", 0, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveRaw(t, tc.answers...)
			began := time.Now()
			res, err := complete(t, "openai", srv.URL+"/v1", 2)
			d := time.Since(began)
			var e *llm.Error
			switch {
			case tc.kind == "" && (err != nil || res.Text() != "ok"):
				t.Fatalf("Complete = %v, want ok", err)
			case tc.kind != "" && (!errors.As(err, &e) || e.Kind != tc.kind):
				t.Fatalf("Complete = %v, want an *llm.Error of kind %s", err, tc.kind)
			case tc.kind != "" && e.Message != tc.says:
				t.Errorf("message %q: the provider's words are lost", e.Message)
			}
			if n := srv.n.Load(); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if d < tc.minWait || d > tc.maxWait {
				t.Errorf("took %s, want %s to %s", d, tc.minWait, tc.maxWait)
			}
		})
	}
}

// TestUnreachable: a provider that cannot be reached is a transport
// error, after the retries.
func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := complete(t, "anthropic", url, 1)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrTransport {
		t.Fatalf("Complete = %v, want an *llm.Error of kind %s", err, llm.ErrTransport)
	}
}
