package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MaybeExec must be called first thing in main() (and in TestMain of
// packages that use Run). When this process was started by Run as the
// confinement wrapper — the environment holds CAIRN_CONFINE — it does what
// the wrapper does and never returns: it drops its privileges, restricts
// itself with Landlock (when asked) and execs the agent, or, as the init of
// the run's PID namespace, mounts the namespace's /proc, drops its
// privileges, restricts itself, starts the agent and waits for it, then
// exits with the agent's status (128+n when a signal n ended it).
// When it cannot, it prints a message to standard error and exits with 127
// (command not found) or 126 (anything else), so that the agent never runs
// less confined than asked. Otherwise MaybeExec returns immediately and
// does nothing.
func MaybeExec() {
	payload, ok := os.LookupEnv(envWrapper)
	if !ok {
		return
	}
	code, err := wrapper(payload)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: confine agent: %v\n", err)
	}
	os.Exit(code)
}

// wrapper sets up the agent's confinement and runs it; it returns the
// exit code, and an error only when the agent could not start.
func wrapper(payload string) (int, error) {
	// First, while /proc is readable for the fallback.
	if err := closeInherited(); err != nil {
		return exitCannotExec, err
	}
	var ws wrapperSpec
	if err := json.Unmarshal([]byte(payload), &ws); err != nil {
		return exitCannotExec, fmt.Errorf("decode %s: %w", envWrapper, err)
	}
	if ws.Path == "" || len(ws.Argv) == 0 {
		return exitCannotExec, fmt.Errorf("decode %s: no command", envWrapper)
	}
	// Landlock, no_new_privs, securebits and capabilities apply to the
	// calling thread, and a new process (execve, or a fork) takes the
	// calling thread's credentials, so these calls must share one thread.
	// It is never unlocked: the process either becomes the agent or exits.
	runtime.LockOSThread()
	procMounted := false
	if ws.Init {
		// Mounting is impossible once Landlock applies, so it comes first.
		// Without a /proc of its own the agent reads only the machine's
		// files of /proc (see systemRead). The other programs' folders
		// are hidden only from an agent Landlock confines: an unconfined
		// one may reach anything its user can anyway.
		private := makePrivate()
		procMounted = private == nil && mountProc() == nil
		if ws.Net != nil {
			// Its /etc/hosts is a mount; the agent never runs with the
			// machine's network where it was asked to have its own.
			if private != nil {
				return exitCannotExec, private
			}
			if err := setupNet(ws.Net, ws.Dir); err != nil {
				return exitCannotExec, fmt.Errorf("isolate the network: %w", err)
			}
		}
		if ws.Landlock {
			if private != nil {
				return exitCannotExec, private
			}
			keep := slices.Concat(ws.Read, ws.Write, []string{ws.Path}, systemRead(procMounted), devices())
			if err := hide(keep); err != nil {
				return exitCannotExec, fmt.Errorf("hide other programs' folders: %w", err)
			}
			// The working folder is the one now visible at its path.
			if err := os.Chdir(ws.Dir); err != nil {
				return exitCannotExec, fmt.Errorf("enter the workspace: %w", err)
			}
		}
	}
	if err := dropPrivileges(); err != nil {
		return exitCannotExec, err
	}
	if ws.Landlock {
		if err := restrictThread(ws.Read, ws.Write, procMounted); err != nil {
			return exitCannotExec, fmt.Errorf("apply landlock: %w", err)
		}
	}
	if err := os.Unsetenv(envWrapper); err != nil {
		return exitCannotExec, fmt.Errorf("unset %s: %w", envWrapper, err)
	}
	if ws.Init {
		return initAgent(ws, time.Duration(ws.GraceMS)*time.Millisecond)
	}
	err := syscall.Exec(ws.Path, ws.Argv, os.Environ())
	return execFailed(ws.Path, err)
}

// execFailed returns the exit code and error for an agent that could not
// start.
func execFailed(path string, err error) (int, error) {
	if errors.Is(err, syscall.ENOENT) {
		return exitNotFound, fmt.Errorf("exec %s: %w", path, err)
	}
	return exitCannotExec, fmt.Errorf("exec %s: %w", path, err)
}

