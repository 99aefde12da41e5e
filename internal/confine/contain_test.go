//go:build linux

package confine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cairn/internal/confine"
)

// escapeScript starts background processes that leave the agent's tree
// every way they can: each double-forks, calls setsid and execs from an
// empty environment, so it has neither the agent for a parent, nor its
// process group, nor the run's marker. Their command lines hold TOKEN. It
// waits until each has started, says "ready", then runs its tail.
const escapeScript = `
for i in 1 2 3 4 5; do
	(env -i setsid sh -c 'echo up > "$1"; exec sleep 1000.TOKEN' sh "$PWD/up$i" &)
done
sleep 1000.TOKEN &
for i in 1 2 3 4 5; do
	while [ ! -s "up$i" ]; do sleep 0.01; done
done
echo ready
`

// survivors returns the pids of the processes whose command line holds
// "1000.<token>".
func survivors(t *testing.T, token string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte("1000."+token)) {
			if st, ok := procState(pid); !ok || st != "Z" {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// childrenOf returns the pids of the children of process ppid.
func childrenOf(t *testing.T, ppid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
		if len(f) > 1 && string(f[1]) == strconv.Itoa(ppid) {
			pid, _ := strconv.Atoi(e.Name())
			pids = append(pids, pid)
		}
	}
	return pids
}

// killAll kills and reaps what a failed test left behind.
func killAll(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		}
	}
	reapOrphans()
}

// reapOrphans reaps the zombies re-parented to the test process, which
// Run made a child subreaper.
func reapOrphans() {
	for {
		var ws unix.WaitStatus
		if pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

// namespaces skips the test when agents cannot run in PID namespaces here.
func namespaces(t *testing.T) {
	t.Helper()
	spec := setup(t)
	spec.Argv = []string{"true"}
	if res := run(t, t.Context(), spec); res.Contain != confine.ContainNamespace {
		t.Skipf("agents run with %s here, not in PID namespaces", res.Contain)
	}
}

func newToken() string { return strconv.Itoa(100000000 + rand.IntN(900000000)) }

// TestRun_Contain checks that nothing an agent starts outlives the run, even
// processes that left its tree every way they can: the PID namespace holds
// them all. (Tracking cannot follow these; see the package comment.)
func TestRun_Contain(t *testing.T) {
	namespaces(t)
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == confine.ModeLandlock {
				landlock(t)
			} else {
				t.Setenv("CAIRN_LANDLOCK", "off")
			}
			token := newToken()
			spec := setup(t)
			script(t, &spec, strings.ReplaceAll(escapeScript, "TOKEN", token)+"exit 0\n")
			out := output{}
			spec.Output = out.record
			res := run(t, t.Context(), spec)

			if res.Mode != mode || res.Contain != confine.ContainNamespace || res.ExitCode != 0 || len(out["stdout"]) != 1 {
				t.Errorf("Run() = %+v, output %q; want mode %s, %s, exit 0, ready", res, out, mode, confine.ContainNamespace)
			}
			if left := survivors(t, token); len(left) > 0 {
				t.Errorf("processes %v outlived the run", left)
				killAll(t, left)
			}
		})
	}
}

// TestRun_ContainKilled kills the process running the agent with SIGKILL
// once the agent and its escaped processes run: none of them survives it.
func TestRun_ContainKilled(t *testing.T) {
	namespaces(t)
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == confine.ModeLandlock {
				landlock(t)
			}
			token := newToken()
			spec := setup(t)
			script(t, &spec, strings.ReplaceAll(escapeScript, "TOKEN", token)+"exec sleep 1000."+token+"\n")
			payload, err := json.Marshal(helperSpec{Argv: spec.Argv, Dir: spec.Dir, Temp: spec.Temp, Read: spec.Read})
			if err != nil {
				t.Fatal(err)
			}
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), "CONFINE_TEST_SUPERVISE="+string(payload))
			if mode == confine.ModeSnapshot {
				cmd.Env = append(cmd.Env, "CAIRN_LANDLOCK=off")
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			for sc.Scan() && sc.Text() != "ready" {
			}
			// "ready" comes once every escaped process has started, but the
			// last ones may not yet have exec'd their sleep (which is what
			// names them), nor the script its own: wait for the seven.
			running := survivors(t, token)
			for deadline := time.Now().Add(5 * time.Second); len(running) < 7 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				running = survivors(t, token)
			}
			// The helper's children (the wrapper, or the agent) come to
			// this process, a child subreaper, when it dies.
			running = append(running, childrenOf(t, cmd.Process.Pid)...)
			cmd.Process.Signal(syscall.SIGKILL)
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the helper ended with %v before it was killed; stderr:\n%s", err, stderr.String())
			}
			if len(running) < 7 {
				t.Errorf("%d processes of the agent ran, want at least 7 (the helper's child, the agent's and 5 escaped)", len(running))
			}
			// Each process is waited for through a pidfd: readable once
			// it has exited.
			var left []int
			for _, pid := range running {
				fd, err := unix.PidfdOpen(pid, 0)
				if err != nil {
					continue // gone already
				}
				n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int((5 * time.Second).Milliseconds()))
				unix.Close(fd)
				if n != 1 {
					left = append(left, pid)
				}
				var ws unix.WaitStatus
				unix.Wait4(pid, &ws, unix.WNOHANG, nil) // ours to reap, or ECHILD
			}
			if len(left) > 0 {
				t.Errorf("processes %v outlived the killed process that ran them", left)
			}
			killAll(t, left)
		})
	}
}

// TestRun_Signaled checks that an agent a signal ended reports 128+n, in a
// namespace (where its init reports it) and when tracked alike.
func TestRun_Signaled(t *testing.T) {
	for _, contain := range []confine.Containment{confine.ContainNamespace, confine.ContainTracking} {
		t.Run(string(contain), func(t *testing.T) {
			if contain == confine.ContainNamespace {
				namespaces(t)
			} else {
				t.Setenv("CAIRN_PIDNS", "off")
			}
			spec := setup(t)
			script(t, &spec, `kill -KILL $$`)
			if res := run(t, t.Context(), spec); res.ExitCode != 128+9 || res.Reason != "" || res.Contain != contain {
				t.Errorf("Run() = %+v, want exit 137, no reason, %s", res, contain)
			}
		})
	}
}
