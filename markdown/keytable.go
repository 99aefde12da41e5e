package markdown

import (
	"hash/maphash"
	"math/bits"
)

// keyTable files the keys of a vault's files under the files answering
// them, by a 96-bit digest of each key rather than its text: a table of
// open addressing with linear probing, 16 bytes a slot and three slots
// for every four keys, where a map of strings took some 60 bytes a key
// and the keys' own text beside. Keys of several files fill a slot each.
//
// The digests come from hash/maphash with seeds drawn for each table, so
// that no one can make two keys of a vault collide on purpose; by chance
// two of a million-file vault's keys collide with a probability near
// 10^-16, and a lookup meets a colliding key with less.
type keyTable struct {
	seed1, seed2 maphash.Seed
	hi           []uint64
	lo           []uint32
	file         []int32 // the file's place plus one; 0 for an empty slot
	n            int     // slots filled
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

// add files the file at place f under key k, once.
func (t *keyTable) add(k Key, f int) {
	hi, lo := t.digest(k)
	t.insert(hi, lo, int32(f)+1)
}

func (t *keyTable) insert(hi uint64, lo uint32, file int32) {
	if (t.n+1)*4 > len(t.file)*3 {
		t.grow()
	}
	for s := t.slot(hi); ; s = t.next(s) {
		switch {
		case t.file[s] == 0:
			t.hi[s], t.lo[s], t.file[s] = hi, lo, file
			t.n++
			return
		case t.file[s] == file && t.hi[s] == hi && t.lo[s] == lo:
			return // filed already
		}
	}
}

func (t *keyTable) next(s int) int {
	if s++; s == len(t.file) {
		return 0
	}
	return s
}

// grow makes the table half as large again, its keys filed anew.
func (t *keyTable) grow() {
	hi, lo, file := t.hi, t.lo, t.file
	t.alloc(len(file) + len(file)/2)
	t.n = 0
	for s, f := range file {
		if f != 0 {
			t.insert(hi[s], lo[s], f)
		}
	}
}

// files calls fn with the place of each file filed under key k, in no
// order.
func (t *keyTable) files(k Key, fn func(f int)) {
	hi, lo := t.digest(k)
	for s := t.slot(hi); t.file[s] != 0; s = t.next(s) {
		if t.hi[s] == hi && t.lo[s] == lo {
			fn(int(t.file[s]) - 1)
		}
	}
}
