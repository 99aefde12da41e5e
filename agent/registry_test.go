package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"cairn"
	"cairn/agent"
)

// stub is a runtime that does nothing, for registry tests.
type stub struct{ name string }

func (s stub) Name() string { return s.name }

func (s stub) Run(context.Context, *agent.Task) (*agent.Result, error) {
	return nil, &agent.Failure{Reason: "empty", Message: "the stub changed nothing"}
}

// The registry is filled once per test binary, as a program's init
// functions fill it.
func init() {
	for _, name := range []string{"stub-b", "stub-a"} {
		agent.Register(agent.Factory{Name: name, Help: "a stub", New: func(agent.Env) (agent.Runtime, error) { return stub{name}, nil }})
	}
	agent.Register(agent.Factory{Name: "stub-refusing", New: func(agent.Env) (agent.Runtime, error) {
		return nil, cairn.Errorf(cairn.EFORBIDDEN, "the stub may not run here").WithHint("Try: nothing")
	}})
}

func TestRegister(t *testing.T) {
	t.Run("Sorted", func(t *testing.T) {
		names := agent.Names()
		if !slices.IsSorted(names) || !slices.Contains(names, "stub-a") || !slices.Contains(names, "stub-b") {
			t.Errorf("Names() = %q, want sorted, with stub-a and stub-b", names)
		}
		if f, ok := agent.Lookup("stub-a"); !ok || f.Help != "a stub" {
			t.Errorf("Lookup(stub-a) = %+v, %v", f, ok)
		}
		if _, ok := agent.Lookup("stub-c"); ok {
			t.Errorf("Lookup(stub-c) found a runtime never registered")
		}
		if got := agent.Choices(); !strings.HasSuffix(got, " or stub-refusing") {
			t.Errorf("Choices() = %q, want the names ending in \"or stub-refusing\"", got)
		}
	})
	for name, f := range map[string]agent.Factory{
		"ErrDuplicate": {Name: "stub-a", New: func(agent.Env) (agent.Runtime, error) { return stub{}, nil }},
		"ErrName":      {Name: "Stub A", New: func(agent.Env) (agent.Runtime, error) { return stub{}, nil }},
		"ErrEmptyName": {New: func(agent.Env) (agent.Runtime, error) { return stub{}, nil }},
		"ErrNoNew":     {Name: "stub-new"},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", f)
				}
			}()
			agent.Register(f)
		})
	}
}

func TestNew(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		rt, err := agent.New(agent.Env{Settings: agent.Settings{Runtime: "stub-b"}})
		if err != nil || rt.Name() != "stub-b" {
			t.Fatalf("New(stub-b) = %v, %v; want the stub-b runtime", rt, err)
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		_, err := agent.New(agent.Env{Settings: agent.Settings{Runtime: "llm"}})
		if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Fatalf("New(llm) = %v, want EINVALID with a hint", err)
		}
		for _, name := range agent.Names() {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("New(llm) = %q, which does not name the registered runtime %s", err, name)
			}
		}
	})
	t.Run("ErrDefaultUnregistered", func(t *testing.T) {
		// This binary registers no extractive runtime: the default is
		// looked up like any other name.
		if _, err := agent.New(agent.Env{}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Fatalf("New() without %s registered = %v, want EINVALID", agent.DefaultRuntime, err)
		}
	})
	t.Run("ErrFactory", func(t *testing.T) {
		_, err := agent.New(agent.Env{Settings: agent.Settings{Runtime: "stub-refusing"}})
		if cairn.ErrorCode(err) != cairn.EFORBIDDEN {
			t.Fatalf("New(stub-refusing) = %v, want the factory's EFORBIDDEN", err)
		}
	})
}
