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
	// retryAt, when set, sends Retry-After as the date this long after
	// the answer.
	retryAt time.Duration
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
		if a.retryAt > 0 {
			w.Header().Set("Retry-After", time.Now().Add(a.retryAt).UTC().Format(http.TimeFormat))
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
		{"ChatNotJSON", "openai", "data: {\"choices\": [\n\n", llm.ErrStream, "cannot read"},
		{"ChatHugeLine", "openai", "data: " + strings.Repeat("x", 17<<20) + "\n\n", llm.ErrStream, "MiB"},
		{"ChatHugeEvent", "openai", strings.Repeat("data: "+strings.Repeat("x", 1<<20)+"\n", 17) + "\n", llm.ErrStream, "MiB"},
		{"ChatHugeStream", "openai", strings.Repeat(chatStart[:len(chatStart)-2]+strings.Repeat(" ", 1<<20)+"\n\n", 70), llm.ErrStream, "64 MiB"},
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

// TestRetryHeaders: Retry-After-Ms and a Retry-After date are honoured;
// x-should-retry says whether to try again; a Retry-After beyond two
// minutes gets the backoff's waits instead; the message of the provider's
// error body is kept.
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
		{"RetryAfterDate", []answer{{status: 429, retryAt: 3 * time.Second, body: "busy"}, {body: ok}}, 2, "", "", 1500 * time.Millisecond, 5 * time.Second},
		{"ShouldNotRetry", []answer{{status: 500, header: map[string]string{"X-Should-Retry": "false"}, body: `{"error":{"message":"boom"}}`}}, 1, llm.ErrServer, "boom", 0, 2 * time.Second},
		{"ShouldRetry", []answer{{status: 400, header: map[string]string{"X-Should-Retry": "true", "Retry-After": "0.1"}, body: "no"}, {body: ok}}, 2, "", "", 50 * time.Millisecond, 5 * time.Second},
		{"TooLongToWait", []answer{busy(map[string]string{"Retry-After": "3600"})}, 3, llm.ErrRate, "slow down", time.Second, 5 * time.Second},
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

// TestSecondTurnRequest: what each API is sent for a turn after tool
// calls: the calls with their ids, the results naming them (one an
// error), the version header, the default bound of output tokens and a
// tool schema given without its type.
func TestSecondTurnRequest(t *testing.T) {
	history := []llm.Message{
		{Role: "user", Content: []llm.Block{{Type: "text", Text: "What is ink?"}}},
		{Role: "assistant", Content: []llm.Block{
			{Type: "text", Text: "Let me look."},
			{Type: "tool_use", ID: "call_1", Name: "search", Input: json.RawMessage(`{"query":"ink"}`)},
			{Type: "tool_use", ID: "call_2", Name: "read_page", Input: json.RawMessage(`{"page":"index"}`)},
		}},
		{Role: "user", Content: []llm.Block{
			{Type: "tool_result", ID: "call_1", Text: "found"},
			{Type: "tool_result", ID: "call_2", Text: "no such page", IsError: true},
		}},
	}
	untyped := []llm.Tool{{Name: "search", Schema: json.RawMessage(`{"properties":{"query":{"type":"string"}}}`)}}
	bodies := map[string]string{
		"anthropic": "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"m\",\"usage\":{}}}\n\n" +
			"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
		"openai": "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
	}
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			srv := serveRaw(t, answer{body: bodies[provider]})
			pr, err := llm.New(llm.Config{Provider: provider, BaseURL: srv.URL, Key: "sk-test", Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pr.Complete(context.Background(), &llm.Request{System: "sys", Messages: history, Tools: untyped}); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(srv.body.Load().([]byte), &got); err != nil {
				t.Fatal(err)
			}
			h := srv.header.Load().(http.Header)
			// want is a field of the request body, by a path of keys and
			// indexes, and the value it must have.
			want := func(v any, path ...any) {
				t.Helper()
				cur := any(got)
				for _, p := range path {
					switch p := p.(type) {
					case string:
						m, _ := cur.(map[string]any)
						cur = m[p]
					case int:
						l, _ := cur.([]any)
						if p >= len(l) {
							t.Errorf("%v: no item %d", path, p)
							return
						}
						cur = l[p]
					}
				}
				if fmt.Sprint(cur) != fmt.Sprint(v) {
					t.Errorf("%v = %v, want %v", path, cur, v)
				}
			}
			want(4096, "max_tokens")
			want(true, "stream")
			if provider == "anthropic" {
				if h.Get("Anthropic-Version") != "2023-06-01" {
					t.Errorf("Anthropic-Version %q", h.Get("Anthropic-Version"))
				}
				want("sys", "system", 0, "text")
				want("assistant", "messages", 1, "role")
				want("Let me look.", "messages", 1, "content", 0, "text")
				want("tool_use", "messages", 1, "content", 1, "type")
				want("call_1", "messages", 1, "content", 1, "id")
				want("search", "messages", 1, "content", 1, "name")
				want("ink", "messages", 1, "content", 1, "input", "query")
				want("call_2", "messages", 1, "content", 2, "id")
				want("tool_result", "messages", 2, "content", 0, "type")
				want("call_1", "messages", 2, "content", 0, "tool_use_id")
				want("found", "messages", 2, "content", 0, "content")
				want(nil, "messages", 2, "content", 0, "is_error")
				want("call_2", "messages", 2, "content", 1, "tool_use_id")
				want(true, "messages", 2, "content", 1, "is_error")
				want("object", "tools", 0, "input_schema", "type")
				want("string", "tools", 0, "input_schema", "properties", "query", "type")
				return
			}
			want(true, "stream_options", "include_usage")
			want("system", "messages", 0, "role")
			want("sys", "messages", 0, "content")
			want("What is ink?", "messages", 1, "content")
			want("assistant", "messages", 2, "role")
			want("Let me look.", "messages", 2, "content")
			want("call_1", "messages", 2, "tool_calls", 0, "id")
			want("function", "messages", 2, "tool_calls", 0, "type")
			want("search", "messages", 2, "tool_calls", 0, "function", "name")
			want(`{"query":"ink"}`, "messages", 2, "tool_calls", 0, "function", "arguments")
			want("call_2", "messages", 2, "tool_calls", 1, "id")
			want("tool", "messages", 3, "role")
			want("call_1", "messages", 3, "tool_call_id")
			want("found", "messages", 3, "content")
			want("call_2", "messages", 4, "tool_call_id")
			want("Error: no such page", "messages", 4, "content")
			want("object", "tools", 0, "function", "parameters", "type")
		})
	}
}

