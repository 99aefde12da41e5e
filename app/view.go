package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"cairn"
	"cairn/index"
	"cairn/lint"
	"cairn/store"
	"cairn/worktree"
)

// View is a read view of the vault: what the reads of an agent's surface
// (MCP) see. It is main as it is at each read, the commit a revision
// names (a branch, a tag, a proposal's branch proposals/N, a commit), or
// a draft: a base commit with changes on top that are not committed (an
// agent's workspace), so that an agent that wrote a page finds it at once.
// Every read resolves the view again: a view of a branch follows it.
type View struct {
	a    *App
	rev  string
	name string
	// draft, when set, builds the draft's tree on the base tree in b.
	draft func(ctx context.Context, b *store.Batch, base cairn.Hash) (cairn.Hash, error)
	// scope, when set, is the working set every read keeps to (Scoped).
	scope map[string]bool
}

// View returns a view of the revision rev, or of main when rev is "".
func (a *App) View(rev string) *View {
	return &View{a: a, rev: rev, name: cmp.Or(rev, "main")}
}

// DraftView returns a view of the commit base (main when "") with the
// edits changes returns on top, asked again at each read.
func (a *App) DraftView(base string, changes func(ctx context.Context) ([]FileEdit, error)) *View {
	return &View{a: a, rev: base, name: "draft on " + cmp.Or(base, "main"),
		draft: func(ctx context.Context, b *store.Batch, tree cairn.Hash) (cairn.Hash, error) {
			edits, err := changes(ctx)
			if err != nil {
				return cairn.Hash{}, err
			}
			fcs := make([]store.FileChange, 0, len(edits))
			for _, e := range edits {
				fcs = append(fcs, store.FileChange{Path: e.Path, Delete: e.Delete, Data: e.Content})
			}
			return b.Edit(ctx, tree, fcs)
		}}
}

// FolderView returns a view of the folder dir as a draft on the commit
// base (main when ""): the vault files the folder holds, read at each
// read. It is the view of an agent's workspace; snap, when set, is what
// was written in it (worktree.MaterializeSnapshot), so that each read
// reads again only the files changed since.
func (a *App) FolderView(base, dir string, snap *worktree.Snapshot) *View {
	return &View{a: a, rev: base, name: "folder " + dir,
		draft: func(ctx context.Context, b *store.Batch, tree cairn.Hash) (cairn.Hash, error) {
			t, _, err := worktree.ReadFolder(ctx, b, dir, tree, &worktree.WalkOptions{Materialized: snap})
			return t, err
		}}
}

// Name says what the view shows: "main", a revision, a draft or a folder.
func (v *View) Name() string { return v.name }

// Read calls fn with a snapshot of the view: one state of it, consistent
// for everything fn reads. A view of main or of a commit whose tree main's
// index holds reads the committed index; any other view applies its
// difference from main's index in memory, on a snapshot of it, without
// the vault's write lock (index.Index.View says when a read takes it).
func (v *View) Read(ctx context.Context, fn func(*Snapshot) error) error {
	a := v.a
	st, err := a.mainState(ctx)
	if err != nil {
		return err
	}
	s := &Snapshot{a: a, View: v.name, Commit: st.Commit, Tree: st.Tree, files: a.v.Store, scope: v.scope}
	if v.rev != "" {
		c, err := a.ResolveCommit(ctx, v.rev)
		if err != nil {
			return err
		}
		s.Commit, s.Tree = c.Hash, c.Tree
	}
	var b *store.Batch
	if v.draft != nil {
		b = a.v.Store.NewBatch()
		tree, err := v.draft(ctx, b, s.Tree)
		if err != nil {
			return err
		}
		s.Draft, s.Tree, s.files = tree != s.Tree, tree, b
	}
	if s.Tree == st.Tree {
		s.ix = s.scoped(a.v.Index.Main())
		return fn(s)
	}
	err = a.v.Index.View(ctx, b, s.Tree, func(r *index.Reader) error {
		s.ix = s.scoped(r)
		return fn(s)
	})
	return a.v.ExplainBusy(err)
}

// scoped is r within the snapshot's working set, if it has one.
func (s *Snapshot) scoped(r *index.Reader) indexReader {
	if s.scope == nil {
		return r
	}
	return &scopedReader{r: r, scope: s.scope}
}

