package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// TestMain lets the test binary run as a child process of a test (see
// casChild, admitChild, statusChild): several processes on one vault, as the CLI, a worker and a
// server would be.
func TestMain(m *testing.M) {
	if os.Getenv(casChildEnv) != "" {
		os.Exit(casChild())
	}
	if os.Getenv(admitChildEnv) != "" {
		os.Exit(admitChild())
	}
	if os.Getenv(statusChildEnv) != "" {
		os.Exit(statusChild())
	}
	os.Exit(m.Run())
}

// runChildren runs n child processes of this test binary at once, child c
// with the environment env(c) added, and returns the JSON lines each
// printed, decoded as T. A child that fails, or prints a line that does
// not decode, fails the test.
func runChildren[T any](t *testing.T, n int, env func(c int) []string) [][]T {
	t.Helper()
	var wg sync.WaitGroup
	reports := make([][]T, n)
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), env(c)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child %d: %v\n%s", c, err, stderr.String())
				return
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				var r T
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Errorf("child %d: %v: %s", c, err, sc.Text())
					return
				}
				reports[c] = append(reports[c], r)
			}
		}()
	}
	wg.Wait()
	return reports
}
