package index

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"cairn"
	"cairn/markdown"
)

// SearchQuery is a full-text search. Text holds words (every one must
// occur), "quoted phrases", prefixes ending in * (model*), and the filters
// type:T and folder:F, which may also be given in Type and Folder. Common
// English words (the, of, and, ...) are not indexed and are ignored outside
// phrases.
type SearchQuery struct {
	// Text is the query: at most 1000 bytes, 32 words, phrases and
	// prefixes (a word repeated counts once).
	Text   string
	Type   string // only pages of this type
	Folder string // only files under this folder
	// Limit is the most results; default 10, at most 100.
	Limit int
	// Offset skips the first results, for a next page; Offset+Limit is
	// at most 1000.
	Offset int
}

// maxSearchDepth is how deep into the results a page of them may start.
const maxSearchDepth = 1000

// SearchResult is one page that matches.
type SearchResult struct {
	ID    string  `json:"id"`
	Path  string  `json:"path"`
	Title string  `json:"title"`
	Type  string  `json:"type,omitempty"`
	Score float64 `json:"score"` // BM25, each word counted once; higher is better
	// Snippet is a passage of the page's plain text around the matches,
	// white space shrunk to single spaces, "…" where it is cut; nothing is
	// added to mark the matches, so the page's own Markdown ("**") reads
	// as written.
	Snippet string `json:"snippet"`
	// Matches are the [start, end) byte offsets of the matching words in
	// Snippet, in order.
	Matches [][2]int `json:"matches"`
}

// Bounds of a query: every term is looked up, every phrase checked.
const (
	maxQueryBytes = 1000
	maxQueryTerms = 32
)

// dedupTerms drops the terms a query repeats: a page holding one holds it
// again.
func dedupTerms(terms []term) []term {
	seen := map[string]bool{}
	out := terms[:0]
	for _, t := range terms {
		k := strings.Join(t.words, " ")
		if t.prefix {
			k += "*"
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

// term is one word, prefix or phrase of a query.
type term struct {
	words  []string // folded words; a phrase has several
	prefix bool
}

// parseQuery splits a query into terms and sets the filters it names.
func parseQuery(q *SearchQuery) []term {
	var terms []term
	s := q.Text
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			phrase := s[1:]
			if end >= 0 {
				phrase, s = s[1:1+end], s[2+end:]
			} else {
				s = ""
			}
			if ws := words(phrase); len(ws) > 0 {
				terms = append(terms, term{words: ws})
			}
			continue
		}
		tok := s
		if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
			tok, s = s[:i], s[i:]
		} else {
			s = ""
		}
		if k, v, ok := strings.Cut(tok, ":"); ok && v != "" && (k == "type" || k == "folder") {
			if k == "type" {
				q.Type = v
			} else {
				q.Folder = v
			}
			continue
		}
		prefix := strings.HasSuffix(tok, "*")
		ws := words(strings.TrimSuffix(tok, "*"))
		for i, w := range ws {
			terms = append(terms, term{words: []string{w}, prefix: prefix && i == len(ws)-1})
		}
	}
	return terms
}

// fullText returns the words of terms the full text is searched for:
// every indexed word of every term. A phrase matches as the AND of its
// words; Search checks the words' order against the page afterwards.
func fullText(terms []term) []FullTextTerm {
	var out []FullTextTerm
	for _, t := range terms {
		for i, w := range t.words {
			prefix := t.prefix && i == len(t.words)-1
			if stopwords[w] && !prefix {
				continue
			}
			out = append(out, FullTextTerm{Word: w, Prefix: prefix})
		}
	}
	return out
}

// phrases returns the terms of several words.
func phrases(terms []term) []term {
	var out []term
	for _, t := range terms {
		if len(t.words) > 1 {
			out = append(out, t)
		}
	}
	return out
}

