package agent

import (
	"regexp"
	"strings"
)

// EvaFile is an Eva vault's rules and settings, at its root.
const EvaFile = "EVA.md"

// Eva is what an Eva vault's EVA.md says of its agent, under "### Active
// profile": "- **Agent runtime:** Claude CLI", "- **AI model:** …",
// "- **Reasoning effort:** …", "- **Working language:** …". "Runtime
// default" and an empty value are "".
type Eva struct {
	// Runtime is cairn's runtime for Eva's: "claude", "codex", "opencode",
	// or "" when EVA.md names none or one cairn does not know.
	Runtime string
	// Model, Effort and Language are the settings' values.
	Model, Effort, Language string
	// Focus is the brain profile's "Ingest focus".
	Focus string
}

// evaField matches one settings line of EVA.md.
var evaField = regexp.MustCompile(`^\s*-\s+\*\*([^*:]+):\*\*\s*(.*?)\s*$`)

// ParseEva reads an Eva vault's settings from its EVA.md, as Eva does:
// the first line of each field counts.
func ParseEva(data []byte) Eva {
	var e Eva
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		m := evaField.FindStringSubmatch(line)
		if m == nil || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		v := m[2]
		if strings.EqualFold(v, "Runtime default") || strings.EqualFold(v, "Not specified yet.") {
			v = ""
		}
		switch m[1] {
		case "Agent runtime":
			e.Runtime = evaRuntime(v)
		case "AI model":
			e.Model = v
		case "Reasoning effort":
			e.Effort = strings.ToLower(v)
		case "Working language":
			e.Language = v
		case "Ingest focus":
			e.Focus = v
		}
	}
	return e
}

// evaRuntime maps Eva's names of its runtimes to cairn's.
func evaRuntime(v string) string {
	switch l := strings.ToLower(v); {
	case strings.Contains(l, "codex"):
		return "codex"
	case strings.Contains(l, "claude"):
		return "claude"
	case strings.Contains(l, "opencode"):
		return "opencode"
	}
	return ""
}

// Apply returns s with what the Eva vault's settings add: its runtime,
// model and effort where cairn.yaml sets none (explicit, when explicit
// says cairn.yaml named agent.runtime), its language, and the name its
// prompts call cairn's MCP tools by ("eva": mcp__eva__search, eva_search).
func (e Eva) Apply(s Settings, explicit bool) Settings {
	if !explicit && e.Runtime != "" {
		s.Runtime = e.Runtime
	}
	if s.Model == "" {
		s.Model = e.Model
	}
	if s.Effort == "" && effortWord(e.Effort) {
		s.Effort = e.Effort
	}
	if s.Language == "" {
		s.Language = e.Language
	}
	s.Focus = e.Focus
	s.ToolsName = "eva"
	return s
}

// effortWord reports whether v can be an effort setting: a short word.
func effortWord(v string) bool {
	if v == "" || len(v) > 32 {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
