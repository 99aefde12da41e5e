package httpapi

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/auth"
	"cairn/index"
	"cairn/ingest"
	"cairn/lint"
	"cairn/worktree"
)

// Client is the application layer as a client of cairn serve: it
// implements app.Service by calling the server's API, as the principal of
// its token. A Client works in one working tree of the server's vault
// (UseTree), or in none: then the branch operations default to main.
type Client struct {
	base   string
	token  string
	http   *http.Client
	tree   string // the working tree's folder, as the vault records it; "" for none
	branch string // the branch operations default to
	// part is the size of the parts Backlinks, Lint and Sources read
	// every item in (0: maxPart).
	part int
}

var _ app.Service = (*Client)(nil)

// NewClient returns a client of the server at base (http://host:port)
// acting with the token whose secret is token. It does not connect:
// Vault checks the server and the token.
func NewClient(base, token string) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a server's address", base).
			WithHint("Give http://HOST:PORT or https://HOST:PORT, as cairn serve prints it.")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 16
	return &Client{base: strings.TrimRight(u.String(), "/"), token: token, http: &http.Client{Transport: tr}, branch: admit.Branch}, nil
}

// SetTransport replaces the client's HTTP transport (a TLS configuration
// that trusts the server's certificate, say).
func (c *Client) SetTransport(rt http.RoundTripper) { c.http.Transport = rt }

// URL returns the server's address.
func (c *Client) URL() string { return c.base }

// Close closes the client's idle connections.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// Branch returns the branch operations default to: the working tree's, or
// main.
func (c *Client) Branch() string { return c.branch }

// WorkTree returns the folder of the working tree the client works in, ""
// for none.
func (c *Client) WorkTree() string { return c.tree }

// UseTree makes the client work in the working tree whose folder is dir
// (a folder of the server's machine): its local edits, its branch. A
// secondary working tree moved to dir is recorded there, and repaired
// says so. A dir that is no working tree of the vault is ENOTFOUND; a copy
// of a tree still in its place EINVALID.
func (c *Client) UseTree(ctx context.Context, dir string) (repaired []string, err error) {
	f, err := c.UseTreeIn(ctx, "", dir)
	if err != nil {
		return nil, err
	}
	return f.Repaired, nil
}

// UseTreeIn is UseTree for a client that knows the vault's folder, root
// (none: ""): a server that serves another folder refuses, ECONFLICT, and
// changes nothing. The answer also holds what Vault returns, so that a
// command of the vault's folder makes one request before its own. A
// server older than root refuses it (EINVALID, an unknown field).
func (c *Client) UseTreeIn(ctx context.Context, root, dir string) (*WorktreeFound, error) {
	var f WorktreeFound
	body := map[string]string{"path": dir}
	if root != "" {
		body["vault"] = root // a server older than the field refuses it: EINVALID
	}
	if err := c.post(ctx, "/worktree", body, &f); err != nil {
		return nil, err
	}
	if f.Tree == nil || root != "" && f.Vault == nil {
		return nil, fmt.Errorf("find the working tree %s: the server's answer names none, or no vault", dir)
	}
	c.tree, c.branch = f.Tree.Path, f.Tree.Branch
	return &f, nil
}

// Vault returns what the server says of its vault and of the client's
// token: it checks that the server answers and takes the token.
func (c *Client) Vault(ctx context.Context) (*VaultInfo, error) {
	var out VaultInfo
	if err := c.get(ctx, "/vault", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// request is one call of the API.
type request struct {
	method, path string
	query        url.Values
	header       http.Header
	// body is sent as JSON, unless raw is set (with its content type).
	body        any
	raw         io.Reader
	contentType string
}

// send makes the request and returns the response when its status is a
// success; the caller closes its body. A problem the server answered is
// returned as an error with cairn's code (Problem.Err); a server that
// does not answer is EUNAVAILABLE.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	u := c.base + Base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var rd io.Reader = r.raw
	ct := r.contentType
	if r.body != nil {
		data, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", r.method, r.path, err)
		}
		rd, ct = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, cairn.Errorf(cairn.EUNAVAILABLE, "the server at %s does not answer: %w", c.base, err).
			WithHint("Is cairn serve running? cairn --server URL, or $CAIRN_SERVER, names the server to use.")
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var p Problem
	if json.Unmarshal(data, &p) != nil || p.Status == 0 {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		p = Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode), Detail: fmt.Sprintf("%s %s: %s %s", r.method, r.path, resp.Status, msg)}
	}
	return nil, p.Err()
}

