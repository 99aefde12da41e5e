package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/auth"
)

// AuthStorage keeps the tokens, the audit of requests and the OAuth
// clients and codes in a vault's database: the tables tokens, requests,
// oauth_clients and oauth_codes of migration 0003.
type AuthStorage struct {
	db *DB
}

var _ auth.Storage = (*AuthStorage)(nil)

// NewAuthStorage returns the tokens' storage in db. Its reads use db's
// pool; its writes run in the transactions of db.Update they are given.
func NewAuthStorage(db *DB) *AuthStorage { return &AuthStorage{db: db} }

const tokenColumns = `id, name, principal, scopes, hash, created, created_by, expires, revoked`

// scanToken reads a row of tokenColumns.
func scanToken(row pgx.Row) (*auth.Token, error) {
	var t auth.Token
	var principal, scopes, by string
	var created int64
	var expires, revoked *int64
	if err := row.Scan(&t.ID, &t.Name, &principal, &scopes, &t.Hash, &created, &by, &expires, &revoked); err != nil {
		return nil, err
	}
	t.Principal, t.CreatedBy, t.Scopes = cairn.Principal(principal), cairn.Principal(by), splitScopes(scopes)
	t.Created = time.Unix(0, created)
	if expires != nil {
		t.Expires = time.Unix(0, *expires)
	}
	if revoked != nil {
		t.Revoked = time.Unix(0, *revoked)
	}
	return &t, nil
}

// joinScopes encodes scopes for their column: comma-separated.
func joinScopes(scopes []auth.Scope) string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ",")
}

// splitScopes reads the scopes of a column; empty names are skipped.
func splitScopes(s string) []auth.Scope {
	var out []auth.Scope
	for sc := range strings.SplitSeq(s, ",") {
		if sc != "" {
			out = append(out, auth.Scope(sc))
		}
	}
	return out
}

// noToken is the error for a token that is not recorded.
func noToken(id string) error {
	return cairn.Errorf(cairn.ENOTFOUND, "there is no token %s", id).WithHint("Try: cairn token list")
}

// AddToken records t inside tx; ECONFLICT when a token has its id.
func (s *AuthStorage) AddToken(ctx context.Context, tx cairn.Tx, t *auth.Token) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		t.ID, t.Name, string(t.Principal), joinScopes(t.Scopes), orEmpty(t.Hash), t.Created.UnixNano(), string(t.CreatedBy),
		timeOrNull(t.Expires), timeOrNull(t.Revoked))
	if err != nil {
		return fmt.Errorf("record token %s: %w", t.ID, s.db.translate(err))
	}
	return nil
}

