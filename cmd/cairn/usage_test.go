package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestUsageErrors: a command called wrongly (an unknown command, missing or
// extra arguments, an unknown flag) exits 2 with a message that names the
// problem and how the command is used, and opens no vault.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir() // no vault here: nothing must need one
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want []string // in standard error
	}{
		{[]string{"bogus"}, []string{`"bogus" is not a command of cairn`, "Hint: Run cairn --help"}},
		{[]string{"stauts"}, []string{"did you mean status?"}},
		{[]string{"review", "bogus"}, []string{`"bogus" is not a command of cairn review`, "cairn review --help"}},
		{[]string{"worktree", "bogus"}, []string{`"bogus" is not a command of cairn worktree`}},
		{[]string{"jobs", "bogus"}, []string{`"bogus" is not a command of cairn jobs`}},
		{[]string{"show", "a", "b"}, []string{"show: accepts", "usage: cairn show", "Hint: Run cairn show --help"}},
		{[]string{"review", "show"}, []string{"review show: accepts 1 arg(s), received 0", "usage: cairn review show ID"}},
		{[]string{"settings", "set", "agent.timeout"}, []string{"settings set: accepts 2 arg(s)", "usage: cairn settings set KEY VALUE"}},
		{[]string{"log", "--bogus"}, []string{"unknown flag: --bogus"}},
		{[]string{"init", "a", "b"}, []string{"usage: cairn init"}},
		{[]string{"help", "bogus"}, []string{`"bogus" is not a command of cairn`}},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("cairn %v exited %d, want %d\n%s", tc.args, code, exitUsage, stderr.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("cairn %v: stderr lacks %q:\n%s", tc.args, w, stderr.String())
			}
		}
	}
	// Without arguments, a group of commands shows its help.
	for _, args := range [][]string{{}, {"worktree"}, {"review", "--help"}, {"help", "ls"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(t.Context(), args, strings.NewReader(""), &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "Usage:") {
			t.Errorf("cairn %v: exit %d, stdout:\n%s%s", args, code, stdout.String(), stderr.String())
		}
	}
}
