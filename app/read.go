package app

import (
	"context"
	"strings"

	"cairn"
	"cairn/index"
	"cairn/lint"
)

// FileAt is a file as it is at a commit.
type FileAt struct {
	Commit cairn.Hash  `json:"commit"`
	Entry  cairn.Entry `json:"entry"`
	// Content is the file's bytes as stored (text or not).
	Content string `json:"content"`
}

// ReadFile returns the file at path as it is at the revision rev (a
// branch, tag, commit hash or prefix, main~3…; Branch is the one a
// surface defaults to). Paths match exactly, case included. An unknown
// revision or a path not in its tree gives ENOTFOUND; an empty or
// malformed revision, or a path that is not a vault path, EINVALID; a
// purged file an error wrapping cairn.ErrPurged.
func (a *App) ReadFile(ctx context.Context, rev, path string) (*FileAt, error) {
	c, err := a.ResolveCommit(ctx, rev)
	if err != nil {
		return nil, err
	}
	e, err := a.v.Store.Get(ctx, c.Tree, path)
	if err != nil {
		return nil, err
	}
	data, err := a.v.Store.ReadBlob(ctx, e.Blob)
	if err != nil {
		return nil, err
	}
	return &FileAt{Commit: c.Hash, Entry: e, Content: string(data)}, nil
}

// ListEntry is one entry of a listing: a file, or a folder with what it
// holds.
type ListEntry struct {
	ID    string     `json:"id"` // the path; a folder's ends in "/"
	Path  string     `json:"path"`
	Kind  string     `json:"kind"` // "file" or "folder"
	Size  int64      `json:"size"` // a folder's: of all the files in it
	Files int        `json:"files,omitempty"`
	Blob  cairn.Hash `json:"blob,omitzero"`
	Mode  string     `json:"mode,omitempty"` // "executable" for an executable file
}

// Listing is what a folder holds at a commit.
type Listing struct {
	Commit  cairn.Hash  `json:"commit"`
	Entries []ListEntry `json:"entries"`
	// Total is how many entries the whole listing has (Entries may be a
	// page of it).
	Total int `json:"total"`
}

// ListOptions adjust List. The zero value lists one level, whole.
type ListOptions struct {
	// Recursive lists every file below the folder instead of its files
	// and the folders it holds.
	Recursive bool
	// Offset leaves out the first entries and Limit (when above 0) keeps
	// at most that many after them: a page of a long listing.
	Offset, Limit int
}

// List returns what the folder dir holds at the revision rev (see
// ReadFile): folders first, each with the count and size of the files
// below it, then files. dir "" (or "." or "/") is the top of the vault; a dir that names a file lists that file. Paths match
// whatever their case, as in the store, and entries keep the store's own
// spelling. An unknown revision, or a dir that is neither a file nor a
// folder, gives ENOTFOUND; a malformed revision, or a dir that is not a
// vault path, EINVALID.
func (a *App) List(ctx context.Context, rev, dir string, opts ListOptions) (*Listing, error) {
	c, err := a.ResolveCommit(ctx, rev)
	if err != nil {
		return nil, err
	}
	dir = strings.Trim(dir, "/")
	if dir == "." {
		dir = ""
	}
	file := func(e cairn.Entry) ListEntry {
		le := ListEntry{ID: e.Path, Path: e.Path, Kind: "file", Size: e.Size, Blob: e.Blob}
		if e.Mode == cairn.ModeExecutable {
			le.Mode = "executable"
		}
		return le
	}
	if opts.Offset < 0 || opts.Limit < 0 || opts.Offset > maxSkip {
		return nil, cairn.Errorf(cairn.EINVALID, "a listing's offset and limit are 0 or more, not %d and %d", opts.Offset, opts.Limit)
	}
	prefix := ""
	if dir != "" {
		if _, err := cairn.CleanPath(dir); err != nil {
			return nil, err
		}
		e, err := a.v.Store.GetFold(ctx, c.Tree, dir)
		if err == nil {
			return &Listing{Commit: c.Hash, Entries: []ListEntry{file(e)}, Total: 1}, nil
		}
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, err
		}
		prefix = dir + "/"
	}
	depth := strings.Count(prefix, "/")
	var files, folders []ListEntry
	for e, err := range a.v.Store.Files(ctx, c.Tree, prefix) {
		if err != nil {
			return nil, err
		}
		segs := strings.SplitN(e.Path, "/", depth+2)
		if opts.Recursive || len(segs) == depth+1 {
			files = append(files, file(e))
			continue
		}
		// The folder's own spelling, which may differ from the argument's
		// in case. Files of one folder come together: keys are sorted.
		name := strings.Join(segs[:depth+1], "/") + "/"
		if n := len(folders); n == 0 || folders[n-1].ID != name {
			folders = append(folders, ListEntry{ID: name, Path: strings.TrimSuffix(name, "/"), Kind: "folder"})
		}
		f := &folders[len(folders)-1]
		f.Files++
		f.Size += e.Size
	}
	out := append(folders, files...)
	if len(out) == 0 && dir != "" {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s is neither a file nor a folder at %s", dir, c.Hash.Short()).
			WithHint("cairn ls " + rev + ": lists the top of the vault; paths match whatever their case.")
	}
	l := &Listing{Commit: c.Hash, Total: len(out)}
	out = out[min(opts.Offset, len(out)):]
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	l.Entries = out
	return l, nil
}

