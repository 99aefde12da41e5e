//go:build !unix

package worktree

import (
	"os"
	"path/filepath"
)

// renameInto renames the file src to rel in the tree root opened; where
// the system gives no renameat, by path.
func renameInto(src string, root *os.Root, rel string) error {
	return os.Rename(src, filepath.Join(root.Name(), rel))
}
