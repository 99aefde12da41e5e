//go:build linux

package confine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// stopEvery is how often the tree is polled while it is being stopped.
	stopEvery = 20 * time.Millisecond
	// killRounds bounds the SIGKILL rounds, for processes that the kernel
	// cannot kill (stuck in uninterruptible sleep): Run gives up on them
	// after about killRounds*stopEvery.
	killRounds = 250
)

// proc is one process as /proc/<pid>/stat shows it.
type proc struct {
	pid, ppid, pgid, sid int
	state                byte   // R, S, D, Z, T, ...
	start                uint64 // clock ticks after boot; with pid, names the process
}

// dead reports whether the process has exited (a zombie not yet reaped).
func (p proc) dead() bool { return p.state == 'Z' || p.state == 'X' }

// procKey names one process for good: a pid is reused, pid and start are not.
type procKey struct {
	pid   int
	start uint64
}

// tree tracks the processes of one run: the root (the agent) and every
// process descending from it. It is used by one goroutine.
type tree struct {
	self    int          // our pid: the parent of the root and of re-parented orphans
	root    proc         // the agent as it was started
	marker  []byte       // "CAIRN_CONFINE_RUN=<id>\x00", as it appears in /proc/<pid>/environ
	members map[int]proc // pid → the tracked process with that pid, as last seen
	foreign map[procKey]bool
}

// newTree starts tracking the process tree rooted at pid, which must not
// have been reaped yet.
func newTree(pid int, marker string) *tree {
	t := &tree{
		self:    os.Getpid(),
		root:    proc{pid: pid, pgid: pid},
		marker:  []byte(envMarker + "=" + marker + "\x00"),
		members: make(map[int]proc),
		foreign: make(map[procKey]bool),
	}
	if p, err := readProc(pid); err == nil {
		t.root = p
	}
	t.members[pid] = t.root
	return t
}

// scan refreshes the tracked set from /proc, reaps the tracked zombies that
// are our children, and returns how many tracked processes are alive.
func (t *tree) scan() int {
	procs, err := readProcs()
	if err != nil {
		return t.alive()
	}
	byPid := make(map[int]proc, len(procs))
	for _, p := range procs {
		byPid[p.pid] = p
	}
	for pid, m := range t.members {
		if p, ok := byPid[pid]; ok && p.start == m.start {
			t.members[pid] = p
		} else {
			delete(t.members, pid) // gone; the pid may be someone else's now
		}
	}
	// A child can be listed before its parent, so repeat until nothing new.
	for grown := true; grown; {
		grown = false
		for _, p := range procs {
			if _, ok := t.members[p.pid]; !ok && t.belongs(p, byPid) {
				t.members[p.pid] = p
				grown = true
			}
		}
	}
	for k := range t.foreign {
		if p, ok := byPid[k.pid]; !ok || p.start != k.start {
			delete(t.foreign, k)
		}
	}
	t.reap()
	return t.alive()
}

// belongs reports whether p, not tracked yet, is part of the tree: a child
// of a tracked process, a member of the root's process group, or a carrier
// of the run's marker.
func (t *tree) belongs(p proc, byPid map[int]proc) bool {
	if p.start < t.root.start {
		return false // older than the agent
	}
	if parent, ok := t.members[p.ppid]; ok && p.start >= parent.start {
		return true
	}
	if p.pgid == t.root.pgid && p.sid == t.root.sid {
		// The group is the root's unless its id was reused: then a
		// new, different leader holds it.
		leader, ok := byPid[t.root.pgid]
		if !ok || leader.start == t.root.start {
			return true
		}
	}
	key := procKey{p.pid, p.start}
	if t.foreign[key] {
		return false
	}
	has, known := t.hasMarker(p.pid)
	if has {
		return true
	}
	if known {
		t.foreign[key] = true
	}
	return false
}

// hasMarker reports whether the process's environment holds the run's
// marker, and whether the answer is final. Another user's environment
// cannot be read: then it is false for good. An empty one is not final: a
// process in the middle of execve shows none until the new program's stack
// is set up, and neither does a zombie, so it is read again at the next
// scan rather than remembered as foreign.
func (t *tree) hasMarker(pid int) (has, known bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false, !errors.Is(err, os.ErrNotExist)
	}
	if len(env) == 0 {
		return false, false
	}
	return bytes.HasPrefix(env, t.marker) || bytes.Contains(env, append([]byte{0}, t.marker...)), true
}

// alive counts the tracked processes that have not exited.
func (t *tree) alive() int {
	n := 0
	for _, m := range t.members {
		if !m.dead() {
			n++
		}
	}
	return n
}

// reap waits for the tracked zombies whose parent we are: orphans the kernel
// re-parented to us as subreaper. The root is left to exec.Cmd.Wait.
func (t *tree) reap() {
	for pid, m := range t.members {
		if m.dead() && m.ppid == t.self && pid != t.root.pid {
			var ws unix.WaitStatus
			if n, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); n == pid || errors.Is(err, unix.ECHILD) {
				delete(t.members, pid)
			}
		}
	}
}

// reapAll scans once more after everything died: a zombie re-parented to us
// when its parent died during the last scan is reaped now.
func (t *tree) reapAll() { t.scan() }

// stop ends every tracked process: SIGTERM, then SIGKILL to whatever is left
// after grace, including processes started meanwhile.
func (t *tree) stop(grace time.Duration) {
	if t.scan() == 0 {
		return
	}
	t.signal(unix.SIGTERM)
	t.signal(unix.SIGCONT) // a stopped process handles SIGTERM only once continued
	tick := time.NewTicker(stopEvery)
	defer tick.Stop()
	deadline := time.Now().Add(grace)
	for t.scan() > 0 && time.Now().Before(deadline) {
		<-tick.C
	}
	for i := 0; i < killRounds && t.scan() > 0; i++ {
		t.signal(unix.SIGKILL)
		<-tick.C
	}
}

// signal sends sig to every tracked process still alive. A pidfd pins the
// process while its start time is checked, so a reused pid is never hit.
func (t *tree) signal(sig unix.Signal) {
	for pid, m := range t.members {
		if m.dead() {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone
		}
		if p, err := readProc(pid); err == nil && p.start == m.start {
			unix.PidfdSendSignal(fd, sig, nil, 0)
		}
		unix.Close(fd)
	}
}

// readProcs lists every process.
func readProcs() ([]proc, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	procs := make([]proc, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue // not a process
		}
		if p, err := readProc(pid); err == nil {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// readProc reads /proc/<pid>/stat.
func readProc(pid int) (proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, err
	}
	return parseStat(b)
}

// parseStat parses the fields of /proc/<pid>/stat that tracking needs. The
// command name, in parentheses, may itself hold spaces and parentheses.
func parseStat(b []byte) (proc, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return proc{}, errors.New("parse /proc stat: no command name")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return proc{}, fmt.Errorf("parse /proc stat: pid: %w", err)
	}
	// After the name: state(3) ppid(4) pgrp(5) session(6) ... starttime(22).
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return proc{}, errors.New("parse /proc stat: too few fields")
	}
	p := proc{pid: pid, state: f[0][0]}
	ints := []*int{&p.ppid, &p.pgid, &p.sid}
	for i, dst := range ints {
		if *dst, err = strconv.Atoi(string(f[1+i])); err != nil {
			return proc{}, fmt.Errorf("parse /proc stat: field %d: %w", 4+i, err)
		}
	}
	if p.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return proc{}, fmt.Errorf("parse /proc stat: start time: %w", err)
	}
	return p, nil
}
