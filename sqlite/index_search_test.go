package sqlite

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"cairn"
	"cairn/index"
	"cairn/internal/vaultgen"
	"cairn/store"
)

// searchVault imports files as main's head and builds its index; then
// commits each of later in turn on top, which the index takes as updates.
func searchVault(t testing.TB, files []store.FileChange, later ...[]store.FileChange) (*DB, *index.Index, *indexReader) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := store.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	bt := s.NewBatch()
	tree, err := bt.BuildTree(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if err := bt.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Tree: tree, Principal: cairn.PrincipalSystem, Message: "import"})
	if err != nil {
		t.Fatal(err)
	}
	st := NewIndexStorage(db)
	ix := index.New(s, st, nil)
	s.AddHook(ix.Hook())
	if err := ix.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	all := map[string]store.FileChange{}
	for _, f := range files {
		all[f.Path] = f
	}
	for _, more := range later {
		for _, f := range more {
			all[f.Path] = f // later's win
		}
		bt := s.NewBatch()
		tree, err := bt.BuildTree(ctx, slices.Collect(maps.Values(all)))
		if err != nil {
			t.Fatal(err)
		}
		if err := bt.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if c, err = s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Expected: c.Hash, Tree: tree, Principal: cairn.PrincipalSystem, Message: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	return db, ix, st.Committed().(*indexReader)
}

// A deep check compares the words' page counts kept as pages change
// with FTS5's own: a count off, a word missing and a word no page holds
// are each reported, with the word.
func TestIndexCheck_WordCounts(t *testing.T) {
	ctx := t.Context()
	var files []store.FileChange
	for _, f := range vaultgen.New(vaultgen.Config{Pages: 300}).All() {
		files = append(files, store.FileChange{Path: f.Path, Data: f.Data})
	}
	db, ix, _ := searchVault(t, files)
	check := func() []string {
		t.Helper()
		d, err := ix.Check(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		return d.Problems
	}
	if p := check(); len(p) != 0 {
		t.Fatalf("a new index: %q", p)
	}
	var word string
	var pages int
	if err := db.r.QueryRowContext(ctx, `SELECT word, pages FROM fts_words ORDER BY pages DESC, word LIMIT 1`).Scan(&word, &pages); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, word, breaks, mends string }{
		{"a count off", word, `UPDATE fts_words SET pages = pages + 1 WHERE word = ?`, `UPDATE fts_words SET pages = pages - 1 WHERE word = ?`},
		{"a word missing", word, `DELETE FROM fts_words WHERE word = ?`, `INSERT INTO fts_words (word, pages) VALUES (?, ` + strconv.Itoa(pages) + `)`},
		{"a word no page holds", "zzstray", `INSERT INTO fts_words (word, pages) VALUES (?, 2)`, `DELETE FROM fts_words WHERE word = ?`},
	} {
		if _, err := db.w.ExecContext(ctx, c.breaks, c.word); err != nil {
			t.Fatal(err)
		}
		p := check()
		if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "fts_words_drift") && strings.Contains(s, c.word) }) {
			t.Errorf("%s (%s): the deep check found %q", c.name, c.word, p)
		}
		if _, err := db.w.ExecContext(ctx, c.mends, c.word); err != nil {
			t.Fatal(err)
		}
		if p := check(); len(p) != 0 {
			t.Fatalf("%s mended: %q", c.name, p)
		}
	}
}

