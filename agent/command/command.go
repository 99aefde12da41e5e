package command

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"cairn"
	"cairn/agent"
	"cairn/internal/confine"
	"cairn/store"
	"cairn/worktree"
)

// Runtime runs any agent CLI: a configured argv, the prompt on stdin, a
// workspace folder holding the base commit's files as its working
// directory, its output streamed as activity. Confined by Landlock, the
// process may write only inside its workspace and a private temp and home
// folder, and read only those, the system's read-only folders, its own
// command file and the Read folders (package confine). Where the kernel
// lacks Landlock it runs only if Unconfined allows it; then snapshots of
// the watched folders taken before and after detect writes outside, and a
// change to the sealed folders fails the job. After it exits, the
// workspace is the proposal.
type Runtime struct {
	Store *store.Store
	// Argv is the command (required).
	Argv []string
	// WorkDir is where workspaces are made (the vault's .cairn/work).
	WorkDir string
	// Read are further folders the agent may read and execute beside the
	// system's (agent.read); Deny are folders it must never read, which no
	// Read entry may overlap (the vault's .cairn).
	Read, Deny []string
	// Unconfined allows the agent to run where the kernel offers no
	// Landlock (agent.unconfined: allow); otherwise it is refused there.
	Unconfined bool
	// OpenNetwork gives the agent the machine's network (agent.network:
	// open). Otherwise it runs in a network of its own that reaches only
	// Allow (agent.allow), the endpoints its Adapter names (its model
	// provider) and cairn's tools (see confine.Network); where namespaces
	// are refused it has the machine's, and the result says so.
	OpenNetwork bool
	Allow       []string
	// Watch are the folders snapshot mode watches for outside writes (the
	// vault's folder); WatchSkip are paths under them to leave out (the
	// vault's .cairn).
	Watch, WatchSkip []string
	// Seal are the folders an unconfined agent must not change at all (the
	// vault's .cairn, but for the agent's own workspace), SealDB the SQLite
	// databases among them that others write meanwhile (see package
	// confine); Verify, when set, checks what else it can after such a run
	// (the database's integrity). Any change found fails the job.
	Seal, SealDB []string
	Verify       func(context.Context) error
	// Timeout bounds a run; Inactivity stops a run that printed nothing
	// for that long. Zero means none.
	Timeout, Inactivity time.Duration
	// Env is added to the agent's environment; Pass names the variables of
	// this process's environment that reach the agent (agent.env), beside
	// PATH and the locale. Nothing else of it does.
	Env, Pass []string
	// Exclusive, when set, is held in snapshot mode from before the
	// workspace is made until it is removed, so that nothing else this
	// process does (another agent and its workspace, a folder sync)
	// passes for the agent's write.
	Exclusive *sync.Mutex
	// Crash, when set, is called at named points (crash tests).
	Crash func(string)
	// Logger receives what goes wrong beside the run: a workspace that
	// cannot be removed. Default: discard.
	Logger *slog.Logger
	// Adapter, when set, specialises the runtime for one agent CLI: its
	// argv, config and output (package agent/cli). Nil: Argv is run with
	// the prompt on stdin, and its output is read as plain text.
	Adapter Adapter
	// Tools, when set, serves cairn's MCP tools on a view of the
	// workspace; an Adapter offers them to its CLI through Program.
	Tools agent.ServeTools
	// Background, when set, runs the removal of a run's workspace beside
	// what follows, the process waiting for it before it exits (see
	// agent.Env.Background); unset, the removal is waited for.
	Background func(work func())
	// Program is cairn's own executable, started by the agent's MCP client
	// as "cairn mcp --relay ADDR" to reach Tools; ToolsName is the name
	// the agent knows the tools by (default "cairn").
	Program, ToolsName string
}

// Adapter specialises the command runtime for one agent CLI.
type Adapter interface {
	// Start says how to start the CLI for a run in w: its argv, input,
	// environment and output parser. It may write the CLI's config into
	// w.Home or w.Temp. An error that is an *agent.Failure fails the job
	// (a missing CLI, say); any other is the infrastructure's.
	Start(ctx context.Context, w *Workspace, t *agent.Task) (*Start, error)
}

// Preflight is an Adapter that checks, before the workspace is made, that
// its CLI can run: it is installed, recent enough, and has credentials.
// An error that is an *agent.Failure fails the job; any other is the
// infrastructure's.
type Preflight interface {
	Preflight(ctx context.Context) error
}