// closeInherited marks every descriptor above standard error
// close-on-exec, so that none that the process running Run inherited (a
// shell's `9>>file`) reaches the agent: the exec, or the init's start of
// the agent, closes them. They are marked rather than closed because the
// Go runtime may hold some of them (its poller's), which closing under it
// would break; its own are close-on-exec already. Before Linux 5.11, which
// lacks CLOSE_RANGE_CLOEXEC, each descriptor /proc/self/fd lists is marked.
func closeInherited() error {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("close inherited descriptors: %w", err)
	}
	return closeListed()
}

// closeListed marks close-on-exec each descriptor above standard error
// that /proc/self/fd lists.
func closeListed() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("close inherited descriptors: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The folder's own descriptor is gone by now: EBADF.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("close inherited descriptor %d: %w", fd, err)
		}
	}
	return nil
}

// Securebits (<linux/securebits.h>).
const (
	secbitNoroot       = 1 << 0 // uid 0 gains no capabilities at execve
	secbitNorootLocked = 1 << 1 // and that cannot be undone
)

// dropPrivileges makes sure that no program the calling thread starts holds
// a capability or gains one: it clears the ambient and inheritable sets
// and sets no_new_privs (so set-user-ID programs and file capabilities
// grant nothing), and, where the thread may (CAP_SETPCAP: root, or the
// wrapper in a user namespace of its own), empties the bounding set and
// locks SECBIT_NOROOT, so that an execve by root grants nothing either.
// The thread keeps its own permitted and effective sets: the namespace's
// init does not exec. Without CAP_SETPCAP the thread is not root and holds
// no capability an execve would pass on.
func dropPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	if data[unix.CAP_SETPCAP/32].Effective&(1<<(unix.CAP_SETPCAP%32)) != 0 {
		for c := 0; ; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
				break // past the last capability the kernel knows
			} else if err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbitNoroot|secbitNorootLocked, 0, 0, 0); err != nil {
			return fmt.Errorf("set securebits: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear inheritable capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
}

// makePrivate makes every mount of the new mount namespace private, so
// that nothing mounted here reaches the machine's mounts.
func makePrivate() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	return nil
}

// mountProc gives the new mount namespace a /proc of its own PID
// namespace; the mounts must be private already.
func mountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// initAgent is the wrapper as the init of the run's PID namespace: it
// starts the agent from the calling (locked, restricted) thread, forwards
// the signals Run sends to every process of the namespace, and reaps
// whatever the namespace orphans. Once the agent has exited, the rest of
// the namespace gets SIGTERM and grace to stop; then init exits, and the
// kernel kills whatever is left. Init dies with the process that started
// it (Pdeathsig), which kills the whole namespace too.
func initAgent(ws wrapperSpec, grace time.Duration) (int, error) {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGCONT)
	go func() {
		for sig := range sigs {
			unix.Kill(-1, sig.(unix.Signal)) // every process of the namespace but init
		}
	}()
	agent, err := syscall.ForkExec(ws.Path, ws.Argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		return execFailed(ws.Path, err)
	}
	var status unix.WaitStatus
	for {
		var st unix.WaitStatus
		pid, err := unix.Wait4(-1, &st, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return exitCannotExec, fmt.Errorf("wait for agent: %w", err)
		}
		if pid == agent {
			status = st
			break
		}
	}
	if unix.Kill(-1, 0) == nil {
		unix.Kill(-1, unix.SIGTERM)
		unix.Kill(-1, unix.SIGCONT)
		empty := make(chan struct{})
		go func() {
			defer close(empty)
			for {
				var st unix.WaitStatus
				if _, err := unix.Wait4(-1, &st, 0, nil); err != nil && !errors.Is(err, unix.EINTR) {
					return // ECHILD: nothing left
				}
			}
		}()
		t := time.NewTimer(grace)
		select {
		case <-empty:
		case <-t.C:
		}
	}
	if status.Signaled() {
		return 128 + int(status.Signal()), nil
	}
	return status.ExitStatus(), nil
}