// TestChatCallShapes: the ways OpenAI-compatible servers stream tool
// calls and end their streams.
func TestChatCallShapes(t *testing.T) {
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
	}
	const done = "data: [DONE]\n\n"
	for _, tc := range []struct {
		name  string
		body  string
		text  string
		stop  string
		calls []wantCall
		usage llm.Usage
	}{
		{"NewIDEveryDelta", // as mlx-openai-server sent them
			chunk(`{"tool_calls":[{"index":0,"id":"a1","type":"function","function":{"name":"search","arguments":"{\"query\":"}}]}`, "") +
				chunk(`{"tool_calls":[{"index":0,"id":"a2","type":"function","function":{"arguments":"\"ink\"}"}}]}`, "") +
				chunk(`{}`, "tool_calls") + done,
			"", llm.StopToolUse, []wantCall{{"a1", "search", `{"query":"ink"}`}}, llm.Usage{}},
		{"NameInEveryDelta",
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":"{\"query\":"}}]}`, "") +
				chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":"\"{ink}\"}"}}]}`, "") +
				chunk(`{}`, "tool_calls") + done,
			"", llm.StopToolUse, []wantCall{{"c1", "search", `{"query":"{ink}"}`}}, llm.Usage{}},
		{"WholeCallsAtIndexZero",
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":"{\"query\":\"ink\"}"}}]}`, "") +
				chunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"read_page","arguments":"{\"page\":\"index\"}"}}]}`, "") +
				chunk(`{}`, "tool_calls") + done,
			"", llm.StopToolUse, []wantCall{{"c1", "search", `{"query":"ink"}`}, {"c2", "read_page", `{"page":"index"}`}}, llm.Usage{}},
		{"NoIndex",
			chunk(`{"tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"query\":"}}]}`, "") +
				chunk(`{"tool_calls":[{"function":{"arguments":"\"ink\"}"}}]}`, "") +
				chunk(`{"tool_calls":[{"id":"c2","type":"function","function":{"name":"read_page","arguments":"{\"page\":\"x\"}"}}]}`, "") +
				chunk(`{}`, "tool_calls") + done,
			"", llm.StopToolUse, []wantCall{{"c1", "search", `{"query":"ink"}`}, {"c2", "read_page", `{"page":"x"}`}}, llm.Usage{}},
		{"StopWithCalls",
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":"{}"}}]}`, "stop") + done,
			"", llm.StopToolUse, []wantCall{{"c1", "search", `{}`}}, llm.Usage{}},
		{"DoneWithoutFinish", chunk(`{"content":"ok"}`, "") + done, "ok", llm.StopOther, nil, llm.Usage{}},
		{"ContentPartsAndFloats",
			chunk(`{"content":[{"type":"text","text":"o"},{"type":"image_url"},{"type":"text","text":"k"}]}`, "stop") +
				`data: {"model":"m","choices":[],"usage":{"prompt_tokens":12.0,"completion_tokens":3.0}}` + "\n\n" + done,
			"ok", llm.StopEnd, nil, llm.Usage{Input: 12, Output: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, calls := streamCalls(t, tc.body)
			if res.Text() != tc.text || res.StopReason != tc.stop || fmt.Sprint(calls) != fmt.Sprint(tc.calls) || res.Usage != tc.usage {
				t.Errorf("text %q, stop %q, calls %v, usage %+v; want %q, %q, %v, %+v", res.Text(), res.StopReason, calls, res.Usage, tc.text, tc.stop, tc.calls, tc.usage)
			}
		})
	}
}

