package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/llmtest"
)

// realAgents returns the folder of the real agent CLIs scripts/agents.sh
// installed ($CAIRN_AGENTS), skipping the test when there is none; in CI
// they must be there.
func realAgents(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CAIRN_AGENTS")
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CAIRN_AGENTS is not set: in CI, make test installs the agent CLIs (scripts/agents.sh)")
		}
		t.Skip("CAIRN_AGENTS is not set: run eval \"$(scripts/agents.sh)\" to test the real agent CLIs")
	}
	return dir
}

// agentCase is one agent CLI and the provider API it speaks.
type agentCase struct {
	runtime string
	server  func(testing.TB, llmtest.Script) *llmtest.Server
	base    string // added to the server's URL for agent.base_url
	// write, read and edit are the CLI's tools for them, with their
	// arguments.
	write func(r *llmtest.Request, path, content string) llmtest.Call
	read  func(r *llmtest.Request, path string) llmtest.Call
	edit  func(r *llmtest.Request, path, old, new, whole string) llmtest.Call
	del   func(r *llmtest.Request, path string) llmtest.Call
}

// abs returns path in the agent's working directory, as the request told
// the model of it.
func abs(r *llmtest.Request, path string) string {
	if d := r.Dir(); d != "" {
		return filepath.Join(d, path)
	}
	return path
}

var agentCases = []agentCase{
	{
		runtime: "opencode", server: llmtest.Chat, base: llmtest.OpenAIBase,
		write: func(r *llmtest.Request, path, content string) llmtest.Call {
			return llmtest.Call{Tool: "write", Args: func(r *llmtest.Request) any {
				return map[string]any{"filePath": abs(r, path), "content": content}
			}}
		},
		read: func(r *llmtest.Request, path string) llmtest.Call {
			return llmtest.Call{Tool: "read", Args: func(r *llmtest.Request) any { return map[string]any{"filePath": abs(r, path)} }}
		},
		edit: func(r *llmtest.Request, path, old, new, whole string) llmtest.Call {
			return llmtest.Call{Tool: "edit", Args: func(r *llmtest.Request) any {
				return map[string]any{"filePath": abs(r, path), "oldString": old, "newString": new}
			}}
		},
	},
	{
		runtime: "codex", server: llmtest.Responses, base: llmtest.OpenAIBase,
		write: func(r *llmtest.Request, path, content string) llmtest.Call {
			return heredoc(path, content)
		},
		read: func(r *llmtest.Request, path string) llmtest.Call {
			return llmtest.Call{Tool: "exec_command", Args: func(r *llmtest.Request) any { return map[string]any{"cmd": "cat " + path} }}
		},
		edit: func(r *llmtest.Request, path, old, new, whole string) llmtest.Call {
			return heredoc(path, whole)
		},
	},
	{
		runtime: "claude", server: llmtest.Anthropic,
		write: func(r *llmtest.Request, path, content string) llmtest.Call {
			return llmtest.Call{Tool: "Write", Args: func(r *llmtest.Request) any {
				return map[string]any{"file_path": abs(r, path), "content": content}
			}}
		},
		read: func(r *llmtest.Request, path string) llmtest.Call {
			return llmtest.Call{Tool: "Read", Args: func(r *llmtest.Request) any { return map[string]any{"file_path": abs(r, path)} }}
		},
		edit: func(r *llmtest.Request, path, old, new, whole string) llmtest.Call {
			return llmtest.Call{Tool: "Edit", Args: func(r *llmtest.Request) any {
				return map[string]any{"file_path": abs(r, path), "old_string": old, "new_string": new}
			}}
		},
	},
}

// TestAgentCLIs runs each real agent CLI as an ingest's agent against a
// local server speaking its provider's API, scripted like a model: it
// searches the vault through cairn's MCP tools, writes a page, reads and
// edits index.md, and finishes with a summary. The job must end admitted,
// with the CLI's activity recorded.
func TestAgentCLIs(t *testing.T) {
	bin := realAgents(t)
	for _, ac := range agentCases {
		t.Run(ac.runtime, func(t *testing.T) {
			page := "concepts/paper-mills.md"
			content := "---\ntitle: Paper mills\ntype: concept\nsource: raw/paper-mills.md\n---\n\n# Paper mills\n\nThe first German paper mill, set up in [[entities/mainz|Mainz]]'s region by Ulman Stromer in 1390.\n"
			oldLine := "- [[concepts/paper|Paper]]"
			newLine := "- [[concepts/paper-mills|Paper mills]] — where Europe's paper was made\n" + oldLine
			index := readFile(t, "sample/vault/index.md")
			srv := ac.server(t, llmtest.Script{
				{Calls: []llmtest.Call{{Tool: "search", Args: func(*llmtest.Request) any { return map[string]any{"query": "paper"} }}}},
				{Calls: []llmtest.Call{ac.write(nil, page, content), ac.read(nil, "index.md")}},
				{Calls: []llmtest.Call{ac.edit(nil, "index.md", oldLine, newLine, strings.Replace(index, oldLine, newLine, 1))}},
				{Text: "Done.\n<summary>Added concepts/paper-mills.md on the first German paper mill and listed it in index.md.</summary>"},
			})
			dir := sampleVault(t)
			env := []string{"CAIRN_TEST_KEY=sk-test"}
			for k, v := range map[string]string{
				"agent.runtime": ac.runtime, "agent.command": filepath.Join(bin, ac.runtime),
				"agent.base_url": srv.URL + ac.base, "agent.key_env": "CAIRN_TEST_KEY", "agent.model": "test-model",
				"agent.timeout": "3m", "agent.unconfined": "allow",
			} {
				must(t, run(t, dir, env, "settings", "set", k, v), "settings set", k)
			}
			src := filepath.Join(t.TempDir(), "paper-mills.md")
			writeFiles(t, filepath.Dir(src), map[string]string{"paper-mills.md": "# Paper mills\n\nIn 1390 Ulman Stromer set up the first paper mill in the German lands.\n"})
			r := run(t, dir, env, "ingest", src)
			t.Logf("ingest:\n%s%s", r.stdout, r.stderr)
			for i, req := range srv.Requests() {
				t.Logf("request %d: turn %d, %d tools, results %q", i, req.Turn, len(req.Tools), req.Results)
			}
			if r.code != 0 {
				t.Fatalf("cairn ingest exited %d", r.code)
			}
			jobs := run(t, dir, env, "jobs", "show", "1")
			t.Logf("jobs show:\n%s", jobs.stdout)
			if !strings.Contains(r.stdout, ": merged (proposal") {
				t.Errorf("the job did not end admitted")
			}
		})
	}
}

// heredoc is a shell command, for Codex's exec_command, that writes
// content to path.
func heredoc(path, content string) llmtest.Call {
	return llmtest.Call{Tool: "exec_command", Args: func(*llmtest.Request) any {
		return map[string]any{"cmd": "mkdir -p " + filepath.Dir(path) + " && cat > " + path + " <<'CAIRN_EOF'\n" + content + "CAIRN_EOF"}
	}}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
