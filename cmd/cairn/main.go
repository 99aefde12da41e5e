// Command cairn is a knowledge base that agents maintain and people can
// trust: a versioned vault of Markdown pages and sources, with history,
// branches, structural merges, links, search and lint.
//
// Run cairn --help for the commands, and cairn demo for a tour.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"cairn/internal/confine"
)

func main() {
	gc := startCollector()
	// When cairn runs as the confinement wrapper of an agent, this applies
	// Landlock and becomes the agent; otherwise it returns at once.
	confine.MaybeExec()
	os.Exit(runMain(gc))
}

// runMain is the program: Main with the process's arguments, standard streams,
// garbage collector and a context that Ctrl-C and SIGTERM cancel.
func runMain(gc *collector) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// CAIRN_CPUPROFILE=FILE writes a CPU profile of the run, for
	// investigating performance (go tool pprof); a %p in FILE is the
	// process id, so that each of several processes keeps its own.
	if path := os.Getenv("CAIRN_CPUPROFILE"); path != "" {
		path = strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid()))
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	// CAIRN_MEMPROFILE=FILE writes a heap profile when the run ends: what
	// it allocated in all (go tool pprof -sample_index=alloc_space) and
	// what it still held.
	if path := os.Getenv("CAIRN_MEMPROFILE"); path != "" {
		path = strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid()))
		defer func() {
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	return mainProcess(ctx, gc, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}
