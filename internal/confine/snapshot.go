package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// fileState is what a snapshot remembers of one path: enough to notice that
// it was written, replaced, renamed over, re-linked or had its mode changed.
// The change time (ctime) catches a write whose modification time was set
// back afterwards.
type fileState struct {
	mode       fs.FileMode
	size       int64
	mtime      int64 // nanoseconds; not kept for folders
	ctime      int64 // nanoseconds; not kept for folders
	ino        uint64
	link       string // a symbolic link's target
	unreadable bool   // the path could not be examined or listed
}

// snapshot walks the roots without following symbolic links (a root that is
// itself a link to a folder is followed) and records every path but those
// in skip and beneath them. A root that does not exist has no entries.
//
// A folder's own times and size are not kept: they change with every entry
// created or removed in it, which the entries themselves show.
func snapshot(roots []string, skip map[string]bool) map[string]fileState {
	files := make(map[string]fileState)
	for _, root := range roots {
		root = filepath.Clean(root)
		start := root
		if fi, err := os.Stat(root); err == nil && fi.IsDir() {
			// With a trailing slash, Lstat resolves a root that is a
			// link, and WalkDir descends into it.
			start = root + string(filepath.Separator)
		}
		filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
			path = filepath.Clean(path)
			if skip[path] {
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if err != nil {
				// Gone meanwhile, or unreadable: the latter is
				// recorded, so that a chmod of a folder shows.
				if !errors.Is(err, fs.ErrNotExist) {
					st := files[path]
					st.unreadable = true
					files[path] = st
				}
				return nil
			}
			info, err := d.Info()
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					files[path] = fileState{unreadable: true}
				}
				return nil
			}
			files[path] = stateOf(path, info)
			return nil
		})
	}
	return files
}

// stateOf returns the state of path, whose Lstat is info.
func stateOf(path string, info fs.FileInfo) fileState {
	st := fileState{mode: info.Mode()}
	sys, _ := info.Sys().(*syscall.Stat_t)
	if sys != nil {
		st.ino = sys.Ino
	}
	if info.IsDir() {
		return st
	}
	st.size = info.Size()
	st.mtime = info.ModTime().UnixNano()
	if sys != nil {
		st.ctime = ctimeOf(sys)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		st.link, _ = os.Readlink(path)
	}
	return st
}

// skipSet returns the paths to leave out of snapshots, each both as given
// (cleaned) and with symbolic links resolved, since a Watch folder may name
// it either way.
func skipSet(paths []string) map[string]bool {
	skip := make(map[string]bool, 2*len(paths))
	for _, p := range paths {
		skip[filepath.Clean(p)] = true
		if real, err := filepath.EvalSymlinks(p); err == nil {
			skip[real] = true
		}
	}
	return skip
}

// changed returns the paths created, changed or deleted between two
// snapshots, sorted; nil when there are none.
func changed(before, after map[string]fileState) []string {
	var paths []string
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			paths = append(paths, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}
