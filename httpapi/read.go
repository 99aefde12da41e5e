package httpapi

import (
	"context"
	"encoding/base64"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/auth"
	"cairn/eva"
	"cairn/index"
	"cairn/lint"
	"cairn/vault"
	"cairn/worktree"
)

// VaultInfo is what a client learns of the vault it talks to.
type VaultInfo struct {
	// Root is the vault's folder on the server's machine.
	Root string `json:"root"`
	Bare bool   `json:"bare"`
	// Main is main's head (empty before the first commit).
	Main    cairn.Hash `json:"main"`
	Version string     `json:"version"`
	// MaxBody is the largest body of a changeset or an upload.
	MaxBody int64 `json:"max_body"`
	// Principal and Scopes are those of the token the request came with:
	// who the client acts as, and what it may do.
	Principal cairn.Principal `json:"principal"`
	Scopes    []auth.Scope    `json:"scopes"`
	// Repaired says what the server's opening of the vault put right (it
	// moved, it is a copy): told once, to the first client with the admin
	// scope that asks (the owner's command), as a command that opens the
	// vault tells it once.
	Repaired []string `json:"repaired"`
	// Problems says what opening the vault found wrong and could not put
	// right.
	Problems []string `json:"problems"`
}

func (s *Server) vault(ctx context.Context, _ *struct{}) (*body[VaultInfo], error) {
	info, err := s.vaultInfo(ctx)
	if err != nil {
		return nil, err
	}
	return &body[VaultInfo]{Body: *info}, nil
}

// vaultInfo is what the server tells of its vault to the request's token;
// what opening the vault repaired is told once, to the first with the
// admin scope.
func (s *Server) vaultInfo(ctx context.Context) (*VaultInfo, error) {
	info := VaultInfo{Root: s.app.Root(), Bare: s.app.Bare(), Version: s.opts.Version, MaxBody: s.opts.MaxBody,
		Repaired: []string{}, Problems: nonNil(s.app.Problems())}
	if t := auth.FromContext(ctx); t != nil {
		info.Principal, info.Scopes = t.Principal, t.Scopes
		if t.Has(auth.Admin) {
			info.Repaired = s.takeRepaired() // the owner's, whose command tells them
		}
	}
	c, err := s.app.ResolveCommit(ctx, admit.Branch)
	switch {
	case err == nil:
		info.Main = c.Hash
	case cairn.ErrorCode(err) != cairn.ENOTFOUND:
		return nil, err
	}
	return &info, nil
}

// etag quotes a hash as an entity tag.
func etag(h cairn.Hash) string { return `"` + h.String() + `"` }

// parseETag reads an entity tag (If-Match, If-None-Match) as a hash: a
// quoted or bare hash, weak or not. "" gives the zero hash.
func parseETag(header, v string) (cairn.Hash, error) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
	v = strings.Trim(v, `"`)
	if v == "" {
		return cairn.Hash{}, nil
	}
	h, err := cairn.ParseHash(v)
	if err != nil {
		return cairn.Hash{}, cairn.Errorf(cairn.EINVALID, "%s %q is not a commit or object hash", header, v).
			WithHint("Send the ETag a GET answered: a quoted hash of 64 hex digits.")
	}
	return h, nil
}

type fileIn struct {
	Ref         string `query:"ref" doc:"A branch, tag, commit hash or prefix, main~3… Default: main."`
	Path        string `query:"path" required:"true" doc:"The file's vault path."`
	IfNoneMatch string `header:"If-None-Match" doc:"The file's ETag as the client has it: 304 when it is unchanged."`
}

// FileBody is a file as it is at a commit. Content holds text (valid
// UTF-8); other bytes come in ContentBase64.
type FileBody struct {
	Commit        cairn.Hash `json:"commit"`
	Path          string     `json:"path"`
	Blob          cairn.Hash `json:"blob"`
	Size          int64      `json:"size"`
	Executable    bool       `json:"executable,omitempty"`
	Content       *string    `json:"content,omitempty" doc:"The file's text, when it is valid UTF-8"`
	ContentBase64 *string    `json:"content_base64,omitempty" doc:"The file's bytes in base64, when it is not text"`
}

