// Package auth holds cairn's tokens and scopes, and the one authorizer that
// every surface reached over a network (the HTTP API, MCP over HTTP, the
// web UI) asks who a request comes from and whether it may do what it asks.
//
// A token carries a principal (user:NAME or agent:NAME), a set of scopes
// and an expiry. Its secret is 256 random bits, shown once when the token
// is made and kept only as a SHA-256 hash, compared in constant time. A
// scope names what a request may do:
//
//   - read: everything that changes nothing;
//   - propose: changes that go through admission (commits, changesets,
//     merges, reverts, proposals, ingest, retries and cancellations);
//   - review: deciding on held proposals (accept, reject, recheck);
//   - admin: settings, tokens, branches and tags, gc, purge, reindex.
//
// Scopes do not imply one another: a token holds each scope it needs.
package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"cairn"
)

// Scope is what a token allows.
type Scope string

// The scopes, in the order they are listed.
const (
	Read    Scope = "read"
	Propose Scope = "propose"
	Review  Scope = "review"
	Admin   Scope = "admin"
)

// AllScopes returns every scope, in order.
func AllScopes() []Scope { return []Scope{Read, Propose, Review, Admin} }

// ParseScopes reads a comma-separated list of scopes ("read,propose") and
// returns them in the order of AllScopes, each once. An empty list or an
// unknown scope is EINVALID.
func ParseScopes(s string) ([]Scope, error) {
	seen := map[Scope]bool{}
	for part := range strings.SplitSeq(s, ",") {
		sc := Scope(strings.TrimSpace(part))
		if sc == "" {
			continue
		}
		if !slices.Contains(AllScopes(), sc) {
			return nil, cairn.Errorf(cairn.EINVALID, "%q is not a scope", string(sc)).
				WithHint("The scopes are read, propose, review and admin, separated by commas.")
		}
		seen[sc] = true
	}
	var out []Scope
	for _, sc := range AllScopes() {
		if seen[sc] {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a token needs at least one scope").
			WithHint("Try: --scope read, or --scope read,propose")
	}
	return out, nil
}

// Token is a token's record: everything but its secret.
type Token struct {
	// ID names the token in lists and revocations; it is also the part of
	// the secret that says which record to check it against.
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Principal cairn.Principal `json:"principal"`
	Scopes    []Scope         `json:"scopes"`
	Created   time.Time       `json:"created"`
	// CreatedBy is who made the token.
	CreatedBy cairn.Principal `json:"created_by"`
	// Expires is when the token stops working; zero: never.
	Expires time.Time `json:"expires,omitzero"`
	// Revoked is when the token was revoked; zero: it was not.
	Revoked time.Time `json:"revoked,omitzero"`
	// Hash is the SHA-256 of the secret's random part; never shown.
	Hash []byte `json:"-"`
}

// SessionPrefix starts the name of a session's token that came from
// another token (a web sign-in): "web-session.<id of that token>". Such a
// token works only while the one it came from does.
const SessionPrefix = "web-session."

// Parent is the id of the token a session's token came from, or "".
func (t *Token) Parent() string {
	p, _ := strings.CutPrefix(t.Name, SessionPrefix)
	if p == t.Name {
		return ""
	}
	return p
}

// Root is the id of the token this one stands for: its parent's for a
// session's token, its own otherwise. Rates are counted per root.
func (t *Token) Root() string { return cmp.Or(t.Parent(), t.ID) }

// Has reports whether the token holds scope.
func (t *Token) Has(scope Scope) bool { return slices.Contains(t.Scopes, scope) }

// Active reports whether the token works at now: not revoked, not expired.
func (t *Token) Active(now time.Time) bool {
	return t.Revoked.IsZero() && (t.Expires.IsZero() || now.Before(t.Expires))
}

// State says in a word whether the token works at now: active, expired or
// revoked.
func (t *Token) State(now time.Time) string {
	switch {
	case !t.Revoked.IsZero():
		return "revoked"
	case !t.Expires.IsZero() && !now.Before(t.Expires):
		return "expired"
	}
	return "active"
}

// secretPrefix starts every secret, so that a leaked one is easy to find
// (secret scanners, grep).
const secretPrefix = "cairn_"

// idBytes and keyBytes are the sizes of a token's public id and of the
// random part of its secret (256 bits).
const (
	idBytes  = 6
	keyBytes = 32
)

// NewSecret returns a new token's id, its secret and the hash of the
// secret to keep: the secret is "cairn_<id>_<key>", key being 256 random
// bits in base64url.
func NewSecret() (id, secret string, hash []byte, err error) {
	var b [idBytes + keyBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", nil, fmt.Errorf("make a token secret: %w", err)
	}
	id = hex.EncodeToString(b[:idBytes])
	key := base64.RawURLEncoding.EncodeToString(b[idBytes:])
	return id, secretPrefix + id + "_" + key, hashKey(key), nil
}

func hashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// parseSecret splits a secret into its id and key; ok is false for a
// string that is not shaped as a secret.
func parseSecret(secret string) (id, key string, ok bool) {
	rest, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return "", "", false
	}
	id, key, ok = strings.Cut(rest, "_")
	if !ok || len(id) != 2*idBytes || len(key) != base64.RawURLEncoding.EncodedLen(keyBytes) {
		return "", "", false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return "", "", false
	}
	return id, key, true
}

