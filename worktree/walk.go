package worktree

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
	"unsafe"

	"cairn"
)

// DefaultMaxFileSize is the largest file a folder may hold for cairn to
// read it: 64 MiB.
const DefaultMaxFileSize = 64 << 20

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

// ignoredName reports whether a file or folder name is left out of the
// vault: the vault's own database, version control, editor settings, OS
// litter and cairn's temporary files. It is asked of every name a walk
// finds, so it is a switch, not a map.
func ignoredName(name string) bool {
	switch name {
	case ".git", ".cairn", ".obsidian", ".trash", ".DS_Store", "Thumbs.db", "desktop.ini":
		return true
	}
	return strings.HasPrefix(name, tmpPrefix)
}

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
	// dev is the file's device, and dir the identity of the folder the
	// walk read it from, where the system has them (readFile).
	dev uint64
	dir fileID
}

// fileID is a file's identity on a system that has one: its device and
// inode numbers; zero where there is none.
type fileID struct{ dev, ino uint64 }

// id is the identity of the file st describes.
func (st fileStat) id() fileID { return fileID{st.dev, st.ino} }

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
	// lists, when set, gives the folders' kept listings and keeps the
	// new ones (see folderList).
	lists *listings
}

// Walk calls fn for every regular file under root that can be part of a
// vault, in lexical order (as filepath.WalkDir visits them). It never
// follows symbolic links, and reads nothing outside root. What it leaves
// out, other than ignored names, it reports as skips, in the same order:
// symbolic links, devices and sockets, names that are not valid vault paths
// (not UTF-8, control characters, too long), names that differ only in case
// from one already seen, files over the size limit, folders that cannot
// be read, and the entries of a folder that can be listed but not searched.
// Skips are in walk order of their paths, then by reason.
//
// Folders are read on every core, each file's metadata taken relative to
// its open folder; fn is called once the whole tree is read. The Path and
// Abs of a folder's files are cut from one buffer: a caller that keeps a
// path after the walk copies it (strings.Clone), or keeps every absolute
// path of its folder with it.
func Walk(root string, opts *WalkOptions, fn func(File) error) ([]Skip, error) {
	tree, err := walkTree(root, opts)
	if err != nil {
		return nil, err
	}
	if err := tree.each(func(f *File) error { return fn(*f) }); err != nil {
		return tree.skips, fmt.Errorf("walk %s: %w", root, err)
	}
	return tree.skips, nil
}

// walked is a finished walk: its files, in walk order, and its skips.
// The files stay in the lists of the folders they were read from, unless
// they had to be put in one list to be ordered or checked (files).
type walked struct {
	w     *walker
	rel   string // the walk's start
	files []File // nil: the folders' lists, already in walk order
	skips []Skip
}

// kept returns the listings of the folders read that may be kept, by
// folder path, and how many of them were reused rather than listed.
func (t *walked) kept() (lists map[string]*folderList, reused int) {
	lists = map[string]*folderList{}
	if t.w != nil {
		for rel, f := range t.w.folders {
			if f.list != nil {
				lists[rel] = f.list
			}
			if f.reused {
				reused++
			}
		}
	}
	return lists, reused
}

