package vaultgen

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// VocabularySize is the number of distinct words pages are written in.
const VocabularySize = 30000

// ZipfExponent is s in the word-frequency law p(rank) ∝ rank^-s; 1.07 is
// typical of English prose.
const ZipfExponent = 1.07

// functionWords are the top ranks of the vocabulary, most frequent first, so
// that text reads like prose and stop-word handling has something to do.
var functionWords = [...]string{
	"the", "of", "and", "to", "a", "in", "is", "that", "for", "it",
	"as", "was", "with", "be", "by", "on", "not", "this", "are", "or",
	"from", "at", "which", "but", "have", "an", "they", "were", "there", "been",
	"one", "all", "we", "their", "has", "would", "when", "if", "so", "no",
	"will", "can", "more", "who", "its", "into", "than", "them", "these", "also",
	"only", "some", "other", "then", "what", "about", "such", "two", "most", "after",
}

// Syllable parts for the pseudo-words. Repeated entries weight the draw.
var (
	onsets = [...]string{
		"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
		"b", "d", "l", "m", "n", "r", "s", "t", "br", "ch", "cl", "dr", "fl", "gr", "kr", "pl",
		"pr", "sh", "sk", "sl", "st", "th", "tr", "qu",
	}
	vowels = [...]string{"a", "e", "i", "o", "u", "a", "e", "i", "o", "a", "ai", "ea", "ie", "ou", "oa", "y"}
	codas  = [...]string{
		"", "", "", "", "", "", "n", "r", "s", "l", "m", "t", "k", "n", "r", "nd", "rn", "st", "sk", "th", "x", "ng", "lt",
	}
)

