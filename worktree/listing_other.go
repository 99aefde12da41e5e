//go:build !linux

package worktree

import "os"

// listingsKept reports whether the file system holding the open folder
// dir is known to set a folder's times whenever an entry changes in it:
// none is, on this system, so every folder is listed.
func listingsKept(dir *os.File) bool { return false }