// Storage keeps the tokens and the audit of requests. The SQLite
// implementation is sqlite.AuthStorage. Methods that take a cairn.Tx write
// in the store's write transaction; the others read what is committed.
// A missing token is ENOTFOUND.
type Storage interface {
	// AddToken records t inside tx.
	AddToken(ctx context.Context, tx cairn.Tx, t *Token) error
	// Token returns the token with id, its hash included.
	Token(ctx context.Context, id string) (*Token, error)
	// Tokens returns every token, newest first.
	Tokens(ctx context.Context) ([]*Token, error)
	// RevokeToken records, inside tx, that token id was revoked at; a
	// token revoked already keeps its first time. ENOTFOUND when there is
	// no such token.
	RevokeToken(ctx context.Context, tx cairn.Tx, id string, at time.Time) error
	// AddRequest records an audited request inside tx.
	AddRequest(ctx context.Context, tx cairn.Tx, r *Request) error
	// Requests returns the audited requests after the one numbered after,
	// oldest first, at most limit.
	Requests(ctx context.Context, after int64, limit int) ([]*Request, error)
	// SpendToken revokes, inside tx, token id if it is not revoked yet, and
	// reports whether it did: of two spenders of one token, one wins.
	SpendToken(ctx context.Context, tx cairn.Tx, id string, at time.Time) (bool, error)
	// AddClient records an OAuth client inside tx; Client returns one
	// (ENOTFOUND when there is none).
	AddClient(ctx context.Context, tx cairn.Tx, c *Client) error
	Client(ctx context.Context, id string) (*Client, error)
	// AddCode records an authorization code inside tx; TakeCode removes,
	// inside tx, the code whose hash is hash and returns it, so that it
	// is taken once (ENOTFOUND when there is none).
	AddCode(ctx context.Context, tx cairn.Tx, c *Code) error
	TakeCode(ctx context.Context, tx cairn.Tx, hash []byte) (*Code, error)
}

// Client is an OAuth client that registered itself with the vault's
// authorization server: a public client (no secret) that may only be
// sent back to its redirect URIs.
type Client struct {
	ID           string    `json:"client_id"`
	Name         string    `json:"client_name"`
	RedirectURIs []string  `json:"redirect_uris"`
	Created      time.Time `json:"-"`
}

// Code is an authorization code a person granted a client: what it may be
// exchanged for, by whom, until when. Only its hash is kept.
type Code struct {
	Hash        []byte
	Client      string
	RedirectURI string
	Challenge   string // the PKCE S256 code challenge
	Principal   cairn.Principal
	Scopes      []Scope
	Expires     time.Time
}

// Request is one audited request: a change asked of the vault over a
// network surface, by whom, how, from where, and what it got.
type Request struct {
	ID        int64           `json:"id"`
	Time      time.Time       `json:"time"`
	Principal cairn.Principal `json:"principal"`
	Token     string          `json:"token"`
	// Surface is how it came: http, mcp, web.
	Surface string `json:"surface"`
	// Route is the method and route pattern: "POST /api/v1/changes".
	Route  string `json:"route"`
	Remote string `json:"remote"`
	// Status is the HTTP status it was answered with.
	Status int `json:"status"`
}

// Change says whether a request asked for a change, on a surface where
// reads and changes come alike (MCP: every call is a JSON-RPC POST): the
// surface audits the requests its handler marked (Changing) and its
// refusals, not its reads. Safe for concurrent use.
type Change struct {
	mu   sync.Mutex
	what string
}

type changeKey struct{}

// NewChangeContext returns ctx carrying c, for the handler of a request to
// mark.
func NewChangeContext(ctx context.Context, c *Change) context.Context {
	return context.WithValue(ctx, changeKey{}, c)
}

// Changing marks the request of ctx as asking for a change, what (a tool's
// name) when it names none yet. Without a Change in ctx it does nothing.
func Changing(ctx context.Context, what string) {
	if c, ok := ctx.Value(changeKey{}).(*Change); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.what == "" {
			c.what = what
		}
	}
}

// Asked returns what the request was marked as asking for; "" when it
// was not.
func (c *Change) Asked() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.what
}

// Authorizer authenticates secrets against the stored tokens and checks
// scopes: the one authorizer every surface asks. It keeps the tokens it
// read for a second (tokenTTL), so that a busy server does not read the
// token of every request: a token revoked by this process stops working at
// once, one revoked by another process within the second.
type Authorizer struct {
	st  Storage
	now func() time.Time

	mu     sync.Mutex
	tokens map[string]cachedToken
	// forgot counts Forget's calls: a token read before one is not kept
	// after it (it may be the revoked token's old state).
	forgot uint64
}

