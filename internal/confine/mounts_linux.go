package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// hiddenFolders are the folders that a confined agent with a mount
// namespace of its own finds empty, but for the files and folders its read
// and write sets name there: where other programs keep their Unix sockets
// (a database's, Docker's, D-Bus's, an SSH agent's, a session's under
// /run/user), their shared memory and temp files, and where people keep
// their homes (SSH control sockets). Landlock does not guard connecting to
// a socket by path before ABI 9, nor looking a path up at all.
func hiddenFolders() []string {
	return []string{"/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm", "/home", "/root"}
}

// hide mounts an empty tmpfs over each hidden folder, then mounts back,
// at the same paths, the files and folders of keep that lie there (as
// given and with symbolic links resolved), so that the agent finds what
// it may use where it was and nothing else there. A hidden folder that
// keep names as a whole stays as it is. The mounts must be private
// already (makePrivate), or the tmpfs would show on the machine.
func hide(keep []string) error {
	var hidden []string
	for _, h := range hiddenFolders() {
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue // missing here
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() && !slices.Contains(hidden, real) {
			hidden = append(hidden, real)
		}
	}
	var kept []string
	for _, k := range keep {
		kept = append(kept, forms(k)...)
	}
	for _, h := range outermost(hidden) {
		if slices.Contains(kept, h) {
			continue
		}
		var inside []string
		for _, k := range kept {
			if within(k, h) {
				inside = append(inside, k)
			}
		}
		if err := hideFolder(h, outermost(inside)); err != nil {
			return fmt.Errorf("hide %s: %w", h, err)
		}
	}
	return nil
}

// hideFolder mounts an empty tmpfs over dir and mounts back onto it the
// paths of keep, which lie in dir and not in each other.
func hideFolder(dir string, keep []string) error {
	type clone struct {
		path string
		fd   int
		dir  bool
	}
	var clones []clone
	defer func() {
		for _, c := range clones {
			unix.Close(c.fd)
		}
	}()
	// A detached copy of each mount to keep, taken before the tmpfs hides
	// it, with whatever is mounted beneath it.
	for _, p := range keep {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("copy the mount of %s: %w", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fmt.Errorf("stat %s: %w", p, err)
		}
		clones = append(clones, clone{p, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	for _, c := range clones {
		if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
			return fmt.Errorf("make a mount point for %s: %w", c.path, err)
		}
		var err error
		if c.dir {
			err = os.Mkdir(c.path, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(c.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				err = f.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("make a mount point for %s: %w", c.path, err)
		}
		if err := unix.MoveMount(c.fd, "", unix.AT_FDCWD, c.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount %s back: %w", c.path, err)
		}
	}
	return nil
}

// outermost returns the paths of paths that lie in no other of them, in
// their order; all are clean.
func outermost(paths []string) []string {
	var out []string
	for i, p := range paths {
		inner := false
		for j, o := range paths {
			if i != j && within(p, o) && (p != o || j < i) {
				inner = true
				break
			}
		}
		if !inner {
			out = append(out, p)
		}
	}
	return out
}
