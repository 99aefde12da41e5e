package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"cairn"
)

// FormatVersion is the version of the object encodings and tree chunking
// this package reads and writes; the backend records it in the database.
const FormatVersion = 1

// Hash prefixes: domain separation between object kinds (docs/format.md).
var (
	blobPrefix     = []byte("cairn.blob\x00")
	nodePrefix     = []byte("cairn.node\x00")
	commitPrefix   = []byte("cairn.commit\x00")
	boundaryPrefix = []byte("cairn.boundary\x00")
)

// Tree chunking parameters (docs/format.md). Changing them changes every
// tree hash.
const (
	boundaryBits = 6  // an expected 2^6 = 64 items per node
	maxLevel     = 64 // decode refuses deeper trees
	// maxNodeBytes bounds a node: it ends at the item that brings its
	// items' encodings to this many bytes, boundary or not.
	maxNodeBytes = 256 << 10
)

// BlobHash returns the name of a blob with the given content.
func BlobHash(data []byte) cairn.Hash { return cairn.HashBytes(blobPrefix, data) }

func nodeHash(enc []byte) cairn.Hash   { return cairn.HashBytes(nodePrefix, enc) }
func commitHash(enc []byte) cairn.Hash { return cairn.HashBytes(commitPrefix, enc) }

// objectHash recomputes the name of an object from its kind and bytes.
func objectHash(kind cairn.ObjectKind, data []byte) cairn.Hash {
	switch kind {
	case cairn.KindBlob:
		return BlobHash(data)
	case cairn.KindNode:
		return nodeHash(data)
	case cairn.KindCommit:
		return commitHash(data)
	}
	return cairn.Hash{}
}

// keyLevel returns the boundary level of a tree key: the number of trailing
// zero bits of the first 8 bytes (little endian) of SHA-256(boundary prefix
// || key), divided by boundaryBits. An item ends a node at level L when
// keyLevel(key) > L.
func keyLevel(key string) int {
	h := cairn.HashBytes(boundaryPrefix, []byte(key))
	v := binary.LittleEndian.Uint64(h[:8])
	if v == 0 {
		return 64 / boundaryBits
	}
	return bits.TrailingZeros64(v) / boundaryBits
}

// item is one entry of a tree node. In a leaf (level 0) it is a file: key,
// path (empty when equal to the key), blob hash, size and mode. In an
// internal node it refers to a child: key is the last key of the child's
// subtree, hash the child node, size the number of files under it.
type item struct {
	key  string
	path string
	hash cairn.Hash
	size uint64
	mode cairn.Mode
}

// filePath returns the path of a leaf item.
func (it item) filePath() string {
	if it.path == "" {
		return it.key
	}
	return it.path
}

// node is a decoded tree node.
type node struct {
	level int
	items []item
	hash  cairn.Hash
	enc   []byte // canonical encoding, kept for nodes not yet written
}

// count returns the number of files under n.
func (n *node) count() uint64 {
	if n.level == 0 {
		return uint64(len(n.items))
	}
	var c uint64
	for _, it := range n.items {
		c += it.size
	}
	return c
}

// encodeNode returns the canonical encoding of a node:
//
//	node     = uvarint(level) uvarint(n) item*n
//	leaf     = str(key) str(path or "") uvarint(mode) hash[32] uvarint(size)
//	internal = str(key) hash[32] uvarint(count)
//	str      = uvarint(len) bytes
func encodeNode(level int, items []item) []byte {
	size := 20
	for _, it := range items {
		size += len(it.key) + len(it.path) + 32 + 24
	}
	b := make([]byte, 0, size)
	b = binary.AppendUvarint(b, uint64(level))
	b = binary.AppendUvarint(b, uint64(len(items)))
	for _, it := range items {
		b = appendString(b, it.key)
		if level == 0 {
			b = appendString(b, it.path)
			b = binary.AppendUvarint(b, uint64(it.mode))
			b = append(b, it.hash[:]...)
			b = binary.AppendUvarint(b, it.size)
		} else {
			b = append(b, it.hash[:]...)
			b = binary.AppendUvarint(b, it.size)
		}
	}
	return b
}

func newNode(level int, items []item) *node {
	enc := encodeNode(level, items)
	return &node{level: level, items: items, hash: nodeHash(enc), enc: enc}
}

