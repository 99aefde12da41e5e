//go:build linux

package confine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cairn/internal/confine"
)

// TestRun_InheritedFiles runs the agent from a process that inherited open
// descriptors, as `cairn ingest s.md 9>>outside.txt` does: the agent gets
// none of them, only its standard input, output and error.
func TestRun_InheritedFiles(t *testing.T) {
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		for _, contain := range []confine.Containment{confine.ContainNamespace, confine.ContainTracking} {
			t.Run(string(mode)+"/"+string(contain), func(t *testing.T) {
				var env []string
				if mode == confine.ModeLandlock {
					landlock(t)
				} else {
					env = append(env, "CAIRN_LANDLOCK=off")
				}
				if contain == confine.ContainNamespace {
					namespaces(t)
				} else {
					env = append(env, "CAIRN_PIDNS=off")
				}
				outside := filepath.Join(t.TempDir(), "outside.txt")
				f, err := os.OpenFile(outside, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				spec := setup(t)
				script(t, &spec, `for fd in 3 4 5 6 7 8 9; do
	if eval "echo escaped >&$fd" 2>/dev/null; then echo "wrote $fd"; fi
done
echo done
`)
				// The process running the agent holds the file as its
				// descriptors 3 and 9.
				got := superviseFrom(t, spec, nil, nil, []*os.File{f, nil, nil, nil, nil, nil, f}, env...)

				if len(got) != 2 || got[0] != "done" || !strings.HasPrefix(got[1], "result ") {
					t.Errorf("the agent printed %q, want done and the result", got)
				}
				if b, err := os.ReadFile(outside); err != nil || len(b) != 0 {
					t.Errorf("ReadFile(%s) = %q, %v; want it empty", outside, b, err)
				}
			})
		}
	}
}
