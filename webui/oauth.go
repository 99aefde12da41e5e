package webui

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

// OAuth's endpoints, which hosted MCP clients reach without a session.
const (
	oauthMetadataPath = "/.well-known/oauth-authorization-server"
	oauthRegisterPath = "/oauth/register"
	oauthTokenPath    = "/oauth/token"
	oauthRevokePath   = "/oauth/revoke"
	oauthAuthorize    = "/oauth/authorize"
)

// oauthRoutes registers cairn's authorization server for its MCP
// endpoint (see app/oauth.go): its metadata (RFC 8414), client
// registration (RFC 7591), the consent page a signed-in person grants on,
// the token endpoint and revocation (RFC 7009). The endpoints a client
// calls itself carry no cookie authority, so they skip the cross-site
// check and answer any origin.
func (u *UI) oauthRoutes(cop *http.CrossOriginProtection) {
	for _, p := range []string{oauthRegisterPath, oauthTokenPath, oauthRevokePath} {
		cop.AddInsecureBypassPattern("POST " + p)
		u.mux.HandleFunc("OPTIONS "+p, preflight)
	}
	u.mux.HandleFunc("GET "+oauthMetadataPath, u.oauthMetadata)
	u.mux.HandleFunc("POST "+oauthRegisterPath, u.oauthRegister)
	u.mux.HandleFunc("POST "+oauthTokenPath, u.oauthToken)
	u.mux.HandleFunc("POST "+oauthRevokePath, u.oauthRevoke)
	u.handle("GET "+oauthAuthorize, auth.Read, u.consent)
	u.handle("POST "+oauthAuthorize, auth.Read, u.authorize)
}

// issuer is the authorization server's identifier: this server's origin.
func issuer(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// cors lets a client of any origin read an answer that carries no cookie
// authority.
func cors(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "no-store")
}

func preflight(w http.ResponseWriter, r *http.Request) {
	cors(w)
	w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
	w.WriteHeader(http.StatusNoContent)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	cors(w)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// oauthFail answers an OAuth error as JSON (RFC 6749 §5.2).
func (u *UI) oauthFail(w http.ResponseWriter, r *http.Request, err error) {
	var oe *app.OAuthError
	if errors.As(err, &oe) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": oe.Code, "error_description": oe.Description})
		return
	}
	u.opts.Logger.Error("web interface: oauth", "path", r.URL.Path, "err", err)
	writeJSON(w, status(err), map[string]string{"error": "server_error", "error_description": err.Error()})
}

// oauthMetadata serves the authorization server's metadata.
func (u *UI) oauthMetadata(w http.ResponseWriter, r *http.Request) {
	iss := issuer(r)
	var scopes []string
	for _, s := range auth.AllScopes() {
		scopes = append(scopes, string(s))
	}
	writeJSON(w, http.StatusOK, &oauthex.AuthServerMeta{
		Issuer:                                     iss,
		AuthorizationEndpoint:                      iss + oauthAuthorize,
		TokenEndpoint:                              iss + oauthTokenPath,
		RegistrationEndpoint:                       iss + oauthRegisterPath,
		RevocationEndpoint:                         iss + oauthRevokePath,
		ScopesSupported:                            scopes,
		ResponseTypesSupported:                     []string{"code"},
		GrantTypesSupported:                        []string{"authorization_code"},
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		RevocationEndpointAuthMethodsSupported:     []string{"none"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		AuthorizationResponseIssParameterSupported: true,
	})
}

// oauthRegister registers a client.
func (u *UI) oauthRegister(w http.ResponseWriter, r *http.Request) {
	var req app.OAuthClientRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "the body is not a JSON registration: " + err.Error()})
		return
	}
	c, err := u.app.RegisterOAuthClient(r.Context(), req)
	if err != nil {
		u.oauthFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": c.ID, "client_name": c.Name, "redirect_uris": c.RedirectURIs, "client_id_issued_at": c.Created.Unix(),
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code"}, "response_types": []string{"code"},
	})
}

// authorizeRequest reads an authorization request from a query or form.
func authorizeRequest(v url.Values) app.AuthorizeRequest {
	return app.AuthorizeRequest{
		ResponseType: v.Get("response_type"), ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"),
		Scope: v.Get("scope"), State: v.Get("state"), CodeChallenge: v.Get("code_challenge"), CodeChallengeMethod: v.Get("code_challenge_method"),
	}
}

