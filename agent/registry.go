package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"cairn"
	"cairn/index"
	"cairn/store"
	"cairn/worktree"
)

// DefaultRuntime is the runtime a vault's agent is when its policy names
// none: offline, deterministic, no key (package agent/extractive).
const DefaultRuntime = "extractive"

// Settings are the agent settings of a vault's policy (the agent section
// of cairn.yaml) as runtimes read them, defaults applied. Package admit
// parses and validates the file and hands these on; a runtime reads the
// ones it needs and ignores the rest.
type Settings struct {
	// Runtime is the runtime's name (agent.runtime). Default DefaultRuntime.
	Runtime string
	// Command is agent.command, unsplit: an agent CLI's argv as one string,
	// split like a shell would. Default "".
	Command string
	// Read are further absolute folders an agent process may read and
	// execute (agent.read). Default none.
	Read []string
	// Env names the variables of cairn's environment that reach an agent
	// process (agent.env). Default none.
	Env []string
	// Unconfined allows an agent process to run where the kernel offers no
	// Landlock (agent.unconfined is allow). Default false.
	Unconfined bool
	// OpenNetwork gives an agent process the machine's network
	// (agent.network is open); otherwise it reaches only its model
	// provider, cairn's tools and Allow (see confine.Network).
	OpenNetwork bool
	// Allow are further endpoints ("host:port") an agent process may
	// reach (agent.allow). Default none.
	Allow []string
	// Timeout bounds a run (agent.timeout); Inactivity stops a run that
	// printed nothing for that long (agent.inactivity). Zero means none;
	// admit fills in the policy's defaults, 30m and 180s.
	Timeout, Inactivity time.Duration

	// What the agent CLIs (claude, codex, opencode) read; the others
	// ignore them. For them Command, when set, is the CLI's program.

	// Model and Effort are the model and the reasoning effort the CLI is
	// told to use (agent.model, agent.effort); "": the CLI's own default.
	Model, Effort string
	// Turns bounds the agent's turns where the CLI can (agent.turns).
	// Zero: the runtime's default.
	Turns int
	// Budget bounds what one run may cost, in US dollars, where the CLI
	// can (agent.budget). Zero: no bound.
	Budget float64
	// BaseURL is the model provider's API address (agent.base_url); "":
	// the CLI's own provider.
	BaseURL string
	// KeyEnv names the variable of cairn's environment that holds the
	// provider's API key (agent.key_env); "": the CLI's usual one.
	KeyEnv string
	// Language is the language pages are written in (an Eva vault's
	// working language); "": the sources' own.
	Language string
	// Focus is what the vault's profile asks an ingest to attend to (an
	// Eva brain's "Ingest focus"); "": nothing beyond the rules.
	Focus string
	// ToolsName is the name cairn's MCP server has for the agent: "cairn",
	// or "eva" in an Eva vault, whose prompts name mcp__eva__search.
	// "": "cairn".
	ToolsName string

	// What the built-in agent (llm) reads besides Model, BaseURL, KeyEnv,
	// Turns (its step limit) and Budget.

	// Provider is the model API: "anthropic" or "openai" (any
	// OpenAI-compatible one) (agent.provider). "": anthropic.
	Provider string
	// MaxTokens bounds the tokens a run reads and writes (agent.max_tokens;
	// admit fills in its default, 2,000,000).
	// Zero: none.
	MaxTokens int64
	// PriceIn and PriceOut are the model's prices in US dollars per million
	// input and output tokens (agent.price_in, agent.price_out), for
	// Budget and for the cost a run records. Zero: unknown.
	PriceIn, PriceOut float64
}

// Env is what a runtime is built from: the vault's agent settings and
// what the worker running the job holds. A runtime takes what it needs.
type Env struct {
	Settings Settings
	// Store and Index are the vault's.
	Store *store.Store
	Index *index.Index
	// Root is the vault's folder; Internal is cairn's own folder in it
	// (.cairn), which no agent may read or change; Database is the vault's
	// SQLite database file, in Internal ("" for a vault in PostgreSQL).
	Root, Internal, Database string
	// Verify, when set, checks the vault's database (its integrity) after
	// a run that could have damaged it.
	Verify func(context.Context) error
	// Environ is added to an agent process's environment ("KEY=value").
	Environ []string
	// Folder is held by whatever else writes the vault's folder in this
	// process (a folder sync): a runtime that tells its agent's writes by
	// comparing snapshots of the folder holds it meanwhile.
	Folder *sync.Mutex
	// Crash, when set, is called at named points (crash tests).
	Crash func(point string)
	// Logger receives what goes wrong beside a run. Default: discard.
	Logger *slog.Logger
	// Tools, when set, serves cairn's MCP tools, read-only, on a view of
	// an agent's workspace (see ServeTools). Runtimes whose agent speaks
	// MCP offer them to it; without Tools they offer none.
	Tools ServeTools
	// Program is cairn's own executable, which an agent's MCP client
	// starts to reach Tools (cairn mcp --relay). "": the running one.
	Program string
	// Drafts, when set, opens cairn's MCP tools on a draft of the job's
	// change, in process: the built-in agent's only way to the vault.
	Drafts DraftTools
	// Background, when set, runs work a run leaves behind (removing its
	// workspace) beside the next ones; the process waits for it before it
	// exits. Unset, the work runs before the run returns.
	Background func(work func())
}

