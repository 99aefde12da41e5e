package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn/lint"
	"cairn/markdown"
	"cairn/schema"
)

const person = `---
title: Person
extends: entity
folder: people
closed: true
requires: [name]
recommends: [email]
fields:
  name: {type: string, min_length: 2}
  born: date
  email: {type: string, format: email}
  homepage: {type: string, format: uri}
  employer: link to organization
  friends: list of link to person
  tags: list of string
  age: {type: integer, min: 0, max: 150}
  status: {enum: [active, retired]}
  code: {type: string, pattern: '^[A-Z]{3}$'}
  retired_on: date
when:
  - field: status
    is: retired
    then: {requires: [retired_on]}
---
A person the vault knows.
`

const entity = `---
fields:
  source: string
  summary: string
recommends: [summary]
---
`

const organization = "fields:\n  name: string\nrequires: [name]\n"

func set(t *testing.T, files map[string]string) *schema.Set {
	t.Helper()
	var decls []schema.Declaration
	for p, d := range files {
		decls = append(decls, schema.Declaration{Path: p, Data: []byte(d)})
	}
	return schema.Load(decls)
}

func ids(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Rule+" "+string(f.Severity)+" "+f.Subject)
	}
	return out
}

// facts parses a page and resolves its frontmatter links by the table
// resolved: path → type of the page it leads to ("-" for no page).
func facts(path, src string, resolved map[string]string) *lint.Facts {
	p := markdown.Parse(path, []byte(src))
	f := &lint.Facts{Path: path, Kind: lint.Classify(path), Page: p, LinkTypes: map[string]string{}}
	for _, l := range p.Links {
		res := markdown.Resolution{Status: markdown.StatusBroken}
		if typ, ok := resolved[l.Target]; ok && typ != "-" {
			dst := l.Target + ".md"
			res = markdown.Resolution{Status: markdown.StatusResolved, Path: dst}
			f.LinkTypes[dst] = typ
		}
		f.Links = append(f.Links, lint.Link{Link: l, Res: res})
	}
	return f
}

func TestCheck(t *testing.T) {
	s := set(t, map[string]string{"types/person.md": person, "types/entity.md": entity, "types/organization.yaml": organization})
	links := map[string]string{"Acme": "organization", "Bob": "person", "Notes": "note", "Gone": "-"}
	for _, tc := range []struct {
		name, path, src string
		want            []string
	}{
		{"Conforming", "people/ann.md", "---\ntype: person\nname: Ann\nemail: ann@example.org\nsummary: s\nemployer: \"[[Acme]]\"\nfriends: [\"[[Bob]]\"]\n---\n", nil},
		{"MissingRequiredAndRecommended", "people/ann.md", "---\ntype: person\n---\n",
			[]string{"schema-recommended warning email", "schema-recommended warning summary", "schema-required error name"}},
		{"EmptyCountsAsMissing", "people/ann.md", "---\ntype: person\nname:\nemail: a@b.org\nsummary: s\n---\n", []string{"schema-required error name"}},
		{"BadValues", "people/ann.md", "---\ntype: person\nname: A\nemail: not-an-email\nsummary: s\nborn: 2024-13-45\nage: 200\nstatus: gone\ncode: abc\ntags: [1, x]\nhomepage: 'not a uri'\n---\n",
			[]string{"schema-value error age", "schema-value error born", "schema-value error code", "schema-value error email", "schema-value error homepage", "schema-value error name", "schema-value error status", "schema-value error tags"}},
		{"Closed", "people/ann.md", "---\ntype: person\nname: Ann\nemail: a@b.org\nsummary: s\nshoe: 42\ntags: [x]\n---\n", []string{"schema-closed error shoe"}},
		{"Conditional", "people/ann.md", "---\ntype: person\nname: Ann\nemail: a@b.org\nsummary: s\nstatus: retired\n---\n", []string{"schema-required error retired_on"}},
		{"ConditionMet", "people/ann.md", "---\ntype: person\nname: Ann\nemail: a@b.org\nsummary: s\nstatus: retired\nretired_on: 2020-01-02\n---\n", nil},
		{"Folder", "notes/ann.md", "---\ntype: person\nname: Ann\nemail: a@b.org\nsummary: s\n---\n", []string{"schema-folder warning folder"}},
		{"LinkToWrongType", "people/ann.md", "---\ntype: person\nname: Ann\nemail: a@b.org\nsummary: s\nemployer: \"[[Notes]]\"\nfriends: [\"[[Acme]]\"]\n---\n",
			[]string{"schema-link error employer", "schema-link error friends"}},
		{"BrokenLink", "people/ann.md", "---\ntype: person\nname: Ann\nemail: a@b.org\nsummary: s\nemployer: \"[[Gone]]\"\n---\n", []string{"schema-link error employer"}},
		{"NotALink", "people/ann.md", "---\ntype: person\nname: Ann\nemail: a@b.org\nsummary: s\nemployer: Acme\n---\n", []string{"schema-value error employer"}},
		{"UndeclaredTypeIsOpen", "notes/x.md", "---\ntype: musing\nwhatever: 1\n---\n", nil},
		{"NoType", "notes/x.md", "# x\n", nil},
		{"Inherited", "orgs/acme.md", "---\ntype: organization\n---\n", []string{"schema-required error name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(s.Check(facts(tc.path, tc.src, links)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
				for _, f := range s.Check(facts(tc.path, tc.src, links)) {
					t.Log(f.Message)
				}
			}
		})
	}
}

