package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"cairn"
	"cairn/auth"
	"cairn/store"
)

// cairn is an OAuth 2.1 authorization server for its own MCP endpoint, so
// that hosted MCP clients that only speak OAuth can connect: a client
// registers itself (RFC 7591), a signed-in person grants it scopes on a
// consent page (authorization code with PKCE S256), and the code is
// exchanged for a cairn token with those scopes — listed by cairn token
// list and revoked like any other. There are no refresh tokens: a token
// lasts OAuthTokenLife, then the person grants again.

// OAuth's bounds.
const (
	// OAuthCodeLife is how long an authorization code may be exchanged.
	OAuthCodeLife = time.Minute
	// OAuthTokenLife is how long a token an OAuth client got lasts.
	OAuthTokenLife = "30d"
	// maxRedirectURIs bounds a client's redirect URIs.
	maxRedirectURIs = 5
)

// OAuthError is an OAuth error (RFC 6749 §4.1.2.1 and §5.2): Code is
// OAuth's ("invalid_request", "invalid_grant", …). Redirect says whether
// the client may be sent back to its redirect URI with it; when false
// (an unknown client, a redirect URI it did not register), the person is
// told on the page instead, never redirected.
type OAuthError struct {
	Code, Description string
	Redirect          bool
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

func oauthErr(code string, redirect bool, format string, args ...any) *OAuthError {
	return &OAuthError{Code: code, Description: fmt.Sprintf(format, args...), Redirect: redirect}
}

// OAuthClientRequest is a client's registration: the fields of RFC 7591
// cairn reads.
type OAuthClientRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	Name                    string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

// RegisterOAuthClient records a public OAuth client: one to five redirect
// URIs, each https or http on a loopback address, without a fragment;
// no client secret (token_endpoint_auth_method none); the authorization
// code grant. Anything else is an OAuthError invalid_client_metadata or
// invalid_redirect_uri.
func (a *App) RegisterOAuthClient(ctx context.Context, req OAuthClientRequest) (*auth.Client, error) {
	if m := req.TokenEndpointAuthMethod; m != "" && m != "none" {
		return nil, oauthErr("invalid_client_metadata", false, "token_endpoint_auth_method %q: this server registers public clients only (none)", m)
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return nil, oauthErr("invalid_client_metadata", false, "grant type %q is not supported: authorization_code is", g)
		}
	}
	for _, r := range req.ResponseTypes {
		if r != "code" {
			return nil, oauthErr("invalid_client_metadata", false, "response type %q is not supported: code is", r)
		}
	}
	if n := len(req.RedirectURIs); n == 0 || n > maxRedirectURIs {
		return nil, oauthErr("invalid_redirect_uri", false, "a client registers 1 to %d redirect URIs, not %d", maxRedirectURIs, n)
	}
	for _, u := range req.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return nil, err
		}
	}
	name := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, strings.TrimSpace(req.Name))
	if name == "" {
		name = "MCP client"
	}
	if r := []rune(name); len(r) > 100 {
		name = string(r[:100])
	}
	key := make([]byte, 12)
	rand.Read(key)
	c := &auth.Client{ID: "mcp-" + hex.EncodeToString(key), Name: name, RedirectURIs: slices.Clone(req.RedirectURIs), Created: a.now()}
	err := a.v.Store.Update(ctx, func(tx *store.Tx) error {
		return a.tokens.AddClient(ctx, tx.Backend(), c)
	})
	if err != nil {
		return nil, a.v.ExplainBusy(fmt.Errorf("register OAuth client: %w", err))
	}
	return c, nil
}

// checkRedirectURI reports what is wrong with a redirect URI.
func checkRedirectURI(s string) error {
	u, err := url.Parse(s)
	if err != nil || len(s) > 2000 || !u.IsAbs() || u.Host == "" || u.Fragment != "" || u.User != nil {
		return oauthErr("invalid_redirect_uri", false, "redirect URI %q is not an absolute URL without a fragment", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return oauthErr("invalid_redirect_uri", false, "redirect URI %q must be https, or http on a loopback address", s)
}

// AuthorizeRequest is an authorization request (RFC 6749 §4.1.1 with
// PKCE, RFC 7636).
type AuthorizeRequest struct {
	ResponseType, ClientID, RedirectURI, Scope, State string
	CodeChallenge, CodeChallengeMethod                string
}

// OAuthGrant is an authorization request checked: the client, where it
// goes back to, and the scopes the person may grant it.
type OAuthGrant struct {
	Client      *auth.Client
	RedirectURI string
	State       string
	Challenge   string
	// Scopes are those asked that the person's token holds: a person can
	// grant only what they may do.
	Scopes []auth.Scope
}

// CheckAuthorization checks an authorization request for the person in
// ctx (their session's token): the client is registered, the redirect
// URI is one it registered (exactly), the response type is code, and
// PKCE's challenge is S256 of 43 to 128 characters. Scopes default to
// read; those the person lacks are dropped, and asking only for those is
// access_denied. Errors are *OAuthError.
func (a *App) CheckAuthorization(ctx context.Context, req AuthorizeRequest) (*OAuthGrant, error) {
	c, err := a.tokens.Client(ctx, req.ClientID)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil, oauthErr("invalid_client", false, "the client %q is not registered here", req.ClientID)
	}
	if err != nil {
		return nil, err
	}
	if !slices.Contains(c.RedirectURIs, req.RedirectURI) {
		return nil, oauthErr("invalid_request", false, "the redirect URI %q is not one the client %s registered", req.RedirectURI, c.Name)
	}
	g := &OAuthGrant{Client: c, RedirectURI: req.RedirectURI, State: req.State, Challenge: req.CodeChallenge}
	switch {
	case req.ResponseType != "code":
		return nil, oauthErr("unsupported_response_type", true, "response_type must be code")
	case req.CodeChallengeMethod != "S256":
		return nil, oauthErr("invalid_request", true, "PKCE is required, with code_challenge_method S256")
	case !pkceValue(req.CodeChallenge):
		return nil, oauthErr("invalid_request", true, "the code_challenge is missing or malformed")
	}
	asked := strings.Fields(req.Scope)
	if len(asked) == 0 {
		asked = []string{string(auth.Read)}
	}
	t := auth.FromContext(ctx)
	if t == nil {
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "nobody is signed in to grant access").WithHint("Sign in first.")
	}
	for _, s := range auth.AllScopes() {
		if slices.Contains(asked, string(s)) && t.Has(s) {
			g.Scopes = append(g.Scopes, s)
		}
	}
	if len(g.Scopes) == 0 {
		return nil, oauthErr("access_denied", true, "you may grant none of the scopes asked (%s)", strings.Join(asked, " "))
	}
	return g, nil
}

