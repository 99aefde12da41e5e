package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"cairn"
	"cairn/auth"
)

// loadDoc fetches /openapi.json (without a token: it holds no vault data)
// and checks it is a valid OpenAPI document.
func loadDoc(t *testing.T, e *env) *openapi3.T {
	t.Helper()
	code, data, _ := e.do(http.MethodGet, "/openapi.json", "", "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /openapi.json = %d", code)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("load /openapi.json: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("validate /openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %s, want 3.1.0", doc.OpenAPI)
	}
	return doc
}

// fill puts a value in each path parameter of a route.
func fill(path string) string {
	r := strings.NewReplacer("{id}", "1", "{ref}", "abcd", "{key}", "agent.runtime")
	return r.Replace(path)
}

// TestServer_RouteScopes walks every route of the OpenAPI document: each
// declares exactly one scope; an anonymous request gets 401 and a token
// without that scope (holding every other) 403, both as problems, before
// the request is read any further.
func TestServer_RouteScopes(t *testing.T) {
	e := setup(t)
	doc := loadDoc(t, e)
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !strings.HasPrefix(path, "/api/v1/") {
				t.Errorf("%s %s: a route outside /api/v1", method, path)
				continue
			}
			n++
			what := method + " " + path
			if op.Security == nil || len(*op.Security) != 1 || len((*op.Security)[0]["bearer"]) != 1 {
				t.Errorf("%s: security %v, want one bearer scope", what, op.Security)
				continue
			}
			scope := auth.Scope((*op.Security)[0]["bearer"][0])
			if _, ok := e.scoped[scope]; !ok {
				t.Errorf("%s: scope %q is not a scope", what, scope)
				continue
			}
			url := fill(path)
			code, body, h := e.do(method, url, "", "application/json", strings.NewReader("{}"))
			if code != http.StatusUnauthorized || problem(t, what, body).Code != cairn.EUNAUTHORIZED || h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s anonymous = %d %s, want 401 unauthorized with WWW-Authenticate", what, code, body)
			}
			code, body, _ = e.do(method, url, e.scoped[scope], "application/json", strings.NewReader("{}"))
			if code != http.StatusForbidden || problem(t, what, body).Code != cairn.EFORBIDDEN {
				t.Errorf("%s without %s = %d %s, want 403 forbidden", what, scope, code, body)
			}
		}
	}
	if n < 50 {
		t.Errorf("the document has %d routes; want every operation of the application layer (50 or more)", n)
	}
}

// TestServer_Problems checks the problem of each kind of error: its status
// is its code's, it carries a hint, and it is application/problem+json.
func TestServer_Problems(t *testing.T) {
	e := setup(t)
	code, body, h := e.do(http.MethodGet, "/api/v1/files?path=nope.md", e.owner, "", nil)
	p := problem(t, "a missing file", body)
	if code != http.StatusNotFound || p.Code != cairn.ENOTFOUND || p.Status != code || h.Get("Content-Type") != "application/problem+json" {
		t.Errorf("GET a missing file = %d %+v (%s), want 404 not_found as application/problem+json", code, p, h.Get("Content-Type"))
	}
	code, body, _ = e.do(http.MethodGet, "/api/v1/nothing", e.owner, "", nil)
	if p := problem(t, "an unknown route", body); code != http.StatusNotFound || p.Hint == "" {
		t.Errorf("GET an unknown route = %d %+v, want 404 with a hint", code, p)
	}
	var info map[string]any
	code, body, _ = e.do(http.MethodGet, "/api/v1/vault", e.owner, "", nil)
	if code != http.StatusOK || json.Unmarshal(body, &info) != nil || info["principal"] != "user:owner" {
		t.Errorf("GET /api/v1/vault = %d %s, want the vault and the token's principal", code, body)
	}
}