type cachedToken struct {
	t    *Token
	read time.Time
}

// tokenTTL is how long the authorizer trusts a token it read.
const tokenTTL = time.Second

// NewAuthorizer returns an authorizer over the tokens st keeps; now
// defaults to time.Now.
func NewAuthorizer(st Storage, now func() time.Time) *Authorizer {
	if now == nil {
		now = time.Now
	}
	return &Authorizer{st: st, now: now, tokens: map[string]cachedToken{}}
}

// Forget drops what the authorizer holds of token id: a revocation made
// here takes effect at once, and a token made here is found at once.
func (a *Authorizer) Forget(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.tokens, id)
	a.forgot++
}

// token returns token id as stored, read again when the one held is older
// than tokenTTL.
func (a *Authorizer) token(ctx context.Context, id string) (*Token, error) {
	a.mu.Lock()
	c, ok := a.tokens[id]
	gen := a.forgot
	a.mu.Unlock()
	if ok && a.now().Sub(c.read) < tokenTTL {
		if c.t == nil {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no token %s", id)
		}
		return c.t, nil
	}
	t, err := a.st.Token(ctx, id)
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.forgot == gen {
		// An id that names no token is remembered too, so that a flood of
		// made-up ids costs one read of each a second.
		if len(a.tokens) >= 4096 {
			clear(a.tokens) // bounded
		}
		a.tokens[id] = cachedToken{t: t, read: a.now()}
	} // else read while a token was forgotten: not kept
	return t, err
}

// Authenticate returns the token whose secret is secret. A secret that is
// malformed, unknown or does not match, or a token that is revoked or
// expired, is EUNAUTHORIZED, saying which without revealing more.
func (a *Authorizer) Authenticate(ctx context.Context, secret string) (*Token, error) {
	hint := "Send a token made with cairn token create, as Authorization: Bearer <secret>."
	id, key, ok := parseSecret(secret)
	if !ok {
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "the bearer token is not a cairn token").WithHint(hint)
	}
	t, err := a.token(ctx, id)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "the bearer token is not known to this vault").WithHint(hint)
	}
	if err != nil {
		return nil, fmt.Errorf("read token %s: %w", id, err)
	}
	if subtle.ConstantTimeCompare(hashKey(key), t.Hash) != 1 {
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "the bearer token is not known to this vault").WithHint(hint)
	}
	switch t.State(a.now()) {
	case "revoked":
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "token %s was revoked", t.ID).
			WithHint("Ask for a new token: cairn token create")
	case "expired":
		return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "token %s expired on %s", t.ID, t.Expires.UTC().Format(time.DateOnly)).
			WithHint("Ask for a new token: cairn token create")
	}
	if parent := t.Parent(); parent != "" {
		pt, err := a.token(ctx, parent)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, fmt.Errorf("read token %s: %w", parent, err)
		}
		if pt == nil || !pt.Active(a.now()) {
			return nil, cairn.Errorf(cairn.EUNAUTHORIZED, "token %s's session ended: the token %s it came from was revoked or expired", t.ID, parent).
				WithHint("Sign in again with a token that works.")
		}
	}
	return t, nil
}

// Allow returns nil when t holds scope, and otherwise EFORBIDDEN naming
// the scope.
func Allow(t *Token, scope Scope) error {
	if t.Has(scope) {
		return nil
	}
	return cairn.Errorf(cairn.EFORBIDDEN, "token %s (%s) lacks the %s scope this needs", t.ID, t.Principal, scope).
		WithHint(fmt.Sprintf("Use a token with the %s scope: cairn token create --scope %s", scope, scope))
}

type contextKey int

const tokenKey contextKey = iota

// NewContext returns a copy of ctx that carries t, and t's principal as
// the one who acts (cairn.PrincipalFromContext).
func NewContext(ctx context.Context, t *Token) context.Context {
	ctx = context.WithValue(ctx, tokenKey, t)
	return cairn.NewContextWithPrincipal(ctx, t.Principal)
}

// FromContext returns the token ctx carries, or nil.
func FromContext(ctx context.Context) *Token {
	t, _ := ctx.Value(tokenKey).(*Token)
	return t
}

// ParseExpiry reads how long a token lasts: a number of days ("90d"),
// hours ("12h") or minutes ("30m"), or "never". Anything else, or a
// length that is not positive, is EINVALID.
func ParseExpiry(s string) (time.Duration, error) {
	if s == "never" {
		return 0, nil
	}
	bad := cairn.Errorf(cairn.EINVALID, "%q is not how long a token lasts", s).
		WithHint("Give days, hours or minutes, like 90d, 12h or 30m, or never.")
	if len(s) < 2 {
		return 0, bad
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n <= 0 || n > 100*366 {
		return 0, bad
	}
	switch s[len(s)-1] {
	case 'd':
		return time.Duration(n) * 24 * time.Hour, nil
	case 'h':
		return time.Duration(n) * time.Hour, nil
	case 'm':
		return time.Duration(n) * time.Minute, nil
	}
	return 0, bad
}
