package postgres

import (
	"hash/maphash"
	"slices"
	"strings"
)

// wordCounts counts the pages holding each word of a full build, the
// build's most frequent operation after parsing: one count per distinct
// word of every page, some 25 million at 100k pages, on the one goroutine
// that writes the full text. A map of strings took some 70 ns a count,
// mostly in reaching each key's bytes, scattered over the heap, to
// compare them. Here a slot holds the word's 64-bit hash, which rules out
// every other word but by chance, and the word's place in one buffer of
// all words, which is compared only on a match.
type wordCounts struct {
	seed  maphash.Seed
	slots []wordSlot // a power of two, at most half used
	words []byte     // the words, one after the other
	n     int        // slots used
}

type wordSlot struct {
	hash  uint64 // 0: empty
	at    uint64 // the word is words[at : at+len]
	len   uint32 // a lexeme is at most maxLexeme bytes
	pages int32
}

func newWordCounts() *wordCounts {
	return &wordCounts{seed: maphash.MakeSeed(), slots: make([]wordSlot, 1024)}
}

// add counts one more page holding w.
func (c *wordCounts) add(w string) {
	h := maphash.String(c.seed, w) | 1 // never 0, the empty slot
	mask := uint64(len(c.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		switch {
		case s.hash == 0:
			*s = wordSlot{hash: h, at: uint64(len(c.words)), len: uint32(len(w)), pages: 1}
			c.words = append(c.words, w...)
			if c.n++; 2*c.n > len(c.slots) {
				c.grow()
			}
			return
		case s.hash == h && int(s.len) == len(w) && string(c.words[s.at:s.at+uint64(s.len)]) == w:
			s.pages++
			return
		}
	}
}

func (c *wordCounts) grow() {
	old := c.slots
	c.slots = make([]wordSlot, 2*len(old))
	mask := uint64(len(c.slots) - 1)
	for _, s := range old {
		if s.hash == 0 {
			continue
		}
		i := s.hash & mask
		for c.slots[i].hash != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = s
	}
}

// sorted returns the words and their page counts, in the words' byte
// order.
func (c *wordCounts) sorted() ([]string, []int32) {
	used := make([]wordSlot, 0, c.n)
	for _, s := range c.slots {
		if s.hash != 0 {
			used = append(used, s)
		}
	}
	all := string(c.words) // one copy, which the words share
	word := func(s wordSlot) string { return all[s.at : s.at+uint64(s.len)] }
	slices.SortFunc(used, func(a, b wordSlot) int { return strings.Compare(word(a), word(b)) })
	words, pages := make([]string, len(used)), make([]int32, len(used))
	for i, s := range used {
		words[i], pages[i] = word(s), s.pages
	}
	return words, pages
}
