package admit

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"cairn"
	"cairn/lint"
)

// Origin says whose change a proposal is; it picks the column of the
// verdict table.
type Origin string

// Origins.
const (
	OriginAgent  Origin = "agent"  // an agent or a job
	OriginPerson Origin = "person" // a user
	OriginSystem Origin = "system" // cairn itself: sources it stored, log entries it wrote
)

// OriginOf returns the origin of a principal's changes.
func OriginOf(p cairn.Principal) Origin {
	switch {
	case p == cairn.PrincipalSystem:
		return OriginSystem
	case strings.HasPrefix(string(p), "user:"):
		return OriginPerson
	}
	return OriginAgent
}

// Gates, which are also the rows of the verdict table (the keys of
// verdicts: in cairn.yaml).
const (
	GateProtected = "protected"      // a change under raw/, to log.md or to a protected path
	GateContract  = "contract"       // a change to the vault's contract
	GateOutside   = "outside"        // a write outside the agent's workspace
	GateFileType  = "file-type"      // a script, executable, dot file, or a type or place not allowed
	GateMisplaced = "misplaced-page" // a path that recreates an absolute one
	GateDeletion  = "deletion"       // a file deleted
	GateRename    = "rename"         // a file renamed (same content, new path)
	GateLint      = "lint"           // a new lint finding of severity warning or error
	GateSchema    = "schema"         // a new error against a declared type, or in a type's declaration
	GateConflict  = "conflict"       // main moved and the change does not merge onto it
	// GateReview holds a change its submitter proposed for review
	// (Request.Propose); it is not in the verdict table.
	GateReview = "review"
)

// defaultVerdicts is the verdict table: for each gate, what an agent's
// change and a person's change get.
var defaultVerdicts = map[string]VerdictPair{
	GateProtected: {cairn.Reject, cairn.Hold},
	GateContract:  {cairn.Reject, cairn.Admit},
	GateOutside:   {cairn.Reject, cairn.Reject},
	GateFileType:  {cairn.Reject, cairn.Hold},
	GateMisplaced: {cairn.Reject, cairn.Hold},
	GateDeletion:  {cairn.Hold, cairn.Admit},
	GateRename:    {cairn.Hold, cairn.Admit},
	GateLint:      {cairn.Hold, cairn.Admit},
	GateSchema:    {cairn.Hold, cairn.Hold},
	GateConflict:  {cairn.Hold, cairn.Hold},
}

var verdictHelp = map[string]string{
	GateProtected: "a change under raw/, to log.md or to paths.protected",
	GateContract:  "a change to cairn.yaml (or eva.json, EVA.md, AGENTS.md, CLAUDE.md); held at least when it arrives by import or merge",
	GateOutside:   "an agent wrote outside its workspace",
	GateFileType:  "a script, executable, dot file, or a file type or place not allowed",
	GateMisplaced: "a path that recreates an absolute one (private/var/...)",
	GateDeletion:  "a file deleted",
	GateRename:    "a file renamed",
	GateLint:      "a new lint finding of severity warning or error",
	GateSchema:    "a page that breaks its declared type (a missing required field, a bad value), or a type declaration with an error",
	GateConflict:  "main moved and the change does not merge onto it",
}

// verdictRules lists the rows of the verdict table that cairn.yaml may
// change, in a fixed order. A conflict is not among them: a change that
// does not merge onto main is never admitted (an agent's is held, a
// person's is returned to settle).
func verdictRules() []string {
	return []string{GateProtected, GateContract, GateOutside, GateFileType, GateMisplaced,
		GateDeletion, GateRename, GateLint, GateSchema}
}

// verdict returns the policy's verdict for a gate and a column.
func (p *Policy) verdict(gate string, agent bool) cairn.Verdict {
	def := defaultVerdicts[gate]
	if gate == GateConflict {
		return def.Agent
	}
	over := p.Verdict[gate]
	if agent {
		return cmpOr(over.Agent, def.Agent)
	}
	return cmpOr(over.Person, def.Person)
}

// VerdictFor returns what a finding of gate means for a change of origin.
// cairn's own changes are always admitted; a conflict holds them too.
func (p *Policy) VerdictFor(gate string, o Origin) cairn.Verdict {
	if o == OriginSystem {
		if gate == GateConflict {
			return cairn.Hold
		}
		return cairn.Admit
	}
	return p.verdict(gate, o == OriginAgent)
}

