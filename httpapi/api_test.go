package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"cairn"
	"cairn/app"
	"cairn/eva"
	"cairn/httpapi"
	"cairn/ingest"
	"cairn/lint"
)

// checker sends requests and checks each answer against the OpenAPI
// document: its status is one the route documents, and its JSON body
// matches the schema documented for it.
type checker struct {
	e   *env
	doc *openapi3.T
	// called holds "METHOD /template" of every route an answer came from.
	called map[string]bool
}

// uncalled returns the routes of the document that no call reached.
func (c *checker) uncalled() []string {
	var out []string
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			if !c.called[method+" "+path] {
				out = append(out, method+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// call sends method to the route template (path parameters filled in
// path, which may add a query), as secret, with a JSON body (nil: none),
// and returns the answer's body after checking it has status want.
func (c *checker) call(method, template, path string, body any, want int, header ...string) []byte {
	c.e.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case *multipart.Writer:
		panic("use upload")
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.e.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(data), "application/json"
	}
	code, data, h := c.e.do(method, path, c.e.owner, ct, rd, header...)
	c.check(method, template, code, data, h)
	if code != want {
		c.e.t.Fatalf("%s %s = %d %s, want %d", method, path, code, data, want)
	}
	return data
}

// check validates one answer against the document.
func (c *checker) check(method, template string, code int, data []byte, h http.Header) {
	t := c.e.t
	t.Helper()
	if c.called == nil {
		c.called = map[string]bool{}
	}
	c.called[method+" "+template] = true
	item := c.doc.Paths.Find(template)
	if item == nil {
		t.Fatalf("%s %s: no such route in the document", method, template)
	}
	op := item.GetOperation(method)
	if op == nil {
		t.Fatalf("%s %s: no such operation in the document", method, template)
	}
	ref := op.Responses.Status(code)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		t.Errorf("%s %s answered %d, which the document does not list", method, template, code)
		return
	}
	ct := h.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	mt := ref.Value.Content.Get(ct)
	if mt == nil {
		if len(data) > 0 && code != http.StatusNotModified {
			t.Errorf("%s %s answered %d as %q, which the document does not list (%v)", method, template, code, ct, keys(ref.Value.Content))
		}
		return
	}
	if mt.Schema == nil || !strings.Contains(ct, "json") || ct == "application/x-ndjson" {
		return
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Errorf("%s %s: body is not JSON: %v", method, template, err)
		return
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s %s (%d): the body does not match the documented schema: %v\n%s", method, template, code, err, data)
	}
}

func keys(c openapi3.Content) []string {
	var out []string
	for k := range c {
		out = append(out, k)
	}
	return out
}

// upload sends files as a multipart upload to template.
func (c *checker) upload(template string, files map[string]string, want int) []byte {
	c.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		w, _ := mw.CreateFormFile("file", name)
		io.WriteString(w, content)
	}
	mw.Close()
	code, data, h := c.e.do(http.MethodPost, template, c.e.owner, mw.FormDataContentType(), &buf)
	c.check(http.MethodPost, template, code, data, h)
	if code != want {
		c.e.t.Fatalf("POST %s = %d %s, want %d", template, code, data, want)
	}
	return data
}

