//go:build unix

package worktree

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
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
// following a symbolic link: relative to the folder, so the kernel does
// not walk the whole path again for every file.
func statIn(dir *os.File, name string) (fileStat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileStat{}, &os.PathError{Op: "fstatat", Path: name, Err: err}
		}
		break
	}
	return fileStat{
		size: st.Size, mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec, ino: st.Ino, dev: uint64(st.Dev),
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG, exec: st.Mode&0o111 != 0,
		dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, symlink: st.Mode&unix.S_IFMT == unix.S_IFLNK,
	}, nil
}

// statFile reads the metadata of an open file.
func statFile(f *os.File) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileStat{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return fileStat{
		size: st.Size, mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec, ino: st.Ino, dev: uint64(st.Dev),
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG, exec: st.Mode&0o111 != 0,
	}, nil
}

// nonBlock opens a file without waiting: a FIFO or a device put where a
// file was opens at once, and its type is checked before anything is read
// (reads of a regular file ignore the flag).
const nonBlock = unix.O_NONBLOCK

// openDir opens the folder at abs for reading, failing when its last
// element is a symbolic link or no longer a folder.
func openDir(abs string) (*os.File, error) {
	return os.OpenFile(abs, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
}

// openAt opens name in the open folder dir with flags, never following a
// symbolic link.
func openAt(dir *os.File, name string, flags int) (*os.File, error) {
	for {
		fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "openat", Path: filepath.Join(dir.Name(), name), Err: err}
		}
		return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), nil
	}
}

// openIn opens the file name in the open folder dir, failing when it is a
// symbolic link.
func openIn(dir *os.File, name string) (*os.File, error) {
	return openAt(dir, name, unix.O_RDONLY|nonBlock)
}

// openBeneath opens the folder at vault path rel ("" for root) under root
// one element at a time, failing when any element below root is a
// symbolic link or not a folder: what opens is under root, whatever
// changes meanwhile.
func openBeneath(root, rel string) (*os.File, error) {
	dir, err := os.Open(root)
	if err != nil || rel == "" || rel == "." {
		return dir, err
	}
	for seg := range strings.SplitSeq(rel, "/") {
		next, err := openAt(dir, seg, unix.O_RDONLY|unix.O_DIRECTORY)
		dir.Close()
		if err != nil {
			return nil, err
		}
		dir = next
	}
	return dir, nil
}
