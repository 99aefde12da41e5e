package extractive

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of the Related pages section.
const (
	exMaxLinks     = 20 // pages linked, at most
	exMaxNameWords = 8  // words in a title or alias that can match, at most
	exMinNameRunes = 3  // characters in a title or alias that can match, at least
)

// exLink is a page the source names, and how often.
type exLink struct {
	page  PageRef
	count int
	key   string // the title, lower-cased, to sort by
}

// exLinks returns the pages whose title or one of whose aliases occurs in
// the text, given as units of tokens (sentences and headings), as a
// sequence of whole words, ignoring case and diacritics. A page counts as
// often as its most frequent name. Pages of type index, the root
// index.md, sources under raw/, paths a wikilink cannot spell, and names
// that are a single stopword or shorter than exMinNameRunes are skipped.
// The result is ordered by count, then title (ignoring case), then path,
// and holds at most exMaxLinks pages.
//
// The text's words are numbered once, with the positions of each. A name
// is then looked up word by word, without allocating: most names stop at
// a word the text lacks, and the rest are compared at the positions of
// their first word only. That keeps a vault of 100,000 pages well under
// 100 ms.
func exLinks(units [][]trToken, pages []PageRef) []exLink {
	x := exNewTextIndex(units)
	var best []exLink // the best exMaxLinks so far, best first
	less := func(a, b exLink) int {
		return cmp.Or(cmp.Compare(b.count, a.count), cmp.Compare(a.key, b.key),
			cmp.Compare(a.page.Title, b.page.Title), cmp.Compare(a.page.Path, b.page.Path))
	}
	var buf []byte
	for pi := range pages {
		p := &pages[pi]
		count := 0
		for ai := -1; ai < len(p.Aliases); ai++ {
			name := p.Title
			if ai >= 0 {
				name = p.Aliases[ai]
			}
			var n int
			buf, n = x.count(buf, name)
			count = max(count, n)
		}
		if count == 0 || !exLinkable(*p) {
			continue
		}
		l := exLink{page: *p, count: count, key: strings.ToLower(p.Title)}
		if len(best) == exMaxLinks && less(l, best[len(best)-1]) >= 0 {
			continue
		}
		i, found := slices.BinarySearchFunc(best, l, less)
		if found || slices.ContainsFunc(best, func(b exLink) bool { return b.page.Path == p.Path }) {
			continue // the same page twice
		}
		best = slices.Insert(best, i, l)
		best = best[:min(len(best), exMaxLinks)]
	}
	return best
}

// exTextIndex numbers the words of a text and records where each occurs.
type exTextIndex struct {
	vocab map[string]int32 // folded word → id
	words []int32          // the text's words by id, units separated by -1
	at    [][]int32        // id → positions in words
}

func exNewTextIndex(units [][]trToken) *exTextIndex {
	x := &exTextIndex{vocab: make(map[string]int32)}
	for _, u := range units {
		for _, t := range u {
			id, ok := x.vocab[t.fold]
			if !ok {
				id = int32(len(x.at))
				x.vocab[t.fold] = id
				x.at = append(x.at, nil)
			}
			x.at[id] = append(x.at[id], int32(len(x.words)))
			x.words = append(x.words, id)
		}
		x.words = append(x.words, -1)
	}
	return x
}

// count returns how often name occurs in the text, using buf as scratch
// space.
func (x *exTextIndex) count(buf []byte, name string) ([]byte, int) {
	if len(name) < exMinNameRunes || len(name) < utf8.UTFMax*exMinNameRunes && utf8.RuneCountInString(name) < exMinNameRunes {
		return buf, 0
	}
	var ids [exMaxNameWords]int32
	n := 0
	for start, end := trNextWord(name, 0); start < end; start, end = trNextWord(name, end) {
		if n == exMaxNameWords {
			return buf, 0
		}
		buf = exAppendFold(buf[:0], name[start:end])
		id, ok := x.vocab[string(buf)]
		if !ok {
			return buf, 0 // the text lacks the word: most names stop here
		}
		ids[n] = id
		n++
	}
	if n == 0 || n == 1 && trStopwords[string(buf)] {
		return buf, 0 // no word, or a single stopword
	}
	count := 0
	for _, p := range x.at[ids[0]] {
		if int(p)+n <= len(x.words) && slices.Equal(x.words[p:int(p)+n], ids[:n]) {
			count++
		}
	}
	return buf, count
}

// exLinkable reports whether a page may be linked from a summary.
func exLinkable(p PageRef) bool {
	if exLabel(p.Title) == "" {
		return false
	}
	lower := strings.ToLower(p.Path)
	return strings.HasSuffix(lower, ".md") &&
		!strings.EqualFold(p.Type, "index") &&
		lower != "index.md" &&
		!strings.HasPrefix(lower, "raw/") &&
		!strings.ContainsAny(p.Path, "[]|#^\n\r")
}

// exAppendFold appends the word w lower-cased and without diacritics, as
// trTokenize folds it.
func exAppendFold(buf []byte, w string) []byte {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return append(buf, trFold(strings.ToLower(w))...)
		}
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}
