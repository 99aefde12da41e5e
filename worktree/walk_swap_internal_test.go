//go:build unix

package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// swapForLink moves the folder at dir aside and puts a symbolic link to
// target in its place.
func swapForLink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+"-moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// vaultAndOutside makes a folder "vault" (the root) and one "outside" it,
// holding files (slash paths under either, to contents).
func vaultAndOutside(t *testing.T, files map[string]string) (root, outside string) {
	t.Helper()
	tmp := t.TempDir()
	root, outside = filepath.Join(tmp, "vault"), filepath.Join(tmp, "outside")
	for _, dir := range []string{root, outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range files {
		abs := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// A folder the walk found and then opens by path may have been replaced by
// a symbolic link in between, itself or a folder on the way to it: what
// opens is then not read, and nothing outside the root is.
func TestWalk_FolderSwappedBeforeRead(t *testing.T) {
	root, outside := vaultAndOutside(t, map[string]string{
		"vault/a/x.md":      "inside",
		"vault/p/q/y.md":    "inside",
		"outside/x.md":      "secret",
		"outside/p2/q/y.md": "secret",
	})
	w := &walker{max: DefaultMaxFileSize, folders: map[string]*folderRead{}}
	top, _, _, err := w.read(walkDir{abs: root}, true)
	if err != nil || len(top.dirs) != 2 {
		t.Fatalf("read root = %+v, %v", top, err)
	}
	a, p := top.dirs[0], top.dirs[1]
	mid, _, _, err := w.read(p, false)
	if err != nil || len(mid.dirs) != 1 {
		t.Fatalf("read p = %+v, %v", mid, err)
	}
	q := mid.dirs[0]

	// The folder itself became a link: not read, as if removed (the next
	// walk reports the link).
	swapForLink(t, filepath.Join(root, "a"), outside)
	found, skips, _, err := w.read(a, false)
	if err != nil || found != nil || len(skips) != 0 {
		t.Errorf("read of a folder swapped for a link = %+v, %v, %v; want nothing read", found, skips, err)
	}
	// A folder on the way became a link to a folder of the same shape:
	// what opens is another folder, not read.
	swapForLink(t, filepath.Join(root, "p"), filepath.Join(outside, "p2"))
	found, skips, _, err = w.read(q, false)
	if err != nil || found != nil || len(skips) != 0 {
		t.Errorf("read of a folder whose parent was swapped for a link = %+v, %v, %v; want nothing read", found, skips, err)
	}
}

// A file is read after the walk found it: if a folder on the way was
// replaced by a link to elsewhere meanwhile, the read fails rather than
// read outside the root; a file saved by renaming a new one into place is
// read, new content and all.
func TestReadFile_ReplacedSinceWalk(t *testing.T) {
	root, outside := vaultAndOutside(t, map[string]string{
		"vault/a/x.md": "inside",
		"vault/b/z.md": "old",
		"outside/x.md": "secret",
	})
	files, _, err := walkFiles(root, nil)
	if err != nil || len(files) != 2 {
		t.Fatalf("walk = %+v, %v", files, err)
	}
	x, z := files[0], files[1]

	swapForLink(t, filepath.Join(root, "a"), outside)
	data, err := ReadFile(x, DefaultMaxFileSize)
	if err == nil || strings.Contains(string(data), "secret") {
		t.Errorf("read through a folder swapped for a link = %q, %v; want an error", data, err)
	} else if !strings.Contains(err.Error(), "a/x.md") {
		t.Errorf("error %q does not name the file", err)
	}

	tmpFile := filepath.Join(root, "b", ".z.md.new")
	if err := os.WriteFile(tmpFile, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmpFile, filepath.Join(root, "b", "z.md")); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(z, DefaultMaxFileSize); err != nil || string(data) != "new" {
		t.Errorf("read of a file saved by rename = %q, %v; want the new content", data, err)
	}
}