func TestCheck_MessagesNameTheFieldAndTheType(t *testing.T) {
	s := set(t, map[string]string{"types/person.md": person, "types/entity.md": entity})
	fs := s.Check(facts("people/a.md", "---\ntype: person\nname: Ann\nsummary: s\nemail: a@b.org\nage: 200\nstatus: retired\n---\n", nil))
	var msgs []string
	for _, f := range fs {
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"age: maximum: got 200, want 150", "field age, an integer", "types/person.md", "retired_on (required when status is retired"} {
		if !strings.Contains(all, want) {
			t.Errorf("messages lack %q:\n%s", want, all)
		}
	}
}

func TestLoad_BadDeclarations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		path  string // the declaration that gets the finding
		want  string // in its message
	}{
		{"ExtendsItself", map[string]string{"types/a.md": "---\nextends: a\n---\n"}, "types/a.md", "extends itself (a → a)"},
		{"Cycle", map[string]string{"types/a.md": "---\nextends: b\n---\n", "types/b.md": "---\nextends: a\n---\n"}, "types/a.md", "extends itself"},
		{"MissingParent", map[string]string{"types/a.md": "---\nextends: nothing\n---\n"}, "types/a.md", "extends nothing, which is not declared"},
		{"BrokenParent", map[string]string{"types/a.md": "---\nextends: b\n---\n", "types/b.md": "---\nfields:\n  x: {pattern: '('}\n---\n"}, "types/a.md", "extends b, which has errors"},
		{"InvalidPattern", map[string]string{"types/a.md": "---\nfields:\n  x: {pattern: '[a-'}\n---\n"}, "types/a.md", "invalid pattern \"[a-\""},
		{"UnknownDataType", map[string]string{"types/a.md": "---\nfields:\n  x: colour\n---\n"}, "types/a.md", "unknown data type \"colour\""},
		{"UnknownKey", map[string]string{"types/a.md": "---\nrequire: [x]\n---\n"}, "types/a.md", "unknown key \"require\""},
		{"UnknownFormat", map[string]string{"types/a.md": "---\nfields:\n  x: {type: string, format: phone}\n---\n"}, "types/a.md", "unknown format phone"},
		{"MinAboveMax", map[string]string{"types/a.md": "---\nfields:\n  x: {type: number, min: 3, max: 1}\n---\n"}, "types/a.md", "min 3 is above max 1"},
		{"ListOfLists", map[string]string{"types/a.md": "---\nfields:\n  x: list of list of string\n---\n"}, "types/a.md", "items cannot be lists"},
		{"DeclaredTwice", map[string]string{"types/a.md": "---\n---\n", "types/a.yaml": "closed: false\n"}, "types/a.yaml", "declared twice"},
		{"MalformedYAML", map[string]string{"types/a.yaml": "fields: [unclosed\n"}, "types/a.yaml", "not valid YAML"},
		{"ClosedRequiresUndeclared", map[string]string{"types/a.md": "---\nclosed: true\nrequires: [x]\n---\n"}, "types/a.md", "does not declare it"},
		{"BadWhen", map[string]string{"types/a.md": "---\nwhen: [{is: 1}]\n---\n"}, "types/a.md", "must name a field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := set(t, tc.files)
			fs := s.Check(&lint.Facts{Path: tc.path, Kind: lint.Classify(tc.path)})
			if len(fs) == 0 {
				t.Fatalf("no finding on %s", tc.path)
			}
			var msgs []string
			for _, f := range fs {
				if f.Rule != lint.InvalidType || f.Severity != lint.Error || f.Page != tc.path {
					t.Errorf("finding %+v, want an invalid-type error on %s", f, tc.path)
				}
				msgs = append(msgs, f.Message)
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.want) {
				t.Errorf("messages %q lack %q", msgs, tc.want)
			}
			// A page of a broken type is not judged by it.
			if typ := s.Type("a"); typ != nil && !typ.Broken {
				t.Errorf("type a is not marked broken")
			}
			if fs := s.Check(facts("x.md", "---\ntype: a\n---\n", nil)); len(fs) != 0 {
				t.Errorf("a page of a broken type got %v", ids(fs))
			}
		})
	}
}