// A page's word count is what FTS5 counted for its row, and the totals
// read from FTS5's averages record are the sums of the rows: the order
// and the score rest on both.
func TestIndexSearch_WordsAreFTS5s(t *testing.T) {
	ctx := t.Context()
	files := []store.FileChange{
		{Path: "index.md", Data: []byte("# Home\n\nSee [[Café society]] and [[a/b]].\n")},
		{Path: "Café society.md", Data: []byte("---\ntitle: Café — Society, 1890s\n---\nNaïve café café CAFÉ, the end… 日本語 text; don't_split.\n")},
		{Path: "a/b.md", Data: []byte("Words words words words, repeated.\n\n- [ ] a task\n")},
		{Path: "a/empty.md", Data: nil},
		{Path: "a/picture.png", Data: []byte{0x89, 'P', 'N', 'G'}},
	}
	db, _, r := searchVault(t, files)
	rows, err := db.r.QueryContext(ctx, `SELECT f.path, f.words, d.sz FROM files f LEFT JOIN fts_keys k ON k.file = f.id
		LEFT JOIN fts_docsize d ON d.id = k.key ORDER BY f.path`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var pages, words int64
	for rows.Next() {
		var path string
		var w *int64
		var sz []byte
		if err := rows.Scan(&path, &w, &sz); err != nil {
			t.Fatal(err)
		}
		if sz == nil {
			if w != nil {
				t.Errorf("%s: words = %d, want NULL (not in the full text)", path, *w)
			}
			continue
		}
		n, _ := sqliteVarint(sz)
		if w == nil || *w != int64(n) {
			t.Errorf("%s: words = %v, FTS5 counted %d", path, w, n)
		}
		pages++
		words += int64(n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if pages != 4 {
		t.Errorf("pages in the full text = %d, want 4", pages)
	}
	got, err := r.textTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.pages != pages || got.avgWords != float64(words)/float64(pages) {
		t.Errorf("totals = %+v, want %d pages of %v words on average", got, pages, float64(words)/float64(pages))
	}
}

func TestSQLiteVarint(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want uint64
		n    int
	}{
		{[]byte{0}, 0, 1},
		{[]byte{0x7f, 0xff}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0x87, 0x68, 0x07}, 1000, 2},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 1, 9},
		{[]byte{0x81}, 0, 0},
		{nil, 0, 0},
	} {
		if got, n := sqliteVarint(c.in); got != c.want || n != c.n {
			t.Errorf("sqliteVarint(%x) = %d, %d; want %d, %d", c.in, got, n, c.want, c.n)
		}
	}
}

// The order a search returns is the exhaustive one, computed here by a
// query of its own over every match (title first, then words, then
// path), for both query mixes, words in most pages and prefixes, with and
// without filters, at several limits. Most cases match more pages than
// they return, and in many the pages of the last result's length go on
// past the limit, where ties are cut by path.
func TestIndexSearch_SameAsExhaustive(t *testing.T) {
	// A third of the pages come in a later commit, under ids above the
	// others': ids are not in path order, as in any vault that changed.
	// Some pages change length in it, and with it their text keys.
	t.Run("changed", func(t *testing.T) { sameAsExhaustive(t, 8000, 3) })
	// A vault of a dozen pages grows by commits of 1,500 files to 5,000
	// pages: every page's text written by an update.
	t.Run("grown", func(t *testing.T) { sameAsExhaustive(t, 5000, 5000/12) })
}

