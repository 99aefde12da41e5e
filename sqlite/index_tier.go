package sqlite

import (
	"cmp"
	"container/heap"
	"slices"
)

// shortTier is about how many of a vault's pages the short pages' full
// text holds: enough to hold a word found in a few percent of pages ten
// times over (a page of results), few enough to rank every match among
// them at once. It holds every page until it has twice that many, and is
// cut back to that many (SetState) whenever it doubles.
func shortTier(pages int) int { return max(1000, pages/50) }

// everyPage is the tier of a vault with no page left out of the short
// pages' text.
const everyPage = 1<<31 - 1

// shortPage is a page's full text kept for the short pages' tables.
type shortPage struct {
	id          int64
	words       int
	title, text string
}

// shortPages keeps the shortest pages a full build writes, in a max-heap
// by words and id bounded to shortTier of the pages seen (memory about
// that many pages' words, a few MB).
type shortPages struct {
	heap pageHeap
	seen int
	cut  int // the fewest words of a page left out; -1 when none was
}

// add offers a page.
func (s *shortPages) add(p shortPage) {
	if s.seen == 0 {
		s.cut = -1
	}
	s.seen++
	heap.Push(&s.heap, p)
	for s.heap.Len() > shortTier(s.seen) {
		w := heap.Pop(&s.heap).(shortPage).words
		if s.cut < 0 || w < s.cut {
			s.cut = w
		}
	}
}

// done returns the pages of the tier and its words: every page of at most
// that many words is among them. With no page left out, the tier holds
// every page (everyPage); else its words are one less than the shortest
// page left out (every page shorter than it is in the heap), and the
// heap's pages of more words go.
func (s *shortPages) done() ([]shortPage, int) {
	tier := everyPage
	if s.cut >= 0 {
		tier = s.cut - 1
	}
	pages := slices.DeleteFunc(slices.Clone(s.heap), func(p shortPage) bool { return p.words > tier })
	slices.SortFunc(pages, func(a, b shortPage) int { return cmp.Compare(a.id, b.id) })
	return pages, tier
}

// pageHeap is a max-heap of pages by words, then id.
type pageHeap []shortPage

func (h pageHeap) Len() int { return len(h) }
func (h pageHeap) Less(i, j int) bool {
	return cmp.Or(cmp.Compare(h[j].words, h[i].words), cmp.Compare(h[j].id, h[i].id)) < 0
}
func (h pageHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pageHeap) Push(x any)   { *h = append(*h, x.(shortPage)) }
func (h *pageHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
