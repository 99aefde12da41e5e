package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceFixtures serves the fixtures the MCP conformance suite's server
// scenarios call (@modelcontextprotocol/conformance 0.2.0-alpha.11: tools
// named test_*, resources test://…, prompts test_*, completion and resource
// subscriptions) beside cairn's own tools, resources and prompts. It exists
// only in the test binary: runCairn gives its extend to cairn serve and
// cairn mcp when $CAIRN_TEST_MCP_FIXTURES is 1, so that TestConformance's
// fixture run exercises cairn's real transport (stateless streamable HTTP,
// JSON answers, the bearer token) with every scenario, not only those cairn's
// own tools can answer. Each fixture does what its scenario's description in
// the suite asks, and no more.
type conformanceFixtures struct {
	// key signs the requestState of input-required results (HMAC-SHA256),
	// so that a state the client altered is refused.
	key []byte
	// image and audio are the bytes of the image and audio contents: a 1×1
	// red PNG and a short silent WAV.
	image, audio []byte
}

// newConformanceFixtures returns the fixtures, with a new signing key.
func newConformanceFixtures() *conformanceFixtures {
	return &conformanceFixtures{key: []byte(rand.Text()), image: redPixelPNG(), audio: silentWAV()}
}

// extend is the mcpserver.Options.Extend of fixture mode: it sets the
// handlers and the capability cairn has no use for (completion, resource
// subscriptions, logging) on opts, and returns what adds the fixtures to the
// new server.
func (f *conformanceFixtures) extend(opts *mcp.ServerOptions) func(*mcp.Server) {
	opts.CompletionHandler = f.complete
	// Subscriptions are accepted and forgotten: a stateless server has no
	// session to send resource updates on.
	opts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
	opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	if opts.Capabilities == nil {
		opts.Capabilities = &mcp.ServerCapabilities{}
	}
	opts.Capabilities.Logging = &mcp.LoggingCapabilities{}
	return func(s *mcp.Server) {
		for _, t := range f.tools(s) {
			schema := cmpOr(t.schema, `{"type":"object"}`)
			s.AddTool(&mcp.Tool{Name: t.name, Description: t.description, InputSchema: json.RawMessage(schema)}, t.run)
		}
		f.addResources(s)
		f.addPrompts(s)
	}
}

// fixtureTool is one of the suite's fixture tools.
type fixtureTool struct {
	name, description string
	// schema is the input schema's JSON; empty: no arguments.
	schema string
	run    mcp.ToolHandler
}

