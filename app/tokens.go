package app

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"cairn"
	"cairn/auth"
	"cairn/store"
)

// TokenRequest asks for a new token.
type TokenRequest struct {
	// Name says what the token is for (required): 1 to 64 letters, digits
	// and . _ @ + - characters.
	Name string `json:"name"`
	// Principal is who the token acts as: user:NAME or agent:NAME.
	// Default: user:<Name>.
	Principal cairn.Principal `json:"principal,omitempty"`
	// Scopes are what it may do (at least one).
	Scopes []auth.Scope `json:"scopes"`
	// Expires is how long it lasts: "90d", "12h", "30m" or "never".
	// Default 90d.
	Expires string `json:"expires,omitempty"`
}

// NewToken is a token just made, with its secret: the only time the
// secret is shown.
type NewToken struct {
	Token  *auth.Token `json:"token"`
	Secret string      `json:"secret"`
}

// DefaultTokenExpiry is how long a token lasts when the request does not
// say.
const DefaultTokenExpiry = "90d"

// CreateToken makes a token as the principal in ctx and returns it with its
// secret. Errors, changing nothing: no principal (EUNAUTHORIZED); a bad
// name, principal, scope or expiry (EINVALID, with a hint).
func (a *App) CreateToken(ctx context.Context, req TokenRequest) (*NewToken, error) {
	by, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkTokenName(req.Name); err != nil {
		return nil, err
	}
	p := cmp.Or(req.Principal, cairn.User(req.Name))
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if k := p.Kind(); k != cairn.PrincipalUser && k != cairn.PrincipalAgent {
		return nil, cairn.Errorf(cairn.EINVALID, "a token acts as a user or an agent, not as %s", p).
			WithHint("Give --principal user:NAME or agent:NAME.")
	}
	if len(req.Scopes) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a token needs at least one scope").
			WithHint("Try: --scope read, or --scope read,propose")
	}
	names := make([]string, len(req.Scopes))
	for i, s := range req.Scopes {
		names[i] = string(s)
	}
	scopes, err := auth.ParseScopes(strings.Join(names, ","))
	if err != nil {
		return nil, err
	}
	life, err := auth.ParseExpiry(cmp.Or(req.Expires, DefaultTokenExpiry))
	if err != nil {
		return nil, err
	}
	id, secret, hash, err := auth.NewSecret()
	if err != nil {
		return nil, err
	}
	now := a.now()
	t := &auth.Token{ID: id, Name: req.Name, Principal: p, Scopes: scopes, Created: now, CreatedBy: by, Hash: hash}
	if life > 0 {
		t.Expires = now.Add(life)
	}
	err = a.v.Store.Update(ctx, func(tx *store.Tx) error {
		return a.tokens.AddToken(ctx, tx.Backend(), t)
	})
	if err != nil {
		return nil, a.v.ExplainBusy(fmt.Errorf("create token %s: %w", req.Name, err))
	}
	a.authorizer.Forget(id)
	return &NewToken{Token: t, Secret: secret}, nil
}

// checkTokenName reports what is wrong with a token's name.
func checkTokenName(name string) error {
	if name == "" || len(name) > 64 {
		return cairn.Errorf(cairn.EINVALID, "a token's name is 1 to 64 characters, not %d", len(name)).
			WithHint("Name what the token is for: --name laptop, --name ci")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@+-", r)) {
			return cairn.Errorf(cairn.EINVALID, "token name %q: character %q is not allowed", name, r).
				WithHint("Use letters, digits and . _ @ + -")
		}
	}
	return nil
}

// Tokens returns every token of the vault, newest first, without secrets.
func (a *App) Tokens(ctx context.Context) ([]*auth.Token, error) {
	return a.tokens.Tokens(ctx)
}

// RevokeToken revokes token id as the principal in ctx and returns it: it
// stops working at once in this process, and within a second in a server
// running elsewhere on the vault. A token revoked before stays revoked. Errors: no
// principal (EUNAUTHORIZED); no such token (ENOTFOUND).
func (a *App) RevokeToken(ctx context.Context, id string) (*auth.Token, error) {
	if _, err := Principal(ctx); err != nil {
		return nil, err
	}
	err := a.v.Store.Update(ctx, func(tx *store.Tx) error {
		return a.tokens.RevokeToken(ctx, tx.Backend(), id, a.now())
	})
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	a.authorizer.Forget(id)
	return a.tokens.Token(ctx, id)
}

// Authorizer returns the vault's authorizer: the one every network
// surface asks who a request comes from and whether it may do what it
// asks.
func (a *App) Authorizer() *auth.Authorizer { return a.authorizer }

// AuditRequests records changes asked over a network surface, in one
// transaction: who, with which token, by which route, from where, and the
// status each got.
func (a *App) AuditRequests(ctx context.Context, rs ...*auth.Request) error {
	err := a.v.Store.Update(ctx, func(tx *store.Tx) error {
		for _, r := range rs {
			if r.Time.IsZero() {
				r.Time = a.now()
			}
			if err := a.tokens.AddRequest(ctx, tx.Backend(), r); err != nil {
				return fmt.Errorf("audit %s: %w", r.Route, err)
			}
		}
		return nil
	})
	if err != nil {
		return a.v.ExplainBusy(err)
	}
	return nil
}

// AuditedRequests returns the audited requests after the one numbered
// after, oldest first, at most limit (default 100, at most 1000).
func (a *App) AuditedRequests(ctx context.Context, after int64, limit int) ([]*auth.Request, error) {
	if after < 0 || limit < 0 || limit > maxEvents {
		return nil, cairn.Errorf(cairn.EINVALID, "read audited requests after %d, at most %d: out of range", after, limit).
			WithHint("Give a cursor of 0 or more and a limit from 1 to 1000, or 0 for 100.")
	}
	return a.tokens.Requests(ctx, after, cmp.Or(limit, 100))
}
