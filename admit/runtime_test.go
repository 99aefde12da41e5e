package admit_test

import (
	"strings"
	"testing"

	"cairn"
	"cairn/admit"
	"cairn/agent"

	// The runtimes cairn ships: policies that name them are valid only
	// where they are registered.
	_ "cairn/agent/command"
	_ "cairn/agent/extractive"
)

// TestPolicy_Runtime checks agent.runtime against the registry of
// runtimes: a registered name is taken, with the runtime's own validation
// applied; an unknown one is refused naming every registered runtime, by
// cairn settings set and in a cairn.yaml written by hand alike; the help
// text lists them.
func TestPolicy_Runtime(t *testing.T) {
	t.Run("Registered", func(t *testing.T) {
		for _, name := range []string{"extractive", "command"} {
			doc := "agent:\n  runtime: " + name + "\n  command: my-agent\n"
			p, err := admit.ParsePolicy([]byte(doc))
			if err != nil {
				t.Fatalf("ParsePolicy(%q) = %v", doc, err)
			}
			if got := p.AgentSettings().Runtime; got != name {
				t.Errorf("AgentSettings().Runtime = %q, want %q", got, name)
			}
		}
	})
	t.Run("Default", func(t *testing.T) {
		p, err := admit.ParsePolicy(nil)
		if err != nil {
			t.Fatal(err)
		}
		s := p.AgentSettings()
		if s.Runtime != agent.DefaultRuntime || s.Timeout != admit.DefaultTimeout || s.Inactivity != admit.DefaultInactivity || s.Unconfined {
			t.Errorf("AgentSettings() = %+v, want the defaults", s)
		}
	})
	t.Run("RuntimeValidates", func(t *testing.T) {
		// The command runtime needs a command: its own Validate says so.
		for _, doc := range []string{"agent:\n  runtime: command\n", "agent:\n  runtime: command\n  command: \"my-agent 'open\"\n"} {
			if _, err := admit.ParsePolicy([]byte(doc)); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
				t.Errorf("ParsePolicy(%q) = %v, want EINVALID with a hint", doc, err)
			}
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		_, err := admit.SetPolicy(nil, "agent.runtime", "llm")
		if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Fatalf("SetPolicy(agent.runtime, llm) = %v, want EINVALID with a hint", err)
		}
		_, err2 := admit.ParsePolicy([]byte("agent:\n  runtime: llm\n"))
		if cairn.ErrorCode(err2) != cairn.EINVALID {
			t.Fatalf("ParsePolicy(runtime: llm) = %v, want EINVALID", err2)
		}
		// The error names the choices, which come from the registry.
		for _, name := range agent.Names() {
			for _, err := range []error{err, err2} {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not name the registered runtime %s", err, name)
				}
			}
		}
	})
	t.Run("Help", func(t *testing.T) {
		for _, s := range (&admit.Policy{}).Settings() {
			if s.Key != "agent.runtime" {
				continue
			}
			for _, name := range agent.Names() {
				if !strings.Contains(s.Help, name) {
					t.Errorf("help %q does not name the registered runtime %s", s.Help, name)
				}
			}
			return
		}
		t.Fatal("Settings() has no agent.runtime")
	})
}
