//go:build !unix

package worktree

import (
	"io/fs"
	"os"
	"path/filepath"
)

// fileStat is what a walk needs of a file's metadata.
type fileStat struct {
	size, mtime   int64  // bytes; unix nanoseconds
	ctime         int64  // unix nanoseconds; 0 where the system has none
	ino, dev      uint64 // 0 where the system has none
	regular, exec bool
	dir, symlink  bool
}

// statIn reads the metadata of name in the open folder dir, without
// following a symbolic link.
func statIn(dir *os.File, name string) (fileStat, error) {
	info, err := os.Lstat(filepath.Join(dir.Name(), name))
	if err != nil {
		return fileStat{}, err
	}
	return fileStat{
		size: info.Size(), mtime: info.ModTime().UnixNano(),
		regular: info.Mode().IsRegular(), exec: info.Mode()&0o111 != 0,
		dir: info.IsDir(), symlink: info.Mode()&fs.ModeSymlink != 0,
	}, nil
}

// statFile reads the metadata of an open file: no change time or inode
// here, so a Snapshot trusts none of it.
func statFile(f *os.File) (fileStat, error) {
	info, err := f.Stat()
	if err != nil {
		return fileStat{}, err
	}
	return fileStat{
		size: info.Size(), mtime: info.ModTime().UnixNano(),
		regular: info.Mode().IsRegular(), exec: info.Mode()&0o111 != 0,
	}, nil
}

// nonBlock is 0: opening never waits here.
const nonBlock = 0

// openDir opens the folder at abs for reading.
func openDir(abs string) (*os.File, error) { return os.Open(abs) }

// openBeneath opens the folder at vault path rel ("" for root) under root.
func openBeneath(root, rel string) (*os.File, error) {
	return os.Open(filepath.Join(root, filepath.FromSlash(rel)))
}

// openIn opens the file name in the open folder dir.
func openIn(dir *os.File, name string) (*os.File, error) {
	return os.Open(filepath.Join(dir.Name(), name))
}
