// Package schema reads the types a vault declares and checks pages against
// them.
//
// A type is declared in the vault, versioned with it: types/<name>.md (or
// types/<name>.yaml), whose frontmatter is the schema and whose body
// documents the type for people and agents. A page is of type T when its
// frontmatter says type: T. The vocabulary is Eigenius's mapped onto
// frontmatter fields:
//
//	---
//	title: Person
//	extends: entity          # inherits fields, requirements and conditions
//	folder: people           # where pages of the type belong
//	closed: true             # no fields beyond the declared ones
//	requires: [name]
//	recommends: [email]
//	fields:
//	  name: string
//	  born: date
//	  email: {type: string, format: email}
//	  employer: link to organization
//	  tags: list of string
//	  age: {type: integer, min: 0, max: 150}
//	  status: {enum: [active, retired]}
//	when:
//	  - field: status
//	    is: retired
//	    then: {requires: [retired_on]}
//	---
//
// Each type compiles to a JSON Schema 2020-12 document, for other tools;
// pages are checked against the type's declarations with that schema's
// meaning (see validate.go), and what JSON Schema cannot say — a
// recommended field, a link that must lead to a page of a type, the
// folder — beside them. A [Set] is a
// [lint.TypeChecker]: the index runs it with the other lint rules, so its
// findings are kept incrementally and judged by the admission pipeline's
// schema gate on every route.
package schema

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cairn/lint"
	"cairn/markdown"
)

// Data types of fields.
const (
	String   = "string"
	Number   = "number"
	Integer  = "integer"
	Boolean  = "boolean"
	Date     = "date"
	DateTime = "datetime"
	Link     = "link"
	List     = "list"
)

var dataTypes = []string{String, Number, Integer, Boolean, Date, DateTime, Link, List}

// formats are the values of a field's format, with their JSON Schema
// names.
var formats = map[string]string{"date": "date", "datetime": "date-time", "uri": "uri", "email": "email"}

// CoreFields are the properties every page may have, closed type or not.
var CoreFields = []string{"title", "type", "id", "aliases", "alias", "tags", "cssclasses"}

// Field is the declaration of one frontmatter field: its value's, and a
// list's items'.
type Field struct {
	Name string `json:"name"`
	Value
	// Items declares a list's items (never a list).
	Items       *Value `json:"items,omitempty"`
	Description string `json:"description,omitempty"`
}

// Value is the declaration of a value: a field's, or a list's items'.
type Value struct {
	// Type is a data type (String, ..., List), or "" for any value.
	Type string `json:"type,omitempty"`
	// To is the type of the page a link leads to, for links; "" for any
	// page.
	To        string   `json:"to,omitempty"`
	Format    string   `json:"format,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	MinLength *int     `json:"min_length,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	Enum      []any    `json:"enum,omitempty"`
}

// Condition is a conditional requirement: when Field has one of the values
// Is (or, Is empty, any value), Requires and Recommends apply too.
type Condition struct {
	Field      string   `json:"field"`
	Is         []any    `json:"is,omitempty"`
	Requires   []string `json:"requires,omitempty"`
	Recommends []string `json:"recommends,omitempty"`
}

