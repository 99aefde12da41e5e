//go:build linux

package confine_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/internal/confine"
)

func init() {
	agents["connect"] = connectAgent
	agents["signal"] = signalAgent
}

// connectAgent connects to each Unix socket in CONFINE_TEST_CONNECT (a
// path, or @name for an abstract one) and prints "connect <address>
// <outcome>"; then it listens on a socket of its own, in its temp folder
// and an abstract one, connects to each and prints "own <outcome>".
func connectAgent() int {
	for _, addr := range filepath.SplitList(os.Getenv("CONFINE_TEST_CONNECT")) {
		c, err := net.Dial("unix", addr)
		if err == nil {
			c.Close()
		}
		fmt.Println("connect", addr, outcome(err))
	}
	for _, addr := range []string{filepath.Join(os.Getenv("TMPDIR"), "own.sock"), "@" + os.Getenv("CONFINE_TEST_OWN")} {
		l, err := net.Listen("unix", addr)
		if err == nil {
			var c net.Conn
			if c, err = net.Dial("unix", addr); err == nil {
				c.Close()
			}
			l.Close()
		}
		fmt.Println("own", outcome(err))
	}
	return 0
}

// signalAgent sends signal 0 to the process CONFINE_TEST_PID names and
// prints "outside <outcome>"; then it starts a child and ends it with
// SIGTERM: "own <outcome>".
func signalAgent() int {
	pid, err := strconv.Atoi(os.Getenv("CONFINE_TEST_PID"))
	if err != nil {
		fmt.Println("outside", err)
		return 1
	}
	fmt.Println("outside", outcome(syscall.Kill(pid, 0)))
	child := exec.Command("sleep", "1000")
	if err = child.Start(); err == nil {
		err = child.Process.Signal(syscall.SIGTERM)
		child.Wait()
	}
	fmt.Println("own", outcome(err))
	return 0
}

// mountinfo returns this process's mounts.
func mountinfo(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// listen listens on a Unix socket at addr until the test ends.
func listen(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// TestRun_Sockets checks that a confined agent connects to no Unix socket
// of another program's: not one listening by path outside its workspace
// (under /tmp, and /run where this user may make one), which in its own
// mount namespace it does not find, nor, from Landlock ABI 6, an abstract
// one, in a namespace or not. Its own sockets work. (Without namespaces,
// a socket by path stays reachable before Landlock ABI 9; see the package
// comment.)
//
// The tmpfs mounts that hide those folders stay in the agent's namespace:
// this process's mounts are the same after each run, root's without a user
// namespace too.
func TestRun_Sockets(t *testing.T) {
	landlock(t)
	type way struct {
		name    string
		contain confine.Containment
		run     func(context.Context, confine.Spec) (*confine.Result, error)
	}
	ways := []way{
		{"Namespace", confine.ContainNamespace, confine.Run},
		{"Tracking", confine.ContainTracking, confine.Run},
	}
	if os.Geteuid() == 0 {
		ways = append(ways, way{"NamespaceNoUser", confine.ContainNamespace, confine.RunWithoutUserNamespace})
	}
	for _, w := range ways {
		contain := w.contain
		t.Run(w.name, func(t *testing.T) {
			if contain == confine.ContainNamespace {
				namespaces(t)
			} else {
				t.Setenv("CAIRN_PIDNS", "off")
			}
			token := newToken()
			paths := []string{filepath.Join(t.TempDir(), "db.sock")}
			if dir, err := os.MkdirTemp("/run", "cairn-test-"); err == nil {
				t.Cleanup(func() { os.RemoveAll(dir) })
				paths = append(paths, filepath.Join(dir, "mysqld.sock"))
			}
			abstract := "@cairn-test-" + token
			for _, addr := range append(append([]string{}, paths...), abstract) {
				listen(t, addr)
			}
			spec := setup(t)
			out := output{}
			spec.Output = out.record
			helper(t, &spec, "connect",
				"CONFINE_TEST_CONNECT="+strings.Join(append(append([]string{}, paths...), abstract), string(filepath.ListSeparator)),
				"CONFINE_TEST_OWN=cairn-test-own-"+token)
			mounts := mountinfo(t)
			res, err := w.run(t.Context(), spec)
			if err != nil || res.ExitCode != 0 || res.Contain != contain {
				t.Fatalf("Run() = %+v, %v; want exit 0, %s; output %q", res, err, contain, out)
			}
			if diff := cmp.Diff(mounts, mountinfo(t)); diff != "" {
				t.Errorf("this process's mounts changed (-before +after):\n%s", diff)
			}

			got := map[string]string{}
			for _, l := range out["stdout"] {
				f := strings.Fields(l)
				got[strings.Join(f[:len(f)-1], " ")] += f[len(f)-1]
			}
			if got["own"] != "okok" {
				t.Errorf("the agent's own sockets: %q, want both ok", got["own"])
			}
			var reached []string
			for _, addr := range paths {
				if got["connect "+addr] == "ok" && (contain == confine.ContainNamespace || confine.Available() >= 9) {
					reached = append(reached, addr)
				}
			}
			if got["connect "+abstract] == "ok" && confine.Available() >= 6 {
				reached = append(reached, abstract)
			}
			if len(reached) > 0 {
				t.Errorf("the agent connected to %q; output %q", reached, out["stdout"])
			}
		})
	}
}

// TestRun_Signals checks that from Landlock ABI 6 a confined agent cannot
// signal a process outside the run, even one of its own user's, while it
// still signals its own children. (In a PID namespace it does not see
// other processes at all.)
func TestRun_Signals(t *testing.T) {
	landlock(t)
	if confine.Available() < 6 {
		t.Skip("Landlock before ABI 6 does not scope signals")
	}
	for _, contain := range []confine.Containment{confine.ContainNamespace, confine.ContainTracking} {
		t.Run(string(contain), func(t *testing.T) {
			if contain == confine.ContainNamespace {
				namespaces(t)
			} else {
				t.Setenv("CAIRN_PIDNS", "off")
			}
			outside := exec.Command("sleep", "1000")
			if err := outside.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { outside.Process.Kill(); outside.Wait() })
			spec := setup(t)
			out := output{}
			spec.Output = out.record
			helper(t, &spec, "signal", "CONFINE_TEST_PID="+strconv.Itoa(outside.Process.Pid))
			res := run(t, t.Context(), spec)

			want := []string{"outside EPERM", "own ok"}
			if contain == confine.ContainNamespace {
				want[0] = "outside ESRCH"
			}
			if diff := cmp.Diff(want, out["stdout"]); diff != "" || res.ExitCode != 0 {
				t.Errorf("Run() exit %d; signals (-want +got):\n%s\nstderr: %q", res.ExitCode, diff, out["stderr"])
			}
		})
	}
}
