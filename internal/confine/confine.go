package confine

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"cairn"
)

// Mode says how a run was confined.
type Mode string

const (
	ModeLandlock Mode = "landlock" // the kernel refused writes outside the writable folders
	ModeSnapshot Mode = "snapshot" // no Landlock: writes outside were detected afterwards by comparing snapshots
)

// Containment says how a run's process tree was contained.
type Containment string

const (
	ContainNamespace Containment = "pid-namespace" // the agent ran in a PID namespace of its own, which dies with the run
	ContainTracking  Containment = "tracking"      // no namespaces: the agent's descendants were found by polling /proc
)

// containment is one way to start an agent's process tree.
type containment struct {
	contain Containment
	attr    *syscall.SysProcAttr
}

// container stops a run's process tree.
type container interface {
	scan() int                // refreshes what it knows; returns how many processes live (0: none)
	stop(grace time.Duration) // SIGTERM to every process, SIGKILL after grace
	reapAll()                 // reaps the zombies it was left
}

// Reasons a run was stopped, as Result.Reason reports them.
const (
	ReasonTimeout   = "timeout"   // Spec.Timeout elapsed
	ReasonInactive  = "inactive"  // no output for Spec.Inactivity
	ReasonCancelled = "cancelled" // the context was cancelled
)

// Defaults for the Spec fields whose zero value means "default".
const (
	DefaultGrace = 3 * time.Second
)

const (
	// scanEvery is how often the process tree is polled while the agent
	// runs. Descendants that outlive their parent are found afterwards by
	// their process group or marker variable, so polling can be lazy.
	scanEvery = 100 * time.Millisecond
	// drainWait bounds how long Run waits, once the tree is stopped, for
	// the output pipes to reach end of file. They can stay open only when a
	// process outside the tree holds them.
	drainWait = time.Second
)

// Spec describes one run of an agent.
type Spec struct {
	Argv       []string                  // the command (required); Argv[0] is looked up in PATH, or relative to Dir when it holds a slash
	Dir        string                    // the workspace: working directory, writable (required, absolute, must exist)
	Temp       string                    // a private temp folder, writable; TMPDIR/TMP/TEMP point at it (required, absolute, must exist)
	Home       string                    // a private home folder, writable; HOME points at it (absolute, must exist); default Temp
	Read       []string                  // further files and folders the agent may read and execute (clean, absolute, must exist; see CheckReadPaths): the runtime's install folder, folders the settings name
	Write      []string                  // further folders the agent may read and write (absolute, must exist, none in a Deny folder): what a CLI insists on, like Codex's /tmp/codex-daemon-UID; left out of snapshots
	Deny       []string                  // folders the agent must never read (absolute): Run refuses a Read entry that is one, lies in one or holds one
	Stdin      []byte                    // given on standard input, then closed (the prompt); nil: standard input is empty
	Env        []string                  // extra environment (KEY=VALUE), on top of what is passed through
	Pass       []string                  // names of the parent's variables passed through, beside PATH, LANG, LANGUAGE, LC_* and TZ (the runtime's settings); unset ones are left out
	Timeout    time.Duration             // the whole run; 0 = none
	Inactivity time.Duration             // no output for this long ends the run; 0 = none
	Output     func(stream, line string) // called for each line of "stdout" and "stderr", in order per stream, never concurrently; may be nil
	MaxLine    int                       // the longest line Output gets whole; longer ones come in pieces of this size; default DefaultMaxLine (64 KiB)
	Watch      []string                  // folders to snapshot in snapshot mode (absolute); writes there are reported
	WatchSkip  []string                  // absolute paths under Watch to leave out of snapshots; Dir, Temp and Home are always left out
	Seal       []string                  // snapshot mode: folders the agent must not change at all (absolute; Dir, Temp and Home are left out); Result.Sealed lists what changed
	SealDB     []string                  // snapshot mode: SQLite databases in WAL mode under Seal that others write meanwhile (absolute); see seal.go for what is checked
	Self       string                    // the wrapper every agent starts through on Linux: the executable that calls MaybeExec, drops privileges, applies Landlock and execs Argv, or runs it as the PID namespace's init; default os.Executable()
	Grace      time.Duration             // between SIGTERM and SIGKILL when stopping; default DefaultGrace (3s)
	Network    *Network                  // when set, the agent reaches only Network.Allow (see Network); nil: the machine's network
}