// decodeNode parses a node's canonical encoding. It checks structure (keys
// strictly increasing, no trailing bytes, sane lengths); Verify also checks
// that the encoding is canonical and the chunking consistent.
func decodeNode(h cairn.Hash, b []byte) (*node, error) {
	d := decoder{b: b}
	level := d.uvarint()
	n := d.uvarint()
	if d.err == nil && (level > maxLevel || n > uint64(len(b))) {
		d.err = errors.New("level or item count out of range")
	}
	nd := &node{level: int(level), hash: h}
	if d.err == nil {
		nd.items = make([]item, 0, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		var it item
		it.key = d.str()
		if level == 0 {
			it.path = d.str()
			mode := d.uvarint()
			if mode > uint64(cairn.ModeExecutable) {
				d.fail("unknown mode %d", mode)
			}
			it.mode = cairn.Mode(mode)
			it.hash = d.hash()
			it.size = d.uvarint()
		} else {
			it.hash = d.hash()
			it.size = d.uvarint()
		}
		if len(nd.items) > 0 && it.key <= nd.items[len(nd.items)-1].key {
			d.fail("keys out of order at %q", it.key)
		}
		nd.items = append(nd.items, it)
	}
	if d.err == nil && d.off != len(b) {
		d.fail("%d trailing bytes", len(b)-d.off)
	}
	if d.err != nil {
		return nil, cairn.Errorf(cairn.EINTERNAL, "decode tree node %s: %w", h.Short(), d.err)
	}
	return nd, nil
}

// encodeCommit returns the canonical encoding of a commit:
//
//	commit = hash[32](tree) uvarint(np) hash[32]*np str(principal)
//	         varint(unix nanoseconds, UTC) str(message)
//	         uvarint(nm) (str(key) str(value))*nm   — keys strictly increasing
func encodeCommit(c *cairn.Commit) []byte {
	b := make([]byte, 0, 128+len(c.Message)+32*len(c.Parents))
	b = append(b, c.Tree[:]...)
	b = binary.AppendUvarint(b, uint64(len(c.Parents)))
	for _, p := range c.Parents {
		b = append(b, p[:]...)
	}
	b = appendString(b, string(c.Principal))
	b = binary.AppendVarint(b, c.Time.UnixNano())
	b = appendString(b, c.Message)
	keys := make([]string, 0, len(c.Meta))
	for k := range c.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendString(b, k)
		b = appendString(b, c.Meta[k])
	}
	return b
}

// decodeCommit parses a commit's canonical encoding.
func decodeCommit(h cairn.Hash, b []byte) (*cairn.Commit, error) {
	d := decoder{b: b}
	c := &cairn.Commit{Hash: h}
	c.Tree = d.hash()
	np := d.uvarint()
	if d.err == nil && np > uint64(len(b)/32) {
		d.fail("parent count out of range")
	}
	for i := uint64(0); i < np && d.err == nil; i++ {
		c.Parents = append(c.Parents, d.hash())
	}
	c.Principal = cairn.Principal(d.str())
	c.Time = time.Unix(0, d.varint()).UTC()
	c.Message = d.str()
	nm := d.uvarint()
	if d.err == nil && nm > uint64(len(b)) {
		d.fail("metadata count out of range")
	}
	prev := ""
	for i := uint64(0); i < nm && d.err == nil; i++ {
		k, v := d.str(), d.str()
		if i > 0 && k <= prev {
			d.fail("metadata keys out of order at %q", k)
		}
		if c.Meta == nil {
			c.Meta = make(map[string]string, nm)
		}
		c.Meta[k] = v
		prev = k
	}
	if d.err == nil && d.off != len(b) {
		d.fail("%d trailing bytes", len(b)-d.off)
	}
	if d.err != nil {
		return nil, cairn.Errorf(cairn.EINTERNAL, "decode commit %s: %w", h.Short(), d.err)
	}
	return c, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads the primitive encodings; the first error sticks.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %s", d.off, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("string length %d past the end", n)
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s
}

func (d *decoder) hash() cairn.Hash {
	var h cairn.Hash
	if d.err != nil {
		return h
	}
	if len(d.b)-d.off < len(h) {
		d.fail("hash past the end")
		return h
	}
	copy(h[:], d.b[d.off:])
	d.off += len(h)
	return h
}

// shortPaths is used in error messages listing several paths.
func shortPaths(ps []string) string {
	if len(ps) > 5 {
		return strings.Join(ps[:5], ", ") + fmt.Sprintf(" and %d more", len(ps)-5)
	}
	return strings.Join(ps, ", ")
}
