package postgres

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The full text: one row of fts per page, its distinct words as the
// lexemes of two tsvectors (title, and title with body), made from the
// words as the index gives them (array_to_tsvector's way, not a parser's):
// a page matches a term when a lexeme equals it, a prefix term when a
// lexeme starts with it, which is FTS5's matching of the same words.

// Bounds of what one tsvector holds: a lexeme of at most 2047 bytes, at
// most 1 MiB of lexemes. A longer word is kept as its first maxLexeme
// bytes: queries are at most 1000 bytes (index.SearchQuery), so a prefix
// matches the cut word as it matches the whole one, and no word of a
// query equals either. A page of more than maxLexemes bytes of distinct
// words keeps the rest in fts_more, in parts of at most that many.
const (
	maxLexeme  = 2000
	maxLexemes = 1_000_000
)

// lexemes returns the distinct words of s (words separated by spaces),
// each cut to maxLexeme bytes, sorted by bytes (a tsvector's order), in
// parts of at most maxLexemes bytes; and how many words s holds.
func lexemes(s string) ([][]string, int) {
	ws := make([]string, 0, strings.Count(s, " ")+1)
	for w := range strings.SplitSeq(s, " ") {
		if w == "" {
			continue
		}
		if len(w) > maxLexeme {
			cut := maxLexeme
			for cut > 0 && !utf8.RuneStart(w[cut]) {
				cut--
			}
			w = w[:cut]
		}
		ws = append(ws, w)
	}
	n := len(ws)
	slices.Sort(ws)
	ws = slices.Compact(ws)
	var parts [][]string
	start, size := 0, 0
	for i, w := range ws {
		if size+len(w) > maxLexemes {
			parts = append(parts, ws[start:i])
			start, size = i, 0
		}
		size += len(w)
	}
	return append(parts, ws[start:]), n
}

// tsvector returns words as a tsvector without positions.
func tsvector(words []string) pgtype.TSVector {
	v := pgtype.TSVector{Lexemes: make([]pgtype.TSVectorLexeme, len(words)), Valid: true}
	for i, w := range words {
		v.Lexemes[i].Word = w
	}
	return v
}

// pageText is a page's full text as fts keeps it.
type pageText struct {
	id          int64
	words       int
	title, body [][]string // lexemes in parts: the first in fts, the rest in fts_more
}

func newPageText(id int64, title, text string) *pageText {
	p := &pageText{id: id}
	p.title, _ = lexemes(title)
	p.body, p.words = lexemes(text)
	return p
}

// more reports whether the page has words in fts_more.
func (p *pageText) more() bool { return len(p.title) > 1 || len(p.body) > 1 }

// moreRows returns the page's rows of fts_more.
func (p *pageText) moreRows() [][]any {
	var out [][]any
	for part, ws := range p.title[1:] {
		out = append(out, []any{p.id, true, int32(part + 1), tsvector(ws)})
	}
	for part, ws := range p.body[1:] {
		out = append(out, []any{p.id, false, int32(part + 1), tsvector(ws)})
	}
	return out
}

// WriteText adds a page to the full text, among the short pages when it
// has at most the tier's words (during a full build, the tier is chosen
// at its end; see textBuild). Until FinishBuild, a full build holds back
// the text of the shortest pages it has seen.
func (t *indexTx) WriteText(ctx context.Context, id int64, title, text string) error {
	p := newPageText(id, title, text)
	if t.building != nil {
		return t.building.add(ctx, t, p)
	}
	tier, err := t.shortTier(ctx)
	if err != nil {
		return err
	}
	short := tier >= 0 && p.words <= tier
	t.textChanged = true
	if err := t.exec(ctx, "full text", `INSERT INTO fts (id, words, short, more, title, body) VALUES ($1, $2, $3, $4, $5, $6)`,
		id, int32(p.words), short, p.more(), tsvector(p.title[0]), tsvector(p.body[0])); err != nil {
		return err
	}
	for _, row := range p.moreRows() {
		if err := t.exec(ctx, "full text", `INSERT INTO fts_more (id, title, part, lexemes) VALUES ($1, $2, $3, $4)`, row...); err != nil {
			return err
		}
	}
	t.totals.add(1, p.words, short, p.more())
	if t.vocab == nil {
		t.vocab = map[string]int32{}
	}
	for _, part := range p.body {
		for _, w := range part {
			t.vocab[w]++
		}
	}
	return nil
}

