package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cairn"
	"cairn/app"
	"cairn/auth"
	"cairn/httpapi"
)

// env is a vault served on a loopback port: its application layer, the
// server's URL, and secrets of tokens with every scope (owner) and with
// each one alone.
type env struct {
	t      *testing.T
	app    *app.App
	srv    *httpapi.Server
	url    string
	owner  string
	scoped map[auth.Scope]string // a token with every scope but the key
	ctx    context.Context       // user:owner acts
	stop   func()                // stops the server (Serve returns)
	opts   *serverOptions
	skew   *atomic.Int64 // nanoseconds the vault's clock is ahead of time.Now
}

// pages is the vault every test starts from.
var pages = map[string]string{
	"index.md":          "---\ntitle: Home\ntype: index\n---\n# Home\n\n- [[notes/a|A]]\n- [[notes/b|B]]\n",
	"notes/a.md":        "---\ntitle: A\ntype: note\n---\n# A\n\nThe printing press and [[notes/b|B]].\n",
	"notes/b.md":        "---\ntitle: B\ntype: note\n---\n# B\n\nMovable type. Back to [[notes/a|A]].\n",
	"notes/pixel.png":   "\x89PNG\x00\x01\x02\xff",
	"notes/deep/c.md":   "---\ntitle: C\ntype: note\n---\n# C\n\n[[index]]\n",
	"cairn.yaml":        "server:\n  rate: 1000\n  burst: 2000\n",
	"log.md":            "# Log\n",
	"summaries/keep.md": "---\ntitle: Keep\ntype: summary\n---\n[[index]]\n",
}

// serverOptions adjust setupWith.
type serverOptions struct {
	bodyTimeout, shutdown time.Duration
}

func setup(t *testing.T) *env { return setupWith(t, &serverOptions{}) }

func setupWith(t *testing.T, so *serverOptions) *env {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range pages {
		if c == "" {
			continue
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skew := &atomic.Int64{}
	a, err := app.Init(t.Context(), dir, false, &app.Options{Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("owner"))
	if res, err := a.Adopt(ctx, "start"); err != nil || res.Commit == nil {
		a.Close()
		t.Fatalf("Adopt = %+v, %v", res, err)
	}
	e := &env{t: t, app: a, ctx: ctx, scoped: map[auth.Scope]string{}, opts: so, skew: skew}
	e.owner = e.token("owner", auth.AllScopes()...)
	for _, missing := range auth.AllScopes() {
		var sc []auth.Scope
		for _, s := range auth.AllScopes() {
			if s != missing {
				sc = append(sc, s)
			}
		}
		e.scoped[missing] = e.token("no-"+string(missing), sc...)
	}
	e.serve()
	t.Cleanup(func() {
		e.stop()
		a.Close()
	})
	return e
}

// serve starts a server of the vault on a new loopback port.
func (e *env) serve() {
	e.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	e.srv = httpapi.New(e.app, &httpapi.Options{MaxBody: 2 << 20, ReadTimeout: 10 * time.Second, BodyTimeout: e.opts.bodyTimeout, ShutdownTimeout: e.opts.shutdown})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx, ln) }()
	e.url = "http://" + ln.Addr().String()
	e.stop = func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("Serve = %v, want nil after a graceful stop", err)
		}
	}
}

// token makes a token of user:name with scopes and returns its secret.
func (e *env) token(name string, scopes ...auth.Scope) string {
	e.t.Helper()
	nt, err := e.app.CreateToken(e.ctx, app.TokenRequest{Name: name, Scopes: scopes})
	if err != nil {
		e.t.Fatal(err)
	}
	return nt.Secret
}

// client returns a client of the server acting with the owner's token.
func (e *env) client() *httpapi.Client {
	e.t.Helper()
	c, err := httpapi.NewClient(e.url, e.owner)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// do sends a request with the secret (none when "") and the header pairs
// (a "Host" pair sets the request's host), and returns the status, the
// body and the answer's header.
func (e *env) do(method, path, secret, contentType string, body io.Reader, header ...string) (int, []byte, http.Header) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

// problem decodes a problem body, failing the test when it is not one.
func problem(t *testing.T, what string, data []byte) *httpapi.Problem {
	t.Helper()
	var p httpapi.Problem
	if err := json.Unmarshal(data, &p); err != nil || p.Code == "" || p.Status == 0 || p.Detail == "" {
		t.Fatalf("%s: body %q is not a problem with a code and a detail (%v)", what, data, err)
	}
	return &p
}

// head returns main's head.
func (e *env) head() cairn.Hash {
	e.t.Helper()
	c, err := e.app.ResolveCommit(e.t.Context(), "main")
	if err != nil {
		e.t.Fatal(err)
	}
	return c.Hash
}

func TestServer_Health(t *testing.T) {
	e := setup(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		code, body, h := e.do(http.MethodGet, path, "", "", nil)
		if code != http.StatusOK || h.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s = %d %s, want 200 JSON", path, code, h.Get("Content-Type"))
		}
		if strings.Contains(string(body), e.app.Root()) || strings.Contains(string(body), "main") {
			t.Errorf("GET %s = %s: it holds vault data", path, body)
		}
	}
	e.stop()
	e.stop = func() {}
	if _, err := http.Get(e.url + "/readyz"); err == nil {
		t.Errorf("GET /readyz after the server stopped answered")
	}
}
