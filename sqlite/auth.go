package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"cairn"
	"cairn/auth"
)

// AuthStorage keeps the tokens and the audit of requests in a vault's
// database: the tables tokens and requests of migration 0009.
type AuthStorage struct {
	db *DB
}

var _ auth.Storage = (*AuthStorage)(nil)

// NewAuthStorage returns the tokens' storage in db. Its reads use db's
// read-only pool; its writes run in the transactions they are given.
func NewAuthStorage(db *DB) *AuthStorage { return &AuthStorage{db: db} }

const tokenColumns = `id, name, principal, scopes, hash, created, created_by, expires, revoked`

func scanToken(sc interface{ Scan(...any) error }) (*auth.Token, error) {
	var t auth.Token
	var principal, scopes, by string
	var created int64
	var expires, revoked sql.NullInt64
	if err := sc.Scan(&t.ID, &t.Name, &principal, &scopes, &t.Hash, &created, &by, &expires, &revoked); err != nil {
		return nil, err
	}
	t.Principal, t.CreatedBy = cairn.Principal(principal), cairn.Principal(by)
	for s := range strings.SplitSeq(scopes, ",") {
		if s != "" {
			t.Scopes = append(t.Scopes, auth.Scope(s))
		}
	}
	t.Created = time.Unix(0, created)
	if expires.Valid {
		t.Expires = time.Unix(0, expires.Int64)
	}
	if revoked.Valid {
		t.Revoked = time.Unix(0, revoked.Int64)
	}
	return &t, nil
}

// AddToken records t inside tx.
func (s *AuthStorage) AddToken(ctx context.Context, tx cairn.Tx, t *auth.Token) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	scopes := make([]string, len(t.Scopes))
	for i, sc := range t.Scopes {
		scopes[i] = string(sc)
	}
	_, err = q.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Name, string(t.Principal), strings.Join(scopes, ","), t.Hash, t.Created.UnixNano(), string(t.CreatedBy),
		nullTime(t.Expires), nullTime(t.Revoked))
	return translate(err)
}

// Token returns the token with id; ENOTFOUND when there is none.
func (s *AuthStorage) Token(ctx context.Context, id string) (*auth.Token, error) {
	t, err := scanToken(s.db.rq.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no token %s", id).WithHint("Try: cairn token list")
	}
	return t, translate(err)
}

// Tokens returns every token, newest first.
func (s *AuthStorage) Tokens(ctx context.Context) ([]*auth.Token, error) {
	rows, err := s.db.rq.QueryContext(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created DESC, id`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []*auth.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, t)
	}
	return out, translate(rows.Err())
}

// RevokeToken records, inside tx, that token id was revoked at (a token
// revoked before keeps its time); ENOTFOUND when there is no such token.
func (s *AuthStorage) RevokeToken(ctx context.Context, tx cairn.Tx, id string, at time.Time) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, `UPDATE tokens SET revoked = coalesce(revoked, ?) WHERE id = ?`, at.UnixNano(), id)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return translate(err)
	} else if n == 0 {
		return cairn.Errorf(cairn.ENOTFOUND, "there is no token %s", id).WithHint("Try: cairn token list")
	}
	return nil
}

// SpendToken revokes token id inside tx unless it is revoked already, and
// reports whether it did.
func (s *AuthStorage) SpendToken(ctx context.Context, tx cairn.Tx, id string, at time.Time) (bool, error) {
	q, err := asSQLTx(tx)
	if err != nil {
		return false, err
	}
	res, err := q.ExecContext(ctx, `UPDATE tokens SET revoked = ? WHERE id = ? AND revoked IS NULL`, at.UnixNano(), id)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

// AddRequest records an audited request inside tx.
func (s *AuthStorage) AddRequest(ctx context.Context, tx cairn.Tx, r *auth.Request) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO requests (time, principal, token, surface, route, remote, status) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.Time.UnixNano(), string(r.Principal), r.Token, r.Surface, r.Route, r.Remote, r.Status)
	return translate(err)
}

// Requests returns the audited requests after the one numbered after,
// oldest first, at most limit.
func (s *AuthStorage) Requests(ctx context.Context, after int64, limit int) ([]*auth.Request, error) {
	rows, err := s.db.rq.QueryContext(ctx, `SELECT id, time, principal, token, surface, route, remote, status
		FROM requests WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []*auth.Request
	for rows.Next() {
		var r auth.Request
		var t int64
		var principal string
		if err := rows.Scan(&r.ID, &t, &principal, &r.Token, &r.Surface, &r.Route, &r.Remote, &r.Status); err != nil {
			return nil, translate(err)
		}
		r.Time, r.Principal = time.Unix(0, t), cairn.Principal(principal)
		out = append(out, &r)
	}
	return out, translate(rows.Err())
}

// AddClient records an OAuth client inside tx (migration 0010).
func (s *AuthStorage) AddClient(ctx context.Context, tx cairn.Tx, c *auth.Client) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, created) VALUES (?, ?, ?, ?)`,
		c.ID, c.Name, string(uris), c.Created.UnixNano())
	return translate(err)
}

// Client returns the OAuth client id; ENOTFOUND when there is none.
func (s *AuthStorage) Client(ctx context.Context, id string) (*auth.Client, error) {
	var c auth.Client
	var uris string
	var created int64
	err := s.db.rq.QueryRowContext(ctx, `SELECT id, name, redirect_uris, created FROM oauth_clients WHERE id = ?`, id).
		Scan(&c.ID, &c.Name, &uris, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no OAuth client %q", id).WithHint("Register the client first (POST /oauth/register).")
	}
	if err != nil {
		return nil, translate(err)
	}
	c.Created = time.Unix(0, created)
	return &c, json.Unmarshal([]byte(uris), &c.RedirectURIs)
}

// AddCode records an authorization code inside tx.
func (s *AuthStorage) AddCode(ctx context.Context, tx cairn.Tx, c *auth.Code) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	scopes := make([]string, len(c.Scopes))
	for i, sc := range c.Scopes {
		scopes[i] = string(sc)
	}
	_, err = q.ExecContext(ctx, `INSERT INTO oauth_codes (hash, client, redirect_uri, challenge, principal, scopes, expires) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.Hash, c.Client, c.RedirectURI, c.Challenge, string(c.Principal), strings.Join(scopes, ","), c.Expires.UnixNano())
	return translate(err)
}

// TakeCode removes the code whose hash is hash inside tx and returns it;
// ENOTFOUND when there is none (never granted, or taken already).
func (s *AuthStorage) TakeCode(ctx context.Context, tx cairn.Tx, hash []byte) (*auth.Code, error) {
	q, err := asSQLTx(tx)
	if err != nil {
		return nil, err
	}
	var c auth.Code
	var principal, scopes string
	var expires int64
	err = q.QueryRowContext(ctx, `DELETE FROM oauth_codes WHERE hash = ? RETURNING hash, client, redirect_uri, challenge, principal, scopes, expires`, hash).
		Scan(&c.Hash, &c.Client, &c.RedirectURI, &c.Challenge, &principal, &scopes, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "the authorization code is not known, or was used already")
	}
	if err != nil {
		return nil, translate(err)
	}
	c.Principal, c.Expires = cairn.Principal(principal), time.Unix(0, expires)
	for sc := range strings.SplitSeq(scopes, ",") {
		if sc != "" {
			c.Scopes = append(c.Scopes, auth.Scope(sc))
		}
	}
	return &c, nil
}
