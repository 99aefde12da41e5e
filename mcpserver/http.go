package mcpserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"cairn/auth"
)

// Path is where cairn serve mounts the MCP endpoint; MetadataPath is its
// RFC 9728 protected-resource metadata.
const (
	Path         = "/mcp"
	MetadataPath = "/.well-known/oauth-protected-resource"
)

// FromToken is the Authenticate of a server that put the request's token
// in its context (auth.NewContext), as httpapi.Server.Mount does.
func FromToken(r *http.Request) *Caller {
	tok := auth.FromContext(r.Context())
	if tok == nil {
		return nil
	}
	return &Caller{Token: tok}
}

// origin is the scheme and host a request reached the server by.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Challenge is what a refusal's WWW-Authenticate adds: where the
// protected-resource metadata is.
func Challenge(r *http.Request) string {
	return fmt.Sprintf("resource_metadata=%q", origin(r)+MetadataPath+Path)
}

// Metadata serves the RFC 9728 protected-resource metadata of the MCP
// endpoint: bearer tokens in the Authorization header, cairn's scopes, and
// the server itself as the authorization server (cairn serve's web
// interface: OAuth 2.1 with PKCE, tokens that are cairn tokens), beside
// tokens made with cairn token create.
func Metadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scopes := []string{}
		for _, s := range auth.AllScopes() {
			scopes = append(scopes, string(s))
		}
		m := &oauthex.ProtectedResourceMetadata{
			Resource:               origin(r) + Path,
			AuthorizationServers:   []string{origin(r)},
			ScopesSupported:        scopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "cairn vault (MCP)",
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(m)
	})
}
