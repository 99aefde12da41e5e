package schema

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"cairn/lint"
	"cairn/markdown"
)

// linkPattern is what a link field holds: a quoted wikilink, as Obsidian's
// properties write it.
const linkPattern = `^!?\[\[[^\[\]]+\]\]$`

// compiled is a type's JSON Schema document, and its fields' patterns
// compiled.
type compiled struct {
	doc      map[string]any
	patterns map[string]*regexp.Regexp
}

// JSONSchema returns the type's JSON Schema 2020-12 document. cairn's own
// checks are in x-cairn-* keywords, which validators ignore: the
// recommended fields, the types links lead to and the folder.
func (t *Type) JSONSchema() map[string]any {
	if t.compiled == nil {
		return nil
	}
	return t.compiled.doc
}

// compile builds and compiles the type's JSON Schema.
func (t *Type) compile() error {
	props := map[string]any{}
	for _, f := range t.Fields {
		s := valueSchema(&f.Value, f.Items)
		if f.Description != "" {
			s["description"] = f.Description
		}
		props[f.Name] = s
	}
	doc := map[string]any{
		"$schema":    "https://json-schema.org/draft/2020-12/schema",
		"$id":        "cairn:type/" + t.Name,
		"title":      cmp.Or(t.Title, t.Name),
		"type":       "object",
		"properties": props,
	}
	if t.Description != "" {
		doc["description"] = t.Description
	}
	if len(t.Requires) > 0 {
		doc["required"] = stringsAny(t.Requires)
	}
	if t.Closed {
		for _, c := range CoreFields {
			if _, ok := props[c]; !ok {
				props[c] = map[string]any{}
			}
		}
		doc["additionalProperties"] = false
	}
	var all []any
	for _, c := range t.When {
		cond := map[string]any{}
		if len(c.Is) > 0 {
			cond["enum"] = c.Is
		}
		all = append(all, map[string]any{
			"if":   map[string]any{"properties": map[string]any{c.Field: cond}, "required": []any{c.Field}},
			"then": map[string]any{"required": stringsAny(c.Requires)},
		})
	}
	if len(all) > 0 {
		doc["allOf"] = all
	}
	if len(t.Recommends) > 0 {
		doc["x-cairn-recommends"] = stringsAny(t.Recommends)
	}
	if t.Folder != "" {
		doc["x-cairn-folder"] = t.Folder
	}
	if t.Extends != "" {
		doc["x-cairn-extends"] = t.Extends
	}
	t.compiled = &compiled{doc: doc, patterns: map[string]*regexp.Regexp{linkPattern: regexp.MustCompile(linkPattern)}}
	for _, f := range t.Fields {
		for _, v := range []*Value{&f.Value, f.Items} {
			if v == nil || v.Pattern == "" {
				continue
			}
			re, err := regexp.Compile(v.Pattern)
			if err != nil {
				return fmt.Errorf("field %s: pattern %q: %w", f.Name, v.Pattern, err)
			}
			t.compiled.patterns[v.Pattern] = re
		}
	}
	return nil
}

// valueSchema is the JSON Schema of a value, with its items' for a list.
func valueSchema(f *Value, items *Value) map[string]any {
	s := map[string]any{}
	switch f.Type {
	case String, Number, Integer, Boolean:
		s["type"] = f.Type
	case Date:
		s["type"], s["format"] = "string", "date"
	case DateTime:
		s["type"], s["format"] = "string", "date-time"
	case Link:
		s["type"], s["pattern"] = "string", linkPattern
		if f.To != "" {
			s["x-cairn-link-to"] = f.To
		}
	case List:
		s["type"] = "array"
		if items != nil {
			s["items"] = valueSchema(items, nil)
		}
	}
	if f.Format != "" {
		s["format"] = formats[f.Format]
	}
	if f.Pattern != "" {
		s["pattern"] = f.Pattern
	}
	if f.Min != nil {
		s["minimum"] = *f.Min
	}
	if f.Max != nil {
		s["maximum"] = *f.Max
	}
	lenKeys := [2]string{"minLength", "maxLength"}
	if f.Type == List {
		lenKeys = [2]string{"minItems", "maxItems"}
	}
	if f.MinLength != nil {
		s[lenKeys[0]] = *f.MinLength
	}
	if f.MaxLength != nil {
		s[lenKeys[1]] = *f.MaxLength
	}
	if len(f.Enum) > 0 {
		s["enum"] = f.Enum
	}
	return s
}