// tools returns the fixture tools of server s, in the order of the
// scenarios that call them.
func (f *conformanceFixtures) tools(s *mcp.Server) []fixtureTool {
	return []fixtureTool{
		// tools-call-*: one content type each, then all of them.
		{name: "test_simple_text", description: "Returns one text content.", run: fixedAnswer(
			&mcp.TextContent{Text: "This is a simple text response for testing."})},
		{name: "test_image_content", description: "Returns one image content (a 1x1 PNG).", run: fixedAnswer(
			&mcp.ImageContent{MIMEType: "image/png", Data: f.image})},
		{name: "test_audio_content", description: "Returns one audio content (a silent WAV).", run: fixedAnswer(
			&mcp.AudioContent{MIMEType: "audio/wav", Data: f.audio})},
		{name: "test_embedded_resource", description: "Returns one embedded text resource.", run: fixedAnswer(
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}})},
		{name: "test_multiple_content_types", description: "Returns a text, an image and an embedded resource.", run: fixedAnswer(
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: f.image},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}})},
		{name: "test_error_handling", description: "Always fails, with an error result.", run: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
		}},
		{name: "test_tool_with_logging", description: "Sends three info log messages, 50ms apart, while it runs.", run: f.logEvery},
		{name: "test_tool_with_progress", description: "Reports progress 0, 50 and 100 of 100, 50ms apart, to the call's progress token.", run: f.progressEvery},
		// tools-call-sampling and -elicitation, elicitation-sep1034-defaults
		// and -sep1330-enums: the questions are input requests, which the SDK
		// asks a client of an older revision itself, in the call.
		{name: "test_sampling", description: "Asks the client's LLM the prompt and returns its answer.",
			schema: `{"type":"object","properties":{"prompt":{"type":"string","description":"What to ask the LLM"}},"required":["prompt"]}`, run: f.sampling},
		{name: "test_elicitation", description: "Asks the user the message and returns the answer.",
			schema: `{"type":"object","properties":{"message":{"type":"string","description":"What to ask the user"}},"required":["message"]}`, run: f.elicitation},
		{name: "test_elicitation_sep1034_defaults", description: "Asks the user a form whose fields all have defaults (SEP-1034).",
			run: askForm("Test defaults for primitives", sep1034Schema)},
		{name: "test_elicitation_sep1330_enums", description: "Asks the user a form with the five enum kinds (SEP-1330).",
			run: askForm("Test enum schemas", sep1330Schema)},
		// json-schema-2020-12.
		{name: "json_schema_2020_12_tool", description: "Takes arguments described with JSON Schema 2020-12 keywords.", schema: schema202012,
			run: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("called with " + string(req.Params.Arguments)), nil
			}},
		// server-sse-polling (when the server keeps sessions).
		{name: "test_reconnection", description: "Closes its SSE stream before answering, when it has one (SEP-1699).", run: f.reconnect},
		// http-custom-header-server-validation: region travels in the
		// Mcp-Param-Region header too, which the SDK checks against it.
		{name: "test_x_mcp_header", description: "Echoes region, which the client mirrors into the Mcp-Param-Region header (SEP-2243).",
			schema: `{"type":"object","properties":{"region":{"type":"string","description":"Mirrored into Mcp-Param-Region","x-mcp-header":"Region"},"level":{"type":"integer","description":"Not mirrored"}}}`,
			run: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct{ Region string }
				if err := decodeArguments(req, &in); err != nil {
					return nil, err
				}
				return textResult("region=" + in.Region), nil
			}},
		// server-stateless (SEP-2575): its diagnostic tools.
		{name: "test_missing_capability", description: "Needs the client's sampling capability: refuses a client that did not declare it (-32021).", run: f.needSampling},
		{name: "test_streaming_elicitation", description: "Reports progress while it runs, and sends the client no request on the response stream.", run: f.progressEvery},
		{name: "test_logging_tool", description: "Sends a log message, which the SDK drops unless the request asked for a log level.", run: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "fixture", Data: "test_logging_tool ran"})
			return textResult("logged"), nil
		}},
		{name: "test_trigger_tool_change", description: "Changes the tool list (notifications/tools/list_changed).", run: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(&mcp.Tool{Name: "test_changed_tool", Description: "Added by test_trigger_tool_change.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				fixedAnswer(&mcp.TextContent{Text: "changed"}))
			return textResult("tool list changed"), nil
		}},
		{name: "test_trigger_prompt_change", description: "Changes the prompt list (notifications/prompts/list_changed).", run: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddPrompt(&mcp.Prompt{Name: "test_changed_prompt", Description: "Added by test_trigger_prompt_change."},
				func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "changed"}}}}, nil
				})
			return textResult("prompt list changed"), nil
		}},
		// input-required-result-* (SEP-2322, 2026-07-28): multi-round calls.
		{name: "test_input_required_result_elicitation", description: "Asks the user's name, then greets them.", run: f.askName},
		{name: "test_input_required_result_sampling", description: "Asks the client's LLM a question, then returns its answer.", run: f.askCapital},
		{name: "test_input_required_result_list_roots", description: "Asks the client's roots, then lists them.", run: f.askRoots},
		{name: "test_input_required_result_request_state", description: "Asks for a confirmation with a signed requestState, then checks it.", run: f.confirm},
		{name: "test_input_required_result_multiple_inputs", description: "Asks a name, an LLM greeting and the roots in one round.", run: f.askAll},
		{name: "test_input_required_result_multi_round", description: "Asks a name, then a colour, carrying the name in the signed requestState.", run: f.askTwice},
		{name: "test_input_required_result_tampered_state", description: "Asks for a confirmation with a signed requestState; refuses an altered one.", run: f.confirm},
		{name: "test_input_required_result_capabilities", description: "Asks only for the input the client's declared capabilities allow.", run: f.askDeclared},
	}
}

// fixedAnswer returns a tool handler that returns contents.
func fixedAnswer(contents ...mcp.Content) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: contents}, nil
	}
}

// textResult is a result of one text content.
func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// decodeArguments decodes a call's arguments into v; malformed ones are the
// caller's error (-32602).
func decodeArguments(req *mcp.CallToolRequest, v any) error {
	if len(req.Params.Arguments) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Params.Arguments, v); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("arguments of %s: %v", req.Params.Name, err)}
	}
	return nil
}