type fileOut struct {
	ETag string `header:"ETag"`
	Body FileBody
}

func (in *fileIn) ref() string {
	if in.Ref == "" {
		return admit.Branch
	}
	return in.Ref
}

func (s *Server) readFile(ctx context.Context, in *fileIn) (*fileOut, error) {
	f, err := s.app.ReadFile(ctx, in.ref(), in.Path)
	if err != nil {
		return nil, err
	}
	if err := notModified(in.IfNoneMatch, f.Entry.Blob); err != nil {
		return nil, err
	}
	b := FileBody{Commit: f.Commit, Path: f.Entry.Path, Blob: f.Entry.Blob, Size: f.Entry.Size, Executable: f.Entry.Mode == cairn.ModeExecutable}
	if utf8.ValidString(f.Content) {
		b.Content = &f.Content
	} else {
		enc := base64.StdEncoding.EncodeToString([]byte(f.Content))
		b.ContentBase64 = &enc
	}
	return &fileOut{ETag: etag(f.Entry.Blob), Body: b}, nil
}

// notModified returns huma's 304 when the client's If-None-Match names
// the object it has.
func notModified(ifNoneMatch string, blob cairn.Hash) error {
	if ifNoneMatch == "" {
		return nil
	}
	for _, tag := range strings.Split(ifNoneMatch, ",") {
		if h, err := parseETag("If-None-Match", tag); err == nil && h == blob {
			return huma.Status304NotModified()
		}
	}
	return nil
}

type rawOut struct {
	ETag        string `header:"ETag"`
	ContentType string `header:"Content-Type"`
	// The raw bytes are served as an attachment, never rendered or run by
	// a browser in the API's origin.
	Disposition string `header:"Content-Disposition"`
	Options     string `header:"X-Content-Type-Options"`
	CSP         string `header:"Content-Security-Policy"`
	Body        []byte
}

func (s *Server) readFileRaw(ctx context.Context, in *fileIn) (*rawOut, error) {
	f, err := s.app.ReadFile(ctx, in.ref(), in.Path)
	if err != nil {
		return nil, err
	}
	if err := notModified(in.IfNoneMatch, f.Entry.Blob); err != nil {
		return nil, err
	}
	ct := mime.TypeByExtension(path.Ext(f.Entry.Path))
	if ct == "" || !utf8.ValidString(f.Content) && strings.HasPrefix(ct, "text/") {
		ct = "application/octet-stream"
	}
	return &rawOut{
		ETag: etag(f.Entry.Blob), ContentType: ct, Disposition: "attachment",
		Options: "nosniff", CSP: "sandbox; default-src 'none'", Body: []byte(f.Content),
	}, nil
}

// offset decodes a page's cursor: the offset of the page's first item.
func offset(cursor string) (int, error) { return app.CursorOffset(cursor) }

// cursorAt encodes the cursor of the page that starts at offset n.
func cursorAt(n int) string { return app.Cursor(n) }

// nextOf is the cursor after a part of got items at offset off of total,
// when more follow.
func nextOf(off, got, total int) string {
	if got == 0 || off+got >= total {
		return ""
	}
	return cursorAt(off + got)
}

// next is the cursor after a page of got items at offset off, when a full
// page says there may be more.
func next(off, got, limit int) string {
	if got < limit || limit == 0 {
		return ""
	}
	return cursorAt(off + got)
}

type listIn struct {
	Ref       string `query:"ref" doc:"Default: main."`
	Dir       string `query:"dir" doc:"The folder; none for the top of the vault. A file lists itself."`
	Recursive bool   `query:"recursive" doc:"Every file below the folder, not one level."`
	Cursor    string `query:"cursor" doc:"The next cursor of the previous page; none for the first."`
	Limit     int    `query:"limit" minimum:"0" maximum:"1000" doc:"The most items of the page (default: the route's)."`
}

