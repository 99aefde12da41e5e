package app

import (
	"context"
	"slices"
	"strings"

	"cairn"
	"cairn/index"
	"cairn/lint"
	"cairn/schema"
)

// TypeSummary is one type a view declares, with how many pages are of it.
type TypeSummary struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Title   string `json:"title,omitempty"`
	Extends string `json:"extends,omitempty"`
	// Pages counts the pages of the type; Breaking those with an error
	// against it.
	Pages    int `json:"pages"`
	Breaking int `json:"breaking"`
	// Broken says the declaration has errors: pages are not checked
	// against it until it is fixed.
	Broken bool `json:"broken,omitempty"`
}

// TypeDetail is one declared type: its declaration with what it inherits,
// its JSON Schema, and the pages that break it.
type TypeDetail struct {
	Type *schema.Type `json:"type"`
	// Schema is the type's JSON Schema 2020-12 (null when the
	// declaration has errors).
	Schema map[string]any `json:"schema"`
	// Problems are the declaration's own errors.
	Problems []lint.Finding `json:"problems"`
	Pages    int            `json:"pages"`
	// Findings are the schema findings of the pages of the type, by page.
	Findings []lint.Finding `json:"findings"`
}

// typeFindings reads the view's schema findings on pages, by page.
func (s *Snapshot) typeFindings(ctx context.Context) (map[string][]lint.Finding, error) {
	out := map[string][]lint.Finding{}
	for _, rule := range lint.SchemaRules {
		if rule == lint.InvalidType {
			continue
		}
		fs, err := s.ix.Findings(ctx, index.FindingFilter{Rule: rule})
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			out[f.Page] = append(out[f.Page], f)
		}
	}
	return out, nil
}

// Types lists the types the view declares, by name.
func (s *Snapshot) Types(ctx context.Context) ([]TypeSummary, error) {
	set, err := s.a.v.Index.Types(ctx, s.files, s.Tree)
	if err != nil {
		return nil, err
	}
	pages, breaking, err := s.typeCounts(ctx)
	if err != nil {
		return nil, err
	}
	out := []TypeSummary{}
	for _, t := range set.Types() {
		out = append(out, TypeSummary{Name: t.Name, Path: t.Path, Title: t.Title, Extends: t.Extends,
			Pages: pages[t.Name], Breaking: breaking[t.Name], Broken: t.Broken})
	}
	return out, nil
}

// typeCounts counts the view's pages by type, and those with schema
// findings of severity error.
func (s *Snapshot) typeCounts(ctx context.Context) (pages, breaking map[string]int, err error) {
	ts, err := s.ix.Titles(ctx)
	if err != nil {
		return nil, nil, err
	}
	fs, err := s.typeFindings(ctx)
	if err != nil {
		return nil, nil, err
	}
	pages, breaking = map[string]int{}, map[string]int{}
	for _, p := range ts {
		if p.Type == "" {
			continue
		}
		pages[p.Type]++
		if slices.ContainsFunc(fs[p.Path], func(f lint.Finding) bool { return f.Severity == lint.Error }) {
			breaking[p.Type]++
		}
	}
	return pages, breaking, nil
}

// Type returns the type name the view declares, with the findings of its
// pages (at most limit of them; 0: 100).
func (s *Snapshot) Type(ctx context.Context, name string, limit int) (*TypeDetail, error) {
	set, err := s.a.v.Index.Types(ctx, s.files, s.Tree)
	if err != nil {
		return nil, err
	}
	t := set.Type(name)
	if t == nil {
		names := make([]string, 0, set.Len())
		for _, t := range set.Types() {
			names = append(names, t.Name)
		}
		e := cairn.Errorf(cairn.ENOTFOUND, "%s declares no type %q", s.View, name)
		if len(names) == 0 {
			return nil, e.WithHint("Declare one in " + lint.TypesFolder + name + ".md: its frontmatter is the schema (see docs/types.md).")
		}
		return nil, e.WithHint("The declared types: " + strings.Join(names, ", ") + ".")
	}
	d := &TypeDetail{Type: t, Schema: t.JSONSchema(), Problems: append([]lint.Finding{}, t.Problems()...), Findings: []lint.Finding{}}
	ts, err := s.ix.Where(ctx, name, nil) // the pages of the type, from the index's type index
	if err != nil {
		return nil, err
	}
	fs, err := s.typeFindings(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	for _, p := range ts {
		d.Pages++
		for _, f := range fs[p.Path] {
			if len(d.Findings) < limit {
				d.Findings = append(d.Findings, f)
			}
		}
	}
	return d, nil
}

// Types lists the types declared at rev (main when "").
func (a *App) Types(ctx context.Context, rev string) ([]TypeSummary, error) {
	var out []TypeSummary
	err := a.View(rev).Read(ctx, func(s *Snapshot) (err error) {
		out, err = s.Types(ctx)
		return err
	})
	return out, err
}

// Type returns the type name declared at rev (main when ""), with the
// findings of its pages, at most limit.
func (a *App) Type(ctx context.Context, rev, name string, limit int) (*TypeDetail, error) {
	var out *TypeDetail
	err := a.View(rev).Read(ctx, func(s *Snapshot) (err error) {
		out, err = s.Type(ctx, name, limit)
		return err
	})
	return out, err
}
