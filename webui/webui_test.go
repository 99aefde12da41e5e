package webui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/app"
	"cairn/auth"
	"cairn/httpapi"
	"cairn/webui"
)

// pages is the vault every test starts from: a small brain, and a page
// whose body tries to run script every way Markdown allows.
var pages = map[string]string{
	"index.md":      "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[notes/a|A]]\n- [[notes/b|B]]\n- [[notes/evil|Evil]]\n",
	"notes/a.md":    "---\ntitle: A\ntype: note\ntags: [press, type]\n---\n# A\n\nThe printing press and [[notes/b|B]], see [[notes/b#Movable type]] and [[nowhere]].\n",
	"notes/b.md":    "---\ntitle: B\ntype: note\n---\n# B\n\n## Movable type\n\nMovable type. Back to [[notes/a|A]].\n",
	"notes/evil.md": "---\ntitle: Evil\ntype: note\n---\n# Evil\n\n<script>window.pwned = 1</script>\n\n<img src=x onerror=\"window.pwned = 2\">\n\n[click](javascript:window.pwned=3)\n\n[[javascript:alert(1)|wiki]]\n\n<a href=\"javascript:window.pwned=4\">raw</a>\n\n[cairn](cairn-wiki:wikilink:javascript:window.pwned=5)\n",
	"cairn.yaml":    "server:\n  rate: 1000\n  burst: 2000\n",
	"log.md":        "# Log\n",
}

// env is a served vault with a web interface.
type env struct {
	t        *testing.T
	app      *app.App
	url      string
	owner    string // every scope
	reader   string // read only
	held     int64  // a proposal held for review
	ctx      context.Context
	vaultDir string
}

func setup(t *testing.T) *env {
	t.Helper()
	e := setupIdle(t)
	e.startWorker()
	return e
}

// startWorker starts running the vault's jobs, until the test ends.
func (e *env) startWorker() {
	e.t.Helper()
	w, err := e.app.StartWorker(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { w.Stop(context.Background()) })
}

// setupIdle is setup with no worker: sources wait in the queue until the
// test starts one (startWorker).
func setupIdle(t *testing.T) *env {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	for p, c := range pages {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := app.Init(t.Context(), dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("owner"))
	res, err := a.Adopt(ctx, "start")
	if err != nil || res.Commit == nil {
		a.Close()
		t.Fatalf("Adopt = %+v, %v", res, err)
	}
	e := &env{t: t, app: a, ctx: ctx, vaultDir: dir}
	e.owner = e.token("owner", auth.AllScopes()...)
	e.reader = e.token("reader", auth.Read)
	// An agent deletes a page: held for a person.
	agent := cairn.NewContextWithPrincipal(t.Context(), cairn.Agent("tester"))
	ch, err := a.ProposeChanges(agent, app.ChangesRequest{Base: res.Commit.Hash, Message: "remove B",
		Changes: []app.FileEdit{{Path: "notes/b.md", Delete: true}}})
	if err != nil || ch.Admission == nil || ch.Admission.Proposal == nil || ch.Admission.Verdict != cairn.Hold {
		t.Fatalf("ProposeChanges = %+v, %v; want a held proposal", ch, err)
	}
	e.held = ch.Admission.Proposal.ID

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.New(a, &httpapi.Options{ReadTimeout: 10 * time.Second})
	ui, err := webui.New(a, &webui.Options{Version: "test", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), MaxUpload: 1 << 20, Limit: srv.Limit, Done: srv.Stopping()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Fallback(ui)
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	e.url = "http://" + ln.Addr().String()
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close()
	})
	return e
}

func (e *env) token(name string, scopes ...auth.Scope) string {
	e.t.Helper()
	nt, err := e.app.CreateToken(e.ctx, app.TokenRequest{Name: name, Scopes: scopes})
	if err != nil {
		e.t.Fatal(err)
	}
	return nt.Secret
}

// browser is an HTTP client with a cookie jar that follows no redirect.
type browser struct {
	e *env
	c *http.Client
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request; form, when set, is posted.
func (b *browser) do(method, path string, form url.Values, header ...string) (int, string, http.Header) {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.e.url+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header
}

// signIn signs in with secret and returns the session's form key.
func (b *browser) signIn(secret string) string {
	b.e.t.Helper()
	code, body, h := b.do("POST", "/signin", url.Values{"token": {secret}, "next": {"/review"}})
	if code != http.StatusSeeOther || h.Get("Location") != "/review" {
		b.e.t.Fatalf("POST /signin = %d %s, want 303 to /review:\n%s", code, h.Get("Location"), body)
	}
	_, page, _ := b.do("GET", "/", nil)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		b.e.t.Fatalf("the home page carries no form key:\n%s", page)
	}
	return m[1]
}

