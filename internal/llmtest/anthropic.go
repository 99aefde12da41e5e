package llmtest

import (
	"encoding/json"
	"net/http"
)

// readAnthropic reads a Messages API request.
func readAnthropic(body map[string]any) *Request {
	req := &Request{Model: str(body["model"]), Stream: body["stream"] == true, System: text(body["system"])}
	for _, t := range asList(body["tools"]) {
		if m, ok := t.(map[string]any); ok {
			req.Tools = append(req.Tools, str(m["name"]))
		}
	}
	for _, m := range asList(body["messages"]) {
		msg, _ := m.(map[string]any)
		if str(msg["role"]) == "assistant" {
			for _, c := range asList(msg["content"]) {
				if b, _ := c.(map[string]any); str(b["type"]) == "tool_use" {
					req.Turn++
					break
				}
			}
			continue
		}
		for _, c := range asList(msg["content"]) {
			b, _ := c.(map[string]any)
			if str(b["type"]) == "tool_result" {
				req.Results = append(req.Results, text(b["content"]))
			}
		}
		req.Prompt += text(msg["content"])
	}
	return req
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// writeAnthropic answers with a message: text, then tool_use blocks.
func writeAnthropic(w http.ResponseWriter, req *Request, txt string, calls []call) {
	stop := "end_turn"
	if len(calls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 100 + 10*req.Turn, "output_tokens": 20, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
	var content []any
	if txt != "" {
		content = append(content, map[string]any{"type": "text", "text": txt})
	}
	for _, c := range calls {
		var input any
		json.Unmarshal([]byte(c.args), &input)
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_" + c.id, "name": c.name, "input": input})
	}
	msg := map[string]any{"id": "msg_" + itoa(req.Turn), "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		writeJSON(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1}
	sse(w, "message_start", map[string]any{"type": "message_start", "message": start})
	i := 0
	if txt != "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": txt}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for _, c := range calls {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + c.id, "name": c.name, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": c.args}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": usage["output_tokens"]}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
