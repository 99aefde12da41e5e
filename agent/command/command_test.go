package command_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/agent"
	"cairn/agent/command"
)

// env returns what the worker would hand the command runtime for a vault
// in a temporary folder, with settings s.
func env(t *testing.T, s agent.Settings) agent.Env {
	t.Helper()
	root := t.TempDir()
	internal := filepath.Join(root, ".cairn")
	if err := os.Mkdir(internal, 0o700); err != nil {
		t.Fatal(err)
	}
	s.Runtime = command.Name
	return agent.Env{Settings: s, Root: root, Internal: internal, Database: filepath.Join(internal, "cairn.db")}
}

func TestNew(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// Unconfined: allowed, so that the test runs with or without Landlock.
		rt, err := agent.New(env(t, agent.Settings{Command: "my-agent --flag", Unconfined: true}))
		if err != nil {
			t.Fatalf("New = %v", err)
		}
		c, ok := rt.(*command.Runtime)
		if !ok || rt.Name() != "command" {
			t.Fatalf("New = %T %s, want *command.Runtime named command", rt, rt.Name())
		}
		if diff := cmp.Diff([]string{"my-agent", "--flag"}, c.Argv); diff != "" {
			t.Errorf("argv (-want +got):\n%s", diff)
		}
		if _, ok := rt.(agent.Confined); !ok {
			t.Errorf("the command runtime does not say how it is confined")
		}
	})
	for name, s := range map[string]agent.Settings{
		"ErrNoCommand":  {Unconfined: true},
		"ErrOpenQuote":  {Command: "my-agent 'open", Unconfined: true},
		"ErrReadsCairn": {Command: "my-agent", Unconfined: true, Read: []string{"/"}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := agent.New(env(t, s)); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
				t.Errorf("New(%+v) = %v, want EINVALID with a hint", s, err)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	argv, err := command.Argv(`my-agent --flag "two words"`)
	if diff := cmp.Diff([]string{"my-agent", "--flag", "two words"}, argv); err != nil || diff != "" {
		t.Errorf("Argv = %v (-want +got):\n%s", err, diff)
	}
	for _, bad := range []string{"", "  ", `my-agent "open`} {
		if _, err := command.Argv(bad); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Argv(%q) = %v, want EINVALID", bad, err)
		}
	}
}
