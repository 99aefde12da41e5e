package extractive

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// TextRank (Mihalcea and Tarau, "TextRank: Bringing Order into Texts",
// 2004) ranks the vertices of a graph built from a text with weighted
// PageRank. Sentences are linked by the content words they share; words
// are linked when they occur near each other. Everything here is
// deterministic: graphs are built and iterated in a fixed order, and ties
// are broken by position.

// TextRank's parameters: the paper's damping factor and window, and a
// convergence test.
const (
	trDamping    = 0.85 // PageRank's damping factor d
	trEpsilon    = 1e-6 // convergence: the largest change of a score in one iteration
	trIterations = 100  // the most iterations, converged or not
	trWindow     = 3    // keyword co-occurrence window, in content words
)

// Limits of the extractive summary.
const (
	trMinPassages = 3 // passages chosen, at least (fewer when the text has fewer sentences)
	trMaxPassages = 7 // passages chosen, at most
	trMaxTerms    = 8 // key terms chosen, at most
	// trMaxSentences bounds the sentence graph (whose cost grows with the
	// square of its size): sentences past it are not ranked. It is about
	// 300 KB of prose, far more than a source an agent summarizes.
	trMaxSentences = 3000
	trMaxPhrase    = 3 // words in a key phrase, at most
	// trMaxCandidates is how many of the best-ranked words may be part of
	// key terms.
	trMaxCandidates = 3 * trMaxTerms
	trSubstantial   = 4 // words a sentence needs to be preferred as a passage
)

// trToken is one word of a sentence.
type trToken struct {
	lower string // the word as written, lower-cased
	fold  string // lower-cased, without diacritics
	stem  string // fold, stemmed
	// gap is ' ' or '-' when only a space or a hyphen separates the word
	// from the previous one, so that the two may form a phrase; else 0.
	gap byte
	// content is set for words that carry meaning: not stopwords, not
	// single characters. keyword is set for content words that may be key
	// terms: at least three characters and not a number.
	content, keyword bool
}

// trTokenize splits s into words: runs of letters, digits and combining
// marks. Anything else separates them.
func trTokenize(s string) []trToken {
	toks := make([]trToken, 0, len(s)/6)
	prevEnd := -1
	for start, end := trNextWord(s, 0); start < end; start, end = trNextWord(s, end) {
		lower := strings.ToLower(s[start:end])
		fold := trFold(lower)
		t := trToken{lower: lower, fold: fold, stem: fold}
		if prevEnd >= 0 {
			if gap := s[prevEnd:start]; gap == " " || gap == "-" {
				t.gap = gap[0]
			}
		}
		prevEnd = end
		n := utf8.RuneCountInString(fold)
		t.content = n >= 2 && !trStopwords[fold]
		if t.content {
			t.stem = trStem(fold)
		}
		t.keyword = t.content && n >= 3 && strings.IndexFunc(fold, unicode.IsLetter) >= 0
		toks = append(toks, t)
	}
	return toks
}

func trIsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// trEachWord calls fn with the byte range of each word of s.
func trEachWord(s string, fn func(start, end int)) {
	for start, end := trNextWord(s, 0); start < end; start, end = trNextWord(s, end) {
		fn(start, end)
	}
}

// trNextWord returns the byte range of the first word of s at or after
// i; start == end when there is none.
func trNextWord(s string, i int) (start, end int) {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if trASCIIWord[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if trIsWordRune(r) {
			break
		}
		i += n
	}
	j := i
	for j < len(s) {
		if c := s[j]; c < utf8.RuneSelf {
			if !trASCIIWord[c] {
				break
			}
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		if !trIsWordRune(r) {
			break
		}
		j += n
	}
	return i, j
}

// trASCIIWord marks the ASCII letters and digits.
var trASCIIWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return t
}()

// trFold removes the diacritics of a lower-cased word ("schöffer" →
// "schoffer"), leaving ASCII untouched.
func trFold(lower string) string {
	for i := 0; i < len(lower); i++ {
		if lower[i] >= utf8.RuneSelf {
			t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
			out, _, err := transform.String(t, lower)
			if err != nil {
				return lower
			}
			return out
		}
	}
	return lower
}

// trStem is a light English suffix stemmer: it conflates plurals and the
// -ing and -ed forms ("printers" → "printer", "printing" and "printed" →
// "print"), which is all that sentence overlap needs. Its stems are
// never shown; key terms show the words as written.
func trStem(w string) string {
	n := len(w)
	if n <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "zes"):
		return w[:n-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	case strings.HasSuffix(w, "ing") && n >= 6 && trHasVowel(w[:n-3]):
		return trUndouble(w[:n-3])
	case strings.HasSuffix(w, "ed") && n >= 5 && !strings.HasSuffix(w, "eed") && trHasVowel(w[:n-2]):
		return trUndouble(w[:n-2])
	}
	return w
}

func trHasVowel(s string) bool { return strings.ContainsAny(s, "aeiouy") }