func sameAsExhaustive(t *testing.T, n, every int) {
	ctx := t.Context()
	v := vaultgen.New(vaultgen.Config{Pages: n, Raw: true})
	var files, later []store.FileChange
	for i, f := range v.All() {
		// Folders of few pages, which a search reads through their files'
		// path keys: one whose name differs in ASCII case from how the
		// tests ask for it, and one whose name folds beyond ASCII.
		switch {
		case i%97 == 5:
			f.Path = "Rare/" + path.Base(f.Path)
		case i%89 == 3:
			f.Path = "Été/" + path.Base(f.Path)
		}
		switch {
		case i%every != 1 && every > 3:
			later = append(later, store.FileChange{Path: f.Path, Data: f.Data})
			continue
		case i%3 == 0:
			later = append(later, store.FileChange{Path: f.Path, Data: f.Data})
			continue
		case i%7 == 0:
			later = append(later, store.FileChange{Path: f.Path, Data: slices.Concat(f.Data, f.Data, []byte("\nlonger now\n"))})
		case i%11 == 0 && len(f.Data) > 200:
			later = append(later, store.FileChange{Path: f.Path, Data: f.Data[:len(f.Data)/3]})
		}
		files = append(files, store.FileChange{Path: f.Path, Data: f.Data})
	}
	var commits [][]store.FileChange
	for chunk := range slices.Chunk(later, 1500) {
		commits = append(commits, chunk)
	}
	db, _, r := searchVault(t, files, commits...)
	var queries []string
	queries = append(queries, v.Queries(40, 1)...)
	queries = append(queries, v.FrequentQueries(40, 2)...)
	// Words in most pages: the body's commonest.
	common, err := db.r.QueryContext(ctx, `SELECT term FROM fts_vocab ORDER BY doc DESC LIMIT 8`)
	if err != nil {
		t.Fatal(err)
	}
	for common.Next() {
		var w string
		if err := common.Scan(&w); err != nil {
			t.Fatal(err)
		}
		queries = append(queries, w, w+" "+queries[len(queries)%40], w[:2]+"*")
	}
	common.Close()
	// Prefixes of one and two letters, alone and after a word, and the
	// benchmark's mix of short prefixes: those that start many words are
	// checked against the pages' initials.
	queries = append(queries, v.PrefixQueries(60, 3)...)
	for _, p := range []string{"s", "k", "a", "th", "ke", "z", "q", "7", "ka"} {
		queries = append(queries, p+"*", queries[len(queries)%40]+" "+p+"*")
	}
	viaInitials := 0
	for _, text := range queries {
		terms := termsOf(text)
		_, broad, err := r.pagesHolding(ctx, terms, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, term := range terms {
			if term.Prefix && broad[i] && initialBit(term.Word) >= 0 {
				viaInitials++
				break
			}
		}
	}
	if viaInitials < 20 {
		t.Errorf("%d queries have a prefix checked against the initials; the test needs more", viaInitials)
	}
	cases := []index.FullTextQuery{{Limit: 1}, {Limit: 10}, {Limit: 100}, {Folder: "concepts/", Limit: 10}, {Type: "entity", Limit: 10},
		{Folder: "rare/", Limit: 10}}
	// A folder of few files is read through its files' path keys
	// (filesUnder); concepts/ is not.
	st, err := r.textTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for folder, rare := range map[string]bool{"rare/": true, "Été/": true, "été/": true, "concepts/": false, "raw/": false} {
		if _, n, err := r.filesUnder(ctx, folder, st.pages); err != nil || index.FolderFirst(n, 10, st.pages) != rare || n == 0 {
			t.Fatalf("files under %s: %d of %d pages (%v); the test wants it read first: %v", folder, n, st.pages, err, rare)
		}
	}
	keysHold(t, db, r)
	var more, ties int
	for _, text := range queries {
		for _, q := range cases {
			q.Terms = termsOf(text)
			name := fmt.Sprintf("%q type=%q folder=%q limit=%d", text, q.Type, q.Folder, q.Limit)
			want := exhaustive(t, db, q)
			hits, err := r.Search(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Path)
			}
			n := min(len(want), q.Limit)
			if !slices.Equal(got, paths(want[:n])) {
				t.Errorf("%s:\n got %v\nwant %v", name, got, paths(want[:n]))
			}
			if len(want) > q.Limit {
				more++
				if last, next := want[q.Limit-1], want[q.Limit]; last.title == next.title && last.words == next.words {
					ties++
				}
			}
		}
	}
	if cases := len(queries) * len(cases); more < cases/2 || ties < cases/10 {
		t.Errorf("of %d cases, %d match more pages than they return and %d tie at the limit; the test vault is too small",
			cases, more, ties)
	}
	// Short prefixes under the filters that change how they are read: the
	// rarest type (its pages first), a type of none, a type with a folder.
	var rare string
	if err := db.r.QueryRowContext(ctx, `SELECT type FROM files WHERE type IS NOT NULL GROUP BY type ORDER BY count(*), type LIMIT 1`).Scan(&rare); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"s*", "ka*", "a*", "th*", "s* k*", "7*"} {
		for _, q := range []index.FullTextQuery{{Type: rare, Limit: 10}, {Type: "nosuchtype", Limit: 10}, {Type: "entity", Folder: "entities/", Limit: 3},
			{Folder: "rare/", Limit: 10}, {Folder: "RARE/", Limit: 3}, {Folder: "raw/", Limit: 10}, {Folder: "nosuch/", Limit: 10},
			{Folder: "été/", Limit: 10}, {Folder: "Été/", Limit: 10}, {Type: "concept", Folder: "rare/", Limit: 10}} {
			q.Terms = termsOf(text)
			want := exhaustive(t, db, q)
			hits, err := r.Search(ctx, q)
			if err != nil {
				t.Fatalf("%q type=%q: %v", text, q.Type, err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Path)
			}
			if w := paths(want[:min(len(want), q.Limit)]); !slices.Equal(got, w) {
				t.Errorf("%q type=%q folder=%q:\n got %v\nwant %v", text, q.Type, q.Folder, got, w)
			}
		}
	}
}

