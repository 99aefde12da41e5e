package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// The full text: one row of fts per page, its distinct words as the
// numbers the vocabulary gives them (fts_vocab.id) in two integer arrays
// (title, and title with body), made from the words as the index gives
// them (no parser's): a page matches a term when its array holds the
// number of the term's word, a prefix term when it holds the number of a
// word the prefix starts (the vocabulary's words are in order), which is
// FTS5's matching of the same words. GIN indexes find the rows: their
// keys are four bytes, where the words' own would be their text.

// A word of the vocabulary is at most maxWord bytes (a B-tree key may
// have about 2,700): a longer one is kept as its first maxWord bytes.
// Queries are at most 1000 bytes (index.SearchQuery), so a prefix matches
// the cut word as it matches the whole one, and no word of a query equals
// either. A page of more than maxRowWords distinct words keeps the rest
// in fts_more, in parts of at most that many (sorted by bytes), so that
// no row's arrays grow with the page.
const (
	maxWord     = 2000
	maxRowWords = 100_000
)

// pageWords returns the words of s (words separated by spaces), each cut
// to maxWord bytes, as many times as s holds them.
func pageWords(s string) []string {
	ws := make([]string, 0, strings.Count(s, " ")+1)
	for w := range strings.SplitSeq(s, " ") {
		if w != "" {
			ws = append(ws, cutWord(w))
		}
	}
	return ws
}

// cutWord returns w's first maxWord bytes, or fewer to end on a whole
// character.
func cutWord(w string) string {
	if len(w) <= maxWord {
		return w
	}
	cut := maxWord
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut]
}

// distinct returns the distinct words of ws (which it sorts), sorted by
// bytes, in parts (splitParts).
func distinct(ws []string) [][]string {
	slices.Sort(ws)
	return splitParts(slices.Compact(ws))
}

// splitParts cuts a page's distinct words into parts of at most
// maxRowWords: the first for fts, the rest for fts_more.
func splitParts[T any](ws []T) [][]T {
	var parts [][]T
	for len(ws) > maxRowWords {
		parts = append(parts, ws[:maxRowWords])
		ws = ws[maxRowWords:]
	}
	return append(parts, ws)
}

// wordIDs is the SQL of the numbers of the words in the text array that
// parameter n is, as an integer array (words the vocabulary does not hold
// have none).
func wordIDs(n int) string {
	return fmt.Sprintf(`ARRAY(SELECT v.id FROM fts_vocab v WHERE v.word = ANY($%d::text[]))`, n)
}

// pageText is a page's distinct words as an update writes them.
type pageText struct {
	id          int64
	words       int
	title, body [][]string // in parts: the first in fts, the rest in fts_more
}

func newPageText(id int64, title, text string) *pageText {
	p := &pageText{id: id}
	p.title = distinct(pageWords(title))
	ws := pageWords(text)
	p.words = len(ws)
	p.body = distinct(ws)
	return p
}

// more reports whether the page has words in fts_more.
func (p *pageText) more() bool { return len(p.title) > 1 || len(p.body) > 1 }

// WriteText adds a page to the full text, and to the tiers of the
// shortest pages whose bounds its words are within (during a full build,
// the bounds are chosen at its end; see textBuild). Words no page held
// yet are numbered first, after the largest number given (the write
// lock keeps two writers from giving one number twice; the unique index
// on the numbers would refuse it).
func (t *indexTx) WriteText(ctx context.Context, id int64, title, text string) error {
	if t.building != nil {
		return t.building.add(ctx, t, id, title, text)
	}
	p := newPageText(id, title, text)
	bounds, err := t.tierBounds(ctx)
	if err != nil {
		return err
	}
	t.textChanged = true
	// One statement: the numbers of the words the vocabulary holds (k),
	// new ones for the others (n), and the page's row made of them.
	all := slices.Concat(slices.Concat(p.body...), slices.Concat(p.title...))
	if err := t.execRead(ctx, "full text", t.count(1), `WITH k AS (SELECT v.word, v.id FROM fts_vocab v WHERE v.word = ANY($6::text[])),
		n AS (INSERT INTO fts_vocab (word, id, pages)
			SELECT w, (SELECT coalesce(max(id), 0) FROM fts_vocab) + row_number() OVER (), 0
			FROM (SELECT DISTINCT unnest($6::text[])) w (w) WHERE w NOT IN (SELECT word FROM k) RETURNING word, id),
		a AS (SELECT word, id FROM k UNION ALL SELECT word, id FROM n)
		INSERT INTO fts (id, words, more, title, body) SELECT $1, $2, $3,
			ARRAY(SELECT a.id FROM a JOIN unnest($4::text[]) w (word) ON a.word = w.word),
			ARRAY(SELECT a.id FROM a JOIN unnest($5::text[]) w (word) ON a.word = w.word)
		RETURNING body`,
		id, int32(p.words), p.more(), p.title[0], p.body[0], all); err != nil {
		return err
	}
	for i, parts := range [][][]string{p.title, p.body} {
		var count func(pgx.Rows) error // a title's words are not counted
		if i == 1 {
			count = t.count(1)
		}
		for part, ws := range parts[1:] {
			if err := t.execRead(ctx, "full text", count, `INSERT INTO fts_more (id, title, part, words) VALUES ($1, $2, $3, `+wordIDs(4)+`)
				RETURNING words`, id, i == 0, int32(part+1), ws); err != nil {
				return err
			}
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
	return nil
}

// count returns what reads the word numbers a write or delete of a
// page's body returns (one array a row), adding n to each word's change
// of page count: a page written again with most of its words changes
// the counts of the others only.
func (t *indexTx) count(n int32) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		for rows.Next() {
			var ids []int32
			if err := rows.Scan(&ids); err != nil {
				return err
			}
			t.countWords(ids, n)
		}
		return nil
	}
}

