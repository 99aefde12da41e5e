package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"cairn"
	"cairn/agent"
	"cairn/agent/command"
)

// cliKind is what differs between the agent CLIs.
type cliKind struct {
	// name is the runtime's name; program the CLI's usual program name;
	// pkg the npm package that installs it, for hints.
	name, program, pkg string
	// help says in a few words what it is, for help texts.
	help string
	// minVersion is the oldest version whose flags and events cairn uses.
	minVersion string
	// keyEnv is the variable its provider's API key is usually in.
	keyEnv string
	// folders are install folders beside PATH, relative to the home
	// folder when not absolute.
	folders []string
	// login names files in the user's home folder holding a login the CLI
	// can use instead of a key; copied into the job's private folder.
	login []string
	// provider are the endpoints ("host:port") of the CLI's own provider,
	// which an isolated CLI reaches when agent.base_url names none;
	// always are those it needs either way (see command.Start.Allow).
	provider, always []string
	// start builds the run's start, given the CLI found.
	start func(r *cliRuntime, w *command.Workspace, t *agent.Task) (*command.Start, error)

	// versions keeps the versions of the programs checked, by what
	// identifies a program file: running --version costs up to half a
	// second (OpenCode's), every job.
	mu       sync.Mutex
	versions map[programID]string
}

// programID identifies a program file as it is: a new install changes it.
type programID struct {
	path  string
	size  int64
	mtime time.Time
}

// cliRuntime is one job's runtime for an agent CLI: the command runtime
// with the CLI's Adapter.
type cliRuntime struct {
	*command.Runtime
	kind *cliKind
	set  agent.Settings
	// environ is cairn's environment, for the key and login checks.
	environ func(string) (string, bool)
	home    string // the user's home folder, for logins and install folders
	// prog and progVersion are the CLI found and its version, by
	// Preflight.
	prog, progVersion string
}

// Name returns the runtime's name.
func (r *cliRuntime) Name() string { return r.kind.name }

func register(k *cliKind) {
	agent.Register(agent.Factory{
		Name: k.name,
		Help: k.help,
		Validate: func(s agent.Settings) error {
			return validate(k, s)
		},
		New: func(env agent.Env) (agent.Runtime, error) {
			return newRuntime(k, env)
		},
	})
}

// effortRE is what agent.effort may hold: a word.
var effortRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// validate checks the settings a CLI runtime reads.
func validate(k *cliKind, s agent.Settings) error {
	bad := func(format string, args ...any) *cairn.Error {
		return cairn.Errorf(cairn.EINVALID, format, args...)
	}
	if s.Effort != "" && !effortRE.MatchString(s.Effort) {
		return bad("agent.effort %q is not a word like low, medium or high", s.Effort).
			WithHint("Try: cairn settings set agent.effort medium")
	}
	if strings.ContainsAny(s.Model, " \t\n\"'\\") {
		return bad("agent.model %q holds spaces or quotes", s.Model).
			WithHint("Name the model as the CLI knows it: cairn settings set agent.model NAME")
	}
	if s.Command != "" && strings.ContainsAny(s.Command, " \t\n") && !filepath.IsAbs(s.Command) {
		return bad("for the %s runtime agent.command names the %s program only, not a command line: %q", k.name, k.program, s.Command).
			WithHint("Try: cairn settings set agent.command /usr/local/bin/" + k.program)
	}
	return nil
}

func newRuntime(k *cliKind, env agent.Env) (agent.Runtime, error) {
	if err := validate(k, env.Settings); err != nil {
		return nil, err
	}
	rt, err := command.NewRuntime(env, []string{k.program})
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	r := &cliRuntime{Runtime: rt, kind: k, set: env.Settings, environ: os.LookupEnv, home: home}
	rt.Adapter = r
	return r, nil
}

// Preflight finds the CLI and checks its version and credentials, before
// the workspace is made: a CLI that cannot run fails the job at once.
func (r *cliRuntime) Preflight(ctx context.Context) error {
	prog, err := r.find()
	if err != nil {
		return err
	}
	version, err := r.version(ctx, prog)
	if err != nil {
		return err
	}
	if err := r.credentials(); err != nil {
		return err
	}
	r.prog, r.progVersion = prog, version
	return nil
}

// Start builds the CLI's start, once Preflight has passed.
func (r *cliRuntime) Start(ctx context.Context, w *command.Workspace, t *agent.Task) (*command.Start, error) {
	if r.prog == "" {
		if err := r.Preflight(ctx); err != nil {
			return nil, err
		}
	}
	prog, version := r.prog, r.progVersion
	if err := r.copyLogin(w); err != nil {
		return nil, err
	}
	st, err := r.kind.start(r, w, t)
	if err != nil {
		return nil, err
	}
	st.Argv[0] = prog
	st.Version = version
	st.Read = append(st.Read, installFolder(prog)...)
	st.Allow = append(st.Allow, r.endpoints()...)
	return st, nil
}