// ListingPage is a page of a listing.
type ListingPage struct {
	app.Listing
	Next string `json:"next,omitempty" doc:"The cursor of the next page, when there may be one"`
}

func (s *Server) list(ctx context.Context, in *listIn) (*body[ListingPage], error) {
	off, err := offset(in.Cursor)
	if err != nil {
		return nil, err
	}
	limit := cmpInt(in.Limit, 1000)
	ref := in.Ref
	if ref == "" {
		ref = admit.Branch
	}
	l, err := s.app.List(ctx, ref, in.Dir, app.ListOptions{Recursive: in.Recursive, Offset: off, Limit: limit})
	if err != nil {
		return nil, err
	}
	l.Entries = nonNil(l.Entries)
	return &body[ListingPage]{Body: ListingPage{Listing: *l, Next: next(off, len(l.Entries), limit)}}, nil
}

func cmpInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

type logIn struct {
	Ref         string `query:"ref" doc:"Default: main."`
	Path        string `query:"path" doc:"Only commits that changed this file."`
	FirstParent bool   `query:"first_parent" doc:"Follow only the branch's own line."`
	Cursor      string `query:"cursor" doc:"The next cursor of the previous page; none for the first."`
	Limit       int    `query:"limit" minimum:"0" maximum:"1000" doc:"The most items of the page (default: the route's)."`
}

// CommitPage is a page of commits.
type CommitPage struct {
	Items []*cairn.Commit `json:"items"`
	Next  string          `json:"next,omitempty"`
}

func (s *Server) log_(ctx context.Context, in *logIn) (*body[CommitPage], error) {
	off, err := offset(in.Cursor)
	if err != nil {
		return nil, err
	}
	limit := cmpInt(in.Limit, 100)
	ref := in.Ref
	if ref == "" {
		ref = admit.Branch
	}
	cs, err := s.app.Log(ctx, ref, app.LogOptions{Path: in.Path, FirstParent: in.FirstParent, Skip: off, Limit: limit})
	if err != nil {
		return nil, err
	}
	return &body[CommitPage]{Body: CommitPage{Items: nonNil(cs), Next: next(off, len(cs), limit)}}, nil
}

type revIn struct {
	Rev string `query:"rev" required:"true" doc:"A branch, tag, commit hash or prefix, main~3…"`
}

func (s *Server) showCommit(ctx context.Context, in *revIn) (*body[*app.CommitDetail], error) {
	d, err := s.app.ShowCommit(ctx, in.Rev)
	if err != nil {
		return nil, err
	}
	d.Changes = nonNil(d.Changes)
	return &body[*app.CommitDetail]{Body: d}, nil
}

// inTree returns the application layer working in the tree named.
func (s *Server) inTree(ctx context.Context, tree string) (*app.App, error) {
	if tree == "" {
		return s.app, nil
	}
	a, _, err := s.app.InTree(ctx, tree)
	return a, err
}

type worktreeIn struct {
	Body struct {
		Path  string `json:"path" minLength:"1" doc:"A folder on the server's machine: a working tree of the vault, or a secondary one moved there."`
		Vault string `json:"vault,omitempty" doc:"The vault's folder as the client found it: a server that serves another folder refuses (409) and changes nothing."`
	}
}

// WorktreeFound is the working tree at a folder, what finding it repaired
// (a secondary tree moved there is recorded there), and the vault's
// information, as GET /vault gives it: a command beside the server needs
// no other request before its own.
type WorktreeFound struct {
	Tree     *worktree.Tree `json:"tree"`
	Repaired []string       `json:"repaired"`
	Vault    *VaultInfo     `json:"vault"`
}

