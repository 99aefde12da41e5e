package confine

import (
	"os"
	"os/user"
	"slices"
	"testing"
)

// TestHomes checks that without HOME the person's home is still known,
// from the password database, so that CheckRead refuses a read set that
// holds it.
func TestHomes(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		t.Skipf("no home in the password database: %v", err)
	}
	t.Setenv("HOME", "")
	os.Unsetenv("HOME")
	if got := homes(); !slices.Contains(got, u.HomeDir) {
		t.Errorf("homes() without HOME = %q, want it to hold %s", got, u.HomeDir)
	}
}
