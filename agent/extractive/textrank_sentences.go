package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// trAbbreviations are the words that a period follows without ending the
// sentence, folded, without their periods. Single letters (initials,
// "c." for circa) and words with inner periods ("e.g.", "U.S.") are
// abbreviations too.
var trAbbreviations = make(map[string]bool)

func init() {
	for _, w := range strings.Fields(`
		al approx apr aug capt cf ch chap co col corp dept dr ed eds feb fig figs fol fols ff
		gen gov hon inc jan jr jul jun lt ltd mar messrs mr mrs ms mss mt no nos nov oct op pp
		prof pt rev sen sep sept sgt sr st univ viz vol vols vs
	`) {
		trAbbreviations[w] = true
	}
}

// trSentences splits one block of text, on one line, into sentences. A
// sentence ends at '.', '!', '?' or '…' (with any closing quotes and
// brackets) followed by white space and something other than a
// lower-case letter, unless the period ends an abbreviation. A fragment
// of one or two words ("Capital.") joins the sentence after it, or at the
// end the one before it.
func trSentences(text string) []string {
	type span struct{ start, end, words int }
	var spans []span
	start := 0
	emit := func(end int) {
		s, e := start, end
		for s < e && text[s] == ' ' {
			s++
		}
		for e > s && text[e-1] == ' ' {
			e--
		}
		if s < e {
			words := 0
			for ws, we := trNextWord(text[:e], s); ws < we && words < 3; ws, we = trNextWord(text[:e], we) {
				words++
			}
			spans = append(spans, span{s, e, words})
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch r {
		case '。', '！', '？':
			emit(i + n)
			i += n
			continue
		case '.', '!', '?', '…':
		default:
			i += n
			continue
		}
		dot := r == '.'
		j := i + n
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if r == '.' || r == '!' || r == '?' || r == '…' {
				dot = false // an ellipsis, or "?!"
			} else if !strings.ContainsRune("\"')]}»”’*_", r) {
				break
			}
			j += n
		}
		if j < len(text) && text[j] != ' ' {
			i = j
			continue
		}
		k := j
		for k < len(text) && text[k] == ' ' {
			k++
		}
		if k < len(text) {
			next, _ := utf8.DecodeRuneInString(text[k:])
			if unicode.IsLower(next) || dot && trAbbreviation(text[:i]) {
				i = j
				continue
			}
		}
		emit(j)
		i = j
	}
	emit(len(text))

	// Join fragments to the sentence after them, or before them at the end.
	var merged []span
	var carry *span // the fragments carried forward
	for i, sp := range spans {
		if carry != nil {
			sp.start, sp.words = carry.start, min(carry.words+sp.words, 3)
			carry = nil
		}
		switch {
		case sp.words > 2 || len(spans) == 1:
			merged = append(merged, sp)
		case i < len(spans)-1:
			carry = &sp
		case len(merged) > 0:
			merged[len(merged)-1].end = sp.end
		default:
			merged = append(merged, sp)
		}
	}
	out := make([]string, len(merged))
	for i, sp := range merged {
		out[i] = text[sp.start:sp.end]
	}
	return out
}

// trAbbreviation reports whether the text before a period ends with an
// abbreviation.
func trAbbreviation(before string) bool {
	i := strings.LastIndexFunc(before, func(r rune) bool { return !trIsWordRune(r) && r != '.' })
	word := strings.Trim(before[i+1:], ".")
	if word == "" {
		return false
	}
	if strings.Contains(word, ".") {
		return true // "e.g", "U.S"
	}
	if utf8.RuneCountInString(word) == 1 {
		r, _ := utf8.DecodeRuneInString(word)
		return unicode.IsLetter(r)
	}
	return trAbbreviations[strings.ToLower(word)]
}