// bringsFiles reports whether a route brings into main files the person
// did not write themselves: an import (of a folder or a git history) or a
// merge of a branch. A person's change to the contract that arrives by one
// of them is held, at least, whatever verdicts.contract.person says (that
// setting is for the person's own changes), and the founding commit does
// not admit it either: the contract decides what agents run and what they
// are told, and no one admits that without seeing it.
func bringsFiles(route string) bool { return route == "import" || route == "merge" }

// contractFiles are the vault's contract at the root: cairn's and Eva's.
var contractFiles = []string{PolicyFile, "eva.json", "EVA.md", "AGENTS.md", "CLAUDE.md"}

// IsContract reports whether path is a file of the vault's contract
// (cairn.yaml, eva.json, EVA.md, AGENTS.md, CLAUDE.md at the root, in any
// case): what decides what agents run, what they are told and what the
// gates say.
func IsContract(path string) bool {
	return slices.ContainsFunc(contractFiles, func(cf string) bool { return strings.EqualFold(path, cf) })
}

// scriptTypes are extensions of programs and scripts.
var scriptTypes = []string{
	".sh", ".bash", ".zsh", ".fish", ".ksh", ".csh", ".py", ".pyw", ".rb", ".pl", ".pm", ".php", ".lua", ".tcl",
	".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".ps1", ".psm1", ".bat", ".cmd", ".com", ".vbs",
	".exe", ".dll", ".so", ".dylib", ".bin", ".elf", ".app", ".jar", ".class", ".wasm", ".msi", ".deb", ".rpm",
	".scpt", ".command", ".applescript", ".awk", ".sed",
}

// Skipped is a file a workspace held that cannot be a vault file (a
// symbolic link, a socket, a name that is not a vault path).
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// within reports whether p is the path x or under the folder x ("dir/").
func within(p, x string) bool {
	if strings.HasSuffix(x, "/") {
		return strings.HasPrefix(strings.ToLower(p), strings.ToLower(x))
	}
	return strings.EqualFold(p, x)
}

// gateChanges runs the path gates on the changes of a proposal and returns
// their findings (verdicts not yet set). p is the policy before the change;
// next, when the change writes or deletes cairn.yaml, the policy after it.
// script reports whether a written file's content starts with #!.
func (p *Policy) gateChanges(changes []cairn.Change, next *Policy, script func(cairn.Entry) bool, o Origin) []cairn.Finding {
	var out []cairn.Finding
	add := func(gate, rule, page, format string, args ...any) {
		out = append(out, cairn.Finding{Gate: gate, Rule: rule, Page: page, Subject: page, Message: fmt.Sprintf(format, args...)})
	}
	protected := append([]string{"raw/", "log.md"}, p.Paths.Protected...)
	var agent string
	if next != nil {
		agent = agentChange(p, next)
	}
	for _, c := range changes {
		paths := []string{c.Path}
		if c.Kind == cairn.Renamed {
			paths = append(paths, c.Old.Path)
		}
		for _, x := range paths {
			switch {
			case slices.ContainsFunc(protected, func(pr string) bool { return within(x, pr) }):
				rule := "protected-path"
				switch {
				case within(x, "raw/"):
					rule = "raw"
				case within(x, "log.md"):
					rule = "log"
				}
				add(GateProtected, rule, x, "%s %s: %s", x, c.Kind, protectedWhat(rule, o))
			case slices.ContainsFunc(contractFiles, func(cf string) bool { return strings.EqualFold(x, cf) }):
				if x == PolicyFile && agent != "" {
					add(GateContract, "contract", x, "%s %s: it is the vault's contract; %s", x, c.Kind, agent)
				} else {
					add(GateContract, "contract", x, "%s %s: it is the vault's contract", x, c.Kind)
				}
			}
		}
		switch c.Kind {
		case cairn.Deleted:
			add(GateDeletion, "delete", c.Path, "%s deleted", c.Path)
			continue
		case cairn.Renamed:
			add(GateRename, "rename", c.Path, "%s renamed from %s", c.Path, c.Old.Path)
		}
		out = append(out, p.gateFile(c.New, script, o)...)
	}
	return out
}