// files reads trees and blobs: the store, or a draft's batch over it.
type files interface {
	Get(ctx context.Context, tree cairn.Hash, path string) (cairn.Entry, error)
	Files(ctx context.Context, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error]
	ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error)
}

// Snapshot is one state of a View, valid while the function Read called
// runs.
type Snapshot struct {
	a *App
	// View names the view; Commit is its commit (a draft's base) and Tree
	// its tree; Draft is set when the tree holds changes no commit has.
	View   string     `json:"view"`
	Commit cairn.Hash `json:"commit"`
	Tree   cairn.Hash `json:"tree"`
	Draft  bool       `json:"draft,omitempty"`
	ix     indexReader
	files  files
	scope  map[string]bool
}

// ReadFile returns the file at path (exactly, case included); ENOTFOUND
// when the view has none, EINVALID for a path that is not a vault path.
func (s *Snapshot) ReadFile(ctx context.Context, path string) (*FileAt, error) {
	p, err := cairn.CleanPath(path)
	if err != nil {
		return nil, err
	}
	if s.scope != nil && !s.scope[p] {
		return nil, notInScope(p)
	}
	e, err := s.files.Get(ctx, s.Tree, p)
	if err != nil {
		return nil, err
	}
	data, err := s.files.ReadBlob(ctx, e.Blob)
	if err != nil {
		return nil, err
	}
	return &FileAt{Commit: s.Commit, Entry: e, Content: string(data)}, nil
}

// Resolve finds the file a reference names as a wikilink would (see
// index.Reader.Resolve).
func (s *Snapshot) Resolve(ctx context.Context, ref string) (string, error) {
	return s.ix.Resolve(ctx, ref)
}

// Page returns what the index knows about the file ref names.
func (s *Snapshot) Page(ctx context.Context, ref string) (*index.PageInfo, error) {
	return s.ix.Page(ctx, ref)
}

// Search runs a full-text search of the view (see App.Search).
func (s *Snapshot) Search(ctx context.Context, q index.SearchQuery) ([]index.SearchResult, error) {
	return s.ix.Search(ctx, q)
}

// Links returns the links of the page ref names, in order.
func (s *Snapshot) Links(ctx context.Context, ref string) ([]index.LinkInfo, error) {
	return s.ix.Links(ctx, ref)
}

// Backlinks returns the links into the page ref names.
func (s *Snapshot) Backlinks(ctx context.Context, ref string) ([]index.LinkInfo, error) {
	return s.ix.Backlinks(ctx, ref)
}

// BacklinksPage returns limit of the links into the page ref names from
// the off-th on (limit 0: all from there), with how many there are.
func (s *Snapshot) BacklinksPage(ctx context.Context, ref string, off, limit int) (*index.LinkPage, error) {
	return s.ix.BacklinksPage(ctx, ref, off, limit)
}

// Edges returns the links of the file at path (exactly) and the links
// into it (see index.Reader.Edges).
func (s *Snapshot) Edges(ctx context.Context, path string) (out, in []index.LinkInfo, err error) {
	return s.ix.Edges(ctx, path)
}

// Findings returns the view's lint findings that f selects.
func (s *Snapshot) Findings(ctx context.Context, f index.FindingFilter) ([]lint.Finding, error) {
	if f.Min != "" && f.Min.Rank() == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a severity: error, warning or info", f.Min)
	}
	return s.ix.Findings(ctx, f)
}

// FindingsPage returns limit (0: all) of the view's lint findings that f
// selects, from the off-th on, and the counts of them all (see
// index.Reader.FindingsPage).
func (s *Snapshot) FindingsPage(ctx context.Context, f index.FindingFilter, off, limit int) (*index.FindingPage, error) {
	if f.Min != "" && f.Min.Rank() == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a severity: error, warning or info", f.Min)
	}
	if err := CheckPart("findings", off, limit); err != nil {
		return nil, err
	}
	return s.ix.FindingsPage(ctx, f, off, limit)
}

// Stats counts the view's files, pages, links and findings.
func (s *Snapshot) Stats(ctx context.Context) (index.Stats, error) { return s.ix.Stats(ctx) }

// Titles returns every page's names, type and inbound links, by path.
func (s *Snapshot) Titles(ctx context.Context) ([]index.Title, error) { return s.ix.Titles(ctx) }