// call makes the request and decodes a JSON answer into out (nil: none).
func (c *Client) call(ctx context.Context, r request, out any) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode the answer to %s %s: %w", r.method, r.path, err)
	}
	return nil
}

func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.call(ctx, request{method: http.MethodGet, path: path, query: q}, out)
}

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	if body == nil {
		body = struct{}{}
	}
	return c.call(ctx, request{method: http.MethodPost, path: path, body: body}, out)
}

// query builds a query of the pairs given, leaving out empty values.
func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Add(kv[i], kv[i+1])
		}
	}
	return q
}

func flag(b bool) string {
	if b {
		return "true"
	}
	return ""
}

func num(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// ReadFile returns the file at path as it is at the revision rev.
func (c *Client) ReadFile(ctx context.Context, rev, path string) (*app.FileAt, error) {
	var b FileBody
	if err := c.get(ctx, "/files", query("ref", rev, "path", path), &b); err != nil {
		return nil, err
	}
	f := &app.FileAt{Commit: b.Commit, Entry: cairn.Entry{Path: b.Path, Blob: b.Blob, Size: b.Size}}
	if b.Executable {
		f.Entry.Mode = cairn.ModeExecutable
	}
	switch {
	case b.Content != nil:
		f.Content = *b.Content
	case b.ContentBase64 != nil:
		data, err := base64.StdEncoding.DecodeString(*b.ContentBase64)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		f.Content = string(data)
	}
	return f, nil
}

// List returns what the folder dir holds at rev: every entry, read page by
// page, unless opts.Limit asks for one page.
func (c *Client) List(ctx context.Context, rev, dir string, opts app.ListOptions) (*app.Listing, error) {
	if opts.Offset < 0 || opts.Limit < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a listing's offset and limit are 0 or more, not %d and %d", opts.Offset, opts.Limit)
	}
	out := &app.Listing{Entries: []app.ListEntry{}}
	cursor := ""
	if opts.Offset > 0 {
		cursor = cursorAt(opts.Offset)
	}
	for {
		var p ListingPage
		q := query("ref", cmp.Or(rev, c.branch), "dir", dir, "recursive", flag(opts.Recursive), "cursor", cursor, "limit", num(opts.Limit))
		if err := c.get(ctx, "/list", q, &p); err != nil {
			return nil, err
		}
		out.Commit, out.Total = p.Commit, p.Total
		out.Entries = append(out.Entries, p.Entries...)
		if opts.Limit > 0 || p.Next == "" {
			return out, nil
		}
		cursor = p.Next
	}
}

// Log returns the commits reachable from rev, newest first: all of them,
// page by page, unless opts.Limit bounds them.
func (c *Client) Log(ctx context.Context, rev string, opts app.LogOptions) ([]*cairn.Commit, error) {
	if opts.Skip < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a log cannot skip %d commits", opts.Skip).WithHint("Skip 0 or more.")
	}
	var out []*cairn.Commit
	off := opts.Skip
	for {
		limit := 1000
		if opts.Limit > 0 {
			limit = min(limit, opts.Limit-len(out))
		}
		var p CommitPage
		q := query("ref", cmp.Or(rev, c.branch), "path", opts.Path, "first_parent", flag(opts.FirstParent), "cursor", cursorOf(off), "limit", num(limit))
		if err := c.get(ctx, "/log", q, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		off += len(p.Items)
		if p.Next == "" || len(p.Items) == 0 || opts.Limit > 0 && len(out) >= opts.Limit {
			return out, nil
		}
	}
}

func cursorOf(off int) string { return app.Cursor(off) }

