//go:build linux

package confine_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn/internal/confine"
)

// treeScript starts background processes of every kind an agent may leave
// behind, writes their pids (as the agent sees them) into $PIDS, says
// "ready" and then runs tail. One has a command name that /proc/<pid>/stat
// shows as "(odd) (name)". Every command line holds 1000.TOKEN.
const treeScript = `
sleep 1000.TOKEN &
echo $! > "$PIDS/child"
setsid sh -c 'echo $$ > "$PIDS/setsid"; exec sleep 1000.TOKEN' &
(sh -c 'echo $$ > "$PIDS/orphan"; exec sleep 1000.TOKEN' &)
(setsid sh -c 'echo $$ > "$PIDS/daemon"; exec sleep 1000.TOKEN' &)
sh -c 'trap "" TERM; echo $$ > "$PIDS/stubborn"; while :; do sleep 1; done' 1000.TOKEN &
cp "$(command -v sleep)" "$TMPDIR/odd) (name"
sh -c 'echo $$ > "$PIDS/odd"; exec "$TMPDIR/odd) (name" 1000.TOKEN' &
for f in child setsid orphan daemon stubborn odd; do
	while [ ! -s "$PIDS/$f" ]; do sleep 0.01; done
done
echo ready
`

// stopAfter is the timeout and the inactivity limit of the runs that are
// stopped: long enough for the script to start its processes and say
// "ready" on a loaded machine, since a run stopped earlier proves nothing.
const stopAfter = 4 * time.Second

func TestRun_Stop(t *testing.T) {
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		for _, contain := range []confine.Containment{confine.ContainNamespace, confine.ContainTracking} {
			t.Run(string(mode)+"/"+string(contain), func(t *testing.T) {
				if mode == confine.ModeLandlock {
					landlock(t)
				} else {
					t.Setenv("CAIRN_LANDLOCK", "off")
				}
				if contain == confine.ContainNamespace {
					namespaces(t)
				} else {
					t.Setenv("CAIRN_PIDNS", "off")
				}
				testStop(t, mode, contain)
			})
		}
	}
	// Every run reaped what the kernel re-parented to this process.
	for _, p := range children(t) {
		t.Errorf("process %s is a child of the test after the runs", p)
	}
}

// children lists this process's children other than its threads, as "pid
// (command) state".
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		f := bytes.Fields(b[end+1:])
		if len(f) > 1 && string(f[1]) == self {
			found = append(found, string(b[:end+1])+" "+string(f[0]))
		}
	}
	return found
}

func testStop(t *testing.T, mode confine.Mode, contain confine.Containment) {
	for _, tt := range []struct {
		name       string
		tail       string
		timeout    time.Duration
		inactivity time.Duration
		cancel     bool // cancel the context once the agent is ready
		want       string
		wantExit   int
	}{
		{name: "Exited", tail: "exit 0", want: "", wantExit: 0},
		{name: "Timeout", tail: "while :; do echo tick; sleep 0.05; done", timeout: stopAfter, inactivity: time.Minute, want: confine.ReasonTimeout, wantExit: -1},
		{name: "Inactive", tail: "exec sleep 1000", inactivity: stopAfter, want: confine.ReasonInactive, wantExit: -1},
		{name: "Cancelled", tail: "exec sleep 1000", cancel: true, want: confine.ReasonCancelled, wantExit: -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := setup(t)
			if tt.timeout > 0 {
				spec.Timeout = tt.timeout
			}
			spec.Inactivity = tt.inactivity
			pids := filepath.Join(spec.Dir, "pids")
			if err := os.Mkdir(pids, 0o755); err != nil {
				t.Fatal(err)
			}
			spec.Env = []string{"PIDS=" + pids}
			token := newToken()
			script(t, &spec, strings.ReplaceAll(treeScript, "TOKEN", token)+tt.tail+"\n")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			ready := false
			spec.Output = func(stream, line string) {
				if line == "ready" {
					ready = true
					if tt.cancel {
						cancel()
					}
				}
			}
			res := run(t, ctx, spec)

			if !ready {
				t.Fatalf("Run() = %+v before the agent was ready", res)
			}
			if res.Mode != mode || res.Contain != contain || res.Reason != tt.want || res.ExitCode != tt.wantExit {
				t.Errorf("Run() = %+v, want mode %s, %s, reason %q, exit %d", res, mode, contain, tt.want, tt.wantExit)
			}
			if left := survivors(t, token); len(left) > 0 {
				t.Errorf("processes %v outlived the run", left)
				killAll(t, left)
			}
			if contain == confine.ContainNamespace {
				return // the pids are the namespace's
			}
			for _, name := range []string{"child", "setsid", "orphan", "daemon", "stubborn", "odd"} {
				b, err := os.ReadFile(filepath.Join(pids, name))
				if err != nil {
					t.Fatal(err)
				}
				pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
				if err != nil {
					t.Fatal(err)
				}
				if state, ok := procState(pid); ok {
					t.Errorf("%s process %d is still there after Run, state %s", name, pid, state)
				}
			}
		})
	}
}

// procState returns the state letter of a process running a command that
// the agents' background processes run, and false when there is none: any
// other command means the pid was reused.
func procState(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open || end+3 > len(b) {
		return "", false
	}
	switch string(b[open+1 : end]) {
	case "sh", "sleep", "odd) (name":
		return string(b[end+2 : end+3]), true
	}
	return "", false
}
