package agent_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/agent"
)

func TestParseEva(t *testing.T) {
	for _, tc := range []struct {
		name string
		md   string
		want agent.Eva
	}{
		{"Active profile", `# Eva

### Active profile

- **Working language:** Deutsch
- **Agent runtime:** Codex CLI
- **AI model:** gpt-5.1-codex
- **Reasoning effort:** High
- **Purpose:** Not specified yet.
`, agent.Eva{Runtime: "codex", Model: "gpt-5.1-codex", Effort: "high", Language: "Deutsch"}},
		{"Defaults", "- **Agent runtime:** OpenCode (local)\n- **AI model:** Runtime default\n- **Reasoning effort:** Runtime default\n",
			agent.Eva{Runtime: "opencode"}},
		{"Claude", "- **Agent runtime:** Claude Code\n", agent.Eva{Runtime: "claude"}},
		{"FirstLineCounts", "- **Agent runtime:** Claude CLI\n- **Agent runtime:** Codex CLI\n", agent.Eva{Runtime: "claude"}},
		{"Unknown", "- **Agent runtime:** Some other agent\n", agent.Eva{}},
		{"None", "# Just rules\n\nNo settings here.\n", agent.Eva{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, agent.ParseEva([]byte(tc.md))); diff != "" {
				t.Errorf("ParseEva (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaApply(t *testing.T) {
	eva := agent.Eva{Runtime: "codex", Model: "m", Effort: "high", Language: "Deutsch"}
	// cairn.yaml names no runtime: EVA.md's applies, and its model.
	got := eva.Apply(agent.Settings{Runtime: "extractive"}, false)
	want := agent.Settings{Runtime: "codex", Model: "m", Effort: "high", Language: "Deutsch", ToolsName: "eva"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Apply without agent.runtime (-want +got):\n%s", diff)
	}
	// cairn.yaml's own settings win.
	got = eva.Apply(agent.Settings{Runtime: "claude", Model: "mine"}, true)
	want = agent.Settings{Runtime: "claude", Model: "mine", Effort: "high", Language: "Deutsch", ToolsName: "eva"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Apply with agent.runtime (-want +got):\n%s", diff)
	}
	// An effort that is not a word is not passed on.
	got = agent.Eva{Effort: "very high"}.Apply(agent.Settings{}, false)
	if got.Effort != "" {
		t.Errorf("Apply passed on effort %q", got.Effort)
	}
}