// Search returns the pages that contain every term, with snippets: first
// those whose title holds every term, then shorter pages (the order of
// [Storage]).
func (r *Reader) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	if len(q.Text) > maxQueryBytes {
		return nil, cairn.Errorf(cairn.EINVALID, "the search is %d bytes; at most %d", len(q.Text), maxQueryBytes).
			WithHint("Search for fewer words: the few that best pick the pages out.")
	}
	terms := dedupTerms(parseQuery(&q))
	if len(terms) > maxQueryTerms {
		return nil, cairn.Errorf(cairn.EINVALID, "the search has %d words, phrases and prefixes; at most %d", len(terms), maxQueryTerms).
			WithHint("Search for fewer words: the few that best pick the pages out.")
	}
	ft := FullTextQuery{Terms: fullText(terms), Type: q.Type}
	if len(ft.Terms) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "the search %q has no words to look for (common words like \"the\" are not indexed)", q.Text).
			WithHint(`Try: cairn search "some words"`)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	if limit > 100 {
		return nil, cairn.Errorf(cairn.EINVALID, "a search returns at most 100 results, not %d", q.Limit)
	}
	if q.Offset < 0 || q.Offset > maxSearchDepth || q.Offset+limit > maxSearchDepth {
		return nil, cairn.Errorf(cairn.EINVALID, "a page of search results starts within the first %d, not at %d", maxSearchDepth-limit, q.Offset).
			WithHint("Narrow the search with more words, type:T or folder:F.")
	}
	want := phrases(terms)
	need := q.Offset + limit
	ft.Limit = need
	if len(want) > 0 {
		ft.Limit = max(500, need) // phrases are checked against the text, below
	}
	if q.Folder != "" {
		ft.Folder = strings.Trim(q.Folder, "/") + "/"
	}
	hits, err := r.q.Search(ctx, ft)
	if err != nil {
		// Every term reaches the storage quoted: an error is its own, not
		// the query's.
		return nil, fmt.Errorf("search %q: %w", q.Text, err)
	}
	found := make([]SearchResult, len(hits))
	for i, h := range hits {
		found[i] = SearchResult{ID: h.ID, Path: h.Path, Title: h.Title, Type: h.Type, Score: h.Score}
	}
	out := make([]SearchResult, 0, limit)
	skip, i := q.Offset, 0
	if len(want) == 0 {
		i, skip = min(skip, len(found)), 0 // every hit is a result: nothing to read
	}
	for i < len(found) && len(out) < limit {
		// The contents of the hits that can fill the page, in one read
		// (a round trip each on a database server); with phrases to
		// check, some are dropped, and the next hits are read after.
		n := min(len(found)-i, limit-len(out)+skip)
		blobs, err := r.readBlobs(ctx, hits[i:i+n])
		if err != nil {
			return nil, fmt.Errorf("search %q: %w", q.Text, err)
		}
		for ; n > 0 && len(out) < limit; i, n = i+1, n-1 {
			data, ok := blobs[hits[i].Blob]
			if !ok { // purged
				if len(want) > 0 {
					continue // the phrase cannot be checked
				}
				found[i].Matches = [][2]int{}
				out = append(out, found[i])
				continue
			}
			text := markdown.PlainText(data)
			if len(want) > 0 && !hasPhrases(found[i].Title+"\n"+text, want) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			found[i].Snippet, found[i].Matches = snippet(text, terms, 200)
			out = append(out, found[i])
		}
	}
	return out, nil
}

// readBlobs reads the contents of hits by hash; purged contents are not
// in the result.
func (r *Reader) readBlobs(ctx context.Context, hits []SearchHit) (map[cairn.Hash][]byte, error) {
	hs := make([]cairn.Hash, len(hits))
	for i, h := range hits {
		hs[i] = h.Blob
	}
	var mu sync.Mutex
	out := make(map[cairn.Hash][]byte, len(hs))
	err := r.t.ReadBlobs(ctx, hs, func(h cairn.Hash, data []byte) error {
		mu.Lock()
		defer mu.Unlock()
		out[h] = data
		return nil
	})
	return out, err
}

// hasPhrases reports whether text holds each phrase's words in order.
func hasPhrases(text string, ps []term) bool {
	ws := words(text)
	for _, p := range ps {
		ok := false
		for i := 0; i+len(p.words) <= len(ws) && !ok; i++ {
			ok = true
			for j, w := range p.words {
				last := j == len(p.words)-1
				if ws[i+j] != w && !(last && p.prefix && strings.HasPrefix(ws[i+j], w)) {
					ok = false
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// snippet cuts a passage of about width bytes from text around the first
// match of any term, with white space shrunk to single spaces and "…"
// where text goes on, and returns it with the byte offsets of every match
// in it.
func snippet(text string, terms []term, width int) (string, [][2]int) {
	type span struct{ start, end int }
	var spans []span
	first := -1
	eachWord(text, func(i, j int, w string) bool {
		if first >= 0 && i >= first+width {
			return false // past every passage the first match can begin
		}
		for _, t := range terms {
			if hit(w, t) {
				spans = append(spans, span{i, j})
				if first < 0 {
					first = i
				}
				break
			}
		}
		return true
	})
	if first < 0 {
		first = 0
	}
	start := max(0, first-width/3)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	if i := strings.IndexAny(text[start:first], " \n"); start > 0 && i >= 0 {
		start += i + 1
	}
	end := min(len(text), start+width)
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	if i := strings.LastIndexAny(text[first:end], " \n"); end < len(text) && i > 0 {
		end = first + i
	}
	var b strings.Builder
	matches := [][2]int{}
	if start > 0 {
		b.WriteString("…")
	}
	space := false // white space is pending
	at := 0        // the next span to find
	for i := start; i < end; {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			i += n
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		for at < len(spans) && spans[at].start < i {
			at++ // begins before the passage
		}
		if at < len(spans) && spans[at].start == i && spans[at].end <= end {
			// A match is one word: no white space inside.
			m := [2]int{b.Len(), 0}
			b.WriteString(text[i:spans[at].end])
			m[1] = b.Len()
			matches = append(matches, m)
			i = spans[at].end
			at++
			continue
		}
		b.WriteString(text[i : i+n])
		i += n
	}
	if end < len(text) {
		if space {
			b.WriteByte(' ')
		}
		b.WriteString("…")
	}
	return b.String(), matches
}

func hit(w string, t term) bool {
	for i, tw := range t.words {
		if stopwords[tw] && len(t.words) == 1 {
			return false
		}
		if w == tw || t.prefix && i == len(t.words)-1 && strings.HasPrefix(w, tw) {
			return true
		}
	}
	return false
}
