// Package llmtest runs model providers' APIs as local HTTP servers scripted
// like a model, for tests of what drives a model without reaching one: the
// Anthropic Messages API, the OpenAI Responses API and the OpenAI Chat
// Completions API, each streamed (server-sent events) as the provider
// streams it, or answered whole when the request does not ask for a
// stream.
//
// A Script is the model's turns. Which turn a request gets is read from
// the request itself — how many of the model's tool-calling turns its
// history holds — so a client that retries, or sends side requests of its
// own (a title, say: requests that offer no tools get a short text),
// still follows the script. A turn's tool calls name a tool by the end of
// its name ("search" matches "mcp__cairn__search" and "cairn_search"),
// chosen among the tools the request offers, and take arguments made from
// the request (its working directory, say).
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is one answer of the model: tool calls, or a final text.
type Turn struct {
	// Calls are the tools it calls, in order (parallel calls when more
	// than one).
	Calls []Call
	// Text is what it says: with no Calls, its final answer.
	Text string
	// Status, when not 0, answers the request with this HTTP status and
	// Text as the error's message instead (401, 429, 500).
	Status int
	// RetryAfter is the Retry-After header of such an answer, in seconds.
	RetryAfter string
	// Times, for a Status turn, is how many requests get it; then the
	// script goes on with the next turn. 0: every request that reaches it.
	Times int
	// Raw, when set, is written as the response body as it is (a
	// malformed stream, say).
	Raw string
	// Hang, with Raw, writes Raw as the stream's start, then holds the
	// stream open until the client goes: a model that stalls.
	Hang bool
}

// Call is one tool call.
type Call struct {
	// Tool is the tool's name, or the end of it, after "_", "." or
	// "__": the first offered tool it names is called.
	Tool string
	// Args are its arguments, made for the request.
	Args func(r *Request) any
}

// Script is the model's turns, in order; past the last, the last repeats.
type Script []Turn

// Request is what the server was asked, as it read it.
type Request struct {
	// API is "anthropic", "responses" or "chat".
	API string
	// Model is the model asked for.
	Model string
	// Stream says whether the answer was asked for as a stream.
	Stream bool
	// Tools are the names of the tools offered.
	Tools []string
	// System is the system prompt (instructions), all of its text.
	System string
	// Prompt is all the text of the conversation's messages.
	Prompt string
	// Turn is the script's turn the request got; -1 for a side request
	// (no tools offered).
	Turn int
	// Results are the tool results the history holds, in order.
	Results []string
	// Header is the request's header.
	Header http.Header
	// namespaced are the tools offered in a namespace: their namespace
	// and name, by the name in Tools.
	namespaced map[string][2]string
}

// Dir returns the working directory the client told the model of, from
// its system prompt or messages: Claude Code's "Working directory: DIR",
// Codex's <cwd>DIR</cwd>, OpenCode's "Working directory: DIR"; "" when
// none is found.
func (r *Request) Dir() string {
	for _, re := range dirPatterns {
		for _, s := range []string{r.System, r.Prompt} {
			if m := re.FindStringSubmatch(s); m != nil {
				return strings.TrimSpace(m[1])
			}
		}
	}
	return ""
}

var dirPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?m)Working directory:\s*(\S+)`),
	regexp.MustCompile(`<cwd>([^<]+)</cwd>`),
}

// Server is a scripted model provider.
type Server struct {
	*httptest.Server
	api    string
	script Script
	mu     sync.Mutex
	reqs   []*Request
	used   map[int]int // how many requests a Status turn answered
}

// URL path prefixes: base URLs to give clients.
const (
	// AnthropicBase is what ANTHROPIC_BASE_URL is set to: the server's URL.
	// OpenAIBase is added to the server's URL for the OpenAI APIs: "/v1".
	OpenAIBase = "/v1"
)

// Anthropic returns a server speaking the Messages API at /v1/messages.
func Anthropic(t testing.TB, s Script) *Server { return start(t, "anthropic", s) }

// Responses returns a server speaking the Responses API at /v1/responses.
func Responses(t testing.TB, s Script) *Server { return start(t, "responses", s) }

// Chat returns a server speaking Chat Completions at /v1/chat/completions.
func Chat(t testing.TB, s Script) *Server { return start(t, "chat", s) }

func start(t testing.TB, api string, s Script) *Server {
	srv := &Server{api: api, script: s}
	srv.Server = httptest.NewServer(http.HandlerFunc(srv.serve))
	t.Cleanup(srv.Close)
	return srv
}

// Requests returns what the server was asked so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Main returns the requests that offered tools: the agent's own turns.
func (s *Server) Main() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Turn >= 0 {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if d := os.Getenv("LLMTEST_DUMP"); d != "" {
		os.WriteFile(filepath.Join(d, fmt.Sprintf("%s-%d.json", s.api, time.Now().UnixNano())), raw, 0o644)
	}
	if r.Method != http.MethodPost || json.Unmarshal(raw, &body) != nil {
		// Models lists and other probes: an empty answer of the right kind.
		if strings.HasSuffix(r.URL.Path, "/models") {
			writeJSON(w, map[string]any{"object": "list", "data": []any{}})
			return
		}
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req *Request
	switch {
	case s.api == "anthropic" && strings.HasSuffix(r.URL.Path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
		return
	case s.api == "anthropic" && strings.HasSuffix(r.URL.Path, "/messages"):
		req = readAnthropic(body)
	case s.api == "responses" && strings.HasSuffix(r.URL.Path, "/responses"):
		req = readResponses(body)
	case s.api == "chat" && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		req = readChat(body)
	default:
		http.Error(w, `{"error":{"message":"no such API here"}}`, http.StatusNotFound)
		return
	}
	req.API, req.Header = s.api, r.Header.Clone()
	if len(req.Tools) == 0 {
		req.Turn = -1
	}
	turn := Turn{Text: "A title"}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	if req.Turn >= 0 && len(s.script) > 0 {
		// Status turns that answered their Times requests are past: the
		// turns after them move up.
		i := req.Turn
		for j := 0; j <= i && j < len(s.script); j++ {
			if t := s.script[j]; t.Status != 0 && t.Times > 0 && s.used[j] >= t.Times {
				i++
			}
		}
		i = min(i, len(s.script)-1)
		turn = s.script[i]
		if turn.Status != 0 {
			if s.used == nil {
				s.used = map[int]int{}
			}
			s.used[i]++
		}
	}
	s.mu.Unlock()
	if turn.Status != 0 {
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(turn.Status)
		kind := map[int]string{401: "authentication_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[turn.Status]
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q,"code":%q}}`, kind, turn.Text, kind)
		return
	}
	if turn.Raw != "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(turn.Raw))
		if turn.Hang {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			<-r.Context().Done()
		}
		return
	}
	calls := resolve(turn.Calls, req)
	switch s.api {
	case "anthropic":
		writeAnthropic(w, req, turn.Text, calls)
	case "responses":
		writeResponses(w, req, turn.Text, calls)
	case "chat":
		writeChat(w, req, turn.Text, calls)
	}
}

// call is a tool call made for one request.
type call struct {
	id, name, args string
}

// resolve names each call's tool among those offered and makes its
// arguments.
func resolve(calls []Call, req *Request) []call {
	var out []call
	for i, c := range calls {
		name := c.Tool
		for _, t := range req.Tools {
			if t == c.Tool || strings.HasSuffix(t, "_"+c.Tool) || strings.HasSuffix(t, "."+c.Tool) {
				name = t
				break
			}
		}
		var args any = map[string]any{}
		if c.Args != nil {
			args = c.Args(req)
		}
		b, _ := json.Marshal(args)
		if s, ok := args.(string); ok { // a free-form tool's input
			b = []byte(s)
		}
		out = append(out, call{id: fmt.Sprintf("call_%d_%d", req.Turn, i), name: name, args: string(b)})
	}
	return out
}

// text gathers the text of a JSON value: strings under "text", "content"
// and "input_text" keys, and plain strings.
func text(v any) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, k := range []string{"text", "content", "output", "input"} {
				if e, ok := x[k]; ok {
					walk(e)
				}
			}
		}
	}
	walk(v)
	return b.String()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes one server-sent event, with an event name when given.
func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
