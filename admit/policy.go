package admit

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"go.yaml.in/yaml/v3"

	"cairn"
	"cairn/agent"
	"cairn/internal/confine"
	"cairn/lint"
)

// PolicyFile is the vault's contract: the admission policy, at the root of
// main, versioned with the vault and protected from agents.
const PolicyFile = "cairn.yaml"

// Policy is what cairn.yaml says. The zero value of every field means its
// default, written in its comment.
type Policy struct {
	Agent   AgentPolicy   `yaml:"agent,omitempty"`
	Sources SourcePolicy  `yaml:"sources,omitempty"`
	Paths   PathPolicy    `yaml:"paths,omitempty"`
	Verdict VerdictPolicy `yaml:"verdicts,omitempty"`
	Lint    lint.Settings `yaml:"lint,omitempty"`
	Server  ServerPolicy  `yaml:"server,omitempty"`
	// Policies are the vault's own rules over changes, in CEL.
	Policies []ChangePolicy `yaml:"policies,omitempty"`
}

// ServerPolicy limits what clients of cairn serve may ask.
type ServerPolicy struct {
	// Rate is how many requests a second one token may send, on average.
	// Default 100.
	Rate float64 `yaml:"rate,omitempty"`
	// Burst is how many requests one token may send at once, above the
	// rate. Default 200.
	Burst int `yaml:"burst,omitempty"`
}

// AgentPolicy configures the agent that integrates sources.
type AgentPolicy struct {
	// Runtime names a registered agent runtime (package agent):
	// "extractive" (default: offline, no key) or "command", as cairn ships.
	Runtime string `yaml:"runtime,omitempty"`
	// Command is the argv of a command agent as one string, split like a
	// shell would (quotes group words); the prompt arrives on stdin.
	Command string `yaml:"command,omitempty"`
	// Timeout bounds one agent run. Default 30m.
	Timeout Duration `yaml:"timeout,omitempty"`
	// Inactivity ends a run that printed nothing for this long. Default 180s.
	Inactivity Duration `yaml:"inactivity,omitempty"`
	// Attempts is how often a job runs when the infrastructure fails
	// (agent errors are never retried by themselves). Default 3.
	Attempts int `yaml:"attempts,omitempty"`
	// Workers is how many jobs one process runs at once. Default 2.
	Workers int `yaml:"workers,omitempty"`
	// Read are further absolute paths a confined command agent may read
	// and execute, beside its workspace and the system's read-only
	// folders: its install folder, say. Default none.
	Read []string `yaml:"read,omitempty"`
	// Env names the variables of cairn's environment that reach a command
	// agent, beside PATH, LANG, LANGUAGE, LC_* and TZ: its API key, say.
	// Default none.
	Env []string `yaml:"env,omitempty"`
	// Unconfined says whether a command agent may run where the kernel
	// offers no Landlock: "refuse" (default) or "allow".
	Unconfined string `yaml:"unconfined,omitempty"`
	// Network is what network a command agent or agent CLI has:
	// "isolated" (default), only its model provider, cairn's tools and
	// Allow; or "open", the machine's.
	Network string `yaml:"network,omitempty"`
	// Allow are further endpoints ("host:port") an isolated agent may
	// reach: a local model, a package registry. Default none.
	Allow []string `yaml:"allow,omitempty"`

	// For the agent CLIs (claude, codex, opencode):

	// Model and Effort are the model and reasoning effort the CLI uses.
	// Default: the CLI's own.
	Model  string `yaml:"model,omitempty"`
	Effort string `yaml:"effort,omitempty"`
	// Turns bounds a run's turns where the CLI can (claude). Default 120.
	Turns int `yaml:"turns,omitempty"`
	// Budget bounds a run's cost in US dollars where the CLI can
	// (claude). Default none.
	Budget float64 `yaml:"budget,omitempty"`
	// BaseURL is the model provider's API address. Default: the CLI's
	// own provider.
	BaseURL string `yaml:"base_url,omitempty"`
	// KeyEnv names the variable of cairn's environment holding the
	// provider's API key. Default: the CLI's usual one.
	KeyEnv string `yaml:"key_env,omitempty"`

	// For the built-in agent (llm):

	// Provider is the model API: anthropic (default) or openai (any
	// OpenAI-compatible one).
	Provider string `yaml:"provider,omitempty"`
	// MaxTokens bounds the tokens one run reads and writes. Default none.
	MaxTokens int64 `yaml:"max_tokens,omitempty"`
	// PriceIn and PriceOut are the model's prices in US dollars per
	// million input and output tokens. Default unknown.
	PriceIn  float64 `yaml:"price_in,omitempty"`
	PriceOut float64 `yaml:"price_out,omitempty"`
}