// Neighbors are the pages a page links to and the pages that link to it,
// each once, by resolved links (not to itself).
type Neighbors struct {
	ID       string   `json:"id"`
	Path     string   `json:"path"`
	Outgoing []string `json:"outgoing"`
	Incoming []string `json:"incoming"`
	// Note says when Incoming holds the pages of the first MaxBacklinks
	// links into the page only.
	Note string `json:"note,omitempty"`
}

// pageID is a path as a page id: without ".md".
func pageID(path string) string { return strings.TrimSuffix(path, ".md") }

// Neighbors returns the neighbours of the page ref names, as page ids
// (paths without .md); of a page more than MaxBacklinks links lead to,
// the pages of the first MaxBacklinks.
func (s *Snapshot) Neighbors(ctx context.Context, ref string) (*Neighbors, error) {
	path, err := s.ix.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	ls, err := s.ix.Links(ctx, path)
	if err != nil {
		return nil, err
	}
	back, err := s.ix.BacklinksPage(ctx, path, 0, MaxBacklinks)
	if err != nil {
		return nil, err
	}
	out, in := linkEnds(path, ls, back.Links)
	n := &Neighbors{ID: pageID(path), Path: path, Outgoing: []string{}, Incoming: []string{}}
	for _, p := range out {
		n.Outgoing = append(n.Outgoing, pageID(p))
	}
	for _, p := range in {
		n.Incoming = append(n.Incoming, pageID(p))
	}
	if back.Total > len(back.Links) {
		n.Note = fmt.Sprintf("incoming holds the pages of the first %d of the %d links here; backlinks pages through them all", len(back.Links), back.Total)
	}
	return n, nil
}

// edges returns the paths path links to and is linked from, each once, by
// path, without path itself.
func (s *Snapshot) edges(ctx context.Context, path string) (out, in []string, err error) {
	ls, bs, err := s.ix.Edges(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	out, in = linkEnds(path, ls, bs)
	return out, in, nil
}

// linkEnds returns the paths the links ls of path lead to and those the
// links bs into it come from, each once, by path, without path itself.
func linkEnds(path string, ls, bs []index.LinkInfo) (out, in []string) {
	for _, l := range ls {
		if l.To != "" && l.To != path {
			out = append(out, l.To)
		}
	}
	for _, l := range bs {
		if l.From != path {
			in = append(in, l.From)
		}
	}
	slices.Sort(out)
	slices.Sort(in)
	return slices.Compact(out), slices.Compact(in)
}

// Path bounds: a path search looks at most this many pages.
const maxPathVisits = 20000

// ShortestPath returns the shortest chain of pages from one page to
// another over links in either direction, as page ids from first to last;
// nil when they are not connected within maxDepth links (or within the
// pages a search may visit).
func (s *Snapshot) ShortestPath(ctx context.Context, from, to string, maxDepth int) ([]string, error) {
	src, err := s.ix.Resolve(ctx, from)
	if err != nil {
		return nil, err
	}
	dst, err := s.ix.Resolve(ctx, to)
	if err != nil {
		return nil, err
	}
	if src == dst {
		return []string{pageID(src)}, nil
	}
	// Breadth first from both ends, growing the smaller frontier.
	prev := map[string]string{src: ""}
	next := map[string]string{dst: ""}
	front, back := []string{src}, []string{dst}
	for depth := 0; depth < maxDepth && len(front) > 0 && len(back) > 0; depth++ {
		forward := len(front) <= len(back)
		grow, seen, other := &front, prev, next
		if !forward {
			grow, seen, other = &back, next, prev
		}
		var grown []string
		for _, p := range *grow {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			out, in, err := s.edges(ctx, p)
			if err != nil {
				return nil, err
			}
			for _, q := range append(out, in...) {
				if _, ok := seen[q]; ok {
					continue
				}
				seen[q] = p
				if _, ok := other[q]; ok {
					return joinPath(q, prev, next), nil
				}
				grown = append(grown, q)
			}
			if len(prev)+len(next) > maxPathVisits {
				return nil, nil
			}
		}
		*grow = grown
	}
	return nil, nil
}

// joinPath is the path through meet: back along prev to the start, then
// along next to the end.
func joinPath(meet string, prev, next map[string]string) []string {
	var path []string
	for p := meet; p != ""; p = prev[p] {
		path = append(path, pageID(p))
	}
	slices.Reverse(path)
	for p := next[meet]; p != ""; p = next[p] {
		path = append(path, pageID(p))
	}
	return path
}

// Count is a name with how many pages it has.
type Count struct {
	Name  string `json:"name"`
	Pages int    `json:"pages"`
}

// Hub is a page with many links into it.
type Hub struct {
	Path    string `json:"path"`
	Title   string `json:"title"`
	Inbound int    `json:"inbound"`
}

// Topology is the shape of a view: its counts, its pages by type and by
// top folder, its hubs and the pages nothing links to.
type Topology struct {
	Stats   index.Stats `json:"stats"`
	Types   []Count     `json:"types"`
	Folders []Count     `json:"folders"`
	Hubs    []Hub       `json:"hubs"`
	// Orphans are pages no other file links to (index.md aside), by
	// path; OrphanCount counts them all.
	Orphans     []string `json:"orphans"`
	OrphanCount int      `json:"orphan_count"`
}

// Topology returns the view's shape with the top hubs and at most top
// orphans.
func (s *Snapshot) Topology(ctx context.Context, top int) (*Topology, error) {
	st, err := s.ix.Stats(ctx)
	if err != nil {
		return nil, err
	}
	ts, err := s.ix.Titles(ctx)
	if err != nil {
		return nil, err
	}
	t := &Topology{Stats: st, Orphans: []string{}}
	types, folders := map[string]int{}, map[string]int{}
	for _, p := range ts {
		types[cmp.Or(p.Type, "(none)")]++
		folder, _, ok := strings.Cut(p.Path, "/")
		if !ok {
			folder = "."
		}
		folders[folder]++
		if p.Inbound == 0 && !strings.EqualFold(p.Path, "index.md") {
			t.OrphanCount++
			if len(t.Orphans) < top {
				t.Orphans = append(t.Orphans, p.Path)
			}
		}
	}
	t.Types, t.Folders = counts(types), counts(folders)
	byIn := slices.Clone(ts)
	slices.SortStableFunc(byIn, func(a, b index.Title) int { return cmp.Compare(b.Inbound, a.Inbound) })
	for _, p := range byIn[:min(top, len(byIn))] {
		if p.Inbound > 0 {
			t.Hubs = append(t.Hubs, Hub{Path: p.Path, Title: p.Title, Inbound: p.Inbound})
		}
	}
	return t, nil
}

// counts sorts a tally by count, most first, then name.
func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		out = append(out, Count{Name: k, Pages: n})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Pages, a.Pages), cmp.Compare(a.Name, b.Name)) })
	return out
}