// worktree finds the working tree at a folder, as a command run in it
// does: a client uses it to work in its folder's tree.
func (s *Server) worktree(ctx context.Context, in *worktreeIn) (*body[WorktreeFound], error) {
	if v := in.Body.Vault; v != "" && !vault.SameFolder(v, s.app.Root()) {
		return nil, cairn.Errorf(cairn.ECONFLICT, "this server serves the vault at %s, not the one at %s", s.app.Root(), v).
			WithHint("The vault was copied or moved: run the command without the server, or start one in its folder.")
	}
	a, moved, err := s.app.InTree(ctx, in.Body.Path)
	if err != nil {
		return nil, err
	}
	info, err := s.vaultInfo(ctx)
	if err != nil {
		return nil, err
	}
	f := WorktreeFound{Tree: a.Tree(), Repaired: []string{}, Vault: info}
	if moved != "" {
		f.Repaired = append(f.Repaired, moved)
	}
	return &body[WorktreeFound]{Body: f}, nil
}

type diffIn struct {
	From  string `query:"from" required:"true" doc:"The revision compared from."`
	To    string `query:"to" required:"true" doc:"The revision compared to."`
	Patch bool   `query:"patch" doc:"Render each change as a unified diff."`
}

func (s *Server) diff(ctx context.Context, in *diffIn) (*body[*app.TreeDiff], error) {
	d, err := s.app.Diff(ctx, in.From, in.To, app.DiffOptions{Patch: in.Patch})
	if err != nil {
		return nil, err
	}
	d.Changes = nonNil(d.Changes)
	return &body[*app.TreeDiff]{Body: d}, nil
}

type folderDiffIn struct {
	From  string `query:"from" doc:"The revision compared from. Default: the working tree's base (its local edits)."`
	Patch bool   `query:"patch" doc:"Render each change as a unified diff."`
	Tree  string `query:"tree" doc:"The working tree's folder on the server's machine. Default: the vault's own folder."`
}

// folderDiff is the route GET /worktree/diff: a revision against a
// working tree's folder.
func (s *Server) folderDiff(ctx context.Context, in *folderDiffIn) (*body[*app.TreeDiff], error) {
	a, err := s.inTree(ctx, in.Tree)
	if err != nil {
		return nil, err
	}
	d, err := a.Diff(ctx, in.From, "", app.DiffOptions{Patch: in.Patch})
	if err != nil {
		return nil, err
	}
	d.Changes = nonNil(d.Changes)
	return &body[*app.TreeDiff]{Body: d}, nil
}

// Items is a list of things that each have an id.
type Items[T any] struct {
	Items []T `json:"items"`
}

func items[T any](xs []T) *body[Items[T]] { return &body[Items[T]]{Body: Items[T]{Items: nonNil(xs)}} }

func (s *Server) worktrees(ctx context.Context, _ *struct{}) (*body[Items[*worktree.Tree]], error) {
	return list(s.app.Worktrees(ctx))
}

type statusIn struct {
	Tree  string   `query:"tree" doc:"The working tree's folder on the server's machine, as cairn worktree list names it. Default: the vault's own folder."`
	Paths []string `query:"path,explode" doc:"Only these files or folders, from the tree's root; only they are looked at."`
}

func (s *Server) status(ctx context.Context, in *statusIn) (*body[*worktree.Status], error) {
	a, err := s.inTree(ctx, in.Tree)
	if err != nil {
		return nil, err
	}
	st, err := a.Status(ctx, in.Paths...)
	if err != nil {
		return nil, err
	}
	st.Changes = nonNil(st.Changes)
	return &body[*worktree.Status]{Body: st}, nil
}

type searchIn struct {
	Q      string `query:"q" required:"true" doc:"Words, \"quoted phrases\", prefixes like garden*, type:T and folder:F."`
	Type   string `query:"type" doc:"Only pages of this type."`
	Folder string `query:"folder" doc:"Only pages under this folder."`
	Cursor string `query:"cursor" doc:"The next cursor of the previous page."`
	Limit  int    `query:"limit" minimum:"0" maximum:"100" doc:"Results per page (default 10)."`
}