// SourcePolicy limits what may be ingested.
type SourcePolicy struct {
	// MaxSize is the largest source accepted. Default 64MiB.
	MaxSize Size `yaml:"max_size,omitempty"`
}

// PathPolicy says where changes may go.
type PathPolicy struct {
	// Protected are further paths (a file, or a folder ending in /) that
	// only people may change, like raw/ and log.md.
	Protected []string `yaml:"protected,omitempty"`
	// Allowed are the paths (files, or folders ending in /) agents may
	// write; empty means anywhere not protected.
	Allowed []string `yaml:"allowed,omitempty"`
	// Types are the file extensions allowed in the vault. Default: Markdown,
	// text, images, PDF, audio, video, data and canvas files.
	Types []string `yaml:"types,omitempty"`
	// Dotfiles are dot files people may keep. Default .gitignore,
	// .gitattributes. Agents may never write one.
	Dotfiles []string `yaml:"dotfiles,omitempty"`
}

// VerdictPolicy overrides the default verdict table: for each rule, what an
// agent's change and a person's change get.
type VerdictPolicy map[string]VerdictPair

// VerdictPair is one row of the verdict table.
type VerdictPair struct {
	Agent  cairn.Verdict `yaml:"agent,omitempty"`
	Person cairn.Verdict `yaml:"person,omitempty"`
}

// Duration is a time.Duration written as "30m" or "180s".
type Duration time.Duration

// UnmarshalYAML reads a duration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration (like 30m or 180s)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes a duration.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Size is a number of bytes written as "64MiB" or "100MB".
type Size int64

// UnmarshalYAML reads a size.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := humanize.ParseBytes(n.Value)
	if err != nil || v > 1<<40 {
		return fmt.Errorf("line %d: %q is not a size (like 64MiB)", n.Line, n.Value)
	}
	*s = Size(v)
	return nil
}

// MarshalYAML writes a size.
func (s Size) MarshalYAML() (any, error) { return humanize.IBytes(uint64(s)), nil }

// Defaults.
const (
	DefaultTimeout    = 30 * time.Minute
	DefaultInactivity = 180 * time.Second
	DefaultTurns      = 120
	DefaultMaxTokens  = 2_000_000
	DefaultAttempts   = 3
	DefaultWorkers    = 2
	DefaultMaxSize    = 64 << 20
	DefaultRate       = 100
	DefaultBurst      = 200
)

// DefaultTypes are the file extensions allowed by default.
var defaultTypes = []string{
	".md", ".markdown", ".txt", ".canvas", ".base",
	".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif", ".bmp", ".ico", ".tif", ".tiff",
	".pdf", ".csv", ".tsv", ".json", ".yaml", ".yml", ".bib", ".tex", ".html", ".htm", ".xml",
	".mp3", ".wav", ".m4a", ".ogg", ".flac", ".mp4", ".webm", ".mov", ".mkv",
	".excalidraw", ".drawio",
}

var defaultDotfiles = []string{".gitignore", ".gitattributes"}

// Runtime returns the agent runtime's name.
func (p *Policy) Runtime() string { return cmpOr(p.Agent.Runtime, agent.DefaultRuntime) }