// endpoints are what the CLI must reach in an isolated network: the
// provider at agent.base_url, else its own, and what it always needs.
func (r *cliRuntime) endpoints() []string {
	out := r.kind.provider
	if r.set.BaseURL != "" {
		out = nil
		if u, err := url.Parse(r.set.BaseURL); err == nil && u.Hostname() != "" {
			port := u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
			}
			out = []string{net.JoinHostPort(u.Hostname(), port)}
		}
	}
	return slices.Concat(out, r.kind.always)
}

// missing is a failure to start the agent: the CLI or its credentials are
// missing; the message ends with what to do.
func missing(format string, args ...any) error {
	return &agent.Failure{Reason: "missing", Message: fmt.Sprintf(format, args...)}
}

// find returns the CLI's program, absolute: agent.command when set (a
// path, or a name looked up in PATH), else the program's name in PATH,
// then in the usual install folders.
func (r *cliRuntime) find() (string, error) {
	k := r.kind
	if c := r.set.Command; c != "" {
		p, err := exec.LookPath(c)
		if err != nil {
			return "", missing("agent.command names %q, which is not an executable program: %v. Install it (npm install -g %s) or fix the setting: cairn settings set agent.command /path/to/%s", c, err, k.pkg, k.program)
		}
		return filepath.Abs(p)
	}
	if p, err := exec.LookPath(k.program); err == nil {
		return filepath.Abs(p)
	}
	var looked []string
	for _, d := range k.folders {
		if !filepath.IsAbs(d) {
			if r.home == "" {
				continue
			}
			d = filepath.Join(r.home, d)
		}
		p := filepath.Join(d, k.program)
		looked = append(looked, d)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", missing("the %s runtime needs the %s program, which is neither in PATH nor in %s. Install it: npm install -g %s@latest (or name it: cairn settings set agent.command /path/to/%s)",
		k.name, k.program, strings.Join(looked, ", "), k.pkg, k.program)
}

// versionRE finds a version number in a CLI's --version output.
var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// versionWait bounds a CLI's --version.
const versionWait = 20 * time.Second

// version runs the CLI's --version, with an empty private home, and
// checks the version against the oldest cairn drives.
func (r *cliRuntime) version(ctx context.Context, prog string) (string, error) {
	k := r.kind
	var id programID
	if real, err := filepath.EvalSymlinks(prog); err == nil {
		if fi, err := os.Stat(real); err == nil {
			id = programID{real, fi.Size(), fi.ModTime()}
		}
	}
	k.mu.Lock()
	v, ok := k.versions[id]
	k.mu.Unlock()
	if ok && id.path != "" {
		return v, nil
	}
	v, err := r.runVersion(ctx, prog)
	if err != nil {
		return "", err
	}
	k.mu.Lock()
	if k.versions == nil {
		k.versions = map[programID]string{}
	}
	k.versions[id] = v
	k.mu.Unlock()
	return v, nil
}

func (r *cliRuntime) runVersion(ctx context.Context, prog string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionWait)
	defer cancel()
	home, err := os.MkdirTemp("", "cairn-version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, prog, "--version")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "NO_COLOR=1",
		"DISABLE_AUTOUPDATER=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "CODEX_HOME=" + home}
	cmd.Stdin = nil
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return "", missing("%s --version failed: %v. Reinstall it: npm install -g %s@latest", prog, firstLine(err, out), r.kind.pkg)
	}
	v := versionRE.FindString(string(out))
	if v == "" {
		return "", missing("%s --version printed no version (%q). Is it %s? Install it: npm install -g %s@latest", prog, agent.Cut(string(out), 80), r.kind.program, r.kind.pkg)
	}
	if older(v, r.kind.minVersion) {
		return "", missing("%s is version %s; cairn needs %s or later. Update it: npm install -g %s@latest", prog, v, r.kind.minVersion, r.kind.pkg)
	}
	return v, nil
}

func firstLine(err error, out []byte) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return err.Error() + ": " + agent.Cut(strings.TrimSpace(string(ee.Stderr)), 200)
	}
	return err.Error()
}

