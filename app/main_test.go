package app_test

import (
	"os"
	"testing"
)

// TestMain lets the test binary run as a child process of a test (see
// casChild, admitChild): several processes on one vault, as the CLI, a worker and a
// server would be.
func TestMain(m *testing.M) {
	if os.Getenv(casChildEnv) != "" {
		os.Exit(casChild())
	}
	if os.Getenv(admitChildEnv) != "" {
		os.Exit(admitChild())
	}
	os.Exit(m.Run())
}