// SearchPage is a page of search results.
type SearchPage struct {
	Items []index.SearchResult `json:"items"`
	Next  string               `json:"next,omitempty"`
}

func (s *Server) search(ctx context.Context, in *searchIn) (*body[SearchPage], error) {
	off, err := offset(in.Cursor)
	if err != nil {
		return nil, err
	}
	limit := cmpInt(in.Limit, 10)
	res, err := s.app.Search(ctx, index.SearchQuery{Text: in.Q, Type: in.Type, Folder: in.Folder, Limit: limit, Offset: off})
	if err != nil {
		return nil, err
	}
	n := next(off, len(res), limit)
	if off+len(res)+limit > 1000 {
		n = "" // a search pages through its first 1000 results
	}
	return &body[SearchPage]{Body: SearchPage{Items: nonNil(res), Next: n}}, nil
}

type pageRefIn struct {
	Page string `query:"page" required:"true" doc:"A page's path, id, title or alias."`
}

func (s *Server) links(ctx context.Context, in *pageRefIn) (*body[Items[index.LinkInfo]], error) {
	return list(s.app.Links(ctx, in.Page))
}

type backlinksIn struct {
	Page   string `query:"page" required:"true" doc:"A page's path, id, title or alias."`
	Cursor string `query:"cursor" doc:"The next cursor of the previous part; none for the first."`
	Limit  int    `query:"limit" minimum:"0" maximum:"10000" doc:"The most links of the part (default 1000, at most 10000)."`
}

// maxPart is the most items a part of GET /backlinks, /lint or /sources
// holds when asked for (a thousand by default): a client that reads every
// part of the 100k links into a page asks for ten parts, not a hundred,
// each costing about what sorting all the links costs.
const maxPart = 10000

// BacklinkPage is a part of the links into a page.
type BacklinkPage struct {
	// Page is the path of the page the links lead to.
	Page  string           `json:"page"`
	Items []index.LinkInfo `json:"items"`
	// Total is the number of links into the page, of every part.
	Total int    `json:"total"`
	Next  string `json:"next,omitempty" doc:"The cursor of the next part, when there is one"`
}

func (s *Server) backlinks(ctx context.Context, in *backlinksIn) (*body[BacklinkPage], error) {
	off, err := offset(in.Cursor)
	if err != nil {
		return nil, err
	}
	p, err := s.app.Backlinks(ctx, in.Page, app.BacklinkOptions{Offset: off, Limit: cmpInt(in.Limit, app.MaxBacklinks)})
	if err != nil {
		return nil, err
	}
	out := BacklinkPage{Page: p.Page, Items: nonNil(p.Links), Total: p.Total, Next: nextOf(off, len(p.Links), p.Total)}
	return &body[BacklinkPage]{Body: out}, nil
}

type pagesIn struct {
	Ref    string   `query:"ref" doc:"A branch, tag or commit. Default: main."`
	Folder string   `query:"folder" doc:"Only pages under this folder."`
	Type   string   `query:"type" doc:"Only pages of this type."`
	Field  string   `query:"field" doc:"Only pages with this frontmatter field."`
	Value  string   `query:"value" doc:"With field: only where it has this value."`
	Where  []string `query:"where" doc:"Conditions on frontmatter fields, all met, answered from the index: status = done, year >= 2020, tags ~ ink, owner. Operators = != < <= > >= ~ (contains)."`
	Offset int      `query:"offset" minimum:"0"`
	Limit  int      `query:"limit" minimum:"0" maximum:"1000" doc:"Default 100."`
}

func (s *Server) pages(ctx context.Context, in *pagesIn) (*body[*app.PageList], error) {
	return ok(s.app.Pages(ctx, in.Ref, app.PageFilter{Folder: in.Folder, Type: in.Type, Field: in.Field, Value: in.Value,
		Where: in.Where, Offset: in.Offset, Limit: in.Limit}))
}

