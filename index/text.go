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
// and hands FTS5 the words separated by spaces (its ascii tokenizer then
// only splits); queries are folded the same way.

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about after again all also an and any are as at be because been before being between both
		but by can did do does doing each few for from further had has have he her here his how i if in into is it its
		more most no not of on once one only or other our out over same she so some such than that the their them then
		there these they this to too under until up very was we were what when where which while who why will with
		would you your`) {
		stopwords[w] = true
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

// eachWord calls fn with each word of s: its byte range and folded form.
func eachWord(s string, fn func(start, end int, folded string)) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		j := i + n
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break
			}
			j += n
		}
		fn(i, j, foldWord(s[i:j]))
		i = j
	}
}

// ftsText returns the distinct words of s that full-text search indexes
// (the index keeps no positions or counts, so repeats would only cost
// time). ASCII words, the common case, are folded in place.
func ftsText(s string) string {
	seen := make(map[string]struct{}, 128)
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && !isWordRune(rune(c)) {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !isWordRune(r) {
				i += n
				continue
			}
		}
		// A word starts at i.
		start := len(b)
		if start > 0 {
			b = append(b, ' ')
			start++
		}
		j, ascii := i, true
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if !isWordRune(rune(c)) {
					break
				}
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
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
		}
		w := b[start:]
		if _, dup := seen[string(w)]; dup || stopwords[string(w)] {
			b = b[:max(0, start-1)]
		} else {
			seen[string(w)] = struct{}{}
		}
		i = j
	}
	return string(b)
}

// words returns the folded words of s, stopwords included.
func words(s string) []string {
	var out []string
	eachWord(s, func(_, _ int, w string) { out = append(out, w) })
	return out
}
