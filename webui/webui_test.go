package webui_test

import (
	"context"
	"io"
	"log/slog"
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
	ui, err := webui.New(a, &webui.Options{Version: "test", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
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
		{"/review/" + itoa(e.held), []string{"deleted", "notes/b.md", "Accept", "Reject", `class="del"`}},
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
