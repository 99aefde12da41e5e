package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"

	sqlite "modernc.org/sqlite"

	"cairn"
	"cairn/index"
)

// The full text: two contentless FTS5 tables, fts (a page's title and
// body words) and fts_title (its title's), keeping which pages hold each
// word and nothing else (detail = none). A page's row id in both is its
// text key: its word count in the high bits and a slot in the low ones,
// the slots of each word count handed out densely (fts_keys maps keys to
// files). FTS5 returns a query's matches in row id order, so shortest page
// first, the order search ranks them in (BM25 with each word counted once
// ranks by length alone), and a search reads the first matches of a word
// found in most pages instead of every one. Dense slots keep the row ids'
// differences, which FTS5 stores, about as small as file ids would (file
// ids under their word counts made the full text twice as large).
//
// FTS5 writes what it is given in row id order: a row whose id is below
// the last one written makes it flush what it holds to a new segment. So
// a transaction's full-text writes are held and made in key order
// (flushText): before the transaction reads the full text, at its end
// (SetState), and during a full build whenever textFlush bytes are held,
// each such run a segment that FinishBuild merges.

// keySlotBits is how many low bits of a text key hold the slot: at most
// 2^20 pages of one word count. Word counts above maxKeyWords share its
// slots (such pages rank by their files row within them).
const (
	keySlotBits = 20
	keySlots    = 1 << keySlotBits
	maxKeyWords = 1<<(63-keySlotBits) - 1
)

// keyGroup is the word count a page of words words is filed under.
func keyGroup(words int) int64 { return int64(min(words, maxKeyWords)) }

// keyWords is the word count a text key leads with.
func keyWords(key int64) int64 { return key >> keySlotBits }

// textFlush is how many bytes of text a full build holds before it writes
// them, in key order.
const textFlush = 8 << 20

// textWrite is a full-text write held until flushText: page file's row
// added under key (title and text set), or the row of key removed (file
// 0).
type textWrite struct {
	key, file   int64
	title, text string
}

// WriteText adds a page to the full text under a new key of its word
// count, or the key it had when this transaction removed its old row
// under the same count. The write is held (see flushText); the page's
// words are counted now.
func (t *indexTx) WriteText(ctx context.Context, id int64, title, text string) error {
	group := keyGroup(ftsTokens(text))
	key, ok := t.freed[id]
	if ok && keyWords(key) == group {
		delete(t.freed, id)
	} else {
		var err error
		if key, err = t.newKey(ctx, group); err != nil {
			return err
		}
	}
	if !t.building {
		t.countWords(text, 1)
	}
	t.text = append(t.text, textWrite{key: key, file: id, title: title, text: text})
	t.textBytes += len(title) + len(text)
	if t.textKeys == nil {
		t.textKeys = map[int64]int64{}
	}
	t.textKeys[id] = key
	if t.building && t.textBytes >= textFlush {
		return t.flushText(ctx)
	}
	return nil
}

// newKey hands out the next slot of group: one past the highest the group
// has, or, when that is past the last, the first free one.
func (t *indexTx) newKey(ctx context.Context, group int64) (int64, error) {
	lo := group << keySlotBits
	next, ok := t.slots[group]
	if !ok && !t.building {
		var high sql.NullInt64
		err := t.q.QueryRowContext(ctx, `SELECT max(key) FROM fts_keys WHERE key >= ? AND key < ?`, lo, lo+keySlots).Scan(&high)
		if err != nil {
			return 0, fmt.Errorf("index: full text: keys: %w", translate(err))
		}
		if high.Valid {
			next = high.Int64 - lo + 1
		}
	}
	if next < keySlots {
		if t.slots == nil {
			t.slots = map[int64]int64{}
		}
		t.slots[group] = next + 1
		return lo | next, nil
	}
	// Every slot up to the last was handed out once: the first that is
	// free again, with this transaction's writes made.
	if err := t.flushText(ctx); err != nil {
		return 0, err
	}
	var free sql.NullInt64
	err := t.q.QueryRowContext(ctx, `SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM fts_keys WHERE key = ?1) THEN ?1
		ELSE (SELECT k.key + 1 FROM fts_keys k WHERE k.key >= ?1 AND k.key < ?2 - 1
			AND NOT EXISTS (SELECT 1 FROM fts_keys WHERE key = k.key + 1) ORDER BY k.key LIMIT 1) END`,
		lo, lo+keySlots).Scan(&free)
	if err != nil {
		return 0, fmt.Errorf("index: full text: keys: %w", translate(err))
	}
	if !free.Valid {
		return 0, cairn.Errorf(cairn.EINVALID, "the full text holds %d pages of %d words, the most it can of one length", keySlots, group).
			WithHint("Make some of these pages longer or shorter, or fewer.")
	}
	return free.Int64, nil
}