// AgentSettings returns the agent settings as runtimes read them,
// defaults applied (agent.Factory's Validate and New get them).
func (p *Policy) AgentSettings() agent.Settings {
	return agent.Settings{
		Runtime: p.Runtime(), Command: p.Agent.Command,
		Read: p.Agent.Read, Env: p.Agent.Env, Unconfined: p.Agent.Unconfined == "allow",
		OpenNetwork: p.Agent.Network == "open", Allow: p.Agent.Allow,
		Timeout: p.Timeout(), Inactivity: p.Inactivity(),
		Model: p.Agent.Model, Effort: p.Agent.Effort, Turns: p.Agent.Turns, Budget: p.Agent.Budget,
		BaseURL: p.Agent.BaseURL, KeyEnv: p.Agent.KeyEnv,
		Provider: p.Agent.Provider, MaxTokens: cmpOr(p.Agent.MaxTokens, DefaultMaxTokens), PriceIn: p.Agent.PriceIn, PriceOut: p.Agent.PriceOut,
	}
}

// Timeout returns the agent timeout.
func (p *Policy) Timeout() time.Duration {
	return cmpOr(time.Duration(p.Agent.Timeout), DefaultTimeout)
}

// Inactivity returns the agent inactivity watchdog.
func (p *Policy) Inactivity() time.Duration {
	return cmpOr(time.Duration(p.Agent.Inactivity), DefaultInactivity)
}

// Attempts returns how often a job runs on infrastructure errors.
func (p *Policy) Attempts() int { return cmpOr(p.Agent.Attempts, DefaultAttempts) }

// Workers returns how many jobs one process runs at once.
func (p *Policy) Workers() int { return cmpOr(p.Agent.Workers, DefaultWorkers) }

// MaxSize returns the largest source accepted.
func (p *Policy) MaxSize() int64 { return cmpOr(int64(p.Sources.MaxSize), DefaultMaxSize) }

// Rate returns how many requests a second one token may send to a server.
func (p *Policy) Rate() float64 { return cmpOr(p.Server.Rate, DefaultRate) }

// Burst returns how many requests one token may send at once, above the
// rate.
func (p *Policy) Burst() int { return cmpOr(p.Server.Burst, DefaultBurst) }

// Types returns the allowed file extensions.
func (p *Policy) Types() []string {
	if len(p.Paths.Types) == 0 {
		return defaultTypes
	}
	return p.Paths.Types
}

// Dotfiles returns the dot files people may keep.
func (p *Policy) Dotfiles() []string {
	if p.Paths.Dotfiles == nil {
		return defaultDotfiles
	}
	return p.Paths.Dotfiles
}