func (t *indexTx) countWords(ids []int32, n int32) {
	if t.vocab == nil {
		t.vocab = map[int32]int32{}
	}
	for _, id := range ids {
		t.vocab[id] += n
	}
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
// deletes return it (the stored numbers are its words: the text the
// index read again is not needed).
func (t *indexTx) DeleteText(ctx context.Context, id int64, _ string) error {
	t.textChanged = true
	err := t.execRead(ctx, "full text", func(rows pgx.Rows) error {
		for rows.Next() {
			var words int32
			var more bool
			var body []int32
			if err := rows.Scan(&words, &more, &body); err != nil {
				return err
			}
			t.totals.add(-1, int(words), more)
			t.countWords(body, -1)
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
	return t.execRead(ctx, "full text", t.count(-1), `WITH p AS (DELETE FROM fts_more WHERE id = $1 RETURNING title, words)
		SELECT words FROM p WHERE NOT title`, id)
}

// saveText sends the queued writes (the writes and deletes of pages
// return their words' numbers), then queues the writes of what they
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
	ids, deltas := make([]int32, 0, len(t.vocab)), make([]int32, 0, len(t.vocab))
	for id, n := range t.vocab {
		if n != 0 {
			ids, deltas = append(ids, id), append(deltas, n)
		}
	}
	t.vocab = nil
	if len(ids) == 0 {
		return nil
	}
	return t.exec(ctx, "full text: words", `UPDATE fts_vocab v SET pages = v.pages + d.n
		FROM unnest($1::int[], $2::int[]) d (id, n) WHERE v.id = d.id`, ids, deltas)
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
			w, err := t.tierBound(ctx, n)
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

// tierBound returns the bound of a tier of about n pages: one less than
// the words of the shortest page left out (every page shorter than it is
// in), or everyPage when n pages are all there are.
func (t *indexTx) tierBound(ctx context.Context, n int) (int, error) {
	var words int32
	err := t.queryRow(ctx, `SELECT words FROM fts WHERE NOT more ORDER BY words OFFSET $1 LIMIT 1`, []any{n}, &words)
	if notFound(err) {
		return everyPage, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index: full text: short pages: %w", err)
	}
	return int(words) - 1, nil
}

// textBuild is the full text of a full build between Clear and
// FinishBuild: pages held to be written many to a COPY, the totals, and
// the vocabulary, numbered as the pages bring their words and written at
// the end with the tiers.
type textBuild struct {
	rows [][]any // rows of fts not written yet
	more [][]any // rows of fts_more not written yet
	ids  int     // the word numbers in rows
	// The totals of the pages written or held.
	totals textTotals
	// vocab numbers the words from 1: word n is words[n-1], held by
	// pages[n-1] pages, the last of them (by id) bodySeen[n-1], and the
	// last page whose title held it titleSeen[n-1].
	vocab               map[string]int32
	words               []string
	pages               []int32
	bodySeen, titleSeen []int64
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

func newTextBuild() *textBuild { return &textBuild{vocab: map[string]int32{}} }

// textBuildRows and textBuildIDs bound what a build holds before it
// writes.
const (
	textBuildRows = 4096
	textBuildIDs  = 4 << 20
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
func (b *textBuild) add(ctx context.Context, t *indexTx, id int64, title, text string) error {
	ws := pageWords(text)
	body := splitParts(b.number(ws, id, false))
	head := splitParts(b.number(pageWords(title), id, true))
	more := len(head) > 1 || len(body) > 1
	b.totals.add(1, len(ws), more)
	for i, parts := range [][][]int32{head, body} {
		for part, ids := range parts[1:] {
			b.more = append(b.more, []any{id, i == 0, int32(part + 1), ids})
		}
	}
	b.rows = append(b.rows, []any{id, int32(len(ws)), more, head[0], body[0]})
	b.ids += len(head[0]) + len(body[0])
	if len(b.rows) >= textBuildRows || b.ids >= textBuildIDs || len(b.more) > 0 {
		return b.flush(ctx, t)
	}
	return nil
}

// number returns the numbers of the distinct words of ws, numbering
// those the vocabulary does not hold yet: of the page's body, which adds
// to the words' page counts, or of its title. A page of more than maxRowWords distinct words has
// them sorted by bytes, as an update writes them.
func (b *textBuild) number(ws []string, page int64, title bool) []int32 {
	out := make([]int32, 0, len(ws))
	for _, w := range ws {
		n, ok := b.vocab[w]
		if !ok {
			b.words = append(b.words, strings.Clone(w)) // not the page's text
			b.pages = append(b.pages, 0)
			b.bodySeen, b.titleSeen = append(b.bodySeen, -1), append(b.titleSeen, -1)
			n = int32(len(b.words))
			b.vocab[b.words[n-1]] = n
		}
		seen := b.bodySeen
		if title {
			seen = b.titleSeen
		}
		if seen[n-1] == page {
			continue
		}
		seen[n-1] = page
		if !title {
			b.pages[n-1]++
		}
		out = append(out, n)
	}
	if len(out) > maxRowWords {
		slices.SortFunc(out, func(x, y int32) int { return strings.Compare(b.words[x-1], b.words[y-1]) })
	}
	return out
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
		clear(b.rows)
		b.rows, b.ids = b.rows[:0], 0
	}
	if len(b.more) > 0 {
		_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"fts_more"}, []string{"id", "title", "part", "words"}, pgx.CopyFromRows(b.more))
		if err != nil {
			return fmt.Errorf("index: full text: %w", t.db.translate(err))
		}
		b.more = nil
	}
	return nil
}

// finish writes the vocabulary, fills the tiers, makes the
// indexes Clear dropped (makeIndexes) or merges their pending entries
// (cleanPending), swaps the side's table in (sideText), and writes the
// totals and the tables' statistics.
func (b *textBuild) finish(ctx context.Context, t *indexTx) error {
	if err := b.flush(ctx, t); err != nil {
		return err
	}
	_, err := t.tx.CopyFrom(ctx, pgx.Identifier{"fts_vocab"}, []string{"word", "id", "pages"},
		pgx.CopyFromSlice(len(b.words), func(i int) ([]any, error) { return []any{b.words[i], int32(i + 1), b.pages[i]}, nil }))
	if err != nil {
		return fmt.Errorf("index: full text: words: %w", t.db.translate(err))
	}
	b.vocab, b.words, b.pages, b.bodySeen, b.titleSeen = nil, nil, nil, nil, nil
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
		if err := b.side.swap(ctx, t); err != nil {
			return err
		}
		b.side = nil
	}
	pages := int(b.totals.pages)
	bounds := [2]int{-1, -1}
	for i, tr := range t.sizes.tiers() {
		if i == 1 && !t.sizes.hasMid(pages) {
			continue
		}
		if bounds[i], err = t.tierBound(ctx, tr.size(pages)); err != nil {
			return err
		}
		tag, err := t.tx.Exec(ctx, `INSERT INTO `+tr.table+` (id, words, title, body)
			SELECT id, words, title, body FROM fts WHERE NOT more AND words <= $1`, int32(bounds[i]))
		if err != nil {
			return fmt.Errorf("index: full text: short pages: %w", t.db.translate(err))
		}
		b.totals.tiers[i] = tag.RowsAffected()
	}
	t.bounds = &bounds
	if fresh {
		err = b.makeIndexes(ctx, t, nil)
	} else {
		err = b.cleanPending(ctx, t)
	}
	if err != nil {
		return err
	}
	s := b.totals
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
