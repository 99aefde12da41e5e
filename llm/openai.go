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

// chatChunk is one chunk of a Chat Completions stream. Token counts are
// read as floats (some compatible servers write 12.0), and a delta's
// content as a string or, as Mistral's API sends it, a list of parts.
type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   json.RawMessage `json:"content"`
			ToolCalls []chatToolCall  `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        float64 `json:"prompt_tokens"`
		CompletionTokens    float64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens float64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// deltaText returns the text of a delta's content: a string, or the text
// parts of a list of parts; "" for null.
func deltaText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("a delta's content is neither text nor a list of parts: %s", clip(string(raw), 80))
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
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
	var calls callParts
	var u Usage
	chunks, finished, done := 0, false, false
	err = readStream(ctx, body, func(_ string, data []byte) error {
		if string(data) == "[DONE]" {
			done = true
			return io.EOF
		}
		var c chatChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("a chunk cairn cannot read: %w", err)
		}
		if c.Error != nil {
			return &Error{Kind: ErrServer, Message: c.Error.Message}
		}
		chunks++
		if out.Model == "" {
			out.Model = c.Model
		}
		if c.Usage != nil {
			u.Input, u.Output = int64(c.Usage.PromptTokens), int64(c.Usage.CompletionTokens)
			if d := c.Usage.PromptTokensDetails; d != nil {
				u.Cached = int64(d.CachedTokens)
			}
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // one choice is asked for
			}
			t, err := deltaText(ch.Delta.Content)
			if err != nil {
				return err
			}
			text.WriteString(t)
			for _, d := range ch.Delta.ToolCalls {
				calls.add(d)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				out.RawStop, finished = *ch.FinishReason, true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if chunks == 0 {
		return nil, &Error{Kind: ErrStream, Message: "the stream held no completion"}
	}
	if !finished && !done {
		return nil, &Error{Kind: ErrStream, Message: "the stream ended before the completion did"}
	}
	if text.Len() > 0 {
		out.Content = append(out.Content, Block{Type: "text", Text: text.String()})
	}
	for _, c := range calls.all {
		out.Content = append(out.Content, Block{Type: "tool_use", ID: c.id, Name: c.name, Input: rawArguments(c.args.String())})
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
	if len(calls.all) > 0 {
		out.StopReason = StopToolUse // some servers say "stop" with calls
	}
	out.Usage = u
	return out, nil
}

// callParts puts a stream's tool calls together from their deltas. A
// call's first delta names its index, id and function; the next of the
// same index carry pieces of its arguments, whatever id they repeat (some
// servers send a new one with every delta). A delta that names a function
// starts a new call when the call of its index (or, without an index,
// the last call) is not in the middle of its arguments' JSON and either
// has another id or, without ids, is past its arguments' value: servers
// that send whole calls may give every one index 0.
type callParts struct {
	all     []*callPart
	byIndex map[int]*callPart // the last call of each index
	noIndex bool              // the last call was made by a delta without an index
}

type callPart struct {
	id, name string
	args     strings.Builder
	// Where the arguments' JSON stands, read as they arrive: before it,
	// in it (its depth; in a string; after a backslash in one), or past
	// it.
	state             partState
	depth             int
	inString, escaped bool
}

type partState uint8

const (
	partBefore partState = iota
	partOpen
	partEnded // the value closed, or what came was no JSON object or array
)

// write adds a piece of the call's arguments.
func (c *callPart) write(s string) {
	c.args.WriteString(s)
	for i := 0; i < len(s) && c.state != partEnded; i++ {
		b := s[i]
		switch {
		case c.state == partBefore:
			if b == '{' || b == '[' {
				c.state, c.depth = partOpen, 1
			} else if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
				c.state = partEnded
			}
		case c.escaped:
			c.escaped = false
		case c.inString:
			c.escaped, c.inString = b == '\\', b != '"'
		case b == '"':
			c.inString = true
		case b == '{' || b == '[':
			c.depth++
		case b == '}' || b == ']':
			if c.depth--; c.depth == 0 {
				c.state = partEnded
			}
		}
	}
}

func (p *callParts) add(d chatToolCall) {
	var c *callPart
	switch {
	case d.Index != nil:
		c = p.byIndex[*d.Index]
		if c == nil && p.noIndex {
			c = p.all[len(p.all)-1] // its first delta had no index
			p.index(*d.Index, c)
		}
	case len(p.all) > 0:
		c = p.all[len(p.all)-1]
	}
	if c == nil || p.starts(c, d) {
		c = &callPart{}
		p.all = append(p.all, c)
		p.noIndex = d.Index == nil
		if d.Index != nil {
			p.index(*d.Index, c)
		}
	}
	if c.id == "" {
		c.id = d.ID
	}
	if c.name == "" {
		c.name = d.Function.Name
	}
	c.write(d.Function.Arguments)
}

// starts reports whether delta d starts a call after c, the call it would
// otherwise join.
func (p *callParts) starts(c *callPart, d chatToolCall) bool {
	switch {
	case d.Function.Name == "" || c.name == "" || c.state == partOpen:
		return false
	case d.ID != "" && c.id != "":
		return d.ID != c.id
	}
	return c.state == partEnded // past its value: closed, or no object or array
}

func (p *callParts) index(i int, c *callPart) {
	if p.byIndex == nil {
		p.byIndex = map[int]*callPart{}
	}
	p.byIndex[i] = c
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