// Workspace is where one run works: Dir holds the vault's files (the
// working directory), Temp and Home are the run's private temp and home
// folders, all writable by the agent.
type Workspace struct {
	Dir, Temp, Home string
	// Tools is how the agent reaches cairn's MCP tools, on a view of Dir:
	// an MCP server over stdio for its CLI's config. Nil when cairn serves
	// none.
	Tools *StdioServer
	// Stop stops the run at once: a Parser calls it when its CLI reported
	// a failure it would only retry (a key the provider refuses), and End
	// then returns that failure.
	Stop func()
	// snap is what was written in Dir, for the tools' view of it.
	snap *worktree.Snapshot
	// tools is the address of the run's tool server, which an isolated
	// agent may reach; "" when cairn serves none.
	tools string
}

// StdioServer is an MCP server an agent's CLI starts over stdio.
type StdioServer struct {
	Name    string            // the server's name for the agent: "cairn", or "eva"
	Command string            // the program, absolute
	Args    []string          // its arguments
	Env     map[string]string // its environment, beside what the CLI passes on
}

// Start is how one run of an agent CLI starts.
type Start struct {
	// Argv is the command; Argv[0] is absolute.
	Argv []string
	// Stdin is given on standard input, then closed.
	Stdin []byte
	// Env is added to the CLI's environment ("KEY=value").
	Env []string
	// Pass names further variables of cairn's environment the CLI gets
	// (its API key), beside agent.env.
	Pass []string
	// Read are further files and folders the CLI may read and execute:
	// its install folder. Write are further folders it may write, which
	// must exist: what a CLI insists on (see confine.Spec.Write).
	Read, Write []string
	// Allow are the endpoints ("host:port") the CLI must reach in an
	// isolated network: its model provider's API.
	Allow []string
	// Parser reads its output; MaxLine is the longest line it gets whole
	// (default 64 KiB: see confine.Spec).
	Parser  Parser
	MaxLine int
	// Version is the CLI's version, for the record.
	Version string
}

// Parser reads an agent CLI's output as it comes, and says at the end
// what the run gave.
type Parser interface {
	// Line takes one line of "stdout" or "stderr"; never called
	// concurrently.
	Line(stream, line string)
	// End returns the agent's summary, its usage when its CLI reported
	// one, and the failure its CLI reported (max turns, budget, an error),
	// or nil. exitCode is the CLI's exit code.
	End(exitCode int) (summary string, usage *agent.Usage, fail *agent.Failure)
	// Tail is the end of its output, for failure messages.
	Tail() string
}

// Finaler is a Parser that keeps the agent's final message as it gave it
// (a read-only task's answer).
type Finaler interface {
	Final() string
}

// textParser reads a generic command's output: every line is activity,
// and the summary is the Transcript's.
type textParser struct {
	tr       agent.Transcript
	activity func(kind, text string)
}

func (p *textParser) Line(stream, line string) {
	p.tr.Line(stream, line)
	if p.activity != nil {
		p.activity("text", line)
	}
}

func (p *textParser) End(int) (string, *agent.Usage, *agent.Failure) {
	return p.tr.Summary(), nil, nil
}

func (p *textParser) Tail() string { return p.tr.Tail() }

var _ agent.Confined = (*Runtime)(nil)

// Name returns "command".
func (c *Runtime) Name() string { return Name }

// Confinement says how the agent is confined here: by Landlock, or, where
// the kernel offers none, by snapshots that catch writes outside.
func (c *Runtime) Confinement() string {
	if confine.Available() > 0 {
		return "confined by Landlock"
	}
	return "no Landlock: writes outside are caught by snapshots"
}

// Check reports whether the agent may run here: where the kernel offers no
// Landlock (or CAIRN_LANDLOCK=off), only when Unconfined allows it. The
// error has code EFORBIDDEN and a hint naming the setting.
func (c *Runtime) Check() error {
	if confine.Available() > 0 || c.Unconfined {
		return nil
	}
	return cairn.Errorf(cairn.EFORBIDDEN, "the kernel offers no Landlock (or CAIRN_LANDLOCK=off), and agent.unconfined does not allow a command agent to run unconfined: it could read and write anything this user can").
		WithHint("Run it on Linux 5.13 or later with Landlock, or allow it anyway (changes under .cairn/ still fail the job): cairn settings set agent.unconfined allow")
}

