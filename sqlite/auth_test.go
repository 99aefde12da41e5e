package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/auth"
	"cairn/sqlite"
)

// authOpener opens a handle of its own on one database (made by the first
// call), closed when the test ends, with the tokens' storage in it.
type authOpener func(t *testing.T) (storageDB, auth.Storage)

// sqliteAuth returns the opener of a new SQLite database.
func sqliteAuth(t *testing.T) authOpener {
	path := filepath.Join(t.TempDir(), "cairn.db")
	return func(t *testing.T) (storageDB, auth.Storage) {
		t.Helper()
		db, err := sqlite.Open(t.Context(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, sqlite.NewAuthStorage(db)
	}
}

func TestAuthStorage_Tokens(t *testing.T)    { testAuthStorageTokens(t, sqliteAuth(t)) }
func TestAuthStorage_Requests(t *testing.T)  { testAuthStorageRequests(t, sqliteAuth(t)) }
func TestAuthStorage_OAuth(t *testing.T)     { testAuthStorageOAuth(t, sqliteAuth(t)) }
func TestAuthStorage_SpendOnce(t *testing.T) { testAuthStorageSpendOnce(t, sqliteAuth(t)) }
func TestAuthStorage_TakeOnce(t *testing.T)  { testAuthStorageTakeOnce(t, sqliteAuth(t)) }

// newToken returns a token made at sec seconds after the epoch.
func newToken(id string, sec int64) *auth.Token {
	return &auth.Token{ID: id, Name: "token " + id, Principal: cairn.User("ann"), Scopes: []auth.Scope{auth.Read, auth.Propose},
		Created: time.Unix(sec, 5), CreatedBy: cairn.User("root"), Hash: []byte("hash of " + id)}
}

// addToken records tk.
func addToken(t *testing.T, db storageDB, st auth.Storage, tk *auth.Token) {
	t.Helper()
	if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.AddToken(ctx, tx, tk) }); err != nil {
		t.Fatalf("AddToken(%s) = %v", tk.ID, err)
	}
}

// testAuthStorageTokens checks the tokens of a new database, whatever its
// backend.
func testAuthStorageTokens(t *testing.T, open authOpener) {
	db, st := open(t)
	ctx := t.Context()
	a := newToken("aaaa", 100)
	b := newToken("bbbb", 200)
	b.Scopes, b.Expires = []auth.Scope{auth.Admin}, time.Unix(300, 0)
	addToken(t, db, st, a)
	addToken(t, db, st, b)

	t.Run("OK", func(t *testing.T) {
		got, err := st.Token(ctx, "bbbb")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b, got); diff != "" {
			t.Errorf("Token(bbbb) (-want +got):\n%s", diff)
		}
		all, err := st.Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]*auth.Token{b, a}, all); diff != "" {
			t.Errorf("Tokens() (-want +got):\n%s", diff)
		}
	})
	t.Run("Revoke", func(t *testing.T) {
		for _, at := range []time.Time{time.Unix(400, 0), time.Unix(500, 0)} {
			if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.RevokeToken(ctx, tx, "aaaa", at) }); err != nil {
				t.Fatal(err)
			}
		}
		// Revoked twice, it keeps its first time.
		if got, err := st.Token(ctx, "aaaa"); err != nil || !got.Revoked.Equal(time.Unix(400, 0)) {
			t.Errorf("Token(aaaa) revoked twice = %v, %v, want revoked at 400", got, err)
		}
		var spent bool
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			var err error
			spent, err = st.SpendToken(ctx, tx, "aaaa", time.Unix(600, 0))
			return err
		})
		if err != nil || spent {
			t.Errorf("SpendToken(revoked aaaa) = %v, %v, want false", spent, err)
		}
		if got, err := st.Token(ctx, "aaaa"); err != nil || !got.Revoked.Equal(time.Unix(400, 0)) {
			t.Errorf("Token(aaaa) after a refused spend = %v, %v, want revoked at 400", got, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := st.Token(ctx, "none"); cairn.ErrorCode(err) != cairn.ENOTFOUND || cairn.ErrorHint(err) == "" {
			t.Errorf("Token(none) = %v, want ENOTFOUND with a hint", err)
		}
		err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.RevokeToken(ctx, tx, "none", time.Unix(1, 0)) })
		if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("RevokeToken(none) = %v, want ENOTFOUND", err)
		}
		var spent bool
		err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			spent, err = st.SpendToken(ctx, tx, "none", time.Unix(1, 0))
			return err
		})
		if err != nil || spent {
			t.Errorf("SpendToken(none) = %v, %v, want false", spent, err)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		// A transaction of another backend is refused, not misused.
		if err := st.AddToken(ctx, foreignTx{}, newToken("cccc", 1)); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("AddToken(foreign tx) = %v, want EINTERNAL", err)
		}
		if _, err := st.SpendToken(ctx, foreignTx{}, "bbbb", time.Unix(1, 0)); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("SpendToken(foreign tx) = %v, want EINTERNAL", err)
		}
	})
}