// ServeTools serves cairn's MCP tools over conn until it closes or ctx
// ends, reading a view of the folder dir as a draft on the commit base:
// what the agent wrote so far is what it reads and finds.
//
// snap, when set, is what Materialize wrote in dir: the view reads again
// only the files changed since.
type ServeTools func(ctx context.Context, conn io.ReadWriteCloser, base cairn.Hash, dir string, snap *worktree.Snapshot) error

// Factory is one kind of runtime, as its package registers it.
type Factory struct {
	// Name is what agent.runtime says to choose it: a lower-case letter,
	// then lower-case letters, digits and dashes.
	Name string
	// Help says in a few words what the runtime is, for help texts: "offline,
	// no key".
	Help string
	// Validate, when set, reports what is wrong with the settings for this
	// runtime, as an error with code EINVALID and a hint naming the
	// setting. It is called on every policy naming the runtime, so it looks
	// at the settings only; what needs the file system or the vault is
	// New's to check.
	Validate func(Settings) error
	// New builds the runtime for one job, or returns an error with a hint
	// saying why its agent may not run here (a setting's value, a kernel
	// without Landlock). Required.
	New func(Env) (Runtime, error)
}

// registry holds the runtimes that registered themselves, by name. It is
// filled by init functions and read afterwards.
var registry struct {
	sync.RWMutex
	m map[string]Factory
}

// Register makes a runtime available under f.Name. A runtime's package
// calls it from init; the program imports the package for that alone
// (import _ "cairn/agent/command"). Register panics, like sql.Register,
// when f has no valid Name or no New, or when the name is taken: these are
// mistakes in the program, found when it starts.
func Register(f Factory) {
	if !validName(f.Name) {
		panic(fmt.Sprintf("agent: Register of runtime %q: a name is a lower-case letter, then lower-case letters, digits and dashes", f.Name))
	}
	if f.New == nil {
		panic(fmt.Sprintf("agent: Register of runtime %q without New", f.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[f.Name]; dup {
		panic(fmt.Sprintf("agent: Register called twice for runtime %q", f.Name))
	}
	if registry.m == nil {
		registry.m = map[string]Factory{}
	}
	registry.m[f.Name] = f
}

// validName reports whether name may name a runtime: it becomes a value
// in cairn.yaml and the agent's principal (agent:NAME).
func validName(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Lookup returns the factory registered under name, and whether there is
// one.
func Lookup(name string) (Factory, bool) {
	registry.RLock()
	defer registry.RUnlock()
	f, ok := registry.m[name]
	return f, ok
}

// Factories returns every registered runtime, sorted by name.
func Factories() []Factory {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Factory, 0, len(registry.m))
	for _, f := range registry.m {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Factory) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns the names of the registered runtimes, sorted.
func Names() []string {
	var names []string
	for _, f := range Factories() {
		names = append(names, f.Name)
	}
	return names
}

// Choices returns the names of the registered runtimes as a choice, for
// messages: "command or extractive"; "a registered runtime, and none is"
// when none is.
func Choices() string {
	names := Names()
	switch len(names) {
	case 0:
		return "a registered runtime, and none is"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// New builds the runtime env.Settings.Runtime names (DefaultRuntime when
// empty) with its factory's New. The error has code EINVALID, naming the
// registered runtimes, when none has that name; otherwise it is the
// factory's own.
func New(env Env) (Runtime, error) {
	name := env.Settings.Runtime
	if name == "" {
		name = DefaultRuntime
	}
	f, ok := Lookup(name)
	if !ok {
		return nil, cairn.Errorf(cairn.EINVALID, "agent.runtime is %q; it must be %s", name, Choices()).
			WithHint("Try: cairn settings set agent.runtime " + DefaultRuntime)
	}
	return f.New(env)
}
