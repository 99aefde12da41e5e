package command

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/google/shlex"

	"cairn"
	"cairn/agent"
	"cairn/internal/confine"
)

// Name is the runtime's name, what agent.runtime says to choose it.
const Name = "command"

func init() {
	agent.Register(agent.Factory{
		Name:     Name,
		Help:     "any agent CLI, confined",
		Validate: validate,
		New:      New,
	})
}

// validate checks what a policy naming the command runtime must hold: a
// command that splits into an argv.
func validate(s agent.Settings) error {
	_, err := Argv(s.Command)
	return err
}

// Argv splits agent.command into the agent's argv, like a shell would
// (quotes group words). The error has code EINVALID and a hint when the
// command does not split (an open quote) or is empty.
func Argv(command string) ([]string, error) {
	argv, err := shlex.Split(command)
	if err != nil {
		return nil, cairn.Errorf(cairn.EINVALID, "agent.command %q: %v", command, err).
			WithHint("Quote words with spaces: cairn settings set agent.command 'my-agent --flag \"two words\"'")
	}
	if len(argv) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "agent.runtime is command but agent.command is empty").
			WithHint("Try: cairn settings set agent.command 'my-agent --flag'")
	}
	return argv, nil
}

// New returns the command runtime for a vault: its agent works in
// workspaces under the vault's .cairn/work, may never read .cairn, and,
// unconfined, must not change it. The error has code EINVALID and a hint
// for a bad agent.command or agent.read (a folder that is missing, holds
// the home folder or overlaps .cairn), and EFORBIDDEN when the kernel
// offers no Landlock and agent.unconfined does not allow that (Check).
func New(env agent.Env) (agent.Runtime, error) {
	argv, err := Argv(env.Settings.Command)
	if err != nil {
		return nil, err
	}
	return NewRuntime(env, argv)
}

// NewRuntime returns the command runtime for a vault with the command
// argv, as New does; the agent CLI runtimes (package agent/cli) build on
// it and set its Adapter.
func NewRuntime(env agent.Env, argv []string) (*Runtime, error) {
	set := env.Settings
	dir := env.Internal
	if err := confine.CheckRead(set.Read, []string{dir}); err != nil {
		return nil, cairn.Errorf(cairn.EINVALID, "agent.read: %w", err).
			WithHint(cmp.Or(cairn.ErrorHint(err), "Name folders that neither hold your home folder nor overlap the vault's .cairn: cairn settings set agent.read /opt/agent"))
	}
	rt := &Runtime{
		Store: env.Store, Argv: argv, Env: env.Environ, Pass: set.Env,
		Read:        set.Read,
		Deny:        []string{dir},
		WorkDir:     filepath.Join(dir, "work"),
		Unconfined:  set.Unconfined,
		OpenNetwork: set.OpenNetwork,
		Allow:       set.Allow,
		Watch:       []string{env.Root},
		WatchSkip:   []string{dir},
		Seal:        []string{dir},
		SealDB:      slices.DeleteFunc([]string{env.Database}, func(p string) bool { return p == "" }),
		Verify:      env.Verify,
		Timeout:     set.Timeout,
		Inactivity:  set.Inactivity,
		Exclusive:   env.Folder,
		Crash:       env.Crash,
		Logger:      env.Logger,
		Tools:       env.Tools,
		Background:  env.Background,
		Program:     env.Program,
		ToolsName:   set.ToolsName,
	}
	if rt.Program == "" {
		rt.Program = self()
	}
	if err := rt.Check(); err != nil {
		return nil, err
	}
	return rt, nil
}

// self returns the path this program was started as, absolute: the name
// it has, not the file a link names, since a program may act on its name
// (a test binary standing in for cairn does). "" when it cannot be found.
func self() string {
	p := os.Args[0]
	if !filepath.IsAbs(p) {
		if lp, err := exec.LookPath(p); err == nil {
			p = lp
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return ""
		}
		p = abs
	}
	if _, err := os.Stat(p); err != nil {
		if exe, err := os.Executable(); err == nil {
			return exe
		}
		return ""
	}
	return p
}

// programRead returns what an agent must be able to read to start
// program: the file, and the file a link names.
func programRead(program string) []string {
	if program == "" {
		return nil
	}
	out := []string{program}
	if real, err := filepath.EvalSymlinks(program); err == nil && real != program {
		out = append(out, real)
	}
	return out
}