// older reports whether version a is older than b (both "x.y.z").
func older(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range 3 {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}

// keyEnv is the variable holding the provider's key: agent.key_env, else
// the CLI's usual one.
func (r *cliRuntime) keyEnv() string {
	if r.set.KeyEnv != "" {
		return r.set.KeyEnv
	}
	return r.kind.keyEnv
}

// key returns the provider's API key from cairn's environment.
func (r *cliRuntime) key() string {
	v, _ := r.environ(r.keyEnv())
	return v
}

// credentials checks that the CLI will have something to log in with: the
// key in cairn's environment, or one of the CLI's login files in the
// user's home. A provider at agent.base_url without agent.key_env (a local
// model) needs none.
func (r *cliRuntime) credentials() error {
	if r.key() != "" {
		return nil
	}
	if r.set.KeyEnv != "" {
		return missing("agent.key_env names %s, which is not set in cairn's environment. Set it where cairn runs (export %s=…)", r.set.KeyEnv, r.set.KeyEnv)
	}
	if r.set.BaseURL != "" {
		return nil
	}
	for _, f := range r.logins() {
		if _, err := os.Stat(f); err == nil {
			return nil
		}
	}
	return missing("the %s runtime has no credentials: %s is not set in cairn's environment, and %s has no login (%s). Set the key where cairn runs (export %s=…), or log in once with %s",
		r.kind.name, r.kind.keyEnv, r.kind.program, strings.Join(r.kind.login, ", "), r.kind.keyEnv, r.kind.program)
}

// logins returns the absolute paths of the CLI's login files.
func (r *cliRuntime) logins() []string {
	if r.home == "" {
		return nil
	}
	var out []string
	for _, f := range r.kind.login {
		out = append(out, filepath.Join(r.home, f))
	}
	return out
}

// copyLogin copies the user's login files, and only those, into the
// job's private home, when no key is set.
func (r *cliRuntime) copyLogin(w *command.Workspace) error {
	if r.key() != "" || r.set.BaseURL != "" {
		return nil
	}
	for i, f := range r.logins() {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		dst := filepath.Join(w.Home, r.kind.login[i])
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// installFolder returns the folder an agent CLI must read to run: the
// package folder the program is in (node_modules/PKG, resolving links),
// else the program's own folder; nothing for system folders, which every
// agent reads.
func installFolder(prog string) []string {
	real, err := filepath.EvalSymlinks(prog)
	if err != nil {
		real = prog
	}
	var out []string
	for _, p := range []string{prog, real} {
		dir := filepath.Dir(p)
		for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
			if filepath.Base(filepath.Dir(d)) == "node_modules" || strings.HasPrefix(filepath.Base(d), "@") && filepath.Base(filepath.Dir(filepath.Dir(d))) == "node_modules" {
				dir = filepath.Dir(d) // all of node_modules: a package's native part is a package beside it
				if strings.HasPrefix(filepath.Base(dir), "@") {
					dir = filepath.Dir(dir)
				}
				break
			}
		}
		if system(dir) {
			continue
		}
		out = append(out, dir)
	}
	return out
}

// system reports whether dir is one of the system's folders every agent
// may read anyway.
func system(dir string) bool {
	for _, s := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt/homebrew"} {
		if dir == s || strings.HasPrefix(dir, s+"/") {
			return true
		}
	}
	return false
}

// writeJSON writes v as indented JSON to path, readable by its owner only.
func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// prompt is what the CLI is told: agent.Prompt, then how to reach the
// vault's tools, and the language to write in.
func (r *cliRuntime) prompt(w *command.Workspace, t *agent.Task, toolName func(tool string) string) string {
	var b strings.Builder
	b.WriteString(cmp.Or(t.Prompt, agent.Prompt(t)))
	if w.Tools != nil {
		fmt.Fprintf(&b, `
Search before you write: the MCP tools %s (full-text search of the vault,
including what you wrote so far), %s and %s find the pages a source
concerns faster than reading files one by one.
`, toolName("search"), toolName("read_page"), toolName("neighbors"))
	}
	if r.set.Language != "" {
		fmt.Fprintf(&b, "\nWrite pages in %s unless the vault's rules say otherwise.\n", strconv.Quote(r.set.Language))
	}
	if r.set.Focus != "" && !t.ReadOnly {
		fmt.Fprintf(&b, "\nThe brain's profile (EVA.md) asks an ingest to %s.\n", r.set.Focus)
	}
	return b.String()
}

var (
	_ agent.Answerer      = (*cliRuntime)(nil)
	_ agent.HealthChecker = (*cliRuntime)(nil)
)

// Answer answers a question from the vault with the CLI, read-only: it
// runs in a workspace of main's head (of the working set's files only,
// when there is one), with no tool that writes where its CLI allows
// that, and whatever it writes is discarded; its final message is the
// answer, in JSON.
func (r *cliRuntime) Answer(ctx context.Context, q *agent.Question) (*agent.Reply, error) {
	res, err := r.Run(ctx, &agent.Task{Prompt: agent.AskPrompt(q.Text), Base: q.Base, Scope: q.Scope,
		ReadOnly: true, Activity: q.Activity})
	if err != nil {
		return nil, err
	}
	reply, ok := agent.ParseReply(res.Final)
	if !ok {
		return nil, &agent.Failure{Reason: "agent", Message: "the agent's answer was not the JSON asked for: " + agent.Cut(res.Final, 200)}
	}
	reply.Usage = res.Usage
	return reply, nil
}

// Health checks the vault's health with the CLI, read-only, as Answer.
func (r *cliRuntime) Health(ctx context.Context, base cairn.Hash, activity func(kind, text string)) (*agent.HealthReply, error) {
	res, err := r.Run(ctx, &agent.Task{Prompt: agent.HealthPrompt, Base: base, ReadOnly: true, Activity: activity})
	if err != nil {
		return nil, err
	}
	var reply agent.HealthReply
	if !agent.ParseJSON(res.Final, &reply) || strings.TrimSpace(reply.Summary) == "" {
		return nil, &agent.Failure{Reason: "agent", Message: "the agent's report was not the JSON asked for: " + agent.Cut(res.Final, 200)}
	}
	reply.Usage = res.Usage
	return &reply, nil
}
