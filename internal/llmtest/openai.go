package llmtest

import (
	"fmt"
	"net/http"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

// readResponses reads a Responses API request. A turn of the model's is a
// run of calls in the input.
func readResponses(body map[string]any) *Request {
	req := &Request{Model: str(body["model"]), Stream: body["stream"] == true, System: text(body["instructions"])}
	for _, t := range asList(body["tools"]) {
		m, _ := t.(map[string]any)
		switch name := str(m["name"]); {
		case str(m["type"]) == "namespace":
			// Tools grouped under a name (an MCP server's): offered as
			// NAME__TOOL, called with the namespace apart.
			for _, sub := range asList(m["tools"]) {
				sm, _ := sub.(map[string]any)
				full := name + "__" + str(sm["name"])
				req.Tools = append(req.Tools, full)
				if req.namespaced == nil {
					req.namespaced = map[string][2]string{}
				}
				req.namespaced[full] = [2]string{name, str(sm["name"])}
			}
		case name != "":
			req.Tools = append(req.Tools, name)
		case str(m["type"]) != "":
			req.Tools = append(req.Tools, str(m["type"]))
		}
	}
	inCalls := false
	input := asList(body["input"])
	if s, ok := body["input"].(string); ok {
		req.Prompt = s
	}
	for _, it := range input {
		m, _ := it.(map[string]any)
		switch typ := str(m["type"]); typ {
		case "function_call", "custom_tool_call", "local_shell_call":
			if !inCalls {
				req.Turn++
			}
			inCalls = true
			continue
		case "function_call_output", "custom_tool_call_output":
			req.Results = append(req.Results, text(m["output"]))
		default:
			if str(m["role"]) != "assistant" {
				req.Prompt += text(m["content"])
			}
		}
		inCalls = false
	}
	return req
}

// writeResponses answers with a response: a message, then function calls.
func writeResponses(w http.ResponseWriter, req *Request, txt string, calls []call) {
	id := fmt.Sprintf("resp_%d", req.Turn)
	var output []any
	if txt != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": txt, "annotations": []any{}}}})
	}
	for _, c := range calls {
		item := map[string]any{"type": "function_call", "id": "fc_" + c.id, "call_id": c.id, "name": c.name, "arguments": c.args, "status": "completed"}
		if ns, ok := req.namespaced[c.name]; ok {
			item["namespace"], item["name"] = ns[0], ns[1]
		}
		output = append(output, item)
	}
	usage := map[string]any{"input_tokens": 100 + 10*req.Turn, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120 + 10*req.Turn}
	resp := map[string]any{"id": id, "object": "response", "created_at": 0, "status": "completed", "model": req.Model,
		"output": output, "usage": usage}
	if !req.Stream {
		writeJSON(w, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	ev := func(typ string, v map[string]any) {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		sse(w, typ, v)
	}
	created := map[string]any{"id": id, "object": "response", "created_at": 0, "status": "in_progress", "model": req.Model, "output": []any{}}
	ev("response.created", map[string]any{"response": created})
	for i, item := range output {
		m := item.(map[string]any)
		ev("response.output_item.added", map[string]any{"output_index": i, "item": m})
		if str(m["type"]) == "message" {
			ev("response.output_text.delta", map[string]any{"item_id": m["id"], "output_index": i, "content_index": 0, "delta": txt})
			ev("response.output_text.done", map[string]any{"item_id": m["id"], "output_index": i, "content_index": 0, "text": txt})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": m})
	}
	ev("response.completed", map[string]any{"response": resp})
}

// readChat reads a Chat Completions request. A turn of the model's is an
// assistant message with tool calls.
func readChat(body map[string]any) *Request {
	req := &Request{Model: str(body["model"]), Stream: body["stream"] == true}
	for _, t := range asList(body["tools"]) {
		m, _ := t.(map[string]any)
		f, _ := m["function"].(map[string]any)
		req.Tools = append(req.Tools, str(f["name"]))
	}
	for _, it := range asList(body["messages"]) {
		m, _ := it.(map[string]any)
		switch str(m["role"]) {
		case "system", "developer":
			req.System += text(m["content"])
		case "assistant":
			if len(asList(m["tool_calls"])) > 0 {
				req.Turn++
			}
		case "tool":
			req.Results = append(req.Results, text(m["content"]))
		default:
			req.Prompt += text(m["content"])
		}
	}
	return req
}

// writeChat answers with a completion: text, then tool calls.
func writeChat(w http.ResponseWriter, req *Request, txt string, calls []call) {
	id := fmt.Sprintf("chatcmpl_%d", req.Turn)
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	var tcs []any
	for i, c := range calls {
		tcs = append(tcs, map[string]any{"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
	}
	usage := map[string]any{"prompt_tokens": 100 + 10*req.Turn, "completion_tokens": 20, "total_tokens": 120 + 10*req.Turn}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": txt}
		if len(tcs) > 0 {
			msg["tool_calls"] = tcs
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, fin any, u any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
		if u != nil {
			c["usage"] = u
		}
		sse(w, "", c)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if txt != "" {
		chunk(map[string]any{"content": txt}, nil, nil)
	}
	if len(tcs) > 0 {
		chunk(map[string]any{"tool_calls": tcs}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}
