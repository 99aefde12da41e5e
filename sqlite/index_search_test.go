package sqlite

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
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
	rows, err := db.r.QueryContext(ctx, `SELECT f.path, f.words, d.sz FROM files f LEFT JOIN fts_docsize d ON d.id = f.id ORDER BY f.path`)
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
	// Some pages change length in it, into or out of the short pages.
	t.Run("changed", func(t *testing.T) { sameAsExhaustive(t, 8000, 3) })
	// A vault of a dozen pages grows by commits of 1,500 files to 5,000
	// pages: its short pages, every page at first, are cut back to the
	// shortest.
	t.Run("grown", func(t *testing.T) { sameAsExhaustive(t, 5000, 5000/12) })
}

func sameAsExhaustive(t *testing.T, n, every int) {
	ctx := t.Context()
	v := vaultgen.New(vaultgen.Config{Pages: n, Raw: true})
	var files, later []store.FileChange
	for i, f := range v.All() {
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
	cases := []index.FullTextQuery{{Limit: 1}, {Limit: 10}, {Limit: 100}, {Folder: "concepts/", Limit: 10}, {Type: "entity", Limit: 10}}
	shortPagesHold(t, db, r)
	s := &search{r: r}
	if err := db.r.QueryRowContext(ctx, `SELECT words FROM fts_tier`).Scan(&s.tier); err != nil {
		t.Fatal(err)
	}
	var more, ties, short int
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
			s.expr = ftsMatch(q.Terms)
			s.filter, s.args = searchFilter(q)
			if hits, err := s.query(ctx, "fts_short", q.Limit, nil); err != nil {
				t.Fatal(err)
			} else if len(hits) == q.Limit && len(want) > 0 && !want[0].title {
				short++ // answered among the short pages alone
			}
			if len(want) > q.Limit {
				more++
				if last, next := want[q.Limit-1], want[q.Limit]; last.title == next.title && last.words == next.words {
					ties++
				}
			}
		}
	}
	if cases := len(queries) * len(cases); more < cases/2 || ties < cases/10 || short < cases/20 {
		t.Errorf("of %d cases, %d match more pages than they return, %d tie at the limit and %d are answered among the short pages; the test vault is too small",
			cases, more, ties, short)
	}
}

// shortPagesHold checks that the short pages' full text holds exactly the
// pages of at most the tier's words, and that the tier leaves most pages
// out.
func shortPagesHold(t *testing.T, db *DB, r *indexReader) {
	t.Helper()
	// What doctor compares with a rebuild says the same.
	rows, err := r.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if bad := rows["fts_short"]; len(bad) > 0 {
		t.Errorf("snapshot: short pages out of place: %v", bad)
	}
	var tier, pages, in, wrong int
	err = db.r.QueryRowContext(t.Context(), `SELECT (SELECT words FROM fts_tier), count(*),
		count(s.id), count(CASE WHEN (s.id IS NULL) = (f.words <= (SELECT words FROM fts_tier)) THEN 1 END)
		FROM files f LEFT JOIN fts_short_docsize s ON s.id = f.id WHERE f.words IS NOT NULL`).Scan(&tier, &pages, &in, &wrong)
	if err != nil {
		t.Fatal(err)
	}
	var titles int
	if err := db.r.QueryRowContext(t.Context(), `SELECT count(*) FROM fts_title_short_docsize`).Scan(&titles); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 || titles != in || in == 0 || in > pages/2 {
		t.Errorf("short pages: %d of %d pages of at most %d words, %d titles; %d pages on the wrong side", in, pages, tier, titles, wrong)
	}
}

// The short pages a full build keeps are every page of at most the tier's
// words and no other, whatever order the pages come in.
func TestShortPages(t *testing.T) {
	for _, n := range []int{0, 1, 1999, 2000, 2001, 10_000, 300_000} {
		var s shortPages
		words := make([]int, n)
		for i := range n {
			words[i] = int(uint64(i)*2654435761%997) + i%3 // many ties
			s.add(shortPage{id: int64(i + 1), words: words[i]})
		}
		pages, tier := s.done()
		kept := map[int64]bool{}
		for _, p := range pages {
			kept[p.id] = true
		}
		for i, w := range words {
			if kept[int64(i+1)] != (w <= tier) {
				t.Fatalf("n=%d: page %d of %d words kept=%v, tier %d", n, i+1, w, kept[int64(i+1)], tier)
			}
		}
		if n > 0 && (len(pages) == 0 || len(pages) > shortTier(n)) {
			t.Errorf("n=%d: %d pages kept, want 1 to %d", n, len(pages), shortTier(n))
		}
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
	rows, err := db.r.QueryContext(t.Context(), `SELECT f.path, f.id IN (SELECT rowid & 4294967295 FROM fts_title
		WHERE fts_title MATCH ?) AS title, f.words FROM fts JOIN files f ON f.id = fts.rowid & 4294967295
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