// TestUI_Views checks that each view answers a signed-in session, with
// the security headers, and what it must show.
func TestUI_Views(t *testing.T) {
	e := setup(t)
	b := e.browser()
	b.signIn(e.owner)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{"pages", "Proposal " + itoa(e.held)}},
		{"/pages/notes/a.md", []string{`<h1 id="h-a">A</h1>`, `href="/pages/notes/b.md" class="wikilink"`, `href="/pages/notes/b.md#h-movable-type"`, `class="wikilink broken"`, "press, type", "index.md"}},
		{"/pages/notes/b.md", []string{"Backlinks", "notes/a.md"}},
		{"/search?q=printing", []string{"<mark>printing</mark>", "notes/a.md"}},
		{"/search/results?q=movable", []string{`id="results"`, "<mark>Movable</mark>"}},
		{"/review", []string{"/review/" + itoa(e.held), "tester"}},
		{"/review/" + itoa(e.held), []string{"deleted", "notes/b.md", "Accept", "Reject", `class="del"`, `href="?diff=split"`}},
		{"/review/" + itoa(e.held) + "?diff=split", []string{`<table class="split">`, `<td class="del">Movable type. Back to [[notes/a|A]].</td><td class=""></td>`}},
		{"/history", []string{"start", "main"}},
	} {
		code, body, h := b.do("GET", tc.path, nil)
		if code != 200 {
			t.Errorf("GET %s = %d, want 200:\n%s", tc.path, code, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q:\n%s", tc.path, w, body)
			}
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
	}
	// The page at an older commit.
	cs, _ := e.app.Log(e.ctx, "main", app.LogOptions{})
	code, body, _ := b.do("GET", "/pages/notes/a.md?at="+cs[len(cs)-1].Hash.String(), nil)
	if code != 200 || !strings.Contains(body, "see it on main") {
		t.Errorf("GET a page at a commit = %d:\n%s", code, body)
	}
	code, body, _ = b.do("GET", "/commits/"+cs[0].Hash.String(), nil)
	if code != 200 || !strings.Contains(body, "Commit ") {
		t.Errorf("GET /commits/… = %d:\n%s", code, body)
	}
}

// TestUI_Sanitised checks that a page's content runs nothing: no script
// element, no event handler, no javascript: link reaches the browser.
func TestUI_Sanitised(t *testing.T) {
	e := setup(t)
	b := e.browser()
	b.signIn(e.reader)
	code, body, _ := b.do("GET", "/pages/notes/evil.md", nil)
	if code != 200 {
		t.Fatalf("GET the evil page = %d", code)
	}
	article := body[strings.Index(body, `<div class="body">`):]
	article = article[:strings.Index(article, "</article>")]
	for _, bad := range []string{"<script", "onerror", "pwned = 1</script"} {
		if strings.Contains(strings.ToLower(article), bad) {
			t.Errorf("the rendered page holds %q:\n%s", bad, article)
		}
	}
	if m := regexp.MustCompile(`(?i)(href|src)\s*=\s*["']?\s*(javascript|cairn-wiki):`).FindString(article); m != "" {
		t.Errorf("the rendered page holds a link %q:\n%s", m, article)
	}
}

