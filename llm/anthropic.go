package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// anthropicVersion is the Messages API's version cairn speaks.
const anthropicVersion = "2023-06-01"

// anthropicProvider speaks the Anthropic Messages API.
type anthropicProvider struct {
	t      transport
	url    string
	header http.Header
	model  string
}

func newAnthropic(cfg Config) *anthropicProvider {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.anthropic.com"
	}
	h := http.Header{}
	if cfg.Key != "" {
		h.Set("X-Api-Key", cfg.Key)
	}
	h.Set("Anthropic-Version", anthropicVersion)
	return &anthropicProvider{t: newTransport(cfg), url: strings.TrimSuffix(base, "/") + "/v1/messages", header: h, model: cfg.Model}
}

func (p *anthropicProvider) Name() string  { return "anthropic" }
func (p *anthropicProvider) Model() string { return p.model }

// The Messages API's request, as cairn sends it.
type (
	anthropicRequest struct {
		Model     string             `json:"model"`
		MaxTokens int                `json:"max_tokens"`
		Stream    bool               `json:"stream"`
		System    []anthropicBlock   `json:"system,omitempty"`
		Messages  []anthropicMessage `json:"messages"`
		Tools     []anthropicTool    `json:"tools,omitempty"`
	}
	anthropicMessage struct {
		Role    string           `json:"role"`
		Content []anthropicBlock `json:"content"`
	}
	anthropicBlock struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   *string         `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

// anthropicUsage is a message's usage, as message_start and message_delta
// give it (numbers, read as floats: some compatible servers write 12.0).
type anthropicUsage struct {
	InputTokens              float64 `json:"input_tokens"`
	OutputTokens             float64 `json:"output_tokens"`
	CacheCreationInputTokens float64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     float64 `json:"cache_read_input_tokens"`
}

// anthropicEvent is one event of a Messages stream: the fields of every
// type of event cairn reads.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string         `json:"id"`
		Model string         `json:"model"`
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *anthropicProvider) Complete(ctx context.Context, r *Request) (*Response, error) {
	req := anthropicRequest{Model: p.model, MaxTokens: maxTokens(r), Stream: true}
	if r.System != "" {
		req.System = []anthropicBlock{{Type: "text", Text: &r.System}}
	}
	for _, m := range r.Messages {
		msg := anthropicMessage{Role: "user", Content: []anthropicBlock{}}
		if m.Role == "assistant" {
			msg.Role = "assistant"
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				msg.Content = append(msg.Content, anthropicBlock{Type: "text", Text: &b.Text})
			case "tool_use":
				msg.Content = append(msg.Content, anthropicBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: object(b.Input)})
			case "tool_result":
				msg.Content = append(msg.Content, anthropicBlock{Type: "tool_result", ToolUseID: b.ID, Content: &b.Text, IsError: b.IsError})
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range r.Tools {
		req.Tools = append(req.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: objectSchema(t.Schema)})
	}
	body, err := p.t.post(ctx, p.url, p.header, req)
	if err != nil {
		return nil, err
	}
	defer body.Close()

	out := &Response{}
	var u anthropicUsage
	started, stopped, ended := false, false, false
	type block struct {
		typ, id, name string
		text          strings.Builder
		start         json.RawMessage // the input content_block_start gave
		input         bytes.Buffer    // the input's deltas
	}
	var blocks []*block
	at := func(i int) (*block, error) {
		if i < 0 || i >= len(blocks) {
			return nil, fmt.Errorf("an event of content block %d, which did not start", i)
		}
		return blocks[i], nil
	}
	err = readStream(ctx, body, func(_ string, data []byte) error {
		var ev anthropicEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("an event cairn cannot read: %w", err)
		}
		switch ev.Type {
		case "message_start":
			if ev.Message == nil {
				return fmt.Errorf("a message_start without its message")
			}
			started = true
			out.Model, u = ev.Message.Model, ev.Message.Usage
		case "content_block_start":
			if ev.ContentBlock == nil || ev.Index != len(blocks) {
				return fmt.Errorf("content block %d started out of order", ev.Index)
			}
			c := ev.ContentBlock
			b := &block{typ: c.Type, id: c.ID, name: c.Name, start: c.Input}
			b.text.WriteString(c.Text)
			blocks = append(blocks, b)
		case "content_block_delta":
			b, err := at(ev.Index)
			if err != nil || ev.Delta == nil {
				return err
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text.WriteString(ev.Delta.Text)
			case "input_json_delta":
				b.input.WriteString(ev.Delta.PartialJSON)
			}
		case "message_delta":
			if ev.Delta != nil && ev.Delta.StopReason != "" {
				out.RawStop, stopped = ev.Delta.StopReason, true
			}
			if d := ev.Usage; d != nil {
				// Cumulative counts; the input's only when the API sends them.
				u.OutputTokens = d.OutputTokens
				if d.InputTokens > 0 {
					u.InputTokens = d.InputTokens
				}
				if d.CacheCreationInputTokens > 0 {
					u.CacheCreationInputTokens = d.CacheCreationInputTokens
				}
				if d.CacheReadInputTokens > 0 {
					u.CacheReadInputTokens = d.CacheReadInputTokens
				}
			}
		case "message_stop":
			ended = true
			return io.EOF
		case "error":
			// After a 200, whatever its type (overloaded_error, even
			// rate_limit_error): the provider's failure, which the job's
			// next attempt may get past.
			e := &Error{Kind: ErrServer, Message: "the stream reported an error"}
			if ev.Error != nil {
				e.Message = ev.Error.Type + ": " + ev.Error.Message
			}
			return e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !started {
		return nil, &Error{Kind: ErrStream, Message: "the stream held no message"}
	}
	if !stopped && !ended {
		return nil, &Error{Kind: ErrStream, Message: "the stream ended before the message did"}
	}
	for _, b := range blocks {
		switch b.typ {
		case "text":
			out.Content = append(out.Content, Block{Type: "text", Text: b.text.String()})
		case "tool_use":
			input := json.RawMessage(b.input.Bytes())
			if b.input.Len() == 0 {
				input = b.start
			}
			out.Content = append(out.Content, Block{Type: "tool_use", ID: b.id, Name: b.name, Input: object(input)})
		}
	}
	switch out.RawStop {
	case "end_turn", "stop_sequence":
		out.StopReason = StopEnd
	case "tool_use":
		out.StopReason = StopToolUse
	case "max_tokens":
		out.StopReason = StopMaxTokens
	case "refusal":
		out.StopReason = StopRefusal
	default:
		out.StopReason = StopOther
	}
	out.Usage = Usage{Input: int64(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens), Output: int64(u.OutputTokens), Cached: int64(u.CacheReadInputTokens)}
	return out, nil
}

// maxTokens is the request's output bound, 4096 when it sets none.
func maxTokens(r *Request) int {
	if r.MaxTokens > 0 {
		return r.MaxTokens
	}
	return 4096
}

// object returns raw when it is a JSON object, else {}: a tool's
// arguments, which a model may give as anything.
func object(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return json.RawMessage("{}")
	}
	return raw
}

// objectSchema returns a tool's schema as the Messages API takes it: a
// JSON object whose type is "object".
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	m["type"] = json.RawMessage(`"object"`)
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}
