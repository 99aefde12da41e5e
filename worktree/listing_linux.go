package worktree

import (
	"os"

	"golang.org/x/sys/unix"
)

// listingsKept reports whether the folder open as dir lists the same
// names until an entry is created, removed or renamed in it, and whether
// its file system then sets the folder's modification and change times,
// on this machine: the local file systems known to, for a folder that is
// not encrypted. Network and FUSE file systems may not keep the times, or
// may show another machine's changes late; an encrypted folder (fscrypt)
// lists other names once its key is added or removed, with its times as
// they were.
func listingsKept(dir *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(dir.Fd()), &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC:
		// The file systems with fscrypt among these.
		var stx unix.Statx_t
		if err := unix.Statx(int(dir.Fd()), "", unix.AT_EMPTY_PATH, 0, &stx); err != nil {
			return false
		}
		return stx.Attributes_mask&unix.STATX_ATTR_ENCRYPTED != 0 && stx.Attributes&unix.STATX_ATTR_ENCRYPTED == 0
	case unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		return true
	}
	return false
}