// Type is a declared type, with what it inherits.
type Type struct {
	Name string `json:"name"`
	// Path is the file that declares it.
	Path        string `json:"path"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Extends     string `json:"extends,omitempty"`
	// Folder is where pages of the type belong ("people/"), "" anywhere.
	Folder     string      `json:"folder,omitempty"`
	Closed     bool        `json:"closed,omitempty"`
	Requires   []string    `json:"requires,omitempty"`
	Recommends []string    `json:"recommends,omitempty"`
	Fields     []*Field    `json:"fields,omitempty"` // by name
	When       []Condition `json:"when,omitempty"`
	// Broken is set when the declaration, or one it extends, has errors:
	// pages of the type are not checked against it until it is fixed.
	Broken bool `json:"broken,omitempty"`

	own      decl // as declared, before inheritance
	problems []lint.Finding
	compiled *compiled
	sum      [32]byte // of the effective declaration
}

// Field returns the field named name, or nil.
func (t *Type) Field(name string) *Field {
	i, ok := slices.BinarySearchFunc(t.Fields, name, func(f *Field, n string) int { return strings.Compare(f.Name, n) })
	if !ok {
		return nil
	}
	return t.Fields[i]
}

// decl is a declaration as its file writes it.
type decl struct {
	path, name         string
	title, description string
	extends, folder    string
	closed             *bool
	requires           []string
	recommends         []string
	fields             map[string]*Field
	when               []Condition
	problems           []lint.Finding
}

// Declaration is a file that declares a type: its path and content.
type Declaration struct {
	Path string
	Data []byte
}

// Set is the types a vault declares. It is immutable and safe for
// concurrent use.
type Set struct {
	types map[string]*Type
	// byPath are the declarations' findings, by path, for every file that
	// tries to declare a type.
	byPath map[string][]lint.Finding
	names  []string
	// paths are the files declaring each name: more than one is an error.
	paths map[string][]string
}

// Load reads and compiles the declarations. It never fails: what is wrong
// with a declaration becomes a finding on its file, and the type is
// marked Broken.
func Load(decls []Declaration) *Set {
	s := &Set{types: map[string]*Type{}, byPath: map[string][]lint.Finding{}, paths: map[string][]string{}}
	slices.SortFunc(decls, func(a, b Declaration) int { return strings.Compare(a.Path, b.Path) })
	own := map[string]*decl{}
	for _, d := range decls {
		name, ok := lint.TypeDeclaration(d.Path)
		if !ok {
			continue
		}
		s.paths[name] = append(s.paths[name], d.Path)
		dc := parseDecl(d.Path, name, d.Data)
		if prev, dup := own[name]; dup {
			dc.problem("", "the type %s is declared twice: by %s and by %s; remove one", name, prev.path, d.Path)
			prev.problem("", "the type %s is declared twice: by %s and by %s; remove one", name, prev.path, d.Path)
			s.byPath[d.Path] = append(s.byPath[d.Path], dc.problems...)
			continue
		}
		own[name] = dc
	}
	for name := range own {
		s.resolve(name, own)
	}
	for name, t := range s.types {
		if !t.Broken {
			if err := t.compile(); err != nil {
				t.own.problem("", "the type %s does not compile to JSON Schema: %v", name, err)
				t.Broken = true
			}
		}
	}
	for _, t := range s.types {
		s.byPath[t.Path] = append(s.byPath[t.Path], t.own.problems...)
		t.problems = s.byPath[t.Path]
		lint.Sort(t.problems)
		t.sum = t.fingerprint()
		s.names = append(s.names, t.Name)
	}
	slices.Sort(s.names)
	return s
}

// cycleOf returns the chain of extends from name back to name, or nil when
// following extends from name does not return to it.
func cycleOf(name string, own map[string]*decl) []string {
	chain := []string{name}
	for at := own[name]; at != nil && at.extends != ""; at = own[at.extends] {
		chain = append(chain, at.extends)
		if at.extends == name {
			return chain
		}
		if len(chain) > len(own) {
			return nil // a cycle further up, not through name
		}
	}
	return nil
}

// resolve computes the effective type name, with what it inherits.
func (s *Set) resolve(name string, own map[string]*decl) *Type {
	if t, ok := s.types[name]; ok {
		return t
	}
	d := own[name]
	t := &Type{Name: name, Path: d.path, Title: d.title, Description: d.description, Extends: d.extends, Folder: d.folder, own: *d}
	t.Broken = len(d.problems) > 0
	fields := map[string]*Field{}
	var requires, recommends []string
	closed := false
	if d.extends != "" {
		switch {
		case cycleOf(name, own) != nil:
			t.own.problem("extends", "the type %s extends itself (%s); extend another type or none", name, strings.Join(cycleOf(name, own), " → "))
			t.Broken = true
		case own[d.extends] == nil:
			t.own.problem("extends", "the type %s extends %s, which is not declared; add %s%s.md or change extends", name, d.extends, lint.TypesFolder, d.extends)
			t.Broken = true
		default:
			parent := s.resolve(d.extends, own)
			if parent.Broken {
				t.own.problem("extends", "the type %s extends %s, which has errors (%s); fix that declaration first", name, d.extends, parent.Path)
				t.Broken = true
			}
			for _, f := range parent.Fields {
				fields[f.Name] = f
			}
			requires, recommends = slices.Clone(parent.Requires), slices.Clone(parent.Recommends)
			closed = parent.Closed
			t.When = slices.Clone(parent.When)
			t.Folder = cmp.Or(t.Folder, parent.Folder)
		}
	}
	maps.Copy(fields, d.fields)
	if d.closed != nil {
		closed = *d.closed
	}
	t.Closed = closed
	requires = append(requires, d.requires...)
	recommends = append(recommends, d.recommends...)
	slices.Sort(requires)
	t.Requires = slices.Compact(requires)
	// A field required here is not merely recommended.
	recommends = slices.DeleteFunc(recommends, func(r string) bool { return slices.Contains(t.Requires, r) })
	slices.Sort(recommends)
	t.Recommends = slices.Compact(recommends)
	t.When = append(t.When, d.when...)
	for _, n := range slices.Sorted(maps.Keys(fields)) {
		t.Fields = append(t.Fields, fields[n])
	}
	if t.Closed {
		for _, c := range t.When {
			for _, r := range slices.Concat(c.Requires, c.Recommends, []string{c.Field}) {
				if t.Field(r) == nil && !slices.Contains(CoreFields, r) {
					t.own.problem("when", "the closed type %s names %s in when but does not declare it in fields", name, r)
					t.Broken = true
				}
			}
		}
		for _, r := range slices.Concat(t.Requires, t.Recommends) {
			if t.Field(r) == nil && !slices.Contains(CoreFields, r) {
				t.own.problem(r, "the closed type %s requires or recommends %s but does not declare it in fields", name, r)
				t.Broken = true
			}
		}
	}
	s.types[name] = t
	return t
}

// Declarations returns the files that declare the type name: one, or
// several when it is declared twice.
func (s *Set) Declarations(name string) []string {
	if s == nil {
		return nil
	}
	return s.paths[name]
}

// Types returns the declared types, by name.
func (s *Set) Types() []*Type {
	out := make([]*Type, len(s.names))
	for i, n := range s.names {
		out[i] = s.types[n]
	}
	return out
}

// Type returns the type named name, or nil.
func (s *Set) Type(name string) *Type {
	if s == nil {
		return nil
	}
	return s.types[name]
}

// HasType reports whether the set declares the type name
// (lint.TypeChecker).
func (s *Set) HasType(name string) bool { return s.Type(name) != nil }

// Len returns the number of declared types.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.names)
}

// Is reports whether type t is want or extends it.
func (s *Set) Is(t, want string) bool {
	for range len(s.names) + 1 {
		if t == want {
			return true
		}
		tt := s.types[t]
		if tt == nil || tt.Extends == "" {
			return false
		}
		t = tt.Extends
	}
	return false
}

// Changed returns the names of the types whose effective declaration
// differs between s and next, or that only one of them declares, sorted.
// Pages of those types are the ones a change of declarations can affect.
func (s *Set) Changed(next *Set) []string {
	var out []string
	for _, n := range s.names {
		if o := next.Type(n); o == nil || o.sum != s.types[n].sum {
			out = append(out, n)
		}
	}
	if next != nil {
		for _, n := range next.names {
			if s.Type(n) == nil {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// HasLinkFields reports whether any type has a link field that names the
// type of the page it leads to.
func (s *Set) HasLinkFields() bool {
	for _, t := range s.types {
		if len(linkFields(t)) > 0 {
			return true
		}
	}
	return false
}

// LinkFields returns the fields of pages of type t whose links must lead
// to a page of a type (lint.TypeChecker).
func (s *Set) LinkFields(t string) []string {
	tt := s.Type(t)
	if tt == nil || tt.Broken {
		return nil
	}
	return linkFields(tt)
}

func linkFields(t *Type) []string {
	var out []string
	for _, f := range t.Fields {
		if l := linkOf(f); l != nil && l.To != "" {
			out = append(out, f.Name)
		}
	}
	return out
}

// linkOf returns the link declaration of a link field or a list of links.
func linkOf(f *Field) *Value {
	switch {
	case f.Type == Link:
		return &f.Value
	case f.Type == List && f.Items != nil && f.Items.Type == Link:
		return f.Items
	}
	return nil
}

// problem records an error in a declaration; subject names what in it.
func (d *decl) problem(subject, format string, args ...any) {
	d.problems = append(d.problems, lint.Finding{Rule: lint.InvalidType, Severity: lint.Error, Page: d.path,
		Subject: subject, Message: fmt.Sprintf(format, args...)})
}

// declKeys are the properties a declaration may have besides the core
// ones.
var declKeys = []string{"extends", "folder", "closed", "requires", "recommends", "fields", "when", "description", "source", "sources", "created", "updated"}

// parseDecl reads a declaration: the frontmatter of a .md file, or a whole
// .yaml file (read as the frontmatter it would be).
func parseDecl(path, name string, data []byte) *decl {
	d := &decl{path: path, name: name, fields: map[string]*Field{}}
	src := data
	if !strings.HasSuffix(strings.ToLower(path), ".md") {
		src = slices.Concat([]byte("---\n"), data, []byte("\n---\n"))
	}
	p := markdown.Parse(path, src)
	for _, pr := range p.Problems {
		if pr.Kind == markdown.ProblemMalformedFrontmatter {
			d.problem("frontmatter", "the declaration of %s is not valid YAML: %s", name, pr.Message)
			return d
		}
	}
	fm := p.Frontmatter
	if p.TitleSource == markdown.TitleFromFrontmatter {
		d.title = p.Title
	}
	for _, k := range slices.Sorted(maps.Keys(fm)) {
		if !slices.Contains(declKeys, k) && !slices.Contains(CoreFields, k) {
			d.problem(k, "the declaration of %s has an unknown key %q; a type declares %s", name, k, strings.Join(declKeys[:7], ", "))
		}
	}
	d.description, _ = fm["description"].(string)
	d.extends = d.str(fm, "extends")
	if f := d.str(fm, "folder"); f != "" {
		d.folder = strings.TrimSuffix(strings.TrimPrefix(f, "/"), "/") + "/"
	}
	if v, ok := fm["closed"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			d.problem("closed", "closed must be true or false, not %v", v)
		}
		d.closed = &b
	}
	d.requires = d.names(fm, "requires")
	d.recommends = d.names(fm, "recommends")
	switch fs := fm["fields"].(type) {
	case nil:
	case map[string]any:
		for k, v := range fs {
			d.fields[k] = d.field(k, v, true)
		}
	default:
		d.problem("fields", "fields must be a mapping of field names to their declarations, not %T", fs)
	}
	switch ws := fm["when"].(type) {
	case nil:
	case []any:
		for i, w := range ws {
			d.condition(i, w)
		}
	default:
		d.problem("when", "when must be a list of conditions ({field, is, then: {requires, recommends}})")
	}
	return d
}

// str reads a string property.
func (d *decl) str(fm map[string]any, key string) string {
	switch v := fm[key].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	default:
		d.problem(key, "%s must be a string, not %v", key, v)
		return ""
	}
}

// names reads a list of field names (or one name).
func (d *decl) names(fm map[string]any, key string) []string {
	switch v := fm[key].(type) {
	case nil:
		return nil
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			s, ok := x.(string)
			if !ok || s == "" {
				d.problem(key, "%s must list field names, not %v", key, x)
				continue
			}
			out = append(out, s)
		}
		return out
	default:
		d.problem(key, "%s must be a list of field names, not %v", key, v)
		return nil
	}
}

// field reads one field's declaration: a data type ("date", "list of
// string", "link to person") or a mapping.
func (d *decl) field(name string, v any, top bool) *Field {
	f := &Field{Name: name}
	switch v := v.(type) {
	case nil:
	case string:
		d.dataType(f, v)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			x := v[k]
			switch k {
			case "type":
				s, _ := x.(string)
				d.dataType(f, s)
			case "format":
				s, _ := x.(string)
				if _, ok := formats[s]; !ok {
					d.problem(name, "the field %s has an unknown format %v; use one of date, datetime, uri, email", name, x)
				}
				f.Format = s
			case "pattern":
				s, _ := x.(string)
				if _, err := regexp.Compile(s); err != nil || s == "" {
					d.problem(name, "the field %s has an invalid pattern %q: %v", name, s, cmp.Or[error](err, fmt.Errorf("empty")))
				}
				f.Pattern = s
			case "min", "max":
				n, ok := number(x)
				if !ok {
					d.problem(name, "the field %s: %s must be a number, not %v", name, k, x)
				}
				if k == "min" {
					f.Min = &n
				} else {
					f.Max = &n
				}
			case "min_length", "max_length":
				n, ok := number(x)
				if !ok || n < 0 || n != float64(int(n)) {
					d.problem(name, "the field %s: %s must be a whole number, not %v", name, k, x)
				}
				i := int(n)
				if k == "min_length" {
					f.MinLength = &i
				} else {
					f.MaxLength = &i
				}
			case "enum":
				list, ok := x.([]any)
				if !ok || len(list) == 0 {
					d.problem(name, "the field %s: enum must be a list of the allowed values", name)
				}
				f.Enum = list
			case "items":
				if !top {
					d.problem(name, "the field %s: a list's items cannot be lists", name)
					continue
				}
				f.Items = &d.field(name, x, false).Value
			case "to":
				f.To, _ = x.(string)
			case "description":
				f.Description, _ = x.(string)
			default:
				d.problem(name, "the field %s has an unknown key %q; a field declares type, format, pattern, min, max, min_length, max_length, enum, items, to, description", name, k)
			}
		}
	default:
		d.problem(name, "the field %s must be declared by a data type or a mapping, not %v", name, v)
	}
	if f.Type == List && f.Items != nil && f.Items.Type == List {
		d.problem(name, "the field %s: a list's items cannot be lists", name)
	}
	if f.Items != nil && f.Type == "" {
		f.Type = List
	}
	if f.To != "" && f.Type != Link {
		d.problem(name, "the field %s names a type to link to but is not a link", name)
	}
	if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
		d.problem(name, "the field %s: min %v is above max %v", name, *f.Min, *f.Max)
	}
	return f
}

// dataType reads a data type: "string", "list of date", "link to person".
func (d *decl) dataType(f *Field, s string) {
	s = strings.Join(strings.Fields(s), " ")
	switch {
	case strings.HasPrefix(s, "list of "):
		f.Type = List
		items := &Field{Name: f.Name}
		d.dataType(items, strings.TrimPrefix(s, "list of "))
		if items.Type == List {
			d.problem(f.Name, "the field %s: a list's items cannot be lists", f.Name)
		}
		f.Items = &items.Value
	case strings.HasPrefix(s, "link to "):
		f.Type, f.To = Link, strings.TrimSpace(strings.TrimPrefix(s, "link to "))
	case slices.Contains(dataTypes, s):
		f.Type = s
	default:
		d.problem(f.Name, "the field %s has an unknown data type %q; use %s, list of X or link to T", f.Name, s, strings.Join(dataTypes, ", "))
	}
}

// condition reads one entry of when.
func (d *decl) condition(i int, w any) {
	m, ok := w.(map[string]any)
	field, _ := m["field"].(string)
	if !ok || field == "" {
		d.problem("when", "when[%d] must name a field: {field: F, is: V, then: {requires: [...]}}", i)
		return
	}
	c := Condition{Field: field}
	switch is := m["is"].(type) {
	case nil:
	case []any:
		c.Is = is
	default:
		c.Is = []any{is}
	}
	then, ok := m["then"].(map[string]any)
	if !ok {
		d.problem("when", "when[%d] must say what it requires or recommends under then", i)
		return
	}
	c.Requires, c.Recommends = d.names(then, "requires"), d.names(then, "recommends")
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "field" && k != "is" && k != "then" {
			d.problem("when", "when[%d] has an unknown key %q", i, k)
		}
	}
	d.when = append(d.when, c)
}

// number reads a YAML number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

// Problems returns what is wrong with the type's declaration.
func (t *Type) Problems() []lint.Finding { return t.problems }

// fingerprint is the sum of the effective declaration and its problems.
func (t *Type) fingerprint() [32]byte {
	b, _ := json.Marshal(struct {
		T *Type
		P []lint.Finding
	}{t, t.problems})
	return sha256.Sum256(b)
}
