//go:build linux

package confine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"cairn/internal/confine"
)

func init() { agents["privileges"] = privilegesAgent }

// privilegesAgent prints, one "key value" a line, the capabilities it
// holds, its securebits and no_new_privs, the namespaces it is in, and what
// came of setting the host name (to the one it has: nothing changes if that
// works) and of making devices, a FIFO and a socket in its workspace.
func privilegesAgent() int {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		fmt.Println("capget", err)
		return 1
	}
	set := func(lo, hi uint32) string { return fmt.Sprintf("%x", uint64(hi)<<32|uint64(lo)) }
	fmt.Println("effective", set(data[0].Effective, data[1].Effective))
	fmt.Println("permitted", set(data[0].Permitted, data[1].Permitted))
	fmt.Println("inheritable", set(data[0].Inheritable, data[1].Inheritable))
	var ambient, bounding uint64
	for c := range 64 {
		if v, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && v == 1 {
			ambient |= 1 << c
		}
		if v, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && v == 1 {
			bounding |= 1 << c
		}
	}
	fmt.Printf("ambient %x\n", ambient)
	fmt.Printf("bounding %x\n", bounding)
	bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	fmt.Printf("securebits %x %v\n", bits, err)
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	fmt.Printf("no_new_privs %d %v\n", nnp, err)
	for _, ns := range []string{"ipc", "user", "uts"} {
		link, err := os.Readlink("/proc/self/ns/" + ns)
		fmt.Printf("ns/%s %s %v\n", ns, link, err)
	}
	name, err := os.Hostname()
	if err == nil {
		err = unix.Sethostname([]byte(name))
	}
	fmt.Println("sethostname", outcome(err))
	fmt.Println("mknod-char", outcome(unix.Mknod("null", unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))))
	fmt.Println("mknod-block", outcome(unix.Mknod("loop", unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0)))))
	fmt.Println("mkfifo", outcome(unix.Mkfifo("fifo", 0o600)))
	return 0
}

// outcome names how a system call ended: "ok", or its errno.
func outcome(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	default:
		return err.Error()
	}
}

// lines parses "key value" lines into a map.
func lines(out []string) map[string]string {
	m := map[string]string{}
	for _, l := range out {
		k, v, _ := strings.Cut(l, " ")
		m[k] = v
	}
	return m
}

// TestRun_Privileges checks that an agent holds no capability and cannot
// gain one, whoever runs it: a root agent neither makes a device (in its
// workspace, whose other writes it may make), nor sets the host name, and
// every agent has no_new_privs. Where the wrapper may (as root, or in a
// user namespace of its own), it empties the bounding set and locks
// SECBIT_NOROOT, so that no later exec grants root's capabilities. In a
// namespace, the agent has its own UTS and IPC namespaces, and its own user
// namespace unless root runs it where user namespaces are refused (which
// the "NoUser" cases play).
func TestRun_Privileges(t *testing.T) {
	type way struct {
		name    string
		contain confine.Containment
		userns  bool
		run     func(context.Context, confine.Spec) (*confine.Result, error)
	}
	ways := []way{
		{"Namespace", confine.ContainNamespace, true, confine.Run},
		{"Tracking", confine.ContainTracking, false, confine.Run},
	}
	if os.Geteuid() == 0 {
		ways = append(ways, way{"NamespaceNoUser", confine.ContainNamespace, false, confine.RunWithoutUserNamespace})
	}
	for _, mode := range []confine.Mode{confine.ModeLandlock, confine.ModeSnapshot} {
		for _, w := range ways {
			t.Run(string(mode)+"/"+w.name, func(t *testing.T) {
				if mode == confine.ModeLandlock {
					landlock(t)
				} else {
					t.Setenv("CAIRN_LANDLOCK", "off")
				}
				if w.contain == confine.ContainNamespace {
					namespaces(t)
				} else {
					t.Setenv("CAIRN_PIDNS", "off")
				}
				spec := setup(t)
				out := output{}
				spec.Output = out.record
				helper(t, &spec, "privileges")
				res, err := w.run(t.Context(), spec)
				if err != nil || res.ExitCode != 0 || res.Mode != mode || res.Contain != w.contain {
					t.Fatalf("Run() = %+v, %v; want exit 0, %s, %s; output %q", res, err, mode, w.contain, out)
				}
				got := lines(out["stdout"])

				want := map[string]string{
					"effective": "0", "permitted": "0", "inheritable": "0", "ambient": "0",
					"no_new_privs": "1 <nil>",
					"sethostname":  "EPERM",
					"mknod-char":   "EPERM",
					"mknod-block":  "EPERM",
					"mkfifo":       "ok",
				}
				if mode == confine.ModeLandlock {
					// Landlock refuses it before the missing capability does.
					want["mknod-char"], want["mknod-block"] = "EACCES", "EACCES"
				}
				if os.Geteuid() == 0 || w.userns {
					want["bounding"] = "0"
					want["securebits"] = "3 <nil>" // SECBIT_NOROOT, locked
				} else {
					want["bounding"], want["securebits"] = got["bounding"], got["securebits"]
				}
				for _, ns := range []string{"ipc", "user", "uts"} {
					link, err := os.Readlink("/proc/self/ns/" + ns)
					if err != nil {
						t.Fatal(err)
					}
					mine := link + " <nil>"
					own := w.contain == confine.ContainNamespace && (ns != "user" || w.userns)
					if own && got["ns/"+ns] == mine {
						t.Errorf("the agent is in this process's %s namespace, %s", ns, link)
					}
					if own {
						want["ns/"+ns] = got["ns/"+ns]
					} else {
						want["ns/"+ns] = mine
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the agent's privileges (-want +got):\n%s\nstderr: %q", diff, out["stderr"])
				}
			})
		}
	}
}
