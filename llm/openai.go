package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// openaiProvider speaks an OpenAI-compatible Chat Completions API.
type openaiProvider struct {
	t      transport
	url    string
	header http.Header
	model  string
}

func newOpenAI(cfg Config) *openaiProvider {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	key := cfg.Key
	if key == "" {
		key = "none" // a local server asks for none; some want the header
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	return &openaiProvider{t: newTransport(cfg), url: strings.TrimSuffix(base, "/") + "/chat/completions", header: h, model: cfg.Model}
}

func (p *openaiProvider) Name() string  { return "openai" }
func (p *openaiProvider) Model() string { return p.model }

// The Chat Completions request, as cairn sends it.
type (
	chatRequest struct {
		Model         string        `json:"model"`
		MaxTokens     int           `json:"max_tokens"`
		Stream        bool          `json:"stream"`
		StreamOptions chatStreamOpt `json:"stream_options"`
		Messages      []chatMessage `json:"messages"`
		Tools         []chatTool    `json:"tools,omitempty"`
	}
	chatStreamOpt struct {
		IncludeUsage bool `json:"include_usage"`
	}
	chatMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content,omitempty"`
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	chatToolCall struct {
		Index    *int   `json:"index,omitempty"` // in a stream's deltas
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
)

// chatChunk is one chunk of a Chat Completions stream.
type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string        `json:"content"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (p *openaiProvider) Complete(ctx context.Context, r *Request) (*Response, error) {
	req := chatRequest{Model: p.model, MaxTokens: maxTokens(r), Stream: true, StreamOptions: chatStreamOpt{IncludeUsage: true}}
	if r.System != "" {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: &r.System})
	}
	for _, m := range r.Messages {
		var text string
		if m.Role == "assistant" {
			a := chatMessage{Role: "assistant"}
			for _, b := range m.Content {
				switch b.Type {
				case "text":
					text += b.Text
				case "tool_use":
					c := chatToolCall{ID: b.ID, Type: "function"}
					c.Function.Name, c.Function.Arguments = b.Name, arguments(b.Input)
					a.ToolCalls = append(a.ToolCalls, c)
				}
			}
			if text != "" {
				a.Content = &text
			}
			req.Messages = append(req.Messages, a)
			continue
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				text += b.Text
			case "tool_result":
				content := b.Text
				if b.IsError {
					content = "Error: " + content
				}
				req.Messages = append(req.Messages, chatMessage{Role: "tool", Content: &content, ToolCallID: b.ID})
			}
		}
		if text != "" {
			req.Messages = append(req.Messages, chatMessage{Role: "user", Content: &text})
		}
	}
	for _, t := range r.Tools {
		tool := chatTool{Type: "function"}
		tool.Function.Name, tool.Function.Description, tool.Function.Parameters = t.Name, t.Description, objectSchema(t.Schema)
		req.Tools = append(req.Tools, tool)
	}
	body, err := p.t.post(ctx, p.url, p.header, req)
	if err != nil {
		return nil, err
	}
	defer body.Close()

	out := &Response{}
	var text strings.Builder
	var calls []*chatToolCall
	var u Usage
	chunks, finished := 0, false
	err = readEvents(body, func(_ string, data []byte) error {
		if string(data) == "[DONE]" {
			return io.EOF
		}
		var c chatChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("a chunk that is not JSON: %w", err)
		}
		if c.Error != nil {
			return &Error{Kind: ErrServer, Message: c.Error.Message}
		}
		chunks++
		if out.Model == "" {
			out.Model = c.Model
		}
		if c.Usage != nil {
			u.Input, u.Output = c.Usage.PromptTokens, c.Usage.CompletionTokens
			if d := c.Usage.PromptTokensDetails; d != nil {
				u.Cached = d.CachedTokens
			}
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // one choice is asked for
			}
			if ch.Delta.Content != nil {
				text.WriteString(*ch.Delta.Content)
			}
			for _, d := range ch.Delta.ToolCalls {
				calls = addCall(calls, d)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				out.RawStop, finished = *ch.FinishReason, true
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, ok := err.(*Error); ok {
			return nil, err
		}
		return nil, streamErr(err)
	}
	if chunks == 0 {
		return nil, &Error{Kind: ErrStream, Message: "the stream held no completion"}
	}
	if !finished {
		return nil, &Error{Kind: ErrStream, Message: "the stream ended before the completion did"}
	}
	if text.Len() > 0 {
		out.Content = append(out.Content, Block{Type: "text", Text: text.String()})
	}
	for _, c := range calls {
		out.Content = append(out.Content, Block{Type: "tool_use", ID: c.ID, Name: c.Function.Name, Input: rawArguments(c.Function.Arguments)})
	}
	switch out.RawStop {
	case "stop":
		out.StopReason = StopEnd
	case "tool_calls", "function_call":
		out.StopReason = StopToolUse
	case "length":
		out.StopReason = StopMaxTokens
	case "content_filter":
		out.StopReason = StopRefusal
	default:
		out.StopReason = StopOther
	}
	if len(calls) > 0 {
		out.StopReason = StopToolUse // some servers say "stop" with calls
	}
	out.Usage = u
	return out, nil
}

// addCall adds a stream's delta of a tool call to calls: a call's first
// delta names its index, id and function; the next of the same index
// carry pieces of its arguments. A delta without an index is of the last
// call, unless it names another id (as some servers send whole calls).
func addCall(calls []*chatToolCall, d chatToolCall) []*chatToolCall {
	var c *chatToolCall
	switch {
	case d.Index != nil:
		for _, x := range calls {
			if *x.Index == *d.Index && (d.ID == "" || x.ID == "" || x.ID == d.ID) {
				c = x
			}
		}
	case len(calls) > 0 && (d.ID == "" || calls[len(calls)-1].ID == d.ID):
		c = calls[len(calls)-1]
	}
	if c == nil {
		i := len(calls)
		if d.Index != nil {
			i = *d.Index
		}
		c = &chatToolCall{Index: &i}
		calls = append(calls, c)
	}
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Function.Name == "" {
		c.Function.Name = d.Function.Name
	}
	c.Function.Arguments += d.Function.Arguments
	return calls
}

// arguments is a call's input as Chat Completions sends it back: a string.
func arguments(input json.RawMessage) string {
	var s string
	if json.Unmarshal(input, &s) == nil {
		return s // arguments that were not JSON, kept as given
	}
	if len(input) == 0 {
		return "{}"
	}
	return string(input)
}

// rawArguments is a call's arguments as Block.Input holds them: the JSON
// the model gave, or, when it gave something that is not JSON, that text
// as a JSON string, for the loop to refuse.
func rawArguments(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}
