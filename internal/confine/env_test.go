package confine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/internal/confine"
)

// TestRun_Env checks that the agent gets an allowlisted environment: PATH
// and the locale from the parent, HOME and TMPDIR pointing at its private
// folders, the variables the spec names and adds (but never over those it
// sets), and nothing else of the parent's, such as a secret.
func TestRun_Env(t *testing.T) {
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == confine.ModeLandlock {
				landlock(t)
			} else {
				t.Setenv("CAIRN_LANDLOCK", "off")
			}
			t.Setenv("CAIRN_TEST_SECRET", "s3cret")
			t.Setenv("CAIRN_TEST_NAMED", "named")
			t.Setenv("LANG", "C.UTF-8")
			t.Setenv("LC_TIME", "C")
			spec := setup(t)
			spec.Home = t.TempDir()
			spec.Pass = []string{"CAIRN_TEST_NAMED", "CAIRN_TEST_UNSET"}
			spec.Env = []string{"ADDED=added", "HOME=/elsewhere"}
			out := output{}
			spec.Output = out.record
			script(t, &spec, "env")
			res := run(t, t.Context(), spec)

			got := map[string]string{}
			for _, kv := range out["stdout"] {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v
			}
			// What sh itself sets is left out.
			for _, k := range []string{"PWD", "OLDPWD", "SHLVL", "_"} {
				delete(got, k)
			}
			marker := got["CAIRN_CONFINE_RUN"]
			delete(got, "CAIRN_CONFINE_RUN")
			want := map[string]string{
				"PATH": os.Getenv("PATH"), "LANG": "C.UTF-8", "LC_TIME": "C",
				"HOME": spec.Home, "TMPDIR": spec.Temp, "TMP": spec.Temp, "TEMP": spec.Temp,
				"CAIRN_TEST_NAMED": "named", "ADDED": "added",
			}
			if diff := cmp.Diff(want, got); diff != "" || res.ExitCode != 0 || marker == "" {
				t.Errorf("Run() exit %d, marker %q; environment (-want +got):\n%s", res.ExitCode, marker, diff)
			}
		})
	}
}

func TestSpec_ValidatePass(t *testing.T) {
	for _, name := range []string{"", "1ABC", "A-B", "A=B", "HOME", "TMPDIR", "CAIRN_CONFINE", "CAIRN_CONFINE_RUN"} {
		spec := confine.Spec{Argv: []string{"sh"}, Dir: "/work", Temp: "/tmp/agent", Pass: []string{name}}
		if err := spec.Validate(); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Validate() passing %q = %v, want code %s", name, err, cairn.EINVALID)
		}
	}
	spec := confine.Spec{Argv: []string{"sh"}, Dir: "/work", Temp: "/tmp/agent", Pass: []string{"ANTHROPIC_API_KEY", "_x9"}}
	if err := spec.Validate(); err != nil {
		t.Errorf("Validate(%v) = %v, want nil", spec.Pass, err)
	}
}
