// Package lint checks a vault's files and reports findings with stable
// identities, so that the admission gates can compare the findings of a
// change with those of its base as multisets.
//
// Rules are pure functions of a file's [Facts]: its parsed page, its links
// and where they lead, and the few vault-wide facts a rule needs (inbound
// links, reachability from index.md, clashing titles and ids, missing
// sources). The index keeps those facts up to date incrementally and calls
// [Check] for the files a change affects; a full build computes the same
// facts from scratch. Either way the findings are the same.
//
// Eva's seven rules keep Eva's ids (broken-link, orphan, missing-title,
// missing-type, missing-source, invalid-source, misplaced-page); the others
// are cairn's. Severities suit real vaults: a plain Obsidian vault without
// frontmatter gets infos, not errors; an Eva brain (eva.json), or a vault
// whose cairn.yaml sets lint.strict, requires titles and types.
package lint

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Severity ranks a finding.
type Severity string

// Severities, from most to least serious.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rank orders severities: error 3, warning 2, info 1, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 3
	case Warning:
		return 2
	case Info:
		return 1
	}
	return 0
}

// Rule ids.
const (
	BrokenLink           = "broken-link"
	Orphan               = "orphan"
	MissingTitle         = "missing-title"
	MissingType          = "missing-type"
	MissingSource        = "missing-source"
	InvalidSource        = "invalid-source"
	MisplacedPage        = "misplaced-page"
	AmbiguousLink        = "ambiguous-link"
	MissingHeading       = "missing-heading"
	DuplicateTitle       = "duplicate-title"
	Unreachable          = "unreachable"
	SourceNotFound       = "source-not-found"
	MalformedFrontmatter = "malformed-frontmatter"
	InvalidEncoding      = "invalid-encoding"
	NonMarkdownFile      = "non-markdown-file"
	CaseCollision        = "case-collision"

	// The schema rules (package schema): a page checked against the type
	// it declares, and a type declaration that cannot be used.
	SchemaRequired    = "schema-required"    // a required field is missing
	SchemaRecommended = "schema-recommended" // a recommended field is missing
	SchemaValue       = "schema-value"       // a field's value breaks its declaration
	SchemaClosed      = "schema-closed"      // a field a closed type does not declare
	SchemaLink        = "schema-link"        // a link field that leads nowhere, or to a page of another type
	SchemaFolder      = "schema-folder"      // a page outside its type's folder
	InvalidType       = "invalid-type"       // a type declaration with an error
	UndeclaredType    = "undeclared-type"    // a page of a type not declared, where the vault asks for declared types
)

// SchemaRules are the rules of package schema; the admission pipeline
// judges their findings in its schema gate.
var SchemaRules = []string{SchemaRequired, SchemaRecommended, SchemaValue, SchemaClosed, SchemaLink, SchemaFolder, InvalidType}

// Rules lists every rule id, Eva's seven first.
var Rules = []string{
	BrokenLink, Orphan, MissingTitle, MissingType, MissingSource, InvalidSource, MisplacedPage,
	AmbiguousLink, MissingHeading, DuplicateTitle, Unreachable, SourceNotFound,
	MalformedFrontmatter, InvalidEncoding, NonMarkdownFile, CaseCollision,
	SchemaRequired, SchemaRecommended, SchemaValue, SchemaClosed, SchemaLink, SchemaFolder, InvalidType, UndeclaredType,
}

// Finding is one problem in one file. Its identity is (Rule, Page,
// Subject); Message is for people and never part of the identity.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Page is the path of the file the finding is about.
	Page string `json:"page"`
	// Subject is what in the file the finding is about: a link's target, a
	// field name, a path. It may be empty.
	Subject string `json:"subject"`
	Message string `json:"message"`
}

// Key returns the finding's identity as one comparable string.
func (f Finding) Key() string { return f.Rule + "\x00" + f.Page + "\x00" + f.Subject }

// ID returns a short stable id for the finding's identity: 16 hex digits
// of the SHA-256 of its key.
func (f Finding) ID() string {
	sum := sha256.Sum256([]byte(f.Key()))
	return hex.EncodeToString(sum[:8])
}

// Sort orders findings by page, rule, subject and message.
func Sort(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		if c := strings.Compare(a.Page, b.Page); c != 0 {
			return c
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		if c := strings.Compare(a.Subject, b.Subject); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

// New returns the findings of change that base does not have, comparing
// identities as multisets: a finding that occurs twice in change and once in
// base is new once. Messages and severities do not matter to the
// comparison, so rewording a message never makes a finding new.
func New(base, change []Finding) []Finding {
	count := make(map[string]int, len(base))
	for _, f := range base {
		count[f.Key()]++
	}
	var out []Finding
	for _, f := range change {
		k := f.Key()
		if count[k] > 0 {
			count[k]--
			continue
		}
		out = append(out, f)
	}
	return out
}

// AtLeast returns the findings whose severity ranks at least min.
func AtLeast(fs []Finding, min Severity) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity.Rank() >= min.Rank() {
			out = append(out, f)
		}
	}
	return out
}