// Run materializes the base commit in a workspace, runs the agent there
// and reads the workspace back as the proposed tree.
func (c *Runtime) Run(ctx context.Context, t *agent.Task) (*agent.Result, error) {
	if err := c.Check(); err != nil {
		return nil, &agent.Failure{Reason: "unconfined", Message: err.Error() + ". " + cairn.ErrorHint(err)}
	}
	if p, ok := c.Adapter.(Preflight); ok {
		if err := p.Preflight(ctx); err != nil {
			if _, ok := agent.IsFailure(err); ok {
				return nil, err
			}
			return nil, fmt.Errorf("command agent: %w", err)
		}
	}
	cm, err := c.Store.ReadCommit(ctx, t.Base)
	if err != nil {
		return nil, fmt.Errorf("command agent: %w", err)
	}
	if confine.Available() == 0 && c.Exclusive != nil {
		c.Exclusive.Lock()
		defer c.Exclusive.Unlock() // after the workspace is removed
	}
	name := fmt.Sprintf("job-%d-%d", t.Job, t.Attempt)
	if t.ReadOnly {
		key := make([]byte, 6)
		rand.Read(key)
		name = "ask-" + hex.EncodeToString(key)
	}
	ws := filepath.Join(c.WorkDir, name)
	if err := removeTree(ws); err != nil {
		return nil, fmt.Errorf("command agent: clear workspace: %w", err)
	}
	c.sweep()
	defer c.discard(ws, t)
	dir, tmp, home := filepath.Join(ws, "vault"), filepath.Join(ws, "tmp"), filepath.Join(ws, "home")
	// The snapshot of what was written lets reading the workspace back
	// after the run read only the files the agent changed.
	began := time.Now()
	tree := cm.Tree
	if t.Scope != nil {
		if tree, err = c.scopedTree(ctx, tree, t.Scope); err != nil {
			return nil, fmt.Errorf("command agent: %w", err)
		}
	}
	snap, err := worktree.MaterializeSnapshot(ctx, c.Store, tree, dir)
	if err != nil {
		return nil, fmt.Errorf("command agent: %w", err)
	}
	materialize := time.Since(began)
	for _, d := range []string{tmp, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("command agent: %w", err)
		}
	}
	if t.Source.Converted {
		// The agent reads the converted text beside the vault, in its
		// temporary folder: raw/ keeps the original.
		text := filepath.Join(tmp, "source.md")
		if err := os.WriteFile(text, t.Source.Data, 0o600); err != nil {
			return nil, fmt.Errorf("command agent: %w", err)
		}
		tt := *t
		tt.Source.TextPath = text
		t = &tt
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	w := &Workspace{Dir: dir, Temp: tmp, Home: home, Stop: stop, snap: snap}
	if c.Adapter != nil && c.Tools != nil {
		stop, err := c.serveTools(ctx, w, t)
		if err != nil {
			return nil, fmt.Errorf("command agent: %w", err)
		}
		defer stop()
	}
	st := &Start{Argv: c.Argv, Stdin: []byte(cmp.Or(t.Prompt, agent.Prompt(t))), Parser: &textParser{activity: t.Activity}}
	if c.Adapter != nil {
		st, err = c.Adapter.Start(ctx, w, t)
		if err != nil {
			if _, ok := agent.IsFailure(err); ok {
				return nil, err
			}
			return nil, fmt.Errorf("command agent: %w", err)
		}
	}
	first := true
	spec := confine.Spec{
		Argv: st.Argv, Dir: dir, Temp: tmp, Home: home, Read: c.read(w, st), Write: st.Write, Deny: c.Deny,
		Stdin: st.Stdin, Env: slices.Concat(c.Env, st.Env), Pass: slices.Concat(c.Pass, st.Pass),
		Timeout: c.Timeout, Inactivity: c.Inactivity, MaxLine: st.MaxLine,
		Watch: c.Watch, WatchSkip: append(append([]string{}, c.WatchSkip...), ws),
		Seal: c.Seal, SealDB: c.SealDB,
		Network: c.network(w, st),
		// Output is never called concurrently.
		Output: func(stream, line string) {
			st.Parser.Line(stream, line)
			if first && c.Crash != nil {
				first = false
				c.Crash("agent:running")
			}
		},
	}
	snap.Start()
	res, err := confine.Run(runCtx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cairn.ErrorCode(err) == cairn.EINVALID {
			return nil, &agent.Failure{Reason: "start", Message: fmt.Sprintf("the agent command %q could not start: %v", st.Argv[0], err)}
		}
		return nil, fmt.Errorf("command agent: %w", err)
	}
	if spec.Network != nil && res.Net != confine.NetIsolated {
		c.logger().Warn("command agent: namespaces are refused here, so the agent had the machine's network", "job", t.Job)
	}
	output := st.Parser.Tail()
	if err := c.sealed(ctx, res); err != nil {
		return nil, err
	}
	switch res.Reason {
	case confine.ReasonCancelled:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Stopped by its parser: the failure its CLI reported says why.
		if _, usage, fail := st.Parser.End(res.ExitCode); fail != nil {
			if usage != nil && t.Activity != nil {
				t.Activity("usage", usage.String())
			}
			fail.Output = cmp.Or(fail.Output, output)
			return nil, fail
		}
		return nil, context.Canceled
	case confine.ReasonTimeout:
		return nil, &agent.Failure{Reason: "timeout", Output: output,
			Message: fmt.Sprintf("the agent ran longer than %s and was stopped", c.Timeout)}
	case confine.ReasonInactive:
		return nil, &agent.Failure{Reason: "inactive", Output: output,
			Message: fmt.Sprintf("the agent printed nothing for %s and was stopped", c.Inactivity)}
	}
	summary, usage, fail := st.Parser.End(res.ExitCode)
	if usage != nil && t.Activity != nil {
		t.Activity("usage", usage.String())
	}
	if fail != nil {
		fail.ExitCode, fail.Output = res.ExitCode, cmp.Or(fail.Output, output)
		return nil, fail
	}
	if res.ExitCode != 0 {
		return nil, &agent.Failure{Reason: "exit", ExitCode: res.ExitCode, Output: output,
			Message: fmt.Sprintf("the agent exited with status %d", res.ExitCode)}
	}
	if t.ReadOnly {
		// Its answer is all: whatever it wrote is discarded with the
		// workspace.
		final := summary
		if f, ok := st.Parser.(Finaler); ok {
			final = f.Final()
		}
		return &agent.Result{Summary: summary, Final: final, Mode: string(res.Mode), Contain: string(res.Contain), Net: string(res.Net),
			Usage: usage, Version: st.Version, Materialize: materialize, Agent: res.Duration}, nil
	}
	b := c.Store.NewBatch()
	tree, skips, err := worktree.ReadFolder(ctx, b, dir, cm.Tree, &worktree.WalkOptions{Materialized: snap})
	if err != nil {
		return nil, fmt.Errorf("command agent: read the workspace: %w", err)
	}
	if tree == cm.Tree && len(skips) == 0 && len(res.Outside) == 0 {
		return nil, &agent.Failure{Reason: "empty", Output: output, Message: "the agent changed nothing"}
	}
	return &agent.Result{Batch: b, Tree: tree, Summary: summary, Mode: string(res.Mode),
		Contain: string(res.Contain), Net: string(res.Net), Outside: res.Outside, Skipped: skips, Usage: usage, Version: st.Version,
		Materialize: materialize, Agent: res.Duration}, nil
}