// keysHold checks that every row of the full text has the text key of a
// page, leading with the page's word count, and every page a row.
func keysHold(t *testing.T, db *DB, r *indexReader) {
	t.Helper()
	// What doctor compares with a rebuild says the same.
	rows, err := r.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if bad := rows["fts_key_drift"]; len(bad) > 0 {
		t.Errorf("snapshot: rows of the full text under keys that are not their pages': %v", bad)
	}
	var pages, text, titles int
	err = db.r.QueryRowContext(t.Context(), `SELECT (SELECT count(*) FROM files WHERE words IS NOT NULL),
		(SELECT count(*) FROM fts_docsize), (SELECT count(*) FROM fts_title_docsize)`).Scan(&pages, &text, &titles)
	if err != nil {
		t.Fatal(err)
	}
	if pages == 0 || text != pages || titles != pages {
		t.Errorf("%d pages, %d rows of text, %d of titles", pages, text, titles)
	}
}

// A page's text key leads with its word count; slots of one count are
// handed out densely, a page rewritten with as many words keeps its key,
// and when the last slot was handed out the first free one is taken.
func TestTextKeys(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := NewIndexStorage(db)
	text := func(words int) string { return strings.TrimSpace(strings.Repeat("w ", words)) }
	key := func(q index.StorageTx, file int64) int64 {
		t.Helper()
		var k int64
		if err := q.(*indexTx).q.QueryRowContext(ctx, `SELECT key FROM fts_keys WHERE file = ?`, file).Scan(&k); err != nil {
			t.Fatalf("key of file %d: %v", file, err)
		}
		return k
	}
	group := func(words int) int64 { return int64(words) << keySlotBits }
	err = db.Update(ctx, func(tx cairn.Tx) error {
		q, err := st.Begin(ctx, tx)
		if err != nil {
			return err
		}
		defer q.Close()
		for id := int64(1); id <= 3; id++ {
			if err := q.WriteText(ctx, id, "t", text(5)); err != nil {
				return err
			}
		}
		if err := q.WriteText(ctx, 4, "t", text(6)); err != nil {
			return err
		}
		if err := q.SetState(ctx, index.State{}); err != nil {
			return err
		}
		for id, want := range map[int64]int64{1: group(5), 2: group(5) | 1, 3: group(5) | 2, 4: group(6)} {
			if got := key(q, id); got != want {
				t.Errorf("file %d: key %#x, want %#x", id, got, want)
			}
		}
		// Rewritten: with as many words, the same key; with more, the next
		// slot of its new count.
		if err := q.DeleteText(ctx, 2, text(5)); err != nil {
			return err
		}
		if err := q.WriteText(ctx, 2, "t", text(5)); err != nil {
			return err
		}
		if err := q.DeleteText(ctx, 3, text(5)); err != nil {
			return err
		}
		if err := q.WriteText(ctx, 3, "t", text(6)); err != nil {
			return err
		}
		if err := q.SetState(ctx, index.State{}); err != nil {
			return err
		}
		if got := key(q, 2); got != group(5)|1 {
			t.Errorf("file 2 rewritten: key %#x, want %#x", got, group(5)|1)
		}
		if got := key(q, 3); got != group(6)|1 {
			t.Errorf("file 3 grown: key %#x, want %#x", got, group(6)|1)
		}
		// The last slot of 5 words handed out: the first free one is slot 2
		// (file 3's, left).
		if _, err := q.(*indexTx).q.(*indexPrepared).tx.ExecContext(ctx, `INSERT INTO fts_keys (key, file) VALUES (?, 99)`, group(5)|(keySlots-1)); err != nil {
			return err
		}
		q.(*indexTx).slots = nil
		if err := q.WriteText(ctx, 5, "t", text(5)); err != nil {
			return err
		}
		if err := q.SetState(ctx, index.State{}); err != nil {
			return err
		}
		if got := key(q, 5); got != group(5)|2 {
			t.Errorf("file 5 after the last slot: key %#x, want %#x", got, group(5)|2)
		}
		// Every slot of 7 words taken: refused.
		if _, err := q.(*indexTx).q.(*indexPrepared).tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO fts_keys (key, file) SELECT ? + i, 1000 + i FROM n`, keySlots-1, group(7)); err != nil {
			return err
		}
		if err := q.WriteText(ctx, 6, "t", text(7)); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("a page of a word count with every slot taken: %v, want EINVALID", err)
		}
		return errors.New("roll back")
	})
	if err == nil || err.Error() != "roll back" {
		t.Fatal(err)
	}
}

// match is a page that matches, with what ranks it.
type match struct {
	path  string
	title bool
	words int64
}

func paths(ms []match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.path)
	}
	return out
}

// termsOf splits a query of words and prefixes into full-text terms.
func termsOf(text string) []index.FullTextTerm {
	var out []index.FullTextTerm
	for _, w := range strings.Fields(text) {
		out = append(out, index.FullTextTerm{Word: strings.TrimSuffix(w, "*"), Prefix: strings.HasSuffix(w, "*")})
	}
	return out
}

// exhaustive ranks every page that matches q, by the order Storage
// defines.
func exhaustive(t *testing.T, db *DB, q index.FullTextQuery) []match {
	t.Helper()
	expr := ftsMatch(q.Terms)
	filter, args := searchFilter(q)
	rows, err := db.r.QueryContext(t.Context(), `SELECT f.path, f.id IN (SELECT k.file FROM fts_title JOIN fts_keys k ON k.key = fts_title.rowid
		WHERE fts_title MATCH ?) AS title, f.words FROM fts JOIN fts_keys k ON k.key = fts.rowid JOIN files f ON f.id = k.file
		WHERE fts MATCH ?`+filter+` ORDER BY title DESC, f.words, f.path`, append([]any{expr, expr}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []match
	for rows.Next() {
		var m match
		if err := rows.Scan(&m.path, &m.title, &m.words); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A page's initials hold the first letter and the first two letters of
// each of its words that begin with ASCII letters or digits, as FTS5's
// tokenizer splits them, and initialBit finds them.
func TestInitials(t *testing.T) {
	bits := initials("kejait s 7up émile xylo-phone ZEBRA")
	for _, prefix := range []string{"k", "ke", "s", "7", "7u", "x", "xy", "ph", "p", "z", "ze"} {
		if !hasInitial(bits, initialBit(prefix)) {
			t.Errorf("%q: no initial", prefix)
		}
	}
	for _, prefix := range []string{"a", "kj", "sa", "e", "em", "xl", "y", "zz"} {
		if hasInitial(bits, initialBit(prefix)) {
			t.Errorf("%q: an initial no word has", prefix)
		}
	}
	for _, prefix := range []string{"", "abc", "é", "aé", "-", "a-"} {
		if b := initialBit(prefix); b != -1 {
			t.Errorf("initialBit(%q) = %d, want -1", prefix, b)
		}
	}
	if b := initials("zz"); len(b) != (initialBits+7)/8 {
		t.Errorf("the last bit is in byte %d of %d", len(b), (initialBits+7)/8)
	}
	if b := initials("жизнь -- "); b == nil || len(b) != 0 {
		t.Errorf("no initials: %x (nil %v), want an empty bitmap", b, b == nil)
	}
}

// TestIndexSearch_UnknownInitials: a page whose initials a cairn from
// before them left NULL is still found by a short prefix (the search hands
// it to FTS5 while any page lacks them), a page without initials has an
// empty bitmap rather than none, and the deep check's snapshot tells the
// two apart.
func TestIndexSearch_UnknownInitials(t *testing.T) {
	ctx := t.Context()
	var files []store.FileChange
	// Enough s-words for s* to be checked against the initials.
	for i := range prefixWords + 10 {
		files = append(files, store.FileChange{Path: fmt.Sprintf("notes/n%03d.md", i), Data: fmt.Appendf(nil, "# Note %d\n\nsword%03d here.\n", i, i)})
	}
	files = append(files,
		store.FileChange{Path: "notes/sunflower.md", Data: []byte("# Flower\n\nA sunflower.\n")},
		store.FileChange{Path: "notes/none.md", Data: []byte("# Жизнь\n\nМир и жизнь.\n")})
	db, _, r := searchVault(t, files)
	var kind string
	if err := db.r.QueryRowContext(ctx, `SELECT typeof(k.text_initials) FROM fts_keys k JOIN files f ON f.id = k.file
		WHERE f.path = 'notes/none.md'`).Scan(&kind); err != nil || kind != "blob" {
		t.Fatalf("the initials of a page without any: %s (%v), want an empty blob", kind, err)
	}
	q := index.FullTextQuery{Terms: termsOf("flower s*"), Limit: 10}
	if _, broad, err := r.pagesHolding(ctx, q.Terms, 100); err != nil || !broad[1] {
		t.Fatalf("s* starts %v more than %d words: %v; the test needs it to", broad, prefixWords, err)
	}
	found := func() []string {
		t.Helper()
		hits, err := r.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
		return paths
	}
	if got := found(); !slices.Equal(got, []string{"notes/sunflower.md"}) {
		t.Fatalf("with initials: %v", got)
	}
	// What an older cairn's write leaves.
	if _, err := db.w.ExecContext(ctx, `UPDATE fts_keys SET text_initials = NULL, title_initials = NULL
		WHERE file = (SELECT id FROM files WHERE path = 'notes/sunflower.md')`); err != nil {
		t.Fatal(err)
	}
	if got := found(); !slices.Equal(got, []string{"notes/sunflower.md"}) {
		t.Fatalf("with the page's initials unknown: %v, want it found", got)
	}
	var plan strings.Builder
	rows, err := db.r.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT EXISTS (SELECT 1 FROM fts_keys WHERE text_initials IS NULL OR title_initials IS NULL)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		rows.Scan(&id, &parent, &unused, &detail)
		plan.WriteString(detail + "; ")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "fts_keys_unknown_initials") {
		t.Errorf("looking for rows without initials: %s; want the partial index, not a scan", plan.String())
	}
	snap, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(snap["fts_initials"], "notes/sunflower.md | NULL | NULL") || !slices.Contains(snap["fts_initials"], "notes/none.md | X'' | X''") {
		t.Errorf("the snapshot's initials: %q", snap["fts_initials"])
	}
}
