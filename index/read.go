package index

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
)

// Reader answers questions about one state of the index: the committed
// index of main ([Index.Main]) or a view of another tree ([Index.View]).
type Reader struct {
	q StorageReader
	t trees
	// snapshot, when set, opens one state of q's rows, for a read of
	// several statements that must agree (BacklinksPage); q then reads
	// whatever is committed at each statement.
	snapshot func(context.Context) (StorageSnapshot, error)
}

// PageInfo is what the index knows about a file.
type PageInfo struct {
	ID          string             `json:"id"`
	Path        string             `json:"path"`
	Kind        string             `json:"kind"` // page, attachment, source, contract, hidden
	Title       string             `json:"title,omitempty"`
	TitleSource string             `json:"title_source,omitempty"`
	Type        string             `json:"type,omitempty"`
	Frontmatter map[string]any     `json:"frontmatter,omitempty"`
	Aliases     []string           `json:"aliases,omitempty"`
	Sources     []string           `json:"sources,omitempty"`
	Headings    []markdown.Heading `json:"headings,omitempty"`
	Blob        cairn.Hash         `json:"blob"`
	Size        int64              `json:"size"`
	Inbound     int                `json:"inbound"`
	// Depth is the number of links from index.md; -1 when unreachable or
	// when the vault has no index.md.
	Depth int `json:"depth"`
}

var fileKinds = map[lint.Kind]string{
	lint.KindPage: "page", lint.KindAttachment: "attachment", lint.KindSource: "source",
	lint.KindContract: "contract", lint.KindHidden: "hidden",
}

// Resolve finds the file a reference names, the way a wikilink would: an
// exact path, an id, a path without .md, a path suffix, a file name, a
// title or an alias. A reference has no linking page, so where a link
// would take the shortest of several paths it is ambiguous instead: an
// error (EINVALID) listing the candidates, as for any ambiguity; nothing
// found is ENOTFOUND.
func (r *Reader) Resolve(ctx context.Context, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", cairn.Errorf(cairn.EINVALID, "no page named").WithHint("Name a page by path, id or title.")
	}
	if id, _, err := fileID(ctx, r.q, ref); err != nil {
		return "", err
	} else if id != 0 {
		return ref, nil
	}
	l := markdown.Link{Kind: markdown.LinkWiki, Target: strings.TrimSuffix(ref, ".md")}
	var qerr error
	res := markdown.Match("", markdown.LookupKeys(l), func(k markdown.Key) []string {
		h, err := holders(ctx, r.q, k)
		if err != nil && qerr == nil {
			qerr = err
		}
		return h
	})
	switch {
	case qerr != nil:
		return "", qerr
	case res.Status == markdown.StatusAmbiguous || res.Chosen():
		return "", cairn.Errorf(cairn.EINVALID, "%q could mean any of %s", ref, res.CandidateList()).
			WithHint("Name the page by its path.")
	case res.Status != markdown.StatusResolved:
		return "", cairn.Errorf(cairn.ENOTFOUND, "no page or file is named %q", ref).WithHint("Try: cairn search " + ref)
	}
	return res.Path, nil
}

// Page returns what the index knows about the file a reference names.
func (r *Reader) Page(ctx context.Context, ref string) (*PageInfo, error) {
	path, err := r.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	id, _, err := fileID(ctx, r.q, path)
	if err != nil {
		return nil, err
	}
	row, pg, err := pageRow(ctx, r.q, id)
	if err != nil {
		return nil, err
	}
	p := &PageInfo{ID: path, Path: path, Kind: fileKinds[row.Kind], Blob: row.Blob, Size: row.Size, Inbound: row.Inbound, Depth: row.Depth}
	if pg != nil {
		p.ID, p.Title, p.TitleSource, p.Type = pg.ID, pg.Title, string(pg.TitleSource), pg.Type
		p.Frontmatter, p.Aliases, p.Sources, p.Headings = pg.Frontmatter, pg.Aliases, pg.Sources, pg.Headings
	}
	return p, nil
}

