//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseListed checks the fallback of closeInherited for kernels
// without CLOSE_RANGE_CLOEXEC: a descriptor without close-on-exec, as one
// inherited from a shell, gets it.
func TestCloseListed(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "inherited.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := f.Fd()
	if _, err := unix.FcntlInt(fd, unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	if err := closeListed(); err != nil {
		t.Fatalf("closeListed() = %v", err)
	}
	if flags, err := unix.FcntlInt(fd, unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("descriptor %d has flags %#x, %v after closeListed; want FD_CLOEXEC", fd, flags, err)
	}
}
