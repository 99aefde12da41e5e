package index

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Full-text search sees a page as words: letters and digits, folded to lower
// case without diacritics, minus a short list of common English words that
// match nearly every page. The index does the folding in Go, on every core,
// and hands the storage the words separated by spaces (SQLite's FTS5 ascii
// tokenizer then only splits); queries are folded the same way.

var (
	stopwords = map[string]bool{}
	// stopHashes has the bit h%4096 set for the FNV-1a hash h of each
	// stopword: most words are ruled out without a map lookup.
	stopHashes [64]uint64
)

func init() {
	for _, w := range strings.Fields(`a about after again all also an and any are as at be because been before being between both
		but by can did do does doing each few for from further had has have he her here his how i if in into is it its
		more most no not of on once one only or other our out over same she so some such than that the their them then
		there these they this to too under until up very was we were what when where which while who why will with
		would you your`) {
		stopwords[w] = true
		h := fnv1a(w) % 4096
		stopHashes[h/64] |= 1 << (h % 64)
	}
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// foldWord lower-cases a word and removes its diacritics.
func foldWord(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(w)
	}
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, w)
	if err != nil {
		out = w
	}
	return strings.ToLower(out)
}

// eachWord calls fn with each word of s, its byte range and folded form,
// until fn returns false.
func eachWord(s string, fn func(start, end int, folded string) bool) {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf { // ASCII, the common case, by table
			if asciiWord[c] == 0 {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRuneInString(s[i:]); !isWordRune(r) {
			i += n
			continue
		}
		j := i
		for j < len(s) {
			if c := s[j]; c < utf8.RuneSelf {
				if asciiWord[c] == 0 {
					break
				}
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break
			}
			j += n
		}
		if !fn(i, j, foldWord(s[i:j])) {
			return
		}
		i = j
	}
}

// asciiWord maps each ASCII byte that belongs to words to its lower case,
// and every other ASCII byte to 0.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := range byte(utf8.RuneSelf) {
		if isWordRune(rune(c)) {
			t[c] = byte(unicode.ToLower(rune(c)))
		}
	}
	return t
}()

// longestStopword is the length of the longest stopword: longer words need
// no lookup.
const longestStopword = 7

// ftsText returns the distinct words of s that full-text search indexes
// (the index keeps no positions or counts, so repeats would only cost
// time). ASCII words, the common case, are folded and hashed in the pass
// that finds them.
func ftsText(s string) string {
	seen := newWordSet(len(s) / 8)
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiWord[c] == 0 {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRuneInString(s[i:]); !isWordRune(r) {
			i += n
			continue
		}
		// A word starts at i.
		start := len(b)
		if start > 0 {
			b = append(b, ' ')
			start++
		}
		j, ascii, h := i, true, uint64(fnvOffset)
		for j < len(s) {
			if c := s[j]; c < utf8.RuneSelf {
				lc := asciiWord[c]
				if lc == 0 {
					break
				}
				b = append(b, lc)
				h = (h ^ uint64(lc)) * fnvPrime
				j++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break
			}
			ascii = false
			j += n
		}
		if !ascii {
			b = append(b[:start], foldWord(s[i:j])...)
			h = fnv1a(b[start:])
		}
		w := b[start:]
		// Repeats, most words, skip the stopword lookup.
		if !seen.add(h) || len(w) <= longestStopword && stopHashes[h%4096/64]&(1<<(h%64)) != 0 && stopwords[string(w)] {
			b = b[:max(0, start-1)]
		}
		i = j
	}
	return string(b)
}

// wordSet is a set of words held as their 64-bit FNV-1a hashes, with open
// addressing: ftsText adds every word of a page to one, and a map of
// strings cost more than the rest of indexing a page. Two words of one
// page sharing a hash (about one chance in 10^14 for a page of a thousand
// words) would leave the second out of the full-text index.
type wordSet struct {
	slots []uint64 // 0: empty
	n     int
}

// The 64-bit FNV-1a parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv1a is the 64-bit FNV-1a hash of s: quick for the short words and
// lookup values it names, and needing no hash.Hash allocation.
func fnv1a[S string | []byte](s S) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// newWordSet returns a set with room for about n words before it grows.
func newWordSet(n int) *wordSet {
	size := 64
	for size < 2*n {
		size <<= 1
	}
	return &wordSet{slots: make([]uint64, size)}
}

// add adds the word of FNV-1a hash h and reports whether it was new.
func (s *wordSet) add(h uint64) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	h |= 1 // never 0, the empty slot
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			s.n++
			return true
		case h:
			return false
		}
	}
}

func (s *wordSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(64, 2*len(old)))
	mask := uint64(len(s.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h
	}
}

// words returns the folded words of s, stopwords included.
func words(s string) []string {
	var out []string
	eachWord(s, func(_, _ int, w string) bool { out = append(out, w); return true })
	return out
}
