package worktree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"cairn"
)

// DefaultMaxFileSize is the largest file a folder may hold for cairn to
// read it: 64 MiB.
const DefaultMaxFileSize = 64 << 20

// ignored are names that are never part of a vault, wherever they are.
var ignored = map[string]bool{
	".git": true, ".cairn": true, ".obsidian": true, ".trash": true,
	".DS_Store": true, "Thumbs.db": true, "desktop.ini": true,
}

// Ignored reports whether a vault path is left out of the vault: the
// vault's own database, version control, editor settings and OS litter.
func Ignored(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if ignoredName(seg) {
			return true
		}
	}
	return false
}

// tmpPrefix starts the names of the temporary files a sync writes before
// renaming them into place.
const tmpPrefix = ".cairn-tmp-"

func ignoredName(name string) bool { return ignored[name] || strings.HasPrefix(name, tmpPrefix) }

// File is one file found in a folder.
type File struct {
	Path  string // vault path: slash separated, clean, NFC
	Abs   string // where it is on disk
	Size  int64
	Mtime int64 // unix nanoseconds
	Mode  cairn.Mode
	// Ctime and Ino are the file's change time (unix nanoseconds) and
	// inode number, from a walk on a system that has them; else 0.
	Ctime int64
	Ino   uint64
}

// Skip is a file a walk left out, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// WalkOptions adjust Walk. The zero value gives the defaults.
type WalkOptions struct {
	// MaxFileSize skips larger files. Default DefaultMaxFileSize.
	MaxFileSize int64
	// Leftovers, when set, collects the temporary files of syncs that a
	// dead process left behind (absolute paths).
	Leftovers *[]string
	// Under, when set, walks only that folder of root (a clean vault path);
	// the files' paths stay relative to root.
	Under string
	// Materialized, for ReadFolder, is what MaterializeSnapshot wrote in
	// the folder: a file still as written is not read again (see
	// Snapshot).
	Materialized *Snapshot
}

// Walk calls fn for every regular file under root that can be part of a
// vault, in lexical order (as filepath.WalkDir visits them). It never
// follows symbolic links, and reads nothing outside root. What it leaves
// out, other than ignored names, it reports as skips, in the same order:
// symbolic links, devices and sockets, names that are not valid vault paths
// (not UTF-8, control characters, too long), names that differ only in case
// from one already seen, files over the size limit, and folders that cannot
// be read.
//
// Folders are read on every core, each file's metadata taken relative to
// its open folder; fn is called once the whole tree is read.
func Walk(root string, opts *WalkOptions, fn func(File) error) ([]Skip, error) {
	if opts == nil {
		opts = &WalkOptions{}
	}
	w := &walker{max: opts.MaxFileSize}
	if w.max <= 0 {
		w.max = DefaultMaxFileSize
	}
	start, rel := root, ""
	if opts.Under != "" {
		if Ignored(opts.Under) {
			return nil, nil
		}
		start, rel = filepath.Join(root, filepath.FromSlash(opts.Under)), opts.Under
	}
	if err := w.run(start, rel); err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	if opts.Leftovers != nil {
		*opts.Leftovers = append(*opts.Leftovers, w.leftovers...)
	}
	slices.SortFunc(w.files, func(a, b File) int { return walkOrder(a.Path, b.Path) })
	var skips []Skip
	seen := make(map[string]string, len(w.files)) // folded path → path
	keep := make([]bool, len(w.files))
	for i, f := range w.files {
		fold := cairn.FoldPath(f.Path)
		if other, dup := seen[fold]; dup {
			skips = append(skips, Skip{Path: f.Path, Reason: "differs only in case from " + other})
			continue
		}
		seen[fold], keep[i] = f.Path, true
	}
	skips = append(skips, w.skips...)
	slices.SortStableFunc(skips, func(a, b Skip) int { return walkOrder(a.Path, b.Path) })
	for i, f := range w.files {
		if !keep[i] {
			continue
		}
		if err := fn(f); err != nil {
			return skips, fmt.Errorf("walk %s: %w", root, err)
		}
	}
	return skips, nil
}

// walkOrder compares vault paths in the order filepath.WalkDir visits
// them: byte by byte, a folder's separator before any other byte.
func walkOrder(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x == '/' {
			return -1
		}
		if y == '/' {
			return 1
		}
		return int(x) - int(y)
	}
	return len(a) - len(b)
}

// walker reads a tree's folders on several goroutines.
type walker struct {
	max int64

	mu        sync.Mutex
	cond      *sync.Cond
	queue     []walkDir // folders to read
	pending   int       // folders queued or being read
	err       error     // the first error that ends the walk
	files     []File
	skips     []Skip
	leftovers []string
}

