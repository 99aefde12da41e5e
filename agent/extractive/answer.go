package extractive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"cairn/agent"
	"cairn/index"
)

var _ agent.Answerer = (*Runtime)(nil)

// Bounds of a retrieved answer.
const (
	answerPassages = 5 // pages quoted
	answerTerms    = 8 // content words of the question searched for
)

// Answer answers offline, by retrieval: the passages of the vault's pages
// that best match the question's content words, each with its page. A
// page matching more of the words ranks first; among equals, the better
// BM25 score. It reads main's committed index (q.Base is its head); with
// a working set, only its pages.
func (x *Runtime) Answer(ctx context.Context, q *agent.Question) (*agent.Reply, error) {
	if q.Tool != "" {
		return x.tool(ctx, q)
	}
	terms := contentWords(q.Text)
	if len(terms) == 0 {
		return &agent.Reply{Answer: "The question holds no word to look for in the vault."}, nil
	}
	ranked, err := x.retrieve(ctx, q.Text, q.Scope, answerPassages)
	if err != nil {
		return nil, err
	}
	if len(ranked) == 0 {
		return &agent.Reply{Answer: "No page of the vault matches the question's words (" + strings.Join(terms, ", ") + ")."}, nil
	}
	var b strings.Builder
	b.WriteString("The passages of the vault that best match the question (offline retrieval, no model):\n")
	reply := &agent.Reply{}
	for _, h := range ranked {
		title := h.Title
		if title == "" {
			title = h.ID
		}
		fmt.Fprintf(&b, "\n> %s\n\n— [[%s|%s]]\n", h.Snippet, h.ID, title)
		reply.Citations = append(reply.Citations, agent.Cited{Page: h.Path})
	}
	reply.Answer = b.String()
	return reply, nil
}

// retrieve returns the search results, with snippets, of the n pages that
// best match text's content words: a page matching more of the words
// ranks first; among equals, the better BM25 score. With a working set
// (scope), only its pages.
func (x *Runtime) retrieve(ctx context.Context, text string, scopePaths []string, n int) ([]index.SearchResult, error) {
	terms := contentWords(text)
	if len(terms) == 0 {
		return nil, nil
	}
	r := x.Index.Main()
	limit := n
	var scope map[string]bool
	if scopePaths != nil {
		// A working set: the best of its pages, among more results.
		limit, scope = max(100, n), map[string]bool{}
		for _, p := range scopePaths {
			scope[p] = true
		}
	}
	type hit struct {
		res     index.SearchResult
		matched int
		score   float64
	}
	hits := map[string]*hit{}
	add := func(res []index.SearchResult, weight int) {
		for _, s := range res {
			if scope != nil && !scope[s.Path] {
				continue
			}
			h := hits[s.Path]
			if h == nil {
				h = &hit{res: s}
				hits[s.Path] = h
			}
			h.matched += weight
			h.score += s.Score
		}
	}
	// All the words at once first: when enough pages hold every one, they
	// are the answer.
	all, err := r.Search(ctx, index.SearchQuery{Text: strings.Join(terms, " "), Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("extractive answer: %w", err)
	}
	add(all, len(terms))
	if len(hits) < n && len(terms) > 1 {
		for _, t := range terms {
			res, err := r.Search(ctx, index.SearchQuery{Text: t, Limit: limit})
			if err != nil {
				return nil, fmt.Errorf("extractive answer: %w", err)
			}
			add(res, 1)
		}
	}
	ranked := make([]*hit, 0, len(hits))
	for _, h := range hits {
		if h.res.Snippet != "" {
			ranked = append(ranked, h)
		}
	}
	slices.SortFunc(ranked, func(a, b *hit) int {
		if a.matched != b.matched {
			return b.matched - a.matched
		}
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.res.Path, b.res.Path)
	})
	out := make([]index.SearchResult, 0, min(len(ranked), n))
	for _, h := range ranked[:min(len(ranked), n)] {
		out = append(out, h.res)
	}
	return out, nil
}

// contentWords returns the question's words that carry a topic, folded,
// each once, the longest first, at most answerTerms.
func contentWords(q string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) < 3 || trStopwords[w] || seen[w] || questionWords[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	slices.SortStableFunc(out, func(a, b string) int { return len([]rune(b)) - len([]rune(a)) })
	return out[:min(len(out), answerTerms)]
}

// questionWords are the words of asking, which no page is about.
var questionWords = map[string]bool{"what": true, "who": true, "whom": true, "whose": true, "which": true, "when": true,
	"where": true, "why": true, "tell": true, "explain": true, "describe": true, "know": true, "does": true, "did": true}