// trUndouble turns "stopp" into "stop" but leaves "spell", "pass" and
// "buzz" alone.
func trUndouble(s string) string {
	n := len(s)
	if n >= 2 && s[n-1] == s[n-2] && !strings.ContainsRune("aeioulsz", rune(s[n-1])) {
		return s[:n-1]
	}
	return s
}

// trEdge is a weighted edge of an undirected graph.
type trEdge struct {
	to int32
	w  float64
}

// trPageRank returns the weighted PageRank of each vertex of an
// undirected graph given as adjacency lists: WS(i) = (1-d) + d ·
// Σ_j w_ji / Σ_k w_jk · WS(j), iterated from 1 until no score moves by
// more than trEpsilon, or trIterations times.
func trPageRank(adj [][]trEdge) []float64 {
	n := len(adj)
	out := make([]float64, n)
	for i, es := range adj {
		for _, e := range es {
			out[i] += e.w
		}
	}
	score := make([]float64, n)
	next := make([]float64, n)
	for i := range score {
		score[i] = 1
	}
	for range trIterations {
		delta := 0.0
		for i, es := range adj {
			sum := 0.0
			for _, e := range es {
				sum += e.w / out[e.to] * score[e.to]
			}
			next[i] = (1 - trDamping) + trDamping*sum
			delta = max(delta, math.Abs(next[i]-score[i]))
		}
		score, next = next, score
		if delta < trEpsilon {
			break
		}
	}
	return score
}

// trRankSentences scores sentences, given as token lists, with TextRank:
// the similarity of two sentences is the number of content words they
// share over log|Si| + log|Sj|, their sizes in distinct content words.
func trRankSentences(sents [][]trToken) []float64 {
	n := min(len(sents), trMaxSentences)
	vocab := make(map[string]int32)
	sets := make([][]int32, n)
	var postings [][]int32 // word → the sentences holding it, ascending
	for i := range n {
		var set []int32
		for _, t := range sents[i] {
			if !t.content {
				continue
			}
			id, ok := vocab[t.stem]
			if !ok {
				id = int32(len(vocab))
				vocab[t.stem] = id
				postings = append(postings, nil)
			}
			if !slices.Contains(set, id) {
				set = append(set, id)
				postings[id] = append(postings[id], int32(i))
			}
		}
		sets[i] = set
	}
	adj := make([][]trEdge, n)
	overlap := make([]int32, n)
	var touched []int32
	for i := range n {
		for _, w := range sets[i] {
			for _, j := range postings[w] {
				if j <= int32(i) {
					continue
				}
				if overlap[j] == 0 {
					touched = append(touched, j)
				}
				overlap[j]++
			}
		}
		slices.Sort(touched)
		for _, j := range touched {
			denom := math.Log(float64(len(sets[i]))) + math.Log(float64(len(sets[j])))
			if denom > 0 {
				w := float64(overlap[j]) / denom
				adj[i] = append(adj[i], trEdge{to: j, w: w})
				adj[j] = append(adj[j], trEdge{to: int32(i), w: w})
			}
			overlap[j] = 0
		}
		touched = touched[:0]
	}
	scores := trPageRank(adj)
	return append(scores, make([]float64, len(sents)-n)...)
}

// trPassageCount is how many passages a text of n sentences yields:
// round(√n), within [trMinPassages, trMaxPassages], and at most n.
func trPassageCount(n int) int {
	k := int(math.Round(math.Sqrt(float64(n))))
	return min(max(k, trMinPassages), trMaxPassages, n)
}

// trChoose returns the indexes of the k best sentences, best first:
// sentences of at least trSubstantial words before shorter ones, then by
// score, then by position. A sentence that repeats a chosen one is
// skipped.
func trChoose(sents [][]trToken, scores []float64, k int) []int {
	order := make([]int, len(sents))
	for i := range order {
		order[i] = i
	}
	substantial := func(i int) bool { return len(sents[i]) >= trSubstantial }
	slices.SortStableFunc(order, func(a, b int) int {
		if sa, sb := substantial(a), substantial(b); sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		return cmp.Compare(scores[b], scores[a])
	})
	var chosen []int
	seen := make(map[string]bool)
	for _, i := range order {
		if len(chosen) == k {
			break
		}
		key := trKey(sents[i])
		if seen[key] {
			continue
		}
		seen[key] = true
		chosen = append(chosen, i)
	}
	return chosen
}

// trKey is a sentence's words, folded: two sentences with the same key
// say the same thing.
func trKey(toks []trToken) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.fold)
		b.WriteByte(' ')
	}
	return b.String()
}