// Token returns the token with id; ENOTFOUND when there is none.
func (s *AuthStorage) Token(ctx context.Context, id string) (*auth.Token, error) {
	t, err := scanToken(s.db.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE id = $1`, id))
	if err != nil {
		err = s.db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, noToken(id)
		}
		return nil, fmt.Errorf("read token %s: %w", id, err)
	}
	return t, nil
}

// Tokens returns every token, newest first.
func (s *AuthStorage) Tokens(ctx context.Context) ([]*auth.Token, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", s.db.translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*auth.Token, error) { return scanToken(r) })
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", s.db.translate(err))
	}
	return out, nil
}

// RevokeToken records, inside tx, that token id was revoked at (a token
// revoked before keeps its time); ENOTFOUND when there is no such token.
func (s *AuthStorage) RevokeToken(ctx context.Context, tx cairn.Tx, id string, at time.Time) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	tag, err := q.Exec(ctx, `UPDATE tokens SET revoked = coalesce(revoked, $1) WHERE id = $2`, at.UnixNano(), id)
	if err != nil {
		return fmt.Errorf("revoke token %s: %w", id, s.db.translate(err))
	}
	if tag.RowsAffected() == 0 {
		return noToken(id)
	}
	return nil
}

// SpendToken revokes token id inside tx unless it is revoked already, and
// reports whether it did. Of transactions racing to spend one token, one
// does: the others' updates wait for its row lock, then find the token
// revoked.
func (s *AuthStorage) SpendToken(ctx context.Context, tx cairn.Tx, id string, at time.Time) (bool, error) {
	q, err := PgxTx(tx)
	if err != nil {
		return false, err
	}
	tag, err := q.Exec(ctx, `UPDATE tokens SET revoked = $1 WHERE id = $2 AND revoked IS NULL`, at.UnixNano(), id)
	if err != nil {
		return false, fmt.Errorf("spend token %s: %w", id, s.db.translate(err))
	}
	return tag.RowsAffected() == 1, nil
}

// AddRequest records an audited request inside tx.
func (s *AuthStorage) AddRequest(ctx context.Context, tx cairn.Tx, r *auth.Request) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO requests (time, principal, token, surface, route, remote, status) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.Time.UnixNano(), string(r.Principal), r.Token, r.Surface, r.Route, r.Remote, r.Status)
	if err != nil {
		return fmt.Errorf("record request %s: %w", r.Route, s.db.translate(err))
	}
	return nil
}

// Requests returns the audited requests after the one numbered after,
// oldest first, at most limit.
func (s *AuthStorage) Requests(ctx context.Context, after int64, limit int) ([]*auth.Request, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id, time, principal, token, surface, route, remote, status
		FROM requests WHERE id > $1 ORDER BY id LIMIT $2`, after, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("read the requests after %d: %w", after, s.db.translate(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*auth.Request, error) {
		var r auth.Request
		var t int64
		var principal string
		err := row.Scan(&r.ID, &t, &principal, &r.Token, &r.Surface, &r.Route, &r.Remote, &r.Status)
		r.Time, r.Principal = time.Unix(0, t), cairn.Principal(principal)
		return &r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the requests after %d: %w", after, s.db.translate(err))
	}
	return out, nil
}

// AddClient records an OAuth client inside tx; ECONFLICT when a client has
// its id.
func (s *AuthStorage) AddClient(ctx context.Context, tx cairn.Tx, c *auth.Client) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return fmt.Errorf("record OAuth client %s: %w", c.ID, err)
	}
	_, err = q.Exec(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, created) VALUES ($1, $2, $3, $4)`,
		c.ID, c.Name, string(uris), c.Created.UnixNano())
	if err != nil {
		return fmt.Errorf("record OAuth client %s: %w", c.ID, s.db.translate(err))
	}
	return nil
}

// Client returns the OAuth client id; ENOTFOUND when there is none.
func (s *AuthStorage) Client(ctx context.Context, id string) (*auth.Client, error) {
	var c auth.Client
	var uris string
	var created int64
	err := s.db.pool.QueryRow(ctx, `SELECT id, name, redirect_uris, created FROM oauth_clients WHERE id = $1`, id).
		Scan(&c.ID, &c.Name, &uris, &created)
	if err != nil {
		err = s.db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "there is no OAuth client %q", id).WithHint("Register the client first (POST /oauth/register).")
		}
		return nil, fmt.Errorf("read OAuth client %q: %w", id, err)
	}
	c.Created = time.Unix(0, created)
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, cairn.Errorf(cairn.EINTERNAL, "OAuth client %q: its redirect URIs: %w", id, err)
	}
	return &c, nil
}

// AddCode records an authorization code inside tx.
func (s *AuthStorage) AddCode(ctx context.Context, tx cairn.Tx, c *auth.Code) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO oauth_codes (hash, client, redirect_uri, challenge, principal, scopes, expires) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		orEmpty(c.Hash), c.Client, c.RedirectURI, c.Challenge, string(c.Principal), joinScopes(c.Scopes), c.Expires.UnixNano())
	if err != nil {
		return fmt.Errorf("record an authorization code of client %s: %w", c.Client, s.db.translate(err))
	}
	return nil
}

// TakeCode removes the code whose hash is hash inside tx and returns it;
// ENOTFOUND when there is none (never granted, or taken already). Of
// transactions racing to take one code, one does: the others' deletes
// wait for its row lock, then find the row gone.
func (s *AuthStorage) TakeCode(ctx context.Context, tx cairn.Tx, hash []byte) (*auth.Code, error) {
	q, err := PgxTx(tx)
	if err != nil {
		return nil, err
	}
	var c auth.Code
	var principal, scopes string
	var expires int64
	err = q.QueryRow(ctx, `DELETE FROM oauth_codes WHERE hash = $1 RETURNING hash, client, redirect_uri, challenge, principal, scopes, expires`, orEmpty(hash)).
		Scan(&c.Hash, &c.Client, &c.RedirectURI, &c.Challenge, &principal, &scopes, &expires)
	if err != nil {
		err = s.db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "the authorization code is not known, or was used already")
		}
		return nil, fmt.Errorf("take an authorization code: %w", err)
	}
	c.Principal, c.Expires, c.Scopes = cairn.Principal(principal), time.Unix(0, expires), splitScopes(scopes)
	return &c, nil
}