// agentChange says what a change of cairn.yaml from before to after does to
// the agent ingests run (agent.runtime) and the command agent's command, or
// "" when it changes neither. The contract finding of cairn.yaml carries it
// in its message, on every route, so that nobody admits or accepts such a
// change without seeing the command that runs from then on, or the one
// that no longer does.
//
// The other settings that widen what an agent may do are named too, with
// their new values: agent.read (what it may read), agent.env (which of
// cairn's variables, secrets perhaps, it gets), agent.base_url (where its
// key goes), agent.key_env (which key), agent.unconfined, agent.network
// and agent.allow (what it may reach).
func agentChange(before, after *Policy) string {
	var parts []string
	bRun, aRun := before.Runtime(), after.Runtime()
	bCmd, aCmd := before.Agent.Command, after.Agent.Command
	switch {
	case bRun == aRun && bCmd == aCmd:
	case aRun == "command" && bRun == "command":
		parts = append(parts, fmt.Sprintf("ingests will run the command %q (agent.command), not %q", aCmd, bCmd))
	case aRun == "command":
		parts = append(parts, fmt.Sprintf("ingests will run the command %q (agent.runtime: command)", aCmd))
	case bRun == "command":
		parts = append(parts, fmt.Sprintf("ingests will run the %s agent, no longer the command %q", aRun, bCmd))
	case bRun != aRun:
		parts = append(parts, fmt.Sprintf("ingests will run the %s agent, not the %s agent (agent.runtime)", aRun, bRun))
		if bCmd != aCmd {
			parts = append(parts, fmt.Sprintf("agent.command becomes %q", aCmd))
		}
	case aRun != "extractive":
		parts = append(parts, fmt.Sprintf("the %s agent's program becomes %q (agent.command), not %q", aRun, aCmd, bCmd))
	default:
		parts = append(parts, fmt.Sprintf("agent.command becomes %q, which ingests run once agent.runtime is command (it is %s)", aCmd, aRun))
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "nothing more"
		}
		return strings.Join(xs, ", ")
	}
	if !slices.Equal(before.Agent.Read, after.Agent.Read) {
		parts = append(parts, "agents may also read "+list(after.Agent.Read)+" (agent.read)")
	}
	if !slices.Equal(before.Agent.Env, after.Agent.Env) {
		parts = append(parts, "agents get the variables "+list(after.Agent.Env)+" (agent.env)")
	}
	if before.Agent.BaseURL != after.Agent.BaseURL {
		parts = append(parts, fmt.Sprintf("agents talk to the model provider at %q, with its key (agent.base_url)", cmpOr(after.Agent.BaseURL, "their CLI's own")))
	}
	if before.Agent.KeyEnv != after.Agent.KeyEnv {
		parts = append(parts, fmt.Sprintf("agents get the key in %q (agent.key_env)", cmpOr(after.Agent.KeyEnv, "their CLI's usual variable")))
	}
	if before.Agent.Unconfined != after.Agent.Unconfined {
		parts = append(parts, fmt.Sprintf("agent.unconfined becomes %q", cmpOr(after.Agent.Unconfined, "refuse")))
	}
	if cmpOr(before.Agent.Network, "isolated") != cmpOr(after.Agent.Network, "isolated") {
		parts = append(parts, fmt.Sprintf("agent.network becomes %q", cmpOr(after.Agent.Network, "isolated")))
	}
	if !slices.Equal(before.Agent.Allow, after.Agent.Allow) {
		parts = append(parts, "agents may also reach "+list(after.Agent.Allow)+" (agent.allow)")
	}
	return strings.Join(parts, "; ")
}

// protectedWhat says why a protected path is protected, to whom.
func protectedWhat(rule string, o Origin) string {
	var what string
	switch rule {
	case "raw":
		what = "sources under raw/ are immutable"
	case "log":
		what = "log.md is the log cairn keeps"
	default:
		what = "it is protected (paths.protected in cairn.yaml)"
	}
	if o == OriginAgent {
		return what + ", and agents may not change it"
	}
	return what + "; a person's change to it needs a review"
}

// gateFile checks one written file: its type, its name and its place.
func (p *Policy) gateFile(e cairn.Entry, script func(cairn.Entry) bool, o Origin) []cairn.Finding {
	var out []cairn.Finding
	add := func(rule, format string, args ...any) {
		out = append(out, cairn.Finding{Gate: GateFileType, Rule: rule, Page: e.Path, Subject: e.Path, Message: fmt.Sprintf(format, args...)})
	}
	name := path.Base(e.Path)
	ext := strings.ToLower(path.Ext(name))
	isContract := slices.ContainsFunc(contractFiles, func(cf string) bool { return strings.EqualFold(e.Path, cf) })
	switch {
	case slices.ContainsFunc(strings.Split(e.Path, "/"), func(seg string) bool { return strings.HasPrefix(seg, ".") }):
		if o == OriginAgent || !slices.Contains(p.Dotfiles(), e.Path) {
			add("dotfile", "%s is a dot file or in a dot folder", e.Path)
		}
	case slices.Contains(scriptTypes, ext):
		add("script", "%s is a script or program (%s)", e.Path, ext)
	case e.Mode == cairn.ModeExecutable:
		add("executable", "%s is executable", e.Path)
	case script(e):
		add("script", "%s starts with #!, so it is a script", e.Path)
	case !isContract && !slices.Contains(p.Types(), ext) && !within(e.Path, "raw/"):
		what := "has no extension"
		if ext != "" {
			what = "is a " + ext + " file"
		}
		add("type", "%s %s, which paths.types does not allow", e.Path, what)
	}
	if o == OriginAgent && len(p.Paths.Allowed) > 0 && !slices.ContainsFunc(p.Paths.Allowed, func(a string) bool { return within(e.Path, a) }) {
		add("path", "%s is outside the places agents may write (paths.allowed: %s)", e.Path, strings.Join(p.Paths.Allowed, ", "))
	}
	return out
}

