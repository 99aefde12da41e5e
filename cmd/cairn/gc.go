package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// startPercent is the garbage collector's setting from the process's start
// until its first collection: that collection waits until the heap holds
// 16 MB rather than 4. The program's packages allocate 3 MB as they
// initialise and the command tree more, so with the default nearly every
// command collected once before doing anything, 1.5-3 ms of commands that
// take 15-30 ms (BENCHMARKS.md); most commands now end before a first
// collection.
const startPercent = 400

// collector is the garbage collector's setting for one process: the
// start's, then the default or what the command chose. $GOGC, when set,
// overrides both.
type collector struct {
	mu     sync.Mutex
	chosen bool // a command set its own
}

// startCollector applies startPercent and arranges for the first
// collection to put back the default, unless the command has chosen its
// own setting by then or $GOGC is set.
func startCollector() *collector {
	c := &collector{}
	if os.Getenv("GOGC") != "" {
		return c
	}
	debug.SetGCPercent(startPercent)
	// A cleanup runs after the collection that finds its object
	// unreachable: the first one. 64 bytes, so that the object is not
	// packed with others that could keep it alive.
	runtime.AddCleanup(new([64]byte), (*collector).afterFirst, c)
	return c
}

func (c *collector) afterFirst() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.chosen {
		debug.SetGCPercent(100)
	}
}

// set is a command's own setting, percent as in debug.SetGCPercent,
// unless $GOGC says otherwise. c may be nil (Main run by a test): the
// setting is applied without more.
func (c *collector) set(percent int) {
	if os.Getenv("GOGC") != "" {
		return
	}
	if c == nil {
		debug.SetGCPercent(percent)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chosen = true
	debug.SetGCPercent(percent)
}