// pkceValue reports whether s is a PKCE code verifier or S256 challenge:
// 43 to 128 characters of A-Z, a-z, 0-9 and - . _ ~.
func pkceValue(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c)) {
			return false
		}
	}
	return true
}

// GrantAuthorization makes a one-time authorization code for g with the
// scopes the person chose (a subset of g.Scopes; at least one), as the
// person in ctx. The code lasts OAuthCodeLife.
func (a *App) GrantAuthorization(ctx context.Context, g *OAuthGrant, scopes []auth.Scope) (string, error) {
	p, err := Principal(ctx)
	if err != nil {
		return "", err
	}
	var chosen []auth.Scope
	for _, s := range g.Scopes {
		if slices.Contains(scopes, s) {
			chosen = append(chosen, s)
		}
	}
	if len(chosen) == 0 {
		return "", cairn.Errorf(cairn.EINVALID, "no scope was chosen").WithHint("Choose at least one scope to grant, or deny.")
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	code := base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(code))
	c := &auth.Code{Hash: sum[:], Client: g.Client.ID, RedirectURI: g.RedirectURI, Challenge: g.Challenge,
		Principal: p, Scopes: chosen, Expires: a.now().Add(OAuthCodeLife)}
	err = a.v.Store.Update(ctx, func(tx *store.Tx) error {
		return a.tokens.AddCode(ctx, tx.Backend(), c)
	})
	if err != nil {
		return "", a.v.ExplainBusy(fmt.Errorf("grant authorization: %w", err))
	}
	return code, nil
}

// ExchangeOAuthCode exchanges an authorization code for a token (RFC 6749
// §4.1.3 with PKCE): the code is taken whatever follows, so it works
// once; it must be the client's, for the same redirect URI, unexpired,
// and S256 of the verifier must be its challenge. The token is a cairn
// token of the person who granted it, with the scopes granted, named
// oauth-CLIENT, lasting OAuthTokenLife. Errors are *OAuthError
// invalid_grant or invalid_request.
func (a *App) ExchangeOAuthCode(ctx context.Context, clientID, code, redirectURI, verifier string) (*NewToken, error) {
	if code == "" || clientID == "" || !pkceValue(verifier) {
		return nil, oauthErr("invalid_request", false, "code, client_id and a code_verifier of 43 to 128 characters are required")
	}
	sum := sha256.Sum256([]byte(code))
	var c *auth.Code
	err := a.v.Store.Update(ctx, func(tx *store.Tx) error {
		var err error
		c, err = a.tokens.TakeCode(ctx, tx.Backend(), sum[:])
		return err
	})
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil, oauthErr("invalid_grant", false, "the code is unknown or was used already")
	}
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	challenge := sha256.Sum256([]byte(verifier))
	switch {
	case !a.now().Before(c.Expires):
		return nil, oauthErr("invalid_grant", false, "the code expired")
	case c.Client != clientID || c.RedirectURI != redirectURI:
		return nil, oauthErr("invalid_grant", false, "the code was granted to another client or redirect URI")
	case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(challenge[:])), []byte(c.Challenge)) != 1:
		return nil, oauthErr("invalid_grant", false, "the code_verifier does not match the code_challenge")
	}
	by := cairn.NewContextWithPrincipal(ctx, c.Principal)
	return a.CreateToken(by, TokenRequest{Name: "oauth-" + clientID, Principal: c.Principal, Scopes: c.Scopes, Expires: OAuthTokenLife})
}

// RevokeOAuthToken revokes the token whose secret is secret, if it is one
// an OAuth client got (RFC 7009): anything else — an unknown token, a
// person's own — is left as it is, and no error says which.
func (a *App) RevokeOAuthToken(ctx context.Context, secret string) error {
	t, err := a.authorizer.Authenticate(ctx, secret)
	if err != nil || !strings.HasPrefix(t.Name, "oauth-") {
		return nil
	}
	_, err = a.RevokeToken(cairn.NewContextWithPrincipal(ctx, t.Principal), t.ID)
	return err
}