// scopedTree writes into the store the tree of base's files a working set
// holds (scope, and the vault's index and rules): the workspace of a
// question asked within it holds nothing else.
func (c *Runtime) scopedTree(ctx context.Context, base cairn.Hash, scope []string) (cairn.Hash, error) {
	keep := map[string]bool{}
	for _, p := range slices.Concat(scope, agent.Guidance()) {
		keep[p] = true
	}
	var files []store.FileChange
	for p := range keep {
		e, err := c.Store.Get(ctx, base, p)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			continue
		}
		if err != nil {
			return cairn.Hash{}, err
		}
		data, err := c.Store.ReadBlob(ctx, e.Blob)
		if err != nil {
			return cairn.Hash{}, err
		}
		files = append(files, store.FileChange{Path: p, Data: data, Mode: e.Mode})
	}
	b := c.Store.NewBatch()
	tree, err := b.BuildTree(ctx, files)
	if err != nil {
		return cairn.Hash{}, err
	}
	return tree, b.Flush(ctx)
}

// read returns what the agent may read beside the system's folders: the
// Read folders, its CLI's install folder, and, when it has tools, the
// program that relays to them.
func (c *Runtime) read(w *Workspace, st *Start) []string {
	out := slices.Concat(c.Read, st.Read)
	if w.Tools != nil {
		out = append(out, programRead(w.Tools.Command)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// trashMark marks a workspace being removed: it is renamed to
// job-N-M.trash-RANDOM, then removed in the background.
const trashMark = ".trash-"

// discard removes a run's workspace once the run is over. Whatever the run
// gave was read from it already, so with Background it is not waited
// for: it is renamed aside at once, and removed in the background
// (removing 10k files takes longer than the rest of cairn's part of a
// job), which the process finishes before it exits. A workspace left
// behind costs room in .cairn/work, not the run (and Landlock keeps other
// agents out of it), so a failure is logged and the job goes on; the next
// run sweeps what a killed process left.
func (c *Runtime) discard(ws string, t *agent.Task) {
	key := make([]byte, 6)
	rand.Read(key)
	trash := ws + trashMark + hex.EncodeToString(key)
	if err := os.Rename(ws, trash); err != nil {
		if err := removeTree(ws); err != nil {
			c.logger().Warn("command agent: remove workspace", "job", t.Job, "attempt", t.Attempt, "dir", ws, "err", err)
		}
		return
	}
	remove := func() {
		if err := removeTree(trash); err != nil {
			c.logger().Warn("command agent: remove workspace", "job", t.Job, "attempt", t.Attempt, "dir", trash, "err", err)
		}
	}
	if c.inBackground() {
		c.Background(remove)
		return
	}
	remove()
}

// inBackground reports whether workspaces are removed in the background:
// when Background is set and the agents are confined. An unconfined run
// holds Exclusive until its workspace is gone, since the next one's
// checks would take a removal still going on for its agent's change of
// .cairn.
func (c *Runtime) inBackground() bool {
	return c.Background != nil && confine.Available() > 0
}

// sweep removes, in the background, the workspaces set aside for removal
// that a stopped process left in WorkDir.
func (c *Runtime) sweep() {
	old, _ := filepath.Glob(filepath.Join(c.WorkDir, "*"+trashMark+"*"))
	for _, dir := range old {
		// Another process's removal of it may race this one: either
		// finishes it.
		if c.inBackground() {
			c.Background(func() { removeTree(dir) })
		} else {
			removeTree(dir)
		}
	}
}

// logger returns c.Logger, or one that discards.
func (c *Runtime) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// removeTree removes dir and everything in it, whatever modes the agent
// left on its folders: when a plain removal fails, every folder is made
// readable, writable and searchable by its owner as the walk reaches it
// (symbolic links are not followed), and the removal is tried again.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() && err == nil {
			if info, err := d.Info(); err == nil {
				os.Chmod(p, info.Mode().Perm()|0o700)
			}
		}
		return nil // a folder that stays unreadable fails the removal below
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// sealed fails the job when an unconfined run changed what it must not:
// whatever else the agent did, none of it is admitted.
func (c *Runtime) sealed(ctx context.Context, res *confine.Result) error {
	if res.Mode != confine.ModeSnapshot {
		return nil
	}
	var why string
	db := false
	if len(res.Sealed) > 0 {
		shown := res.Sealed[:min(len(res.Sealed), 5)]
		why = "it changed " + strings.Join(shown, ", ")
		if len(res.Sealed) > len(shown) {
			why += fmt.Sprintf(" and %d more", len(res.Sealed)-len(shown))
		}
		for _, p := range res.Sealed {
			for _, d := range c.SealDB {
				db = db || strings.HasPrefix(p, d)
			}
		}
	} else if c.Verify != nil {
		if err := c.Verify(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			why, db = err.Error(), true
		}
	}
	if why == "" {
		return nil
	}
	msg := "the unconfined agent touched cairn's own folder .cairn/: " + why + "; nothing of its change is admitted"
	if db {
		msg += ", and the vault's database may be damaged (check it: cairn doctor)"
	}
	return &agent.Failure{Reason: "sealed", Message: msg}
}

// network is the network of a run: nil (the machine's) with OpenNetwork;
// otherwise one that reaches only Allow, what st allows (the CLI's
// provider) and the run's tool server.
func (c *Runtime) network(w *Workspace, st *Start) *confine.Network {
	if c.OpenNetwork {
		return nil
	}
	allow := slices.Concat(c.Allow, st.Allow)
	if w.tools != "" {
		allow = append(allow, w.tools)
	}
	return &confine.Network{Allow: allow}
}