// mainIndex returns a reader of main's index, bringing the index up to
// main's head first if it lags (a vault written by an older cairn). It
// takes the write lock only then: a current index is read without it.
func (a *App) mainIndex(ctx context.Context) (*index.Reader, error) {
	if _, err := a.mainState(ctx); err != nil {
		return nil, err
	}
	return a.v.Index.Main(), nil
}

// mainState brings main's index up to main's head if it lags (see
// mainIndex) and returns the commit and tree it reflects.
func (a *App) mainState(ctx context.Context) (index.State, error) {
	st, err := a.v.Index.State(ctx)
	if err != nil {
		return st, err
	}
	head, err := a.v.Store.Head(ctx, index.Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return st, err
	}
	if st.Commit != head {
		if err := a.v.Index.Update(ctx); err != nil {
			return st, a.v.ExplainBusy(err)
		}
		return a.v.Index.State(ctx)
	}
	return st, nil
}

// IndexCurrent reports whether main's index reflects main's head. It
// brings nothing up to date (a read does, when it must).
func (a *App) IndexCurrent(ctx context.Context) (bool, error) {
	st, err := a.v.Index.State(ctx)
	if err != nil {
		return false, err
	}
	head, err := a.v.Store.Head(ctx, index.Branch)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return false, err
	}
	return st.Commit == head, nil
}

// Search returns the pages of main that match q, best first (see
// index.SearchQuery for its syntax, filters and limit). Each result has a
// snippet and the byte offsets of the matches in it. A query with no
// words to look for, or a limit above 100, gives EINVALID.
func (a *App) Search(ctx context.Context, q index.SearchQuery) ([]index.SearchResult, error) {
	r, err := a.mainIndex(ctx)
	if err != nil {
		return nil, err
	}
	return r.Search(ctx, q)
}

// Links returns the links of the page of main that page names (a path,
// id, title or alias), in order, each with where it resolves. A page that
// names nothing gives ENOTFOUND.
func (a *App) Links(ctx context.Context, page string) ([]index.LinkInfo, error) {
	r, err := a.mainIndex(ctx)
	if err != nil {
		return nil, err
	}
	return r.Links(ctx, page)
}

// MaxBacklinks is the most links a part of a page's backlinks holds on
// the surfaces that answer others (HTTP, MCP): a page thousands of others
// link to is read a part at a time there.
const MaxBacklinks = 1000

// BacklinkOptions select a part of a page's backlinks. The zero value
// gives them all.
type BacklinkOptions struct {
	// Offset is the place of the part's first link among them all.
	Offset int
	// Limit is the most links of the part; 0: all from Offset on.
	Limit int
}

// Backlinks returns the links from other pages of main to the page that
// page names, by linking path and position, or the part of them opts
// selects, with how many there are in all. A page that names nothing
// gives ENOTFOUND; a negative offset or limit, EINVALID.
func (a *App) Backlinks(ctx context.Context, page string, opts BacklinkOptions) (*index.LinkPage, error) {
	if err := CheckPart("backlinks", opts.Offset, opts.Limit); err != nil {
		return nil, err
	}
	r, err := a.mainIndex(ctx)
	if err != nil {
		return nil, err
	}
	return r.BacklinksPage(ctx, page, opts.Offset, opts.Limit)
}