// Result is how a run ended.
type Result struct {
	ExitCode int           // the agent's exit code, 128+n when signal n ended it; -1 when the run was stopped (Reason is not "")
	Mode     Mode          // how the run was confined
	Contain  Containment   // how its process tree was contained
	Net      NetMode       // what network the agent had
	Reason   string        // "" (exited by itself), ReasonTimeout, ReasonInactive or ReasonCancelled
	Outside  []string      // snapshot mode: absolute paths created, changed or deleted under Watch during the run, sorted; nil in landlock mode
	Sealed   []string      // snapshot mode: absolute paths under Seal that changed, sorted; nil when none did, and in landlock mode
	Duration time.Duration // from start until the whole tree was stopped
}

// Validate reports the first problem with the spec's shape, as a cairn error
// with code EINVALID. It does not look at the file system.
func (s Spec) Validate() error {
	switch {
	case len(s.Argv) == 0 || s.Argv[0] == "":
		return cairn.Errorf(cairn.EINVALID, "agent command is empty")
	case !filepath.IsAbs(s.Dir):
		return cairn.Errorf(cairn.EINVALID, "agent workspace %q is not an absolute path", s.Dir)
	case !filepath.IsAbs(s.Temp):
		return cairn.Errorf(cairn.EINVALID, "agent temp folder %q is not an absolute path", s.Temp)
	case s.Home != "" && !filepath.IsAbs(s.Home):
		return cairn.Errorf(cairn.EINVALID, "agent home folder %q is not an absolute path", s.Home)
	case s.Self != "" && !filepath.IsAbs(s.Self):
		return cairn.Errorf(cairn.EINVALID, "confinement wrapper %q is not an absolute path", s.Self)
	case s.Timeout < 0 || s.Inactivity < 0 || s.Grace < 0 || s.MaxLine < 0:
		return cairn.Errorf(cairn.EINVALID, "agent timeouts must not be negative")
	}
	for _, p := range slices.Concat(s.Watch, s.WatchSkip, s.Seal, s.SealDB, s.Write) {
		if !filepath.IsAbs(p) {
			return cairn.Errorf(cairn.EINVALID, "watched path %q is not an absolute path", p)
		}
	}
	if err := CheckReadPaths(s.Read); err != nil {
		return err
	}
	if s.Network != nil {
		if err := CheckAllow(s.Network.Allow); err != nil {
			return err
		}
	}
	for _, p := range s.Deny {
		if !filepath.IsAbs(p) {
			return cairn.Errorf(cairn.EINVALID, "agent deny folder %q is not an absolute path", p)
		}
	}
	for _, name := range s.Pass {
		if err := CheckVar(name); err != nil {
			return err
		}
	}
	return nil
}

