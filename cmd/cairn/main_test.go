package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"cairn/internal/confine"
)

// TestMain lets the test binary run as the cairn command, for testscript
// transcripts and for the child processes of the crash and concurrency
// tests.
func TestMain(m *testing.M) {
	confine.MaybeExec()
	testscript.Main(m, map[string]func(){
		"cairn": func() { os.Exit(runMain()) },
	})
}

// TestScripts runs the command-line transcripts in testdata/script: each
// is a session of real cairn commands on real files, with their output.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("CAIRN_USER", "tester")
			return nil
		},
	})
}