// CheckPart refuses a negative offset or limit of a part of a list (the
// backlinks, the findings, the sources): EINVALID, naming what.
func CheckPart(what string, off, limit int) error {
	if off < 0 || limit < 0 {
		return cairn.Errorf(cairn.EINVALID, "a part of the %s starts at offset 0 or more and holds 0 or more, not offset %d, limit %d", what, off, limit).
			WithHint("Leave both out for them all; pass the next part's cursor as it came.")
	}
	return nil
}

// LintOptions select the findings Lint returns. The zero value gives
// every finding of main.
type LintOptions struct {
	// At is the revision to lint (a branch, tag or commit), computed
	// without indexing it. Default: main, from its index.
	At string
	// Page keeps the findings of this file (a path). Default: every file.
	Page string
	// Rule keeps the findings of this rule. Default: every rule.
	Rule string
	// Min keeps the findings at least this severe. Default: all.
	Min lint.Severity
	// Offset and Limit select a part of the findings kept: Limit of them
	// from the Offset-th on (Limit 0: all from there).
	Offset, Limit int
}

// LintReport is a part of the lint findings, with the counts of all the
// findings kept.
type LintReport struct {
	Findings []lint.Finding `json:"findings"`
	// Total is the number of findings kept, of every part.
	Total    int `json:"total"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	// Rules counts the findings kept of each rule.
	Rules map[string]int `json:"rules"`
}

// Report counts fs and keeps the part of them opts selects (its Offset
// and Limit).
func (opts LintOptions) Report(fs []lint.Finding) *LintReport {
	return lintReport(&index.FindingPage{
		Findings: append([]lint.Finding{}, index.Window(fs, opts.Offset, opts.Limit)...),
		Counts:   index.CountFindings(fs),
	})
}

// lintReport is the report of a part of the findings and their counts.
func lintReport(p *index.FindingPage) *LintReport {
	r := &LintReport{Findings: p.Findings, Rules: map[string]int{}}
	for _, c := range p.Counts {
		r.Total += c.N
		r.Rules[c.Rule] += c.N
		switch c.Severity {
		case lint.Error:
			r.Errors += c.N
		case lint.Warning:
			r.Warnings += c.N
		default:
			r.Infos += c.N
		}
	}
	return r
}

// Lint returns the lint findings of main, or of opts.At, sorted by page,
// rule and subject (the part opts selects), with the counts of them all.
// A Min that is not a severity, or a negative offset or limit, gives
// EINVALID, an
// unknown revision or page ENOTFOUND; linting another revision takes the
// write lock for a moment, and a vault busy with another process gives
// EUNAVAILABLE saying who holds it.
func (a *App) Lint(ctx context.Context, opts LintOptions) (*LintReport, error) {
	if opts.Min != "" && opts.Min.Rank() == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a severity: error, warning or info", opts.Min).
			WithHint("Try: cairn lint --min warning")
	}
	if err := CheckPart("findings", opts.Offset, opts.Limit); err != nil {
		return nil, err
	}
	filter := index.FindingFilter{Page: opts.Page, Rule: opts.Rule, Min: opts.Min}
	if opts.At == "" {
		r, err := a.mainIndex(ctx)
		if err != nil {
			return nil, err
		}
		p, err := r.FindingsPage(ctx, filter, opts.Offset, opts.Limit)
		if err != nil {
			return nil, err
		}
		return lintReport(p), nil
	}
	c, err := a.ResolveCommit(ctx, opts.At)
	if err != nil {
		return nil, err
	}
	// The view applies the difference from main's index: bring it up first.
	if _, err := a.mainIndex(ctx); err != nil {
		return nil, err
	}
	var p *index.FindingPage
	err = a.v.Index.View(ctx, nil, c.Tree, func(r *index.Reader) error {
		p, err = r.FindingsPage(ctx, filter, opts.Offset, opts.Limit)
		return err
	})
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	return lintReport(p), nil
}
