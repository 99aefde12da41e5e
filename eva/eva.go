// Package eva knows the Eva Brain Standard v1: the manifest eva.json and
// its rules, the seven brain profiles with their modules, starter pages and
// guidance, and the files a new brain of a profile starts with — Eva's
// layout, with the profile's page types declared as cairn types in types/.
//
// The guidance texts are cairn's own, written for the same purposes as
// Eva's.
package eva

import (
	"encoding/json"
	"slices"
	"strings"

	"cairn"
)

// ManifestFile is the marker of an Eva brain, at its root.
const ManifestFile = "eva.json"

// Manifest is what eva.json says.
type Manifest struct {
	Format  string   `json:"format"`
	Version int      `json:"version"`
	Profile string   `json:"profile,omitempty"`
	Modules []string `json:"modules,omitempty"`
}

// ParseManifest reads eva.json and checks it as Eva does: the format is
// eva-brain, the version 1, the profile (when set) one of the seven, and
// the modules (when set) exactly the profile's, in order. A manifest Eva
// would refuse is an EINVALID error that names the file and the problem.
func ParseManifest(data []byte) (*Manifest, error) {
	bad := func(format string, args ...any) error {
		return cairn.Errorf(cairn.EINVALID, "%s: "+format, append([]any{ManifestFile}, args...)...).
			WithHint(`An Eva brain's eva.json is {"format":"eva-brain","version":1,"profile":"research"}; the profiles are ` + strings.Join(IDs(), ", ") + ".")
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&m); err != nil {
		return nil, bad("it is not valid JSON: %v", err)
	}
	switch {
	case m.Format != "eva-brain":
		return nil, bad("the format is %q, not \"eva-brain\"", m.Format)
	case m.Version != 1:
		return nil, bad("the brain uses version %d of the standard; cairn reads version 1", m.Version)
	}
	if m.Profile == "" {
		m.Profile = "blank"
	}
	p, ok := Lookup(m.Profile)
	if !ok {
		return nil, bad("the profile %q is not one of %s", m.Profile, strings.Join(IDs(), ", "))
	}
	if len(m.Modules) > 0 && !slices.Equal(m.Modules, p.Modules) {
		return nil, bad("the modules %s are not the %s profile's (%s, in that order)", strings.Join(m.Modules, ", "), p.ID, strings.Join(p.Modules, ", "))
	}
	return &m, nil
}

// Settings are a new brain's settings, written to EVA.md.
type Settings struct {
	// Language is the working language. Default English.
	Language string
	// Runtime is the agent runtime: claude, codex or opencode (or as
	// EVA.md names them: "Claude CLI", "Codex CLI", "OpenCode (local)").
	// Default none: EVA.md names none, so Eva runs Claude and cairn its
	// default agent.
	Runtime string
	// Purpose says what the brain is for, at most 240 characters.
	Purpose string
}

// runtimes are the agent runtimes EVA.md names, as Eva writes them.
var runtimes = []string{"Claude CLI", "Codex CLI", "OpenCode (local)"}

// runtimeLabel returns EVA.md's name of a runtime given as claude, codex or
// opencode (or as EVA.md names it), or "" when it is none of them.
func runtimeLabel(v string) string {
	l := strings.ToLower(v)
	for _, r := range runtimes {
		if strings.Contains(l, strings.ToLower(strings.Fields(r)[0])) {
			return r
		}
	}
	return ""
}

// Check reports what is wrong with settings, as Eva checks them.
func (s Settings) Check() error {
	switch {
	case s.Runtime != "" && runtimeLabel(s.Runtime) == "":
		return cairn.Errorf(cairn.EINVALID, "the agent runtime %q is not claude, codex or opencode", s.Runtime).
			WithHint("Try: --runtime claude")
	case len(strings.Join(strings.Fields(s.Language), " ")) > 48:
		return cairn.Errorf(cairn.EINVALID, "the working language is longer than 48 characters").WithHint("Name a language, like English or Deutsch.")
	case len(s.Purpose) > 240:
		return cairn.Errorf(cairn.EINVALID, "the purpose is longer than 240 characters").WithHint("Say what the brain is for in a sentence or two.")
	}
	return nil
}

// Profile is one of Eva's brain profiles: a lens on what the brain keeps.
type Profile struct {
	ID, Label string
	Modules   []string
	// Starter is the title of the starter page, analyses/starting-point.md,
	// and Sections its sections.
	Starter  string
	Sections []string
	// MaintenanceFocus goes into EVA.md and the starter page;
	// IngestGuidance into ingest prompts; MaintenanceGuidance into health
	// checks.
	MaintenanceFocus, IngestGuidance, MaintenanceGuidance string
	// Types are the profile's own page types, beside the four every brain
	// has (entity, concept, summary, analysis).
	Types []Type
}

// Type is a page type a profile declares: its name and its declaration's
// frontmatter lines (without title), and what it is for.
type Type struct {
	Name, Doc string
	Decl      string
}

// Lookup returns the profile with the given id.
func Lookup(id string) (Profile, bool) {
	i := slices.IndexFunc(profiles, func(p Profile) bool { return p.ID == id })
	if i < 0 {
		return Profile{}, false
	}
	return profiles[i], true
}

// IDs returns the profiles' ids, in Eva's order.
func IDs() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.ID
	}
	return out
}

// Profiles returns every profile, in Eva's order.
func Profiles() []Profile { return slices.Clone(profiles) }

// coreTypes are the page types of every brain.
var coreTypes = []Type{
	{"entity", "A person, organisation, place, project or thing the brain keeps track of.",
		"folder: entities\nrequires: [title]\nrecommends: [updated]\nfields:\n  updated: date\n  sources: string\n"},
	{"concept", "An idea, mechanism or theme that several sources touch.",
		"folder: concepts\nrequires: [title]\nrecommends: [updated]\nfields:\n  updated: date\n  sources: string\n"},
	{"summary", "The digest of one source in raw/: what it says, in the brain's words, citing it.",
		"folder: summaries\nrequires: [title, source]\nrecommends: [updated]\nfields:\n  source: {type: string, pattern: '^raw/'}\n  updated: date\n"},
	{"analysis", "A saved answer, comparison or synthesis worth keeping.",
		"folder: analyses\nrequires: [title]\nrecommends: [updated]\nfields:\n  updated: date\n  sources: string\n"},
}

// AllTypes returns every type a brain of the profile declares: the core
// ones, then the profile's.
func (p Profile) AllTypes() []Type { return slices.Concat(coreTypes, p.Types) }