// waitFor waits d, or until ctx ends.
func waitFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logEvery sends three log messages 50ms apart: the scenario checks that a
// client receives several during one call. Like progress, logging is
// advisory: a message the transport cannot deliver does not fail the call.
func (f *conformanceFixtures) logEvery(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := waitFor(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "fixture", Data: msg})
	}
	return textResult("Tool with logging executed successfully"), nil
}

// progressEvery reports progress 0, 50 and 100 of 100, 50ms apart, when the
// call has a progress token, and waits as long when it has none.
func (f *conformanceFixtures) progressEvery(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	token := req.Params.GetProgressToken()
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := waitFor(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if token == nil {
			continue
		}
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100, Message: fmt.Sprintf("%v of 100", p)})
	}
	return textResult(fmt.Sprintf("done (progress token %v)", token)), nil
}

// reconnect closes the call's SSE stream, when it has one, and answers once
// the client could have reconnected: the scenario checks that the answer
// reaches it on the new stream.
func (f *conformanceFixtures) reconnect(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Extra != nil && req.Extra.CloseSSEStream != nil {
		req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		if err := waitFor(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return textResult("answered after the stream closed"), nil
}

// needSampling runs only for a client that declared sampling, and refuses
// others with the SEP-2575 error naming the capability it needs.
func (f *conformanceFixtures) needSampling(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if caps := req.ClientCapabilities(); caps != nil && caps.Sampling != nil {
		return textResult("the client declared sampling"), nil
	}
	data, err := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
	if err != nil {
		return nil, err
	}
	return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "test_missing_capability needs the sampling capability, which the client did not declare", Data: data}
}

// askForm returns a tool handler that asks the user the form schema with
// message, and returns the answer.
func askForm(message, schema string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["form"].(*mcp.ElicitResult); ok {
			return textResult(fmt.Sprintf("Elicitation completed: action=%s, content=%v", r.Action, r.Content)), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"form": &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)},
		}}, nil
	}
}

// sampling is test_sampling: it asks the client's LLM the prompt.
func (f *conformanceFixtures) sampling(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct{ Prompt string }
	if err := decodeArguments(req, &in); err != nil {
		return nil, err
	}
	if reply, ok := sampledText(req.Params.InputResponses, "completion"); ok {
		return textResult("LLM response: " + reply), nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"completion": samplingRequest(in.Prompt, 100)}}, nil
}