// Validate reports the first thing wrong with the policy, as an error
// with code EINVALID and a hint. An agent.runtime that is set must name a
// registered runtime (package agent), and the settings must pass that
// runtime's own Validate; the default runtime, when agent.runtime is not
// set, is not looked up, so that a program that registers no runtime
// still reads policies (it cannot ingest, and says so when it tries).
func (p *Policy) Validate() error {
	bad := func(format string, args ...any) error {
		return cairn.Errorf(cairn.EINVALID, "%s: "+format, append([]any{PolicyFile}, args...)...).
			WithHint("Fix it with cairn settings set KEY VALUE; cairn settings lists the keys.")
	}
	if p.Agent.Runtime != "" {
		f, ok := agent.Lookup(p.Agent.Runtime)
		if !ok {
			return bad("agent.runtime is %q; it must be %s", p.Agent.Runtime, agent.Choices())
		}
		if f.Validate != nil {
			if err := f.Validate(p.AgentSettings()); err != nil {
				return err
			}
		}
	}
	if p.Agent.Attempts < 0 || p.Agent.Attempts > maxAttempts {
		return bad("agent.attempts must be a whole number from 1 to %d, not %d", maxAttempts, p.Agent.Attempts)
	}
	if p.Agent.Workers < 0 || p.Agent.Workers > maxWorkers {
		return bad("agent.workers must be a whole number from 1 to %d, not %d", maxWorkers, p.Agent.Workers)
	}
	if p.Server.Rate < 0 || p.Server.Rate > maxRate || p.Server.Burst < 0 || p.Server.Burst > maxRate {
		return bad("server.rate and server.burst must be from 1 to %d", maxRate)
	}
	for key, value := range map[string]string{
		"agent.turns": strconv.Itoa(p.Agent.Turns), "agent.budget": strconv.FormatFloat(p.Agent.Budget, 'f', -1, 64),
		"agent.base_url": p.Agent.BaseURL, "agent.key_env": p.Agent.KeyEnv, "agent.provider": p.Agent.Provider,
		"agent.max_tokens": strconv.FormatInt(p.Agent.MaxTokens, 10),
		"agent.price_in":   strconv.FormatFloat(p.Agent.PriceIn, 'f', -1, 64), "agent.price_out": strconv.FormatFloat(p.Agent.PriceOut, 'f', -1, 64),
	} {
		if value != "" && value != "0" {
			if err := checkValue(key, value); err != nil {
				return err
			}
		}
	}
	switch p.Agent.Unconfined {
	case "", "refuse", "allow":
	default:
		return bad("agent.unconfined is %q; it must be refuse or allow", p.Agent.Unconfined)
	}
	switch p.Agent.Network {
	case "", "isolated", "open":
	default:
		return bad("agent.network is %q; it must be isolated or open", p.Agent.Network)
	}
	if err := confine.CheckAllow(p.Agent.Allow); err != nil {
		return cairn.Errorf(cairn.EINVALID, "%s: agent.allow: %w", PolicyFile, err).WithHint(cairn.ErrorHint(err))
	}
	// The rule the agent's runs apply (confine.Spec.Pass).
	for _, name := range p.Agent.Env {
		if err := confine.CheckVar(name); err != nil {
			return cairn.Errorf(cairn.EINVALID, "%s: agent.env: %w", PolicyFile, err).WithHint(cairn.ErrorHint(err))
		}
	}
	// What needs the file system or the vault (the folder exists, holds no
	// home, stays clear of .cairn) is checked when an agent is to run
	// (confine.CheckRead).
	if err := confine.CheckReadPaths(p.Agent.Read); err != nil {
		return cairn.Errorf(cairn.EINVALID, "%s: agent.read: %w", PolicyFile, err).WithHint(cairn.ErrorHint(err))
	}
	for _, lists := range [][]string{p.Paths.Protected, p.Paths.Allowed} {
		for _, x := range lists {
			if _, err := cairn.CleanPath(strings.TrimSuffix(x, "/")); err != nil {
				return bad("path %q: %v", x, err)
			}
		}
	}
	for _, t := range p.Paths.Types {
		if !strings.HasPrefix(t, ".") || strings.ContainsAny(t, "/ ") {
			return bad("file type %q must be an extension like .md", t)
		}
	}
	for _, d := range p.Paths.Dotfiles {
		if !strings.HasPrefix(d, ".") || strings.Contains(d, "/") {
			return bad("dotfile %q must be a file name starting with a dot, like .gitignore", d)
		}
	}
	if p.Lint.Types != "" && p.Lint.Types != lint.TypesDeclared {
		return bad("lint.types is %q; it must be declared, or empty for any type", p.Lint.Types)
	}
	if err := compilePolicies(p.Policies); err != nil {
		return err
	}
	for rule, pair := range p.Verdict {
		if !slices.Contains(verdictRules(), rule) {
			return bad("verdicts: unknown rule %q; the rules are %s", rule, strings.Join(verdictRules(), ", "))
		}
		for _, v := range []cairn.Verdict{pair.Agent, pair.Person} {
			switch v {
			case "", cairn.Admit, cairn.Hold, cairn.Reject:
			default:
				return bad("verdicts.%s: %q is not admit, hold or reject", rule, v)
			}
		}
	}
	return nil
}

