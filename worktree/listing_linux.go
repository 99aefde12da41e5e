package worktree

import (
	"os"

	"golang.org/x/sys/unix"
)

// listingsKept reports whether the file system holding the open folder
// dir sets a folder's modification and change times whenever an entry
// is created, removed or renamed in it, on this machine: the local file
// systems known to. Network and FUSE file systems may not, or may show
// another machine's changes late.
func listingsKept(dir *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(dir.Fd()), &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC,
		unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		return true
	}
	return false
}
