package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cairn"
	"cairn/auth"
	"cairn/postgres/pgtest"
)

// authRacers is how many processes race for what works once.
const authRacers = 8

// raceUnlocked runs fn at once on each of dbs, each in a transaction of
// its own that does not take the vault's write lock (as DB.Update does),
// so that only the statements' own row locks stand between them: every
// transaction has begun before any calls fn, and none commits before
// every one has called it or is waiting on a row lock. It returns how
// many reported a win.
func raceUnlocked(t *testing.T, dbs []*DB, fn func(ctx context.Context, st *AuthStorage, tx cairn.Tx) (bool, error)) int {
	t.Helper()
	ctx := t.Context()
	var mu sync.Mutex
	wins := 0
	var begun, called sync.WaitGroup
	begun.Add(len(dbs))
	var wg sync.WaitGroup
	for _, db := range dbs {
		called.Add(1)
		wg.Go(func() {
			tx, err := db.pool.Begin(ctx)
			begun.Done()
			if err != nil {
				called.Done()
				t.Error(err)
				return
			}
			defer tx.Rollback(context.WithoutCancel(ctx))
			begun.Wait()
			// The first to reach the row locks it; the others wait for its
			// commit, then find the row changed.
			done := make(chan struct{})
			var won bool
			go func() {
				defer close(done)
				won, err = fn(ctx, NewAuthStorage(db), &Tx{db: db, tx: tx})
			}()
			select {
			case <-done:
			case <-time.After(200 * time.Millisecond): // waiting on a row lock
			}
			called.Done()
			called.Wait()
			<-done
			if err == nil {
				err = tx.Commit(ctx)
			}
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
	wg.Wait()
	return wins
}

// openRacers opens authRacers databases, each with a pool of its own, on
// one new schema, and returns them with the first.
func openRacers(t *testing.T) []*DB {
	t.Helper()
	url := pgtest.URL(t)
	dbs := make([]*DB, authRacers)
	for i := range dbs {
		db, err := Open(t.Context(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}

// TestAuthStorage_SpendTokenRace: of transactions on separate pools that
// race to spend one token without the vault's write lock, one does.
func TestAuthStorage_SpendTokenRace(t *testing.T) {
	dbs := openRacers(t)
	ctx := t.Context()
	st := NewAuthStorage(dbs[0])
	for round := range 5 {
		id := fmt.Sprintf("tok%d", round)
		err := dbs[0].Update(ctx, func(tx cairn.Tx) error {
			return st.AddToken(ctx, tx, &auth.Token{ID: id, Name: id, Principal: cairn.User("ann"), Scopes: []auth.Scope{auth.Read},
				Created: time.Unix(1, 0), CreatedBy: cairn.User("ann"), Hash: []byte("h")})
		})
		if err != nil {
			t.Fatal(err)
		}
		wins := raceUnlocked(t, dbs, func(ctx context.Context, st *AuthStorage, tx cairn.Tx) (bool, error) {
			return st.SpendToken(ctx, tx, id, time.Unix(100, 0))
		})
		if wins != 1 {
			t.Errorf("round %d: %d of %d racers spent the token, want 1", round, wins, authRacers)
		}
	}
}

// TestAuthStorage_TakeCodeRace: of transactions on separate pools that
// race to take one authorization code without the vault's write lock, one
// does; the others find it gone (ENOTFOUND).
func TestAuthStorage_TakeCodeRace(t *testing.T) {
	dbs := openRacers(t)
	ctx := t.Context()
	st := NewAuthStorage(dbs[0])
	for round := range 5 {
		hash := fmt.Appendf(nil, "code %d", round)
		err := dbs[0].Update(ctx, func(tx cairn.Tx) error {
			return st.AddCode(ctx, tx, &auth.Code{Hash: hash, Client: "c", RedirectURI: "http://127.0.0.1/cb", Challenge: "x",
				Principal: cairn.User("ann"), Scopes: []auth.Scope{auth.Read}, Expires: time.Unix(100, 0)})
		})
		if err != nil {
			t.Fatal(err)
		}
		wins := raceUnlocked(t, dbs, func(ctx context.Context, st *AuthStorage, tx cairn.Tx) (bool, error) {
			_, err := st.TakeCode(ctx, tx, hash)
			if cairn.ErrorCode(err) == cairn.ENOTFOUND {
				return false, nil
			}
			return err == nil, err
		})
		if wins != 1 {
			t.Errorf("round %d: %d of %d racers took the code, want 1", round, wins, authRacers)
		}
	}
}
