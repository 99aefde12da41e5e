package postgres

import (
	"context"
	"fmt"
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
// each cut to maxLexeme bytes (a word with no letter starting in those is
// counted, but has no lexeme), sorted by bytes (a tsvector's order), in
// parts of at most maxLexemes bytes; and how many words s holds.
func lexemes(s string) ([][]string, int) {
	ws := make([]string, 0, strings.Count(s, " ")+1)
	skipped := 0
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
		if w == "" { // no letter starts in its first maxLexeme bytes
			skipped++
			continue
		}
		ws = append(ws, w)
	}
	n := len(ws) + skipped
	sortWords(ws)
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

// sortWords sorts ws by bytes. Each word's first six bytes and its place
// are packed in an integer and the integers sorted, which compares no
// strings; words that share their first six bytes are then sorted as
// strings among themselves. BenchmarkLexemes: 24 µs a page of 250 words
// sorted as strings, 14 µs so (BENCHMARKS.md).
func sortWords(ws []string) {
	if len(ws) < 2 {
		return
	}
	if len(ws) > 1<<16 { // more places than the integers have room for
		slices.Sort(ws)
		return
	}
	keys := make([]uint64, len(ws))
	for i, w := range ws {
		keys[i] = wordPrefix(w)<<16 | uint64(i)
	}
	slices.Sort(keys)
	sorted := make([]string, len(ws))
	for i, k := range keys {
		sorted[i] = ws[k&0xffff]
	}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j]>>16 == keys[i]>>16 {
			j++
		}
		if j-i > 1 {
			slices.Sort(sorted[i:j])
		}
		i = j
	}
	copy(ws, sorted)
}

