package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn"
	"cairn/app"
	"cairn/auth"
)

func TestApp_Tokens(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := &now
	a, err := initApp(t, t.Context(), filepath.Join(t.TempDir(), "vault"), true, &app.Options{Now: func() time.Time { return *clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("owner"))
	az := a.Authorizer()

	nt, err := a.CreateToken(ctx, app.TokenRequest{Name: "laptop", Scopes: []auth.Scope{auth.Propose, auth.Read}})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		tok, err := az.Authenticate(t.Context(), nt.Secret)
		if err != nil {
			t.Fatalf("Authenticate(new secret) = %v", err)
		}
		if tok.Principal != cairn.User("laptop") || !tok.Has(auth.Read) || !tok.Has(auth.Propose) || tok.Has(auth.Admin) {
			t.Errorf("token = %+v; want user:laptop with read and propose only", tok)
		}
		if got := tok.Expires.Sub(now); got != 90*24*time.Hour {
			t.Errorf("token expires after %v, want 90 days", got)
		}
		if tok.CreatedBy != cairn.User("owner") {
			t.Errorf("CreatedBy = %s, want user:owner", tok.CreatedBy)
		}
		if err := auth.Allow(tok, auth.Review); cairn.ErrorCode(err) != cairn.EFORBIDDEN {
			t.Errorf("Allow(review) = %v, want EFORBIDDEN", err)
		}
		if err := auth.Allow(tok, auth.Propose); err != nil {
			t.Errorf("Allow(propose) = %v", err)
		}
		ts, err := a.Tokens(t.Context())
		if err != nil || len(ts) != 1 || ts[0].ID != nt.Token.ID {
			t.Errorf("Tokens() = %v, %v; want the one token", ts, err)
		}
	})
	t.Run("ErrUnauthenticated", func(t *testing.T) {
		other := "A" // the key with its last character changed
		if strings.HasSuffix(nt.Secret, other) {
			other = "B"
		}
		for _, secret := range []string{
			"", "Bearer x", nt.Secret + "x", nt.Secret[:len(nt.Secret)-1] + other,
			"cairn_000000000000_" + strings.Repeat("A", 43), "cairn_zzzzzzzzzzzz_" + strings.Repeat("A", 43),
		} {
			if _, err := az.Authenticate(t.Context(), secret); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
				t.Errorf("Authenticate(%q) = %v, want EUNAUTHORIZED", secret, err)
			}
		}
	})
	t.Run("ErrExpired", func(t *testing.T) {
		short, err := a.CreateToken(ctx, app.TokenRequest{Name: "brief", Scopes: []auth.Scope{auth.Read}, Expires: "1h"})
		if err != nil {
			t.Fatal(err)
		}
		later := now.Add(time.Hour)
		clock = &later
		defer func() { clock = &now }()
		if _, err := az.Authenticate(t.Context(), short.Secret); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED || !strings.Contains(err.Error(), "expired") {
			t.Errorf("Authenticate(expired) = %v, want EUNAUTHORIZED saying it expired", err)
		}
	})
	t.Run("ErrRevoked", func(t *testing.T) {
		other, err := a.CreateToken(ctx, app.TokenRequest{Name: "gone", Principal: cairn.Agent("claude"), Scopes: []auth.Scope{auth.Read}, Expires: "never"})
		if err != nil {
			t.Fatal(err)
		}
		if !other.Token.Expires.IsZero() || other.Token.Principal != cairn.Agent("claude") {
			t.Errorf("token = %+v, want agent:claude, never expiring", other.Token)
		}
		if _, err := a.RevokeToken(ctx, other.Token.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := az.Authenticate(t.Context(), other.Secret); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED || !strings.Contains(err.Error(), "revoked") {
			t.Errorf("Authenticate(revoked) = %v, want EUNAUTHORIZED saying it was revoked", err)
		}
		if _, err := a.RevokeToken(ctx, "000000000000"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("RevokeToken(unknown) = %v, want ENOTFOUND", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		before, _ := a.Tokens(t.Context())
		for _, req := range []app.TokenRequest{
			{Name: "", Scopes: []auth.Scope{auth.Read}},
			{Name: "a b", Scopes: []auth.Scope{auth.Read}},
			{Name: strings.Repeat("x", 65), Scopes: []auth.Scope{auth.Read}},
			{Name: "x", Scopes: nil},
			{Name: "x", Scopes: []auth.Scope{"root"}},
			{Name: "x", Scopes: []auth.Scope{auth.Read}, Expires: "soon"},
			{Name: "x", Scopes: []auth.Scope{auth.Read}, Expires: "-3d"},
			{Name: "x", Scopes: []auth.Scope{auth.Read}, Principal: cairn.PrincipalSystem},
			{Name: "x", Scopes: []auth.Scope{auth.Read}, Principal: "job:4"},
			{Name: "x", Scopes: []auth.Scope{auth.Read}, Principal: "user:a b"},
		} {
			if _, err := a.CreateToken(ctx, req); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
				t.Errorf("CreateToken(%+v) = %v, want EINVALID with a hint", req, err)
			}
		}
		if _, err := a.CreateToken(context.Background(), app.TokenRequest{Name: "x", Scopes: []auth.Scope{auth.Read}}); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
			t.Errorf("CreateToken(no principal) = %v, want EUNAUTHORIZED", err)
		}
		after, _ := a.Tokens(t.Context())
		if len(after) != len(before) {
			t.Errorf("bad requests made %d tokens", len(after)-len(before))
		}
	})
}

// TestApp_TokensRevokedElsewhere: a token revoked by one process stops
// working in another within a second (the authorizer keeps the tokens it
// read that long), and at once in the process that revoked it.
func TestApp_TokensRevokedElsewhere(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	dir := filepath.Join(t.TempDir(), "vault")
	a, err := initApp(t, t.Context(), dir, true, &app.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err := app.Open(t.Context(), dir, &app.Options{Now: clock}) // another process on the vault
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("owner"))
	nt, err := a.CreateToken(ctx, app.TokenRequest{Name: "shared", Scopes: []auth.Scope{auth.Read}})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*app.App{a, b} {
		if _, err := x.Authorizer().Authenticate(t.Context(), nt.Secret); err != nil {
			t.Fatalf("Authenticate before the revocation = %v", err)
		}
	}
	if _, err := a.RevokeToken(ctx, nt.Token.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authorizer().Authenticate(t.Context(), nt.Secret); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
		t.Errorf("Authenticate where it was revoked = %v, want EUNAUTHORIZED at once", err)
	}
	advance(500 * time.Millisecond)
	if _, err := b.Authorizer().Authenticate(t.Context(), nt.Secret); err != nil {
		t.Errorf("Authenticate elsewhere half a second later = %v, want the token it holds", err)
	}
	advance(600 * time.Millisecond)
	if _, err := b.Authorizer().Authenticate(t.Context(), nt.Secret); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
		t.Errorf("Authenticate elsewhere after a second = %v, want EUNAUTHORIZED", err)
	}
}