func decode[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

// TestServer_API runs every route on a real vault, in the order a person
// would, checking each answer against the document and what it did to the
// vault.
func TestServer_API(t *testing.T) {
	e := setup(t)
	c := &checker{e: e, doc: loadDoc(t, e)}
	get, post, put, del := http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete
	start := e.head()

	c.call(get, "/api/v1/vault", "/api/v1/vault", nil, 200)
	f := decode[map[string]any](t, c.call(get, "/api/v1/files", "/api/v1/files?path=notes/a.md", nil, 200))
	if !strings.Contains(f["content"].(string), "printing press") {
		t.Errorf("GET /files = %v, want notes/a.md's text", f)
	}
	bin := decode[map[string]any](t, c.call(get, "/api/v1/files", "/api/v1/files?path=notes/pixel.png&ref=main", nil, 200))
	if bin["content_base64"] == nil || bin["content"] != nil {
		t.Errorf("GET /files of bytes that are not text = %v, want content_base64", bin)
	}
	code, raw, h := e.do(get, "/api/v1/files/raw?path=notes/pixel.png", e.owner, "", nil)
	c.check(get, "/api/v1/files/raw", code, raw, h)
	if code != 200 || string(raw) != pages["notes/pixel.png"] || h.Get("Content-Type") != "image/png" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /files/raw = %d %q %v, want the bytes as image/png, nosniff", code, raw, h)
	}
	etag := h.Get("ETag")
	code, _, _ = e.do(get, "/api/v1/files/raw?path=notes/pixel.png", e.owner, "", nil, "If-None-Match", etag)
	if code != http.StatusNotModified {
		t.Errorf("GET /files/raw with If-None-Match its ETag = %d, want 304", code)
	}

	// Listing, in pages.
	var paths []string
	cursor := ""
	for range 10 {
		p := decode[struct {
			Entries []struct{ Path string }
			Total   int
			Next    string
		}](t, c.call(get, "/api/v1/list", "/api/v1/list?recursive=true&limit=3&cursor="+cursor, nil, 200))
		for _, en := range p.Entries {
			paths = append(paths, en.Path)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if len(paths) != len(pages) {
		t.Errorf("listing in pages of 3 = %v, want the %d files", paths, len(pages))
	}
	c.call(get, "/api/v1/list", "/api/v1/list?cursor=bogus", nil, 400)

	// A changeset on main against its head (If-Match), then a stale one.
	branch := c.call(get, "/api/v1/branch", "/api/v1/branch?name=main", nil, 200)
	if decode[map[string]any](t, branch)["commit"] != start.String() {
		t.Errorf("GET /branch?name=main = %s, want main at %s", branch, start.Short())
	}
	change := map[string]any{"message": "add d", "changes": []map[string]any{
		{"path": "notes/d.md", "content": "---\ntitle: D\ntype: note\n---\n# D\n\n[[notes/a|A]] and movable type.\n"},
	}}
	res := decode[map[string]any](t, c.call(post, "/api/v1/changes", "/api/v1/changes", change, 200, "If-Match", `"`+start.String()+`"`))
	if res["commit"] == nil {
		t.Fatalf("POST /changes = %v, want it admitted", res)
	}
	second := e.head()
	stale := c.call(post, "/api/v1/changes", "/api/v1/changes", change, 409, "If-Match", `"`+start.String()+`"`)
	if p := problem(t, "a stale base", stale); p.Code != cairn.ECONFLICT || p.Head != second {
		t.Errorf("POST /changes on a stale base = %+v, want conflict with the head %s", p, second.Short())
	}
	c.call(post, "/api/v1/changes", "/api/v1/changes", change, http.StatusPreconditionRequired)

	c.call(get, "/api/v1/log", "/api/v1/log?limit=1", nil, 200)
	c.call(get, "/api/v1/commit", "/api/v1/commit?rev=main", nil, 200)
	d := decode[map[string]any](t, c.call(get, "/api/v1/diff", "/api/v1/diff?from=main~1&to=main&patch=true", nil, 200))
	if ps, _ := d["patches"].([]any); len(ps) != 1 || !strings.Contains(ps[0].(string), "+# D") {
		t.Errorf("GET /diff with patches = %v, want notes/d.md's patch", d)
	}
	c.call(get, "/api/v1/search", "/api/v1/search?q=movable&limit=1", nil, 200)
	c.call(get, "/api/v1/links", "/api/v1/links?page=index", nil, 200)
	c.call(get, "/api/v1/backlinks", "/api/v1/backlinks?page=notes/a.md", nil, 200)
	c.call(get, "/api/v1/lint", "/api/v1/lint?min=warning", nil, 200)
	if l := decode[app.PageList](t, c.call(get, "/api/v1/pages", "/api/v1/pages?where=title+%3D+A&limit=5", nil, 200)); l.Total != 1 || len(l.Pages) != 1 || l.Pages[0].Path != "notes/a.md" {
		t.Errorf("GET /pages?where=title = A = %+v, want notes/a.md", l)
	}
	if p := problem(t, "a bad condition", c.call(get, "/api/v1/pages", "/api/v1/pages?where=a+b", nil, 400)); p.Code != cairn.EINVALID {
		t.Errorf("GET /pages?where=a b = %+v, want invalid", p)
	}
	if ts := decode[httpapi.Items[eva.Tool]](t, c.call(get, "/api/v1/tools", "/api/v1/tools", nil, 200)); len(ts.Items) != 7 {
		t.Errorf("GET /tools = %+v, want Eva's seven tools", ts)
	}
	if ans := decode[app.Answer](t, c.call(post, "/api/v1/ask", "/api/v1/ask", map[string]any{"tool": "flashcards", "count": 6}, 200)); ans.Tool != "flashcards" || ans.Question != "Flashcards" || ans.Answer == "" {
		t.Errorf("POST /ask of the flashcards tool = %+v", ans)
	}
	if p := problem(t, "a tool's bad count", c.call(post, "/api/v1/ask", "/api/v1/ask", map[string]any{"tool": "practice-exam", "count": 2}, 400)); p.Code != cairn.EINVALID {
		t.Errorf("POST /ask of a practice exam of 2 questions = %+v, want invalid", p)
	}
	if ts := decode[httpapi.Items[app.TypeSummary]](t, c.call(get, "/api/v1/types", "/api/v1/types", nil, 200)); len(ts.Items) != 0 || ts.Items == nil {
		t.Errorf("GET /types = %+v, want an empty list: the vault declares no types", ts)
	}
	if p := problem(t, "an undeclared type", c.call(get, "/api/v1/types/{name}", "/api/v1/types/person", nil, 404)); p.Code != cairn.ENOTFOUND || !strings.Contains(p.Hint, "types/person.md") {
		t.Errorf("GET /types/person = %+v, want not_found with a hint to declare it", p)
	}
	ans := decode[app.Answer](t, c.call(post, "/api/v1/ask", "/api/v1/ask", map[string]any{"question": "which notes link to A?"}, 200))
	if ans.Agent != "extractive" || ans.Answer == "" || ans.Citations == nil {
		t.Errorf("POST /ask = %+v, want the extractive agent's answer", ans)
	}
	if p := problem(t, "an empty question", c.call(post, "/api/v1/ask", "/api/v1/ask", map[string]any{"question": " "}, 400)); p.Code != cairn.EINVALID {
		t.Errorf("POST /ask with no question = %+v, want invalid", p)
	}
	// The default agent has no health check; none is kept.
	if p := problem(t, "a health check without a model", c.call(post, "/api/v1/health-checks", "/api/v1/health-checks", nil, 400)); p.Code != cairn.EINVALID {
		t.Errorf("POST /health-checks with the extractive agent = %+v, want invalid", p)
	}
	c.call(get, "/api/v1/health-checks", "/api/v1/health-checks", nil, 200)
	c.call(get, "/api/v1/health-checks/{id}", "/api/v1/health-checks/abcd", nil, 404)

	// Working trees: the server's folder, edited, then committed.
	c.call(get, "/api/v1/worktrees", "/api/v1/worktrees", nil, 200)
	if err := os.WriteFile(filepath.Join(e.app.Root(), "notes", "b.md"), []byte("---\ntitle: B\ntype: note\n---\n# B\n\nEdited. [[notes/a|A]]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := decode[map[string]any](t, c.call(get, "/api/v1/status", "/api/v1/status?path=notes", nil, 200))
	if ch, _ := st["changes"].([]any); len(ch) != 1 {
		t.Errorf("GET /status = %v, want notes/b.md modified", st)
	}
	c.call(get, "/api/v1/worktree/diff", "/api/v1/worktree/diff?patch=true", nil, 200)
	c.call(post, "/api/v1/commit", "/api/v1/commit", map[string]any{"message": "edit b"}, 200)
	c.call(post, "/api/v1/worktree", "/api/v1/worktree", map[string]string{"path": e.app.Root()}, 200)
	c.call(post, "/api/v1/worktree", "/api/v1/worktree", map[string]string{"path": t.TempDir()}, 404)
	// With the vault's folder as the client knows it: the answer tells of
	// the vault too, and a server of another folder refuses.
	found := decode[httpapi.WorktreeFound](t, c.call(post, "/api/v1/worktree", "/api/v1/worktree", map[string]string{"path": e.app.Root(), "vault": e.app.Root()}, 200))
	if found.Tree == nil || found.Tree.Path != e.app.Root() || found.Vault == nil || found.Vault.Root != e.app.Root() || found.Vault.Main != e.head() || found.Vault.Principal == "" {
		t.Errorf("POST /worktree with the vault's folder = %+v (vault %+v), want the tree and the vault", found, found.Vault)
	}
	if p := problem(t, "another vault's folder", c.call(post, "/api/v1/worktree", "/api/v1/worktree", map[string]string{"path": e.app.Root(), "vault": t.TempDir()}, 409)); p.Code != cairn.ECONFLICT || !strings.Contains(p.Detail, e.app.Root()) {
		t.Errorf("POST /worktree with another vault's folder = %+v, want a conflict naming the vault served", p)
	}
	c.call(get, "/api/v1/status", "/api/v1/status?tree="+e.app.Root()+"-nope", nil, 404)

	// Branches and tags, a merge and a revert.
	c.call(get, "/api/v1/branches", "/api/v1/branches", nil, 200)
	c.call(post, "/api/v1/branches", "/api/v1/branches", map[string]string{"name": "side"}, 201)
	c.call(post, "/api/v1/branches", "/api/v1/branches", map[string]string{"name": "side"}, 409)
	side := decode[map[string]any](t, c.call(post, "/api/v1/changes", "/api/v1/changes", map[string]any{"branch": "side", "message": "on side",
		"changes": []map[string]any{{"path": "notes/e.md", "content": "---\ntitle: E\ntype: note\n---\n[[index]]\n"}}}, 200, "If-Match", `"`+e.head().String()+`"`))
	c.call(post, "/api/v1/merge", "/api/v1/merge", map[string]string{"branch": "side"}, 200)
	c.call(del, "/api/v1/branch", "/api/v1/branch?name=side", nil, 409, "If-Match", `"`+start.String()+`"`)
	c.call(del, "/api/v1/branch", "/api/v1/branch?name=side", nil, 200, "If-Match", `"`+side["commit"].(map[string]any)["id"].(string)+`"`)
	c.call(post, "/api/v1/tags", "/api/v1/tags", map[string]string{"name": "v1", "message": "first"}, 201)
	c.call(get, "/api/v1/tags", "/api/v1/tags", nil, 200)
	c.call(post, "/api/v1/revert", "/api/v1/revert", map[string]string{"commit": "main"}, 200)

	// A proposal held for review, shown, rejected; another accepted.
	prop := func() int64 {
		out := decode[map[string]any](t, c.call(post, "/api/v1/proposals", "/api/v1/proposals", map[string]any{"message": "propose f",
			"changes": []map[string]any{{"path": "notes/f.md", "content": fmt.Sprintf("---\ntitle: F\ntype: note\n---\n%d [[index]]\n", time.Now().UnixNano())}}}, 201, "If-Match", `"`+e.head().String()+`"`))
		return int64(out["admission"].(map[string]any)["proposal"].(map[string]any)["id"].(float64))
	}
	id := prop()
	c.call(get, "/api/v1/proposals", "/api/v1/proposals", nil, 200)
	c.call(get, "/api/v1/proposals/{id}", fmt.Sprintf("/api/v1/proposals/%d?patch=true", id), nil, 200)
	c.call(post, "/api/v1/proposals/{id}/reject", fmt.Sprintf("/api/v1/proposals/%d/reject", id), map[string]string{"reason": "no"}, 200)
	c.call(post, "/api/v1/proposals/{id}/accept", fmt.Sprintf("/api/v1/proposals/%d/accept", id), nil, 409)
	id = prop()
	c.call(post, "/api/v1/proposals/{id}/accept", fmt.Sprintf("/api/v1/proposals/%d/accept", id), nil, 200)
	id = prop()
	c.call(post, "/api/v1/proposals/{id}/recheck", fmt.Sprintf("/api/v1/proposals/%d/recheck", id), nil, 200)
	c.call(get, "/api/v1/proposals/{id}", "/api/v1/proposals/9999", nil, 404)

	// Sources: uploaded (a worker runs them: this test runs none), listed,
	// and their jobs.
	added := decode[map[string]any](t, c.upload("/api/v1/sources", map[string]string{"mills.md": "# Mills\n\nPaper mills beat rags into pulp.\n", ".bad.md": "x"}, 202))
	if added["queued"].(float64) != 1 {
		t.Errorf("POST /sources = %v, want one queued, one refused", added)
	}
	c.call(get, "/api/v1/sources", "/api/v1/sources", nil, 200)
	c.call(get, "/api/v1/sources", "/api/v1/sources?status=sideways", nil, 400)
	c.call(get, "/api/v1/sources/{ref}", "/api/v1/sources/mills.md", nil, 200)
	c.call(post, "/api/v1/sources/{ref}/retry", "/api/v1/sources/mills.md/retry", nil, 400)
	jobs := decode[struct{ Items []struct{ ID int64 } }](t, c.call(get, "/api/v1/jobs", "/api/v1/jobs?state=queued", nil, 200))
	if len(jobs.Items) != 1 {
		t.Fatalf("GET /jobs?state=queued = %v, want the one queued", jobs)
	}
	jp := fmt.Sprintf("/api/v1/jobs/%d", jobs.Items[0].ID)
	c.call(get, "/api/v1/jobs/{id}", jp, nil, 200)
	c.call(post, "/api/v1/jobs/{id}/cancel", jp+"/cancel", nil, 200)
	c.call(post, "/api/v1/jobs/{id}/retry", jp+"/retry", nil, 200)

	// Events, settings, maintenance, tokens, the audit.
	evs := decode[struct {
		Items []struct{ Kind string }
		Next  int64
	}](t, c.call(get, "/api/v1/events/log", "/api/v1/events/log?after=0&limit=1000", nil, 200))
	kinds := map[string]bool{}
	for _, ev := range evs.Items {
		kinds[ev.Kind] = true
	}
	for _, k := range []string{"ref.updated", "proposal.admitted", "proposal.held", "proposal.rejected", "proposal.accepted", "source.queued"} {
		if !kinds[k] {
			t.Errorf("the event log has no %s event (it has %v)", k, kinds)
		}
	}
	c.call(get, "/api/v1/events/last", "/api/v1/events/last", nil, 200)
	c.call(get, "/api/v1/settings", "/api/v1/settings", nil, 200)
	c.call(get, "/api/v1/settings/{key}", "/api/v1/settings/agent.timeout", nil, 200)
	c.call(put, "/api/v1/settings/{key}", "/api/v1/settings/agent.timeout", map[string]string{"value": "10m"}, 200)
	c.call(put, "/api/v1/settings/{key}", "/api/v1/settings/agent.timeout", map[string]string{"value": "soon"}, 400)
	c.call(get, "/api/v1/doctor", "/api/v1/doctor?quick=true", nil, 200)
	c.call(post, "/api/v1/gc", "/api/v1/gc", map[string]any{"dry_run": true}, 200)
	c.call(post, "/api/v1/reindex", "/api/v1/reindex", nil, 200)
	c.call(post, "/api/v1/purge", "/api/v1/purge", map[string]string{"path": "notes/pixel.png", "at": "main", "reason": "a test"}, 200)
	tok := decode[map[string]any](t, c.call(post, "/api/v1/tokens", "/api/v1/tokens", map[string]any{"name": "ci", "scopes": []string{"read"}}, 201))
	c.call(get, "/api/v1/tokens", "/api/v1/tokens", nil, 200)
	c.call(del, "/api/v1/tokens/{id}", "/api/v1/tokens/"+tok["token"].(map[string]any)["id"].(string), nil, 200)
	// The audit is written moments after the answers: the last change's
	// row comes within a few seconds.
	type row struct {
		Route, Principal, Remote string
		Status                   int
	}
	var audit struct{ Items []row }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		audit = decode[struct{ Items []row }](t, c.call(get, "/api/v1/audit", "/api/v1/audit?limit=1000", nil, 200))
		if n := len(audit.Items); n > 0 && audit.Items[n-1].Route == "DELETE /api/v1/tokens/{id}" || time.Now().After(deadline) {
			break
		}
	}
	routes := map[string]bool{}
	for _, r := range audit.Items {
		routes[r.Route] = true
		if r.Principal != "user:owner" || r.Remote == "" || r.Status == 0 {
			t.Errorf("audit row %+v: want the principal, remote address and status", r)
		}
	}
	for _, r := range []string{"POST /api/v1/changes", "POST /api/v1/commit", "DELETE /api/v1/branch", "PUT /api/v1/settings/{key}", "POST /api/v1/purge", "POST /api/v1/tokens"} {
		if !routes[r] {
			t.Errorf("the audit has no %s (it has %v)", r, routes)
		}
	}
	if routes["GET /api/v1/vault"] {
		t.Errorf("the audit records reads; want only the changes asked")
	}
	// The streams are the routes of TestServer_Events and of the CLI's
	// ingest through a server (TestScriptsServed).
	c.called["GET /api/v1/events"], c.called["POST /api/v1/ingest"] = true, true
	if left := c.uncalled(); len(left) > 0 {
		t.Errorf("routes of the document this test never called: %v", left)
	}
}

// TestServer_BacklinksInParts: the links into a page a thousand others
// link to come a part at a time, each with the total and the next part's
// cursor, and the client reads the same parts.
func TestServer_BacklinksInParts(t *testing.T) {
	e := setup(t)
	var edits []app.FileEdit
	for i := range 1003 {
		edits = append(edits, app.FileEdit{Path: fmt.Sprintf("many/n%04d.md", i), Content: []byte("[[hub]]")})
	}
	edits = append(edits, app.FileEdit{Path: "hubs/hub.md", Content: []byte("# Hub\n")})
	res, err := e.app.CommitChanges(e.ctx, app.ChangesRequest{Base: e.head(), Message: "a hub", Changes: edits})
	if err != nil || res.Commit == nil {
		t.Fatalf("CommitChanges = %+v, %v", res, err)
	}
	get := func(query string) httpapi.BacklinkPage {
		t.Helper()
		code, body, _ := e.do(http.MethodGet, "/api/v1/backlinks?"+query, e.owner, "", nil)
		var p httpapi.BacklinkPage
		if err := json.Unmarshal(body, &p); code != http.StatusOK || err != nil {
			t.Fatalf("GET /backlinks?%s = %d %s", query, code, body)
		}
		return p
	}
	first := get("page=hub")
	if len(first.Items) != app.MaxBacklinks || first.Total != 1003 || first.Next == "" || first.Page != "hubs/hub.md" {
		t.Fatalf("the first part holds %d links of %d, next %q, page %q; want %d of 1003 and a next cursor", len(first.Items), first.Total, first.Next, first.Page, app.MaxBacklinks)
	}
	rest := get("page=hub&cursor=" + first.Next)
	if len(rest.Items) != 3 || rest.Total != 1003 || rest.Next != "" || rest.Items[2].From != "many/n1002.md" {
		t.Fatalf("the second part = %d links of %d, next %q; want the last 3 and no cursor", len(rest.Items), rest.Total, rest.Next)
	}
	var small []string
	for cur := ""; ; {
		p := get("page=hubs/hub.md&limit=400&cursor=" + cur)
		for _, l := range p.Items {
			small = append(small, l.From)
		}
		if cur = p.Next; cur == "" {
			break
		}
	}
	if len(small) != 1003 || !slices.IsSorted(small) || small[0] != "many/n0000.md" {
		t.Errorf("parts of 400 gave %d links, sorted %v", len(small), slices.IsSorted(small))
	}
	c := e.client()
	p, err := c.Backlinks(t.Context(), "hub", app.BacklinkOptions{Offset: 1000, Limit: 2})
	if err != nil || len(p.Links) != 2 || p.Total != 1003 || p.Links[0].From != "many/n1000.md" {
		t.Errorf("Client.Backlinks(hub, 1000, 2) = %+v, %v", p, err)
	}
	// All of them, read by the client a part at a time (of 400 here),
	// as the vault answers them at once.
	httpapi.SetPart(c, 400)
	p, err = c.Backlinks(t.Context(), "hub", app.BacklinkOptions{})
	whole, err2 := e.app.Backlinks(e.ctx, "hub", app.BacklinkOptions{})
	if err != nil || err2 != nil || len(p.Links) != 1003 || !reflect.DeepEqual(p, whole) {
		t.Errorf("Client.Backlinks(hub) = %d links of %d (%v), want the %d the vault gives (%v)", len(p.Links), p.Total, err, len(whole.Links), err2)
	}
}

// TestServer_LintInParts: the findings of a vault of a thousand orphans
// come a part at a time, each with the counts of them all and the next
// part's cursor, and the client reads them all as the vault gives them.
func TestServer_LintInParts(t *testing.T) {
	e := setup(t)
	var edits []app.FileEdit
	for i := range 1003 {
		edits = append(edits, app.FileEdit{Path: fmt.Sprintf("orphans/o%04d.md", i), Content: []byte("Nobody links here.\n")})
	}
	res, err := e.app.CommitChanges(e.ctx, app.ChangesRequest{Base: e.head(), Message: "orphans", Changes: edits})
	if err != nil || res.Commit == nil {
		t.Fatalf("CommitChanges = %+v, %v", res, err)
	}
	whole, err := e.app.Lint(e.ctx, app.LintOptions{})
	if err != nil || whole.Total < 1003 {
		t.Fatalf("Lint() = %d findings, %v; want at least 1003", whole.Total, err)
	}
	var got []lint.Finding
	for cur, n := "", 0; ; n++ {
		code, body, _ := e.do(http.MethodGet, "/api/v1/lint?cursor="+cur, e.owner, "", nil)
		var r httpapi.LintReport
		if err := json.Unmarshal(body, &r); code != http.StatusOK || err != nil {
			t.Fatalf("GET /lint?cursor=%s = %d %s", cur, code, body)
		}
		if r.Total != whole.Total || r.Warnings != whole.Warnings || r.Rules["orphan"] != whole.Rules["orphan"] || len(r.Items) > 1000 {
			t.Fatalf("part %d: %d findings, total %d, warnings %d; want at most 1000 of %d, %d warnings", n, len(r.Items), r.Total, r.Warnings, whole.Total, whole.Warnings)
		}
		got = append(got, r.Items...)
		if cur = r.Next; cur == "" {
			if n == 0 {
				t.Errorf("all %d findings came in one part", len(got))
			}
			break
		}
	}
	if !reflect.DeepEqual(got, whole.Findings) {
		t.Errorf("the parts hold %d findings, not the vault's %d", len(got), len(whole.Findings))
	}
	c := e.client()
	httpapi.SetPart(c, 400)
	all, err := c.Lint(t.Context(), app.LintOptions{})
	if err != nil || !reflect.DeepEqual(all, whole) {
		t.Errorf("Client.Lint() = %d findings of %d (%v), want the vault's %d", len(all.Findings), all.Total, err, whole.Total)
	}
	part, err := c.Lint(t.Context(), app.LintOptions{Rule: "orphan", Offset: 5, Limit: 3})
	if err != nil || len(part.Findings) != 3 || part.Total != whole.Rules["orphan"] {
		t.Errorf("Client.Lint(orphan, 5, 3) = %+v, %v", part, err)
	}
}

// TestServer_SourcesInParts: the sources come a part at a time, newest
// first, each part with the total and the next part's cursor, and the
// client reads them all as the vault lists them.
func TestServer_SourcesInParts(t *testing.T) {
	e := setup(t)
	var data []ingest.Data
	for i := range 7 {
		data = append(data, ingest.Data{Name: fmt.Sprintf("note-%d.md", i), Data: []byte(fmt.Sprintf("# Note %d\n\nA source of its own.\n", i))})
	}
	if _, err := e.app.IngestData(e.ctx, data, app.IngestOptions{Detach: true}); err != nil {
		t.Fatal(err)
	}
	whole, err := e.app.Sources(e.ctx, app.SourceFilter{})
	if err != nil || whole.Total != 7 || len(whole.Sources) != 7 {
		t.Fatalf("Sources() = %+v, %v; want 7", whole, err)
	}
	var got []string
	for cur, n := "", 0; ; n++ {
		code, body, _ := e.do(http.MethodGet, "/api/v1/sources?limit=3&cursor="+cur, e.owner, "", nil)
		var p httpapi.SourcePage
		if err := json.Unmarshal(body, &p); code != http.StatusOK || err != nil || p.Total != 7 || len(p.Items) > 3 {
			t.Fatalf("GET /sources?limit=3&cursor=%s = %d %s", cur, code, body)
		}
		for _, s := range p.Items {
			got = append(got, s.ID)
		}
		if cur = p.Next; cur == "" {
			if n != 2 {
				t.Errorf("7 sources came in %d parts of 3, want 3", n+1)
			}
			break
		}
	}
	var want []string
	for _, s := range whole.Sources {
		want = append(want, s.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the parts list %v, the vault %v", got, want)
	}
	c := e.client()
	httpapi.SetPart(c, 2)
	all, err := c.Sources(t.Context(), app.SourceFilter{})
	if err != nil || all.Total != 7 || len(all.Sources) != 7 || all.Sources[6].ID != want[6] {
		t.Errorf("Client.Sources() = %+v, %v; want the 7 in order", all, err)
	}
}
