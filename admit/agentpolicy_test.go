package admit_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/admit"
	"cairn/internal/confine"
)

// TestPolicy_AgentKeys checks the agent keys that shape a command agent's
// confinement: set, read back and validated.
func TestPolicy_AgentKeys(t *testing.T) {
	for _, tt := range []struct {
		key, value string
		want       string // what Get returns
	}{
		{"agent.read", "/opt/agent, /usr/local/share/agent", "/opt/agent,/usr/local/share/agent"},
		{"agent.env", "ANTHROPIC_API_KEY,_x9", "ANTHROPIC_API_KEY,_x9"},
		{"agent.unconfined", "allow", "allow"},
		{"agent.unconfined", "refuse", "refuse"},
		{"agent.network", "open", "open"},
		{"agent.network", "isolated", "isolated"},
		{"agent.allow", "registry.npmjs.org:443, 10.0.0.5:11434", "registry.npmjs.org:443,10.0.0.5:11434"},
	} {
		t.Run(tt.key, func(t *testing.T) {
			out, err := admit.SetPolicy(nil, tt.key, tt.value)
			if err != nil {
				t.Fatalf("SetPolicy(%s, %q) = %v", tt.key, tt.value, err)
			}
			got, err := mustParse(t, out).Get(tt.key)
			if diff := cmp.Diff(tt.want, got); diff != "" || err != nil {
				t.Errorf("Get(%s) = %q, %v; (-want +got):\n%s", tt.key, got, err, diff)
			}
		})
	}
	if v, err := (&admit.Policy{}).Get("agent.unconfined"); v != "refuse" || err != nil {
		t.Errorf("Get(agent.unconfined) of the defaults = %q, %v; want refuse", v, err)
	}
	if v, err := (&admit.Policy{}).Get("agent.network"); v != "isolated" || err != nil {
		t.Errorf("Get(agent.network) of the defaults = %q, %v; want isolated", v, err)
	}
	for _, doc := range []string{
		"agent:\n  read: [opt/agent]\n",
		"agent:\n  read: [/opt/../etc]\n",
		"agent:\n  read: [/opt/agent/]\n",
		"agent:\n  env: [1KEY]\n",
		"agent:\n  env: [A-B]\n",
		"agent:\n  env: [\"\"]\n",
		"agent:\n  env: [HOME]\n",
		"agent:\n  env: [CAIRN_CONFINE_RUN]\n",
		"agent:\n  unconfined: yes\n",
		"agent:\n  network: none\n",
		"agent:\n  allow: [example.com]\n",
		"agent:\n  allow: [\"0.0.0.0:80\"]\n",
		"agent:\n  allow: [\"https://example.com\"]\n",
	} {
		if _, err := admit.ParsePolicy([]byte(doc)); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("ParsePolicy(%q) = %v, want EINVALID with a hint", doc, err)
		}
	}
}

// TestPolicy_AgentReadRefused checks that agent.read refuses, with a hint,
// by settings set and in a cairn.yaml alike, the folders that would open
// the system's secrets or every ingest to an agent: /, /etc, /proc, /sys,
// /dev, /run, /root, /home, and what lies in /proc, /sys and /dev. A part
// of /etc or of a home may be named.
func TestPolicy_AgentReadRefused(t *testing.T) {
	for _, value := range []string{
		"/", "/etc", "/proc", "/sys", "/dev", "/run", "/root", "/home",
		"/proc/1", "/sys/kernel", "/dev/sda", "/opt/agent,/etc",
	} {
		if _, err := admit.SetPolicy(nil, "agent.read", value); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("SetPolicy(agent.read, %q) = %v, want EINVALID with a hint", value, err)
		}
		doc := "agent:\n  read: [" + value + "]\n"
		if _, err := admit.ParsePolicy([]byte(doc)); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("ParsePolicy(%q) = %v, want EINVALID with a hint", doc, err)
		}
	}
	for _, value := range []string{"/etc/agent", "/home/me/.local/share/agent", "/root/.local/bin"} {
		if _, err := admit.SetPolicy(nil, "agent.read", value); err != nil {
			t.Errorf("SetPolicy(agent.read, %q) = %v, want nil", value, err)
		}
	}
}

// TestPolicy_AgentEnvRule checks that agent.env refuses exactly the names
// the agent's runs refuse (confine.CheckVar): no name, or one cairn sets
// for the agent. Other names of cairn's, like CAIRN_USER, may be passed.
func TestPolicy_AgentEnvRule(t *testing.T) {
	for _, name := range []string{
		"", "1KEY", "A-B", "A=B", "HOME", "TMPDIR", "TMP", "TEMP", "PWD", "CAIRN_CONFINE", "CAIRN_CONFINE_RUN",
		"CAIRN_CONFINE_EXTRA", "CAIRN_USER", "CAIRN_VAULT", "ANTHROPIC_API_KEY", "_x9", "path",
	} {
		doc := "agent:\n  env: [\"" + name + "\"]\n"
		_, err := admit.ParsePolicy([]byte(doc))
		want := confine.CheckVar(name)
		if (err == nil) != (want == nil) || (err != nil && (cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "")) {
			t.Errorf("ParsePolicy(%q) = %v; confine.CheckVar = %v; want the same refusal, EINVALID with a hint", doc, err, want)
		}
	}
}
