package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

// snapshot is what a refused request must leave as it was.
type snapshot struct {
	head   cairn.Hash
	event  int64
	tokens int
}

func (e *env) snapshot() snapshot {
	e.t.Helper()
	last, err := e.app.LastEvent(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	ts, err := e.app.Tokens(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return snapshot{head: e.head(), event: last, tokens: len(ts)}
}

// hugeCursor is a cursor naming an offset past every bound.
var hugeCursor = base64.RawURLEncoding.EncodeToString([]byte("o9223372036854775800"))

// TestServer_BadInput sends each kind of bad request: each gets its own
// status and problem code, with a hint, and changes nothing.
func TestServer_BadInput(t *testing.T) {
	e := setup(t)
	base := `"` + e.head().String() + `"`
	ifMatch := []string{"If-Match", base}
	changes := func(edits string) string { return `{"message":"m","changes":[` + edits + `]}` }
	brief, err := e.app.CreateToken(e.ctx, app.TokenRequest{Name: "brief", Scopes: auth.AllScopes(), Expires: "1m"})
	if err != nil {
		t.Fatal(err)
	}
	revoked := e.token("gone", auth.AllScopes()...)
	for _, tok := range mustTokens(t, e) {
		if tok.Name == "gone" {
			if _, err := e.app.RevokeToken(e.ctx, tok.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name, method, path, secret, body string
		header                           []string
		status                           int
		code                             string
	}{
		{"MalformedJSON", "POST", "/api/v1/changes", e.owner, `{"message": "m", "changes": [`, ifMatch, 400, "malformed"},
		{"UnknownField", "POST", "/api/v1/changes", e.owner, `{"message":"m","changes":[{"path":"x.md","content":"x"}],"colour":"red"}`, ifMatch, 422, "unprocessable"},
		{"UnknownFieldInEdit", "POST", "/api/v1/changes", e.owner, changes(`{"path":"x.md","content":"x","mode":7}`), ifMatch, 422, "unprocessable"},
		{"WrongType", "POST", "/api/v1/changes", e.owner, `{"message":5,"changes":[{"path":"x.md","content":"x"}]}`, ifMatch, 422, "unprocessable"},
		{"NoChanges", "POST", "/api/v1/changes", e.owner, `{"message":"m","changes":[]}`, ifMatch, 422, "unprocessable"},
		{"UnknownQuery", "GET", "/api/v1/files?path=index.md&colour=red", e.owner, "", nil, 422, "unprocessable"},
		{"TooLarge", "POST", "/api/v1/changes", e.owner, changes(`{"path":"big.md","content":"` + strings.Repeat("x", 3<<20) + `"}`), ifMatch, 413, "too_large"},
		{"TooLargeSmallRoute", "POST", "/api/v1/merge", e.owner, `{"branch":"` + strings.Repeat("x", 2<<20) + `"}`, nil, 413, "too_large"},
		{"DotDot", "POST", "/api/v1/changes", e.owner, changes(`{"path":"../escape.md","content":"x"}`), ifMatch, 400, cairn.EINVALID},
		{"Absolute", "POST", "/api/v1/changes", e.owner, changes(`{"path":"/etc/passwd","content":"x"}`), ifMatch, 400, cairn.EINVALID},
		{"NUL", "POST", "/api/v1/changes", e.owner, changes(`{"path":"a\u0000b.md","content":"x"}`), ifMatch, 400, cairn.EINVALID},
		{"TwoContents", "POST", "/api/v1/changes", e.owner, changes(`{"path":"x.md","content":"x","content_base64":"eA=="}`), ifMatch, 400, cairn.EINVALID},
		{"BadBase64", "POST", "/api/v1/changes", e.owner, changes(`{"path":"x.md","content_base64":"!!"}`), ifMatch, 400, cairn.EINVALID},
		{"DeleteMissing", "POST", "/api/v1/changes", e.owner, changes(`{"path":"nope.md","delete":true}`), ifMatch, 404, cairn.ENOTFOUND},
		{"NoIfMatch", "POST", "/api/v1/changes", e.owner, changes(`{"path":"x.md","content":"x"}`), nil, 428, "precondition_required"},
		{"BadIfMatch", "POST", "/api/v1/changes", e.owner, changes(`{"path":"x.md","content":"x"}`), []string{"If-Match", `"12ab"`}, 400, cairn.EINVALID},
		{"StaleIfMatch", "POST", "/api/v1/changes", e.owner, changes(`{"path":"x.md","content":"x"}`), []string{"If-Match", `"` + strings.Repeat("ab", 32) + `"`}, 409, cairn.ECONFLICT},
		{"MissingPage", "GET", "/api/v1/files?path=nope.md", e.owner, "", nil, 404, cairn.ENOTFOUND},
		{"MissingLinkPage", "GET", "/api/v1/links?page=nowhere", e.owner, "", nil, 404, cairn.ENOTFOUND},
		{"MissingBacklinkPage", "GET", "/api/v1/backlinks?page=nowhere", e.owner, "", nil, 404, cairn.ENOTFOUND},
		{"BadBacklinkCursor", "GET", "/api/v1/backlinks?page=index&cursor=zz", e.owner, "", nil, 400, cairn.EINVALID},
		{"TooManyBacklinks", "GET", "/api/v1/backlinks?page=index&limit=10001", e.owner, "", nil, 422, "unprocessable"},
		{"BadLintCursor", "GET", "/api/v1/lint?cursor=zz", e.owner, "", nil, 400, cairn.EINVALID},
		{"TooManyFindings", "GET", "/api/v1/lint?limit=10001", e.owner, "", nil, 422, "unprocessable"},
		{"BadSourceCursor", "GET", "/api/v1/sources?cursor=zz", e.owner, "", nil, 400, cairn.EINVALID},
		{"TooManySources", "GET", "/api/v1/sources?limit=10001", e.owner, "", nil, 422, "unprocessable"},
		{"BadPath", "GET", "/api/v1/files?path=../x", e.owner, "", nil, 400, cairn.EINVALID},
		{"UnknownRef", "GET", "/api/v1/files?ref=nobranch&path=index.md", e.owner, "", nil, 404, cairn.ENOTFOUND},
		{"MalformedRef", "GET", "/api/v1/log?ref=main~x", e.owner, "", nil, 400, cairn.EINVALID},
		{"PastFirstCommit", "GET", "/api/v1/log?ref=main~9", e.owner, "", nil, 404, cairn.ENOTFOUND},
		{"BadProposalID", "GET", "/api/v1/proposals/x", e.owner, "", nil, 422, "unprocessable"},
		{"NoToken", "GET", "/api/v1/vault", "", "", nil, 401, cairn.EUNAUTHORIZED},
		{"NotBearer", "GET", "/api/v1/vault", "", "", []string{"Authorization", "Basic b3duZXI6eA=="}, 401, cairn.EUNAUTHORIZED},
		{"UnknownToken", "GET", "/api/v1/vault", "cairn_0123456789ab_" + strings.Repeat("A", 43), "", nil, 401, cairn.EUNAUTHORIZED},
		{"MalformedToken", "GET", "/api/v1/vault", "hunter2", "", nil, 401, cairn.EUNAUTHORIZED},
		{"RevokedToken", "GET", "/api/v1/vault", revoked, "", nil, 401, cairn.EUNAUTHORIZED},
		{"ExpiredToken", "GET", "/api/v1/vault", brief.Secret, "", nil, 401, cairn.EUNAUTHORIZED},
		{"MissingScope", "POST", "/api/v1/changes", e.scoped[auth.Propose], changes(`{"path":"x.md","content":"x"}`), ifMatch, 403, cairn.EFORBIDDEN},
		{"BadTokenRequest", "POST", "/api/v1/tokens", e.owner, `{"name":"a b","scopes":["read"]}`, nil, 400, cairn.EINVALID},
		{"BadScope", "POST", "/api/v1/tokens", e.owner, `{"name":"x","scopes":["root"]}`, nil, 400, cairn.EINVALID},
		{"BadSetting", "PUT", "/api/v1/settings/agent.colour", e.owner, `{"value":"red"}`, nil, 400, cairn.EINVALID},
		{"OtherHost", "GET", "/api/v1/vault", e.owner, "", []string{"Host", "evil.example:80"}, 421, "misdirected"},
		{"ContractWithoutAdmin", "POST", "/api/v1/changes", e.scoped[auth.Admin], changes(`{"path":"cairn.yaml","content":"agent:\n  runtime: command\n  command: cat /etc/passwd\n"}`), ifMatch, 403, cairn.EFORBIDDEN},
		{"AgentsFileWithoutAdmin", "POST", "/api/v1/changes", e.scoped[auth.Admin], changes(`{"path":"AGENTS.md","content":"Obey the source."}`), ifMatch, 403, cairn.EFORBIDDEN},
		{"HugeCursor", "GET", "/api/v1/search?q=movable&cursor=" + hugeCursor, e.owner, "", nil, 400, cairn.EINVALID},
		{"HugeLogCursor", "GET", "/api/v1/log?cursor=" + hugeCursor, e.owner, "", nil, 400, cairn.EINVALID},
		{"RelativeTree", "POST", "/api/v1/worktree", e.owner, `{"path":"../elsewhere"}`, nil, 400, cairn.EINVALID},
		{"TreeOutside", "GET", "/api/v1/status?tree=/etc", e.owner, "", nil, 404, cairn.ENOTFOUND},
		{"UnknownRoute", "GET", "/api/v2/vault", e.owner, "", nil, 404, cairn.ENOTFOUND},
		{"WrongMethod", "PATCH", "/api/v1/vault", e.owner, "", nil, 405, "method_not_allowed"},
		{"LongUnknownField", "POST", "/api/v1/merge", e.owner, `{"branch":"x","` + strings.Repeat("k", 100_000) + `":1}`, nil, 422, "unprocessable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "ExpiredToken" {
				// The token worked until its minute was up.
				if code, data, _ := e.do(tc.method, tc.path, tc.secret, "", nil); code != http.StatusOK {
					t.Fatalf("the token before it expired = %d %s", code, data)
				}
				e.skew.Store(int64(2 * time.Minute))
				defer e.skew.Store(0)
			}
			before := e.snapshot()
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			code, data, h := e.do(tc.method, tc.path, tc.secret, "application/json", body, tc.header...)
			p := problem(t, tc.name, data)
			if code != tc.status || p.Status != tc.status || p.Code != tc.code {
				t.Fatalf("%s %s = %d %s (code %s), want %d %s", tc.method, tc.path, code, p.Detail, p.Code, tc.status, tc.code)
			}
			if p.Hint == "" && tc.code != cairn.ENOTFOUND {
				t.Errorf("%s: the problem has no hint: %+v", tc.name, p)
			}
			if len(data) > 4096 {
				t.Errorf("%s: the problem is %d bytes; it echoes too much of the request", tc.name, len(data))
			}
			if tc.status == 401 && h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
			}
			if after := e.snapshot(); after != before {
				t.Errorf("%s changed the vault: %+v, then %+v", tc.name, before, after)
			}
		})
	}
}

func mustTokens(t *testing.T, e *env) []*auth.Token {
	t.Helper()
	ts, err := e.app.Tokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestServer_SlowBody: a client that sends its headers and part of its
// body, then nothing, gets 408 once the body timeout passes, and the
// server goes on answering others.
func TestServer_SlowBody(t *testing.T) {
	e := setupWith(t, &serverOptions{bodyTimeout: time.Second})
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/merge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"branch\":", e.owner)
	before := e.snapshot()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer to a body that never ends: %v", err)
	}
	data, _ := io.ReadAll(resp.Body)
	if p := problem(t, "a slow body", data); resp.StatusCode != http.StatusRequestTimeout || p.Code != "timeout" {
		t.Errorf("a body that never ends = %d %+v, want 408 timeout", resp.StatusCode, p)
	}
	if code, _, _ := e.do(http.MethodGet, "/api/v1/vault", e.owner, "", nil); code != 200 {
		t.Errorf("after a slow client, GET /api/v1/vault = %d", code)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("a slow body changed the vault")
	}
}