// testAuthStorageRequests checks the audit of requests of a new database,
// whatever its backend.
func testAuthStorageRequests(t *testing.T, open authOpener) {
	db, st := open(t)
	ctx := t.Context()
	if got, err := st.Requests(ctx, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("Requests() of none = %v, %v", got, err)
	}
	var want []*auth.Request
	err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		for i := range 3 {
			r := &auth.Request{Time: time.Unix(100+int64(i), 7), Principal: cairn.Agent("bot"), Token: "aaaa", Surface: "http",
				Route: "POST /api/v1/changes", Remote: "10.0.0.1:5000", Status: 200 + i}
			if err := st.AddRequest(ctx, tx, r); err != nil {
				return err
			}
			r.ID = int64(i + 1)
			want = append(want, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Requests(ctx, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[1:], got); diff != "" {
		t.Errorf("Requests(1, 10) (-want +got):\n%s", diff)
	}
	if got, err := st.Requests(ctx, 0, 1); err != nil || len(got) != 1 || got[0].ID != 1 {
		t.Errorf("Requests(0, 1) = %v, %v, want request 1", got, err)
	}
}

// newCode returns an authorization code of client c1.
func newCode(hash string) *auth.Code {
	return &auth.Code{Hash: []byte(hash), Client: "c1", RedirectURI: "http://127.0.0.1:9/cb", Challenge: "challenge",
		Principal: cairn.User("ann"), Scopes: []auth.Scope{auth.Read}, Expires: time.Unix(1000, 3)}
}

// testAuthStorageOAuth checks the OAuth clients and codes of a new
// database, whatever its backend.
func testAuthStorageOAuth(t *testing.T, open authOpener) {
	db, st := open(t)
	ctx := t.Context()
	c := &auth.Client{ID: "c1", Name: "An editor", RedirectURIs: []string{"http://127.0.0.1:9/cb", "https://example.com/cb"}, Created: time.Unix(50, 1)}
	code := newCode("code one")
	err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
		if err := st.AddClient(ctx, tx, c); err != nil {
			return err
		}
		return st.AddCode(ctx, tx, code)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		got, err := st.Client(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("Client(c1) (-want +got):\n%s", diff)
		}
		var taken *auth.Code
		err = inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
			taken, err = st.TakeCode(ctx, tx, []byte("code one"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(code, taken); diff != "" {
			t.Errorf("TakeCode() (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := st.Client(ctx, "nobody"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Client(nobody) = %v, want ENOTFOUND", err)
		}
		// A code is taken once.
		for _, hash := range []string{"code one", "never granted"} {
			err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error {
				_, err := st.TakeCode(ctx, tx, []byte(hash))
				return err
			})
			if cairn.ErrorCode(err) != cairn.ENOTFOUND {
				t.Errorf("TakeCode(%s) = %v, want ENOTFOUND", hash, err)
			}
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		if _, err := st.TakeCode(ctx, foreignTx{}, []byte("x")); cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("TakeCode(foreign tx) = %v, want EINTERNAL", err)
		}
	})
}

// racers is how many handles race for what works once.
const racers = 8

// handle is one process's handle on the database.
type handle struct {
	db storageDB
	st auth.Storage
}

// handles opens racers handles of their own on the database.
func handles(t *testing.T, open authOpener) []handle {
	hs := make([]handle, racers)
	for i := range hs {
		hs[i].db, hs[i].st = open(t)
	}
	return hs
}

// race runs fn at once in a write transaction of each handle and returns
// how many times it reported a win.
func race(t *testing.T, hs []handle, fn func(ctx context.Context, st auth.Storage, tx cairn.Tx) (bool, error)) int {
	t.Helper()
	var mu sync.Mutex
	wins := 0
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Go(func() {
			<-start
			var won bool
			err := h.db.Update(t.Context(), func(tx cairn.Tx) error {
				var err error
				won, err = fn(t.Context(), h.st, tx)
				return err
			})
			if err != nil {
				t.Error(err)
				return
			}
			if won {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return wins
}

// testAuthStorageSpendOnce checks that of processes racing to spend one
// token, one does, whatever the backend.
func testAuthStorageSpendOnce(t *testing.T, open authOpener) {
	db, st := open(t)
	hs := handles(t, open)
	for round := range 5 {
		id := fmt.Sprintf("tok%d", round)
		addToken(t, db, st, newToken(id, 100))
		wins := race(t, hs, func(ctx context.Context, st auth.Storage, tx cairn.Tx) (bool, error) {
			return st.SpendToken(ctx, tx, id, time.Unix(200, 0))
		})
		if wins != 1 {
			t.Errorf("round %d: %d of %d racers spent the token, want 1", round, wins, racers)
		}
		if got, err := st.Token(t.Context(), id); err != nil || !got.Revoked.Equal(time.Unix(200, 0)) {
			t.Errorf("round %d: Token(%s) = %v, %v, want it revoked", round, id, got, err)
		}
	}
}

// testAuthStorageTakeOnce checks that of processes racing to take one
// authorization code, one does, whatever the backend.
func testAuthStorageTakeOnce(t *testing.T, open authOpener) {
	db, st := open(t)
	hs := handles(t, open)
	for round := range 5 {
		hash := fmt.Sprintf("code %d", round)
		if err := inWriteTx(t, db, func(ctx context.Context, tx cairn.Tx) error { return st.AddCode(ctx, tx, newCode(hash)) }); err != nil {
			t.Fatal(err)
		}
		wins := race(t, hs, func(ctx context.Context, st auth.Storage, tx cairn.Tx) (bool, error) {
			c, err := st.TakeCode(ctx, tx, []byte(hash))
			if cairn.ErrorCode(err) == cairn.ENOTFOUND {
				return false, nil
			}
			return err == nil && string(c.Hash) == hash, err
		})
		if wins != 1 {
			t.Errorf("round %d: %d of %d racers took the code, want 1", round, wins, racers)
		}
	}
}