// wordPrefix is w's first six bytes, big-endian, padded with zeros: for
// words a < b, wordPrefix(a) <= wordPrefix(b).
func wordPrefix(w string) uint64 {
	var k uint64
	for i := range 6 {
		k <<= 8
		if i < len(w) {
			k |= uint64(w[i])
		}
	}
	return k
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

// WriteText adds a page to the full text, and to the tiers of the
// shortest pages whose bounds its words are within (during a full build,
// the bounds are chosen at its end; see textBuild).
func (t *indexTx) WriteText(ctx context.Context, id int64, title, text string) error {
	p := newPageText(id, title, text)
	if t.building != nil {
		return t.building.add(ctx, t, p)
	}
	bounds, err := t.tierBounds(ctx)
	if err != nil {
		return err
	}
	t.textChanged = true
	if err := t.exec(ctx, "full text", `INSERT INTO fts (id, words, more, title, body) VALUES ($1, $2, $3, $4, $5)`,
		id, int32(p.words), p.more(), tsvector(p.title[0]), tsvector(p.body[0])); err != nil {
		return err
	}
	for _, row := range p.moreRows() {
		if err := t.exec(ctx, "full text", `INSERT INTO fts_more (id, title, part, lexemes) VALUES ($1, $2, $3, $4)`, row...); err != nil {
			return err
		}
	}
	t.totals.add(1, p.words, p.more())
	for i, tr := range t.sizes.tiers() {
		if p.more() || bounds[i] < 0 || p.words > bounds[i] {
			continue
		}
		if err := t.exec(ctx, "full text", `INSERT INTO `+tr.table+` (id, words, title, body) SELECT id, words, title, body FROM fts WHERE id = $1`, id); err != nil {
			return err
		}
		t.totals.tiers[i]++
	}
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

// textTotals are the full text's totals, or changes to them: pages, their
// words, the pages with words in fts_more, the pages of each tier.
type textTotals struct {
	pages, words, more int64
	tiers              [2]int64
}

// add adds a page (n = 1) or takes one away (n = -1), but not to the
// tiers.
func (s *textTotals) add(n int64, words int, more bool) {
	s.pages += n
	s.words += n * int64(words)
	s.more += n * int64(b2i(more))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DeleteText removes a page from the full text and its tiers; what it
// held is taken from the totals and the words' page counts when the
// deletes return it (the stored lexemes are its words: the text the
// index read again is not needed).
func (t *indexTx) DeleteText(ctx context.Context, id int64, _ string) error {
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
			var more bool
			var body pgtype.TSVector
			if err := rows.Scan(&words, &more, &body); err != nil {
				return err
			}
			t.totals.add(-1, int(words), more)
			forget(body)
		}
		return nil
	}, `DELETE FROM fts WHERE id = $1 RETURNING words, more, body`, id)
	if err != nil {
		return err
	}
	for i, tr := range t.sizes.tiers() {
		err := t.execRead(ctx, "full text", func(rows pgx.Rows) error {
			for rows.Next() {
				t.totals.tiers[i]--
			}
			return nil
		}, `DELETE FROM `+tr.table+` WHERE id = $1 RETURNING id`, id)
		if err != nil {
			return err
		}
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

// saveText sends the queued writes (a page's deletes return what it
// held), then queues the writes of what the pages written and deleted
// changed of the totals and of their words' page counts.
func (t *indexTx) saveText(ctx context.Context) error {
	if err := t.sendQueued(ctx); err != nil {
		return err
	}
	if d := t.totals; d != (textTotals{}) {
		t.totals = textTotals{}
		if err := t.exec(ctx, "full text", `UPDATE fts_stats SET pages = pages + $1, words = words + $2, more = more + $3,
			short = short + $4, mid = mid + $5`, d.pages, d.words, d.more, d.tiers[0], d.tiers[1]); err != nil {
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

// tier is one of the tables that hold the full text of the shortest pages
// again: every page (without words in fts_more) of at most bound words,
// about size(pages) of them.
type tier struct {
	table, bound, count string // the table, its columns of fts_stats
	size                func(pages int) int
}

// tiers are the tiers of the shortest pages, shortest first: fts_short
// of about sizes.short(pages), fts_mid of sizes.mid(pages).
func (s tierSizes) tiers() []tier {
	return []tier{
		{table: "fts_short", bound: "short_words", count: "short", size: s.short},
		{table: "fts_mid", bound: "mid_words", count: "mid", size: s.mid},
	}
}

// tierSizes sizes the tiers: least is the fewest pages fts_short holds
// (defaultLeastShort; tests of small vaults make it smaller).
type tierSizes struct {
	least int
}

// defaultLeastShort is the fewest pages fts_short holds.
const defaultLeastShort = 1000

// short is about how many of a vault's pages fts_short holds: enough to
// hold a word found in a few percent of pages ten times over (a page of
// results), few enough to rank every match among them at once. It holds
// every page until it has twice that many, and is cut back to that many
// (SetState) whenever it doubles (as in SQLite).
func (s tierSizes) short(pages int) int { return max(s.least, pages/50) }

// mid is about how many pages fts_mid holds: six times fts_short, for
// words whose matches are too few among the shortest pages. A vault of
// fewer than four times that many pages has none (hasMid): ranking its
// matches among every page costs little more.
func (s tierSizes) mid(pages int) int { return 6 * s.short(pages) }

func (s tierSizes) hasMid(pages int) bool { return pages >= 4*s.mid(pages) }

// everyPage is the bound of a tier with no page left out.
const everyPage = 1<<31 - 1

// tierBounds returns the tiers' bounds, read once a transaction; -1 for
// a tier there is none of.
func (t *indexTx) tierBounds(ctx context.Context) ([2]int, error) {
	if t.bounds != nil {
		return *t.bounds, nil
	}
	var short, mid int32
	if err := t.queryRow(ctx, `SELECT short_words, mid_words FROM fts_stats WHERE id = 1`, nil, &short, &mid); err != nil {
		return [2]int{}, fmt.Errorf("index: full text: short pages: %w", err)
	}
	t.bounds = &[2]int{int(short), int(mid)}
	return *t.bounds, nil
}

// fitTiers keeps the tiers to their sizes: a tier that holds more than
// twice its size is cut back to the pages of at most the words of the
// size-th shortest one, and fts_mid is made when the vault has grown to
// have one (once in a vault's life, that commit copies some 6,000 pages'
// text). Only at the end of an update (SetState), when every page's text
// is written.
func (t *indexTx) fitTiers(ctx context.Context) error {
	if !t.textChanged || t.building != nil {
		return nil
	}
	t.textChanged = false
	if err := t.saveText(ctx); err != nil {
		return err
	}
	var pages int64
	var short, mid [2]int32
	if err := t.queryRow(ctx, `SELECT pages, short_words, short, mid_words, mid FROM fts_stats WHERE id = 1`, nil,
		&pages, &short[0], &short[1], &mid[0], &mid[1]); err != nil {
		return fmt.Errorf("index: full text: short pages: %w", err)
	}
	bounds, err := t.tierBounds(ctx)
	if err != nil {
		return err
	}
	for i, tr := range t.sizes.tiers() {
		bound, count := [2][2]int32{short, mid}[i][0], [2][2]int32{short, mid}[i][1]
		n := tr.size(int(pages))
		var words int32
		switch {
		case i == 1 && bound < 0 && t.sizes.hasMid(int(pages)):
			w, err := t.tierBound(ctx, "fts", n)
			if err != nil || w < 0 {
				return err
			}
			bounds[i] = w
			err = t.exec(ctx, "full text: short pages", `WITH c AS (INSERT INTO fts_mid (id, words, title, body)
				SELECT id, words, title, body FROM fts WHERE NOT more AND words <= $1 RETURNING id)
				UPDATE fts_stats SET mid_words = $1, mid = (SELECT count(*) FROM c)`, int32(w))
			if err != nil {
				return err
			}
		case bound >= 0 && int(count) > 2*n:
			err := t.queryRow(ctx, `SELECT words FROM `+tr.table+` ORDER BY words OFFSET $1 LIMIT 1`, []any{n - 1}, &words)
			if notFound(err) || err == nil && words >= bound {
				continue
			}
			if err != nil {
				return fmt.Errorf("index: full text: short pages: %w", err)
			}
			bounds[i] = int(words)
			err = t.exec(ctx, "full text: short pages", `WITH c AS (DELETE FROM `+tr.table+` WHERE words > $1 RETURNING id)
				UPDATE fts_stats SET `+tr.bound+` = $1, `+tr.count+` = `+tr.count+` - (SELECT count(*) FROM c)`, words)
			if err != nil {
				return err
			}
		}
	}
	t.bounds = &bounds
	return nil
}

// tierBound returns the bound of a tier of about n pages of the full text
// in table (fts, or a build's side table): one less than the words of the
// shortest page left out (every page shorter than it is in), or everyPage
// when n pages are all there are.
func (t *indexTx) tierBound(ctx context.Context, table string, n int) (int, error) {
	var words int32
	err := t.queryRow(ctx, `SELECT words FROM `+table+` WHERE NOT more ORDER BY words OFFSET $1 LIMIT 1`, []any{n}, &words)
	if notFound(err) {
		return everyPage, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index: full text: short pages: %w", err)
	}
	return int(words) - 1, nil
}

// textBuild is the full text of a full build between Clear and
// FinishBuild: pages held to be written many to a COPY, the totals and
// the words' page counts, written at the end with the tiers.
type textBuild struct {
	rows  [][]any // rows of fts not written yet
	more  [][]any // rows of fts_more not written yet
	bytes int     // the lexemes' bytes in rows
	// The totals of the pages written or held, and how many hold each
	// word.
	totals textTotals
	vocab  *wordCounts
	// dropped are the indexes Clear dropped, for finish to make.
	dropped []indexDef
	// side, when not nil, holds the rows of fts: they are loaded into a
	// table of its own and swapped in by finish (see sideText).
	side *sideText
}

// ftsIndexNames are the GIN indexes of the full text and its tiers, as
// migration 0002 makes them.
func ftsIndexNames() []string {
	return []string{"fts_title", "fts_body", "fts_short_title", "fts_short_body", "fts_mid_title", "fts_mid_body"}
}

// buildMemory is the memory a full build's indexes are made in, for this
// transaction only.
const buildMemory = "512MB"

func newTextBuild() *textBuild { return &textBuild{vocab: newWordCounts()} }

// textBuildRows and textBuildBytes bound what a build holds before it
// writes.
const (
	textBuildRows  = 4096
	textBuildBytes = 16 << 20
)

// cleanPending merges the pending entries of the full text's GIN
// indexes, which every search would otherwise read until a vacuum merges
// them, when Clear dropped no index (only the indexes' owner may merge
// them: a role that does not own them leaves that to the vacuum).
func (b *textBuild) cleanPending(ctx context.Context, t *indexTx) error {
	_, err := t.tx.Exec(ctx, `SELECT gin_clean_pending_list(c.oid) FROM unnest($1::text[]) i
		JOIN pg_class c ON c.oid = i::regclass WHERE pg_has_role(c.relowner, 'USAGE')`, ftsIndexNames())
	if err != nil {
		return fmt.Errorf("index: full text: %w", t.db.translate(err))
	}
	return nil
}

// makeIndexes makes the indexes Clear dropped of the tables of (all
// when nil).
func (b *textBuild) makeIndexes(ctx context.Context, t *indexTx, of func(table string) bool) error {
	if len(b.dropped) == 0 {
		return nil
	}
	// A GIN build sorts its entries in maintenance_work_mem and merges
	// what overflows it: with the default 64 MB a vault's body text
	// overflows it many times. A B-tree build sorts there too.
	if _, err := t.tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '`+buildMemory+`'`); err != nil {
		return fmt.Errorf("index: make the indexes: %w", t.db.translate(err))
	}
	var was string
	if err := t.tx.QueryRow(ctx, `SELECT current_setting('default_tablespace')`).Scan(&was); err != nil {
		return fmt.Errorf("index: make the indexes: %w", t.db.translate(err))
	}
	rest := b.dropped[:0]
	for _, d := range b.dropped {
		if of != nil && !of(d.table) {
			rest = append(rest, d)
			continue
		}
		for _, stmt := range d.make(was) {
			if _, err := t.tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("index: make index %s of %s: %w", d.name, d.table, t.db.translate(err))
			}
		}
	}
	b.dropped = rest
	return nil
}

// add takes a page, written with the next many.
func (b *textBuild) add(ctx context.Context, t *indexTx, p *pageText) error {
	b.totals.add(1, p.words, p.more())
	for _, part := range p.body {
		for _, w := range part {
			b.vocab.add(w)
		}
	}
	if p.more() {
		b.more = append(b.more, p.moreRows()...)
	}
	b.rows = append(b.rows, []any{p.id, int32(p.words), p.more(), tsvector(p.title[0]), tsvector(p.body[0])})
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
		var err error
		if b.side != nil {
			err = b.side.copy(ctx, b.rows)
		} else {
			_, err = t.tx.CopyFrom(ctx, pgx.Identifier{"fts"}, []string{"id", "words", "more", "title", "body"}, pgx.CopyFromRows(b.rows))
		}
		if err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
		b.rows, b.bytes = nil, 0 // the side may still be sending them
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

// finish writes the words' page counts, fills the tiers, makes the
// indexes Clear dropped (makeIndexes) or merges their pending entries
// (cleanPending), swaps the side's table in (sideText), and writes the
// totals and the tables' statistics.
func (b *textBuild) finish(ctx context.Context, t *indexTx) error {
	if err := b.flush(ctx, t); err != nil {
		return err
	}
	words, pages := b.vocab.sorted()
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"fts_vocab"}, []string{"word", "pages"},
		pgx.CopyFromSlice(len(words), func(i int) ([]any, error) { return []any{words[i], pages[i]}, nil }))
	if err != nil {
		return fmt.Errorf("index: full text: words: %w", t.db.translate(err))
	}
	b.vocab = nil
	fresh := len(b.dropped) > 0 || b.side != nil // Clear dropped the indexes
	// Statistics for the planner, which would otherwise plan the index's
	// lookups on tables it takes for empty (the words' statistics of the
	// full text would cost more than they help: searches go by their GIN
	// indexes): of the tables filled already, and of the full text's.
	analyze := []string{`ANALYZE files, keys, links, link_keys, cites, fields, findings`,
		`ANALYZE fts (id, words, more), fts_short (id, words), fts_mid (id, words)`}
	if b.side != nil {
		// The indexes and statistics of the tables filled already first,
		// while the side makes the full text's.
		if err := b.makeIndexes(ctx, t, func(table string) bool { return table != "fts_short" && table != "fts_mid" }); err != nil {
			return err
		}
		if _, err := t.tx.Exec(ctx, analyze[0]); err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
		analyze = analyze[1:]
		if err := b.fromSide(ctx, t); err != nil {
			return err
		}
		if err := b.side.swap(ctx, t); err != nil {
			return err
		}
		b.side = nil
	} else if err := b.fillTiers(ctx, t, "fts"); err != nil {
		return err
	}
	if fresh {
		err = b.makeIndexes(ctx, t, nil)
	} else {
		err = b.cleanPending(ctx, t)
	}
	if err != nil {
		return err
	}
	s, bounds := b.totals, *t.bounds
	if _, err := t.tx.Exec(ctx, `UPDATE fts_stats SET pages = $1, words = $2, more = $3, short_words = $4, short = $5, mid_words = $6, mid = $7`,
		s.pages, s.words, int32(s.more), int32(bounds[0]), int32(s.tiers[0]), int32(bounds[1]), int32(s.tiers[1])); err != nil {
		return fmt.Errorf("index: full text: %w", t.db.translate(err))
	}
	for _, stmt := range analyze {
		if _, err := t.tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
	}
	return nil
}

// fromSide does, once the side's table is committed and while the side
// makes its indexes, what the build's transaction can of the rest: it
// fills the tiers from that table and makes their indexes, and makes
// those of the table's indexes the side has not begun; then it waits for
// the side. (At 100k pages the tiers and the title's index had taken
// some 1.4 s after the side's last index.) It does that in a savepoint:
// a build that fails rolls it back, which lets go of the side's table
// for the side to drop (sideText.close).
func (b *textBuild) fromSide(ctx context.Context, t *indexTx) error {
	if err := b.side.readable(ctx); err != nil {
		return err
	}
	sp, err := t.tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("index: full text: %w", t.db.translate(err))
	}
	err = b.fillTiers(ctx, t, sideTable)
	if err == nil {
		err = b.makeIndexes(ctx, t, func(table string) bool { return table == "fts_short" || table == "fts_mid" })
	}
	if err == nil {
		err = b.side.help(ctx, t)
	}
	if err == nil {
		if t.db.sideWaits != nil {
			t.db.sideWaits()
		}
		err = b.side.wait()
	}
	if err != nil {
		// Rolled back even when ctx ended: the table must be let go of.
		if rerr := sp.Rollback(context.WithoutCancel(ctx)); rerr != nil {
			t.db.log.Info("full build: the build's transaction holds the side's table until it ends", "reason", t.db.translate(rerr))
		}
		return err
	}
	if err := sp.Commit(ctx); err != nil {
		return fmt.Errorf("index: full text: %w", t.db.translate(err))
	}
	return nil
}

// fillTiers fills the tiers of the shortest pages from the full text in
// table (fts, or the side's), and sets their bounds (t.bounds) and
// counts.
func (b *textBuild) fillTiers(ctx context.Context, t *indexTx, table string) error {
	pages := int(b.totals.pages)
	bounds := [2]int{-1, -1}
	for i, tr := range t.sizes.tiers() {
		if i == 1 && !t.sizes.hasMid(pages) {
			continue
		}
		var err error
		if bounds[i], err = t.tierBound(ctx, table, tr.size(pages)); err != nil {
			return err
		}
		tag, err := t.tx.Exec(ctx, `INSERT INTO `+tr.table+` (id, words, title, body)
			SELECT id, words, title, body FROM `+table+` WHERE NOT more AND words <= $1`, int32(bounds[i]))
		if err != nil {
			return fmt.Errorf("index: full text: short pages: %w", t.db.translate(err))
		}
		b.totals.tiers[i] = tag.RowsAffected()
	}
	t.bounds = &bounds
	return nil
}

// FlushText writes the full text held, once every page's is written
// (index.TextFlusher): a side's table then has its indexes made, while
// the build goes on.
func (t *indexTx) FlushText(ctx context.Context) error {
	b := t.building
	if b == nil || b.side == nil {
		return nil
	}
	if err := b.flush(ctx, t); err != nil {
		return err
	}
	b.side.start(ctx)
	return nil
}

// abandon ends a full build that did not finish: a side's table is
// dropped and its connection closed.
func (b *textBuild) abandon(ctx context.Context) {
	if b.side != nil {
		b.side.close(ctx)
		b.side = nil
	}
}