// each calls fn with every file in walk order, until it returns an error.
func (t *walked) each(fn func(*File) error) error {
	if t.files != nil {
		for i := range t.files {
			if err := fn(&t.files[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if t.w == nil {
		return nil
	}
	return t.w.visit(t.rel, fn)
}

// walkTree walks the tree as Walk does.
func walkTree(root string, opts *WalkOptions) (*walked, error) {
	if opts == nil {
		opts = &WalkOptions{}
	}
	w := &walker{max: opts.MaxFileSize, folders: map[string]*folderRead{}, lists: opts.lists}
	if w.max <= 0 {
		w.max = DefaultMaxFileSize
	}
	start, rel, id := root, "", fileID{}
	if opts.Under != "" {
		if Ignored(opts.Under) {
			return &walked{}, nil
		}
		// Nothing outside root: a folder on the way that is a symbolic
		// link is not followed, as in a walk of the whole tree, and the
		// folder read is the one found so.
		dir, err := openBeneath(root, opts.Under)
		switch {
		case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENOTDIR):
			return &walked{}, nil
		case err == nil:
			st, err := statFile(dir)
			dir.Close()
			if err != nil {
				return nil, fmt.Errorf("walk %s: %w", root, err)
			}
			id = st.id()
		}
		start, rel = filepath.Join(root, filepath.FromSlash(opts.Under)), opts.Under
	}
	if err := w.run(walkDir{abs: start, rel: rel, id: id}); err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	if opts.Leftovers != nil {
		*opts.Leftovers = append(*opts.Leftovers, w.leftovers...)
	}
	tree := &walked{w: w, rel: rel, skips: w.skips}
	// The folders' lists are read in place unless the whole needs a look:
	// at 100k files, one list of them is 10 MB copied.
	if w.foldedDirs || w.renamedDirs && !w.ordered(rel) {
		files := w.inOrder(rel)
		if !slices.IsSortedFunc(files, fileOrder) {
			// Sibling folders whose names are one in NFC interleave; of
			// two files with one path, the first read (in name order)
			// stays first.
			slices.SortStableFunc(files, fileOrder)
		}
		if w.foldedDirs {
			// Files under sibling folders whose names differ only in
			// case may clash: they are checked here, in the whole tree's
			// order; every other folder's own were checked as it was
			// read.
			files, tree.skips = dropFolded(files, tree.skips)
		}
		tree.files = files
	}
	slices.SortFunc(tree.skips, skipOrder)
	return tree, nil
}

// dropFolded drops from files, in walk order, each whose path differs only
// in case (or in Unicode normalization) from one before it, and adds it
// to skips.
func dropFolded(files []File, skips []Skip) ([]File, []Skip) {
	seen := make(map[string]string, len(files)) // folded path → path
	kept := files[:0]
	for _, f := range files {
		fold := cairn.FoldPath(f.Path)
		if other, dup := seen[fold]; dup {
			skips = append(skips, Skip{Path: f.Path, Reason: "differs only in case from " + other})
			continue
		}
		seen[fold] = f.Path
		kept = append(kept, f)
	}
	return kept, skips
}

// skipOrder orders skips by path in walk order, then by reason: one order
// however the folders' reads interleaved.
func skipOrder(a, b Skip) int {
	return cmp.Or(walkOrder(a.Path, b.Path), strings.Compare(a.Reason, b.Reason))
}

// foldsToItself reports whether a name on disk is ASCII without capitals:
// a name that CleanPath keeps as it is and that is its own case folding, so
// two such names in one folder cannot clash.
func foldsToItself(name string) bool {
	for i := range len(name) {
		if c := name[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// walkOrder compares vault paths in the order filepath.WalkDir visits
// them: byte by byte, a folder's separator before any other byte.
func walkOrder(a, b string) int {
	if a == b { // most often, merging a walk with what was there: a word at a time
		return 0
	}
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

func fileOrder(a, b File) int { return walkOrder(a.Path, b.Path) }

// walker reads a tree's folders on several goroutines.
type walker struct {
	max int64

	mu        sync.Mutex
	cond      *sync.Cond
	queue     []walkDir // folders to read
	pending   int       // folders queued or being read
	err       error     // the first error that ends the walk
	folders   map[string]*folderRead
	count     int // files found
	skips     []Skip
	leftovers []string
	// foldedDirs is set when a folder holds folders whose names differ
	// only in case: their files are checked against each other at the end.
	foldedDirs bool
	// renamedDirs is set when a folder's vault path is not its path on
	// disk (NFC differs): only then can the folders' lists, visited in
	// turn, come out of walk order.
	renamedDirs bool
	// lists, when set, gives folders' kept listings and keeps new ones.
	lists *listings
}

// walkDir is a folder to read: where it is, its vault path ("" for the
// walk's start at the root), and what its files' vault paths start with
// (its path in NFC and a slash), which orders it among its siblings.
// folded is set for a folder that has a sibling whose name differs only
// in case or normalization, and for the folders below it: their files are
// checked for clashes with the whole tree's, at the end.
//
// A folder is opened by its path after its parent was read: if it, or a
// folder on the way to it, was replaced by a symbolic link in between, what
// opens is not the folder seen (its identity differs) and is not read, as if
// it had been removed; so a walk reads nothing outside its root.
type walkDir struct {
	abs, rel, key string
	folded        bool
	// id is the folder's identity as its parent's read saw it (zero for
	// the walk's start): the folder opened must be that one.
	id fileID
}

// folderRead is what reading one folder found: its files and its folders,
// each in walk order. The whole walk's order is theirs merged, folder by
// folder, so no goroutine sorts every file of the tree.
type folderRead struct {
	files []File
	dirs  []walkDir
	// list is the folder's listing to keep (nil: none), and reused
	// whether it was kept from before instead of read.
	list   *folderList
	reused bool
}

// visit calls fn with the files of folder rel and of the folders below it,
// in walk order, until it returns an error.
func (w *walker) visit(rel string, fn func(*File) error) error {
	f := w.folders[rel]
	if f == nil {
		return nil // not read: removed while walking, or a skip
	}
	files, dirs := f.files, f.dirs
	for len(files) > 0 || len(dirs) > 0 {
		if len(dirs) == 0 || len(files) > 0 && walkOrder(files[0].Path, dirs[0].key) < 0 {
			if err := fn(&files[0]); err != nil {
				return err
			}
			files = files[1:]
			continue
		}
		if err := w.visit(dirs[0].rel, fn); err != nil {
			return err
		}
		dirs = dirs[1:]
	}
	return nil
}

// inOrder returns the files under folder rel in one list, in walk order.
func (w *walker) inOrder(rel string) []File {
	out := make([]File, 0, w.count)
	w.visit(rel, func(f *File) error {
		out = append(out, *f)
		return nil
	})
	return out
}

// ordered reports whether visit gives the files under folder rel in walk
// order: always, but where sibling folders' names are one in NFC.
func (w *walker) ordered(rel string) bool {
	disorder := errors.New("out of walk order")
	var prev *File
	return w.visit(rel, func(f *File) error {
		if prev != nil && walkOrder(prev.Path, f.Path) > 0 {
			return disorder
		}
		prev = f
		return nil
	}) == nil
}

// run reads the tree from folder start.
func (w *walker) run(start walkDir) error {
	w.cond = sync.NewCond(&w.mu)
	w.queue, w.pending = []walkDir{start}, 1
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
				found, skips, leftovers, err := w.read(d, d.abs == start.abs)
				w.mu.Lock()
				if found != nil {
					w.folders[d.rel] = found
					w.foldedDirs = w.foldedDirs || slices.ContainsFunc(found.dirs, func(d walkDir) bool { return d.folded })
					w.renamedDirs = w.renamedDirs || slices.ContainsFunc(found.dirs, func(d walkDir) bool {
						return len(d.key) != len(d.rel)+1 || !strings.HasPrefix(d.key, d.rel)
					})
					w.count += len(found.files)
					w.queue = append(w.queue, found.dirs...)
					w.pending += len(found.dirs)
				}
				w.skips = append(w.skips, skips...)
				w.leftovers = append(w.leftovers, leftovers...)
				w.pending--
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

// read reads one folder: the files it holds that can be vault files and
// the folders below it (nil when it cannot be read), the skips, and
// temporary files of dead syncs. A folder that cannot be read is a skip,
// unless it is the walk's start.
func (w *walker) read(d walkDir, start bool) (found *folderRead, skips []Skip, leftovers []string, err error) {
	open := openDir // the folder seen, not a link put in its place
	if start && d.id == (fileID{}) {
		open = os.Open // the root, wherever its path leads
	}
	dir, err := open(d.abs)
	if err == nil {
		defer dir.Close()
	}
	var self fileStat // the folder's identity, for its files (readFile)
	if err == nil {
		self, err = statFile(dir)
		if err == nil && d.id != (fileID{}) && d.id != self.id() {
			return nil, nil, nil, nil // replaced while walking: not the folder seen
		}
	}
	// Names only: the type of each comes from the stat every entry gets,
	// which leaves no entry object to allocate per file. A folder listed
	// before and unchanged since is not listed again.
	var names []string
	var kept *folderList
	if err == nil && w.lists != nil {
		kept = w.lists.cached(d.rel, self)
	}
	if kept != nil {
		names = kept.names
	} else if err == nil {
		names, err = dir.Readdirnames(-1)
	}
	switch {
	case err == nil:
	case start:
		return nil, nil, nil, err
	case errors.Is(err, fs.ErrPermission):
		return nil, []Skip{{Path: d.rel, Reason: "cannot be read: permission denied"}}, nil, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
		return nil, nil, nil, nil // removed, or replaced by a file or a link, while walking
	default:
		return nil, nil, nil, err
	}
	// In name order, so that the files come out in walk order (a name has
	// no separator, and the folder's path is the same for all) unless NFC
	// reorders some, which the check at the end finds. (A kept listing is
	// kept sorted.)
	reused := kept != nil
	if !reused {
		slices.Sort(names)
		if w.lists != nil {
			kept = w.lists.keep(dir, self, names)
		}
	}
	l := w.list(d, dir, self, names)
	if err := l.err; err != nil {
		return nil, nil, nil, err
	}
	found, skips, leftovers = &folderRead{files: l.files, dirs: l.dirs, list: kept, reused: reused}, l.skips, l.leftovers
	if !slices.IsSortedFunc(found.files, fileOrder) {
		slices.SortStableFunc(found.files, fileOrder)
	}
	if !l.plainFiles && !d.folded {
		found.files, skips = dropFolded(found.files, skips)
	}
	slices.SortStableFunc(found.dirs, func(a, b walkDir) int { return walkOrder(a.key, b.key) })
	if len(found.dirs) > 1 && !l.plainDirs {
		folds := make(map[string]int, len(found.dirs)) // fold → how many
		for _, d := range found.dirs {
			folds[cairn.FoldPath(d.key)]++
		}
		for i := range found.dirs {
			if folds[cairn.FoldPath(found.dirs[i].key)] > 1 {
				found.dirs[i].folded = true
			}
		}
	}
	return found, skips, leftovers, nil
}

// listing is what the entries of one folder, or of a part of its names,
// are: its files and folders in the order of the names, the skips and
// leftovers, whether every name of a file (of a folder) kept is ASCII
// without capitals (which CleanPath leaves as it is and which folds to
// itself, so no two of them can clash), and the error that ends the walk.
type listing struct {
	files                 []File
	dirs                  []walkDir
	skips                 []Skip
	leftovers             []string
	plainFiles, plainDirs bool
	err                   error
}

// splitNames is the number of names from which a folder's entries are
// taken on several goroutines: a folder of tens of thousands of files
// would otherwise end the walk on one core while the others wait.
const splitNames = 4096

// list takes the metadata of the entries names (sorted) of folder d, open
// as dir whose identity is self: on several goroutines when there are many.
func (w *walker) list(d walkDir, dir *os.File, self fileStat, names []string) listing {
	parts := min(runtime.GOMAXPROCS(0), len(names)/(splitNames/2))
	files := make([]File, len(names)) // a part's files go in its names' share
	if parts < 2 {
		return w.listPart(d, dir, self, names, files[:0])
	}
	lists := make([]listing, parts)
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := i*len(names)/parts, (i+1)*len(names)/parts
		wg.Go(func() {
			lists[i] = w.listPart(d, dir, self, names[lo:hi], files[lo:lo:hi])
		})
	}
	wg.Wait()
	l := listing{files: files[:0], plainFiles: true, plainDirs: true}
	for _, p := range lists {
		l.files = append(l.files, p.files...) // in place, unless an earlier part had entries that are not files
		l.dirs = append(l.dirs, p.dirs...)
		l.skips = append(l.skips, p.skips...)
		l.leftovers = append(l.leftovers, p.leftovers...)
		l.plainFiles = l.plainFiles && p.plainFiles
		l.plainDirs = l.plainDirs && p.plainDirs
		l.err = cmp.Or(l.err, p.err)
	}
	return l
}

// listPart is list of a part of the names, on this goroutine.
// The files are appended to files, which has room for one a name.
func (w *walker) listPart(d walkDir, dir *os.File, self fileStat, names []string, files []File) listing {
	sep := string(filepath.Separator)
	if strings.HasSuffix(d.abs, sep) {
		sep = ""
	}
	// Where the folder's place on disk ends with its vault path (always,
	// but on systems that separate folders otherwise), a file's vault path
	// is the end of where it is: one string for both.
	tail := d.rel != "" && sep == "/" && strings.HasSuffix(d.abs, "/"+d.rel)
	// Where each entry is on disk, all in one buffer: a string apiece is
	// an allocation a file, a tenth of a large status's work. The
	// buffer never grows, so each string cut from it stays put.
	size := 0
	for _, name := range names {
		size += len(d.abs) + len(sep) + len(name)
	}
	places := make([]byte, 0, size)
	l := listing{files: files, plainFiles: true, plainDirs: true}
	for _, name := range names {
		if ignoredName(name) {
			if strings.HasPrefix(name, tmpPrefix) {
				if st, err := statIn(dir, name); err == nil && !st.dir {
					l.leftovers = append(l.leftovers, d.abs+sep+name)
				}
			}
			continue
		}
		at := len(places)
		places = append(append(append(places, d.abs...), sep...), name...)
		abs := unsafe.String(&places[at], len(places)-at)
		rel := name
		switch {
		case tail:
			rel = abs[len(abs)-len(d.rel)-1-len(name):]
		case d.rel != "":
			rel = d.rel + "/" + name
		}
		// The folder's own path was checked as a name of its parent's.
		if !utf8.ValidString(name) {
			l.skips = append(l.skips, Skip{Path: strings.ToValidUTF8(rel, "\uFFFD"), Reason: "the name is not valid UTF-8"})
			continue
		}
		st, err := statIn(dir, name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed while walking
		case errors.Is(err, fs.ErrPermission):
			// A folder that can be listed but not searched: nothing in it
			// can be read.
			l.skips = append(l.skips, Skip{Path: rel, Reason: "cannot be read: permission denied"})
			continue
		case err != nil:
			l.err = err
			return l
		}
		switch {
		case st.symlink:
			l.skips = append(l.skips, Skip{Path: rel, Reason: "symbolic link (not followed)"})
			continue
		case st.dir:
			key := rel
			if p, err := cairn.CleanPath(rel); err == nil {
				key = p
			}
			l.dirs = append(l.dirs, walkDir{abs: abs, rel: rel, key: key + "/", folded: d.folded, id: st.id()})
			l.plainDirs = l.plainDirs && foldsToItself(name)
			continue
		case !st.regular:
			l.skips = append(l.skips, Skip{Path: rel, Reason: "not a regular file"})
			continue
		}
		p, perr := cairn.CleanPath(rel)
		if perr != nil {
			l.skips = append(l.skips, Skip{Path: rel, Reason: perr.Error()})
			continue
		}
		if st.size > w.max {
			l.skips = append(l.skips, Skip{Path: rel, Reason: fmt.Sprintf("%d MiB is over the %d MiB limit", st.size>>20, w.max>>20)})
			continue
		}
		f := File{Path: p, Abs: abs, Size: st.size, Mtime: st.mtime, Ctime: st.ctime, Ino: st.ino,
			dev: st.dev, dir: self.id()}
		if st.exec {
			f.Mode = cairn.ModeExecutable
		}
		l.files = append(l.files, f)
		l.plainFiles = l.plainFiles && foldsToItself(name)
	}
	return l
}

// ReadFile reads a file found by Walk, refusing one that became a link or
// grew past max (the walk's limit) since: what reads a walk's files reads
// them with it, so that nothing outside the walk's root is read. A file
// that is not the one the walk found (a save that renamed a new file into
// place, or a folder on the way replaced by a symbolic link to elsewhere)
// is read from its folder, if that is still the folder the walk read it
// from.
func ReadFile(f File, max int64) ([]byte, error) {
	fd, err := os.OpenFile(f.Abs, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer func() { fd.Close() }()
	st, err := statFile(fd)
	if err != nil {
		return nil, err
	}
	if f.Ino != 0 && (st.ino != f.Ino || st.dev != f.dev) && f.dir != (fileID{}) {
		fd.Close()
		if fd, err = reopen(f); err != nil {
			return nil, err
		}
		if st, err = statFile(fd); err != nil {
			return nil, err
		}
	}
	if !st.regular {
		return nil, fmt.Errorf("%s is no longer a regular file", f.Path)
	}
	if st.size > max {
		return nil, fmt.Errorf("%s grew past the %d MiB limit", f.Path, max>>20)
	}
	data, err := readSized(io.LimitReader(fd, max+1), st.size)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s grew past the %d MiB limit", f.Path, max>>20)
	}
	return data, nil
}

// readSized reads r to its end into a buffer of size bytes and one more,
// grown only when r holds more: the content of a file that did not change
// since its stat takes its length in memory, not the up to twice that of a
// buffer grown while reading (a bulk read holds many at once).
func readSized(r io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		switch {
		case err == io.EOF:
			return data, nil
		case err != nil:
			return nil, err
		case len(data) == cap(data):
			data = append(data, 0)[:len(data)]
		}
	}
}

// statBeneath reads the metadata of the file at vault path rel under root,
// following no symbolic link below root, and the identity of the folder
// holding it: a File made of them is read by ReadFile from that folder.
func statBeneath(root, rel string) (fileStat, fileID, error) {
	dir, err := openBeneath(root, path.Dir(rel))
	if err != nil {
		return fileStat{}, fileID{}, err
	}
	defer dir.Close()
	ds, err := statFile(dir)
	if err != nil {
		return fileStat{}, fileID{}, err
	}
	st, err := statIn(dir, path.Base(rel))
	return st, ds.id(), err
}

// reopen opens file f from the folder the walk read it from, failing when
// that folder was replaced since.
func reopen(f File) (*os.File, error) {
	dir, err := openDir(filepath.Dir(f.Abs))
	if err != nil {
		return nil, fmt.Errorf("%s: its folder changed while it was read: %w", f.Path, err)
	}
	defer dir.Close()
	st, err := statFile(dir)
	if err != nil {
		return nil, err
	}
	if st.id() != f.dir {
		return nil, fmt.Errorf("%s: its folder was replaced while it was read; run the command again", f.Path)
	}
	return openIn(dir, filepath.Base(f.Abs))
}
