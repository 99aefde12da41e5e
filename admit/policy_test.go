package admit_test

import (
	"testing"

	"cairn"
	"cairn/admit"
)

// TestSetPolicy_Values: a value out of its key's range is refused, with a
// hint, by settings set and in a cairn.yaml written by hand alike; values in
// range are taken.
func TestSetPolicy_Values(t *testing.T) {
	for _, tc := range []struct{ key, value, file string }{
		{"agent.workers", "0", "agent:\n  workers: 0\n"},
		{"agent.workers", "abc", "agent:\n  workers: abc\n"},
		{"agent.workers", "65", "agent:\n  workers: 65\n"},
		{"agent.attempts", "0", "agent:\n  attempts: 0\n"},
		{"agent.attempts", "-1", "agent:\n  attempts: -1\n"},
		{"agent.timeout", "0s", "agent:\n  timeout: 0s\n"},
		{"agent.inactivity", "999h", "agent:\n  inactivity: 999h\n"},
		{"sources.max_size", "0", "sources:\n  max_size: 0\n"},
		{"sources.max_size", "big", "sources:\n  max_size: big\n"},
		{"lint.strict", "maybe", "lint:\n  strict: maybe\n"},
		{"verdicts.deletion.agent", "allow", "verdicts:\n  deletion:\n    agent: allow\n"},
	} {
		_, err := admit.SetPolicy(nil, tc.key, tc.value)
		if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("SetPolicy(%s, %q) = %v, want EINVALID with a hint", tc.key, tc.value, err)
		}
		err = admit.CheckPolicyChange(nil, []byte(tc.file))
		if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("CheckPolicyChange(nil, %q) = %v, want EINVALID with a hint", tc.file, err)
		}
	}
	for _, tc := range []struct{ key, value, want string }{
		{"agent.workers", "1", "1"}, {"agent.workers", "64", "64"}, {"agent.attempts", "100", "100"},
		{"agent.timeout", "1s", "1s"}, {"sources.max_size", "1KiB", "1.0 KiB"}, {"lint.strict", "true", "true"},
	} {
		out, err := admit.SetPolicy(nil, tc.key, tc.value)
		if err != nil {
			t.Errorf("SetPolicy(%s, %q): %v", tc.key, tc.value, err)
			continue
		}
		if got, _ := mustParse(t, out).Get(tc.key); got != tc.want {
			t.Errorf("after SetPolicy(%s, %q), Get = %q, want %q", tc.key, tc.value, got, tc.want)
		}
	}
}

// TestPolicy_Older: a cairn.yaml an older cairn wrote, with values now out
// of range (zero meant the default; long timeouts were taken), still
// parses with every other setting in force, and a change that leaves
// those values as they are is not refused for them; a change that sets a
// value out of range is.
func TestPolicy_Older(t *testing.T) {
	old := []byte("agent:\n  timeout: 200h\n  attempts: 0\npaths:\n  protected: [secret/]\n")
	p, err := admit.ParsePolicy(old)
	if err != nil {
		t.Fatalf("ParsePolicy of an older cairn.yaml: %v", err)
	}
	if got, _ := p.Get("paths.protected"); got != "secret/" {
		t.Errorf("paths.protected = %q, want secret/", got)
	}
	if got := p.Attempts(); got != admit.DefaultAttempts {
		t.Errorf("attempts 0 gives %d, want the default %d", got, admit.DefaultAttempts)
	}
	next, err := admit.SetPolicy(old, "agent.inactivity", "90s")
	if err != nil {
		t.Fatalf("SetPolicy on an older cairn.yaml: %v", err)
	}
	if err := admit.CheckPolicyChange(old, next); err != nil {
		t.Errorf("CheckPolicyChange of a change that keeps the older values: %v", err)
	}
	bad := append(append([]byte{}, next...), []byte("sources:\n  max_size: 0\n")...)
	if err := admit.CheckPolicyChange(old, bad); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("CheckPolicyChange of a change that sets max_size 0 = %v, want EINVALID", err)
	}
}