// ParsePolicy reads cairn.yaml. Unknown keys are errors, so a misspelt
// setting is never silently ignored.
func ParsePolicy(data []byte) (*Policy, error) {
	p := &Policy{}
	if len(bytes.TrimSpace(data)) == 0 {
		return p, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		return nil, cairn.Errorf(cairn.EINVALID, "%s: %v", PolicyFile, strings.TrimPrefix(err.Error(), "yaml: ")).
			WithHint("cairn settings lists the keys it knows.")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Setting describes one key of cairn.yaml.
type Setting struct {
	Key     string `json:"id"`
	Value   string `json:"value"`
	Default string `json:"default"`
	Help    string `json:"help"`
}

// settingKeys are the keys `cairn settings` knows, in order, with help.
var settingKeys = []struct{ key, help string }{
	{"agent.runtime", ""}, // runtimeHelp, from the registry
	{"agent.command", "the command agent's argv as one string (the prompt arrives on stdin); for claude, codex and opencode, the CLI's program"},
	{"agent.timeout", "the longest an agent may run"},
	{"agent.inactivity", "an agent that prints nothing for this long is stopped"},
	{"agent.attempts", "runs of a job when the infrastructure fails"},
	{"agent.workers", "jobs one process runs at once"},
	{"agent.read", "further folders a confined command agent may read (comma-separated absolute paths)"},
	{"agent.env", "variables of cairn's environment passed to a command agent (comma-separated names)"},
	{"agent.unconfined", "without Landlock, refuse (default) or allow a command agent, which then runs unconfined"},
	{"agent.network", "isolated (default): an agent process reaches only its model provider, cairn's tools and agent.allow; open: the machine's network"},
	{"agent.allow", "further endpoints an isolated agent may reach (comma-separated host:port)"},
	{"agent.model", "the model an agent CLI uses (claude, codex, opencode); empty: the CLI's default"},
	{"agent.effort", "the reasoning effort an agent CLI uses, like low, medium or high; empty: the CLI's default"},
	{"agent.turns", "the most turns a claude run, or model calls a built-in agent run, may take"},
	{"agent.budget", "the most one claude or built-in agent run may cost, in US dollars; empty: no bound"},
	{"agent.base_url", "the model provider's API address for an agent CLI (a proxy, a local model); empty: the CLI's own"},
	{"agent.key_env", "the variable of cairn's environment holding the provider's API key; empty: the CLI's usual one"},
	{"agent.provider", "the built-in agent's model API: anthropic, or openai for any OpenAI-compatible one"},
	{"agent.max_tokens", "the most tokens one built-in agent run may read and write"},
	{"agent.price_in", "the model's price in US dollars per million input tokens, for agent.budget and the cost recorded"},
	{"agent.price_out", "the model's price in US dollars per million output tokens"},
	{"sources.max_size", "the largest source accepted"},
	{"paths.protected", "further paths only people may change (comma-separated; folders end in /)"},
	{"paths.allowed", "where agents may write (comma-separated; empty: anywhere not protected)"},
	{"paths.types", "allowed file extensions (comma-separated)"},
	{"paths.dotfiles", "dot files people may keep (comma-separated)"},
	{"lint.strict", "true: pages without a title or type, and orphans, are warnings, not infos"},
	{"lint.types", "declared: a page whose type types/ does not declare gets an info; empty: any type"},
	{"server.rate", "requests a second one token may send to cairn serve, on average"},
	{"server.burst", "requests one token may send to cairn serve at once, above the rate"},
}

// Settings lists every key with its value and default. Verdict overrides
// are listed as verdicts.RULE.agent and verdicts.RULE.person.
func (p *Policy) Settings() []Setting {
	def := &Policy{}
	var out []Setting
	for _, k := range settingKeys {
		v, _ := p.get(k.key)
		d, _ := def.get(k.key)
		help := k.help
		if k.key == "agent.runtime" {
			help = runtimeHelp()
		}
		out = append(out, Setting{Key: k.key, Value: v, Default: d, Help: help})
	}
	for _, rule := range verdictRules() {
		for _, who := range []string{"agent", "person"} {
			key := "verdicts." + rule + "." + who
			v, _ := p.get(key)
			d, _ := def.get(key)
			out = append(out, Setting{Key: key, Value: v, Default: d, Help: verdictHelp[rule]})
		}
	}
	return out
}

// runtimeHelp is agent.runtime's help: the registered runtimes, sorted,
// each with its own few words: "command (any agent CLI, confined) or
// extractive (offline, no key)". It is made when asked for, after every
// runtime has registered.
func runtimeHelp() string {
	var each []string
	for _, f := range agent.Factories() {
		if f.Help == "" {
			each = append(each, f.Name)
		} else {
			each = append(each, f.Name+" ("+f.Help+")")
		}
	}
	switch len(each) {
	case 0:
		return "the agent that integrates sources (no runtime is registered)"
	case 1:
		return "the agent that integrates sources: " + each[0]
	}
	return "the agent that integrates sources: " + strings.Join(each[:len(each)-1], ", ") + " or " + each[len(each)-1]
}

// Get returns the value of one key.
func (p *Policy) Get(key string) (string, error) { return p.get(key) }

func (p *Policy) get(key string) (string, error) {
	switch key {
	case "agent.runtime":
		return p.Runtime(), nil
	case "agent.command":
		return p.Agent.Command, nil
	case "agent.timeout":
		return p.Timeout().String(), nil
	case "agent.inactivity":
		return p.Inactivity().String(), nil
	case "agent.attempts":
		return strconv.Itoa(p.Attempts()), nil
	case "agent.workers":
		return strconv.Itoa(p.Workers()), nil
	case "agent.read":
		return strings.Join(p.Agent.Read, ","), nil
	case "agent.env":
		return strings.Join(p.Agent.Env, ","), nil
	case "agent.unconfined":
		return cmpOr(p.Agent.Unconfined, "refuse"), nil
	case "agent.network":
		return cmpOr(p.Agent.Network, "isolated"), nil
	case "agent.allow":
		return strings.Join(p.Agent.Allow, ","), nil
	case "agent.model":
		return p.Agent.Model, nil
	case "agent.effort":
		return p.Agent.Effort, nil
	case "agent.turns":
		return strconv.Itoa(cmpOr(p.Agent.Turns, DefaultTurns)), nil
	case "agent.budget":
		if p.Agent.Budget == 0 {
			return "", nil
		}
		return strconv.FormatFloat(p.Agent.Budget, 'f', -1, 64), nil
	case "agent.base_url":
		return p.Agent.BaseURL, nil
	case "agent.key_env":
		return p.Agent.KeyEnv, nil
	case "agent.provider":
		return cmpOr(p.Agent.Provider, "anthropic"), nil
	case "agent.max_tokens":
		return strconv.FormatInt(cmpOr(p.Agent.MaxTokens, DefaultMaxTokens), 10), nil
	case "agent.price_in", "agent.price_out":
		v := p.Agent.PriceIn
		if key == "agent.price_out" {
			v = p.Agent.PriceOut
		}
		if v == 0 {
			return "", nil
		}
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case "sources.max_size":
		return humanize.IBytes(uint64(p.MaxSize())), nil
	case "paths.protected":
		return strings.Join(p.Paths.Protected, ","), nil
	case "paths.allowed":
		return strings.Join(p.Paths.Allowed, ","), nil
	case "paths.types":
		return strings.Join(p.Types(), ","), nil
	case "paths.dotfiles":
		return strings.Join(p.Dotfiles(), ","), nil
	case "lint.strict":
		return strconv.FormatBool(p.Lint.Strict), nil
	case "lint.types":
		return p.Lint.Types, nil
	case "server.rate":
		return strconv.FormatFloat(p.Rate(), 'g', -1, 64), nil
	case "server.burst":
		return strconv.Itoa(p.Burst()), nil
	}
	if rest, ok := strings.CutPrefix(key, "verdicts."); ok {
		rule, who, ok := strings.Cut(rest, ".")
		if ok && slices.Contains(verdictRules(), rule) && (who == "agent" || who == "person") {
			return string(p.verdict(rule, who == "agent")), nil
		}
	}
	return "", unknownKey(key)
}

func unknownKey(key string) error {
	var keys []string
	for _, k := range settingKeys {
		keys = append(keys, k.key)
	}
	return cairn.Errorf(cairn.EINVALID, "unknown setting %q", key).
		WithHint("The settings are " + strings.Join(keys, ", ") + ", and verdicts.RULE.agent|person.")
}

// Limits of the settings that take numbers, durations and sizes.
const (
	maxAttempts = 100
	maxWorkers  = 64
	maxDuration = 7 * 24 * time.Hour
	maxSize     = 1 << 40
	maxRate     = 1_000_000
	maxTurns    = 10_000
	maxBudget   = 10_000
)

// checkValue reports what is wrong with value for a key that takes one
// scalar, naming the key and what it accepts: the same words whether the
// value comes from cairn settings set or from a cairn.yaml written by hand.
// Keys that take lists are checked by Validate.
func checkValue(key, value string) error {
	bad := func(want string) error {
		example := settingExample[key]
		if strings.HasPrefix(key, "verdicts.") {
			example = "hold"
		}
		return cairn.Errorf(cairn.EINVALID, "%s must be %s, not %q", key, want, value).
			WithHint(fmt.Sprintf("Try: cairn settings set %s %s", key, example))
	}
	switch key {
	case "agent.timeout", "agent.inactivity":
		d, err := time.ParseDuration(value)
		if err != nil || d < time.Second || d > maxDuration {
			return bad("a duration from 1s to 168h, like 30m or 90s")
		}
	case "agent.attempts", "agent.workers":
		limit := maxAttempts
		if key == "agent.workers" {
			limit = maxWorkers
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > limit {
			return bad(fmt.Sprintf("a whole number from 1 to %d", limit))
		}
	case "agent.turns":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > maxTurns {
			return bad(fmt.Sprintf("a whole number from 1 to %d", maxTurns))
		}
	case "agent.budget":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || !(f > 0 && f <= maxBudget) {
			return bad(fmt.Sprintf("an amount of US dollars above 0, at most %d", maxBudget))
		}
	case "agent.base_url":
		u, err := url.Parse(value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return bad("an http or https address without credentials, like https://api.example.com/v1")
		}
	case "agent.key_env":
		if err := confine.CheckVar(value); err != nil {
			return bad("the name of a variable, like ANTHROPIC_API_KEY")
		}
	case "agent.provider":
		if value != "anthropic" && value != "openai" {
			return bad("anthropic or openai")
		}
	case "agent.max_tokens":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 1000 || n > 1e10 {
			return bad("a whole number of tokens from 1000 to 10000000000")
		}
	case "agent.price_in", "agent.price_out":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || !(f > 0 && f <= 10000) {
			return bad("a price in US dollars per million tokens, above 0, at most 10000")
		}
	case "sources.max_size":
		n, err := humanize.ParseBytes(value)
		if err != nil || n < 1 || n > maxSize {
			return bad("a size from 1 byte to 1TiB, like 64MiB")
		}
	case "lint.strict":
		var b bool
		if yaml.Unmarshal([]byte(value), &b) != nil {
			return bad("true or false")
		}
	case "lint.types":
		if value != lint.TypesDeclared {
			return bad("declared, or empty for any type")
		}
	case "server.rate":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || !(f >= 0.01 && f <= maxRate) {
			return bad(fmt.Sprintf("a number of requests a second from 0.01 to %d", maxRate))
		}
	case "server.burst":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > maxRate {
			return bad(fmt.Sprintf("a whole number from 1 to %d", maxRate))
		}
	default:
		if strings.HasPrefix(key, "verdicts.") {
			switch cairn.Verdict(value) {
			case cairn.Admit, cairn.Hold, cairn.Reject:
			default:
				return bad("admit, hold or reject")
			}
		}
	}
	return nil
}

// settingExample is a good value of each key that takes one, for hints.
var settingExample = map[string]string{
	"agent.timeout": "30m", "agent.inactivity": "180s",
	"agent.attempts": "3", "agent.workers": "2", "sources.max_size": "64MiB", "lint.strict": "true", "lint.types": "declared",
	"server.rate": "100", "server.burst": "200",
	"agent.turns": "120", "agent.budget": "2.5", "agent.base_url": "https://api.example.com/v1",
	"agent.key_env": "ANTHROPIC_API_KEY", "agent.provider": "anthropic", "agent.max_tokens": "2000000",
	"agent.price_in": "3", "agent.price_out": "15",
}

// scalars returns the scalar settings of a cairn.yaml document, by key
// ("agent.workers"); nil when it does not parse.
func scalars(data []byte) map[string]string {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) != 1 {
		return nil
	}
	out := map[string]string{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := prefix+n.Content[i].Value, n.Content[i+1]
			switch val.Kind {
			case yaml.MappingNode:
				walk(val, key+".")
			case yaml.ScalarNode:
				out[key] = val.Value
			}
		}
	}
	walk(doc.Content[0], "")
	return out
}

// CheckPolicyChange runs checkValue on every scalar setting a change of
// cairn.yaml from before (nil: none) to after sets anew, so that a file
// written by hand gets the messages settings set gives, not the YAML
// decoder's. Values the change leaves as they were are not checked again:
// a cairn.yaml an older cairn accepted keeps working, and can be fixed one
// key at a time.
func CheckPolicyChange(before, after []byte) error {
	old := scalars(before)
	for key, value := range scalars(after) {
		if prev, ok := old[key]; ok && prev == value {
			continue
		}
		if settingExample[key] == "" && !strings.HasPrefix(key, "verdicts.") {
			continue // not a scalar setting: ParsePolicy says what is wrong
		}
		if err := checkValue(key, value); err != nil {
			return err
		}
	}
	return nil
}

// SetPolicy returns cairn.yaml (data, possibly empty) with key set to
// value, keeping the file's comments and the order of its keys. The
// result is validated; value "" removes the key (its default applies).
func SetPolicy(data []byte, key, value string) ([]byte, error) {
	if _, err := (&Policy{}).get(key); err != nil {
		return nil, err
	}
	if value != "" {
		if err := checkValue(key, value); err != nil {
			return nil, err
		}
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, cairn.Errorf(cairn.EINVALID, "%s: %v", PolicyFile, err).WithHint("Fix the file by hand, then commit it.")
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, cairn.Errorf(cairn.EINVALID, "%s is not a mapping of settings", PolicyFile).WithHint("Fix the file by hand, then commit it.")
	}
	parts := strings.Split(key, ".")
	var val *yaml.Node
	if value != "" {
		val = &yaml.Node{Kind: yaml.ScalarNode, Value: value}
		if list := slices.Contains([]string{"paths.protected", "paths.allowed", "paths.types", "paths.dotfiles", "agent.read", "agent.env", "agent.allow"}, key); list {
			val = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, item := range strings.Split(value, ",") {
				if item = strings.TrimSpace(item); item != "" {
					val.Content = append(val.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: item})
				}
			}
		} else if key == "agent.command" {
			val.Style = yaml.SingleQuotedStyle
		}
	}
	setNode(root, parts, val)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	if string(bytes.TrimSpace(out)) == "{}" {
		out = nil
	}
	if _, err := ParsePolicy(out); err != nil {
		return nil, err
	}
	return out, nil
}

// setNode sets (val != nil) or removes the value at path in a mapping.
func setNode(m *yaml.Node, path []string, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != path[0] {
			continue
		}
		if len(path) == 1 {
			if val == nil {
				m.Content = slices.Delete(m.Content, i, i+2)
			} else {
				m.Content[i+1] = val
			}
			return
		}
		child := m.Content[i+1]
		if child.Kind != yaml.MappingNode {
			child = &yaml.Node{Kind: yaml.MappingNode}
			m.Content[i+1] = child
		}
		setNode(child, path[1:], val)
		if len(child.Content) == 0 {
			m.Content = slices.Delete(m.Content, i, i+2)
		}
		return
	}
	if val == nil {
		return
	}
	for _, p := range slices.Backward(path[1:]) {
		val = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: p}, val}}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: path[0]}, val)
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
