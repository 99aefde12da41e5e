//go:build unix

package worktree

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// renameInto renames the file src (outside the tree: a staging folder)
// to rel in the tree root opened: into the folder of rel as root resolves
// it, so that a folder swapped for a symbolic link cannot receive it.
func renameInto(src string, root *os.Root, rel string) error {
	dir, err := root.Open(filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := unix.Renameat(unix.AT_FDCWD, src, int(dir.Fd()), filepath.Base(rel)); err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: filepath.Join(root.Name(), rel), Err: err}
	}
	return nil
}
