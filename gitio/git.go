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
	"strings"
	"time"
)

// waitDelay bounds how long Wait waits for a killed git's pipes to close.
const waitDelay = 5 * time.Second

// maxStderr is how much of a git process's standard error an error keeps.
const maxStderr = 4 << 10

// repo runs git commands in one directory.
type repo struct {
	dir string // absolute
	env []string
}

func newRepo(dir string) (*repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return &repo{dir: abs, env: gitEnv(abs)}, nil
}

// gitEnv returns the environment git runs with: the process's own minus
// every GIT_* variable (a GIT_DIR inherited from a hook must not redirect
// us), with the system and global configuration turned off so that the
// machine's settings (autocrlf, templates, default branch) do not change the
// result, and with repository discovery stopped at dir, so that a folder
// that is not a repository is never mistaken for one it sits in.
func gitEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
	)
}

// command returns git with args, run in the repository. Paths in git's
// output are never quoted.
func (r *repo) command(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotepath=false"}, args...)...)
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
