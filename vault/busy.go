package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cairn"
)

// busyFile records the cairn process doing a long operation on the vault,
// so that another process that cannot get the write lock can say who holds
// it.
const busyFile = "busy"

// MarkBusy records that this process runs op (a command line) until the
// returned function is called.
func (v *Vault) MarkBusy(op string) (done func()) {
	path := filepath.Join(v.Root, DirName, fmt.Sprintf("%s.%d", busyFile, os.Getpid()))
	line := fmt.Sprintf("%d\t%s\t%s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339), op)
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		return func() {}
	}
	return func() { os.Remove(path) }
}

// Holders describes the live processes marked busy on the vault at root.
func Holders(root string) []string {
	matches, _ := filepath.Glob(filepath.Join(root, DirName, busyFile+".*"))
	var out []string
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		parts := strings.SplitN(strings.TrimSpace(string(data)), "\t", 3)
		if len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
			os.Remove(m) // the process is gone
			continue
		}
		out = append(out, fmt.Sprintf("process %d (%s, since %s)", pid, parts[2], parts[1]))
	}
	return out
}

// ExplainBusy adds to a lock-timeout error which process holds the vault.
func (v *Vault) ExplainBusy(err error) error {
	return ExplainBusy(v.Root, err)
}

// ExplainBusy adds to a lock-timeout error which process holds the vault
// at root; the lock timeout stays its cause (errors.Is and errors.As reach
// it).
func ExplainBusy(root string, err error) error {
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
		return err
	}
	hs := Holders(root)
	if len(hs) == 0 {
		return err
	}
	return &cairn.Error{
		Code:    cairn.EUNAVAILABLE,
		Message: "the vault is busy: " + strings.Join(hs, "; ") + " holds its write lock",
		Hint:    "Wait for it to finish and try again; reading commands (search, show, log) work meanwhile.",
		Err:     err,
	}
}
