package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// consentForm reads the consent page's form fields.
func consentForm(page string) url.Values {
	v := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		v.Set(m[1], htmlUnescape(m[2]))
	}
	for _, m := range regexp.MustCompile(`<input type="checkbox" name="grant" value="([^"]+)" checked>`).FindAllStringSubmatch(page, -1) {
		v.Add("grant", m[1])
	}
	return v
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

// TestServe_OAuth connects a go-sdk MCP client that speaks only OAuth to
// cairn serve's /mcp: it finds the authorization server from the
// protected-resource metadata, registers itself, sends the person to the
// consent page (signed in to the web interface, who grants read), gets a
// code with PKCE and exchanges it for a token, and calls a tool. The
// token is a cairn token, listed and revoked like any other; revoked, the
// client is refused. A wrong redirect URI or a reused code gets nothing.
func TestServe_OAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n\n[[press]]\n", "press.md": "---\ntitle: Press\ntype: note\n---\n# Press\n\nMovable type.\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault)
	defer s.stop(syscall.SIGTERM)
	browser := webSession(t, s)
	browser.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	const redirect = "http://127.0.0.1:9/callback" // the hosted client's, never reached
	var consented string
	var lastCode string
	fetch := func(ctx context.Context, args *mcpauth.AuthorizationArgs) (*mcpauth.AuthorizationResult, error) {
		// The person, signed in, opens the authorization URL and allows.
		resp, err := browser.Get(args.URL)
		if err != nil {
			return nil, err
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(page), `id="allow"`) {
			return nil, fmt.Errorf("consent page: %d\n%s", resp.StatusCode, page)
		}
		consented = string(page)
		form := consentForm(consented)
		form.Set("decision", "allow")
		resp, err = browser.PostForm(s.file.URL+"/oauth/authorize", form)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc.String(), redirect) {
			return nil, fmt.Errorf("after allowing: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		q := loc.Query()
		if q.Get("error") != "" {
			return nil, fmt.Errorf("authorization refused: %s %s", q.Get("error"), q.Get("error_description"))
		}
		lastCode = q.Get("code")
		return &mcpauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
	handler, err := mcpauth.NewAuthorizationCodeHandler(&mcpauth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &mcpauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "Hosted Assistant", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"},
		}},
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "hosted", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.file.URL + "/mcp", OAuthHandler: handler}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "movable"}})
	if err != nil || res.IsError {
		t.Fatalf("search through the OAuth token: %+v, %v", res, err)
	}
	cs.Close()
	if !strings.Contains(consented, "Hosted Assistant") || !strings.Contains(consented, "127.0.0.1:9") {
		t.Errorf("the consent page does not name the client and where it goes back:\n%s", consented)
	}

	// The token is a cairn token of the person who granted it.
	r := run(t, vault, nil, "token", "list", "--json")
	m := regexp.MustCompile(`"id": "([0-9a-f]+)",\s*"name": "oauth-mcp-[0-9a-f]+"`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no oauth token in cairn token list:\n%s", r.stdout)
	}
	// A code works once.
	resp, err := http.PostForm(s.file.URL+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {lastCode},
		"client_id": {"whoever"}, "redirect_uri": {redirect}, "code_verifier": {strings.Repeat("a", 43)}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "invalid_grant") {
		t.Errorf("a code used again = %d %s, want 400 invalid_grant", resp.StatusCode, body)
	}
	// Revoked, the client is refused.
	must(t, run(t, vault, nil, "token", "revoke", m[1]), "token revoke")
	cs2, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.file.URL + "/mcp", OAuthHandler: mcpauthStatic(t, handler, ctx)}, nil)
	if err == nil {
		_, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "movable"}})
		cs2.Close()
	}
	if err == nil {
		t.Errorf("the revoked token still reaches the tools")
	}
}

// mcpauthStatic is an OAuth handler that only has the token handler got,
// and cannot authorize again: what a client holding a revoked token is.
func mcpauthStatic(t *testing.T, h *mcpauth.AuthorizationCodeHandler, ctx context.Context) mcpauth.OAuthHandler {
	ts, err := h.TokenSource(ctx)
	if err != nil || ts == nil {
		t.Fatalf("the handler's token source: %v", err)
	}
	return staticHandler{ts}
}

// staticHandler gives one token source and never authorizes again.
type staticHandler struct{ ts oauth2.TokenSource }

func (h staticHandler) TokenSource(context.Context) (oauth2.TokenSource, error) { return h.ts, nil }

func (h staticHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	return fmt.Errorf("refused: %s", resp.Status)
}

// TestServe_OneTimeRace races what must work once against a running cairn
// serve, over many rounds: 16 clients exchange one authorization code at
// once, and exactly one gets a token; 16 browsers use the printed sign-in
// link at once, and exactly one gets a session.
func TestServe_OneTimeRace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a server")
	}
	vault := filepath.Join(t.TempDir(), "vault")
	writeFiles(t, vault, map[string]string{"index.md": "# Home\n"})
	must(t, run(t, vault, nil, "init"), "init")
	s := startServe(t, vault)
	defer s.stop(syscall.SIGTERM)
	link := signInLink(t, s)

	race := func(n int, do func() int) map[int]int {
		codes := make(chan int, n)
		start := make(chan struct{})
		for range n {
			go func() { <-start; codes <- do() }()
		}
		close(start)
		got := map[int]int{}
		for range n {
			got[<-codes]++
		}
		return got
	}
	got := race(16, func() int {
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
			PostForm(s.file.URL+"/signin", url.Values{"token": {link}})
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	})
	if got[http.StatusSeeOther] != 1 || got[http.StatusUnauthorized] != 15 {
		t.Errorf("16 sign-ins with one link at once: %v, want one 303 and fifteen 401", got)
	}

	// The link is spent: the owner signs in with the server's token.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := browser.PostForm(s.file.URL+"/signin", url.Values{"token": {s.file.Token}}); err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with the owner's token: %v %v", resp, err)
	}
	const redirect = "http://127.0.0.1:9/cb"
	resp, err := http.Post(s.file.URL+"/oauth/register", "application/json", strings.NewReader(`{"redirect_uris": ["`+redirect+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var client struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&client)
	resp.Body.Close()
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	for round := range 10 {
		q := url.Values{"response_type": {"code"}, "client_id": {client.ClientID}, "redirect_uri": {redirect},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"s"}, "scope": {"read"}}
		resp, err := browser.Get(s.file.URL + "/oauth/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		form := consentForm(string(page))
		form.Set("decision", "allow")
		resp, err = browser.PostForm(s.file.URL+"/oauth/authorize", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		code := loc.Query().Get("code")
		if code == "" {
			t.Fatalf("round %d: no code: %s", round, resp.Header.Get("Location"))
		}
		got := race(16, func() int {
			resp, err := http.PostForm(s.file.URL+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
				"client_id": {client.ClientID}, "redirect_uri": {redirect}, "code_verifier": {verifier}})
			if err != nil {
				return -1
			}
			resp.Body.Close()
			return resp.StatusCode
		})
		if got[200] != 1 || got[400] != 15 {
			t.Fatalf("round %d: 16 exchanges of one code at once: %v, want one 200 and fifteen 400", round, got)
		}
	}
}