// LinkInfo is one link between two files.
type LinkInfo struct {
	// ID names the link: the linking file's path and the link's position.
	ID      string `json:"id"`
	From    string `json:"from"`
	To      string `json:"to,omitempty"` // the file it leads to, when resolved
	Kind    string `json:"kind"`
	Raw     string `json:"raw"`
	Target  string `json:"target,omitempty"`
	Heading string `json:"heading,omitempty"`
	Block   string `json:"block,omitempty"`
	Label   string `json:"label,omitempty"`
	Line    int    `json:"line"`
	Status  string `json:"status"` // resolved, broken, ambiguous
	// Candidates are the files an ambiguous link could mean, or those a
	// resolved link's file was chosen among by the shortest path: at most
	// markdown.MaxCandidates, and MoreCandidates counts the others.
	Candidates     []string `json:"candidates,omitempty"`
	MoreCandidates int      `json:"more_candidates,omitempty"`
	// MissingHeading is set when the target has no such heading or block.
	MissingHeading bool `json:"missing_heading,omitempty"`
}

// CandidateList is the link's candidates for a person (markdown.ListPaths).
func (l LinkInfo) CandidateList() string { return markdown.ListPaths(l.Candidates, l.MoreCandidates) }

// linkInfos describes stored links, each with SrcPath and DstPath.
func linkInfos(rows []LinkRow) ([]LinkInfo, error) {
	var out []LinkInfo
	for _, row := range rows {
		var l markdown.Link
		if err := decodeLink(row.Data, row.Flags, &l); err != nil {
			return nil, err
		}
		li := LinkInfo{From: row.SrcPath, To: row.DstPath, Line: l.Line}
		li.Kind, li.Raw, li.Target, li.Heading, li.Block, li.Label = string(l.Kind), rawLink(l), l.Target, l.Heading, l.Block, l.Label
		li.Status = string(statusNames[row.Status])
		li.ID = li.From + "#" + itoa(row.Ord)
		if row.Detail != "" {
			var d markdown.Resolution
			if err := json.Unmarshal([]byte(row.Detail), &d); err != nil {
				return nil, err
			}
			li.Candidates, li.MoreCandidates, li.MissingHeading = d.Candidates, d.MoreCandidates, d.MissingHeading || d.MissingBlock
		}
		out = append(out, li)
	}
	return out, nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// Links returns the links of the file a reference names, in order.
func (r *Reader) Links(ctx context.Context, ref string) ([]LinkInfo, error) {
	path, err := r.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	id, _, err := fileID(ctx, r.q, path)
	if err != nil {
		return nil, err
	}
	rows, err := r.q.LinksFrom(ctx, id)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].SrcPath = path
	}
	return linkInfos(rows)
}

// Backlinks returns the links from other files that lead to the file a
// reference names, by linking path and position.
func (r *Reader) Backlinks(ctx context.Context, ref string) ([]LinkInfo, error) {
	path, err := r.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	id, _, err := fileID(ctx, r.q, path)
	if err != nil {
		return nil, err
	}
	rows, err := r.q.LinksTo(ctx, id, 0, 0)
	if err != nil {
		return nil, err
	}
	return linkInfos(rows)
}

// LinkPage is part of a page's backlinks.
type LinkPage struct {
	// Page is the path of the page the links lead to.
	Page  string     `json:"page"`
	Links []LinkInfo `json:"links"`
	// Total is the number of links into the page, of every part.
	Total int `json:"total"`
}

