package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"cairn/agent"
	"cairn/agent/command"
)

func init() {
	register(&cliKind{
		name: "opencode", program: "opencode", pkg: "opencode-ai",
		help:       "OpenCode, confined",
		minVersion: "1.0.0",
		keyEnv:     "OPENAI_API_KEY",
		folders:    []string{".opencode/bin", ".local/bin", ".npm-global/bin", "/usr/local/bin", "/opt/homebrew/bin"},
		login:      []string{".local/share/opencode/auth.json"},
		provider:   []string{"api.openai.com:443", "api.anthropic.com:443", "openrouter.ai:443"},
		// It installs its providers' packages (@ai-sdk/…) into its cache,
		// which is the job's private home: from npm, at every job.
		always: []string{"registry.npmjs.org:443"},
		start:  opencodeStart,
	})
}

// opencodeStart runs "opencode run --format json" with the prompt as its
// message and a config cairn writes (OPENCODE_CONFIG), in a private home
// whose XDG folders hold nothing of the user's: permissions that allow
// reading and editing but deny the shell, the web, subagents and any
// folder outside the workspace; cairn's MCP server; and, with
// agent.base_url, an OpenAI-compatible provider "cairn" at that address.
func opencodeStart(r *cliRuntime, w *command.Workspace, t *agent.Task) (*command.Start, error) {
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"autoupdate": false,
		"share":      "disabled",
		"permission": map[string]any{
			"*":                  "allow",
			"edit":               "allow",
			"bash":               "deny",
			"webfetch":           "deny",
			"websearch":          "deny",
			"codesearch":         "deny",
			"task":               "deny",
			"external_directory": "deny",
		},
	}
	if t.ReadOnly {
		perm := cfg["permission"].(map[string]any)
		perm["edit"] = "deny"
	}
	model := r.set.Model
	if r.set.BaseURL != "" {
		if model == "" {
			model = "default"
		}
		opts := map[string]any{"baseURL": r.set.BaseURL}
		if r.key() != "" {
			opts["apiKey"] = "{env:CAIRN_PROVIDER_KEY}"
		} else {
			opts["apiKey"] = "none"
		}
		cfg["provider"] = map[string]any{"cairn": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "cairn", "options": opts,
			"models": map[string]any{model: map[string]any{"name": model, "tool_call": true}},
		}}
		model = "cairn/" + model
	}
	name := "cairn"
	if w.Tools != nil {
		name = w.Tools.Name
		cfg["mcp"] = map[string]any{name: map[string]any{
			"type": "local", "command": append([]string{w.Tools.Command}, w.Tools.Args...),
			"environment": w.Tools.Env, "enabled": true,
		}}
	}
	path := filepath.Join(w.Temp, "opencode.json")
	if err := writeJSON(path, cfg); err != nil {
		return nil, err
	}
	env := []string{
		"OPENCODE_CONFIG=" + path,
		"OPENCODE_DISABLE_PROJECT_CONFIG=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"XDG_CONFIG_HOME=" + filepath.Join(w.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(w.Home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(w.Home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(w.Home, ".local", "state"),
		"NO_COLOR=1",
	}
	if key := r.key(); key != "" {
		if r.set.BaseURL != "" {
			env = append(env, "CAIRN_PROVIDER_KEY="+key)
		} else {
			env = append(env, r.keyEnv()+"="+key)
		}
	}
	toolName := func(tool string) string { return name + "_" + tool }
	argv := []string{"opencode", "run", "--format", "json", "--dir", w.Dir}
	if model != "" {
		argv = append(argv, "-m", model)
	}
	if r.set.Effort != "" {
		argv = append(argv, "--variant", r.set.Effort)
	}
	argv = append(argv, "--", r.prompt(w, t, toolName))
	return &command.Start{
		Argv: argv, Env: env,
		MaxLine: maxEventLine,
		Parser:  &opencodeParser{stream: newStream(t, w)},
	}, nil
}

// opencodeParser reads opencode run --format json: step, text, tool_use
// and error events, each with the part it concerns.
type opencodeParser struct {
	*stream
	usage  agent.Usage
	steps  int
	failed string
	text   string // the last text part: the final answer
}

type opencodeEvent struct {
	Type string `json:"type"`
	Part *struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Tool   string `json:"tool"`
		Reason string `json:"reason"`
		State  *struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Error  string          `json:"error"`
		} `json:"state"`
		Cost   float64 `json:"cost"`
		Tokens *struct {
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
			Cache  *struct {
				Read int64 `json:"read"`
			} `json:"cache"`
		} `json:"tokens"`
	} `json:"part"`
	Error json.RawMessage `json:"error"`
}

func (p *opencodeParser) Line(stream, line string) {
	ev, ok := decode[opencodeEvent](p.stream, stream, line)
	if !ok {
		return
	}
	part := ev.Part
	switch ev.Type {
	case "text":
		if part != nil {
			p.text = part.Text
			p.say(part.Text)
		}
	case "tool_use":
		if part == nil || part.State == nil {
			return
		}
		var in struct {
			FilePath string `json:"filePath"`
		}
		json.Unmarshal(part.State.Input, &in)
		switch {
		case part.State.Status == "error":
			p.activity("error", "tool "+part.Tool+": "+part.State.Error)
		case (part.Tool == "write" || part.Tool == "edit" || part.Tool == "patch") && in.FilePath != "":
			p.file(in.FilePath)
		default:
			p.tool(part.Tool, part.State.Input)
		}
	case "step_finish":
		if part == nil {
			return
		}
		p.steps++
		p.usage.CostUSD += part.Cost
		if tk := part.Tokens; tk != nil {
			// Input counts the tokens read, cached ones too, as the
			// other CLIs' do; OpenCode counts cached ones apart.
			p.usage.InputTokens += tk.Input
			p.usage.OutputTokens += tk.Output
			if tk.Cache != nil {
				p.usage.InputTokens += tk.Cache.Read
				p.usage.CachedTokens += tk.Cache.Read
			}
		}
	case "error":
		p.failed = errorText(ev.Error)
		p.activity("error", p.failed)
	}
}

// errorText is an error event's message: {"name","data":{"message"}}, a
// string, or the JSON itself.
func errorText(raw json.RawMessage) string {
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &e) == nil {
		for _, s := range []string{e.Data.Message, e.Message, e.Name} {
			if s != "" {
				return s
			}
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	return strings.TrimSpace(string(raw))
}

func (p *opencodeParser) End(exitCode int) (string, *agent.Usage, *agent.Failure) {
	u := p.usage
	u.Turns = p.steps
	if p.failed != "" {
		return "", &u, &agent.Failure{Reason: "agent", Message: "OpenCode reported an error: " + agent.Cut(agent.Clean(p.failed, 500), 500)}
	}
	if p.steps == 0 {
		s, _, f := p.noResult(exitCode)
		return s, nil, f
	}
	return p.summary(p.text), &u, nil
}
