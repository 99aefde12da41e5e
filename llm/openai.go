package llm

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// openaiProvider speaks an OpenAI-compatible Chat Completions API.
type openaiProvider struct {
	client openai.Client
	model  string
}

func newOpenAI(cfg Config) *openaiProvider {
	key := cfg.Key
	if key == "" {
		key = "none" // a local server asks for none; the SDK wants one
	}
	opts := []option.RequestOption{option.WithMaxRetries(cfg.MaxRetries), option.WithAPIKey(key)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &openaiProvider{client: openai.NewClient(opts...), model: cfg.Model}
}

func (p *openaiProvider) Name() string  { return "openai" }
func (p *openaiProvider) Model() string { return p.model }

func (p *openaiProvider) Complete(ctx context.Context, r *Request) (*Response, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.model),
		MaxTokens:     param.NewOpt(int64(maxTokens(r))),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if r.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(r.System))
	}
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			a := openai.ChatCompletionAssistantMessageParam{}
			var text string
			for _, b := range m.Content {
				switch b.Type {
				case "text":
					text += b.Text
				case "tool_use":
					a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
						OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: b.ID,
							Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: arguments(b.Input)}},
					})
				}
			}
			if text != "" {
				a.Content.OfString = param.NewOpt(text)
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			continue
		}
		var text string
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				text += b.Text
			case "tool_result":
				content := b.Text
				if b.IsError {
					content = "Error: " + content
				}
				params.Messages = append(params.Messages, openai.ToolMessage(content, b.ID))
			}
		}
		if text != "" {
			params.Messages = append(params.Messages, openai.UserMessage(text))
		}
	}
	for _, t := range r.Tools {
		var schema map[string]any
		json.Unmarshal(t.Schema, &schema)
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			return nil, classify(apiErr.StatusCode, apiErr.Message, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, streamErr(err)
	}
	if chunks == 0 || len(acc.Choices) == 0 {
		return nil, &Error{Kind: ErrStream, Message: "the stream held no completion"}
	}
	ch := acc.Choices[0]
	out := &Response{Model: acc.Model, RawStop: string(ch.FinishReason)}
	if ch.Message.Content != "" {
		out.Content = append(out.Content, Block{Type: "text", Text: ch.Message.Content})
	}
	for _, tc := range ch.Message.ToolCalls {
		out.Content = append(out.Content, Block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: rawArguments(tc.Function.Arguments)})
	}
	switch ch.FinishReason {
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
	if len(ch.Message.ToolCalls) > 0 {
		out.StopReason = StopToolUse // some servers say "stop" with calls
	}
	u := acc.Usage
	out.Usage = Usage{Input: u.PromptTokens, Output: u.CompletionTokens, Cached: u.PromptTokensDetails.CachedTokens}
	return out, nil
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
