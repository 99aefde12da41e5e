package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"cairn/agent"
	"cairn/agent/command"
)

// claudeTurns is the turn limit of a claude run when agent.turns is not
// set: Eva's for ingest.
const claudeTurns = 120

// claudeTools are the built-in tools a claude agent gets: reading and
// writing files, no shell, no web, no subagents.
var claudeTools = []string{"Read", "Glob", "Grep", "LS", "Write", "Edit", "MultiEdit"}

// claudeReadTools are those of them that only read: a question's.
var claudeReadTools = claudeTools[:4]

func init() {
	register(&cliKind{
		name: "claude", program: "claude", pkg: "@anthropic-ai/claude-code",
		help:       "Claude Code, confined",
		minVersion: "2.0.0",
		keyEnv:     "ANTHROPIC_API_KEY",
		folders:    []string{".local/bin", ".claude/local", ".npm-global/bin", "/usr/local/bin", "/opt/homebrew/bin"},
		login:      []string{".claude/.credentials.json"},
		provider:   []string{"api.anthropic.com:443"},
		start:      claudeStart,
	})
}

// claudeStart runs "claude -p" with its prompt on stdin, streamed JSON
// out, only the MCP servers cairn names, no settings files, and a private
// config folder (CLAUDE_CONFIG_DIR in the job's home).
func claudeStart(r *cliRuntime, w *command.Workspace, t *agent.Task) (*command.Start, error) {
	turns := r.set.Turns
	if turns == 0 {
		turns = claudeTurns
	}
	tools := claudeTools
	if t.ReadOnly {
		tools = claudeReadTools
	}
	argv := []string{"claude", "-p",
		"--output-format", "stream-json", "--verbose",
		"--setting-sources", "",
		"--strict-mcp-config",
		"--permission-mode", "dontAsk",
		"--tools", strings.Join(tools, ","),
		"--max-turns", strconv.Itoa(turns),
	}
	allowed := append([]string{}, tools...)
	name := ""
	if w.Tools != nil {
		name = w.Tools.Name
		cfg := filepath.Join(w.Temp, "mcp.json")
		if err := writeJSON(cfg, map[string]any{"mcpServers": map[string]any{
			name: map[string]any{"type": "stdio", "command": w.Tools.Command, "args": w.Tools.Args, "env": w.Tools.Env},
		}}); err != nil {
			return nil, err
		}
		argv = append(argv, "--mcp-config", cfg)
		allowed = append(allowed, "mcp__"+name)
	} else {
		argv = append(argv, "--mcp-config", `{"mcpServers":{}}`)
	}
	argv = append(argv, "--allowedTools", strings.Join(allowed, ","))
	if r.set.Model != "" {
		argv = append(argv, "--model", r.set.Model)
	}
	if r.set.Effort != "" {
		argv = append(argv, "--effort", r.set.Effort)
	}
	if r.set.Budget > 0 {
		argv = append(argv, "--max-budget-usd", strconv.FormatFloat(r.set.Budget, 'f', -1, 64))
	}
	env := []string{
		"CLAUDE_CONFIG_DIR=" + filepath.Join(w.Home, ".claude"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"NO_COLOR=1",
	}
	if r.set.BaseURL != "" {
		env = append(env, "ANTHROPIC_BASE_URL="+r.set.BaseURL)
	}
	if key := r.key(); key != "" {
		env = append(env, "ANTHROPIC_API_KEY="+key)
	} else if r.set.BaseURL != "" {
		env = append(env, "ANTHROPIC_API_KEY=none") // a local model's server needs no key, the CLI does
	}
	toolName := func(tool string) string { return "mcp__" + name + "__" + tool }
	return &command.Start{
		Argv: argv, Env: env,
		Stdin:   []byte(r.prompt(w, t, toolName)),
		MaxLine: maxEventLine,
		Parser:  &claudeParser{stream: newStream(t, w), turns: turns, budget: r.set.Budget},
	}, nil
}

// claudeParser reads Claude Code's stream-json: system, assistant, user
// and result events, one JSON object a line.
type claudeParser struct {
	*stream
	turns  int
	budget float64
	result *claudeResult
	sub    string // the result's subtype
}

type claudeEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	// system/init
	Model      string `json:"model"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	// system/api_retry
	Attempt     int    `json:"attempt"`
	MaxRetries  int    `json:"max_retries"`
	RetryDelay  int64  `json:"retry_delay_ms"`
	ErrorStatus int    `json:"error_status"`
	Error       string `json:"error"`
	// assistant and user
	Message *struct {
		Content []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Name    string          `json:"name"`
			Input   json.RawMessage `json:"input"`
			IsError bool            `json:"is_error"`
			Content json.RawMessage `json:"content"`
		} `json:"content"`
	} `json:"message"`
	claudeResult
}

type claudeResult struct {
	IsError      bool     `json:"is_error"`
	NumTurns     int      `json:"num_turns"`
	Result       string   `json:"result"`
	TotalCostUSD float64  `json:"total_cost_usd"`
	Errors       []string `json:"errors"`
	Usage        *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

func (p *claudeParser) Line(stream, line string) {
	ev, ok := decode[claudeEvent](p.stream, stream, line)
	if !ok {
		return
	}
	switch ev.Type {
	case "system":
		if ev.Subtype == "api_retry" {
			p.activity("error", fmt.Sprintf("the provider answered %d (%s); retry %d of %d in %.1fs", ev.ErrorStatus, ev.Error, ev.Attempt, ev.MaxRetries, float64(ev.RetryDelay)/1000))
			if ev.ErrorStatus == 401 || ev.ErrorStatus == 403 {
				p.refuse(fmt.Sprintf("%d %s", ev.ErrorStatus, ev.Error))
			}
		}
		if ev.Subtype == "init" {
			for _, s := range ev.MCPServers {
				if s.Status != "connected" {
					p.activity("error", fmt.Sprintf("MCP server %s: %s", s.Name, s.Status))
				}
			}
		}
	case "assistant":
		if ev.Message == nil {
			return
		}
		for _, c := range ev.Message.Content {
			switch c.Type {
			case "text":
				p.say(c.Text)
			case "tool_use":
				var in struct {
					FilePath string `json:"file_path"`
				}
				json.Unmarshal(c.Input, &in)
				switch c.Name {
				case "Write", "Edit", "MultiEdit":
					p.file(in.FilePath)
				default:
					p.tool(c.Name, c.Input)
				}
			}
		}
	case "user":
		if ev.Message == nil {
			return
		}
		for _, c := range ev.Message.Content {
			if c.Type == "tool_result" && c.IsError {
				p.activity("error", "tool: "+toolText(c.Content))
			}
		}
	case "result":
		r := ev.claudeResult
		p.result, p.sub = &r, ev.Subtype
	}
}

// toolText is a tool result's text: a string, or the text of its blocks.
func toolText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, " ")
}

func (p *claudeParser) End(exitCode int) (string, *agent.Usage, *agent.Failure) {
	r := p.result
	if f := p.refusal(); f != nil {
		return "", nil, f
	}
	if r == nil {
		return p.noResult(exitCode)
	}
	u := &agent.Usage{Turns: r.NumTurns, CostUSD: r.TotalCostUSD}
	if r.Usage != nil {
		u.InputTokens = r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens
		u.OutputTokens = r.Usage.OutputTokens
		u.CachedTokens = r.Usage.CacheReadInputTokens
	}
	var why string
	switch sub := p.sub; sub {
	case "success":
		if r.IsError {
			why = "Claude Code reported an error: " + agent.Cut(agent.Clean(r.Result, 500), 500)
		}
	case "error_max_turns":
		why = fmt.Sprintf("the agent reached its turn limit (%d turns; agent.turns) before it finished", p.turns)
	case "error_max_budget_usd":
		why = fmt.Sprintf("the agent reached its budget ($%g; agent.budget) before it finished", p.budget)
	default:
		why = "Claude Code stopped with " + sub
		if len(r.Errors) > 0 {
			why += ": " + agent.Cut(agent.Clean(strings.Join(r.Errors, "; "), 500), 500)
		}
	}
	if why != "" {
		return "", u, &agent.Failure{Reason: "agent", Message: why}
	}
	return p.summary(r.Result), u, nil
}
