package worktree_test

import (
	"context"
	"testing"
	"time"

	"cairn/store"
)

func TestRememberDoesNotWait(t *testing.T) {
	e := setup(t)
	e.write("a.md", "a")
	hold := make(chan struct{})
	held := make(chan struct{})
	go e.s.Update(context.Background(), func(tx *store.Tx) error { close(held); <-hold; return nil })
	<-held
	start := time.Now()
	if _, err := e.m.Status(e.ctx, e.wt); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("status waited %v for the write lock", d)
	}
	close(hold)
}
