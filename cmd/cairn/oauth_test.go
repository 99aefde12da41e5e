package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
