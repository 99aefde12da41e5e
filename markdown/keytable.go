package markdown

import (
	"hash/maphash"
	"math/bits"
	"slices"
)

// keyTable files the keys of a vault's files under the files answering
// them, by a 96-bit digest of each key rather than its text: a table of
// open addressing with linear probing, one slot of 16 bytes for each
// distinct key and at least four slots for every three keys, where a map
// of strings took some 60 bytes a key and the keys' own text beside. A key
// of several files (a name every folder has, index.md) keeps their places
// in a list of its own.
//
// The digests come from hash/maphash with seeds drawn for each table, so
// that no one can make two keys of a vault collide on purpose; by chance
// two of a million-file vault's keys collide with a probability near
// 10^-16, and a lookup meets a colliding key with less.
type keyTable struct {
	seed1, seed2 maphash.Seed
	hi           []uint64
	lo           []uint32
	// file is the place of the one file answering the slot's key plus
	// one; -(i+1) for several, whose places are many[i]; 0 for an empty
	// slot.
	file []int32
	many [][]int32
	n    int // slots filled
}

// newKeyTable returns a table with room for about keys keys.
func newKeyTable(keys int) keyTable {
	t := keyTable{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed()}
	t.alloc(max(keys*4/3, 16))
	return t
}

func (t *keyTable) alloc(slots int) {
	t.hi, t.lo, t.file = make([]uint64, slots), make([]uint32, slots), make([]int32, slots)
}

// digest is key k's digest: 64 bits that also place it, and 32 more.
func (t *keyTable) digest(k Key) (uint64, uint32) {
	step := uint64(k.Step)
	return maphash.String(t.seed1, k.Value) ^ step*0x9E3779B97F4A7C15,
		uint32(maphash.String(t.seed2, k.Value)) ^ uint32(step)*0x85EBCA6B
}

// slot is where a digest's probe starts: its high bits scaled to the
// table's size (a multiply and a shift, as for any size).
func (t *keyTable) slot(hi uint64) int {
	s, _ := bits.Mul64(hi, uint64(len(t.file)))
	return int(s)
}

func (t *keyTable) next(s int) int {
	if s++; s == len(t.file) {
		return 0
	}
	return s
}

// find returns the slot of a digest: the one holding it, else the empty
// slot where it goes.
func (t *keyTable) find(hi uint64, lo uint32) int {
	s := t.slot(hi)
	for t.file[s] != 0 && (t.hi[s] != hi || t.lo[s] != lo) {
		s = t.next(s)
	}
	return s
}

// add files the file at place f under key k. A file filed twice under a
// key is listed once by done.
func (t *keyTable) add(k Key, f int) {
	if (t.n+1)*4 > len(t.file)*3 {
		t.grow()
	}
	hi, lo := t.digest(k)
	s := t.find(hi, lo)
	file := int32(f) + 1
	switch old := t.file[s]; {
	case old == 0:
		t.hi[s], t.lo[s], t.file[s] = hi, lo, file
		t.n++
	case old == file:
	case old > 0:
		t.many = append(t.many, []int32{old - 1, int32(f)})
		t.file[s] = -int32(len(t.many))
	default:
		t.many[-old-1] = append(t.many[-old-1], int32(f))
	}
}

// grow makes the table half as large again, its keys filed anew.
func (t *keyTable) grow() {
	hi, lo, file := t.hi, t.lo, t.file
	t.alloc(len(file) + len(file)/2)
	for s, f := range file {
		if f != 0 {
			n := t.find(hi[s], lo[s])
			t.hi[n], t.lo[n], t.file[n] = hi[s], lo[s], f
		}
	}
}

// done sorts each list of several files by place, each once.
func (t *keyTable) done() {
	for i, m := range t.many {
		slices.Sort(m)
		t.many[i] = slices.Compact(m)
	}
}

// lookup returns the place of the one file filed under key k, or the
// number of the list (in many) of the several filed under it; -1 for
// neither.
func (t *keyTable) lookup(k Key) (one, list int) {
	if len(t.file) == 0 { // a table never made
		return -1, -1
	}
	switch f := t.file[t.find(t.digest(k))]; {
	case f > 0:
		return int(f) - 1, -1
	case f < 0:
		return -1, int(-f) - 1
	}
	return -1, -1
}