// DeleteText removes a page from the full text; the words of text, the
// page's text as it was written, are in one page less.
func (t *indexTx) DeleteText(ctx context.Context, id int64, text string) error {
	key, ok := t.textKeys[id]
	if ok {
		delete(t.textKeys, id)
	} else {
		err := t.q.QueryRowContext(ctx, `SELECT key FROM fts_keys WHERE file = ?`, id).Scan(&key)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return cairn.Errorf(cairn.EINTERNAL, "index: full text of file %d: the page has no text key", id).
				WithHint("Try: cairn reindex")
		case err != nil:
			return fmt.Errorf("index: full text of file %d: %w", id, translate(err))
		}
	}
	t.countWords(text, -1)
	t.text = append(t.text, textWrite{key: key})
	if t.freed == nil {
		t.freed = map[int64]int64{}
	}
	t.freed[id] = key
	return nil
}

// flushText makes the held full-text writes: the full text's in key
// order, those of one key in the order they were asked for (a page's row
// removed, then written again under the same key); then the keys' rows,
// as the writes leave each key, removals first (a page moved to another
// key keeps one).
func (t *indexTx) flushText(ctx context.Context) error {
	if len(t.text) == 0 {
		return nil
	}
	slices.SortStableFunc(t.text, func(a, b textWrite) int { return cmp.Compare(a.key, b.key) })
	// Sorted stably, a key's writes keep their order: its last is what
	// it holds at the end (file 0: nothing).
	last := make(map[int64]int, len(t.text))
	for i, w := range t.text {
		last[w.key] = i
	}
	for _, w := range t.text {
		var err error
		if w.file == 0 {
			err = t.exec(ctx, "full text", `DELETE FROM fts WHERE rowid = ?`, w.key)
			if err == nil {
				err = t.exec(ctx, "full text", `DELETE FROM fts_title WHERE rowid = ?`, w.key)
			}
		} else {
			err = t.exec(ctx, "full text", `INSERT INTO fts (rowid, text) VALUES (?, ?)`, w.key, w.text)
			if err == nil {
				err = t.exec(ctx, "full text", `INSERT INTO fts_title (rowid, title) VALUES (?, ?)`, w.key, w.title)
			}
		}
		if err != nil {
			return err
		}
	}
	for _, w := range t.text {
		if i, ok := last[w.key]; ok && t.text[i].file == 0 {
			if err := t.exec(ctx, "full text: keys", `DELETE FROM fts_keys WHERE key = ?`, w.key); err != nil {
				return err
			}
			delete(last, w.key)
		}
	}
	for _, w := range t.text {
		if i, ok := last[w.key]; ok {
			// Never NULL, which means unknown (an empty bitmap could reach
			// the database as NULL if the driver bound it so).
			end := t.text[i]
			if err := t.exec(ctx, "full text: keys", `INSERT OR REPLACE INTO fts_keys (key, file, text_initials, title_initials) VALUES (?, ?, coalesce(?, X''), coalesce(?, X''))`,
				w.key, end.file, initials(end.text), initials(end.title)); err != nil {
				return err
			}
			delete(last, w.key)
		}
	}
	clear(t.text)
	clear(t.textKeys)
	t.text, t.textBytes = t.text[:0], 0
	return nil
}

// FlushText makes the held full-text writes (index.TextFlusher).
func (t *indexTx) FlushText(ctx context.Context) error { return t.flushText(ctx) }

var _ index.TextFlusher = (*indexTx)(nil)

// Search is indexReader.Search on what the transaction wrote so far.
func (t *indexTx) Search(ctx context.Context, q index.FullTextQuery) ([]index.SearchHit, error) {
	if err := t.flushText(ctx); err != nil {
		return nil, err
	}
	return t.indexReader.Search(ctx, q)
}

// TextStats is indexReader.TextStats of what the transaction wrote so far.
func (t *indexTx) TextStats(ctx context.Context, terms []index.FullTextTerm) (index.TextStats, error) {
	if err := t.flushText(ctx); err != nil {
		return index.TextStats{}, err
	}
	return t.indexReader.TextStats(ctx, terms)
}

// Snapshot is indexReader.Snapshot of what the transaction wrote so far.
func (t *indexTx) Snapshot(ctx context.Context) (map[string][]string, error) {
	if err := t.flushText(ctx); err != nil {
		return nil, err
	}
	return t.indexReader.Snapshot(ctx)
}

// ftsTokens counts the tokens FTS5's ascii tokenizer makes of s: runs of
// ASCII letters and digits and of bytes of other characters.
func ftsTokens(s string) int {
	n := 0
	ftsEachToken(s, func(string) { n++ })
	return n
}

// ftsEachToken calls fn with each token FTS5's ascii tokenizer makes of s,
// as its vocabulary holds it (ASCII letters in lower case).
func ftsEachToken(s string, fn func(string)) {
	start := -1
	lower := true
	for i := 0; i <= len(s); i++ {
		tok := false
		if i < len(s) {
			c := s[i]
			tok = c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
			if tok && c >= 'A' && c <= 'Z' {
				lower = false
			}
		}
		switch {
		case tok && start < 0:
			start = i
		case !tok && start >= 0:
			if w := s[start:i]; lower {
				fn(w)
			} else {
				fn(strings.ToLower(w))
			}
			start, lower = -1, true
		}
	}
}

