package vault_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cairn"
	"cairn/vault"
)

// TestExplainBusy checks that the busy error names the process holding
// the vault and keeps the lock timeout as its cause.
func TestExplainBusy(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, vault.DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	// Process 1 is alive wherever the test runs: it stands for another
	// cairn process that marked itself busy.
	line := fmt.Sprintf("1\t%s\tcairn import big\n", time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(root, vault.DirName, "busy.1"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	cause := cairn.Errorf(cairn.EUNAVAILABLE, "database is locked")
	err := vault.ExplainBusy(root, cause)
	if !errors.Is(err, cause) {
		t.Errorf("ExplainBusy(%v) = %v, which does not wrap its cause", cause, err)
	}
	if code := cairn.ErrorCode(err); code != cairn.EUNAVAILABLE {
		t.Errorf("ExplainBusy: code %q, want %q", code, cairn.EUNAVAILABLE)
	}
	if hint := cairn.ErrorHint(err); hint == "" {
		t.Error("ExplainBusy: no hint")
	}
	other := errors.New("disk full")
	if got := vault.ExplainBusy(root, other); got != other {
		t.Errorf("ExplainBusy(%v) = %v, want the error as it was", other, got)
	}
}
