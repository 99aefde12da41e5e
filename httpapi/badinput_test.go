package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
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
		{"UnknownRoute", "GET", "/api/v2/vault", e.owner, "", nil, 404, cairn.ENOTFOUND},
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