// BacklinksPage is Backlinks in parts: limit of the links into the file a
// reference names from the off-th on (limit 0: all of them from there),
// and how many there are, so that a page a great many others link to is
// read a part at a time.
func (r *Reader) BacklinksPage(ctx context.Context, ref string, off, limit int) (*LinkPage, error) {
	if r.snapshot != nil {
		// The count and the part of one state: a commit between them
		// would make the total disagree with the part.
		return oneState(ctx, r, func(r *Reader) (*LinkPage, error) { return r.BacklinksPage(ctx, ref, off, limit) })
	}
	path, err := r.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	id, _, err := fileID(ctx, r.q, path)
	if err != nil {
		return nil, err
	}
	out := &LinkPage{Page: path}
	if out.Total, err = r.q.CountLinksTo(ctx, id); err != nil {
		return nil, err
	}
	var rows []LinkRow
	if off < out.Total {
		if rows, err = r.q.LinksTo(ctx, id, off, limit); err != nil {
			return nil, err
		}
	}
	if out.Links, err = linkInfos(rows); err != nil {
		return nil, err
	}
	if out.Links == nil {
		out.Links = []LinkInfo{}
	}
	return out, nil
}

// Edges returns the links of the file at path (an exact path, as Resolve
// gives) in order, and the links from other files into it: Links and
// Backlinks at once, the file looked up once. A path the index does not
// hold gives ENOTFOUND.
func (r *Reader) Edges(ctx context.Context, path string) (out, in []LinkInfo, err error) {
	id, _, err := fileID(ctx, r.q, path)
	if err != nil {
		return nil, nil, err
	}
	if id == 0 {
		return nil, nil, cairn.Errorf(cairn.ENOTFOUND, "no page or file is at %q", path).WithHint("Try: cairn search " + path)
	}
	from, err := r.q.LinksFrom(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	for i := range from {
		from[i].SrcPath = path
	}
	if out, err = linkInfos(from); err != nil {
		return nil, nil, err
	}
	to, err := r.q.LinksTo(ctx, id, 0, 0)
	if err != nil {
		return nil, nil, err
	}
	in, err = linkInfos(to)
	return out, in, err
}

// FindingFilter selects findings. The zero value selects all.
type FindingFilter struct {
	Page string        // a path; "" for every file
	Rule string        // a rule id; "" for every rule
	Min  lint.Severity // the least severity; "" for all
}

// Findings returns the lint findings that match f, sorted by page, rule and
// subject.
func (r *Reader) Findings(ctx context.Context, f FindingFilter) ([]lint.Finding, error) {
	var file int64
	if f.Page != "" {
		id, _, err := fileID(ctx, r.q, f.Page)
		if err != nil || id == 0 {
			return nil, err // no such file: no findings
		}
		file = id
	}
	fs, err := r.q.Findings(ctx, file, f.Rule)
	if err != nil {
		return nil, err
	}
	var out []lint.Finding
	for _, fd := range fs {
		if fd.Severity.Rank() >= f.Min.Rank() {
			out = append(out, fd)
		}
	}
	lint.Sort(out)
	return out, nil
}

// oneState returns read of a reader of one state of r's rows, a snapshot
// r opens and closes (r must have a way to open one).
func oneState[T any](ctx context.Context, r *Reader, read func(*Reader) (T, error)) (T, error) {
	snap, err := r.snapshot(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer snap.Close()
	return read(&Reader{q: snap, t: r.t})
}

// FindingPage is a part of the findings a filter selects, and how many
// of them there are of each rule and severity.
type FindingPage struct {
	Findings []lint.Finding
	Counts   []FindingCount
}

// Total is the number of findings of every part.
func (p *FindingPage) Total() int {
	n := 0
	for _, c := range p.Counts {
		n += c.N
	}
	return n
}

// FindingsPage returns limit (0: all) of the findings f selects from the
// off-th on, in FindingOrder, and the counts of them all, both read in
// one state of the index. A part is the storage's to sort and count (the
// committed index reads only the part; a view merges its findings once);
// every finding is read in no order, sorted and counted here, which is
// faster than the database's sort.
func (r *Reader) FindingsPage(ctx context.Context, f FindingFilter, off, limit int) (*FindingPage, error) {
	return r.findingsPage(ctx, nil, f, off, limit)
}

// FindingsPageIn is FindingsPage of the files at paths only (exact
// paths; a file the index does not hold has no findings): the findings
// of a working set, read file by file in one state.
func (r *Reader) FindingsPageIn(ctx context.Context, paths []string, f FindingFilter, off, limit int) (*FindingPage, error) {
	if paths == nil {
		paths = []string{}
	}
	return r.findingsPage(ctx, paths, f, off, limit)
}

// findingsPage is FindingsPage of the files at paths (nil: every file).
func (r *Reader) findingsPage(ctx context.Context, paths []string, f FindingFilter, off, limit int) (*FindingPage, error) {
	if r.snapshot != nil {
		return oneState(ctx, r, func(r *Reader) (*FindingPage, error) { return r.findingsPage(ctx, paths, f, off, limit) })
	}
	var sevs []lint.Severity
	if f.Min != "" {
		for _, s := range []lint.Severity{lint.Error, lint.Warning, lint.Info} {
			if s.Rank() >= f.Min.Rank() {
				sevs = append(sevs, s)
			}
		}
	}
	if paths == nil && (off > 0 || limit > 0) {
		q := FindingQuery{Rule: f.Rule, Severities: sevs}
		if f.Page != "" {
			id, _, err := fileID(ctx, r.q, f.Page)
			if err != nil || id == 0 {
				return &FindingPage{Findings: []lint.Finding{}}, err // no such file: no findings
			}
			q.File = id
		}
		part, counts, err := r.q.FindingsPart(ctx, q, off, limit)
		if err != nil {
			return nil, err
		}
		return &FindingPage{Findings: part, Counts: counts}, nil
	}
	if paths == nil {
		paths = []string{f.Page} // "": every file
	}
	var fs []lint.Finding
	for _, p := range paths {
		if f.Page != "" && p != f.Page {
			continue
		}
		var id int64
		if p != "" {
			var err error
			if id, _, err = fileID(ctx, r.q, p); err != nil {
				return nil, err
			}
			if id == 0 {
				continue // no such file: no findings
			}
		}
		part, err := r.q.Findings(ctx, id, f.Rule)
		if err != nil {
			return nil, err
		}
		fs = append(fs, part...)
	}
	if len(sevs) > 0 {
		fs = slices.DeleteFunc(fs, func(f lint.Finding) bool { return !slices.Contains(sevs, f.Severity) })
	}
	slices.SortFunc(fs, FindingOrder)
	return &FindingPage{Findings: append([]lint.Finding{}, Window(fs, off, limit)...), Counts: CountFindings(fs)}, nil
}

// Stats counts what the index holds.
type Stats struct {
	Files    int `json:"files"`
	Pages    int `json:"pages"`
	Links    int `json:"links"`
	Broken   int `json:"broken"`
	Findings int `json:"findings"`
}

// Stats returns counts of files, pages, links and findings.
func (r *Reader) Stats(ctx context.Context) (Stats, error) {
	return r.q.Stats(ctx)
}

// Title is a page's path with the names it is known by.
type Title struct {
	Path    string   `json:"path"`
	Title   string   `json:"title"`
	Type    string   `json:"type,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	// Inbound counts the resolved links from other files.
	Inbound int `json:"inbound"`
}

// Titles returns every page's path, title, type, aliases and inbound
// links, by path: what an agent needs to link new text to existing pages.
func (r *Reader) Titles(ctx context.Context) ([]Title, error) {
	rows, err := r.q.Titles(ctx)
	if err != nil {
		return nil, err
	}
	return titlesOf(rows)
}

// titlesOf decodes title rows.
func titlesOf(rows []TitleRow) ([]Title, error) {
	var out []Title
	for _, row := range rows {
		t := Title{Path: row.Path, Title: row.Title, Type: row.Type, Inbound: row.Inbound}
		if row.Aliases != "" {
			if err := json.Unmarshal([]byte(row.Aliases), &t.Aliases); err != nil {
				return nil, err
			}
		}
		out = append(out, t)
	}
	return out, nil
}
