//go:build linux

package confine

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// prepareParent readies this process to watch an agent's process tree:
// /proc must be readable, and orphans of the agent must come to us rather
// than to init, so that they can be found and reaped (the setting is
// process-wide and idempotent).
func prepareParent() error {
	if _, err := readProcs(); err != nil {
		return fmt.Errorf("watch agent processes: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	return nil
}

// hasWrapper says that MaybeExec acts as the wrapper here: every agent
// starts through it, which drops privileges (and applies Landlock, or runs
// the agent as its namespace's init, when those apply) before the agent
// runs.
const hasWrapper = true

// sysProcAttr starts the agent in a session of its own, without a
// controlling terminal (so it cannot type into the person's with TIOCSTI),
// whose leader leads its own process group too; if cairn dies, the agent
// (its direct child) dies with it, and a new worker rescues the job and
// runs it again.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
