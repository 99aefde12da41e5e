package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// gcPercent reads the collector's setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// afterCollections collects until cond holds (a cleanup runs on its own
// goroutine after the collection) or a second has passed.
func afterCollections(cond func() bool) bool {
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		runtime.GC()
		if cond() {
			return true
		}
	}
	return cond()
}

func TestCollector(t *testing.T) {
	was := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(was) })
	t.Setenv("GOGC", "")

	t.Run("the start's setting ends with the first collection", func(t *testing.T) {
		startCollector()
		if p := gcPercent(); p != startPercent {
			t.Fatalf("after the start: %d, want %d", p, startPercent)
		}
		if !afterCollections(func() bool { return gcPercent() == 100 }) {
			t.Fatalf("after collections: %d, want the default 100", gcPercent())
		}
	})
	t.Run("a command's own setting outlives the first collection", func(t *testing.T) {
		c := startCollector()
		c.set(75)
		if afterCollections(func() bool { return gcPercent() != 75 }) {
			t.Fatalf("after collections: %d, want the command's 75", gcPercent())
		}
	})
	t.Run("GOGC overrides both", func(t *testing.T) {
		t.Setenv("GOGC", "50")
		debug.SetGCPercent(50) // as the runtime read it at the start
		c := startCollector()
		c.set(400)
		if p := gcPercent(); p != 50 {
			t.Fatalf("with GOGC=50: %d", p)
		}
	})
}