// avoided are words the generator must not emit as pseudo-words: YAML 1.1
// scalars that would not parse as strings in tags and aliases, and a few
// substrings nobody wants to see in a benchmark fixture.
var (
	yamlWords    = [...]string{"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
	avoidedParts = [...]string{"fuck", "shit", "cunt", "nig", "fag", "cock", "dick", "slut", "whore", "rape", "porn", "sex", "tit", "cum", "nazi"}
)

// Tag words that are not pseudo-words; the rest of the tag list is drawn from
// the vocabulary.
var englishTags = [...]string{
	"draft", "todo", "review", "open-question", "reference", "people", "project", "idea",
	"history", "method", "evidence", "timeline", "meeting", "reading", "followup", "disputed",
}

const tagCount = 240

// lexicon is the vocabulary and the samplers over it. It does not depend on
// the vault config, so it is built once per process.
type lexicon struct {
	words   []string // by rank, most frequent first
	caps    []string // words[i] with its first letter upper-cased
	all     *sampler // Zipf over every rank
	content *sampler // Zipf over the ranks after the function words
	tags    []string
	tagPick *sampler

	// slots holds word i in slots[2i:2i+2], its letters from the low byte
	// of the first uint64 on and its length in the top byte of the
	// second, so that appending a word is two stores and no memmove.
	slots []uint64
}

var theLexicon = sync.OnceValue(buildLexicon)

func buildLexicon() *lexicon {
	lx := &lexicon{words: make([]string, 0, VocabularySize)}
	seen := make(map[string]bool, VocabularySize+len(yamlWords))
	for _, w := range yamlWords {
		seen[w] = true
	}
	for _, w := range functionWords {
		seen[w] = true
		lx.words = append(lx.words, w)
	}
	var r rng
	r.seed(0, streamVocabulary, 0, 0)
	var b []byte
	for len(lx.words) < VocabularySize {
		// Frequent words are short, rare ones long, as in natural language.
		var syl int // syllables
		switch rank := len(lx.words); {
		case rank < 400:
			syl = 1 + r.intn(2) // 1 or 2
		case rank < 4000:
			syl = 1 + min(r.intn(4), 1) // 2, a quarter of the time 1
		default:
			syl = 2 + r.intn(2) // 2 or 3
		}
		b = b[:0]
		for s := range syl {
			if s > 0 || r.intn(100) >= 15 {
				b = append(b, onsets[r.intn(len(onsets))]...)
			}
			b = append(b, vowels[r.intn(len(vowels))]...)
			if s == syl-1 || r.intn(100) < 20 {
				b = append(b, codas[r.intn(len(codas))]...)
			}
		}
		w := string(b)
		if len(w) < 2 || len(w) > 12 || seen[w] || avoided(w) {
			continue
		}
		seen[w] = true
		lx.words = append(lx.words, w)
	}
	lx.caps = make([]string, len(lx.words))
	lx.slots = make([]uint64, 2*len(lx.words))
	for i, w := range lx.words {
		lx.caps[i] = strings.ToUpper(w[:1]) + w[1:]
		var slot [16]byte
		copy(slot[:], w)
		slot[15] = byte(len(w))
		lx.slots[2*i] = binary.LittleEndian.Uint64(slot[:8])
		lx.slots[2*i+1] = binary.LittleEndian.Uint64(slot[8:])
	}
	weights := make([]float64, VocabularySize)
	for i := range weights {
		weights[i] = powNeg(i+1, ZipfExponent)
	}
	lx.all = newSampler(weights)
	lx.content = newSampler(weights[len(functionWords):])

	lx.tags = append(lx.tags, englishTags[:]...)
	taken := make(map[string]bool, tagCount)
	for _, t := range lx.tags {
		taken[t] = true
	}
	for len(lx.tags) < tagCount {
		w := lx.words[len(functionWords)+lx.content.draw(r.u64())]
		if !taken[w] {
			taken[w] = true
			lx.tags = append(lx.tags, w)
		}
	}
	tw := make([]float64, tagCount)
	for i := range tw {
		tw[i] = powNeg(i+1, 1)
	}
	lx.tagPick = newSampler(tw)
	return lx
}

func avoided(w string) bool {
	for _, p := range avoidedParts {
		if strings.Contains(w, p) {
			return true
		}
	}
	return false
}

// word draws a word rank from the full Zipf distribution.
func (lx *lexicon) word(r *rng) int { return lx.all.draw(r.u64()) }

// appendWord appends word w to b. It is the generator's innermost loop.
func (lx *lexicon) appendWord(b []byte, w int) []byte {
	lo, hi := lx.slots[2*w], lx.slots[2*w+1]
	k := len(b)
	b = slices.Grow(b, 16)[:k+16]
	binary.LittleEndian.PutUint64(b[k:], lo)
	binary.LittleEndian.PutUint64(b[k+8:], hi)
	return b[:k+int(hi>>56)]
}

// contentWord draws a word rank from the Zipf distribution without the
// function words: title, tag and heading material.
func (lx *lexicon) contentWord(r *rng) int {
	return len(functionWords) + lx.content.draw(r.u64())
}

// sampler draws from a fixed discrete distribution in O(1) with Walker's
// alias method: pick a column uniformly, then keep it or take its alias.
// One 64-bit draw feeds both choices.
type sampler struct {
	n uint64
	// cols[i] holds column i: its alias in the high 32 bits, and in the
	// low 32 bits the threshold below which a draw keeps i. One load per
	// draw, as the table is read at random.
	cols []uint64
}

// newSampler builds the alias table for weights (Vose's construction). Only
// +, -, * and / are used, each product rounded explicitly, so the table is
// the same bit for bit on every platform.
func newSampler(weights []float64) *sampler {
	n := len(weights)
	s := &sampler{n: uint64(n), cols: make([]uint64, n)}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	scale := float64(n) / sum
	p := make([]float64, n)
	var small, large []int
	for i, w := range weights {
		p[i] = float64(w * scale)
		if p[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		sm := small[len(small)-1]
		small = small[:len(small)-1]
		lg := large[len(large)-1]
		s.cols[sm] = uint64(lg)<<32 | uint64(float64(max(p[sm], 0)*(1<<32)))
		p[lg] = (p[lg] + p[sm]) - 1
		if p[lg] < 1 {
			large = large[:len(large)-1]
			small = append(small, lg)
		}
	}
	// Leftovers have probability 1 up to rounding: they are their own
	// alias, so every draw keeps them.
	for _, i := range append(large, small...) {
		s.cols[i] = uint64(i) << 32
	}
	return s
}

// draw maps a uniform 64-bit value to an index.
func (s *sampler) draw(x uint64) int {
	col := (x >> 32) * s.n >> 32
	c := s.cols[col]
	if x&0xffffffff < c&0xffffffff {
		return int(col)
	}
	return int(c >> 32)
}

const ln2 = 0.693147180559945309417232121458176568

// powNeg returns k^-s for k ≥ 1 as exp(-s·ln k), computed with series in
// basic arithmetic. math.Pow, math.Log and math.Exp have assembly versions on
// some platforms and may differ in the last bit; these cannot, and the
// generated vault must not depend on the machine.
func powNeg(k int, s float64) float64 {
	if s == 1 {
		return 1 / float64(k)
	}
	return expNeg(-float64(s * lnInt(k)))
}

// lnInt returns ln k for k ≥ 1.
func lnInt(k int) float64 {
	frac, exp := math.Frexp(float64(k)) // k = frac·2^exp, frac in [0.5, 1)
	m, e := frac*2, exp-1               // exact
	if m > math.Sqrt2 {
		m, e = m/2, e+1 // exact
	}
	// ln m = 2·atanh(z) = 2(z + z³/3 + z⁵/5 + …) with |z| ≤ 0.172.
	z := (m - 1) / (m + 1)
	z2 := float64(z * z)
	sum, t := 0.0, z
	for j := 1; j < 40; j += 2 {
		sum += t / float64(j)
		t = float64(t * z2)
	}
	return float64(float64(e)*ln2) + float64(2*sum)
}

// expNeg returns e^x for x ≤ 0.
func expNeg(x float64) float64 {
	n := math.Floor(x / ln2)
	r := x - float64(n*ln2) // in [0, ln 2)
	sum, t := 1.0, 1.0
	for j := 1; j < 25; j++ {
		t = float64(t*r) / float64(j)
		sum += t
	}
	return math.Ldexp(sum, int(n))
}

// Purposes of the random streams. Each (seed, purpose, i, j) key gives an
// independent PCG stream, so one page's text never depends on another's.
const (
	streamVocabulary = iota + 1
	streamTitles
	streamPopularity
	streamPlan
	streamHeadings
	streamText
	streamCode
	streamEdit
	streamRewrite
	streamIndex
	streamLog
	streamRaw
	streamQueries
)

// rng is a PCG generator with the few helpers the generator needs. They are
// written here rather than taken from rand.Rand so that the output depends
// only on PCG, whose algorithm is fixed, and not on how a Go release maps
// its output to ranges.
type rng struct{ pcg rand.PCG }

func mix(x uint64) uint64 { // splitmix64's finalizer
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// seed starts the stream for (vault seed, purpose, i, j).
func (r *rng) seed(vault uint64, purpose, i, j int) {
	h := mix(vault + 0x9e3779b97f4a7c15*mix(uint64(purpose)+0x9e3779b97f4a7c15*mix(uint64(i)+0x9e3779b97f4a7c15*mix(uint64(j)))))
	r.pcg.Seed(h, mix(h^0x6a09e667f3bcc909))
}

func (r *rng) u64() uint64 { return r.pcg.Uint64() }

// intn returns a number in [0, n) for n > 0 (Lemire's multiply-shift; the
// bias is below n/2⁶⁴).
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.pcg.Uint64(), uint64(n))
	return int(hi)
}

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// percent reports true with probability p/100.
func (r *rng) percent(p int) bool { return r.intn(100) < p }