// trKeywords returns the key terms of a text given as sentences of
// tokens, best first. Content words are ranked by TextRank over their
// co-occurrence graph (an edge joins two words within trWindow content
// words of each other in one sentence); the trMaxCandidates best are
// candidates. Candidates adjacent in the text form phrases of up to
// trMaxPhrase words, scored by the mean of their words' scores; a phrase
// must occur twice to count. A phrase replaces the better terms that are
// words of it, and a term whose words are all in better terms is dropped.
// Terms are shown lower-cased, in the form the text uses most.
func trKeywords(sents [][]trToken) []string {
	vocab := make(map[string]int32)
	var stems []string
	ids := make([][]int32, len(sents)) // each token's word id, -1 for non-keywords
	for si, toks := range sents {
		ids[si] = make([]int32, len(toks))
		for ti, t := range toks {
			ids[si][ti] = -1
			if !t.keyword {
				continue
			}
			id, ok := vocab[t.stem]
			if !ok {
				id = int32(len(stems))
				vocab[t.stem] = id
				stems = append(stems, t.stem)
			}
			ids[si][ti] = id
		}
	}
	if len(stems) == 0 {
		return nil
	}
	type pair struct{ a, b int32 }
	edges := make(map[pair]bool)
	adj := make([][]trEdge, len(stems))
	for si := range sents {
		var window []int32
		for _, id := range ids[si] {
			if id < 0 {
				continue
			}
			for _, o := range window {
				a, b := min(o, id), max(o, id)
				if a != b && !edges[pair{a, b}] {
					edges[pair{a, b}] = true
					adj[a] = append(adj[a], trEdge{to: b, w: 1})
					adj[b] = append(adj[b], trEdge{to: a, w: 1})
				}
			}
			window = append(window, id)
			if len(window) == trWindow {
				window = window[1:]
			}
		}
	}
	scores := trPageRank(adj)
	byRank := make([]int32, len(stems))
	for i := range byRank {
		byRank[i] = int32(i)
	}
	slices.SortStableFunc(byRank, func(a, b int32) int {
		return cmp.Compare(scores[b], scores[a])
	})
	candidate := make([]bool, len(stems))
	for _, id := range byRank[:min(len(byRank), trMaxCandidates)] {
		candidate[id] = true
	}

	// Collect the runs of adjacent candidates, and the phrases in them.
	type term struct {
		words []int32    // word ids
		at    [][2]int32 // the sentence and token where each occurrence starts
		first int        // the position of the first occurrence in the text
		score float64
	}
	terms := make(map[[trMaxPhrase]int32]*term)
	var order []*term
	pos := 0
	for si, toks := range sents {
		for ti := 0; ti < len(toks); {
			if id := ids[si][ti]; id < 0 || !candidate[id] {
				ti++
				continue
			}
			end := ti + 1
			for end < len(toks) && toks[end].gap != 0 && ids[si][end] >= 0 && candidate[ids[si][end]] {
				end++
			}
			// Every word of the run, and every phrase in it.
			for i := ti; i < end; i++ {
				for j := i + 1; j <= min(end, i+trMaxPhrase); j++ {
					var key [trMaxPhrase]int32
					for k, id := range ids[si][i:j] {
						key[k] = id + 1
					}
					t := terms[key]
					if t == nil {
						t = &term{words: ids[si][i:j], first: pos + i}
						for _, id := range t.words {
							t.score += scores[id]
						}
						t.score /= float64(len(t.words))
						terms[key] = t
						order = append(order, t)
					}
					t.at = append(t.at, [2]int32{int32(si), int32(i)})
				}
			}
			ti = end
		}
		pos += len(toks)
	}
	// surfaceOf is the form of a term the text uses most, lower-cased; the
	// smallest on a tie.
	surfaceOf := func(t *term) string {
		forms := make(map[string]int)
		for _, at := range t.at {
			toks := sents[at[0]][at[1] : int(at[1])+len(t.words)]
			var b strings.Builder
			for i, tok := range toks {
				if i > 0 {
					b.WriteByte(tok.gap)
				}
				b.WriteString(tok.lower)
			}
			forms[b.String()]++
		}
		best, n := "", 0
		for f, c := range forms {
			if c > n || c == n && f < best {
				best, n = f, c
			}
		}
		return best
	}

	slices.SortStableFunc(order, func(a, b *term) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.first, b.first))
	})
	var out []string
	covered := make(map[int32]bool)
	for _, t := range order {
		if len(out) == trMaxTerms {
			break
		}
		if len(t.words) > 1 && len(t.at) < 2 {
			continue
		}
		surface := surfaceOf(t)
		if len(t.words) > 1 {
			// A phrase takes the place of the words of it chosen before
			// ("century" becomes "sixteenth century").
			words := strings.FieldsFunc(surface, func(r rune) bool { return r == ' ' || r == '-' })
			in := func(w string) bool { return slices.Contains(words, w) }
			if i := slices.IndexFunc(out, in); i >= 0 {
				out[i] = surface
				out = append(out[:i+1], slices.DeleteFunc(out[i+1:], in)...)
				for _, id := range t.words {
					covered[id] = true
				}
				continue
			}
		}
		if !slices.ContainsFunc(t.words, func(id int32) bool { return !covered[id] }) {
			continue
		}
		for _, id := range t.words {
			covered[id] = true
		}
		out = append(out, surface)
	}
	return out
}
