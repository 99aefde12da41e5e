package app_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cairn"
	"cairn/admit"
)

func TestApp_Settings(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := adminSetup(t)
		all, err := a.Settings(ctx)
		if err != nil || !slices.ContainsFunc(all, func(s admit.Setting) bool { return s.Key == "agent.timeout" }) {
			t.Fatalf("Settings() = %v, %v; want agent.timeout among them", all, err)
		}
		before, err := a.Setting(ctx, "agent.timeout")
		if err != nil || before.Value != before.Default || before.Help == "" {
			t.Fatalf("Setting(agent.timeout) = %+v, %v; want the default with its help", before, err)
		}
		res, err := a.SetSetting(ctx, "agent.timeout", "10m")
		if err != nil {
			t.Fatalf("SetSetting(agent.timeout, 10m): %v", err)
		}
		if res.Unchanged || !res.Outcome.Admitted() || res.Sync == nil || !slices.Contains(res.Sync.Updated, admit.PolicyFile) {
			t.Errorf("SetSetting(agent.timeout, 10m) = %+v, want admitted and %s written", res, admit.PolicyFile)
		}
		if got := res.Outcome.Commit.Meta["route"]; got != "settings" {
			t.Errorf("the commit's route is %q, want settings", got)
		}
		if s, err := a.Setting(ctx, "agent.timeout"); err != nil || s.Value != "10m0s" {
			t.Errorf("after SetSetting, Setting(agent.timeout) = %+v, %v; want 10m0s", s, err)
		}
		again, err := a.SetSetting(ctx, "agent.timeout", "10m")
		if err != nil || !again.Unchanged || again.Outcome != nil {
			t.Errorf("SetSetting of the same value = %+v, %v; want unchanged, nothing submitted", again, err)
		}
		// An empty value removes the key: cairn.yaml, empty, goes.
		gone, err := a.SetSetting(ctx, "agent.timeout", "")
		if err != nil || !gone.Outcome.Admitted() {
			t.Fatalf("SetSetting(agent.timeout, \"\") = %+v, %v; want admitted", gone, err)
		}
		if _, err := os.Stat(filepath.Join(a.Root(), admit.PolicyFile)); err == nil {
			t.Errorf("an empty cairn.yaml is still in the folder")
		}
		if s, err := a.Setting(ctx, "agent.timeout"); err != nil || s.Value != before.Default {
			t.Errorf("after removing it, Setting(agent.timeout) = %+v, %v; want the default %q", s, err, before.Default)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		a, ctx := adminSetup(t)
		for _, kv := range [][2]string{{"agent.colour", "red"}, {"agent.timeout", "soon"}, {"agent.workers", "0"}, {"lint.strict", "maybe"}} {
			_, err := a.SetSetting(ctx, kv[0], kv[1])
			adminCode(t, "SetSetting("+kv[0]+", "+kv[1]+")", err, cairn.EINVALID)
		}
		_, err := a.Setting(ctx, "agent.colour")
		adminCode(t, "Setting(agent.colour)", err, cairn.EINVALID)
		if _, err := os.Stat(filepath.Join(a.Root(), admit.PolicyFile)); err == nil {
			t.Errorf("a refused setting wrote %s", admit.PolicyFile)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		a, _ := adminSetup(t)
		_, err := a.SetSetting(t.Context(), "agent.timeout", "10m")
		adminCode(t, "SetSetting without a principal", err, cairn.EUNAUTHORIZED)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		a, ctx := adminEmpty(t)
		_, err := a.SetSetting(ctx, "agent.timeout", "10m")
		adminCode(t, "SetSetting before main's first commit", err, cairn.ENOTFOUND)
	})
}
