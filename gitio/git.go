package gitio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"cairn"
)

// waitDelay bounds how long Wait waits for a killed git's pipes to close.
const waitDelay = 5 * time.Second

// maxStderr is how much of a git process's standard error an error keeps.
const maxStderr = 4 << 10

// safeConfig returns the settings every git command runs with, given on
// its command line: that scope beats the repository's own configuration
// and whatever it includes, and git hands it on to any git it starts. Each
// setting that can name a program is turned off or emptied where git reads
// it in the commands gitio runs; the rest cannot run in them (see
// docs/git.md for the whole list and why).
func safeConfig() []string {
	return []string{
		"core.quotepath=false",          // paths in output as they are
		"core.fsmonitor=false",          // a command that reads the index would run it
		"core.hooksPath=" + os.DevNull,  // no hook is ever found
		"core.pager=cat",                // no pager (--no-pager is given too)
		"core.editor=:",                 // ":" is git's "no editor"
		"sequence.editor=:",             // likewise
		"core.askPass=",                 // an empty value asks nobody
		"core.sshCommand=" + os.DevNull, // never run: no transport is allowed (GIT_ALLOW_PROTOCOL)
		"credential.helper=",            // an empty value clears the list of helpers
		"protocol.allow=never",          // no transport; GIT_ALLOW_PROTOCOL overrides protocol.<name>.allow too
		"log.showSignature=false",       // gpg.program and its kin never run
		"gc.auto=0",                     // no automatic gc, and so no pre-auto-gc hook
		"maintenance.auto=false",        // no automatic maintenance
		"fastimport.unpackLimit=0",      // fast-import keeps its pack: no git unpack-objects child
	}
}

// sandbox is what the git of one import or export runs in: a private
// temporary folder that is git's HOME (empty), its exec path and PATH
// (empty, so that git can start no git of its own and nothing runs by a bare
// name), and, for an import, the repository it reads objects through. Close
// removes it.
type sandbox struct {
	bin  string // the git binary, an absolute path
	root string
	env  []string // the environment of every command
}

// newSandbox finds git on PATH and makes the sandbox.
func newSandbox() (*sandbox, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, cairn.Errorf(cairn.EUNAVAILABLE, "git is not installed (not found on PATH)").
			WithHint("Install git, or put it on PATH.")
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "cairn-git-")
	if err != nil {
		return nil, fmt.Errorf("make git's temporary folder: %w", err)
	}
	home, empty := filepath.Join(root, "home"), filepath.Join(root, "empty")
	for _, d := range []string{home, empty} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("make git's temporary folder: %w", err)
		}
	}
	return &sandbox{bin: bin, root: root, env: sandboxEnv(root, home, empty)}, nil
}

// sandboxEnv is the whole environment git runs with: nothing is inherited
// (no GIT_DIR from a hook, no GIT_SSH_COMMAND, GIT_CONFIG_* or PAGER of the
// user), the system and global configuration are turned off, HOME and
// XDG_CONFIG_HOME lead to nothing, no transport is allowed (so a partial
// clone's promisor remote is never fetched from), no prompt is shown, and
// replace refs are ignored, so that the history read is the objects' own.
func sandboxEnv(root, home, empty string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + empty,
		"TMPDIR=" + root,
		"LC_ALL=C",
		"GIT_EXEC_PATH=" + empty,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_SYSTEM=" + os.DevNull,
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_ALLOW_PROTOCOL=none",
		"GIT_PROTOCOL_FROM_USER=0",
		"GIT_NO_LAZY_FETCH=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"GIT_PAGER=cat",
		"GIT_EDITOR=:",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_OPTIONAL_LOCKS=0",
	}
}

// Close removes the sandbox's folder.
func (sb *sandbox) Close() error { return os.RemoveAll(sb.root) }

// repo runs git commands in one directory.
type repo struct {
	sb  *sandbox
	dir string // absolute
	env []string
}

// repo returns the commands run in dir, which git finds its repository
// from (repository discovery stops at dir, so that a folder that is not a
// repository is never mistaken for one it sits in), with env added to the
// sandbox's environment.
func (sb *sandbox) repo(dir string, env ...string) (*repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &repo{sb: sb, dir: abs, env: append(slices.Clone(sb.env), append(env,
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(abs))...)}, nil
}