// TestMessagesStopWithoutReason: a Messages stream that ends with
// message_stop but gave no stop reason is whole, its stop "other".
func TestMessagesStopWithoutReason(t *testing.T) {
	body := "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"ok\"}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n"
	srv := serveRaw(t, answer{body: body})
	res, err := complete(t, "anthropic", srv.URL, 0)
	if err != nil || res.Text() != "ok" || res.StopReason != llm.StopOther {
		t.Fatalf("Complete = %+v, %v; want the text ok, stop other", res, err)
	}
}

// TestManyPieces: a stream of very many small pieces — text deltas, and
// whole tool calls all at index 0 — is read in time proportional to its
// length (put together by appending to each piece, the text took 16 s
// for 100k deltas; the test's context allows 20 s for three times as
// many).
func TestManyPieces(t *testing.T) {
	var b strings.Builder
	b.WriteString("data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"m\",\"usage\":{}}}\n\n")
	b.WriteString("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	const n = 300_000
	for range n {
		b.WriteString("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"abcdefghijklmnop\"}}\n\n")
	}
	b.WriteString("data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n")
	srv := serveRaw(t, answer{body: b.String()})
	res, err := complete(t, "anthropic", srv.URL, 0)
	if err != nil || len(res.Text()) != 16*n {
		t.Fatalf("Complete: %v; %d bytes of text, want %d", err, len(res.Text()), 16*n)
	}

	b.Reset()
	const calls = 50_000
	for i := range calls {
		fmt.Fprintf(&b, `data: {"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c%d","type":"function","function":{"name":"search","arguments":"{\"q\":%d}"}}]},"finish_reason":null}]}`+"\n\n", i, i)
	}
	b.WriteString("data: [DONE]\n\n")
	srv = serveRaw(t, answer{body: b.String()})
	res, err = complete(t, "openai", srv.URL, 0)
	if err != nil || len(res.Calls()) != calls {
		t.Fatalf("Complete: %v; %d calls, want %d", err, len(res.Calls()), calls)
	}
}

// TestChatCallEdges: whole calls at one index after a call with empty,
// cut or invalid arguments, after arguments with trailing whitespace or
// an escaped quote; a server that repeats a call's id and name; a call
// whose first delta has no index and the next one has.
func TestChatCallEdges(t *testing.T) {
	delta := func(call string) string {
		return `data: {"model":"m","choices":[{"index":0,"delta":{"tool_calls":[` + call + `]},"finish_reason":null}]}` + "\n\n"
	}
	const done = "data: [DONE]\n\n"
	for _, tc := range []struct {
		name  string
		body  string
		calls []wantCall
	}{
		{"EmptyArgumentsThenWhole",
			delta(`{"index":0,"id":"c1","type":"function","function":{"name":"status","arguments":""}}`) +
				delta(`{"index":0,"id":"c2","type":"function","function":{"name":"read_page","arguments":"{\"page\":\"x\"}"}}`) + done,
			[]wantCall{{"c1", "status", `{}`}, {"c2", "read_page", `{"page":"x"}`}}},
		{"InvalidThenWhole",
			delta(`{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":"{\"a\" 1}"}}`) +
				delta(`{"index":0,"id":"c2","type":"function","function":{"name":"read_page","arguments":"{\"page\":\"x\"}"}}`) + done,
			[]wantCall{{"c1", "search", `"{\"a\" 1}"`}, {"c2", "read_page", `{"page":"x"}`}}},
		{"TrailingWhitespace",
			delta(`{"index":0,"type":"function","function":{"name":"search","arguments":"{\"q\":1}\n"}}`) +
				delta(`{"index":0,"type":"function","function":{"name":"read_page","arguments":"{\"page\":\"x\"}"}}`) + done,
			[]wantCall{{"", "search", "{\"q\":1}\n"}, {"", "read_page", `{"page":"x"}`}}},
		{"EscapedQuote",
			delta(`{"index":0,"type":"function","function":{"name":"search","arguments":"{\"q\":\"a\\\"}"}}`) +
				delta(`{"index":0,"type":"function","function":{"name":"search","arguments":"\"}"}}`) +
				delta(`{"index":0,"type":"function","function":{"name":"read_page","arguments":"{\"page\":\"x\"}"}}`) + done,
			[]wantCall{{"", "search", `{"q":"a\"}"}`}, {"", "read_page", `{"page":"x"}`}}},
		{"LeadingWhitespace",
			delta(`{"index":0,"type":"function","function":{"name":"search","arguments":" "}}`) +
				delta(`{"index":0,"type":"function","function":{"name":"search","arguments":"{\"q\":1}"}}`) + done,
			[]wantCall{{"", "search", ` {"q":1}`}}},
		{"RepeatedIDAndName",
			delta(`{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\":1}"}}`) +
				delta(`{"index":0,"id":"c1","type":"function","function":{"name":"search","arguments":""}}`) + done,
			[]wantCall{{"c1", "search", `{"q":1}`}}},
		{"IndexFromTheSecondDelta",
			delta(`{"id":"c1","type":"function","function":{"name":"search","arguments":""}}`) +
				delta(`{"index":0,"function":{"arguments":"{\"q\":1}"}}`) + done,
			[]wantCall{{"c1", "search", `{"q":1}`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, calls := streamCalls(t, tc.body)
			if fmt.Sprintf("%q", calls) != fmt.Sprintf("%q", tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
		})
	}
}

// TestMessagesEdges: usage written as floats; a rate_limit_error inside a
// stream that answered 200 is the provider's failure (ErrServer), which
// the job's next attempt may get past.
func TestMessagesEdges(t *testing.T) {
	start := `data: {"type":"message_start","message":{"id":"m","model":"m","usage":{"input_tokens":12.0,"cache_read_input_tokens":3.0}}}` + "\n\n"
	srv := serveRaw(t, answer{body: start + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5.0}}` + "\n\n"})
	res, err := complete(t, "anthropic", srv.URL, 0)
	if err != nil || res.Usage != (llm.Usage{Input: 15, Output: 5, Cached: 3}) {
		t.Errorf("Complete = %+v, %v; want usage 15/5/3", res, err)
	}
	srv = serveRaw(t, answer{body: start + `data: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}` + "\n\n"})
	_, err = complete(t, "anthropic", srv.URL, 0)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrServer || !strings.Contains(e.Message, "slow down") {
		t.Errorf("Complete = %v, want an *llm.Error of kind %s", err, llm.ErrServer)
	}
}

// TestChatCallPieces: pieces of one call that each repeat its function's
// name with a new id join while its arguments' JSON is open; a closed
// value, even one that is not valid JSON, is the end of its call.
func TestChatCallPieces(t *testing.T) {
	delta := func(call string) string {
		return `data: {"model":"m","choices":[{"index":0,"delta":{"tool_calls":[` + call + `]},"finish_reason":null}]}` + "\n\n"
	}
	body := delta(`{"index":0,"id":"a1","type":"function","function":{"name":"search","arguments":"{\"q\":"}}`) +
		delta(`{"index":0,"id":"a2","type":"function","function":{"name":"search","arguments":"[1, {\"x\": \"}\"}"}}`) +
		delta(`{"index":0,"id":"a3","type":"function","function":{"name":"search","arguments":"]}"}}`) +
		delta(`{"index":0,"type":"function","function":{"name":"search","arguments":"{\"a\" 1}"}}`) +
		delta(`{"index":0,"type":"function","function":{"name":"read_page","arguments":"{\"page\":\"x\"}  "}}`) +
		delta(`{"index":0,"type":"function","function":{"arguments":"x"}}`) +
		delta(`{"index":0,"type":"function","function":{"name":"search","arguments":"{}"}}`) +
		"data: [DONE]\n\n"
	_, got := streamCalls(t, body)
	want := []wantCall{
		{"a1", "search", `{"q":[1, {"x": "}"}]}`},
		{"", "search", `"{\"a\" 1}"`},
		{"", "read_page", `"{\"page\":\"x\"}  x"`},
		{"", "search", `{}`},
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("calls %q, want %q", got, want)
	}
}

// wantCall is a tool call of a response: its id, tool and input.
type wantCall struct{ id, name, input string }

// streamCalls answers a Chat Completions request with the stream body and
// returns the response and its calls.
func streamCalls(t *testing.T, body string) (*llm.Response, []wantCall) {
	t.Helper()
	srv := serveRaw(t, answer{body: body})
	res, err := complete(t, "openai", srv.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	var calls []wantCall
	for _, c := range res.Calls() {
		calls = append(calls, wantCall{c.ID, c.Name, string(c.Input)})
	}
	return res, calls
}
