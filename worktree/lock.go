package worktree

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// noFollow makes opening a file fail when it is a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// errLocked is what tryLockFile returns when another process holds the
// lock.
var errLocked = errors.New("locked by another process")

// lockFile takes an exclusive lock on path (creating it), so that two cairn
// processes never change one working tree at once; unlock releases it.
func lockFile(path string) (unlock func(), err error) { return flock(path, 0) }

// tryLockFile is lockFile without waiting: errLocked when another process
// holds the lock.
func tryLockFile(path string) (unlock func(), err error) { return flock(path, syscall.LOCK_NB) }

func flock(path string, how int) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|how); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