// textTotals are the full text's totals, or changes to them.
type textTotals struct {
	pages, words, short, more int64
}

// add adds a page (n = 1) or takes one away (n = -1).
func (s *textTotals) add(n int64, words int, short, more bool) {
	s.pages += n
	s.words += n * int64(words)
	s.short += n * int64(b2i(short))
	s.more += n * int64(b2i(more))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DeleteText removes a page from the full text; what it held is taken
// from the totals and the words' page counts when the deletes return it.
func (t *indexTx) DeleteText(ctx context.Context, id int64) error {
	t.textChanged = true
	if t.vocab == nil {
		t.vocab = map[string]int32{}
	}
	forget := func(v pgtype.TSVector) {
		for _, l := range v.Lexemes {
			t.vocab[l.Word]--
		}
	}
	err := t.execRead(ctx, "full text", func(rows pgx.Rows) error {
		for rows.Next() {
			var words int32
			var short, more bool
			var body pgtype.TSVector
			if err := rows.Scan(&words, &short, &more, &body); err != nil {
				return err
			}
			t.totals.add(-1, int(words), short, more)
			forget(body)
		}
		return nil
	}, `DELETE FROM fts WHERE id = $1 RETURNING words, short, more, body`, id)
	if err != nil {
		return err
	}
	return t.execRead(ctx, "full text", func(rows pgx.Rows) error {
		for rows.Next() {
			var title bool
			var lexemes pgtype.TSVector
			if err := rows.Scan(&title, &lexemes); err != nil {
				return err
			}
			if !title {
				forget(lexemes)
			}
		}
		return nil
	}, `DELETE FROM fts_more WHERE id = $1 RETURNING title, lexemes`, id)
}

// saveText sends the queued writes (a page's delete returns what it
// held), then queues the writes of what the pages written and deleted
// changed of the totals and of their words' page counts.
func (t *indexTx) saveText(ctx context.Context) error {
	if err := t.sendQueued(ctx); err != nil {
		return err
	}
	if d := t.totals; d != (textTotals{}) {
		t.totals = textTotals{}
		if err := t.exec(ctx, "full text", `UPDATE fts_stats SET pages = pages + $1, words = words + $2, short = short + $3, more = more + $4`,
			d.pages, d.words, d.short, d.more); err != nil {
			return err
		}
	}
	if len(t.vocab) == 0 {
		return nil
	}
	words, deltas := make([]string, 0, len(t.vocab)), make([]int32, 0, len(t.vocab))
	for w, n := range t.vocab {
		if n != 0 {
			words, deltas = append(words, w), append(deltas, n)
		}
	}
	t.vocab = nil
	if len(words) == 0 {
		return nil
	}
	return t.exec(ctx, "full text: words", `INSERT INTO fts_vocab (word, pages) SELECT * FROM unnest($1::text[], $2::int[])
		ON CONFLICT (word) DO UPDATE SET pages = fts_vocab.pages + excluded.pages`, words, deltas)
}

// shortTier returns the short pages' bound, read once a transaction; -1
// when the full text was never built.
func (t *indexTx) shortTier(ctx context.Context) (int, error) {
	if t.tier != nil {
		return *t.tier, nil
	}
	var tier int32
	if err := t.queryRow(ctx, `SELECT tier FROM fts_stats WHERE id = 1`, nil, &tier); err != nil {
		return 0, fmt.Errorf("index: full text: short pages: %w", err)
	}
	v := int(tier)
	t.tier = &v
	return v, nil
}

// shortTier is about how many of a vault's pages the short pages are:
// enough to hold a word found in a few percent of pages ten times over (a
// page of results), few enough to rank every match among them at once.
// They are every page until they are twice that many, and cut back to
// that many (SetState) whenever they double.
func shortTier(pages int) int { return max(1000, pages/50) }

// everyPage is the tier of a vault with no page left out of the short
// pages.
const everyPage = 1<<31 - 1

// cutTier cuts the short pages back to the pages of at most the words of
// the shortTier-th shortest one when they are more than twice shortTier
// of the pages. Only at the end of a build or update (SetState), when
// every page's text is written.
func (t *indexTx) cutTier(ctx context.Context) error {
	if !t.textChanged || t.building != nil {
		return nil
	}
	t.textChanged = false
	if err := t.saveText(ctx); err != nil {
		return err
	}
	var pages int64
	var tier, short int32
	if err := t.queryRow(ctx, `SELECT pages, tier, short FROM fts_stats WHERE id = 1`, nil, &pages, &tier, &short); err != nil {
		return fmt.Errorf("index: full text: short pages: %w", err)
	}
	n := shortTier(int(pages))
	if tier < 0 || int(short) <= 2*n {
		return nil
	}
	var words int32
	err := t.queryRow(ctx, `SELECT words FROM fts WHERE short ORDER BY words OFFSET $1 LIMIT 1`, []any{n - 1}, &words)
	if notFound(err) || err == nil && words >= tier {
		return nil
	}
	if err != nil {
		return fmt.Errorf("index: full text: short pages: %w", err)
	}
	v := int(words)
	t.tier = &v
	return t.exec(ctx, "full text: short pages", `WITH c AS (UPDATE fts SET short = false WHERE short AND words > $1 RETURNING id)
		UPDATE fts_stats SET tier = $1, short = short - (SELECT count(*) FROM c)`, words)
}

// textBuild is the full text of a full build between Clear and
// FinishBuild: pages held to be written many to a COPY, and the shortest
// pages seen, held until the end, when the tier is known and they are
// written among the short pages (or not).
type textBuild struct {
	rows  [][]any // rows of fts not written yet
	more  [][]any // rows of fts_more not written yet
	bytes int     // the lexemes' bytes in rows
	short shortPages
	// The totals of the pages written or held, and how many hold each
	// word.
	pages, words, morePages int64
	vocab                   map[string]int32
	tier                    int
	// makeIndexes says Clear dropped the GIN indexes, for finish to make.
	makeIndexes bool
}

// ftsIndexes are the GIN indexes of the full text, as migration 0002
// makes them.
func ftsIndexes() []string {
	return []string{
		`CREATE INDEX fts_title ON fts USING gin (title)`,
		`CREATE INDEX fts_body ON fts USING gin (body)`,
		`CREATE INDEX fts_title_short ON fts USING gin (title) WHERE short`,
		`CREATE INDEX fts_body_short ON fts USING gin (body) WHERE short`,
	}
}

func newTextBuild() *textBuild { return &textBuild{vocab: map[string]int32{}} }

// textBuildRows and textBuildBytes bound what a build holds before it
// writes.
const (
	textBuildRows  = 4096
	textBuildBytes = 16 << 20
)

// add takes a page, holding it among the shortest or for writing.
func (b *textBuild) add(ctx context.Context, t *indexTx, p *pageText) error {
	b.pages++
	b.words += int64(p.words)
	for _, part := range p.body {
		for _, w := range part {
			if n, ok := b.vocab[w]; ok {
				b.vocab[w] = n + 1
			} else {
				b.vocab[strings.Clone(w)] = 1 // not the page's text
			}
		}
	}
	if out := b.short.add(p); out != nil {
		return b.hold(ctx, t, out, false)
	}
	return nil
}

// hold queues a page's rows for COPY, writing when enough are held.
func (b *textBuild) hold(ctx context.Context, t *indexTx, p *pageText, short bool) error {
	more := p.more()
	if more {
		b.morePages++
		b.more = append(b.more, p.moreRows()...)
	}
	b.rows = append(b.rows, []any{p.id, int32(p.words), short, more, tsvector(p.title[0]), tsvector(p.body[0])})
	for _, w := range p.body[0] {
		b.bytes += len(w) + 8
	}
	if len(b.rows) >= textBuildRows || b.bytes >= textBuildBytes || len(b.more) > 0 {
		return b.flush(ctx, t)
	}
	return nil
}

// flush writes the rows held.
func (b *textBuild) flush(ctx context.Context, t *indexTx) error {
	if len(b.rows) > 0 {
		_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"fts"}, []string{"id", "words", "short", "more", "title", "body"}, pgx.CopyFromRows(b.rows))
		if err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
		clear(b.rows)
		b.rows, b.bytes = b.rows[:0], 0
	}
	if len(b.more) > 0 {
		_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"fts_more"}, []string{"id", "title", "part", "lexemes"}, pgx.CopyFromRows(b.more))
		if err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
		b.more = nil
	}
	return nil
}

