package worktree

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A whole-tree status lists every folder of the tree, and at 100k files
// listing and sorting the names is a fifth of its work. A folder whose
// names have not changed since a status listed it is not listed again:
// the names are kept, with the folder's identity and its modification
// and change times, in a file beside the status cache, and a folder that
// still has them (the same inode, modification time and change time) is
// given the names kept. Each name is still looked at (fstatat), as
// before: only the listing is saved.
//
// Creating, removing or renaming an entry sets its folder's modification
// and change times to the time of the change, and nothing but the clock
// can set the change time. A listing is kept only when both times were
// already older than a file's racy window (racyWindow) when the folder
// was listed: a change made later cannot carry the same times, however
// coarse the file system's clock. Only file systems known to keep a
// folder's times so are trusted (listingsKept); on any other every
// folder is listed, as git lists every folder unless its untracked cache
// is turned on. A listings file written at a time still to come (the
// clock set back since) is not trusted, nor a listing holding a name that
// is not one (a path, "..").

// listMagic starts a folder listings file; the digit is its format.
const listMagic = "cairn-folders-3\n"

// folderList is a folder's names as a walk listed them, with what the
// folder was then.
type folderList struct {
	id           fileID
	mtime, ctime int64 // unix nanoseconds
	// names are the names, sorted; or, for a listing read from the file
	// and not yet needed, nil, and raw holds them as written there (each
	// a length and its bytes), count of them: a walk decodes only the
	// listings it uses, each on the goroutine that reads its folder.
	names []string
	raw   string
	count int
}

// decode returns the names of a listing read from the file; false when
// one is not a name (a path, "..", empty) or they are not in order, and
// the listing cannot be used: each name is looked up in its folder, and
// one that is not a name would lead the walk elsewhere.
func (l *folderList) decode() ([]string, bool) {
	if l.names != nil || l.count == 0 {
		return l.names, true
	}
	r := &cacheReader{s: l.raw}
	names := make([]string, l.count)
	for i := range names {
		name := r.str()
		if name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 || strings.IndexByte(name, 0) >= 0 ||
			i > 0 && name <= names[i-1] {
			return nil, false
		}
		names[i] = name
	}
	if !r.done() {
		return nil, false
	}
	return names, true
}

// matches reports whether the folder now described by st is the one
// listed, with no entry created, removed or renamed since.
func (l *folderList) matches(st fileStat) bool {
	return l.id == st.id() && l.mtime == st.mtime && l.ctime == st.ctime
}

// listRacy is how long before a listing a folder's times must be for the
// listing to be kept: a file's racyWindow, unless a test set another.
func (m *Manager) listRacy() int64 {
	if m.racyLists > 0 {
		return int64(m.racyLists)
	}
	return racyWindow
}

// listPath is where tree t's folder listings live.
func (m *Manager) listPath(t *Tree) string {
	return filepath.Join(m.lockDir, fmt.Sprintf("status-%d.folders", t.ID))
}

// readListings reads tree t's kept folder listings by folder path; nil
// when there are none that can be trusted for t.
func (m *Manager) readListings(t *Tree) map[string]*folderList {
	f, err := os.Open(m.listPath(t))
	if err != nil {
		return nil
	}
	r := readChecked(f, listMagic)
	if r == nil || r.hash() != folderKey(t) {
		return nil
	}
	// Listings written at a time still to come: the clock was set back,
	// and a change now may carry the times a folder had when listed.
	if written := r.varint(); r.bad || written > m.Now().UnixNano() {
		return nil
	}
	n := r.count(1)
	out := make(map[string]*folderList, n)
	for range n {
		rel := r.str()
		l := &folderList{id: fileID{dev: r.uvarint(), ino: r.uvarint()}, mtime: r.varint(), ctime: r.varint()}
		l.count, l.raw = r.count(2), r.str() // a name takes two bytes at least
		if r.bad {
			return nil
		}
		out[rel] = l
	}
	if !r.done() {
		return nil
	}
	return out
}

// writeListings writes the folder listings of a walk of tree t, by
// folder path, unless they are those it was given (known): fresh is
// whether any of them was listed by the walk rather than reused.
func (m *Manager) writeListings(t *Tree, known, lists map[string]*folderList, fresh bool) error {
	if !fresh && len(known) == len(lists) {
		return nil // every one reused
	}
	rels := make([]string, 0, len(lists))
	for rel := range lists {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	key, now := folderKey(t), m.Now().UnixNano()
	var raw []byte // a folder's names as written: its length goes first
	return writeChecked(m.listPath(t), listMagic, func(w *cacheWriter) {
		w.Write(key[:])
		w.varint(now)
		w.uvarint(uint64(len(rels)))
		for _, rel := range rels {
			l := lists[rel]
			w.str(rel)
			w.uvarint(l.id.dev)
			w.uvarint(l.id.ino)
			w.varint(l.mtime)
			w.varint(l.ctime)
			if l.names == nil { // read from the file and not used: as it was
				w.uvarint(uint64(l.count))
				w.str(l.raw)
				continue
			}
			raw = raw[:0]
			for _, name := range l.names {
				raw = append(binary.AppendUvarint(raw, uint64(len(name))), name...)
			}
			w.uvarint(uint64(len(l.names)))
			w.uvarint(uint64(len(raw)))
			w.Write(raw)
		}
	})
}

// listings is what a walk is given and keeps of folder listings.
type listings struct {
	known map[string]*folderList // by folder path; nil: none
	// before is the time (unix nanoseconds) a folder's times must be
	// older than for its listing to be kept.
	before int64
}

// keep returns the listing of the folder open as dir, described by self,
// whose sorted names were just read; nil when it may not be kept.
func (ls *listings) keep(dir *os.File, self fileStat, names []string) *folderList {
	if self.mtime >= ls.before || self.ctime >= ls.before || self.id() == (fileID{}) || !listingsKept(dir) {
		return nil
	}
	return &folderList{id: self.id(), mtime: self.mtime, ctime: self.ctime, names: names}
}

// cached returns the kept listing of folder rel, described now by self,
// with its names, when it still holds and they decode.
func (ls *listings) cached(rel string, self fileStat) *folderList {
	l := ls.known[rel]
	if l == nil || !l.matches(self) {
		return nil
	}
	names, ok := l.decode()
	if !ok {
		return nil
	}
	return &folderList{id: l.id, mtime: l.mtime, ctime: l.ctime, names: names}
}