// TestServer_RateLimit: a token that sends more than server.rate allows
// gets 429 with Retry-After; another token is not slowed.
func TestServer_RateLimit(t *testing.T) {
	e := setup(t)
	for key, v := range map[string]string{"server.rate": "1", "server.burst": "3"} {
		if _, err := e.app.SetSetting(e.ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	e.stop()
	e.serve() // a new server reads the policy at once
	limited := 0
	for range 8 {
		code, data, h := e.do(http.MethodGet, "/api/v1/vault", e.owner, "", nil)
		if code == http.StatusTooManyRequests {
			limited++
			p := problem(t, "rate limited", data)
			if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 || p.Code != "rate_limited" {
				t.Errorf("429 with Retry-After %q and %+v, want a whole number of seconds and rate_limited", h.Get("Retry-After"), p)
			}
		}
	}
	if limited < 4 {
		t.Errorf("%d of 8 requests at once with a burst of 3 were limited, want at least 4", limited)
	}
	if code, _, _ := e.do(http.MethodGet, "/api/v1/vault", e.scoped[auth.Admin], "", nil); code != 200 {
		t.Errorf("another token = %d, want 200: buckets are per token", code)
	}
}

// TestServer_UploadTooLarge: an upload past --max-body is refused with
// 413 whether it says its length or not, and nothing is stored.
func TestServer_UploadTooLarge(t *testing.T) {
	e := setup(t) // MaxBody 2 MiB
	for _, chunked := range []bool{false, true} {
		before := e.snapshot()
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		w, _ := mw.CreateFormFile("file", "big.md")
		w.Write(bytes.Repeat([]byte("paper mills "), 300_000)) // 3.6 MB
		mw.Close()
		var body io.Reader = &buf
		if chunked {
			body = io.MultiReader(&buf) // no length: sent chunked
		}
		code, data, _ := e.do(http.MethodPost, "/api/v1/sources", e.owner, mw.FormDataContentType(), body)
		if p := problem(t, "a big upload", data); code != http.StatusRequestEntityTooLarge || p.Code != "too_large" {
			t.Errorf("upload of 3.6 MB (chunked %v) = %d %+v, want 413 too_large", chunked, code, p)
		}
		if after := e.snapshot(); after != before {
			t.Errorf("a refused upload changed the vault")
		}
	}
}

// TestServer_ReviewContract: a reviewer whose token lacks admin cannot
// accept or recheck a held change to the vault's contract; one with admin
// can.
func TestServer_ReviewContract(t *testing.T) {
	e := setup(t)
	res, err := e.app.ProposeChanges(e.ctx, app.ChangesRequest{Base: e.head(), Message: "faster",
		Changes: []app.FileEdit{{Path: "cairn.yaml", Content: []byte("server:\n  rate: 5000\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Admission.Proposal.ID
	reviewer := e.token("reviewer", auth.Read, auth.Review)
	for _, what := range []string{"accept", "recheck"} {
		code, data, _ := e.do(http.MethodPost, fmt.Sprintf("/api/v1/proposals/%d/%s", id, what), reviewer, "application/json", strings.NewReader("{}"))
		if p := problem(t, what, data); code != http.StatusForbidden || p.Code != cairn.EFORBIDDEN {
			t.Errorf("%s of a contract change without admin = %d %+v, want 403", what, code, p)
		}
	}
	code, data, _ := e.do(http.MethodPost, fmt.Sprintf("/api/v1/proposals/%d/accept", id), e.owner, "application/json", strings.NewReader("{}"))
	if code != http.StatusOK {
		t.Errorf("accept of a contract change with admin = %d %s", code, data)
	}
}

// TestServer_AuditRefused: a change refused for its token (no token, a
// scope missing) is audited with the status it got.
func TestServer_AuditRefused(t *testing.T) {
	e := setup(t)
	e.do(http.MethodPost, "/api/v1/gc", e.scoped[auth.Admin], "application/json", strings.NewReader("{}"))
	e.do(http.MethodPost, "/api/v1/gc", "", "application/json", strings.NewReader("{}"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rs, err := e.app.AuditedRequests(t.Context(), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, fmt.Sprintf("%s %d %q", r.Route, r.Status, r.Principal))
		}
		want := []string{`POST /api/v1/gc 403 "user:no-admin"`, `POST /api/v1/gc 401 ""`}
		if strings.Join(got, ",") == strings.Join(want, ",") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit = %q, want %q", got, want)
		}
	}
}

// TestServer_ForcedStop: a request whose body never ends past the
// shutdown timeout is cut short; the server stops, Serve returns nil, and
// nothing panics.
func TestServer_ForcedStop(t *testing.T) {
	e := setupWith(t, &serverOptions{bodyTimeout: time.Minute, shutdown: 500 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/merge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"branch\":", e.owner)
	for deadline := time.Now().Add(10 * time.Second); e.srv.Busy() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
	}
	e.stop() // fails the test if Serve does not return nil
	e.stop = func() {}
	if n := e.srv.Busy(); n != 0 {
		t.Errorf("after the forced stop %d requests are still being answered", n)
	}
}

// TestServer_ProposalTamper: a held proposal's branch is not a token's to
// change without admin; a recheck keeps a change proposed for review held;
// and no branch can be made in the proposals' namespace.
func TestServer_ProposalTamper(t *testing.T) {
	e := setup(t)
	res, err := e.app.ProposeChanges(e.ctx, app.ChangesRequest{Base: e.head(), Message: "for review",
		Changes: []app.FileEdit{{Path: "notes/p.md", Content: []byte("---\ntitle: P\ntype: note\n---\n[[index]]\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Admission.Proposal.ID
	branch := fmt.Sprintf("proposals/%d", id)
	_, data, h := e.do(http.MethodGet, "/api/v1/branch?name="+branch, e.owner, "", nil)
	if h.Get("ETag") == "" {
		t.Fatalf("GET /branch?name=%s: %s", branch, data)
	}
	before := e.snapshot()
	body := fmt.Sprintf(`{"branch":%q,"message":"sneak","changes":[{"path":"notes/p.md","content":"EVIL"}]}`, branch)
	code, data, _ := e.do(http.MethodPost, "/api/v1/changes", e.scoped[auth.Admin], "application/json", strings.NewReader(body), "If-Match", h.Get("ETag"))
	if p := problem(t, "tamper", data); code != http.StatusForbidden || p.Code != cairn.EFORBIDDEN {
		t.Errorf("a changeset to %s without admin = %d %+v, want 403", branch, code, p)
	}
	if after := e.snapshot(); after.head != before.head {
		t.Errorf("the refused changeset moved main")
	}
	code, data, _ = e.do(http.MethodPost, fmt.Sprintf("/api/v1/proposals/%d/recheck", id), e.owner, "application/json", strings.NewReader("{}"))
	var d struct {
		Proposal struct{ Status string }
	}
	json.Unmarshal(data, &d)
	if code != http.StatusOK || d.Proposal.Status != "held" {
		t.Errorf("recheck of a change proposed for review = %d %s, want it still held", code, data)
	}
	code, data, _ = e.do(http.MethodPost, "/api/v1/branches", e.owner, "application/json", strings.NewReader(`{"name":"proposals/999"}`))
	if p := problem(t, "reserved", data); code != http.StatusBadRequest || p.Code != cairn.EINVALID {
		t.Errorf("making the branch proposals/999 = %d %+v, want 400", code, p)
	}
	for _, name := range []string{"HEAD", "refs/heads/x", "-x"} {
		code, _, _ = e.do(http.MethodPost, "/api/v1/branches", e.owner, "application/json", strings.NewReader(fmt.Sprintf(`{"name":%q}`, name)))
		if code != http.StatusBadRequest {
			t.Errorf("making the branch %q = %d, want 400", name, code)
		}
	}
}

// TestServer_SearchBounds: a search of more than 32 words or 1000 bytes is
// refused at once; one that repeats a word counts it once.
func TestServer_SearchBounds(t *testing.T) {
	e := setup(t)
	for _, q := range []string{strings.Repeat("zebra ", 200), strings.Repeat("w", 1001)} {
		code, data, _ := e.do(http.MethodGet, "/api/v1/search?q="+url.QueryEscape(q), e.owner, "", nil)
		if p := problem(t, "a long search", data); code != http.StatusBadRequest || p.Code != cairn.EINVALID {
			t.Errorf("a search of %d bytes = %d %+v, want 400", len(q), code, p)
		}
	}
	code, data, _ := e.do(http.MethodGet, "/api/v1/search?q="+url.QueryEscape(strings.Repeat("movable ", 40)), e.owner, "", nil)
	if code != http.StatusOK {
		t.Errorf("a search repeating one word 40 times = %d %s, want 200", code, data)
	}
}