// command returns git with args, run in the repository with safeConfig.
// It is the one way gitio starts git.
func (r *repo) command(ctx context.Context, args ...string) *exec.Cmd {
	config := safeConfig()
	argv := make([]string, 0, 1+2*len(config)+len(args))
	argv = append(argv, "--no-pager")
	for _, kv := range config {
		argv = append(argv, "-c", kv)
	}
	c := exec.CommandContext(ctx, r.sb.bin, append(argv, args...)...)
	c.Dir = r.dir
	c.Env = r.env
	c.WaitDelay = waitDelay
	return c
}

// run runs git to completion and returns its standard output.
func (r *repo) run(ctx context.Context, args ...string) ([]byte, error) {
	c := r.command(ctx, args...)
	var stdout bytes.Buffer
	var stderr limitedBuffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return stdout.Bytes(), newGitError(ctx, args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// gitError is a git command that failed, with what it said on stderr.
type gitError struct {
	cmd    string // "git rev-list"
	stderr string
	err    error
}

func newGitError(ctx context.Context, args []string, err error, stderr string) *gitError {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	name := "git"
	if len(args) > 0 {
		name += " " + args[0]
	}
	return &gitError{cmd: name, stderr: strings.TrimSpace(stderr), err: err}
}

func (e *gitError) Error() string {
	if e.stderr == "" {
		return fmt.Sprintf("%s: %v", e.cmd, e.err)
	}
	return fmt.Sprintf("%s: %v: %s", e.cmd, e.err, e.stderr)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode returns the exit status of the failed git, or -1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// limitedBuffer keeps the first maxStderr bytes written to it.
type limitedBuffer struct{ buf bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxStderr - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string { return b.buf.String() }

// proc is a long-lived git process that the caller talks to through pipes.
type proc struct {
	args   []string
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
	cmd    *exec.Cmd
	stdin  io.WriteCloser // nil unless asked for
	stdout *bufio.Reader
	stderr limitedBuffer
	done   bool
}

// start starts a git process; with stdin, the caller writes its input.
// The caller must end it with wait or kill.
func (r *repo) start(ctx context.Context, stdin bool, args ...string) (*proc, error) {
	pctx, cancel := context.WithCancel(ctx)
	p := &proc{args: args, parent: ctx, ctx: pctx, cancel: cancel, cmd: r.command(pctx, args...)}
	p.cmd.Stderr = &p.stderr
	var err error
	if stdin {
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			cancel()
			return nil, err
		}
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	p.stdout = bufio.NewReaderSize(out, 1<<16)
	if err := p.cmd.Start(); err != nil {
		cancel()
		return nil, newGitError(ctx, args, err, "")
	}
	return p, nil
}

// wait closes the process's input and waits for it to exit.
func (p *proc) wait() error {
	if p.done {
		return nil
	}
	p.done = true
	defer p.cancel()
	if p.stdin != nil {
		p.stdin.Close()
	}
	if err := p.cmd.Wait(); err != nil {
		return newGitError(p.ctx, p.args, err, p.stderr.String())
	}
	return nil
}

// kill stops the process if it is still running and reaps it.
func (p *proc) kill() {
	if p.done {
		return
	}
	p.done = true
	p.cancel()
	p.cmd.Wait()
}

// fail ends the process after a broken conversation with it and returns
// the error that explains it best: the caller's cancellation, git's own
// exit status and stderr when it gave up first, else err.
func (p *proc) fail(err error) error {
	if p.done {
		return err
	}
	p.done = true
	p.cancel()
	p.cmd.Wait()
	if cerr := context.Cause(p.parent); cerr != nil {
		return fmt.Errorf("git %s: %w", p.args[0], cerr)
	}
	if st := p.cmd.ProcessState; st != nil && st.Exited() && st.ExitCode() != 0 {
		return &gitError{cmd: "git " + p.args[0], stderr: strings.TrimSpace(p.stderr.String()),
			err: fmt.Errorf("exit status %d", st.ExitCode())}
	}
	return fmt.Errorf("git %s: %w", p.args[0], err)
}