// finish writes the shortest pages, the totals and the vocabulary, and
// makes the GIN indexes Clear dropped, or else merges their pending
// entries, which every search would otherwise read.
func (b *textBuild) finish(ctx context.Context, t *indexTx) error {
	pages, tier := b.short.done()
	b.tier = tier
	for _, p := range pages {
		if err := b.hold(ctx, t, p.text, p.words <= tier); err != nil {
			return err
		}
	}
	if err := b.flush(ctx, t); err != nil {
		return err
	}
	words := slices.Sorted(maps.Keys(b.vocab))
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"fts_vocab"}, []string{"word", "pages"},
		pgx.CopyFromSlice(len(words), func(i int) ([]any, error) { return []any{words[i], b.vocab[words[i]]}, nil }))
	if err != nil {
		return fmt.Errorf("index: full text: words: %w", t.db.translate(err))
	}
	b.vocab = nil
	short := 0
	for _, p := range pages {
		if p.words <= tier {
			short++
		}
	}
	indexes := []string{`SELECT gin_clean_pending_list(i::regclass) FROM unnest(ARRAY['fts_title', 'fts_body', 'fts_title_short', 'fts_body_short']) i`}
	if b.makeIndexes {
		indexes = ftsIndexes()
	}
	for _, sql := range indexes {
		if _, err := t.tx.Exec(ctx, sql); err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
	}
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE fts_stats SET pages = $1, words = $2, more = $3, tier = $4, short = $5`,
			[]any{b.pages, b.words, int32(b.morePages), int32(b.tier), int32(short)}},
		// Statistics for the planner, which would otherwise plan the
		// index's lookups on tables it takes for empty (the words'
		// statistics of the full text would cost more than they help:
		// searches go by their GIN indexes).
		{`ANALYZE files, keys, links, link_keys, cites, findings, fts (id, words, short, more)`, nil},
	} {
		if _, err := t.tx.Exec(ctx, stmt.sql, stmt.args...); err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
	}
	return nil
}

// shortPage is a page held among the shortest.
type shortPage struct {
	id    int64
	words int
	text  *pageText
}

// shortPages keeps the shortest pages a full build writes, in a max-heap
// by words and id bounded to shortTier of the pages seen (memory about
// that many pages' words, a few MB).
type shortPages struct {
	heap pageHeap
	seen int
	cut  int // the fewest words of a page left out; -1 when none was
}

// add offers a page and returns the one it leaves out, if any.
func (s *shortPages) add(p *pageText) *pageText {
	if s.seen == 0 {
		s.cut = -1
	}
	s.seen++
	heap.Push(&s.heap, shortPage{id: p.id, words: p.words, text: p})
	if s.heap.Len() <= shortTier(s.seen) {
		return nil
	}
	out := heap.Pop(&s.heap).(shortPage)
	if s.cut < 0 || out.words < s.cut {
		s.cut = out.words
	}
	return out.text
}

// done returns the pages held and the tier: every page of at most that
// many words is among them. With no page left out, the tier holds every
// page (everyPage); else its words are one less than the shortest page
// left out (every page shorter than it is held), and the pages held with
// more words are not short pages.
func (s *shortPages) done() ([]shortPage, int) {
	tier := everyPage
	if s.cut >= 0 {
		tier = s.cut - 1
	}
	pages := slices.Clone(s.heap)
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
