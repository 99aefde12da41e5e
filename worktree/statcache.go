package worktree

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unsafe"

	"cairn"
	"cairn/store"
)

// The status cache is what a whole-tree status needs from the database and
// the store, in one file beside the database: every entry of a working
// tree's effective base (its base commit's files with the overrides
// applied), each with what its stat row says of the file on disk, sorted in
// the order a walk finds them. A status reads it and merges it with the
// sorted walk, instead of loading every stat row, listing the base tree and
// matching the three in maps.
//
// It is only a copy, of one base commit with one set of overrides, for one
// folder. When the tree's base or overrides have moved since (a commit, a
// sync, a file left alone), a status brings it up to them by the paths
// that differ (the two base trees' difference and the overrides of both),
// as a commit of a few files changes a few entries; for another folder, or
// when it cannot be read, a status makes it again from the database. A stat observation in it that another process has since replaced
// is still true of the file it describes (a changed file has another size
// or modification time, or is racy and read again), so an older copy
// costs reads, never a wrong status. It is written under a temporary name
// and renamed into place, and anything wrong with it on reading means
// there is none (it ends with a CRC-32C of the rest: a damaged copy is
// not read).

// cacheTemp starts the names of status caches being written.
const cacheTemp = ".cairn-tmp-status-"

// cacheMagic starts a status cache file; the digit is its format.
const cacheMagic = "cairn-status-3\n"