// CheckVar reports, as an error with code EINVALID and a hint, whether
// name cannot be passed through to an agent: it is not a variable name
// (letters, digits and _, not starting with a digit), or Run sets it
// (HOME, TMPDIR, TMP, TEMP, PWD, CAIRN_CONFINE and CAIRN_CONFINE_RUN).
// Every other name may be passed, cairn's own ones (CAIRN_USER) too.
func CheckVar(name string) error {
	valid := name != "" && !(name[0] >= '0' && name[0] <= '9')
	for _, c := range name {
		valid = valid && (c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}
	switch {
	case !valid:
		return cairn.Errorf(cairn.EINVALID, "%q is not an environment variable name", name).
			WithHint("Name a variable of letters, digits and _, like ANTHROPIC_API_KEY.")
	case slices.Contains(setVars(), name):
		return cairn.Errorf(cairn.EINVALID, "%s is set for the agent and cannot be passed through", name).
			WithHint("Leave out " + strings.Join(setVars(), ", ") + ": cairn sets them for the agent itself.")
	}
	return nil
}

// setVars are the variables Run sets for the agent.
func setVars() []string {
	return []string{"HOME", "TMPDIR", "TMP", "TEMP", "PWD", envWrapper, envMarker}
}

// passed reports whether the parent's variable name reaches the agent
// without being named: the command search path, the locale and the time
// zone.
func passed(name string) bool {
	switch name {
	case "PATH", "LANG", "LANGUAGE", "TZ":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// Run starts the command and waits for it, then stops whatever the command
// left running. Cancelling ctx stops it (Reason "cancelled").
//
// It returns an error only when the command could not be started or watched:
// an invalid spec (code EINVALID), a command not found (wrapping
// exec.ErrNotFound or fs.ErrNotExist), a missing folder, a context already
// done, or a failure to start the process. A non-zero exit is a Result.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	return run(ctx, spec, containments())
}

// run is Run, trying the ways to contain the tree in turn.
func run(ctx context.Context, spec Spec, ways []containment) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	spec.Home = cmp.Or(spec.Home, spec.Temp)
	for _, dir := range slices.Concat([]string{spec.Dir, spec.Temp, spec.Home}, spec.Write) {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, cairn.Errorf(cairn.EINVALID, "check agent folder: %w", err)
		}
		if !fi.IsDir() {
			return nil, cairn.Errorf(cairn.EINVALID, "check agent folder: %s is not a folder", dir)
		}
	}
	path, err := lookPath(spec.Argv[0], spec.Dir)
	if err != nil {
		return nil, cairn.Errorf(cairn.EINVALID, "find agent command %q: %w", spec.Argv[0], err)
	}
	if err := CheckRead(spec.Read, spec.Deny); err != nil {
		return nil, err
	}
	for _, w := range spec.Write {
		for _, d := range spec.Deny {
			if within(w, d) || within(d, w) {
				return nil, cairn.Errorf(cairn.EINVALID, "agent write folder %s overlaps %s, which the agent must never read", w, d)
			}
		}
	}
	if err := prepareParent(); err != nil {
		return nil, err
	}
	marker, err := newMarker()
	if err != nil {
		return nil, err
	}

	mode := ModeSnapshot
	if Available() > 0 {
		mode = ModeLandlock
	}
	private := slices.Concat([]string{spec.Dir, spec.Temp, spec.Home}, spec.Write)
	var skip map[string]bool
	var before map[string]fileState
	var sealed sealState
	if mode == ModeSnapshot {
		skip = skipSet(append(append([]string(nil), private...), spec.WatchSkip...))
		before = snapshot(spec.Watch, skip)
		sealed = sealBefore(spec, private)
	}

	var plan *netPlan
	if spec.Network != nil {
		if plan, err = planNetwork(spec.Network); err != nil {
			return nil, err
		}
	}

	var res *Result
	for _, c := range ways {
		cmd := &exec.Cmd{
			Path:        path,
			Args:        spec.Argv,
			Dir:         spec.Dir,
			Env:         childEnv(spec, marker),
			SysProcAttr: c.attr,
		}
		init := hasWrapper && c.contain == ContainNamespace
		var ctl *os.File
		if hasWrapper {
			var net *netPlan
			if init {
				net = plan
			}
			if ctl, err = wrap(cmd, spec, path, mode == ModeLandlock, init, net); err != nil {
				return nil, err
			}
		}
		res, err = supervise(ctx, cmd, spec, marker, c.contain, ctl, plan)
		if err != nil && c.contain == ContainNamespace && refused(err) {
			continue // not allowed here: the next way
		}
		if err != nil {
			return nil, err
		}
		res.Contain = c.contain
		res.Net = NetHost
		if ctl != nil {
			res.Net = NetIsolated
		}
		break
	}
	res.Mode = mode
	if mode == ModeSnapshot {
		res.Outside = changed(before, snapshot(spec.Watch, skip))
		res.Sealed = sealAfter(spec, private, sealed)
	}
	return res, nil
}

// supervise starts cmd, feeds its input, streams its output, waits for it to
// exit or for a reason to stop it, and then stops its whole tree.
// ctl, when not nil, is Run's end of the control socket of the agent's
// network (see Network), over which the wrapper hands over connections to
// plan's endpoints; supervise takes it.
func supervise(ctx context.Context, cmd *exec.Cmd, spec Spec, marker string, contain Containment, ctl *os.File, plan *netPlan) (*Result, error) {
	if ctl != nil {
		defer closeAll(cmd.ExtraFiles...)
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		closeAll(ctl)
		return nil, fmt.Errorf("make agent stdin: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("make agent stdout: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, outR, outW)
		return nil, fmt.Errorf("make agent stderr: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, outW, errW

	began := time.Now()
	err = cmd.Start()
	closeAll(stdinR, outW, errW) // the child holds its own copies
	closeAll(cmd.ExtraFiles...)
	if err != nil {
		closeAll(stdinW, outR, errR, ctl)
		return nil, fmt.Errorf("start agent %s: %w", cmd.Path, err)
	}
	if ctl != nil {
		fw, err := forward(ctl, plan.Dial)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			closeAll(stdinW, outR, errR)
			return nil, err
		}
		// After the tree is stopped and its output drained: deferred
		// calls run last in, first out.
		defer fw.close()
	}
	// The root cannot be reaped before Wait is called, so its /proc entry
	// is there to read.
	done := make(chan struct{})
	tree := newContainer(contain, cmd.Process, marker, done)
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()

	active := make(chan struct{}, 1)
	notify := func() {
		select {
		case active <- struct{}{}:
		default:
		}
	}
	var mu sync.Mutex
	emit := func(stream, line string) {
		if spec.Output != nil {
			mu.Lock()
			defer mu.Unlock()
			spec.Output(stream, line)
		}
	}
	var readers, writer sync.WaitGroup
	maxLine := cmp.Or(spec.MaxLine, DefaultMaxLine)
	readers.Go(func() { readLines(outR, "stdout", maxLine, emit, notify) })
	readers.Go(func() { readLines(errR, "stderr", maxLine, emit, notify) })
	writer.Go(func() {
		// A write error means the agent closed its standard input: fine.
		stdinW.Write(spec.Stdin)
		stdinW.Close()
	})

	var deadline, idle <-chan time.Time
	if spec.Timeout > 0 {
		t := time.NewTimer(spec.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	var idleTimer *time.Timer
	if spec.Inactivity > 0 {
		idleTimer = time.NewTimer(spec.Inactivity)
		defer idleTimer.Stop()
		idle = idleTimer.C
	}
	tick := time.NewTicker(scanEvery)
	defer tick.Stop()

	var reason string
	exited := false
loop:
	for {
		select {
		case <-done:
			exited = true
			break loop
		case <-ctx.Done():
			reason = ReasonCancelled
			break loop
		case <-deadline:
			reason = ReasonTimeout
			break loop
		case <-idle:
			reason = ReasonInactive
			break loop
		case <-active:
			if idleTimer != nil {
				idleTimer.Reset(spec.Inactivity)
			}
		case <-tick.C:
			tree.scan()
		}
	}

	tree.stop(cmp.Or(spec.Grace, DefaultGrace))
	if !exited {
		<-done
	}
	// Every writer of the pipes is gone now, unless a process outside the
	// tree holds them: then closing our ends ends the readers.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainWait):
	}
	closeAll(outR, errR, stdinW)
	<-drained
	writer.Wait()
	tree.reapAll()

	res := &Result{ExitCode: -1, Reason: reason, Duration: time.Since(began)}
	if reason == "" {
		if cmd.ProcessState == nil {
			return nil, fmt.Errorf("wait for agent: %w", waitErr)
		}
		res.ExitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal()) // as the namespace's init reports it
		}
	}
	return res, nil
}