// countWords adds n to the page count of each distinct word of text.
func (t *indexTx) countWords(text string, n int) {
	if text == "" {
		return
	}
	if t.words == nil {
		t.words = map[string]int{}
	}
	seen := make(map[string]bool, len(text)/8)
	ftsEachToken(text, func(w string) {
		if !seen[w] {
			seen[w] = true
			t.words[w] += n
		}
	})
}

// saveWords adds the page counts the transaction changed to fts_words, in
// word order, and removes the words no page holds any more.
func (t *indexTx) saveWords(ctx context.Context) error {
	var words, gone []string
	for w, n := range t.words {
		if n != 0 {
			words = append(words, w)
		}
		if n < 0 {
			gone = append(gone, w)
		}
	}
	counts := t.words
	t.words = nil
	if len(words) == 0 {
		return nil
	}
	slices.Sort(words)
	err := t.insertTail(ctx, "full text: words", `INSERT INTO fts_words (word, pages) VALUES `,
		` ON CONFLICT (word) DO UPDATE SET pages = pages + excluded.pages`, 2, len(words),
		func(args []any, i int) []any { return append(args, words[i], counts[words[i]]) })
	if err != nil || len(gone) == 0 {
		return err
	}
	slices.Sort(gone)
	for start := 0; start < len(gone); start += indexBatch {
		batch := gone[start:min(len(gone), start+indexBatch)]
		args := make([]any, len(batch))
		for i, w := range batch {
			args[i] = w
		}
		if err := t.exec(ctx, "full text: words", `DELETE FROM fts_words WHERE pages <= 0 AND word IN (`+placeholders(len(batch))+`)`, args...); err != nil {
			return err
		}
	}
	return nil
}

// A page's initials: which first letters, and first two letters, its words
// start with, as a bitmap kept beside its text key (fts_keys.text_initials
// and title_initials). FTS5 answers a prefix by merging the page lists of
// every word the prefix starts, however few pages it is asked for: 250 ms
// for "s"* at 100k pages, even after a word found in 468 pages. A search
// for a prefix of one or two letters that starts many words (Search) asks
// FTS5 for the rest of the query instead, in the same order, and checks
// each page's initials (cairn_initial in SQL).
//
// Characters are numbered 0-9 for the digits and 10-35 for a to z; a word
// starting with any other character has no bit. Bit n is a word starting
// with the character numbered n, bit 36 + 36*n + m one starting with n then
// m: 1,332 bits, at most 167 bytes, the zero bytes at the end left out.
const (
	initialChars = 36
	initialBits  = initialChars + initialChars*initialChars
)

// initialNumber is the number of character c in the initials, -1 for none.
func initialNumber(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	}
	return -1
}

// initials is the bitmap of the initials of the words of text, as FTS5's
// tokenizer makes them; empty, never nil, when there are none: NULL in
// fts_keys is a row a cairn from before the initials wrote (see
// unknownInitials).
func initials(text string) []byte {
	var bits [(initialBits + 7) / 8]byte
	last := -1
	ftsEachToken(text, func(w string) {
		n := initialNumber(w[0])
		if n < 0 {
			return
		}
		bits[n/8] |= 1 << (n % 8)
		last = max(last, n)
		if len(w) > 1 {
			if m := initialNumber(w[1]); m >= 0 {
				b := initialChars + initialChars*n + m
				bits[b/8] |= 1 << (b % 8)
				last = max(last, b)
			}
		}
	})
	if last < 0 {
		return []byte{}
	}
	return slices.Clone(bits[:last/8+1])
}

// initialBit is the bit of the initials that holds the words starting with
// prefix (folded, as search terms are): -1 unless prefix is one or two
// characters that have numbers.
func initialBit(prefix string) int {
	if len(prefix) == 0 || len(prefix) > 2 {
		return -1
	}
	n := initialNumber(prefix[0])
	if n < 0 || len(prefix) == 1 {
		return n
	}
	m := initialNumber(prefix[1])
	if m < 0 {
		return -1
	}
	return initialChars + initialChars*n + m
}

// hasInitial reports whether bitmap has bit set.
func hasInitial(bitmap []byte, bit int) bool {
	return bit >= 0 && bit/8 < len(bitmap) && bitmap[bit/8]&(1<<(bit%8)) != 0
}

func init() {
	// cairn_initial(initials, bit) is hasInitial in SQL: 1 or 0, and 0
	// for a NULL bitmap. Registered with the driver, for every
	// connection.
	sqlite.MustRegisterDeterministicScalarFunction("cairn_initial", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		bitmap, _ := args[0].([]byte)
		bit, ok := args[1].(int64)
		if !ok {
			return nil, fmt.Errorf("cairn_initial: the bit is %T, not an integer", args[1])
		}
		if hasInitial(bitmap, int(bit)) {
			return int64(1), nil
		}
		return int64(0), nil
	})
}