func (s *Server) tools(context.Context, *struct{}) (*body[Items[eva.Tool]], error) {
	return list(eva.Tools(), nil)
}

type typesIn struct {
	Ref string `query:"ref" doc:"A branch, tag or commit. Default: main."`
}

func (s *Server) types(ctx context.Context, in *typesIn) (*body[Items[app.TypeSummary]], error) {
	return list(s.app.Types(ctx, in.Ref))
}

type typeIn struct {
	Name  string `path:"name" doc:"The type's name: its declaration's file name in types/ without the extension."`
	Ref   string `query:"ref" doc:"A branch, tag or commit. Default: main."`
	Limit int    `query:"limit" minimum:"0" maximum:"1000" doc:"At most this many findings of its pages (default 100)."`
}

func (s *Server) typeDetail(ctx context.Context, in *typeIn) (*body[*app.TypeDetail], error) {
	return ok(s.app.Type(ctx, in.Ref, in.Name, in.Limit))
}

type lintIn struct {
	At     string `query:"at" doc:"Lint this revision instead of main."`
	Page   string `query:"page" doc:"Only this file."`
	Rule   string `query:"rule" doc:"Only this rule."`
	Min    string `query:"min" doc:"Only findings at least this severe: error, warning or info."`
	Cursor string `query:"cursor" doc:"The next cursor of the previous part; none for the first."`
	Limit  int    `query:"limit" minimum:"0" maximum:"10000" doc:"The most findings of the part (default 1000, at most 10000)."`
}

// LintReport is a part of the findings, with the counts of them all by
// severity and by rule.
type LintReport struct {
	Items    []lint.Finding `json:"items"`
	Total    int            `json:"total"`
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`
	Infos    int            `json:"infos"`
	Rules    map[string]int `json:"rules"`
	Next     string         `json:"next,omitempty" doc:"The cursor of the next part, when there is one"`
}

// defaultPart is the size of a part of a long list when the request does
// not ask for another (at most maxPart).
const defaultPart = 1000

func (s *Server) lint(ctx context.Context, in *lintIn) (*body[LintReport], error) {
	off, err := offset(in.Cursor)
	if err != nil {
		return nil, err
	}
	r, err := s.app.Lint(ctx, app.LintOptions{At: in.At, Page: in.Page, Rule: in.Rule, Min: lint.Severity(in.Min),
		Offset: off, Limit: cmpInt(in.Limit, defaultPart)})
	if err != nil {
		return nil, err
	}
	out := LintReport{Items: nonNil(r.Findings), Total: r.Total, Errors: r.Errors, Warnings: r.Warnings, Infos: r.Infos, Rules: r.Rules,
		Next: nextOf(off, len(r.Findings), r.Total)}
	return &body[LintReport]{Body: out}, nil
}

type askIn struct {
	Body app.AskRequest
}

func (s *Server) ask(ctx context.Context, in *askIn) (*body[*app.Answer], error) {
	return ok(s.app.Ask(ctx, in.Body))
}

func (s *Server) checkHealth(ctx context.Context, _ *struct{}) (*body[*app.HealthReport], error) {
	return ok(s.app.Health(ctx))
}

type healthChecksIn struct {
	Limit int `query:"limit" minimum:"0" maximum:"1000" doc:"The most, newest first (default 20)."`
}

func (s *Server) healthChecks(ctx context.Context, in *healthChecksIn) (*body[Items[*app.HealthReport]], error) {
	return list(s.app.HealthReports(ctx, in.Limit))
}

type healthCheckIn struct {
	ID string `path:"id" doc:"The report's id, or its first hex digits (at least 4)."`
}

func (s *Server) healthCheck(ctx context.Context, in *healthCheckIn) (*body[*app.HealthReport], error) {
	return ok(s.app.HealthReportByID(ctx, in.ID))
}