func TestChanged(t *testing.T) {
	before := set(t, map[string]string{"types/person.md": person, "types/entity.md": entity, "types/organization.yaml": organization})
	same := set(t, map[string]string{"types/person.md": person, "types/entity.md": entity, "types/organization.yaml": organization})
	if got := before.Changed(same); len(got) != 0 {
		t.Errorf("Changed of an equal set = %v", got)
	}
	// A parent's change changes its children; a new type is changed.
	after := set(t, map[string]string{"types/person.md": person, "types/entity.md": strings.Replace(entity, "[summary]", "[source]", 1),
		"types/organization.yaml": organization, "types/place.md": "---\n---\n"})
	if diff := cmp.Diff([]string{"entity", "person", "place"}, before.Changed(after)); diff != "" {
		t.Errorf("Changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"entity", "person", "place"}, after.Changed(before)); diff != "" {
		t.Errorf("Changed back (-want +got):\n%s", diff)
	}
}

func TestJSONSchema(t *testing.T) {
	s := set(t, map[string]string{"types/person.md": person, "types/entity.md": entity, "types/organization.yaml": organization})
	doc := s.Type("person").JSONSchema()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"required":["name"]`, `"additionalProperties":false`,
		`"born":{"format":"date","type":"string"}`, `"x-cairn-link-to":"organization"`, `"x-cairn-recommends":["email","summary"]`, `"summary":{"type":"string"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema lacks %s:\n%s", want, b)
		}
	}
	if got := s.LinkFields("person"); !cmp.Equal(got, []string{"employer", "friends"}) {
		t.Errorf("LinkFields = %v", got)
	}
	if !s.Is("person", "entity") || s.Is("entity", "person") {
		t.Error("Is does not follow extends")
	}
}

// TestCheck_Values holds the value checks' meaning, as JSON Schema gives
// it: numbers without a fraction are integers, enum members compare as
// JSON values, list bounds count items, an item's problem names its place.
func TestCheck_Values(t *testing.T) {
	const typ = `---
fields:
  n: integer
  x: {type: number, min: 0.5}
  at: datetime
  friends: {type: list, items: {type: string, pattern: '^[a-z]+$'}, min_length: 1, max_length: 2}
  level: {enum: [low, 3]}
  ok: boolean
when:
  - field: level
    is: [3]
    then: {requires: [ok]}
---
`
	s := set(t, map[string]string{"types/thing.md": typ})
	for _, tc := range []struct {
		name, fm string
		want     string // the message of the one finding, or "" for none
	}{
		{"IntegerWithoutFraction", "n: 2.0", ""},
		{"IntegerWithFraction", "n: 2.5", "n: got number, want integer"},
		{"Minimum", "x: 0.4", "x: minimum: got 0.4, want 0.5"},
		{"DateTime", "at: 2024-01-02T03:04:05Z", ""},
		{"DateTimeLowerCase", "at: 2024-01-02t03:04:05z", ""},
		{"NotADateTime", "at: 2024-01-02 03:04", "is not valid date-time"},
		{"TooManyItems", "friends: [a, b, c]", "friends: maxItems: got 3, want 2"},
		{"ItemBreaksPattern", "friends: [a, B]", "friends.1: 'B' does not match pattern '^[a-z]+$'"},
		{"EnumByValue", "level: 3.0\nok: true", ""},
		{"EnumMiss", "level: high", "level: value must be one of 'low', 3"},
		{"ConditionByValue", "level: 3", "a thing must have ok (required when level is 3, by types/thing.md)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := s.Check(facts("things/a.md", "---\ntype: thing\n"+tc.fm+"\n---\n", nil))
			switch {
			case tc.want == "" && len(fs) != 0:
				t.Errorf("findings %v, want none", fs)
			case tc.want != "" && (len(fs) != 1 || !strings.Contains(fs[0].Message, tc.want)):
				t.Errorf("findings %v, want one saying %q", fs, tc.want)
			}
		})
	}
}