// ShowCommit returns the commit rev names and what it changed.
func (c *Client) ShowCommit(ctx context.Context, rev string) (*app.CommitDetail, error) {
	var d app.CommitDetail
	if err := c.get(ctx, "/commit", query("rev", rev), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// needTree refuses what works on a working tree's folder when the client
// works in none, as App.NeedTree does.
func (c *Client) needTree() error {
	if c.tree == "" {
		return cairn.Errorf(cairn.EINVALID, "this command works in a working tree, and the current folder is not in one (of the vault %s serves)", c.base).
			WithHint("Run it inside the vault's folder on the server's machine, or in one made with cairn worktree add")
	}
	return nil
}

// Diff returns the changes from the revision from to the revision to, or
// to the client's working tree's folder.
func (c *Client) Diff(ctx context.Context, from, to string, opts app.DiffOptions) (*app.TreeDiff, error) {
	var d app.TreeDiff
	if to == "" {
		if err := c.needTree(); err != nil {
			return nil, err
		}
		err := c.get(ctx, "/worktree/diff", query("from", from, "patch", flag(opts.Patch), "tree", c.tree), &d)
		return &d, err
	}
	if from == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "a diff to %s needs the revision it starts from", to).WithHint("Try: cairn diff REV " + to)
	}
	if err := c.get(ctx, "/diff", query("from", from, "to", to, "patch", flag(opts.Patch)), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Status returns the local edits of the client's working tree.
func (c *Client) Status(ctx context.Context, paths ...string) (*worktree.Status, error) {
	if err := c.needTree(); err != nil {
		return nil, err
	}
	q := query("tree", c.tree)
	for _, p := range paths {
		q.Add("path", p)
	}
	var st worktree.Status
	if err := c.get(ctx, "/status", q, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Worktrees returns the vault's working trees.
func (c *Client) Worktrees(ctx context.Context) ([]*worktree.Tree, error) {
	var out Items[*worktree.Tree]
	if err := c.get(ctx, "/worktrees", nil, &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Search returns the pages of main that match q, best first.
func (c *Client) Search(ctx context.Context, q index.SearchQuery) ([]index.SearchResult, error) {
	if q.Offset < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a page of search results cannot start at %d", q.Offset)
	}
	var p SearchPage
	if err := c.get(ctx, "/search", query("q", q.Text, "type", q.Type, "folder", q.Folder, "limit", num(q.Limit), "cursor", cursorOf(q.Offset)), &p); err != nil {
		return nil, err
	}
	return p.Items, nil
}

// Links returns the links of the page that page names.
func (c *Client) Links(ctx context.Context, page string) ([]index.LinkInfo, error) {
	var out Items[index.LinkInfo]
	if err := c.get(ctx, "/links", query("page", page), &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Backlinks returns the links from other pages to the page that page
// names, or the part of them opts selects, with how many there are. All
// of them (opts.Limit 0) are read a part at a time.
func (c *Client) Backlinks(ctx context.Context, page string, opts app.BacklinkOptions) (*index.LinkPage, error) {
	if err := app.CheckPart("backlinks", opts.Offset, opts.Limit); err != nil {
		return nil, err
	}
	out := &index.LinkPage{Links: []index.LinkInfo{}}
	err := c.parts(opts.Offset, opts.Limit, func(cursor string, want int) (int, string, error) {
		var p BacklinkPage
		if err := c.get(ctx, "/backlinks", query("page", page, "cursor", cursor, "limit", num(want)), &p); err != nil {
			return 0, "", err
		}
		out.Page, out.Total = p.Page, p.Total
		out.Links = append(out.Links, p.Items...)
		page = p.Page // the parts of one page, should its names change meanwhile
		return len(p.Items), p.Next, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parts reads a list a part at a time from offset off: get asks for the
// part at cursor of at most want items and returns how many it held and
// the next part's cursor. It stops once limit items are read (0: all),
// or at a part that is empty or has no next cursor, whatever the server
// says.
func (c *Client) parts(off, limit int, get func(cursor string, want int) (got int, next string, err error)) error {
	cursor, read := cursorAt(off), 0
	for {
		want := cmp.Or(c.part, maxPart)
		if limit > 0 {
			want = min(limit-read, want)
		}
		got, next, err := get(cursor, want)
		if err != nil {
			return err
		}
		read += got
		if next == "" || got == 0 || limit > 0 && read >= limit {
			return nil
		}
		cursor = next
	}
}

// Lint returns the lint findings of main, or of opts.At, or the part of
// them opts selects, with the counts of them all. All of them (opts.Limit
// 0) are read a part at a time.
func (c *Client) Lint(ctx context.Context, opts app.LintOptions) (*app.LintReport, error) {
	if err := app.CheckPart("findings", opts.Offset, opts.Limit); err != nil {
		return nil, err
	}
	out := &app.LintReport{Findings: []lint.Finding{}}
	err := c.parts(opts.Offset, opts.Limit, func(cursor string, want int) (int, string, error) {
		var r LintReport
		q := query("at", opts.At, "page", opts.Page, "rule", opts.Rule, "min", string(opts.Min), "cursor", cursor, "limit", num(want))
		if err := c.get(ctx, "/lint", q, &r); err != nil {
			return 0, "", err
		}
		out.Total, out.Errors, out.Warnings, out.Infos, out.Rules = r.Total, r.Errors, r.Warnings, r.Infos, r.Rules
		out.Findings = append(out.Findings, r.Items...)
		return len(r.Items), r.Next, nil
	})
	if err != nil {
		return nil, err
	}
	if opts.Limit == 0 && opts.Offset == 0 {
		// Every finding: counted as they came, so that the counts are
		// those of the list whatever changed between parts.
		all := app.LintOptions{}.Report(out.Findings)
		all.Findings = out.Findings
		return all, nil
	}
	return out, nil
}

// Pages lists the pages at rev that f selects.
func (c *Client) Pages(ctx context.Context, rev string, f app.PageFilter) (*app.PageList, error) {
	q := query("ref", rev, "folder", f.Folder, "type", f.Type, "field", f.Field, "value", f.Value, "offset", num(f.Offset), "limit", num(f.Limit))
	for _, w := range f.Where {
		q.Add("where", w)
	}
	var out app.PageList
	if err := c.get(ctx, "/pages", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Types lists the types declared at rev.
func (c *Client) Types(ctx context.Context, rev string) ([]app.TypeSummary, error) {
	var out Items[app.TypeSummary]
	if err := c.get(ctx, "/types", query("ref", rev), &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Type returns one declared type with the findings of its pages.
func (c *Client) Type(ctx context.Context, rev, name string, limit int) (*app.TypeDetail, error) {
	var out app.TypeDetail
	if err := c.get(ctx, "/types/"+url.PathEscape(name), query("ref", rev, "limit", num(limit)), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Branches returns the vault's branches.
func (c *Client) Branches(ctx context.Context) ([]cairn.Ref, error) {
	var out Items[cairn.Ref]
	if err := c.get(ctx, "/branches", nil, &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// CreateBranch makes the branch name at from (default: the client's
// branch).
func (c *Client) CreateBranch(ctx context.Context, name, from string) (cairn.Ref, error) {
	var ref cairn.Ref
	err := c.post(ctx, "/branches", map[string]string{"name": name, "from": cmp.Or(from, c.branch)}, &ref)
	return ref, err
}

// DeleteBranch removes the branch name, only if it is at expected (when
// not zero).
func (c *Client) DeleteBranch(ctx context.Context, name string, expected cairn.Hash) (cairn.Hash, error) {
	h := http.Header{}
	if !expected.IsZero() {
		h.Set("If-Match", etag(expected))
	}
	var out DeletedBranch
	err := c.call(ctx, request{method: http.MethodDelete, path: "/branch", query: query("name", name), header: h}, &out)
	return out.Was, err
}

// Tags returns the vault's tags.
func (c *Client) Tags(ctx context.Context) ([]cairn.Ref, error) {
	var out Items[cairn.Ref]
	if err := c.get(ctx, "/tags", nil, &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// CreateTag makes the tag name at rev (default: the client's branch).
func (c *Client) CreateTag(ctx context.Context, name, rev, message string) (cairn.Ref, error) {
	var ref cairn.Ref
	err := c.post(ctx, "/tags", map[string]string{"name": name, "rev": cmp.Or(rev, c.branch), "message": message}, &ref)
	return ref, err
}

// Merge brings req.Branch into req.Into (default: the client's branch).
func (c *Client) Merge(ctx context.Context, req app.MergeRequest) (*app.MergeResult, error) {
	req.Into = cmp.Or(req.Into, c.branch)
	var res app.MergeResult
	if err := c.post(ctx, "/merge", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Revert undoes req.Commit on req.Branch (default: the client's branch).
// Ask asks the vault a question.
func (c *Client) Ask(ctx context.Context, req app.AskRequest) (*app.Answer, error) {
	var res app.Answer
	if err := c.post(ctx, "/ask", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Health runs the agent's health check and keeps its report.
func (c *Client) Health(ctx context.Context) (*app.HealthReport, error) {
	var res app.HealthReport
	if err := c.post(ctx, "/health-checks", nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// HealthReports lists the kept health reports, newest first.
func (c *Client) HealthReports(ctx context.Context, limit int) ([]*app.HealthReport, error) {
	var out Items[*app.HealthReport]
	if err := c.get(ctx, "/health-checks", query("limit", num(limit)), &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// HealthReportByID returns one kept health report.
func (c *Client) HealthReportByID(ctx context.Context, id string) (*app.HealthReport, error) {
	var res app.HealthReport
	if err := c.get(ctx, "/health-checks/"+url.PathEscape(id), nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (c *Client) Revert(ctx context.Context, req app.RevertRequest) (*app.RevertResult, error) {
	req.Branch = cmp.Or(req.Branch, c.branch)
	var res app.RevertResult
	if err := c.post(ctx, "/revert", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CommitEdits commits the local edits of the client's working tree.
func (c *Client) CommitEdits(ctx context.Context, req app.CommitEditsRequest) (*app.CommitEditsResult, error) {
	if err := c.needTree(); err != nil {
		return nil, err
	}
	var res app.CommitEditsResult
	body := map[string]any{"tree": c.tree, "message": req.Message, "paths": req.Paths}
	if err := c.post(ctx, "/commit", body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// changeset sends a changeset to path with its base as If-Match.
func (c *Client) changeset(ctx context.Context, path string, req app.ChangesRequest) (*app.ChangesResult, error) {
	cs := Changeset{Branch: cmp.Or(req.Branch, c.branch), Message: req.Message}
	if path == "/proposals" {
		cs.Branch = cmp.Or(req.Branch, admit.Branch)
	}
	for _, e := range req.Changes {
		fe := FileEdit{Path: e.Path, Delete: e.Delete}
		if !e.Delete {
			if utf8.Valid(e.Content) {
				s := string(e.Content)
				fe.Content = &s
			} else {
				s := base64.StdEncoding.EncodeToString(e.Content)
				fe.ContentBase64 = &s
			}
		}
		cs.Changes = append(cs.Changes, fe)
	}
	h := http.Header{}
	if !req.Base.IsZero() {
		h.Set("If-Match", etag(req.Base))
	}
	var res app.ChangesResult
	if err := c.call(ctx, request{method: http.MethodPost, path: path, header: h, body: cs}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CommitChanges applies a changeset to req.Branch if its head is req.Base.
func (c *Client) CommitChanges(ctx context.Context, req app.ChangesRequest) (*app.ChangesResult, error) {
	return c.changeset(ctx, "/changes", req)
}

// ProposeChanges keeps a changeset made on main's head req.Base for
// review.
func (c *Client) ProposeChanges(ctx context.Context, req app.ChangesRequest) (*app.ChangesResult, error) {
	return c.changeset(ctx, "/proposals", req)
}

// Proposals returns the proposals f selects, newest first.
func (c *Client) Proposals(ctx context.Context, f admit.ProposalFilter) ([]*cairn.Proposal, error) {
	var out Items[*cairn.Proposal]
	if err := c.get(ctx, "/proposals", query("status", f.Status, "limit", num(f.Limit)), &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

func proposalPath(id int64, what string) string {
	return "/proposals/" + strconv.FormatInt(id, 10) + what
}

// ShowProposal returns proposal id with what it changes.
func (c *Client) ShowProposal(ctx context.Context, id int64, opts app.ProposalOptions) (*app.ProposalView, error) {
	var v app.ProposalView
	if err := c.get(ctx, proposalPath(id, ""), query("patch", flag(opts.Patch)), &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (c *Client) decide(ctx context.Context, id int64, what string, body any) (*app.Decision, error) {
	var d app.Decision
	if err := c.post(ctx, proposalPath(id, "/"+what), body, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Accept merges held proposal id into main.
func (c *Client) Accept(ctx context.Context, id int64) (*app.Decision, error) {
	return c.decide(ctx, id, "accept", nil)
}

// Reject rejects held proposal id.
func (c *Client) Reject(ctx context.Context, id int64, reason string) (*app.Decision, error) {
	return c.decide(ctx, id, "reject", map[string]string{"reason": reason})
}

// Recheck runs the gates again on held proposal id.
func (c *Client) Recheck(ctx context.Context, id int64) (*app.Decision, error) {
	return c.decide(ctx, id, "recheck", nil)
}

// Ingest uploads local files as sources: with opts.Detach it only stores
// and queues them (the server's worker runs the jobs); otherwise it
// follows them, reporting to opts' callbacks, until each has a verdict.
// The files are checked as a local ingest checks them first. What the
// server reports of each file names it by the path given here.
func (c *Client) Ingest(ctx context.Context, files []string, opts app.IngestOptions) (*app.IngestResult, error) {
	if err := ingest.CheckFiles(files); err != nil {
		return nil, err
	}
	items := make([]ingest.Data, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		items[i] = ingest.Data{Name: filepath.Base(f), Data: data}
	}
	rename := func(added []*ingest.Added) {
		if len(added) == len(files) {
			for i, ad := range added {
				ad.File = files[i]
			}
		}
	}
	res, err := c.IngestData(ctx, items, app.IngestOptions{
		Detach: opts.Detach, Progress: opts.Progress, Event: opts.Event,
		Added: func(added []*ingest.Added) {
			rename(added)
			if opts.Added != nil {
				opts.Added(added)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	if len(res.Files) == len(files) {
		for i, f := range res.Files {
			f.File = files[i]
		}
	}
	return res, nil
}

// IngestData uploads contents as sources; see Ingest.
func (c *Client) IngestData(ctx context.Context, items []ingest.Data, opts app.IngestOptions) (*app.IngestResult, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, it := range items {
		w, err := mw.CreateFormFile("file", it.Name)
		if err != nil {
			return nil, err
		}
		w.Write(it.Data)
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	r := request{method: http.MethodPost, path: "/sources", raw: &buf, contentType: mw.FormDataContentType()}
	if opts.Detach {
		var res app.IngestResult
		if err := c.call(ctx, r, &res); err != nil {
			return nil, err
		}
		if opts.Added != nil {
			added := make([]*ingest.Added, len(res.Files))
			for i, f := range res.Files {
				added[i] = &f.Added
			}
			opts.Added(added)
		}
		return &res, nil
	}
	r.path = "/ingest"
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var l IngestLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("decode the ingest's stream: %w", err)
		}
		switch {
		case l.Added != nil && opts.Added != nil:
			opts.Added(l.Added)
		case l.Progress != nil && opts.Progress != nil:
			opts.Progress(l.Progress.Done, l.Progress.Total)
		case l.Event != nil && opts.Event != nil:
			opts.Event(l.Event)
		case l.Result != nil:
			return l.Result, nil
		case l.Error != nil:
			return nil, l.Error.Err()
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	err = sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return nil, cairn.Errorf(cairn.EUNAVAILABLE, "the server ended the ingest's stream early: %w", err).
		WithHint("The sources not finished stay queued; cairn sources shows where they are.")
}

// Sources lists the sources f selects, newest first, with how many there
// are of its status. All of them (f.Limit 0) are read a part at a time.
func (c *Client) Sources(ctx context.Context, f app.SourceFilter) (*app.SourceList, error) {
	if err := app.CheckPart("sources", f.Offset, f.Limit); err != nil {
		return nil, err
	}
	out := &app.SourceList{Sources: []*ingest.Source{}}
	err := c.parts(f.Offset, f.Limit, func(cursor string, want int) (int, string, error) {
		var p SourcePage
		if err := c.get(ctx, "/sources", query("status", f.Status, "cursor", cursor, "limit", num(want)), &p); err != nil {
			return 0, "", err
		}
		out.Total = p.Total
		out.Sources = append(out.Sources, p.Items...)
		return len(p.Items), p.Next, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Source returns a source with its history, by id or name.
func (c *Client) Source(ctx context.Context, ref string) (*ingest.Source, error) {
	if ref == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "no source named").WithHint("Give a source's id or name: cairn sources lists them.")
	}
	var src ingest.Source
	if err := c.get(ctx, "/sources/"+url.PathEscape(ref), nil, &src); err != nil {
		return nil, err
	}
	return &src, nil
}

// RetrySource queues a failed or rejected source again.
func (c *Client) RetrySource(ctx context.Context, ref string) (*ingest.Source, error) {
	if ref == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "no source named").WithHint("Give a source's id or name: cairn sources lists them.")
	}
	var src ingest.Source
	if err := c.post(ctx, "/sources/"+url.PathEscape(ref)+"/retry", nil, &src); err != nil {
		return nil, err
	}
	return &src, nil
}

// Jobs lists the vault's jobs, newest first.
func (c *Client) Jobs(ctx context.Context, f app.JobFilter) ([]*app.Job, error) {
	var out Items[*app.Job]
	if err := c.get(ctx, "/jobs", query("state", strings.Join(f.States, ","), "limit", num(f.Limit)), &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

func jobPath(id int64, what string) string { return "/jobs/" + strconv.FormatInt(id, 10) + what }

// Job returns one job with what happened under it.
func (c *Client) Job(ctx context.Context, id int64) (*app.Job, error) {
	var j app.Job
	if err := c.get(ctx, jobPath(id, ""), nil, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// CancelJob cancels a job.
func (c *Client) CancelJob(ctx context.Context, id int64) (*app.Job, error) {
	var j app.Job
	if err := c.post(ctx, jobPath(id, "/cancel"), nil, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// RetryJob queues the source of job id again.
func (c *Client) RetryJob(ctx context.Context, id int64) (*app.Job, error) {
	var j app.Job
	if err := c.post(ctx, jobPath(id, "/retry"), nil, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Events returns the events after the cursor after, oldest first.
func (c *Client) Events(ctx context.Context, after int64, limit int) ([]*app.Event, error) {
	if after < 0 || limit < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "event cursor %d and limit %d must be 0 or more", after, limit)
	}
	var p eventsPage
	if err := c.get(ctx, "/events/log", query("after", strconv.FormatInt(after, 10), "limit", num(limit)), &p); err != nil {
		return nil, err
	}
	return p.Items, nil
}

// LastEvent returns the id of the newest event.
func (c *Client) LastEvent(ctx context.Context) (int64, error) {
	var out lastEventOut
	err := c.get(ctx, "/events/last", nil, &out)
	return out.Last, err
}

// Settings returns every key of main's cairn.yaml.
func (c *Client) Settings(ctx context.Context) ([]admit.Setting, error) {
	var out Items[admit.Setting]
	if err := c.get(ctx, "/settings", nil, &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Setting returns one key of main's cairn.yaml.
func (c *Client) Setting(ctx context.Context, key string) (*admit.Setting, error) {
	var s admit.Setting
	if err := c.get(ctx, "/settings/"+url.PathEscape(key), nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// SetSetting sets key of cairn.yaml to value.
func (c *Client) SetSetting(ctx context.Context, key, value string) (*app.SettingChange, error) {
	var sc app.SettingChange
	err := c.call(ctx, request{method: http.MethodPut, path: "/settings/" + url.PathEscape(key), body: map[string]string{"value": value}}, &sc)
	if err != nil {
		return nil, err
	}
	return &sc, nil
}

// Doctor checks the vault.
func (c *Client) Doctor(ctx context.Context, opts app.DoctorOptions) (*app.DoctorReport, error) {
	var r app.DoctorReport
	if err := c.get(ctx, "/doctor", query("quick", flag(opts.Quick)), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GC deletes what nothing reaches.
func (c *Client) GC(ctx context.Context, opts app.GCOptions) (*app.Collected, error) {
	req := GCRequest{Now: opts.Now, DryRun: opts.DryRun}
	if opts.Grace != 0 {
		req.Grace = opts.Grace.String()
	}
	var out app.Collected
	if err := c.post(ctx, "/gc", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Purge removes the content path has at revision at from all history.
func (c *Client) Purge(ctx context.Context, path, at, reason string) (*app.Purged, error) {
	var out app.Purged
	if err := c.post(ctx, "/purge", map[string]string{"path": path, "at": at, "reason": reason}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Reindex rebuilds main's index.
func (c *Client) Reindex(ctx context.Context) (*app.Reindexed, error) {
	var out app.Reindexed
	if err := c.post(ctx, "/reindex", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateToken makes a token.
func (c *Client) CreateToken(ctx context.Context, req app.TokenRequest) (*app.NewToken, error) {
	var out app.NewToken
	if err := c.post(ctx, "/tokens", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Tokens returns every token of the vault.
func (c *Client) Tokens(ctx context.Context) ([]*auth.Token, error) {
	var out Items[*auth.Token]
	if err := c.get(ctx, "/tokens", nil, &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// RevokeToken revokes token id.
func (c *Client) RevokeToken(ctx context.Context, id string) (*auth.Token, error) {
	if id == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "no token named").WithHint("cairn token list names the tokens.")
	}
	var t auth.Token
	if err := c.call(ctx, request{method: http.MethodDelete, path: "/tokens/" + url.PathEscape(id)}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// ErrNoServer is the error of Discover when no server runs on a vault.
var ErrNoServer = errors.New("no server runs on the vault")
