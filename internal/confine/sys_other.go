//go:build !linux

package confine

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Elsewhere than Linux there is no Landlock: agents run in snapshot mode,
// and their process tree is their process group (a process that leaves the
// group is not followed).

// hasWrapper is false: there is no confinement wrapper, and Run starts
// the agent itself.
const hasWrapper = false

// Available returns 0: no Landlock.
func Available() int { return 0 }

// MaybeExec does nothing: there is no confinement wrapper.
func MaybeExec() {}

func prepareParent() error { return nil }

// containments returns the agent's process group alone: there are no PID
// namespaces.
func containments() []containment { return []containment{{ContainTracking, sysProcAttr()}} }

func refused(error) bool { return false }

func newContainer(_ Containment, p *os.Process, marker string, _ <-chan struct{}) container {
	return newTree(p.Pid, marker)
}

// sysProcAttr starts the agent in a session, and so a process group, of its
// own, without a controlling terminal.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// tree is the agent's process group.
type tree struct{ pgid int }

func newTree(pid int, _ string) *tree { return &tree{pgid: pid} }

// scan returns 1 while the group has a live process, else 0.
func (t *tree) scan() int {
	if syscall.Kill(-t.pgid, 0) == nil {
		return 1
	}
	return 0
}

func (t *tree) reapAll() {}

// stop sends SIGTERM to the group, then SIGKILL after grace.
func (t *tree) stop(grace time.Duration) {
	syscall.Kill(-t.pgid, syscall.SIGTERM)
	syscall.Kill(-t.pgid, syscall.SIGCONT)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && t.scan() > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-t.pgid, syscall.SIGKILL)
}

// systemRead returns nothing: without Landlock, reads are not confined.
func systemRead(bool) []string { return nil }

// Without namespaces there is no network of the agent's own: Run never
// wraps, so these are never called.

func controlPair() (parent, child *os.File, err error) {
	return nil, nil, errors.New("no network namespaces here")
}

func isolateNetwork(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

type forwarder struct{}

func forward(*os.File, []string) (*forwarder, error) {
	return nil, errors.New("no network namespaces here")
}

func (*forwarder) close() {}
