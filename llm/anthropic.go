package llm

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

// anthropicProvider speaks the Anthropic Messages API.
type anthropicProvider struct {
	client anthropic.Client
	model  string
}

func newAnthropic(cfg Config) *anthropicProvider {
	opts := []option.RequestOption{option.WithMaxRetries(cfg.MaxRetries), option.WithAPIKey(cfg.Key)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...), model: cfg.Model}
}

func (p *anthropicProvider) Name() string  { return "anthropic" }
func (p *anthropicProvider) Model() string { return p.model }

func (p *anthropicProvider) Complete(ctx context.Context, r *Request) (*Response, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(p.model), MaxTokens: int64(maxTokens(r))}
	if r.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: r.System}}
	}
	for _, m := range r.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				blocks = append(blocks, anthropic.NewTextBlock(b.Text))
			case "tool_use":
				blocks = append(blocks, anthropic.NewToolUseBlock(b.ID, json.RawMessage(object(b.Input)), b.Name))
			case "tool_result":
				blocks = append(blocks, anthropic.NewToolResultBlock(b.ID, b.Text, b.IsError))
			}
		}
		if m.Role == "assistant" {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	for _, t := range r.Tools {
		var schema map[string]any
		json.Unmarshal(t.Schema, &schema)
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		if req, ok := schema["required"].([]any); ok {
			for _, x := range req {
				if s, ok := x.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				in.ExtraFields[k] = v
			}
		}
		tool := &anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tool.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: tool})
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			return nil, streamErr(err)
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) {
			return nil, classify(apiErr.StatusCode, apiErr.Message, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, streamErr(err)
	}
	if msg.ID == "" && len(msg.Content) == 0 {
		return nil, &Error{Kind: ErrStream, Message: "the stream held no message"}
	}
	out := &Response{Model: string(msg.Model), RawStop: string(msg.StopReason)}
	for _, c := range msg.Content {
		switch c.Type {
		case "text":
			out.Content = append(out.Content, Block{Type: "text", Text: c.Text})
		case "tool_use":
			out.Content = append(out.Content, Block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: object(c.Input)})
		}
	}
	switch msg.StopReason {
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
	u := msg.Usage
	out.Usage = Usage{Input: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, Output: u.OutputTokens, Cached: u.CacheReadInputTokens}
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
