package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/postgres"
	"cairn/postgres/pgtest"
)

// TestAdmitStorage_EventOrder: events written at once by processes on
// separate pools are numbered in the order they commit, so that a reader
// that resumes after the last event it saw never misses one (the event
// stream of cairn serve resumes that way).
func TestAdmitStorage_EventOrder(t *testing.T) {
	const writers, each = 6, 25
	url := pgtest.URL(t)
	dbs := make([]*postgres.DB, writers)
	for i := range dbs {
		db, err := postgres.Open(t.Context(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	ctx := t.Context()
	reader := postgres.NewAdmitStorage(dbs[0])

	var wg sync.WaitGroup
	for w, db := range dbs {
		st := postgres.NewAdmitStorage(db)
		wg.Go(func() {
			for i := range each {
				err := db.Update(ctx, func(tx cairn.Tx) error {
					if err := st.AddEvent(ctx, tx, admit.EventRow{Time: time.Now(), Kind: "test", Subject: fmt.Sprintf("w%d.%d", w, i)}); err != nil {
						return err
					}
					// Commits that could overtake one another if ids were
					// not handed out under the write lock.
					time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	seen := map[int64]bool{}
	var last int64
	// read reads the events after the last one seen; false on an error,
	// or on a gap that an event committed later might fill.
	read := func() bool {
		evs, err := reader.Events(ctx, last, 1000)
		if err != nil {
			t.Error(err)
			return false
		}
		for _, e := range evs {
			if e.ID != last+1 {
				t.Errorf("read event %d after event %d: a gap", e.ID, last)
				return false
			}
			seen[e.ID], last = true, e.ID
		}
		return true
	}
	ok := true
	for running := true; running && ok; {
		select {
		case <-done:
			running = false
		default:
		}
		ok = read()
	}
	<-done
	if !ok || !read() {
		return
	}
	if len(seen) != writers*each {
		t.Errorf("the reader saw %d events, want %d", len(seen), writers*each)
	}
	if n, err := reader.LastEvent(ctx); err != nil || n != writers*each {
		t.Errorf("LastEvent() = %d, %v, want %d", n, err, writers*each)
	}
}