// TestUI_Review checks the review: a session with the review scope
// accepts the held proposal through the form; a read-only one sees no
// buttons and its forged POST is refused.
func TestUI_Review(t *testing.T) {
	e := setup(t)
	path := "/review/" + itoa(e.held)

	ro := e.browser()
	roKey := ro.signIn(e.reader)
	_, body, _ := ro.do("GET", path, nil)
	if strings.Contains(body, "/accept") || strings.Contains(body, "Reject") {
		t.Errorf("a read-only session sees the review's buttons:\n%s", body)
	}
	code, body, _ := ro.do("POST", path+"/accept", url.Values{"csrf": {roKey}})
	if code != http.StatusForbidden || !strings.Contains(body, "review scope") {
		t.Errorf("a read-only session's accept = %d, want 403 naming the scope:\n%s", code, body)
	}

	b := e.browser()
	key := b.signIn(e.owner)
	code, body, _ = b.do("POST", path+"/reject", url.Values{"csrf": {key}})
	if code != http.StatusBadRequest || !strings.Contains(body, "needs a reason") {
		t.Errorf("a reject without a reason = %d, want 400:\n%s", code, body)
	}
	code, _, h := b.do("POST", path+"/accept", url.Values{"csrf": {key}})
	if code != http.StatusSeeOther || !strings.HasSuffix(h.Get("Location"), "done=accept") {
		t.Fatalf("accept = %d %s, want 303", code, h.Get("Location"))
	}
	if _, err := e.app.ReadFile(e.ctx, "main", "notes/b.md"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("after accepting the deletion, notes/b.md on main: %v", err)
	}
	reqs, err := e.app.AuditedRequests(e.ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var audited bool
	for _, r := range reqs {
		audited = audited || r.Surface == "web" && strings.HasSuffix(r.Route, "/accept") && r.Status == http.StatusSeeOther
	}
	if !audited {
		t.Errorf("the accept is not in the audit log: %+v", reqs)
	}
}

// TestUI_BadInput checks what the interface answers to a request it must
// refuse: each a page saying what went wrong, with the right status, and
// nothing changed.
func TestUI_BadInput(t *testing.T) {
	e := setup(t)
	path := "/review/" + itoa(e.held)
	b := e.browser()
	key := b.signIn(e.owner)

	// Not signed in: a page goes to the sign-in, a POST is refused.
	anon := e.browser()
	code, _, h := anon.do("GET", "/pages/notes/a.md", nil)
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/signin?next=%2Fpages%2Fnotes%2Fa.md") {
		t.Errorf("GET without a session = %d %s, want 303 to /signin", code, h.Get("Location"))
	}
	code, body, _ := anon.do("POST", path+"/accept", url.Values{"csrf": {key}})
	if code != http.StatusUnauthorized || !strings.Contains(body, "not signed in") {
		t.Errorf("POST without a session = %d, want 401:\n%s", code, body)
	}
	// A wrong token.
	code, body, _ = anon.do("POST", "/signin", url.Values{"token": {"cairn_nope_nope"}})
	if code != http.StatusUnauthorized || !strings.Contains(body, "this token is not a cairn token") {
		t.Errorf("sign in with a wrong token = %d, want 401:\n%s", code, body)
	}
	// A missing or wrong form key.
	for _, form := range []url.Values{{}, {"csrf": {"forged"}}} {
		code, body, _ = b.do("POST", path+"/accept", form)
		if code != http.StatusForbidden || !strings.Contains(body, "form&#39;s key") {
			t.Errorf("accept with form %v = %d, want 403:\n%s", form, code, body)
		}
	}
	// From another site, even with the key.
	code, body, _ = b.do("POST", path+"/accept", url.Values{"csrf": {key}}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if code != http.StatusForbidden || !strings.Contains(body, "another site") {
		t.Errorf("accept from another site = %d, want 403:\n%s", code, body)
	}
	// A page at a revision that does not exist, a page that does not.
	code, body, _ = b.do("GET", "/pages/notes/a.md?at=nosuchbranch", nil)
	if code != http.StatusNotFound || !strings.Contains(body, "nosuchbranch") {
		t.Errorf("a page at an unknown revision = %d, want 404:\n%s", code, body)
	}
	code, _, _ = b.do("GET", "/pages/notes/zzz.md", nil)
	if code != http.StatusNotFound {
		t.Errorf("an unknown page = %d, want 404", code)
	}
	code, _, _ = b.do("GET", "/review/abc", nil)
	if code != http.StatusBadRequest {
		t.Errorf("a proposal that is no number = %d, want 400", code)
	}
	// Nothing of that changed the proposal.
	p, err := e.app.ShowProposal(e.ctx, e.held, app.ProposalOptions{})
	if err != nil || p.Proposal.Status != cairn.ProposalHeld {
		t.Errorf("after the refused requests the proposal is %v, %v; want held", p.Proposal.Status, err)
	}
	// Signed out, the session is over, even with its cookie.
	jar := b.c.Jar
	cookies := jar.Cookies(mustURL(e.url))
	code, _, _ = b.do("POST", "/signout", url.Values{"csrf": {key}})
	if code != http.StatusSeeOther {
		t.Errorf("sign out = %d, want 303", code)
	}
	jar.SetCookies(mustURL(e.url), cookies)
	code, _, h = b.do("GET", "/", nil)
	if code != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "session+has+ended") {
		t.Errorf("GET with the ended session's cookie = %d %s, want 303 to sign in, saying it ended", code, h.Get("Location"))
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// upload posts files as the upload form does.
func (b *browser) upload(key string, files map[string]string) (int, string, http.Header) {
	b.e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("csrf", key)
	for name, content := range files {
		fw, _ := mw.CreateFormFile("file", name)
		io.WriteString(fw, content)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", b.e.url+"/sources", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header
}

// TestUI_Ingest checks the ingest view: an upload of several files is
// stored and queued, the worker integrates the good one, its job's page
// and stream show its activity to the verdict; an empty and a binary file
// are refused with the reason; an upload past the bound, or of no file,
// is refused and changes nothing.
func TestUI_Ingest(t *testing.T) {
	e := setup(t)
	b := e.browser()
	key := b.signIn(e.owner)
	code, _, h := b.upload(key, map[string]string{
		"paper.md": "# Paper\n\nPaper came to Europe through Spain in the twelfth century.\n",
		"empty.md": "",
		"blob.md":  "\x00\x01\x02binary",
	})
	if code != http.StatusSeeOther {
		t.Fatalf("upload = %d, want 303", code)
	}
	_, body, _ := b.do("GET", h.Get("Location"), nil)
	for _, want := range []string{"empty.md: failed", "blob.md: failed"} {
		if !strings.Contains(body, want) {
			t.Errorf("after the upload the page lacks %q:\n%s", want, body)
		}
	}
	// The notice shows the good file's status as it is when the page is
	// drawn: the worker may have taken it already.
	if !strings.Contains(body, "paper.md: queued") && !strings.Contains(body, "paper.md: running") && !strings.Contains(body, "paper.md: merged") {
		t.Errorf("after the upload the page lacks paper.md's status:\n%s", body)
	}
	l, err := e.app.Sources(e.ctx, app.SourceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	srcs := l.Sources
	var job int64
	for _, s := range srcs {
		if s.Name == "paper.md" {
			job = s.Job
		}
	}
	if job == 0 {
		t.Fatalf("no job for paper.md: %+v", srcs)
	}
	// The stream carries the job's activity to its end.
	req, _ := http.NewRequest("GET", e.url+"/jobs/"+itoa(job)+"/events?after=0", nil)
	for _, c := range b.c.Jar.Cookies(mustURL(e.url)) {
		req.AddCookie(c)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	resp, err := b.c.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(string(stream), "event: done") ||
		!strings.Contains(string(stream), "running (extractive agent") || !strings.Contains(string(stream), "merged (proposal") {
		t.Errorf("the job's stream:\n%s", stream)
	}
	_, body, _ = b.do("GET", "/jobs/"+itoa(job), nil)
	if !strings.Contains(body, "merged (proposal") || strings.Contains(body, "data-stream") {
		t.Errorf("the finished job's page:\n%s", body)
	}

	// Bad uploads change nothing.
	before, _ := e.app.Sources(e.ctx, app.SourceFilter{})
	code, body, _ = b.upload(key, map[string]string{"big.md": strings.Repeat("a", 2<<20)})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than 1.0 MiB") {
		t.Errorf("an upload past the bound = %d:\n%s", code, body)
	}
	code, body, _ = b.upload(key, map[string]string{})
	if code != http.StatusBadRequest || !strings.Contains(body, "no file was chosen") {
		t.Errorf("an upload of no file = %d:\n%s", code, body)
	}
	code, _, _ = b.upload("forged", map[string]string{"x.md": "# X\n"})
	if code != http.StatusForbidden {
		t.Errorf("an upload with a forged key = %d, want 403", code)
	}
	ro := e.browser()
	roKey := ro.signIn(e.reader)
	code, _, _ = ro.upload(roKey, map[string]string{"y.md": "# Y\n"})
	if code != http.StatusForbidden {
		t.Errorf("a read-only session's upload = %d, want 403", code)
	}
	if after, _ := e.app.Sources(e.ctx, app.SourceFilter{}); after.Total != before.Total {
		t.Errorf("the refused uploads added sources: %d before, %d after", before.Total, after.Total)
	}
}

// TestUI_AskLintCompareSettings checks the other views: asking (and that
// saving needs the propose scope), lint, comparing two revisions, and the
// settings an admin changes.
func TestUI_AskLintCompareSettings(t *testing.T) {
	e := setup(t)
	b := e.browser()
	key := b.signIn(e.owner)
	code, body, _ := b.do("POST", "/ask", url.Values{"csrf": {key}, "q": {"What is movable type?"}})
	if code != 200 || !strings.Contains(body, `href="/pages/notes/b.md"`) || !strings.Contains(body, `<a href="/pages/notes/b.md" class="wikilink"`) || !strings.Contains(body, "extractive agent") {
		t.Errorf("ask = %d:\n%s", code, body)
	}
	code, body, _ = b.do("GET", "/ask", nil)
	if code != 200 || !strings.Contains(body, `<option value="practice-exam"`) || !strings.Contains(body, `action="/tool"`) {
		t.Errorf("the ask page offers no tools = %d:\n%s", code, body)
	}
	code, body, _ = b.do("POST", "/tool", url.Values{"csrf": {key}, "tool": {"evidence-map"}, "focus": {"movable type"}})
	if code != 200 || !strings.Contains(body, "needs a model") || !strings.Contains(body, `class="citations"><li><a href="/pages/notes/a.md"`) {
		t.Errorf("the evidence-map tool = %d:\n%s", code, body)
	}
	code, body, _ = b.do("POST", "/tool", url.Values{"csrf": {key}, "tool": {"flashcards"}, "count": {"99"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "makes 6 to 30 flashcards, not 99") {
		t.Errorf("flashcards with a count of 99 = %d:\n%s", code, body)
	}
	code, body, _ = b.do("POST", "/tool", url.Values{"csrf": {key}, "tool": {"options-review"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "cannot run options-review offline") {
		t.Errorf("a tool that needs a model, offline = %d:\n%s", code, body)
	}
	code, body, _ = b.do("POST", "/ask", url.Values{"csrf": {key}, "q": {"  "}})
	if code != http.StatusBadRequest || !strings.Contains(body, "the question is empty") {
		t.Errorf("an empty question = %d:\n%s", code, body)
	}
	ro := e.browser()
	roKey := ro.signIn(e.reader)
	code, body, _ = ro.do("POST", "/ask", url.Values{"csrf": {roKey}, "q": {"What is movable type?"}, "save": {"1"}})
	if code != http.StatusForbidden || !strings.Contains(body, "scope propose") {
		t.Errorf("a read-only save = %d:\n%s", code, body)
	}

	// The default agent does no health checks: the page says how to get one.
	code, body, _ = b.do("POST", "/health", url.Values{"csrf": {key}})
	if code != http.StatusBadRequest || !strings.Contains(body, "agent.runtime") {
		t.Errorf("a health check with the default agent = %d:\n%s", code, body)
	}
	code, body, _ = b.do("GET", "/lint", nil)
	if code != 200 || !strings.Contains(body, "[[nowhere]]") || !strings.Contains(body, `href="/pages/notes/a.md"`) {
		t.Errorf("lint = %d:\n%s", code, body)
	}

	cs, _ := e.app.Log(e.ctx, "main", app.LogOptions{})
	first := cs[len(cs)-1].Hash.String()
	code, body, _ = b.do("POST", "/settings", url.Values{"csrf": {key}, "key": {"lint.strict"}, "value": {"true"}})
	if code != http.StatusSeeOther {
		t.Errorf("set lint.strict = %d:\n%s", code, body)
	}
	if v, err := e.app.Setting(e.ctx, "lint.strict"); err != nil || v.Value != "true" {
		t.Errorf("lint.strict after the form = %+v, %v", v, err)
	}
	code, body, _ = b.do("GET", "/compare?from="+first+"&to=main", nil)
	if code != 200 || !strings.Contains(body, "cairn.yaml") || !strings.Contains(body, "strict: true") {
		t.Errorf("compare = %d:\n%s", code, body)
	}
	code, _, _ = b.do("GET", "/compare?from="+first, nil)
	if code != http.StatusBadRequest {
		t.Errorf("compare with one revision = %d, want 400", code)
	}
	code, _, _ = b.do("GET", "/compare?from=nosuch&to=main", nil)
	if code != http.StatusNotFound {
		t.Errorf("compare with an unknown revision = %d, want 404", code)
	}
	code, body, _ = ro.do("POST", "/settings", url.Values{"csrf": {roKey}, "key": {"lint.strict"}, "value": {"false"}})
	if code != http.StatusForbidden || !strings.Contains(body, "admin scope") {
		t.Errorf("a read-only session's setting = %d:\n%s", code, body)
	}
	code, body, _ = b.do("POST", "/settings", url.Values{"csrf": {key}, "key": {"agent.workers"}, "value": {"many"}})
	if code != http.StatusBadRequest {
		t.Errorf("a bad setting = %d:\n%s", code, body)
	}
	code, body, _ = b.do("GET", "/settings", nil)
	if code != 200 || !strings.Contains(body, "lint.strict") {
		t.Errorf("settings = %d", code)
	}
}

// TestUI_SignInLink checks that a sign-in link works once.
func TestUI_SignInLink(t *testing.T) {
	e := setup(t)
	link, err := e.app.SignInLink(e.ctx, auth.AllScopes())
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	code, body, _ := b.do("GET", "/signin?link="+url.QueryEscape(link.Secret), nil)
	if code != 200 || !strings.Contains(body, "works once") {
		t.Fatalf("GET the link = %d:\n%s", code, body)
	}
	code, _, h := b.do("POST", "/signin", url.Values{"token": {link.Secret}})
	if code != http.StatusSeeOther || h.Get("Location") != "/" {
		t.Fatalf("sign in with the link = %d %s", code, h.Get("Location"))
	}
	if code, _, _ = b.do("GET", "/", nil); code != 200 {
		t.Errorf("home after signing in with the link = %d", code)
	}
	again := e.browser()
	code, body, _ = again.do("POST", "/signin", url.Values{"token": {link.Secret}})
	if code != http.StatusUnauthorized || !strings.Contains(body, "revoked") {
		t.Errorf("the link a second time = %d, want 401 (revoked):\n%s", code, body)
	}
}

// TestUI_Graph checks the graph's data: every page with a place and the
// links among them, or a page's neighbourhood; a bad depth or an unknown
// page is refused.
func TestUI_Graph(t *testing.T) {
	e := setup(t)
	b := e.browser()
	b.signIn(e.reader)
	type graph struct {
		Nodes []struct {
			P string  `json:"p"`
			X float64 `json:"x"`
			V float64 `json:"v"`
			D int     `json:"d"`
		}
		Edges [][2]int
		Focus string
	}
	code, body, h := b.do("GET", "/graph/data", nil)
	if code != 200 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /graph/data = %d %s:\n%s", code, h.Get("Content-Type"), body)
	}
	var g graph
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatal(err)
	}
	paths := map[string]int{}
	for i, n := range g.Nodes {
		paths[n.P] = i
	}
	for _, p := range []string{"index.md", "notes/a.md", "notes/b.md", "notes/evil.md"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("the graph lacks %s: %v", p, paths)
		}
	}
	edge := func(a, b string) bool {
		i, j := paths[a], paths[b]
		for _, e := range g.Edges {
			if e == [2]int{min(i, j), max(i, j)} {
				return true
			}
		}
		return false
	}
	if !edge("notes/a.md", "notes/b.md") || !edge("index.md", "notes/a.md") || len(g.Edges) != 4 {
		t.Errorf("the graph's edges %v, want index–a, index–b, index–evil, a–b", g.Edges)
	}
	code, body, _ = b.do("GET", "/graph/data?focus=B&depth=1", nil)
	g = graph{}
	json.Unmarshal([]byte(body), &g)
	if code != 200 || g.Focus != "notes/b.md" || len(g.Nodes) != 3 {
		t.Errorf("B's neighbourhood = %d %+v, want B, A and index", code, g)
	}
	for _, bad := range []struct {
		path string
		code int
	}{{"/graph/data?focus=B&depth=9", 400}, {"/graph/data?focus=nosuchpage", 404}} {
		if code, body, _ := b.do("GET", bad.path, nil); code != bad.code {
			t.Errorf("GET %s = %d, want %d:\n%s", bad.path, code, bad.code, body)
		}
	}
	if code, body, _ := b.do("GET", "/graph", nil); code != 200 || !strings.Contains(body, `data-src="/graph/data"`) {
		t.Errorf("GET /graph = %d:\n%s", code, body)
	}
}

// TestUI_GraphActivity checks that the graph's activity stream carries
// the paths an agent writes, as it writes them, so that they pulse.
func TestUI_GraphActivity(t *testing.T) {
	e := setup(t)
	b := e.browser()
	key := b.signIn(e.owner)
	req, _ := http.NewRequest("GET", e.url+"/graph/activity", nil)
	for _, c := range b.c.Jar.Cookies(mustURL(e.url)) {
		req.AddCookie(c)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := b.c.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code, _, _ := b.upload(key, map[string]string{"press.md": "# Press\n\nThe press spread print across Europe.\n"}); code != http.StatusSeeOther {
		t.Fatalf("upload = %d", code)
	}
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), "summaries/press.md") {
			return
		}
	}
	t.Errorf("the activity stream ended without the page the agent wrote: %q", lines)
}

// TestUI_OAuthBadInput checks what the authorization server refuses, and
// how: a client it cannot trust with a redirect (unknown, or a redirect
// URI it did not register) gets a page, never a redirect; a known one is
// sent back with the error; a code needs its verifier.
func TestUI_OAuthBadInput(t *testing.T) {
	e := setup(t)
	post := func(path string, body io.Reader, ctype string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(e.url+path, ctype, body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	for _, bad := range []string{
		`{"redirect_uris": ["javascript:alert(1)"]}`,
		`{"redirect_uris": ["http://evil.example/cb"]}`,
		`{"redirect_uris": ["https://ok.example/cb#frag"]}`,
		`{"redirect_uris": []}`,
		`{"redirect_uris": ["https://ok.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}`,
		`not json`,
	} {
		if code, out := post("/oauth/register", strings.NewReader(bad), "application/json"); code != 400 || out["error"] == nil {
			t.Errorf("register %s = %d %v, want 400 with an error", bad, code, out)
		}
	}
	code, client := post("/oauth/register", strings.NewReader(`{"redirect_uris": ["https://app.example/cb"], "client_name": "App"}`), "application/json")
	if code != 201 {
		t.Fatalf("register = %d %v", code, client)
	}
	id := client["client_id"].(string)

	b := e.browser()
	key := b.signIn(e.reader)
	challenge := strings.Repeat("c", 43)
	authorize := func(q url.Values) (int, string, http.Header) {
		return b.do("GET", "/oauth/authorize?"+q.Encode(), nil)
	}
	good := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {"https://app.example/cb"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"s1"}, "scope": {"read review"}}
	with := func(k, v string) url.Values {
		q := url.Values{}
		for kk, vv := range good {
			q[kk] = vv
		}
		q.Set(k, v)
		return q
	}
	// No redirect to where the client did not register, nor for an
	// unknown client.
	for _, q := range []url.Values{with("redirect_uri", "https://evil.example/cb"), with("client_id", "mcp-nosuch")} {
		code, body, h := authorize(q)
		if code != http.StatusBadRequest || h.Get("Location") != "" || !strings.Contains(body, "cannot be granted") {
			t.Errorf("authorize %v = %d %s", q, code, h.Get("Location"))
		}
	}
	// A known client is told what is wrong.
	for _, tc := range []struct{ k, v, want string }{{"code_challenge_method", "plain", "invalid_request"}, {"code_challenge", "short", "invalid_request"},
		{"response_type", "token", "unsupported_response_type"}, {"scope", "admin", "access_denied"}} {
		code, _, h := authorize(with(tc.k, tc.v))
		loc, _ := url.Parse(h.Get("Location"))
		if code != http.StatusSeeOther || loc == nil || loc.Host != "app.example" || loc.Query().Get("error") != tc.want || loc.Query().Get("state") != "s1" {
			t.Errorf("authorize with %s=%s = %d %s, want a redirect with error %s", tc.k, tc.v, code, h.Get("Location"), tc.want)
		}
	}
	// The consent page offers only what the reader may grant, and allows
	// the client's origin as a form target.
	code, body, h := authorize(good)
	if code != 200 || !strings.Contains(body, `value="read" checked`) || strings.Contains(body, `value="review"`) ||
		!strings.Contains(h.Get("Content-Security-Policy"), "form-action 'self' https://app.example") {
		t.Errorf("the consent page = %d (CSP %q):\n%s", code, h.Get("Content-Security-Policy"), body)
	}
	// Denied, the client hears so; forged, nothing happens.
	form := url.Values{"csrf": {key}, "decision": {"deny"}}
	for k, v := range good {
		form[k] = v
	}
	code, _, h = b.do("POST", "/oauth/authorize", form)
	if loc, _ := url.Parse(h.Get("Location")); code != http.StatusSeeOther || loc.Query().Get("error") != "access_denied" {
		t.Errorf("deny = %d %s", code, h.Get("Location"))
	}
	form.Set("csrf", "forged")
	form.Set("decision", "allow")
	if code, _, _ = b.do("POST", "/oauth/authorize", form); code != http.StatusForbidden {
		t.Errorf("a forged consent = %d, want 403", code)
	}
	// A code with the wrong verifier gets nothing, and is spent.
	form.Set("csrf", key)
	form.Set("grant", "read")
	_, _, h = b.do("POST", "/oauth/authorize", form)
	loc, _ := url.Parse(h.Get("Location"))
	c := loc.Query().Get("code")
	if c == "" {
		t.Fatalf("allow gave no code: %s", h.Get("Location"))
	}
	noVerifier := url.Values{"grant_type": {"authorization_code"}, "code": {c}, "client_id": {id}, "redirect_uri": {"https://app.example/cb"}}
	if code, out := post("/oauth/token", strings.NewReader(noVerifier.Encode()), "application/x-www-form-urlencoded"); code != 400 || out["error"] != "invalid_request" {
		t.Errorf("no verifier = %d %v, want invalid_request", code, out)
	}
	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {c}, "client_id": {id}, "redirect_uri": {"https://app.example/cb"}, "code_verifier": {strings.Repeat("v", 43)}}
	if code, out := post("/oauth/token", strings.NewReader(exchange.Encode()), "application/x-www-form-urlencoded"); code != 400 || out["error"] != "invalid_grant" {
		t.Errorf("a wrong verifier = %d %v, want invalid_grant", code, out)
	}
	if code, out := post("/oauth/token", strings.NewReader(url.Values{"grant_type": {"password"}}.Encode()), "application/x-www-form-urlencoded"); code != 400 || out["error"] != "unsupported_grant_type" {
		t.Errorf("a password grant = %d %v", code, out)
	}
	// An admin sees the client's token among the tokens and revokes it.
	admin := e.browser()
	adminKey := admin.signIn(e.owner)
	tokCode, tokens, _ := admin.do("GET", "/tokens", nil)
	if tokCode != 200 || !strings.Contains(tokens, "web-session") {
		t.Errorf("the tokens page = %d:\n%s", tokCode, tokens)
	}
	if code, _, _ := b.do("GET", "/tokens", nil); code != http.StatusForbidden {
		t.Errorf("a reader's tokens page = %d, want 403", code)
	}
	toks, _ := e.app.Tokens(e.ctx)
	if code, _, _ := admin.do("POST", "/tokens/"+toks[len(toks)-1].ID+"/revoke", url.Values{"csrf": {adminKey}}); code != http.StatusSeeOther {
		t.Errorf("revoke from the tokens page = %d, want 303", code)
	}
	resp, err := http.Get(e.url + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta["issuer"] != e.url || meta["token_endpoint"] != e.url+"/oauth/token" {
		t.Errorf("the metadata: %v", meta)
	}
}

// TestUI_SessionBounds checks what bounds a session: revoking the token it
// came from ends it (on the API too, where its secret could be sent); a
// session counts against that token's rate, so signing in again gives no
// fresh one; the sign-in form is small; a link offers only a sign-in
// link's token; next never leads to another site.
func TestUI_SessionBounds(t *testing.T) {
	e := setup(t)
	parent, err := e.app.CreateToken(e.ctx, app.TokenRequest{Name: "laptop", Scopes: []auth.Scope{auth.Read, auth.Review}})
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	key := b.signIn(parent.Secret)
	cookie := b.c.Jar.Cookies(mustURL(e.url))[0].Value
	if _, err := e.app.RevokeToken(e.ctx, parent.Token.ID); err != nil {
		t.Fatal(err)
	}
	if code, _, h := b.do("GET", "/review", nil); code != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "session+has+ended") {
		t.Errorf("a session whose token was revoked = %d %s, want back to sign in", code, h.Get("Location"))
	}
	if code, _, _ := b.do("POST", "/review/"+itoa(e.held)+"/reject", url.Values{"csrf": {key}, "reason": {"no"}}); code != http.StatusUnauthorized {
		t.Errorf("a decision from a session whose token was revoked = %d, want 401", code)
	}
	req, _ := http.NewRequest("GET", e.url+"/api/v1/vault", nil)
	req.Header.Set("Authorization", "Bearer "+cookie)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the session's secret on the API after its token was revoked: %s, want 401", resp.Status)
	}

	// next stays on this site.
	for _, next := range []string{"//evil.example/x", "/\t/evil.example/x", "/\\evil.example", "https://evil.example/", "/%0a/evil"} {
		fresh := e.browser()
		_, _, h := fresh.do("POST", "/signin", url.Values{"token": {e.owner}, "next": {next}})
		if loc := h.Get("Location"); loc != "/" && loc != next {
			t.Errorf("next %q went to %q", next, loc)
		} else if strings.Contains(loc, "evil") && (strings.HasPrefix(loc, "//") || strings.ContainsAny(loc, "\t\\")) {
			t.Errorf("next %q went to %q", next, loc)
		}
	}
	// The rate: server.rate 1000, burst 2000 in this vault; set a tight one.
	if _, err := e.app.SetSetting(e.ctx, "server.burst", "3"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.SetSetting(e.ctx, "server.rate", "0.01"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // the limiter reads the policy every 2 s
	tight, _ := e.app.CreateToken(e.ctx, app.TokenRequest{Name: "tight", Scopes: []auth.Scope{auth.Read}})
	var limited bool
	for range 6 {
		fresh := e.browser()
		code, _, _ := fresh.do("POST", "/signin", url.Values{"token": {tight.Secret}})
		if code == http.StatusTooManyRequests {
			limited = true
			break
		}
		if code, _, _ := fresh.do("GET", "/", nil); code == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Errorf("signing in again and again with one token was never limited")
	}

	// A big or multipart sign-in is refused before it is read.
	anon := e.browser()
	req, _ = http.NewRequest("POST", e.url+"/signin", strings.NewReader("token="+strings.Repeat("a", 64<<10)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := anon.c.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 64 KiB sign-in = %s, want 413", resp.Status)
	}
	req, _ = http.NewRequest("POST", e.url+"/signin", strings.NewReader("--x--"))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	if resp, err := anon.c.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a multipart sign-in = %s, want 400", resp.Status)
	}
	// ?link= offers only a sign-in link.
	if _, body, _ := anon.do("GET", "/signin?link="+url.QueryEscape(e.reader), nil); strings.Contains(body, "use-link") {
		t.Errorf("the sign-in page offers a reader's token as a link")
	}
}

// TestUI_RenameAndContract checks that a rename is shown as one (the old
// path beside the new) and that cairn.yaml can be read as it is.
func TestUI_RenameAndContract(t *testing.T) {
	e := setup(t)
	head, err := e.app.ResolveCommit(e.ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	f, err := e.app.ReadFile(e.ctx, "main", "notes/evil.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Move(e.ctx, "notes/evil.md", "notes/wicked.md", f.Entry.Blob.String(), "rename"); err != nil {
		t.Fatalf("Move: %v", err)
	}
	b := e.browser()
	b.signIn(e.reader)
	code, body, _ := b.do("GET", "/compare?from="+head.Hash.String()+"&to=main", nil)
	if code != 200 || !strings.Contains(body, "<code>notes/evil.md</code> → <code>notes/wicked.md</code>") || !strings.Contains(body, "kind-renamed") {
		t.Errorf("a rename in the diff = %d:\n%s", code, body)
	}
	code, body, _ = b.do("GET", "/pages/cairn.yaml", nil)
	if code != 200 || !strings.Contains(body, "burst: 2000") {
		t.Errorf("cairn.yaml in the reader = %d:\n%s", code, body)
	}
}

// TestUI_ManyBacklinks: the reader of a page many others link to lists
// the first app.InspectBacklinks of them and says how many there are.
func TestUI_ManyBacklinks(t *testing.T) {
	e := setupIdle(t)
	head, err := e.app.ResolveCommit(e.ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	before, err := e.app.Backlinks(e.ctx, "notes/a.md", app.BacklinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var edits []app.FileEdit
	for i := range 130 {
		edits = append(edits, app.FileEdit{Path: fmt.Sprintf("many/n%03d.md", i), Content: []byte("[[notes/a|A]]")})
	}
	if res, err := e.app.CommitChanges(e.ctx, app.ChangesRequest{Base: head.Hash, Message: "links", Changes: edits}); err != nil || res.Commit == nil {
		t.Fatalf("CommitChanges = %+v, %v", res, err)
	}
	b := e.browser()
	b.signIn(e.reader)
	code, body, _ := b.do("GET", "/pages/notes/a.md", nil)
	_, section, _ := strings.Cut(body, "<h2>Backlinks</h2>")
	section, _, _ = strings.Cut(section, "</section>")
	total := before.Total + 130
	shown := strings.Count(section, "<li>")
	if code != 200 || shown != app.InspectBacklinks || !strings.Contains(section, fmt.Sprintf("The first %d of the %d links here are shown.", app.InspectBacklinks, total)) {
		t.Errorf("GET /pages/notes/a.md = %d, %d backlinks listed, want %d and a count of %d:\n%s", code, shown, app.InspectBacklinks, total, section)
	}
}

// TestUI_LintInParts: the lint page of a vault of more findings than it
// shows at once shows the first of them, the counts of them all and a
// link to the next; a place that is not a number is refused.
func TestUI_LintInParts(t *testing.T) {
	e := setupIdle(t)
	head, err := e.app.ResolveCommit(e.ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	var edits []app.FileEdit
	for i := range 600 {
		edits = append(edits, app.FileEdit{Path: fmt.Sprintf("orphans/o%03d.md", i), Content: []byte("Nobody links here.\n")})
	}
	if res, err := e.app.CommitChanges(e.ctx, app.ChangesRequest{Base: head.Hash, Message: "orphans", Changes: edits}); err != nil || res.Commit == nil {
		t.Fatalf("CommitChanges = %+v, %v", res, err)
	}
	whole, err := e.app.Lint(e.ctx, app.LintOptions{})
	if err != nil || whole.Total <= 500 {
		t.Fatalf("Lint() = %d findings, %v; want more than 500", whole.Total, err)
	}
	b := e.browser()
	b.signIn(e.reader)
	code, body, _ := b.do("GET", "/lint", nil)
	shown := strings.Count(body, `<span class="sev `)
	if code != 200 || shown != 500 || !strings.Contains(body, fmt.Sprintf("Findings 1 to 500 of %d.", whole.Total)) ||
		!strings.Contains(body, `href="/lint?from=500"`) || !strings.Contains(body, fmt.Sprintf("%d findings on main.", whole.Total)) {
		t.Fatalf("GET /lint = %d, %d findings shown; want the first 500 of %d and a link to the next:\n%s", code, shown, whole.Total, body)
	}
	// The last part: no link to a next one.
	last := (whole.Total - 1) / 500 * 500
	code, body, _ = b.do("GET", fmt.Sprintf("/lint?from=%d", last), nil)
	if shown := strings.Count(body, `<span class="sev `); code != 200 || shown != whole.Total-last ||
		!strings.Contains(body, fmt.Sprintf("Findings %d to %d of %d.", last+1, whole.Total, whole.Total)) || strings.Contains(body, "Next findings") {
		t.Errorf("GET /lint?from=%d = %d, %d findings shown; want the last %d and no next link", last, code, shown, whole.Total-last)
	}
	// One rule's findings: the link to the next part keeps to the rule.
	if code, body, _ := b.do("GET", "/lint?rule=orphan", nil); code != 200 || !strings.Contains(body, `href="/lint?rule=orphan&amp;from=500"`) {
		t.Errorf("GET /lint?rule=orphan = %d, without a link to the rule's next findings:\n%s", code, body)
	}
	// A part that is gone (its findings fixed since): the first part.
	if code, _, h := b.do("GET", "/lint?rule=orphan&from=100000", nil); code != http.StatusSeeOther || h.Get("Location") != "/lint?rule=orphan" {
		t.Errorf("GET /lint?rule=orphan&from=100000 = %d to %q, want 303 to /lint?rule=orphan", code, h.Get("Location"))
	}
	if code, _, _ := b.do("GET", "/lint?from=x", nil); code != http.StatusBadRequest {
		t.Errorf("GET /lint?from=x = %d, want 400", code)
	}
}

// TestUI_HistoryOfSlashedBranch: the history page's link to a branch
// whose name holds a slash leads to that branch (its name escaped once).
func TestUI_HistoryOfSlashedBranch(t *testing.T) {
	e := setupIdle(t)
	if _, err := e.app.CreateBranch(e.ctx, "agent/drafts", "main"); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.signIn(e.reader)
	code, body, _ := b.do("GET", "/history", nil)
	m := regexp.MustCompile(`href="(/history\?ref=agent[^"]*)"`).FindStringSubmatch(body)
	if code != 200 || m == nil {
		t.Fatalf("GET /history = %d, without a link to agent/drafts:\n%s", code, body)
	}
	link := html.UnescapeString(m[1])
	code, body, _ = b.do("GET", link, nil)
	if code != 200 || !strings.Contains(body, "agent/drafts") {
		t.Errorf("GET %s (the history page's link to agent/drafts) = %d:\n%s", link, code, body)
	}
}
