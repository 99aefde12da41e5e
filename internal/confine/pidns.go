//go:build linux

package confine

import (
	"errors"
	"os"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// containments returns the ways to start the agent's tree, best first: new
// PID, mount, UTS and IPC namespaces inside a new user namespace that maps
// only this process's user and group (so that whatever capabilities the
// agent held would be over its own namespaces, not the machine); for root,
// where user namespaces are refused, the same namespaces without one; then
// a process group that Run tracks. CAIRN_PIDNS=off leaves out the
// namespaces. The wrapper drops every capability before the agent starts,
// in all of them (see dropPrivileges).
func containments() []containment {
	var out []containment
	if os.Getenv(envPidns) != "off" {
		flags := uintptr(syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC)
		// Inside, the user is itself. Unless it is root, its capabilities
		// over the new namespaces would end at the wrapper's execve: the
		// ambient CAP_SYS_ADMIN keeps the one that mounting needs, and
		// CAP_SETPCAP the one that emptying the bounding set needs; the
		// wrapper drops both before it starts the agent.
		uid, gid := os.Getuid(), os.Getgid()
		out = append(out, containment{ContainNamespace, &syscall.SysProcAttr{
			Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: flags | syscall.CLONE_NEWUSER,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			GidMappingsEnableSetgroups: false,
			AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
		}})
		if os.Geteuid() == 0 {
			out = append(out, containment{ContainNamespace, &syscall.SysProcAttr{
				Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: flags,
			}})
		}
	}
	return append(out, containment{ContainTracking, sysProcAttr()})
}

// refused reports whether starting a process in new namespaces failed
// because this process may not make them: then the next way is tried.
func refused(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.EACCES} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// newContainer returns what stops the tree of the process just started:
// its namespace, or the tracking of its descendants. done is closed once
// the process has been waited for.
func newContainer(c Containment, p *os.Process, marker string, done <-chan struct{}) container {
	if c == ContainNamespace {
		return &namespace{init: p, done: done}
	}
	return newTree(p.Pid, marker)
}

// namespace is a run contained in a PID namespace whose init is the
// wrapper: when the init dies, the kernel kills every process in the
// namespace, and the init dies with the process that started it.
type namespace struct {
	init *os.Process
	done <-chan struct{}
}

// scan returns 1 while the init runs, 0 once it has been waited for.
func (n *namespace) scan() int {
	select {
	case <-n.done:
		return 0
	default:
		return 1
	}
}

// stop sends SIGTERM to the init, which passes it on to every process of
// the namespace, and SIGKILL after grace, which kills the namespace.
func (n *namespace) stop(grace time.Duration) {
	if n.scan() == 0 {
		return
	}
	n.init.Signal(syscall.SIGTERM)
	n.init.Signal(syscall.SIGCONT) // a stopped process handles SIGTERM only once continued
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-n.done:
	case <-t.C:
		n.init.Signal(syscall.SIGKILL)
	}
}

// reapAll does nothing: the init reaps the namespace's orphans, and Run
// reaps the init.
func (n *namespace) reapAll() {}

// isolateNetwork returns attr with a network namespace of its own added
// (see Network). In a new user namespace the wrapper keeps, until it drops
// them, the capabilities to bring up the loopback interface and to listen
// on an endpoint's port below 1024.
func isolateNetwork(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	a := *attr
	a.Cloneflags |= syscall.CLONE_NEWNET
	if a.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		a.AmbientCaps = append(slices.Clone(a.AmbientCaps), unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE)
	}
	return &a
}
