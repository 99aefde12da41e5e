// Package llm talks to model providers' APIs for cairn's built-in agent:
// the Anthropic Messages API and any OpenAI-compatible Chat Completions
// API (OpenAI, Ollama, vLLM, the llama.cpp server), each streamed. A
// Provider turns a provider-neutral Request — a system prompt, messages
// of text, tool calls and tool results, the tools offered — into one
// model turn, a Response with its text, tool calls, stop reason and
// usage.
//
// Both APIs are spoken over net/http (see transport.go for why not
// through their SDKs). A request is tried again with backoff on 408, 409,
// 429 and 5xx and on connection errors, as the providers' SDKs do,
// honouring Retry-After and Retry-After-Ms up to two minutes (a longer
// one gets the backoff's waits). What is left
// is an *Error that says whether the key was refused, the provider was
// rate limited or failed, or its stream was malformed or cut short.
// Cancelling the context stops a stream at once.
package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"cairn"
)

// Block is one part of a message.
type Block struct {
	// Type is "text", "tool_use" (a call the model makes) or
	// "tool_result" (what the call gave).
	Type string `json:"type"`
	// Text is a text's, or a tool result's, content.
	Text string `json:"text,omitempty"`
	// ID names a tool call; a tool result names the call it answers.
	ID string `json:"id,omitempty"`
	// Name and Input are a tool call's tool and arguments (a JSON object).
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// IsError marks a tool result that is an error, for the model to read.
	IsError bool `json:"is_error,omitempty"`
}

// Message is one message of the conversation.
type Message struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content []Block `json:"content"`
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"input_schema"` // a JSON Schema of an object
}

// Request is one model turn to ask for.
type Request struct {
	System    string    `json:"system,omitempty"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools,omitempty"`
	MaxTokens int       `json:"max_tokens"` // of output; default 4096
}

// Hash returns a short hash of the request (its JSON), to record which
// request a step sent.
func (r *Request) Hash() string {
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Stop reasons, as Response.StopReason gives them whatever the provider.
const (
	StopEnd       = "end"        // the model finished its turn
	StopToolUse   = "tool_use"   // it called tools
	StopMaxTokens = "max_tokens" // it ran out of output tokens
	StopRefusal   = "refusal"    // it refused
	StopOther     = "other"      // anything else the provider said
)

// Usage is what a turn cost in tokens.
type Usage struct {
	// Input counts every token read, Cached those of them read from the
	// provider's cache.
	Input, Output, Cached int64
}

// Response is one model turn.
type Response struct {
	// Content is its text and tool calls, in order.
	Content []Block
	// StopReason is why it stopped (StopEnd, StopToolUse, ...); Raw is
	// the provider's own word for it.
	StopReason, RawStop string
	Usage               Usage
	// Model is the model that answered, as the provider named it.
	Model string
}

// Calls returns the response's tool calls.
func (r *Response) Calls() []Block {
	var out []Block
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			out = append(out, b)
		}
	}
	return out
}

// Text returns the response's text.
func (r *Response) Text() string {
	var s string
	for _, b := range r.Content {
		if b.Type == "text" {
			s += b.Text
		}
	}
	return s
}

// Provider is a model API.
type Provider interface {
	// Name is the provider's kind: "anthropic" or "openai".
	Name() string
	// Model is the model it asks.
	Model() string
	// Complete asks for one model turn, streamed.
	Complete(ctx context.Context, r *Request) (*Response, error)
}

// Config says which provider to talk to, and how.
type Config struct {
	// Provider is "anthropic" or "openai" (any OpenAI-compatible Chat
	// Completions API).
	Provider string
	// BaseURL is the API's address; "": the provider's own.
	BaseURL string
	// Key is the API key ("" for a local server that needs none).
	Key string
	// Model is the model to ask (required).
	Model string
	// MaxRetries is how often a failed request is tried again (429, 5xx,
	// connection errors), with backoff honouring Retry-After up to two
	// minutes. Default 2;
	// -1 for none.
	MaxRetries int
	// HTTPClient, when set, sends the requests.
	HTTPClient *http.Client
}

// Providers are the providers New knows.
var Providers = []string{"anthropic", "openai"}

// New returns the provider cfg names. The error has code EINVALID and a
// hint for an unknown provider or no model.
func New(cfg Config) (Provider, error) {
	if cfg.Model == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "the built-in agent needs a model").
			WithHint("Try: cairn settings set agent.model claude-sonnet-4-5")
	}
	switch cfg.MaxRetries {
	case 0:
		cfg.MaxRetries = 2
	case -1:
		cfg.MaxRetries = 0
	}
	switch cfg.Provider {
	case "anthropic":
		return newAnthropic(cfg), nil
	case "openai":
		return newOpenAI(cfg), nil
	}
	return nil, cairn.Errorf(cairn.EINVALID, "agent.provider is %q; it must be anthropic or openai", cfg.Provider).
		WithHint("Try: cairn settings set agent.provider anthropic (or openai, for any OpenAI-compatible API)")
}

// Kinds of Error.
const (
	ErrAuth      = "auth"      // the key was refused (401, 403)
	ErrRate      = "rate"      // rate limited (429), retries used up
	ErrServer    = "server"    // the provider failed: 5xx with retries used up, or an error in its stream
	ErrRequest   = "request"   // the provider refused the request (another 4xx)
	ErrStream    = "stream"    // the stream broke off or made no sense
	ErrTransport = "transport" // the provider could not be reached
)

// Error is a provider's failure, after retries.
type Error struct {
	Kind    string // ErrAuth, ErrRate, ...
	Status  int    // the HTTP status, when there was one
	Message string // what the provider said
	Err     error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("the model provider answered %d (%s): %s", e.Status, e.Kind, e.Message)
	}
	return fmt.Sprintf("the model provider failed (%s): %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// classify makes an *Error of an HTTP status and message.
func classify(status int, msg string, err error) *Error {
	kind := ErrRequest
	switch {
	case status == 401 || status == 403:
		kind = ErrAuth
	case status == 429:
		kind = ErrRate
	case status >= 500:
		kind = ErrServer
	case status == 0:
		kind = ErrTransport
	}
	return &Error{Kind: kind, Status: status, Message: msg, Err: err}
}
