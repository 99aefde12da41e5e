package mcpserver

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/auth"
	"cairn/eva"
	"cairn/index"
	"cairn/ingest"
	"cairn/lint"
)

// read runs fn on a snapshot of the server's view.
func (c *call) read(ctx context.Context, fn func(*app.Snapshot) error) error {
	return c.s.view.Read(ctx, fn)
}

// Eva's four tools keep Eva's names, arguments and result shapes.

type searchIn struct {
	Query  string `json:"query" jsonschema:"words to find: every word must occur; \"a phrase\", prefix*"`
	Type   string `json:"type,omitempty" jsonschema:"only pages of this type"`
	Folder string `json:"folder,omitempty" jsonschema:"only pages under this folder"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most matches, 1 to 50 (default 10)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

type searchMatch struct {
	ID      string  `json:"id"`
	Path    string  `json:"path"`
	Title   string  `json:"title"`
	Type    string  `json:"type,omitempty"`
	Score   float64 `json:"score"`
	Excerpt string  `json:"excerpt"`
}

type searchOut struct {
	Query      string        `json:"query"`
	Matches    []searchMatch `json:"matches"`
	NextCursor string        `json:"next_cursor,omitempty"`
	Note       string        `json:"note,omitempty"`
}

func searchTool(ctx context.Context, c *call, in searchIn) (*searchOut, error) {
	off, err := app.CursorOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	if in.Limit < 0 || in.Limit > 50 {
		return nil, cairn.Errorf(cairn.EINVALID, "limit is 1 to 50, not %d", in.Limit)
	}
	limit := cmp.Or(in.Limit, 10)
	out := &searchOut{Query: in.Query, Matches: []searchMatch{}}
	err = c.read(ctx, func(s *app.Snapshot) error {
		rs, err := s.Search(ctx, index.SearchQuery{Text: in.Query, Type: in.Type, Folder: in.Folder, Limit: limit, Offset: off})
		if err != nil {
			return err
		}
		if len(rs) == limit && off+2*limit <= 1000 {
			// There may be more: the next page says (it may be empty).
			out.NextCursor = app.Cursor(off + limit)
		}
		for _, r := range rs {
			out.Matches = append(out.Matches, searchMatch{ID: r.ID, Path: r.Path, Title: r.Title, Type: r.Type, Score: r.Score, Excerpt: r.Snippet})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n, cut := fit(c, out, &out.Matches); cut {
		out.NextCursor = app.Cursor(off + n)
		out.Note = "cut to fit the result budget; next_cursor continues"
	}
	return out, nil
}

type readPageIn struct {
	ID     string `json:"id" jsonschema:"the page: its id (path without .md), path, file name or title"`
	Offset int    `json:"offset,omitempty" jsonschema:"read the body from this byte on (next_offset of a cut result)"`
}

type readPageOut struct {
	ID            string         `json:"id"`
	Path          string         `json:"path"`
	Title         string         `json:"title"`
	Type          string         `json:"type,omitempty"`
	Frontmatter   map[string]any `json:"frontmatter"`
	Body          string         `json:"body"`
	OutgoingLinks []string       `json:"outgoingLinks"`
	IncomingFrom  []string       `json:"incomingFrom"`
	// Hash is the content's hash: send it as expected_hash to change the page.
	Hash       string `json:"hash"`
	Commit     string `json:"commit"`
	NextOffset int    `json:"next_offset,omitempty"`
	Note       string `json:"note,omitempty"`
}

// joinNotes joins two notes of one result.
func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func readPageTool(ctx context.Context, c *call, in readPageIn) (*readPageOut, error) {
	if in.Offset < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "offset is 0 or more, not %d", in.Offset)
	}
	out := &readPageOut{Frontmatter: map[string]any{}, OutgoingLinks: []string{}, IncomingFrom: []string{}}
	err := c.read(ctx, func(s *app.Snapshot) error {
		p, err := s.Page(ctx, in.ID)
		if err != nil {
			if cairn.ErrorCode(err) == cairn.ENOTFOUND {
				return cairn.Errorf(cairn.ENOTFOUND, "no page %q", in.ID).WithHint("use search to find valid ids")
			}
			return err
		}
		f, err := s.ReadFile(ctx, p.Path)
		if err != nil {
			return err
		}
		out.ID, out.Path, out.Title, out.Type = p.ID, p.Path, p.Title, p.Type
		out.Hash, out.Commit = f.Entry.Blob.String(), s.Commit.String()
		for k, v := range p.Frontmatter {
			out.Frontmatter[k] = v
		}
		out.Body = f.Content
		if strings.HasSuffix(p.Path, ".md") {
			out.Body = string(bodyOf([]byte(f.Content)))
		}
		ls, err := s.Links(ctx, p.Path)
		if err != nil {
			return err
		}
		// The pages of the first links into it: a page thousands link to
		// is not read whole (the backlinks tool pages through them).
		back, err := s.BacklinksPage(ctx, p.Path, 0, app.MaxBacklinks)
		if err != nil {
			return err
		}
		bs := back.Links
		if back.Total > len(bs) {
			out.Note = "incomingFrom holds the pages of the first " + strconv.Itoa(len(bs)) + " of the " + strconv.Itoa(back.Total) + " links here (backlinks lists them all)"
		}
		seen := map[string]bool{}
		for _, l := range ls {
			if (l.Kind == "wiki" || l.Kind == "embed") && !seen[l.Target] {
				seen[l.Target] = true
				out.OutgoingLinks = append(out.OutgoingLinks, l.Target)
			}
		}
		from := map[string]bool{}
		for _, l := range bs {
			if id := strings.TrimSuffix(l.From, ".md"); l.From != p.Path && !from[id] {
				from[id] = true
				out.IncomingFrom = append(out.IncomingFrom, id)
			}
		}
		slices.Sort(out.IncomingFrom)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if in.Offset > len(out.Body) {
		return nil, cairn.Errorf(cairn.EINVALID, "offset %d is past the body's end (%d bytes)", in.Offset, len(out.Body))
	}
	out.Body = out.Body[in.Offset:]
	if len(mustJSON(out)) > c.budget() {
		if kept, cut := fit(c, out, &out.IncomingFrom); cut && len(mustJSON(out)) <= c.budget() {
			out.Note = joinNotes(out.Note, "incomingFrom holds "+strconv.Itoa(kept)+" of the pages linking here (backlinks lists them all)")
		}
	}
	note := out.Note // what was said before the body was cut
	for over := len(mustJSON(out)) - c.budget(); over > 0 && out.Body != ""; over = len(mustJSON(out)) - c.budget() {
		out.Body = cutText(out.Body, max(0, len(out.Body)-over-160))
		out.NextOffset = in.Offset + len(out.Body)
		out.Note = joinNotes(note, "the body was cut to fit the result budget; read on with offset "+strconv.Itoa(out.NextOffset))
	}
	return out, nil
}

type neighborsIn struct {
	ID string `json:"id" jsonschema:"the page: its id, path or title"`
}

func neighborsTool(ctx context.Context, c *call, in neighborsIn) (*app.Neighbors, error) {
	var out *app.Neighbors
	err := c.read(ctx, func(s *app.Snapshot) (err error) {
		out, err = s.Neighbors(ctx, in.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	fit(c, out, &out.Incoming)
	fit(c, out, &out.Outgoing)
	return out, nil
}

type pathIn struct {
	From     string `json:"from" jsonschema:"the first page: id, path or title"`
	To       string `json:"to" jsonschema:"the last page"`
	MaxDepth int    `json:"max_depth,omitempty" jsonschema:"the most links to follow, 1 to 12 (default 8)"`
}

type pathOut struct {
	From string   `json:"from"`
	To   string   `json:"to"`
	Path []string `json:"path"`
	Note string   `json:"note,omitempty"`
}

func shortestPathTool(ctx context.Context, c *call, in pathIn) (*pathOut, error) {
	if in.MaxDepth < 0 || in.MaxDepth > 12 {
		return nil, cairn.Errorf(cairn.EINVALID, "max_depth is 1 to 12, not %d", in.MaxDepth)
	}
	out := &pathOut{From: in.From, To: in.To}
	err := c.read(ctx, func(s *app.Snapshot) (err error) {
		out.Path, err = s.ShortestPath(ctx, in.From, in.To, cmp.Or(in.MaxDepth, 8))
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Path == nil {
		out.Note = "no path within " + strconv.Itoa(cmp.Or(in.MaxDepth, 8)) + " links: the pages are in disconnected components, or further apart"
	}
	return out, nil
}

type listPagesIn struct {
	Folder string   `json:"folder,omitempty" jsonschema:"only pages under this folder"`
	Type   string   `json:"type,omitempty" jsonschema:"only pages of this type"`
	Field  string   `json:"field,omitempty" jsonschema:"only pages whose frontmatter has this field"`
	Value  string   `json:"value,omitempty" jsonschema:"with field: only where it has this value (or holds it in a list)"`
	Where  []string `json:"where,omitempty" jsonschema:"conditions on frontmatter fields, all met, answered from the index: 'status = done', 'year >= 2020', 'tags ~ ink', 'owner' (has the field); operators = != < <= > >= ~"`
	Limit  int      `json:"limit,omitempty" jsonschema:"the most pages, 1 to 500 (default 100)"`
	Cursor string   `json:"cursor,omitempty"`
}

type listPagesOut struct {
	Pages      []index.Title `json:"pages"`
	Total      int           `json:"total"`
	NextCursor string        `json:"next_cursor,omitempty"`
	Note       string        `json:"note,omitempty"`
}

func listPagesTool(ctx context.Context, c *call, in listPagesIn) (*listPagesOut, error) {
	off, err := app.CursorOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	if in.Limit < 0 || in.Limit > 500 {
		return nil, cairn.Errorf(cairn.EINVALID, "limit is 1 to 500, not %d", in.Limit)
	}
	var l *app.PageList
	err = c.read(ctx, func(s *app.Snapshot) (err error) {
		l, err = s.Pages(ctx, app.PageFilter{Folder: in.Folder, Type: in.Type, Field: in.Field, Value: in.Value, Where: in.Where, Offset: off, Limit: in.Limit})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &listPagesOut{Pages: l.Pages, Total: l.Total, NextCursor: app.Cursor(l.Next)}
	if n, cut := fit(c, out, &out.Pages); cut {
		out.NextCursor = app.Cursor(off + n)
		out.Note = "cut to fit the result budget; next_cursor continues"
	}
	return out, nil
}

type pageIn struct {
	Page string `json:"page" jsonschema:"the page: its id, path or title"`
}

type inspectOut struct {
	*app.Inspection
	View   string `json:"view"`
	Commit string `json:"commit"`
	Note   string `json:"note,omitempty"`
}

func inspectTool(ctx context.Context, c *call, in pageIn) (*inspectOut, error) {
	out := &inspectOut{}
	err := c.read(ctx, func(s *app.Snapshot) (err error) {
		out.View, out.Commit = s.View, s.Commit.String()
		out.Inspection, err = s.Inspect(ctx, in.Page, 5)
		return err
	})
	if err != nil {
		return nil, err
	}
	_, cut1 := fit(c, out, &out.Backlinks)
	_, cut2 := fit(c, out, &out.Links)
	if cut1 || cut2 {
		out.Note = "links or backlinks were cut to fit the result budget; the links and backlinks tools page through them"
	}
	return out, nil
}

type linksIn struct {
	Page   string `json:"page" jsonschema:"the page: its id, path or title"`
	Cursor string `json:"cursor,omitempty"`
}

type linksOut struct {
	Page       string           `json:"page"`
	Links      []index.LinkInfo `json:"links"`
	Total      int              `json:"total"`
	NextCursor string           `json:"next_cursor,omitempty"`
}

func linksTool(back bool) func(ctx context.Context, c *call, in linksIn) (*linksOut, error) {
	return func(ctx context.Context, c *call, in linksIn) (*linksOut, error) {
		off, err := app.CursorOffset(in.Cursor)
		if err != nil {
			return nil, err
		}
		out := &linksOut{Page: in.Page, Links: []index.LinkInfo{}}
		err = c.read(ctx, func(s *app.Snapshot) error {
			p, err := s.Resolve(ctx, in.Page)
			if err != nil {
				return err
			}
			out.Page = p
			if back {
				part, err := s.BacklinksPage(ctx, p, off, app.MaxBacklinks)
				if err != nil {
					return err
				}
				out.Total = part.Total
				out.Links = append(out.Links, part.Links...)
				return nil
			}
			ls, err := s.Links(ctx, p)
			out.Total = len(ls)
			out.Links = append(out.Links, ls[min(off, len(ls)):]...)
			return err
		})
		if err != nil {
			return nil, err
		}
		if n, _ := fit(c, out, &out.Links); off+n < out.Total {
			out.NextCursor = app.Cursor(off + n)
		}
		return out, nil
	}
}

type lintIn struct {
	Page   string `json:"page,omitempty" jsonschema:"only this page's findings (a path)"`
	Rule   string `json:"rule,omitempty" jsonschema:"only this rule's findings"`
	Min    string `json:"min,omitempty" jsonschema:"the least severity: error, warning or info"`
	Cursor string `json:"cursor,omitempty"`
}

type lintOut struct {
	Findings   []lint.Finding `json:"findings"`
	Total      int            `json:"total"`
	NextCursor string         `json:"next_cursor,omitempty"`
}

// lintPart is the most findings the lint tool reads for one answer.
const lintPart = 1000

func lintTool(ctx context.Context, c *call, in lintIn) (*lintOut, error) {
	off, err := app.CursorOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	out := &lintOut{Findings: []lint.Finding{}}
	err = c.read(ctx, func(s *app.Snapshot) error {
		page := in.Page
		if page != "" {
			if page, err = s.Resolve(ctx, page); err != nil {
				return err
			}
		}
		// One part, cut further to fit the budget: a vault's findings
		// are not read whole for a page of them.
		p, err := s.FindingsPage(ctx, index.FindingFilter{Page: page, Rule: in.Rule, Min: lint.Severity(in.Min)}, off, lintPart)
		if err != nil {
			return err
		}
		out.Total = p.Total()
		out.Findings = append(out.Findings, p.Findings...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n, _ := fit(c, out, &out.Findings); off+n < out.Total {
		out.NextCursor = app.Cursor(off + n)
	}
	return out, nil
}

type logIn struct {
	Ref    string `json:"ref,omitempty" jsonschema:"the branch, tag or commit to start from (default: the view's)"`
	Page   string `json:"page,omitempty" jsonschema:"only commits that changed this file (a path)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most commits, 1 to 100 (default 20)"`
	Cursor string `json:"cursor,omitempty"`
}

type logOut struct {
	Commits    []*cairn.Commit `json:"commits"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

func logTool(ctx context.Context, c *call, in logIn) (*logOut, error) {
	off, err := app.CursorOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	if in.Limit < 0 || in.Limit > 100 {
		return nil, cairn.Errorf(cairn.EINVALID, "limit is 1 to 100, not %d", in.Limit)
	}
	limit := cmp.Or(in.Limit, 20)
	ref := in.Ref
	if ref == "" {
		err := c.read(ctx, func(s *app.Snapshot) error {
			ref = s.Commit.String()
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	cs, err := c.s.a.Log(ctx, ref, app.LogOptions{Path: in.Page, Limit: limit + 1, Skip: off})
	if err != nil {
		return nil, err
	}
	out := &logOut{Commits: append([]*cairn.Commit{}, cs...)}
	if len(out.Commits) > limit {
		out.Commits = out.Commits[:limit]
	}
	n, cut := fit(c, out, &out.Commits)
	if cut || len(cs) > limit {
		out.NextCursor = app.Cursor(off + n)
	}
	return out, nil
}

type diffIn struct {
	From  string `json:"from" jsonschema:"the revision to compare from"`
	To    string `json:"to" jsonschema:"the revision to compare to"`
	Patch bool   `json:"patch,omitempty" jsonschema:"render each change as a unified diff"`
}

type diffOut struct {
	*app.TreeDiff
	Note string `json:"note,omitempty"`
}

func diffTool(ctx context.Context, c *call, in diffIn) (*diffOut, error) {
	if in.From == "" || in.To == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "a diff compares two revisions: from and to")
	}
	d, err := c.s.a.Diff(ctx, in.From, in.To, app.DiffOptions{Patch: in.Patch})
	if err != nil {
		return nil, err
	}
	out := &diffOut{TreeDiff: d}
	if out.Changes == nil {
		out.Changes = []cairn.Change{}
	}
	if n, cut := fit(c, out, &out.Patches); cut {
		out.Note = "patches were cut to fit the result budget: " + strconv.Itoa(n) + " of " + strconv.Itoa(len(d.Changes))
	}
	if n, cut := fit(c, out, &out.Changes); cut {
		out.Note = "changes were cut to fit the result budget: " + strconv.Itoa(n) + " listed"
	}
	return out, nil
}

type noIn struct{}

type refsOut struct {
	Refs []cairn.Ref `json:"refs"`
	Note string      `json:"note,omitempty"`
}

func refsTool(tags bool) func(ctx context.Context, c *call, _ noIn) (*refsOut, error) {
	return func(ctx context.Context, c *call, _ noIn) (*refsOut, error) {
		var rs []cairn.Ref
		var err error
		if tags {
			rs, err = c.s.a.Tags(ctx)
		} else {
			rs, err = c.s.a.Branches(ctx)
		}
		if err != nil {
			return nil, err
		}
		out := &refsOut{Refs: append([]cairn.Ref{}, rs...)}
		if n, cut := fit(c, out, &out.Refs); cut {
			out.Note = "cut to fit the result budget: " + strconv.Itoa(n) + " of " + strconv.Itoa(len(rs))
		}
		return out, nil
	}
}

type topologyIn struct {
	Top int `json:"top,omitempty" jsonschema:"how many hubs and orphans to list, 1 to 100 (default 20)"`
}

func topologyTool(ctx context.Context, c *call, in topologyIn) (*app.Topology, error) {
	if in.Top < 0 || in.Top > 100 {
		return nil, cairn.Errorf(cairn.EINVALID, "top is 1 to 100, not %d", in.Top)
	}
	var out *app.Topology
	err := c.read(ctx, func(s *app.Snapshot) (err error) {
		out, err = s.Topology(ctx, cmp.Or(in.Top, 20))
		return err
	})
	if err != nil {
		return nil, err
	}
	fit(c, out, &out.Folders)
	return out, nil
}

type listTypesOut struct {
	View  string            `json:"view"`
	Types []app.TypeSummary `json:"types"`
}

func listTypesTool(ctx context.Context, c *call, _ noIn) (*listTypesOut, error) {
	out := &listTypesOut{}
	err := c.read(ctx, func(s *app.Snapshot) (err error) {
		out.View = s.View
		out.Types, err = s.Types(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	fit(c, out, &out.Types)
	return out, nil
}

type getSchemaIn struct {
	Type string `json:"type" jsonschema:"the type's name, as a page's frontmatter type: names it"`
}

type getSchemaOut struct {
	View string `json:"view"`
	*app.TypeDetail
	Note string `json:"note,omitempty"`
}

func getSchemaTool(ctx context.Context, c *call, in getSchemaIn) (*getSchemaOut, error) {
	if in.Type == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "name the type").WithHint("list_types lists the declared types.")
	}
	out := &getSchemaOut{}
	err := c.read(ctx, func(s *app.Snapshot) (err error) {
		out.View = s.View
		out.TypeDetail, err = s.Type(ctx, in.Type, 100)
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, cut := fit(c, out, &out.Findings); cut {
		out.Note = "the findings of its pages were cut to fit the result budget; the lint tool pages through them"
	}
	return out, nil
}

type healthOut struct {
	Version string      `json:"version"`
	View    string      `json:"view"`
	Commit  string      `json:"commit"`
	Counts  index.Stats `json:"counts"`
	// IndexCurrent says whether main's index reflects main's head.
	IndexCurrent bool           `json:"index_current"`
	Jobs         map[string]int `json:"jobs"`
	Held         int            `json:"held_reviews"`
	Principal    string         `json:"principal"`
	Scopes       []auth.Scope   `json:"scopes"`
}

func healthTool(ctx context.Context, c *call, _ noIn) (*healthOut, error) {
	out := &healthOut{Version: c.s.opts.Version, Jobs: map[string]int{}, Principal: string(cairn.PrincipalFromContext(ctx)),
		Scopes: append([]auth.Scope{}, c.caller.Token.Scopes...)}
	err := c.read(ctx, func(s *app.Snapshot) (err error) {
		out.View, out.Commit = s.View, s.Commit.String()
		out.Counts, err = s.Stats(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.IndexCurrent, err = c.s.a.IndexCurrent(ctx); err != nil {
		return nil, err
	}
	jobs, err := c.s.a.Jobs(ctx, app.JobFilter{Limit: 1000})
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		out.Jobs[j.State]++
	}
	held, err := c.s.a.Proposals(ctx, admit.ProposalFilter{Status: "held", Limit: 1000})
	if err != nil {
		return nil, err
	}
	out.Held = len(held)
	return out, nil
}

type statusIn struct {
	Status string `json:"status,omitempty" jsonschema:"only those in this status"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most listed, 1 to 100 (default 20)"`
}

type sourcesOut struct {
	Sources []*ingest.Source `json:"sources"`
	Note    string           `json:"note,omitempty"`
}

func listSourcesTool(ctx context.Context, c *call, in statusIn) (*sourcesOut, error) {
	if in.Limit < 0 || in.Limit > 100 {
		return nil, cairn.Errorf(cairn.EINVALID, "limit is 1 to 100, not %d", in.Limit)
	}
	limit := cmp.Or(in.Limit, 20)
	ss, err := c.s.a.Sources(ctx, app.SourceFilter{Status: in.Status, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &sourcesOut{Sources: ss.Sources}
	if ss.Total > len(ss.Sources) {
		out.Note = strconv.Itoa(len(ss.Sources)) + " of " + strconv.Itoa(ss.Total) + " sources"
	}
	if n, cut := fit(c, out, &out.Sources); cut {
		out.Note = "cut to fit the result budget: " + strconv.Itoa(n) + " of " + strconv.Itoa(ss.Total)
	}
	return out, nil
}

type jobsOut struct {
	Jobs []*app.Job `json:"jobs"`
	Note string     `json:"note,omitempty"`
}

func listJobsTool(ctx context.Context, c *call, in statusIn) (*jobsOut, error) {
	if in.Limit < 0 || in.Limit > 100 {
		return nil, cairn.Errorf(cairn.EINVALID, "limit is 1 to 100, not %d", in.Limit)
	}
	f := app.JobFilter{Limit: cmp.Or(in.Limit, 20)}
	if in.Status != "" {
		f.States = []string{in.Status}
	}
	js, err := c.s.a.Jobs(ctx, f)
	if err != nil {
		return nil, err
	}
	out := &jobsOut{Jobs: append([]*app.Job{}, js...)}
	if n, cut := fit(c, out, &out.Jobs); cut {
		out.Note = "cut to fit the result budget: " + strconv.Itoa(n) + " of " + strconv.Itoa(len(js))
	}
	return out, nil
}

type idIn struct {
	ID int64 `json:"id" jsonschema:"the id"`
}

type jobOut struct {
	*app.Job
	Note string `json:"note,omitempty"`
}

func jobStatusTool(ctx context.Context, c *call, in idIn) (*jobOut, error) {
	j, err := c.s.a.Job(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := &jobOut{Job: j}
	if n := len(j.Events); n > 0 {
		// The latest activity matters most: keep the end.
		events := j.Events
		for len(mustJSON(out)) > c.budget() && len(out.Events) > 1 {
			out.Events = out.Events[len(out.Events)/2:]
		}
		if len(out.Events) < len(events) {
			out.Note = "the job's first events were left out to fit the result budget: " + strconv.Itoa(len(out.Events)) + " of " + strconv.Itoa(n)
		}
	}
	return out, nil
}

type reviewsOut struct {
	Reviews []*cairn.Proposal `json:"reviews"`
	Note    string            `json:"note,omitempty"`
}

func listReviewsTool(ctx context.Context, c *call, in statusIn) (*reviewsOut, error) {
	if in.Limit < 0 || in.Limit > 100 {
		return nil, cairn.Errorf(cairn.EINVALID, "limit is 1 to 100, not %d", in.Limit)
	}
	ps, err := c.s.a.Proposals(ctx, admit.ProposalFilter{Status: in.Status, Limit: cmp.Or(in.Limit, 20)})
	if err != nil {
		return nil, err
	}
	out := &reviewsOut{Reviews: append([]*cairn.Proposal{}, ps...)}
	if n, cut := fit(c, out, &out.Reviews); cut {
		out.Note = "cut to fit the result budget: " + strconv.Itoa(n) + " of " + strconv.Itoa(len(ps))
	}
	return out, nil
}

type showReviewIn struct {
	ID    int64 `json:"id" jsonschema:"the review's (proposal's) id"`
	Patch bool  `json:"patch,omitempty" jsonschema:"render each change as a unified diff"`
}

type showReviewOut struct {
	*app.ProposalView
	Note string `json:"note,omitempty"`
}

func showReviewTool(ctx context.Context, c *call, in showReviewIn) (*showReviewOut, error) {
	v, err := c.s.a.ShowProposal(ctx, in.ID, app.ProposalOptions{Patch: in.Patch})
	if err != nil {
		return nil, err
	}
	out := &showReviewOut{ProposalView: v}
	if out.Changes == nil {
		out.Changes = []cairn.Change{}
	}
	if n, cut := fit(c, out, &out.Patches); cut {
		out.Note = "patches were cut to fit the result budget: " + strconv.Itoa(n) + " of " + strconv.Itoa(len(v.Changes))
	}
	if n, cut := fit(c, out, &out.Changes); cut {
		out.Note = "changes were cut to fit the result budget: " + strconv.Itoa(n) + " listed"
	}
	return out, nil
}

type runToolIn struct {
	Tool   string   `json:"tool" jsonschema:"the tool: personal-review, evidence-map, reading-threads, decision-brief, options-review, flashcards or practice-exam"`
	Focus  string   `json:"focus,omitempty" jsonschema:"narrow the tool to a subject, at most 400 characters"`
	Format string   `json:"format,omitempty" jsonschema:"practice-exam only: mixed (default), multiple-choice, written or short-answer"`
	Count  int      `json:"count,omitempty" jsonschema:"flashcards (6 to 30, default 15) or practice-exam questions (4 to 20, default 8)"`
	Save   bool     `json:"save,omitempty" jsonschema:"keep the result as an analysis page, held for a person's review (needs the propose scope)"`
	Scope  []string `json:"scope,omitempty" jsonschema:"a working set: the only pages (at most 250) the tool may read and cite"`
}

func runToolTool(ctx context.Context, c *call, in runToolIn) (*app.Answer, error) {
	return askTool(ctx, c, askIn{Save: in.Save, Scope: in.Scope,
		tool: app.AskRequest{Tool: in.Tool, ToolOptions: eva.ToolOptions{Focus: in.Focus, Format: in.Format, Count: in.Count}}})
}

type askIn struct {
	Question string         `json:"question" jsonschema:"the question, at most 4000 characters"`
	Save     bool           `json:"save,omitempty" jsonschema:"keep the answer as an analysis page, held for a person's review (needs the propose scope)"`
	Scope    []string       `json:"scope,omitempty" jsonschema:"a working set: the only pages (ids, paths or titles; at most 250) the answer may read and cite"`
	tool     app.AskRequest // a tool run's tool and options (run_tool)
}

func askTool(ctx context.Context, c *call, in askIn) (*app.Answer, error) {
	if in.Save {
		auth.Changing(ctx, c.req.Params.Name) // a page proposed: audited, refused or not
	}
	if in.Save && !c.caller.Token.Has(auth.Propose) {
		return nil, cairn.Errorf(cairn.EFORBIDDEN, "saving an answer proposes a page: it needs the scope propose").
			WithHint("Ask without save.")
	}
	req := in.tool
	req.Question, req.Save, req.Scope = in.Question, in.Save, in.Scope
	return c.s.a.Ask(ctx, req)
}
