package app

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"cairn"
	"cairn/agent"
	"cairn/index"
	"cairn/lint"
)

// MaxScope is the most pages a working set holds (Eva's bound).
const MaxScope = 250

// indexReader is what a Snapshot reads of the index: an *index.Reader, or
// a scopedReader over one.
type indexReader interface {
	Resolve(ctx context.Context, ref string) (string, error)
	Page(ctx context.Context, ref string) (*index.PageInfo, error)
	Search(ctx context.Context, q index.SearchQuery) ([]index.SearchResult, error)
	Links(ctx context.Context, ref string) ([]index.LinkInfo, error)
	Backlinks(ctx context.Context, ref string) ([]index.LinkInfo, error)
	BacklinksPage(ctx context.Context, ref string, off, limit int) (*index.LinkPage, error)
	Edges(ctx context.Context, path string) (out, in []index.LinkInfo, err error)
	Findings(ctx context.Context, f index.FindingFilter) ([]lint.Finding, error)
	FindingsPage(ctx context.Context, f index.FindingFilter, off, limit int) (*index.FindingPage, error)
	Stats(ctx context.Context) (index.Stats, error)
	Titles(ctx context.Context) ([]index.Title, error)
	Where(ctx context.Context, typ string, where []index.FieldQuery) ([]index.Title, error)
}

// guidance returns the files a working set always holds: the vault's
// index and rules.
func guidance() []string {
	return []string{"index.md", "AGENTS.md", "EVA.md", "CLAUDE.md", "cairn.yaml"}
}

// Scoped returns the view restricted to a working set: the files at
// paths (vault paths, as Resolve gives them) and the guidance (index.md,
// AGENTS.md, EVA.md, CLAUDE.md, cairn.yaml). Every read of the view keeps
// to them: a file outside is not found, a search or a list leaves out
// what is outside, a link or backlink that leads outside is left out. The
// counts (Stats) are the whole view's.
func (v *View) Scoped(paths []string) *View {
	w := *v
	w.scope = map[string]bool{}
	for _, p := range slices.Concat(paths, agent.Guidance()) {
		w.scope[p] = true
	}
	w.name = fmt.Sprintf("%s, working set of %d", v.name, len(paths))
	return &w
}

// notInScope is the error of a file outside the working set.
func notInScope(path string) error {
	return cairn.Errorf(cairn.ENOTFOUND, "%s is not in the working set", cairn.Quote(path)).
		WithHint("Only the pages of the working set (and index.md and the vault's rules) can be read.")
}

// scopedReader reads the index within a working set.
type scopedReader struct {
	r     *index.Reader
	scope map[string]bool
}

func (s *scopedReader) Resolve(ctx context.Context, ref string) (string, error) {
	p, err := s.r.Resolve(ctx, ref)
	if err == nil && !s.scope[p] {
		return "", notInScope(ref)
	}
	return p, err
}

func (s *scopedReader) Page(ctx context.Context, ref string) (*index.PageInfo, error) {
	p, err := s.r.Page(ctx, ref)
	if err == nil && !s.scope[p.Path] {
		return nil, notInScope(ref)
	}
	return p, err
}

func (s *scopedReader) Search(ctx context.Context, q index.SearchQuery) ([]index.SearchResult, error) {
	res, err := s.r.Search(ctx, q)
	return slices.DeleteFunc(res, func(r index.SearchResult) bool { return !s.scope[r.Path] }), err
}

// keep leaves out the links that lead outside the working set, or come
// from outside it.
func (s *scopedReader) keep(ls []index.LinkInfo) []index.LinkInfo {
	return slices.DeleteFunc(ls, func(l index.LinkInfo) bool { return !s.scope[l.From] || l.To != "" && !s.scope[l.To] })
}

func (s *scopedReader) Links(ctx context.Context, ref string) ([]index.LinkInfo, error) {
	if _, err := s.Resolve(ctx, ref); err != nil {
		return nil, err
	}
	ls, err := s.r.Links(ctx, ref)
	return s.keep(ls), err
}

func (s *scopedReader) Backlinks(ctx context.Context, ref string) ([]index.LinkInfo, error) {
	if _, err := s.Resolve(ctx, ref); err != nil {
		return nil, err
	}
	ls, err := s.r.Backlinks(ctx, ref)
	return s.keep(ls), err
}

// BacklinksPage reads the backlinks whole, keeps those of the working
// set (at most MaxScope pages link from it) and returns the part asked for.
func (s *scopedReader) BacklinksPage(ctx context.Context, ref string, off, limit int) (*index.LinkPage, error) {
	path, err := s.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	ls, err := s.Backlinks(ctx, path)
	if err != nil {
		return nil, err
	}
	return &index.LinkPage{Page: path, Links: append([]index.LinkInfo{}, index.Window(ls, off, limit)...), Total: len(ls)}, nil
}

func (s *scopedReader) Edges(ctx context.Context, path string) (out, in []index.LinkInfo, err error) {
	if !s.scope[path] {
		return nil, nil, notInScope(path)
	}
	out, in, err = s.r.Edges(ctx, path)
	return s.keep(out), s.keep(in), err
}

// Findings reads the findings of each file of the working set, not the
// vault's, in one state of the index.
func (s *scopedReader) Findings(ctx context.Context, f index.FindingFilter) ([]lint.Finding, error) {
	p, err := s.FindingsPage(ctx, f, 0, 0)
	if err != nil {
		return nil, err
	}
	return p.Findings, nil
}

func (s *scopedReader) FindingsPage(ctx context.Context, f index.FindingFilter, off, limit int) (*index.FindingPage, error) {
	return s.r.FindingsPageIn(ctx, slices.Sorted(maps.Keys(s.scope)), f, off, limit)
}

func (s *scopedReader) Stats(ctx context.Context) (index.Stats, error) { return s.r.Stats(ctx) }

func (s *scopedReader) Titles(ctx context.Context) ([]index.Title, error) {
	ts, err := s.r.Titles(ctx)
	return slices.DeleteFunc(ts, func(t index.Title) bool { return !s.scope[t.Path] }), err
}

func (s *scopedReader) Where(ctx context.Context, typ string, where []index.FieldQuery) ([]index.Title, error) {
	ts, err := s.r.Where(ctx, typ, where)
	return slices.DeleteFunc(ts, func(t index.Title) bool { return !s.scope[t.Path] }), err
}