// PageFilter selects pages.
type PageFilter struct {
	Folder string // only pages under this folder
	Type   string // only pages of this type (exactly: types are case-sensitive)
	// Field, when set, keeps pages whose frontmatter has this field;
	// with Value, only those where it is that value (a list field: one
	// of its items).
	Field, Value string
	// Where are conditions on frontmatter fields, all to be met, as
	// index.ParseWhere reads them ("status = done", "year >= 2020",
	// "tags ~ ink", "owner"): answered from the index's field rows, not by
	// reading pages.
	Where []string
	// Offset and Limit page the result (Limit 0: 100).
	Offset, Limit int
}

// PageList is a page of a listing of pages.
type PageList struct {
	Pages []index.Title `json:"pages"`
	// Total counts every page that matches; Next is the offset of the
	// next page, 0 when there is none.
	Total int `json:"total"`
	Next  int `json:"next,omitempty"`
}

// maxFieldScan bounds how many pages a filter by field reads.
const maxFieldScan = 20000

// Pages lists the view's pages that f selects, by path.
func (s *Snapshot) Pages(ctx context.Context, f PageFilter) (*PageList, error) {
	if f.Offset < 0 || f.Limit < 0 || f.Limit > 1000 {
		return nil, cairn.Errorf(cairn.EINVALID, "offset and limit are 0 or more, limit at most 1000 (not %d and %d)", f.Offset, f.Limit)
	}
	if f.Value != "" && f.Field == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "a value %q needs the field it is the value of", f.Value)
	}
	limit := cmp.Or(f.Limit, 100)
	folder := strings.Trim(f.Folder, "/")
	var ts []index.Title
	var err error
	// A type or conditions on fields are answered from the index's
	// indexes (files by type, field rows), not by reading every page.
	if len(f.Where) > 0 || f.Type != "" {
		where := make([]index.FieldQuery, len(f.Where))
		for i, w := range f.Where {
			if where[i], err = index.ParseWhere(w); err != nil {
				return nil, err
			}
		}
		ts, err = s.ix.Where(ctx, f.Type, where)
	} else {
		ts, err = s.ix.Titles(ctx)
	}
	if err != nil {
		return nil, err
	}
	var match []index.Title
	scanned := 0
	for _, t := range ts {
		if folder != "" && !strings.HasPrefix(cairn.FoldPath(t.Path), cairn.FoldPath(folder)+"/") {
			continue
		}
		if f.Field != "" {
			if scanned++; scanned > maxFieldScan {
				return nil, cairn.Errorf(cairn.EINVALID, "a filter by field reads at most %d pages; this one would read more", maxFieldScan).
					WithHint("Narrow it with a folder or a type.")
			}
			p, err := s.ix.Page(ctx, t.Path)
			if err != nil {
				return nil, err
			}
			if !hasField(p, f.Field, f.Value) {
				continue
			}
		}
		match = append(match, t)
	}
	l := &PageList{Total: len(match), Pages: []index.Title{}}
	if f.Offset < len(match) {
		end := min(len(match), f.Offset+limit)
		l.Pages = match[f.Offset:end]
		if end < len(match) {
			l.Next = end
		}
	}
	return l, nil
}

