package worktree_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"cairn"
	"cairn/worktree"
)

// TestWalk_SameAsSequential builds random hostile trees (folders and files
// whose names differ only in case or in Unicode normalization, "a" beside
// "a.b" and "a-b", symbolic
// links to files and folders, names that are not UTF-8 or not vault
// paths, files over the limit, ignored folders, a dead sync's temporary
// files, executables) and checks that the walk, which reads folders on
// several goroutines, gives the files, their order, their metadata and the
// skips of the sequential filepath.WalkDir walk it replaced (refWalk), for
// the whole tree and for a folder of it.
func TestWalk_SameAsSequential(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	names := []string{"a", "A", "a.b", "a-b", "b", "B.md", "b.md", "c.md", "Ä.md", "ä.md", "a\u0308.md", "ä", "a\u0308", ".obsidian", ".cairn-tmp-x", "big.bin", "run.sh", "bad\xffname", "con\x01trol.md"}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 3))
			root := t.TempDir()
			outside := t.TempDir()
			os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644)
			var fill func(dir string, depth int)
			fill = func(dir string, depth int) {
				for range 2 + rng.IntN(6) {
					name := names[rng.IntN(len(names))]
					p := filepath.Join(dir, name)
					switch k := rng.IntN(10); {
					case k < 2 && depth < 3:
						os.Mkdir(p, 0o755)
						fill(p, depth+1)
					case k == 2:
						os.Symlink(filepath.Join(outside, "secret.md"), p)
					case k == 3:
						os.Symlink(outside, p)
					case name == "big.bin":
						os.WriteFile(p, make([]byte, 3<<10), 0o644)
					case name == "run.sh":
						os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
					default:
						os.WriteFile(p, []byte(name), 0o644)
					}
				}
			}
			fill(root, 0)
			for _, under := range []string{"", "a", "A/a.b"} {
				opts := func(left *[]string) *worktree.WalkOptions {
					return &worktree.WalkOptions{MaxFileSize: 2 << 10, Leftovers: left, Under: under}
				}
				if under != "" {
					if info, err := os.Lstat(filepath.Join(root, under)); err != nil || !info.IsDir() {
						continue
					}
				}
				var want, got []worktree.File
				var wantLeft, gotLeft []string
				wantSkips, wantErr := refWalk(root, opts(&wantLeft), func(f worktree.File) error { want = append(want, f); return nil })
				gotSkips, gotErr := worktree.Walk(root, opts(&gotLeft), func(f worktree.File) error { got = append(got, f); return nil })
				if (wantErr == nil) != (gotErr == nil) {
					t.Fatalf("under %q: error %v, want %v", under, gotErr, wantErr)
				}
				if diff := cmp.Diff(want, got, ignoreIdentity); diff != "" {
					t.Errorf("under %q: files (-sequential +walk):\n%s", under, diff)
				}
				if diff := cmp.Diff(wantSkips, gotSkips); diff != "" {
					t.Errorf("under %q: skips (-sequential +walk):\n%s", under, diff)
				}
				slicesSort(wantLeft)
				slicesSort(gotLeft)
				if diff := cmp.Diff(wantLeft, gotLeft); diff != "" {
					t.Errorf("under %q: leftovers (-sequential +walk):\n%s", under, diff)
				}
			}
		})
	}
}

// TestWalk_FoldedFolders: sibling folders whose names differ only in case
// or in normalization hold files whose paths then collide, and names that
// NFC makes plain ASCII (U+037E GREEK QUESTION MARK is ';') collide with
// those names; the walk keeps the first of each in its order, and says
// whom each other clashes with, as the sequential walk does. Each tree
// alone, so that no check of the whole tree hides a folder's.
func TestWalk_FoldedFolders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
		skips int
	}{
		{"case and NFC folders", []string{"Notes/a.md", "notes/A.md", "notes/a.md", "notes/b.md", "a\u0308/x.md", "\u00e4/X.md", "\u00e4/y.md", "\u00c4/y.md", "z/Z.md"}, 4},
		{"files NFC makes ASCII", []string{"a;.md", "a\u037e.md", "b.md"}, 1},
		{"folders NFC makes ASCII", []string{"x;/a.md", "x\u037e/a.md", "q`/b.md", "q\u1fef/b.md"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, p := range tc.paths {
				os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
				os.WriteFile(filepath.Join(root, p), []byte(p), 0o644)
			}
			if tc.skips == 4 {
				// A skip of another kind with the path of a clash.
				os.Symlink(filepath.Join(root, "z", "Z.md"), filepath.Join(root, "\u00e4", "x.md"))
				tc.skips++
			}
			gotSkips := sameAsSequential(t, root)
			if len(gotSkips) != tc.skips {
				t.Errorf("skips = %v, want %d", gotSkips, tc.skips)
			}
		})
	}
}

// TestWalk_UnderLink: a walk of one folder reads nothing outside the
// root, even when the folder, or one on the way to it, is a symbolic link
// to a folder outside.
func TestWalk_UnderLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(outside, "sub"), 0o755)
	os.WriteFile(filepath.Join(outside, "sub", "secret.md"), []byte("secret"), 0o644)
	os.Mkdir(filepath.Join(root, "a"), 0o755)
	os.Symlink(outside, filepath.Join(root, "link"))
	os.Symlink(outside, filepath.Join(root, "a", "link"))
	for _, under := range []string{"link", "link/sub", "a/link/sub"} {
		var got []worktree.File
		skips, err := worktree.Walk(root, &worktree.WalkOptions{Under: under}, func(f worktree.File) error { got = append(got, f); return nil })
		if err != nil || len(got) > 0 {
			t.Errorf("walk under %s = %v, %v, %v; want nothing from outside the root", under, got, skips, err)
		}
	}
}

