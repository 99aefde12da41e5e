package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"cairn/agent"
	"cairn/agent/command"
)

func init() {
	register(&cliKind{
		name: "codex", program: "codex", pkg: "@openai/codex",
		help:       "OpenAI Codex, confined",
		minVersion: "0.100.0",
		keyEnv:     "OPENAI_API_KEY",
		folders:    []string{".local/bin", ".npm-global/bin", "/usr/local/bin", "/opt/homebrew/bin"},
		login:      []string{".codex/auth.json"},
		provider:   []string{"api.openai.com:443", "chatgpt.com:443"},
		start:      codexStart,
	})
}

// codexStart runs "codex exec --json", its prompt on stdin, with a
// private CODEX_HOME whose config.toml cairn writes: no approvals asked,
// cairn's MCP server with its tools approved (exec cancels MCP calls it
// would have to ask about), web search off, and the provider at
// agent.base_url when set. Codex has no turn limit: agent.timeout bounds
// the run.
//
// Codex's own sandbox is off (danger-full-access): it is bubblewrap, which
// must make a user namespace and write its uid map, and cannot inside
// cairn's confinement, which holds its shell commands as it holds the CLI
// — writes only in the workspace, no reading of cairn's folder — but
// does not cut them off from the network.
func codexStart(r *cliRuntime, w *command.Workspace, t *agent.Task) (*command.Start, error) {
	codexHome := filepath.Join(w.Home, ".codex")
	var cfg strings.Builder
	kv := func(key string, v any) {
		b, _ := json.Marshal(v) // JSON strings, numbers and booleans are TOML's too
		fmt.Fprintf(&cfg, "%s = %s\n", key, b)
	}
	kv("approval_policy", "never")
	kv("sandbox_mode", "danger-full-access")
	kv("web_search", "disabled")
	kv("check_for_update_on_startup", false)
	if r.set.Model != "" {
		kv("model", r.set.Model)
	}
	if r.set.Effort != "" {
		kv("model_reasoning_effort", r.set.Effort)
	}
	if r.set.BaseURL != "" {
		kv("model_provider", "cairn")
	}
	cfg.WriteString("\n[history]\n")
	kv("persistence", "none")
	if r.set.BaseURL != "" {
		cfg.WriteString("\n[model_providers.cairn]\n")
		kv("name", "cairn")
		kv("base_url", r.set.BaseURL)
		kv("wire_api", "responses")
		if r.key() != "" {
			kv("env_key", "CAIRN_PROVIDER_KEY")
		}
	}
	name := "cairn"
	if w.Tools != nil {
		name = w.Tools.Name
		fmt.Fprintf(&cfg, "\n[mcp_servers.%s]\n", name)
		kv("command", w.Tools.Command)
		kv("args", w.Tools.Args)
		kv("default_tools_approval_mode", "approve")
		kv("startup_timeout_sec", 20)
		fmt.Fprintf(&cfg, "\n[mcp_servers.%s.env]\n", name)
		for k, v := range w.Tools.Env {
			kv(k, v)
		}
	}
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg.String()), 0o600); err != nil {
		return nil, err
	}
	env := []string{"CODEX_HOME=" + codexHome, "NO_COLOR=1", "RUST_LOG=error"}

	if key := r.key(); key != "" {
		if r.set.BaseURL != "" {
			env = append(env, "CAIRN_PROVIDER_KEY="+key)
		} else {
			env = append(env, "OPENAI_API_KEY="+key)
		}
	}
	argv := []string{"codex", "exec", "--json", "--skip-git-repo-check", "--ephemeral",
		"--color", "never", "--sandbox", "danger-full-access", "-C", w.Dir, "-"}
	toolName := func(tool string) string { return name + "." + tool }
	return &command.Start{
		Argv: argv, Env: env,
		Stdin:   []byte(r.prompt(w, t, toolName)),
		MaxLine: maxEventLine,
		Parser:  &codexParser{stream: newStream(t, w)},
	}, nil
}

// codexParser reads codex exec --json: thread, turn and item events.
type codexParser struct {
	*stream
	usage  agent.Usage
	turns  int
	failed string // a turn.failed or error event's message
	done   bool   // a turn completed
}

type codexEvent struct {
	Type  string `json:"type"`
	Item  *codexItem
	Usage *struct {
		InputTokens       int64 `json:"input_tokens"`
		CachedInputTokens int64 `json:"cached_input_tokens"`
		OutputTokens      int64 `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

type codexItem struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Command   string          `json:"command"`
	ExitCode  *int            `json:"exit_code"`
	Status    string          `json:"status"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Message   string          `json:"message"`
	Query     string          `json:"query"`
	Changes   []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

func (p *codexParser) Line(stream, line string) {
	ev, ok := decode[codexEvent](p.stream, stream, line)
	if !ok {
		return
	}
	switch ev.Type {
	case "item.started":
		if it := ev.Item; it != nil && it.Type == "command_execution" {
			p.activity("tool", "shell "+agent.Cut(it.Command, toolArgBytes))
		}
	case "item.completed":
		it := ev.Item
		if it == nil {
			return
		}
		switch it.Type {
		case "agent_message":
			p.say(it.Text)
		case "file_change":
			for _, c := range it.Changes {
				p.file(c.Path)
			}
		case "mcp_tool_call":
			p.tool(it.Server+"."+it.Tool, it.Arguments)
			if it.Status == "failed" {
				p.activity("error", "tool "+it.Server+"."+it.Tool+" failed")
			}
		case "command_execution":
			if it.ExitCode != nil && *it.ExitCode != 0 {
				p.activity("error", fmt.Sprintf("shell exited with %d: %s", *it.ExitCode, agent.Cut(it.Command, toolArgBytes)))
			}
		case "web_search":
			p.activity("tool", "web_search "+agent.Cut(it.Query, toolArgBytes))
		case "error":
			p.activity("error", it.Message)
		}
	case "turn.completed":
		p.turns++
		p.done = true
		if u := ev.Usage; u != nil {
			p.usage.InputTokens += u.InputTokens
			p.usage.CachedTokens += u.CachedInputTokens
			p.usage.OutputTokens += u.OutputTokens
		}
	case "turn.failed":
		if ev.Error != nil {
			p.failed = ev.Error.Message
		} else {
			p.failed = "the turn failed"
		}
		p.activity("error", p.failed)
	case "error":
		msg := ev.Message
		if msg == "" && ev.Error != nil {
			msg = ev.Error.Message
		}
		p.failed = msg
		p.activity("error", msg)
		if strings.Contains(msg, "401 Unauthorized") || strings.Contains(msg, "403 Forbidden") {
			p.refuse(msg)
		}
	}
}

func (p *codexParser) End(exitCode int) (string, *agent.Usage, *agent.Failure) {
	u := p.usage
	u.Turns = p.turns
	if f := p.refusal(); f != nil {
		return "", nil, f
	}
	if p.failed != "" && !p.done {
		return "", &u, &agent.Failure{Reason: "agent", Message: "Codex reported an error: " + agent.Cut(agent.Clean(p.failed, 500), 500)}
	}
	if !p.done {
		s, _, f := p.noResult(exitCode)
		return s, nil, f
	}
	return p.summary(""), &u, nil
}
