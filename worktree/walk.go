package worktree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
}

// Walk calls fn for every regular file under root that can be part of a
// vault, in lexical order. It never follows symbolic links, and reads
// nothing outside root. What it leaves out, other than ignored names, it
// reports as skips: symbolic links, devices and sockets, names that are not
// valid vault paths (not UTF-8, control characters, too long), names that
// differ only in case from one already seen, and files over the size limit.
func Walk(root string, opts *WalkOptions, fn func(File) error) ([]Skip, error) {
	if opts == nil {
		opts = &WalkOptions{}
	}
	max := opts.MaxFileSize
	if max <= 0 {
		max = DefaultMaxFileSize
	}
	var skips []Skip
	seen := map[string]string{} // folded path → path
	start := root
	if opts.Under != "" {
		if Ignored(opts.Under) {
			return nil, nil
		}
		start = filepath.Join(root, filepath.FromSlash(opts.Under))
	}
	err := filepath.WalkDir(start, func(abs string, d fs.DirEntry, err error) error {
		if abs == start {
			return err
		}
		rel, rerr := filepath.Rel(root, abs)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				skips = append(skips, Skip{Path: rel, Reason: "cannot be read: permission denied"})
				return nil
			}
			return err
		}
		if ignoredName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			if opts.Leftovers != nil && strings.HasPrefix(d.Name(), tmpPrefix) {
				*opts.Leftovers = append(*opts.Leftovers, abs)
			}
			return nil
		}
		if !utf8.ValidString(rel) {
			skips = append(skips, Skip{Path: strings.ToValidUTF8(rel, "\uFFFD"), Reason: "the name is not valid UTF-8"})
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		typ := d.Type()
		switch {
		case typ&fs.ModeSymlink != 0:
			skips = append(skips, Skip{Path: rel, Reason: "symbolic link (not followed)"})
			return nil
		case d.IsDir():
			return nil
		case !typ.IsRegular():
			skips = append(skips, Skip{Path: rel, Reason: "not a regular file"})
			return nil
		}
		p, perr := cairn.CleanPath(rel)
		if perr != nil {
			skips = append(skips, Skip{Path: rel, Reason: perr.Error()})
			return nil
		}
		if other, dup := seen[cairn.FoldPath(p)]; dup {
			skips = append(skips, Skip{Path: rel, Reason: "differs only in case from " + other})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if info.Size() > max {
			skips = append(skips, Skip{Path: rel, Reason: fmt.Sprintf("%d MiB is over the %d MiB limit", info.Size()>>20, max>>20)})
			return nil
		}
		seen[cairn.FoldPath(p)] = p
		f := File{Path: p, Abs: abs, Size: info.Size(), Mtime: info.ModTime().UnixNano()}
		if info.Mode()&0o111 != 0 {
			f.Mode = cairn.ModeExecutable
		}
		return fn(f)
	})
	if err != nil {
		return skips, fmt.Errorf("walk %s: %w", root, err)
	}
	return skips, nil
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