// wrap turns cmd into the confinement wrapper: Self, told by the
// environment to drop its privileges, to restrict itself with Landlock
// (landlock), and to exec path, or to be the init of the namespace cmd
// starts (init) and run path. With net, the namespace gets a network of
// its own as net plans it, and wrap returns Run's end of its control
// socket; the wrapper's end is cmd's first extra file.
func wrap(cmd *exec.Cmd, spec Spec, path string, landlock, init bool, net *netPlan) (*os.File, error) {
	self := spec.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find confinement wrapper: %w", err)
		}
	}
	// The command itself is readable wherever it lies: a script needs
	// reading, a program executing.
	exe, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("find agent command %s: %w", path, err)
	}
	payload, err := json.Marshal(wrapperSpec{
		Landlock: landlock,
		Read:     append(append([]string(nil), spec.Read...), exe),
		Write:    slices.Concat([]string{spec.Dir, spec.Temp, spec.Home}, spec.Write),
		Dir:      spec.Dir,
		Path:     path,
		Argv:     spec.Argv,
		Init:     init,
		GraceMS:  cmp.Or(spec.Grace, DefaultGrace).Milliseconds(),
		Net:      net,
	})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", envWrapper, err)
	}
	var ctl *os.File
	if net != nil {
		var child *os.File
		if ctl, child, err = controlPair(); err != nil {
			return nil, err
		}
		cmd.ExtraFiles = []*os.File{child}
		cmd.SysProcAttr = isolateNetwork(cmd.SysProcAttr)
	}
	cmd.Path = self
	// The flag makes a Self that forgot to call MaybeExec fail rather than
	// run as itself.
	cmd.Args = []string{self, wrapperFlag}
	cmd.Env = append(cmd.Env, envWrapper+"="+string(payload))
	return ctl, nil
}

// lookPath resolves the command name as the agent's execve will see it: in
// PATH when it has no slash, relative to dir when it is relative.
func lookPath(name, dir string) (string, error) {
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		// PATH holds a relative entry; resolve it as the shell would.
		path, err = filepath.Abs(path)
	}
	return path, err
}

// childEnv returns the agent's environment: of the parent's, only the
// variables passed without naming and those spec.Pass names; then
// spec.Env; then the temp and home folders, the working directory and the
// run's marker.
func childEnv(spec Spec, marker string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if passed(name) || slices.Contains(spec.Pass, name) {
			env = append(env, kv)
		}
	}
	for _, kv := range spec.Env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(setVars(), name) {
			env = append(env, kv)
		}
	}
	return append(env,
		"TMPDIR="+spec.Temp,
		"TMP="+spec.Temp,
		"TEMP="+spec.Temp,
		"HOME="+spec.Home,
		"PWD="+spec.Dir,
		envMarker+"="+marker,
	)
}

// newMarker returns a value for CAIRN_CONFINE_RUN unique to one run.
func newMarker() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make run marker: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}