// walkDir is a folder to read: where it is, and its vault path ("" for the
// walk's start at the root).
type walkDir struct{ abs, rel string }

// run reads the tree from start, whose vault path is rel.
func (w *walker) run(start, rel string) error {
	w.cond = sync.NewCond(&w.mu)
	w.queue, w.pending = []walkDir{{start, rel}}, 1
	var wg sync.WaitGroup
	for range max(2, 2*runtime.GOMAXPROCS(0)) { // reading folders waits on the disk
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				w.mu.Lock()
				for len(w.queue) == 0 && w.pending > 0 && w.err == nil {
					w.cond.Wait()
				}
				if w.pending == 0 || w.err != nil {
					w.mu.Unlock()
					return
				}
				d := w.queue[len(w.queue)-1]
				w.queue = w.queue[:len(w.queue)-1]
				w.mu.Unlock()
				files, skips, dirs, leftovers, err := w.read(d, d.abs == start)
				w.mu.Lock()
				w.files, w.skips = append(w.files, files...), append(w.skips, skips...)
				w.leftovers = append(w.leftovers, leftovers...)
				w.queue = append(w.queue, dirs...)
				w.pending += len(dirs) - 1
				if err != nil && w.err == nil {
					w.err = err
				}
				w.cond.Broadcast()
				w.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return w.err
}

// read reads one folder: the files it holds that can be vault files, the
// skips, the folders below it, and temporary files of dead syncs. A folder
// that cannot be read is a skip, unless it is the walk's start.
func (w *walker) read(d walkDir, start bool) (files []File, skips []Skip, dirs []walkDir, leftovers []string, err error) {
	dir, err := os.Open(d.abs)
	if err == nil {
		defer dir.Close()
	}
	var ents []fs.DirEntry
	if err == nil {
		ents, err = dir.ReadDir(-1)
	}
	switch {
	case err == nil:
	case start:
		return nil, nil, nil, nil, err
	case errors.Is(err, fs.ErrPermission):
		return nil, []Skip{{Path: d.rel, Reason: "cannot be read: permission denied"}}, nil, nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil, nil, nil // removed while walking
	default:
		return nil, nil, nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		rel := name
		if d.rel != "" {
			rel = d.rel + "/" + name
		}
		abs := filepath.Join(d.abs, name)
		if ignoredName(name) {
			if !e.IsDir() && strings.HasPrefix(name, tmpPrefix) {
				leftovers = append(leftovers, abs)
			}
			continue
		}
		if !utf8.ValidString(rel) {
			skips = append(skips, Skip{Path: strings.ToValidUTF8(rel, "\uFFFD"), Reason: "the name is not valid UTF-8"})
			continue
		}
		typ := e.Type()
		switch {
		case typ&fs.ModeSymlink != 0:
			skips = append(skips, Skip{Path: rel, Reason: "symbolic link (not followed)"})
			continue
		case e.IsDir():
			dirs = append(dirs, walkDir{abs, rel})
			continue
		case !typ.IsRegular():
			skips = append(skips, Skip{Path: rel, Reason: "not a regular file"})
			continue
		}
		p, perr := cairn.CleanPath(rel)
		if perr != nil {
			skips = append(skips, Skip{Path: rel, Reason: perr.Error()})
			continue
		}
		st, err := statIn(dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while walking
		}
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if !st.regular {
			skips = append(skips, Skip{Path: rel, Reason: "not a regular file"})
			continue
		}
		if st.size > w.max {
			skips = append(skips, Skip{Path: rel, Reason: fmt.Sprintf("%d MiB is over the %d MiB limit", st.size>>20, w.max>>20)})
			continue
		}
		f := File{Path: p, Abs: abs, Size: st.size, Mtime: st.mtime, Ctime: st.ctime, Ino: st.ino}
		if st.exec {
			f.Mode = cairn.ModeExecutable
		}
		files = append(files, f)
	}
	return files, skips, dirs, leftovers, nil
}

// readFile reads a file found by Walk, refusing one that became a link or
// grew past the limit since.
func readFile(f File, max int64) ([]byte, error) {
	fd, err := os.OpenFile(f.Abs, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	info, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is no longer a regular file", f.Path)
	}
	if info.Size() > max {
		return nil, fmt.Errorf("%s grew past the %d MiB limit", f.Path, max>>20)
	}
	data, err := io.ReadAll(io.LimitReader(fd, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s grew past the %d MiB limit", f.Path, max>>20)
	}
	return data, nil
}
