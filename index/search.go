package index

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"cairn"
	"cairn/markdown"
)

// SearchQuery is a full-text search. Text holds words (all must occur),
// "quoted phrases", prefixes ending in * (model*), and the filters
// type:T and folder:F, which may also be given in Type and Folder.
type SearchQuery struct {
	Text   string
	Type   string // only pages of this type
	Folder string // only files under this folder
	// Limit is the most results; default 10, at most 100.
	Limit int
}

// SearchResult is one page that matches.
type SearchResult struct {
	ID    string  `json:"id"`
	Path  string  `json:"path"`
	Title string  `json:"title"`
	Type  string  `json:"type,omitempty"`
	Score float64 `json:"score"` // BM25; higher is better
	// Snippet is a passage of the page around the matches, with each
	// match between ** and **.
	Snippet string `json:"snippet"`
}

// term is one word, prefix or phrase of a query.
type term struct {
	words  []string // folded words; a phrase has several
	prefix bool
}

// parseQuery splits a query into terms and filters.
func parseQuery(q *SearchQuery) ([]term, error) {
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
	if len(terms) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "the search %q has no words to look for", q.Text).
			WithHint(`Try: cairn search "some words"`)
	}
	return terms, nil
}

// fold is how the index compares words: lower case, without diacritics
// (as FTS5's unicode61 tokenizer with remove_diacritics 2).
func fold(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		out = s
	}
	return strings.ToLower(out)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) }

// words splits text into folded words as the tokenizer does.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) }) {
		out = append(out, fold(w))
	}
	return out
}

// match builds the FTS5 MATCH expression: every term, quoted.
func match(terms []term) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(strings.Join(t.words, " "), `"`, `""`))
		b.WriteByte('"')
		if t.prefix {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// Search returns the pages that contain every term, best first by BM25
// (title matches weigh ten times body matches), with snippets.
func (r *Reader) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	terms, err := parseQuery(&q)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	if limit > 100 {
		return nil, cairn.Errorf(cairn.EINVALID, "a search returns at most 100 results, not %d", q.Limit)
	}
	sqlq := `SELECT f.path, f.page_id, f.title, coalesce(f.type, ''), f.blob, -bm25(fts, 10.0, 1.0) AS score
		FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?`
	args := []any{match(terms)}
	if q.Type != "" {
		sqlq += ` AND f.type = ?`
		args = append(args, q.Type)
	}
	if q.Folder != "" {
		folder := strings.Trim(q.Folder, "/") + "/"
		sqlq += ` AND substr(f.path, 1, ?) = ? COLLATE NOCASE`
		args = append(args, len(folder), folder)
	}
	sqlq += ` ORDER BY score DESC, f.path LIMIT ?`
	args = append(args, limit)
	rows, err := r.q.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return nil, cairn.Errorf(cairn.EINVALID, "search %q: %w", q.Text, err).WithHint("Use words, \"phrases\" and prefix*.")
	}
	var out []SearchResult
	var blobs []cairn.Hash
	for rows.Next() {
		var res SearchResult
		var blob []byte
		if err := rows.Scan(&res.Path, &res.ID, &res.Title, &res.Type, &blob, &res.Score); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, res)
		blobs = append(blobs, cairn.Hash(blob))
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for i := range out {
		data, err := r.t.ReadBlob(ctx, blobs[i])
		if err != nil {
			continue // purged: no snippet
		}
		out[i].Snippet = snippet(markdown.PlainText(data), terms, 200)
	}
	return out, nil
}

// snippet cuts a passage of about width bytes from text around the first
// match of the first term that occurs, and marks every match with **.
func snippet(text string, terms []term, width int) string {
	type span struct{ start, end int }
	var spans []span
	first := -1
	// Walk the words of the text once, marking those that match a term.
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r) {
				break
			}
			j += n
		}
		w := fold(text[i:j])
		for _, t := range terms {
			if hit(w, t) {
				spans = append(spans, span{i, j})
				if first < 0 {
					first = i
				}
				break
			}
		}
		i = j
	}
	if first < 0 {
		first = 0
	}
	start := max(0, first-width/3)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	if i := strings.IndexAny(text[start:min(first, len(text))], " \n"); start > 0 && i >= 0 {
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
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, s := range spans {
		if s.start < start || s.end > end {
			continue
		}
		b.WriteString(text[pos:s.start])
		b.WriteString("**")
		b.WriteString(text[s.start:s.end])
		b.WriteString("**")
		pos = s.end
	}
	b.WriteString(text[pos:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func hit(w string, t term) bool {
	for _, tw := range t.words {
		if w == tw || t.prefix && strings.HasPrefix(w, tw) {
			return true
		}
	}
	return false
}
