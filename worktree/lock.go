package worktree

import (
	"fmt"
	"os"
	"syscall"
)

// noFollow makes opening a file fail when it is a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// lockFile takes an exclusive lock on path (creating it), so that two cairn
// processes never change one working tree at once; unlock releases it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