// Pages lists the pages of the revision rev (main when "") that f
// selects.
func (a *App) Pages(ctx context.Context, rev string, f PageFilter) (*PageList, error) {
	var out *PageList
	err := a.View(rev).Read(ctx, func(s *Snapshot) (err error) {
		out, err = s.Pages(ctx, f)
		return err
	})
	return out, err
}

// hasField reports whether a page's frontmatter has field, with value
// when value is set (a list: among its items; compared as text).
func hasField(p *index.PageInfo, field, value string) bool {
	var v any
	switch field {
	case "title":
		v = p.Title
	case "type":
		v = p.Type
	default:
		var ok bool
		if v, ok = p.Frontmatter[field]; !ok {
			return false
		}
	}
	if value == "" {
		return true
	}
	if list, ok := v.([]any); ok {
		return slices.ContainsFunc(list, func(x any) bool { return textOf(x) == value })
	}
	return textOf(v) == value
}

func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// Inspection is everything about one page of a view.
type Inspection struct {
	Page  *index.PageInfo  `json:"page"`
	Links []index.LinkInfo `json:"links"`
	// Backlinks are the first InspectBacklinks of the links into the
	// page, of BacklinksTotal.
	Backlinks      []index.LinkInfo `json:"backlinks"`
	BacklinksTotal int              `json:"backlinks_total"`
	Findings       []lint.Finding   `json:"findings"`
	// Commits are the last commits that changed the page (none for a
	// page only a draft has).
	Commits []*cairn.Commit `json:"commits"`
}

// InspectBacklinks is the most backlinks Inspect returns; BacklinksPage
// reads the rest.
const InspectBacklinks = 100

// Inspect returns what the view knows of the page ref names, with the
// last commits (at most commits) that changed it.
func (s *Snapshot) Inspect(ctx context.Context, ref string, commits int) (*Inspection, error) {
	p, err := s.ix.Page(ctx, ref)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Page: p}
	if in.Links, err = s.ix.Links(ctx, p.Path); err != nil {
		return nil, err
	}
	back, err := s.ix.BacklinksPage(ctx, p.Path, 0, InspectBacklinks)
	if err != nil {
		return nil, err
	}
	in.Backlinks, in.BacklinksTotal = back.Links, back.Total
	if in.Findings, err = s.ix.Findings(ctx, index.FindingFilter{Page: p.Path}); err != nil {
		return nil, err
	}
	in.Links, in.Backlinks, in.Findings = nonNil(in.Links), nonNil(in.Backlinks), nonNil(in.Findings)
	in.Commits = []*cairn.Commit{}
	if commits > 0 {
		cs, err := s.a.Log(ctx, s.Commit.String(), LogOptions{Path: p.Path, Limit: commits})
		if err != nil && !errors.Is(err, cairn.ErrPurged) {
			return nil, err
		}
		in.Commits = append(in.Commits, cs...)
	}
	return in, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