// How an entry's last observed content is written in a status cache: most
// are the base's own, and a hash written twice is a third of the file.
const (
	blobNone   = 0 // no stat row
	blobIsBase = 1 // the base's content
	blobHash   = 2 // another: its hash follows
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// cacheEntry is one entry of the effective base and the last observation
// of its file.
type cacheEntry struct {
	path     string
	base     cairn.Hash // the entry's content
	baseMode cairn.Mode
	// The stat row of the file on disk; a zero blob when there is none.
	size, mtime, checked int64
	blob                 cairn.Hash
}

// statCache is a working tree's status cache.
type statCache struct {
	base      cairn.Hash // the tree's base commit
	folder    cairn.Hash // folderKey of the tree's folder
	over      cairn.Hash // overridesKey of the overrides applied
	overPaths []string   // their paths
	entries   []cacheEntry
}

// cachePath is where tree t's status cache lives.
func (m *Manager) cachePath(t *Tree) string {
	return filepath.Join(m.lockDir, fmt.Sprintf("status-%d.cache", t.ID))
}

// folderKey names a tree's folder, so that a cache made for another (a
// working tree removed, another made with its id) is not trusted.
func folderKey(t *Tree) cairn.Hash { return sha256.Sum256([]byte(t.Path)) }

// overridesKey is a hash of a tree's overrides, paths and entries.
func overridesKey(over map[string]cairn.Entry) cairn.Hash {
	h := sha256.New()
	for _, p := range pathsOf(over) {
		e := over[p]
		fmt.Fprintf(h, "%s\x00%x\x00%d\x00", p, e.Blob[:], e.Mode)
	}
	return cairn.Hash(h.Sum(nil))
}

// readCacheFile reads the status cache in the open file f, which it
// closes; nil when it cannot be trusted as a cache (short, another
// format, damaged).
func readCacheFile(f *os.File) *statCache {
	r := readChecked(f, cacheMagic)
	if r == nil {
		return nil
	}
	c := &statCache{base: r.hash(), folder: r.hash(), over: r.hash()}
	for range r.count(1) {
		c.overPaths = append(c.overPaths, r.str())
	}
	n := r.count(len(cairn.Hash{}) + 6) // the least an entry takes
	c.entries = make([]cacheEntry, 0, n)
	for range n {
		e := cacheEntry{path: r.str(), base: r.hash(), baseMode: cairn.Mode(r.byte())}
		e.size, e.mtime, e.checked = r.varint(), r.varint(), r.varint()
		switch r.byte() {
		case blobNone:
		case blobIsBase:
			e.blob = e.base
		case blobHash:
			e.blob = r.hash()
		default:
			return nil
		}
		if r.bad || len(c.entries) > 0 && walkOrder(c.entries[len(c.entries)-1].path, e.path) >= 0 {
			return nil
		}
		c.entries = append(c.entries, e)
	}
	if !r.done() {
		return nil
	}
	return c
}

// readChecked reads the whole of the open file f, which it closes, and
// returns a reader of what follows magic; nil when the file is short,
// starts otherwise or fails its CRC-32C (its last four bytes).
func readChecked(f *os.File, magic string) *cacheReader {
	var data []byte
	info, err := f.Stat()
	if err == nil {
		data = make([]byte, info.Size())
		_, err = io.ReadFull(f, data)
	}
	f.Close()
	if err != nil || len(data) < len(magic)+4 || !bytes.HasPrefix(data, []byte(magic)) {
		return nil
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil
	}
	// The strings are cut from the file's bytes as they are, not copied
	// one by one (or all at once: at 100k files that copy is 12 MB of
	// fresh memory): data is never written after this.
	return &cacheReader{s: unsafe.String(unsafe.SliceData(body), len(body)), pos: len(magic)}
}

// cacheReader decodes a status cache; bad is set, and zero values given,
// once the data runs out or does not decode.
type cacheReader struct {
	s   string
	pos int
	bad bool
}

func (r *cacheReader) uvarint() uint64 {
	var v uint64
	for shift := 0; shift < 64 && r.pos < len(r.s); shift += 7 {
		b := r.s[r.pos]
		r.pos++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
	r.bad = true
	return 0
}

// varint decodes what binary.PutVarint wrote (zig-zag).
func (r *cacheReader) varint() int64 {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// count decodes a count of items of at least size bytes each: zero, and
// bad, when the rest cannot hold them.
func (r *cacheReader) count(size int) int {
	n := r.uvarint()
	if n > uint64((len(r.s)-r.pos)/size) {
		r.bad = true
		return 0
	}
	return int(n)
}

func (r *cacheReader) str() string {
	n := r.count(1)
	s := r.s[r.pos : r.pos+n]
	r.pos += n
	return s
}

func (r *cacheReader) hash() (h cairn.Hash) {
	if len(r.s)-r.pos < len(h) {
		r.bad = true
		return h
	}
	r.pos += copy(h[:], r.s[r.pos:])
	return h
}

// done reports whether everything decoded and nothing is left.
func (r *cacheReader) done() bool { return !r.bad && r.pos == len(r.s) }

func (r *cacheReader) byte() byte {
	if r.pos >= len(r.s) {
		r.bad = true
		return 0
	}
	r.pos++
	return r.s[r.pos-1]
}

// write writes the cache to path, under a temporary name renamed into
// place.
func (c *statCache) write(path string) error {
	return writeChecked(path, cacheMagic, func(w *cacheWriter) {
		w.Write(c.base[:])
		w.Write(c.folder[:])
		w.Write(c.over[:])
		w.uvarint(uint64(len(c.overPaths)))
		for _, p := range c.overPaths {
			w.str(p)
		}
		w.uvarint(uint64(len(c.entries)))
		for _, e := range c.entries {
			w.str(e.path)
			w.Write(e.base[:])
			w.WriteByte(byte(e.baseMode))
			w.varint(e.size)
			w.varint(e.mtime)
			w.varint(e.checked)
			switch {
			case e.blob.IsZero():
				w.WriteByte(blobNone)
			case e.blob == e.base:
				w.WriteByte(blobIsBase)
			default:
				w.WriteByte(blobHash)
				w.Write(e.blob[:])
			}
		}
	})
}

// cacheWriter encodes what cacheReader decodes.
type cacheWriter struct {
	*bufio.Writer
	buf [binary.MaxVarintLen64]byte
}

func (w *cacheWriter) uvarint(v uint64) { w.Write(w.buf[:binary.PutUvarint(w.buf[:], v)]) }
func (w *cacheWriter) varint(v int64)   { w.Write(w.buf[:binary.PutVarint(w.buf[:], v)]) }
func (w *cacheWriter) str(s string) {
	w.uvarint(uint64(len(s)))
	w.WriteString(s)
}

// writeChecked writes magic, what fill writes and a CRC-32C of both to
// path, under a temporary name in its folder renamed into place.
func writeChecked(path, magic string, fill func(*cacheWriter)) error {
	// A process killed while writing leaves its temporary file: those
	// older than any write takes are removed.
	if old, err := filepath.Glob(filepath.Join(filepath.Dir(path), cacheTemp+"*")); err == nil {
		for _, o := range old {
			if info, err := os.Stat(o); err == nil && time.Since(info.ModTime()) > time.Minute {
				os.Remove(o)
			}
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), cacheTemp+"*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a rename, there is nothing to remove
	sum := crc32.New(castagnoli)
	w := &cacheWriter{Writer: bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<16)}
	w.WriteString(magic)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(binary.Write(f, binary.BigEndian, sum.Sum32()), f.Close()); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// cacheOf makes the status cache of a whole-tree snapshot: its effective
// base, with the stat rows the scan loaded and the observations it made.
func (m *Manager) cacheOf(t *Tree, snap *snapshot) *statCache {
	c := &statCache{base: t.Base, folder: folderKey(t), over: overridesKey(snap.over), overPaths: pathsOf(snap.over),
		entries: make([]cacheEntry, 0, len(snap.base))}
	now := m.Now().UnixNano()
	for p, b := range snap.base {
		e := cacheEntry{path: p, base: b.Blob, baseMode: b.Mode}
		if d := snap.disk[p]; d != nil && d.fresh {
			e.size, e.mtime, e.checked, e.blob = d.Size, d.Mtime, now, d.blob
		} else if r, ok := snap.stats[p]; ok {
			e.size, e.mtime, e.checked, e.blob = r.Size, r.Mtime, r.Checked, r.Blob
		}
		c.entries = append(c.entries, e)
	}
	slices.SortFunc(c.entries, func(a, b cacheEntry) int { return walkOrder(a.path, b.path) })
	return c
}

// cachedStatus is the whole-tree status of t, with the overrides over,
// from its status cache and a walk of the folder; ok is false when there
// is no cache that can be trusted for t. Files the cache cannot vouch for
// are read; the cache is rewritten with what was read, and their stat rows
// remembered; racy are those of them modified within the racy window.
func (m *Manager) cachedStatus(ctx context.Context, t *Tree, over map[string]cairn.Entry) (st *Status, racy []string, ok bool, err error) {
	path := m.cachePath(t)
	cf, err := os.Open(path)
	if err != nil {
		return nil, nil, false, nil // none: the caller walks and makes one
	}
	// The cache is decoded while the tree is walked: at 100k files each
	// takes tens of milliseconds, and neither needs the other until the
	// merge. A cache that turns out unusable wastes the walk, which only
	// a damaged file or another folder's cache can cause.
	cached := make(chan *statCache, 1)
	go func() { cached <- readCacheFile(cf) }()
	max := m.maxSize()
	lists := &listings{known: m.readListings(t), before: m.Now().UnixNano() - m.listRacy()}
	tree, err := walkTree(t.Path, &WalkOptions{MaxFileSize: max, lists: lists})
	c := <-cached
	if err != nil {
		return nil, nil, false, err
	}
	// Best effort, as the cache below: listings not kept are read again.
	kept, reused := tree.kept()
	m.reusedLists.Add(int64(reused))
	m.writeListings(t, lists.known, kept, len(kept) > reused)
	if c == nil || c.folder != folderKey(t) {
		return nil, nil, false, nil
	}
	moved := c.base != t.Base || c.over != overridesKey(over)
	if moved {
		if err := m.follow(ctx, t, c, over); err != nil {
			return nil, nil, false, err
		}
	}
	st = &Status{Tree: t, Skipped: tree.skips}
	type pair struct {
		d *onDisk
		e *cacheEntry
	}
	var both []pair // the files read again, with their entries
	var toRead []*onDisk
	// Both in walk order: merged as the walk's folders are visited.
	j := 0
	tree.each(func(f *File) error {
		for ; j < len(c.entries) && walkOrder(c.entries[j].path, f.Path) < 0; j++ { // in the base only
			st.Changes = append(st.Changes, Change{Path: c.entries[j].path, Kind: cairn.Deleted})
		}
		if j == len(c.entries) || c.entries[j].path != f.Path { // on disk only
			st.Changes = append(st.Changes, Change{Path: f.Path, Kind: cairn.Added})
			return nil
		}
		e := &c.entries[j]
		j++
		r := FileStat{Size: e.size, Mtime: e.mtime, Checked: e.checked, Blob: e.blob}
		switch {
		case e.blob.IsZero() || !r.vouches(*f):
			d := &onDisk{File: *f}
			toRead = append(toRead, d)
			both = append(both, pair{d, e})
		case e.blob != e.base || f.Mode != e.baseMode:
			st.Changes = append(st.Changes, Change{Path: f.Path, Kind: cairn.Modified})
		}
		return nil
	})
	for ; j < len(c.entries); j++ {
		st.Changes = append(st.Changes, Change{Path: c.entries[j].path, Kind: cairn.Deleted})
	}
	if err := readAll(ctx, toRead, max, nil); err != nil {
		return nil, nil, false, err
	}
	now := m.Now().UnixNano()
	trusted := 0 // fresh observations the next status can trust
	for _, p := range both {
		if p.d.blob != p.e.base || p.d.Mode != p.e.baseMode {
			st.Changes = append(st.Changes, Change{Path: p.d.Path, Kind: cairn.Modified})
		}
		if p.d.fresh {
			p.e.size, p.e.mtime, p.e.checked, p.e.blob = p.d.Size, p.d.Mtime, now, p.d.blob
			if p.d.Mtime < now-racyWindow {
				trusted++
			}
		}
	}
	for k := range st.Changes {
		_, st.Changes[k].Incoming = over[st.Changes[k].Path]
	}
	slices.SortFunc(st.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	// Best effort: a cache that is not rewritten, or rows that are not
	// remembered, only make the next status read again. Files modified
	// within the racy window (just edited) are read again by the next
	// status whatever is written, so they alone do not rewrite the cache.
	if trusted > 0 || moved {
		c.write(path)
	}
	if len(toRead) > 0 {
		m.remember(ctx, t, toRead)
	}
	return st, racyOf(toRead, now), true, nil
}

// follow brings cache c to tree t's base and overrides over: the entries of
// the paths that differ between the two base trees, and of the overrides
// of either, are taken again from the new effective base; the others, and
// every observation of a file, are kept.
func (m *Manager) follow(ctx context.Context, t *Tree, c *statCache, over map[string]cairn.Entry) error {
	moved, err := m.basesDiffer(ctx, c.base, t.Base)
	if err != nil {
		return err
	}
	newTree, err := m.treeOf(ctx, t.Base)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	for _, p := range moved {
		changed[p] = true
	}
	for _, p := range c.overPaths {
		changed[p] = true
	}
	for p := range over {
		changed[p] = true
	}
	at := make(map[string]int, len(changed)) // path → index of its entry
	for p := range changed {
		if i, found := slices.BinarySearchFunc(c.entries, p, func(e cacheEntry, p string) int { return walkOrder(e.path, p) }); found {
			at[p] = i
		}
	}
	drop := map[int]bool{}
	var added []cacheEntry
	for p := range changed {
		e, overridden := over[p]
		if !overridden {
			got, err := m.s.Get(ctx, newTree, p)
			switch {
			case err == nil:
				e = got
			case cairn.ErrorCode(err) != cairn.ENOTFOUND:
				return err
			}
		}
		present := !e.Blob.IsZero()
		i, had := at[p]
		switch {
		case had && present:
			c.entries[i].base, c.entries[i].baseMode = e.Blob, e.Mode
		case had:
			drop[i] = true
		case present:
			added = append(added, cacheEntry{path: p, base: e.Blob, baseMode: e.Mode})
		}
	}
	if len(drop) > 0 || len(added) > 0 {
		kept := make([]cacheEntry, 0, len(c.entries)-len(drop)+len(added))
		for i, e := range c.entries {
			if !drop[i] {
				kept = append(kept, e)
			}
		}
		kept = append(kept, added...)
		slices.SortFunc(kept, func(a, b cacheEntry) int { return walkOrder(a.path, b.path) })
		c.entries = kept
	}
	c.base, c.over, c.overPaths = t.Base, overridesKey(over), pathsOf(over)
	return nil
}

// basesDiffer returns the paths whose files differ between the trees of
// two base commits (none when they are the same).
func (m *Manager) basesDiffer(ctx context.Context, from, to cairn.Hash) ([]string, error) {
	if from == to {
		return nil, nil
	}
	oldTree, err := m.treeOf(ctx, from)
	if err != nil {
		return nil, err
	}
	newTree, err := m.treeOf(ctx, to)
	if err != nil || oldTree == newTree {
		return nil, err
	}
	diff, err := m.s.Diff(ctx, oldTree, newTree, &store.DiffOptions{NoRenames: true})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(diff))
	for i, ch := range diff {
		out[i] = cmp.Or(ch.New.Path, ch.Old.Path)
	}
	return out, nil
}

// pathsOf returns the paths of overrides, sorted.
func pathsOf(over map[string]cairn.Entry) []string {
	return slices.Sorted(maps.Keys(over))
}
