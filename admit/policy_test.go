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
		_, err = admit.ParsePolicy([]byte(tc.file))
		if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("ParsePolicy(%q) = %v, want EINVALID with a hint", tc.file, err)
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
