package auth_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/auth"
)

func TestParseScopes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []auth.Scope
	}{
		{"read", []auth.Scope{auth.Read}},
		{"admin, read ,read", []auth.Scope{auth.Read, auth.Admin}},
		{"review,propose,admin,read", auth.AllScopes()},
	} {
		got, err := auth.ParseScopes(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseScopes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", ",", "root", "read,write", "READ"} {
		if _, err := auth.ParseScopes(in); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("ParseScopes(%q) = %v, want EINVALID with a hint", in, err)
		}
	}
}

func TestParseExpiry(t *testing.T) {
	for in, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "12h": 12 * time.Hour, "30m": 30 * time.Minute, "never": 0} {
		if got, err := auth.ParseExpiry(in); err != nil || got != want {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "0d", "-3d", "3y", "soon", "1.5h", "99999999d"} {
		if _, err := auth.ParseExpiry(in); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("ParseExpiry(%q) = %v, want EINVALID", in, err)
		}
	}
}

// TestNewSecret: secrets are distinct, shaped cairn_<id>_<key>, and only
// the hash of their key is kept.
func TestNewSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id, secret, hash, err := auth.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, "cairn_"+id+"_") || len(secret) != len("cairn_")+12+1+43 || len(hash) != 32 {
			t.Fatalf("NewSecret = %q, %q, %d-byte hash", id, secret, len(hash))
		}
		if strings.Contains(secret, string(hash)) || seen[secret] || seen[id] {
			t.Fatalf("NewSecret repeated itself or kept the key: %q", secret)
		}
		seen[secret], seen[id] = true, true
	}
}

func TestTokenState(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		tok  auth.Token
		want string
	}{
		{auth.Token{}, "active"},
		{auth.Token{Expires: now.Add(time.Second)}, "active"},
		{auth.Token{Expires: now}, "expired"},
		{auth.Token{Revoked: now.Add(-time.Hour), Expires: now.Add(-time.Minute)}, "revoked"},
	} {
		if got := tc.tok.State(now); got != tc.want || tc.tok.Active(now) != (tc.want == "active") {
			t.Errorf("State(%+v) = %s, want %s", tc.tok, got, tc.want)
		}
	}
}