// backTo sends the browser to the client's redirect URI with params.
func backTo(w http.ResponseWriter, r *http.Request, redirect string, params url.Values) {
	u, _ := url.Parse(redirect) // checked when the client registered
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	q.Set("iss", issuer(r))
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// checkAuthorize checks the request; an error the client may hear is sent
// back to it (handled: true), one it may not (an unknown client, a
// redirect URI it did not register) is returned, for the page.
func (u *UI) checkAuthorize(w http.ResponseWriter, r *http.Request, req app.AuthorizeRequest) (g *app.OAuthGrant, handled bool, err error) {
	g, err = u.app.CheckAuthorization(r.Context(), req)
	var oe *app.OAuthError
	if errors.As(err, &oe) {
		if oe.Redirect {
			backTo(w, r, req.RedirectURI, url.Values{"error": {oe.Code}, "error_description": {oe.Description}, "state": {req.State}})
			return nil, true, nil
		}
		return nil, false, cairn.Errorf(cairn.EINVALID, "this authorization request cannot be granted: %s", oe.Description).
			WithHint("Go back to the application that sent you here; it may need to register again.")
	}
	return g, false, err
}

// consent shows the consent page: which client asks, where it goes back
// to, and the scopes the person may grant it.
func (u *UI) consent(w http.ResponseWriter, r *http.Request, s *session) error {
	req := authorizeRequest(r.URL.Query())
	g, handled, err := u.checkAuthorize(w, r, req)
	if handled || err != nil {
		return err
	}
	back, _ := url.Parse(g.RedirectURI)
	// The consent form is sent here and redirected to the client: the
	// page's form-action must allow the client's origin.
	w.Header().Set("Content-Security-Policy", strings.Replace(contentSecurityPolicy, "form-action 'self'",
		"form-action 'self' "+back.Scheme+"://"+back.Host, 1))
	return u.show(w, r, s, "consent", "Grant access", "", map[string]any{
		"G": g, "Host": back.Host, "Req": req, "Scopes": g.Scopes,
	})
}

// authorize grants (or denies) the request as the person chose, and sends
// the browser back to the client with a code (or the refusal).
func (u *UI) authorize(w http.ResponseWriter, r *http.Request, s *session) error {
	req := authorizeRequest(r.PostForm)
	g, handled, err := u.checkAuthorize(w, r, req)
	if handled || err != nil {
		return err
	}
	if r.PostFormValue("decision") != "allow" {
		backTo(w, r, g.RedirectURI, url.Values{"error": {"access_denied"}, "error_description": {"the person denied access"}, "state": {g.State}})
		return nil
	}
	var chosen []auth.Scope
	for _, sc := range r.PostForm["grant"] {
		chosen = append(chosen, auth.Scope(sc))
	}
	code, err := u.app.GrantAuthorization(r.Context(), g, chosen)
	if err != nil {
		return err
	}
	backTo(w, r, g.RedirectURI, url.Values{"code": {code}, "state": {g.State}})
	return nil
}

// oauthToken exchanges a code for a token.
func (u *UI) oauthToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "the body is not a form"})
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "authorization_code" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type", "error_description": "grant_type must be authorization_code, not " + strconv.Quote(gt)})
		return
	}
	f := r.PostForm
	tok, err := u.app.ExchangeOAuthCode(r.Context(), f.Get("client_id"), f.Get("code"), f.Get("redirect_uri"), f.Get("code_verifier"))
	if err != nil {
		u.oauthFail(w, r, err)
		return
	}
	var scopes []string
	for _, s := range tok.Token.Scopes {
		scopes = append(scopes, string(s))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok.Secret, "token_type": "Bearer", "scope": strings.Join(scopes, " "),
		"expires_in": int(time.Until(tok.Token.Expires) / time.Second),
	})
}

// oauthRevoke revokes a token an OAuth client got; it answers 200
// whatever the token was (RFC 7009 §2.2).
func (u *UI) oauthRevoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "the body is not a form"})
		return
	}
	if err := u.app.RevokeOAuthToken(r.Context(), r.PostForm.Get("token")); err != nil {
		u.oauthFail(w, r, err)
		return
	}
	cors(w)
	w.WriteHeader(http.StatusOK)
}