// isScript reports whether content starts with a shebang.
func isScript(data []byte) bool { return len(data) > 2 && data[0] == '#' && data[1] == '!' }

// gateSkipped turns files a workspace held but the vault cannot (links,
// special files) into findings.
func gateSkipped(skipped []Skipped) []cairn.Finding {
	var out []cairn.Finding
	for _, s := range skipped {
		out = append(out, cairn.Finding{Gate: GateFileType, Rule: "special", Page: s.Path, Subject: s.Path,
			Message: fmt.Sprintf("%s cannot be a vault file: %s", s.Path, s.Reason)})
	}
	return out
}

// gateOutside turns writes outside the workspace into findings.
func gateOutside(paths []string) []cairn.Finding {
	var out []cairn.Finding
	for _, x := range paths {
		out = append(out, cairn.Finding{Gate: GateOutside, Rule: "outside-write", Subject: x,
			Message: fmt.Sprintf("the agent wrote %s, outside its workspace", x)})
	}
	return out
}

// gateLint turns new lint findings into gate findings: misplaced pages have
// their own row, any other new finding of severity warning or error is a
// lint regression.
func gateLint(fs []lint.Finding) []cairn.Finding {
	var out []cairn.Finding
	for _, f := range fs {
		if f.Severity.Rank() < lint.Warning.Rank() {
			continue
		}
		gate := GateLint
		switch {
		case f.Rule == lint.MisplacedPage:
			gate = GateMisplaced
		case f.Severity == lint.Error && slices.Contains(lint.SchemaRules, f.Rule):
			// A missing recommended field or a page out of its folder
			// is a warning, judged as lint is.
			gate = GateSchema
		}
		out = append(out, cairn.Finding{Gate: gate, Rule: f.Rule, Page: f.Page, Subject: f.Subject,
			Severity: string(f.Severity), Message: f.Message})
	}
	return out
}

// gateConflicts turns merge conflicts into findings.
func gateConflicts(cs []cairn.Conflict) []cairn.Finding {
	var out []cairn.Finding
	for _, c := range cs {
		subject := c.Path
		if c.Field != "" {
			subject += "#" + c.Field
		}
		out = append(out, cairn.Finding{Gate: GateConflict, Rule: string(c.Kind), Page: c.Path, Subject: subject,
			Message: fmt.Sprintf("%s: main changed it too (%s conflict)", c.Path, c.Kind)})
	}
	return out
}

// judge sets the verdict of each finding of a change that came by route
// and returns the worst. A person's change to the contract that brings in
// files the person did not write (bringsFiles) is held at least. founding
// is a person's change into an empty main (adopting a folder, an import
// into a new vault), which establishes raw/, log.md and the contract rather
// than changing them: its findings are admitted, but for a conflict and for
// a contract that arrived by such a route.
func (p *Policy) judge(fs []cairn.Finding, o Origin, route string, founding bool) cairn.Verdict {
	v := cairn.Admit
	for i := range fs {
		f := &fs[i]
		switch {
		case f.Gate != GatePolicy:
			f.Verdict = p.VerdictFor(f.Gate, o)
		case o == OriginSystem:
			f.Verdict = cairn.Admit // cairn's own changes are always admitted
		}
		switch {
		case f.Gate == GateContract && o == OriginPerson && bringsFiles(route):
			f.Verdict = cairn.Worst(f.Verdict, cairn.Hold)
		case founding && o == OriginPerson && f.Gate != GateConflict:
			f.Verdict = cairn.Admit
		}
		v = cairn.Worst(v, f.Verdict)
	}
	return v
}