// elicitation is test_elicitation: it asks the user the message.
func (f *conformanceFixtures) elicitation(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct{ Message string }
	if err := decodeArguments(req, &in); err != nil {
		return nil, err
	}
	return askForm(in.Message, `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)(ctx, req)
}

// samplingRequest is a sampling request asking the LLM prompt.
func samplingRequest(prompt string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: maxTokens, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}}
}

// formRequest is an elicitation of one required field of type typ.
func formRequest(message, field, typ string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(
		fmt.Sprintf(`{"type":"object","properties":{%q:{"type":%q}},"required":[%q]}`, field, typ, field))}
}

// acceptedForm returns the content of the elicitation answer id when the user
// accepted it.
func acceptedForm(in mcp.InputResponseMap, id string) (map[string]any, bool) {
	r, ok := in[id].(*mcp.ElicitResult)
	if !ok || r.Action != "accept" {
		return nil, false
	}
	return r.Content, true
}

// sampledText returns the text of the sampling answer id.
func sampledText(in mcp.InputResponseMap, id string) (string, bool) {
	r, ok := in[id].(*mcp.CreateMessageWithToolsResult)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), true
}

// askName asks the user's name until it has one (a missing, declined or
// unrelated answer is asked again), then greets them.
func (f *conformanceFixtures) askName(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if c, ok := acceptedForm(req.Params.InputResponses, "user_name"); ok {
		if name, _ := c["name"].(string); name != "" {
			return textResult("Hello, " + name + "!"), nil
		}
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": formRequest("What is your name?", "name", "string")}}, nil
}

// askCapital asks the client's LLM a question, then returns its answer.
func (f *conformanceFixtures) askCapital(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if reply, ok := sampledText(req.Params.InputResponses, "capital_question"); ok {
		return textResult("Sampling response: " + reply), nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"capital_question": samplingRequest("What is the capital of France?", 100)}}, nil
}

// askRoots asks the client's roots, then lists them.
func (f *conformanceFixtures) askRoots(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if r, ok := req.Params.InputResponses["client_roots"].(*mcp.ListRootsResult); ok {
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return textResult(fmt.Sprintf("%d root(s): %s", len(uris), strings.Join(uris, ", "))), nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}}, nil
}

// confirm asks for a confirmation with a signed requestState, and completes
// when the answer comes back with the state intact; an altered state is
// refused (-32602).
func (f *conformanceFixtures) confirm(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if st := req.Params.RequestState; st != "" {
		var s fixtureState
		if err := f.open(st, &s); err != nil {
			return nil, err
		}
		if _, ok := acceptedForm(req.Params.InputResponses, "confirm"); ok && s.Tool == req.Params.Name {
			return textResult("state-ok: the requestState is the one this server signed"), nil
		}
	}
	st, err := f.seal(fixtureState{Tool: req.Params.Name})
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": formRequest("Please confirm", "ok", "boolean")}, RequestState: st}, nil
}

// askAll asks a name, an LLM greeting and the roots in one round, and
// completes when all three came back.
func (f *conformanceFixtures) askAll(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := req.Params.InputResponses
	c, named := acceptedForm(in, "user_name")
	greeting, greeted := sampledText(in, "greeting")
	roots, rooted := in["client_roots"].(*mcp.ListRootsResult)
	if named && greeted && rooted {
		return textResult(fmt.Sprintf("%s %v (%d roots)", greeting, c["name"], len(roots.Roots))), nil
	}
	st, err := f.seal(fixtureState{Tool: req.Params.Name})
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		"user_name":    formRequest("What is your name?", "name", "string"),
		"greeting":     samplingRequest("Generate a greeting", 50),
		"client_roots": &mcp.ListRootsParams{},
	}, RequestState: st}, nil
}

// askTwice asks a name, then a colour: the round and the name travel in the
// signed requestState, as a stateless server keeps nothing between calls.
func (f *conformanceFixtures) askTwice(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var s fixtureState
	if st := req.Params.RequestState; st != "" {
		if err := f.open(st, &s); err != nil {
			return nil, err
		}
	}
	in := req.Params.InputResponses
	if s.Round == 1 {
		if c, ok := acceptedForm(in, "step1"); ok {
			s.Name, _ = c["name"].(string)
			s.Round = 2
		}
	} else if s.Round == 2 {
		if c, ok := acceptedForm(in, "step2"); ok {
			return textResult(fmt.Sprintf("%s likes %v", s.Name, c["color"])), nil
		}
	}
	want := mcp.InputRequestMap{"step1": formRequest("Step 1: What is your name?", "name", "string")}
	if s.Round == 2 {
		want = mcp.InputRequestMap{"step2": formRequest("Step 2: What is your favorite color?", "color", "string")}
	} else {
		s.Round = 1
	}
	s.Tool = req.Params.Name
	st, err := f.seal(s)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: want, RequestState: st}, nil
}

// askDeclared asks only for the input kinds the client's declared
// capabilities allow (the request's _meta on the 2026-07-28 revision), and
// completes once answered, or at once when none is allowed.
func (f *conformanceFixtures) askDeclared(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if len(req.Params.InputResponses) > 0 {
		return textResult("answered"), nil
	}
	want := mcp.InputRequestMap{}
	if caps := req.ClientCapabilities(); caps != nil {
		if caps.Elicitation != nil {
			want["user_name"] = formRequest("What is your name?", "name", "string")
		}
		if caps.Sampling != nil {
			want["greeting"] = samplingRequest("Generate a short greeting", 50)
		}
		if caps.RootsV2 != nil || caps.Roots.ListChanged {
			want["client_roots"] = &mcp.ListRootsParams{}
		}
	}
	if len(want) == 0 {
		return textResult("the client declared no capability to ask it anything"), nil
	}
	return &mcp.CallToolResult{InputRequests: want}, nil
}

// fixtureState is what a requestState carries: the tool it is for, and the
// rounds of test_input_required_result_multi_round.
type fixtureState struct {
	Tool  string `json:"tool"`
	Round int    `json:"round,omitempty"`
	Name  string `json:"name,omitempty"`
}

// seal returns s as a requestState: its JSON and its HMAC, base64url.
func (f *conformanceFixtures) seal(s fixtureState) (string, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("seal requestState: %w", err)
	}
	m := hmac.New(sha256.New, f.key)
	m.Write(data)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(data) + "." + enc.EncodeToString(m.Sum(nil)), nil
}

// open decodes a requestState that seal made into s; one altered or not
// made here is the caller's error (-32602).
func (f *conformanceFixtures) open(state string, s *fixtureState) error {
	enc := base64.RawURLEncoding
	body, sig, _ := strings.Cut(state, ".")
	data, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	m := hmac.New(sha256.New, f.key)
	m.Write(data)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, m.Sum(nil)) || json.Unmarshal(data, s) != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState fails its integrity check: it is not one this server made"}
	}
	return nil
}

// addResources adds the fixture resources: a text, a binary, a template
// and one to subscribe to.
func (f *conformanceFixtures) addResources(s *mcp.Server) {
	static := func(uri, name, mime string, c mcp.ResourceContents) {
		c.URI, c.MIMEType = uri, mime
		s.AddResource(&mcp.Resource{URI: uri, Name: name, Description: "Conformance fixture " + uri, MIMEType: mime},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{&c}}, nil
			})
	}
	static("test://static-text", "static-text", "text/plain", mcp.ResourceContents{Text: "This is the content of the static text resource."})
	static("test://static-binary", "static-binary", "image/png", mcp.ResourceContents{Blob: f.image})
	static("test://watched-resource", "watched-resource", "text/plain", mcp.ResourceContents{Text: "Watched resource content."})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "Conformance fixture: data of an id.", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			// The SDK calls it only for a URI the template matches.
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			data, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(data)}}}, nil
		})
}

// addPrompts adds the fixture prompts.
func (f *conformanceFixtures) addPrompts(s *mcp.Server) {
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple prompt", Description: "A prompt without arguments."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Description: "A prompt of two arguments (arg1 completes).",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Description: "First argument", Required: true}, {Name: "arg2", Description: "Second argument", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt with a resource", Description: "A prompt embedding the resource resourceUri.",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt with an image", Description: "A prompt holding an image."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.ImageContent{MIMEType: "image/png", Data: f.image}),
				user(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
	// input-required-result-non-tool-request: multi-round prompts/get.
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Title: "Prompt asking for context", Description: "Asks the user for context, then returns a prompt of it."},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if c, ok := acceptedForm(req.Params.InputResponses, "user_context"); ok {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: fmt.Sprintf("Context: %v", c["context"])})}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": formRequest("What context should the prompt use?", "context", "string")}}, nil
		})
}

// complete suggests the values of test_prompt_with_arguments's arg1 that
// start with what the user typed; other arguments have none.
func (f *conformanceFixtures) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	values := []string{}
	if r := req.Params.Ref; r.Type == "ref/prompt" && r.Name == "test_prompt_with_arguments" && req.Params.Argument.Name == "arg1" {
		for _, v := range []string{"paris", "park", "party", "test-value"} {
			if strings.HasPrefix(v, req.Params.Argument.Value) {
				values = append(values, v)
			}
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}

// redPixelPNG returns a 1×1 red PNG.
func redPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	png.Encode(&b, img) // writing to memory cannot fail
	return b.Bytes()
}

// silentWAV returns a WAV of 8 silent 16-bit mono samples at 8 kHz.
func silentWAV() []byte {
	const rate, samples = 8000, 8
	var b bytes.Buffer
	put := func(v any) { binary.Write(&b, binary.LittleEndian, v) } // writing to memory cannot fail
	b.WriteString("RIFF")
	put(uint32(36 + 2*samples))
	b.WriteString("WAVEfmt ")
	put(uint32(16))       // fmt chunk size
	put(uint16(1))        // PCM
	put(uint16(1))        // mono
	put(uint32(rate))     // sample rate
	put(uint32(2 * rate)) // byte rate
	put(uint16(2))        // block align
	put(uint16(16))       // bits per sample
	b.WriteString("data")
	put(uint32(2 * samples))
	b.Write(make([]byte, 2*samples))
	return b.Bytes()
}

// schema202012 is json_schema_2020_12_tool's input schema: the 2020-12
// keywords the scenario checks survive tools/list ($schema, $defs with an
// $anchor, allOf/anyOf, if/then/else, additionalProperties).
const schema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// sep1034Schema is a form whose fields of every primitive type have a
// default (SEP-1034).
const sep1034Schema = `{"type": "object", "properties": {
	"name": {"type": "string", "description": "User name", "default": "John Doe"},
	"age": {"type": "integer", "description": "User age", "default": 30},
	"score": {"type": "number", "description": "User score", "default": 95.5},
	"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
	"verified": {"type": "boolean", "description": "Verified", "default": true}
}}`

// sep1330Schema is a form with the five kinds of enum of SEP-1330: untitled
// and titled single choices, the legacy enumNames, untitled and titled
// multiple choices.
const sep1330Schema = `{"type": "object", "properties": {
	"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
	"titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
	"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
	"untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
	"titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]}}
}}`