// Check returns the findings of one file (lint.TypeChecker): a
// declaration's own problems, or a page's against its type. A page of a
// type the vault does not declare has none: the world is open.
func (s *Set) Check(f *lint.Facts) []lint.Finding {
	if _, ok := lint.TypeDeclaration(f.Path); ok {
		return s.byPath[f.Path]
	}
	if f.Kind != lint.KindPage || f.Page == nil || f.Page.Type == "" {
		return nil
	}
	t := s.Type(f.Page.Type)
	if t == nil || t.Broken {
		return nil
	}
	var out []lint.Finding
	add := func(rule string, sev lint.Severity, field, format string, args ...any) {
		out = append(out, lint.Finding{Rule: rule, Severity: sev, Page: f.Path, Subject: field, Message: fmt.Sprintf(format, args...)})
	}
	doc := present(f.Page.Frontmatter)
	t.validate(doc, add)
	recommends := slices.Clone(t.Recommends)
	for _, c := range t.When {
		if c.applies(doc) {
			recommends = append(recommends, c.Recommends...)
		}
	}
	slices.Sort(recommends)
	for _, r := range slices.Compact(recommends) {
		if _, ok := doc[r]; !ok {
			add(lint.SchemaRecommended, lint.Warning, r, "a %s should have %s (recommended by %s)", t.Name, r, t.Path)
		}
	}
	s.checkLinks(t, f, add)
	if t.Folder != "" && !strings.HasPrefix(f.Path, t.Folder) {
		add(lint.SchemaFolder, lint.Warning, "folder", "pages of type %s belong in %s (%s); move the page there", t.Name, t.Folder, t.Path)
	}
	// One finding per rule and field: a value may break several keywords.
	slices.SortStableFunc(out, func(a, b lint.Finding) int { return strings.Compare(a.Rule+"\x00"+a.Subject, b.Rule+"\x00"+b.Subject) })
	return slices.CompactFunc(out, func(a, b lint.Finding) bool { return a.Rule == b.Rule && a.Subject == b.Subject })
}

// present is the frontmatter without empty values: an empty property (as
// Obsidian writes one not filled in) counts as missing.
func present(fm map[string]any) map[string]any {
	doc := make(map[string]any, len(fm))
	for k, v := range fm {
		switch v := v.(type) {
		case nil:
			continue
		case string:
			if strings.TrimSpace(v) == "" {
				continue
			}
		case []any:
			if len(v) == 0 {
				continue
			}
		}
		doc[k] = v
	}
	return doc
}

// applies reports whether a condition holds for a page's fields.
func (c Condition) applies(doc map[string]any) bool {
	v, ok := doc[c.Field]
	if !ok {
		return false
	}
	if len(c.Is) == 0 {
		return true
	}
	return slices.ContainsFunc(c.Is, func(x any) bool { return fmt.Sprint(x) == fmt.Sprint(v) })
}

// checkLinks checks the links of link fields: each must lead to a page,
// of the declared type when the field names one.
func (s *Set) checkLinks(t *Type, f *lint.Facts, add func(string, lint.Severity, string, string, ...any)) {
	for _, l := range f.Links {
		if l.Kind != markdown.LinkFrontmatter || l.Property == "" {
			continue
		}
		fd := t.Field(l.Property)
		if fd == nil {
			continue
		}
		ld := linkOf(fd)
		if ld == nil {
			continue
		}
		switch {
		case l.Res.Status != markdown.StatusResolved:
			add(lint.SchemaLink, lint.Error, l.Property, "%s: %s does not lead to a page (a %s links to %s)", l.Property, l.Raw, t.Name, cmp.Or(ld.To, "a page"))
		case ld.To != "" && lint.Classify(l.Res.Path) != lint.KindPage:
			add(lint.SchemaLink, lint.Error, l.Property, "%s: %s leads to %s, which is not a page of type %s", l.Property, l.Raw, l.Res.Path, ld.To)
		case ld.To != "" && !s.Is(f.LinkTypes[l.Res.Path], ld.To):
			got := f.LinkTypes[l.Res.Path]
			add(lint.SchemaLink, lint.Error, l.Property, "%s: %s leads to %s, a page of type %q, not %s", l.Property, l.Raw, l.Res.Path, got, ld.To)
		}
	}
}

// describe says what a field is declared to be.
func describe(f *Field) string {
	if f == nil {
		return "frontmatter"
	}
	what := cmp.Or(f.Type, "value")
	switch {
	case f.Type == List && f.Items != nil && f.Items.Type != "":
		what = "list of " + f.Items.Type
		if f.Items.To != "" {
			what += " to " + f.Items.To
		}
	case f.To != "":
		what += " to " + f.To
	}
	article := "a"
	if strings.ContainsRune("aeiou", rune(what[0])) {
		article = "an"
	}
	return fmt.Sprintf("field %s, %s %s", f.Name, article, what)
}

func values(vs []any) string {
	if len(vs) == 0 {
		return "set"
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, " or ")
}

func stringsAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