// TestWalk_LargeFolder: a folder large enough for its entries to be taken
// on several goroutines is walked as the sequential walk does, case
// clashes, links and folders across the shares included.
func TestWalk_LargeFolder(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "big")
	os.Mkdir(big, 0o755)
	for i := range 9000 {
		if i%1500 == 3 {
			sub := filepath.Join(big, fmt.Sprintf("p%04d", i))
			os.Mkdir(sub, 0o755)
			os.WriteFile(filepath.Join(sub, "inside.md"), []byte("in"), 0o644)
		}
		name := fmt.Sprintf("p%04d.md", i)
		if i%500 == 7 {
			name = fmt.Sprintf("P%04d.md", i-7) // clashes with another share's file
		}
		os.WriteFile(filepath.Join(big, name), []byte(name), 0o644)
		if i%997 == 0 {
			os.Symlink(filepath.Join(big, name), filepath.Join(big, "link"+name))
		}
	}
	gotSkips := sameAsSequential(t, root)
	if len(gotSkips) < 6 {
		t.Errorf("skips = %v, want the case clashes and the links", gotSkips)
	}
}

func slicesSort(s []string) { sorted(s) }

// sameAsSequential walks the whole of root and fails t unless the files and
// the skips are those of the sequential walk; it returns the skips.
func sameAsSequential(t *testing.T, root string) []worktree.Skip {
	t.Helper()
	var want, got []worktree.File
	wantSkips, err := refWalk(root, nil, func(f worktree.File) error { want = append(want, f); return nil })
	if err != nil {
		t.Fatal(err)
	}
	gotSkips, err := worktree.Walk(root, nil, func(f worktree.File) error { got = append(got, f); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ignoreIdentity); diff != "" {
		t.Errorf("files (-sequential +walk):\n%s", diff)
	}
	if diff := cmp.Diff(wantSkips, gotSkips); diff != "" {
		t.Errorf("skips (-sequential +walk):\n%s", diff)
	}
	return gotSkips
}

// refWalk is the sequential walk Walk replaced, kept as the reference for
// its results.
func refWalk(root string, opts *worktree.WalkOptions, fn func(worktree.File) error) ([]worktree.Skip, error) {
	if opts == nil {
		opts = &worktree.WalkOptions{}
	}
	max := opts.MaxFileSize
	if max <= 0 {
		max = worktree.DefaultMaxFileSize
	}
	var skips []worktree.Skip
	var files []worktree.File
	seen := map[string]string{} // folded path → path
	start := root
	if opts.Under != "" {
		if worktree.Ignored(opts.Under) {
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
				skips = append(skips, worktree.Skip{Path: rel, Reason: "cannot be read: permission denied"})
				return nil
			}
			return err
		}
		if worktree.Ignored(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			if opts.Leftovers != nil && strings.HasPrefix(d.Name(), ".cairn-tmp-") {
				*opts.Leftovers = append(*opts.Leftovers, abs)
			}
			return nil
		}
		if !utf8.ValidString(rel) {
			skips = append(skips, worktree.Skip{Path: strings.ToValidUTF8(rel, "\uFFFD"), Reason: "the name is not valid UTF-8"})
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		typ := d.Type()
		switch {
		case typ&fs.ModeSymlink != 0:
			skips = append(skips, worktree.Skip{Path: rel, Reason: "symbolic link (not followed)"})
			return nil
		case d.IsDir():
			return nil
		case !typ.IsRegular():
			skips = append(skips, worktree.Skip{Path: rel, Reason: "not a regular file"})
			return nil
		}
		p, perr := cairn.CleanPath(rel)
		if perr != nil {
			skips = append(skips, worktree.Skip{Path: rel, Reason: perr.Error()})
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
			skips = append(skips, worktree.Skip{Path: rel, Reason: fmt.Sprintf("%d MiB is over the %d MiB limit", info.Size()>>20, max>>20)})
			return nil
		}
		f := worktree.File{Path: p, Abs: abs, Size: info.Size(), Mtime: info.ModTime().UnixNano()}
		if info.Mode()&0o111 != 0 {
			f.Mode = cairn.ModeExecutable
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return skips, fmt.Errorf("walk %s: %w", root, err)
	}
	// The walk's order is its paths' (in NFC), not the names' on disk: a
	// name NFC changes may move. Of two files whose paths differ only in
	// case or normalization, the first in that order stays.
	slices.SortStableFunc(files, func(a, b worktree.File) int { return worktree.WalkOrder(a.Path, b.Path) })
	for _, f := range files {
		if other, dup := seen[cairn.FoldPath(f.Path)]; dup {
			skips = append(skips, worktree.Skip{Path: f.Path, Reason: "differs only in case from " + other})
			continue
		}
		seen[cairn.FoldPath(f.Path)] = f.Path
		if err := fn(f); err != nil {
			return skips, fmt.Errorf("walk %s: %w", root, err)
		}
	}
	slices.SortStableFunc(skips, func(a, b worktree.Skip) int {
		if o := worktree.WalkOrder(a.Path, b.Path); o != 0 {
			return o
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return skips, nil
}

// ignoreIdentity leaves out what the sequential walk does not read: a
// file's change time and inode number, which only Snapshot uses.
var ignoreIdentity = cmp.Options{cmpopts.IgnoreFields(worktree.File{}, "Ctime", "Ino"), cmpopts.IgnoreUnexported(worktree.File{})}
