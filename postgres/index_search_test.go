package postgres_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	neturl "net/url"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"cairn"
	"cairn/index"
	"cairn/internal/vaultgen"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/sqlite"
	"cairn/store"
)

// indexed is a vault with its index on one backend.
type indexed struct {
	s  *store.Store
	ix *index.Index
	st index.Storage
	pg *postgres.DB // nil on SQLite
}

// openPostgres opens a PostgreSQL vault database of the test's own, with
// its index storage.
func openPostgres(t testing.TB) (*postgres.DB, index.Storage) {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, postgres.NewIndexStorage(db)
}

// openSQLite opens a SQLite vault database of the test's own, with its
// index storage.
func openSQLite(t testing.TB) (*sqlite.DB, index.Storage) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cairn.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, sqlite.NewIndexStorage(db)
}

// buildVault imports files as main's head into db and builds its index
// from scratch; then commits each of later in turn on top, which the index
// takes as updates.
func buildVault(t testing.TB, db cairn.Backend, st index.Storage, files []store.FileChange, later ...[]store.FileChange) *indexed {
	t.Helper()
	ctx := context.Background()
	s, c := commitVault(t, db, files)
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
		tree, err := bt.BuildTree(ctx, slices.SortedFunc(maps.Values(all), func(a, b store.FileChange) int { return strings.Compare(a.Path, b.Path) }))
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
	out := &indexed{s: s, ix: ix, st: st}
	out.pg, _ = db.(*postgres.DB)
	return out
}

// commitVault commits files to main, not indexed.
func commitVault(t testing.TB, db cairn.Backend, files []store.FileChange) (*store.Store, *cairn.Commit) {
	t.Helper()
	ctx := context.Background()
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
	return s, c
}

// changedVault is a generated vault of n pages cut into a first import and
// later commits: a third of the pages come later, under ids above the
// others' (ids are not in path order, as in any vault that changed), and
// some pages change length in them, into or out of the short pages. With
// every > 3, the vault grows from a few pages by commits of 1,500 files.
func changedVault(n, every int) (*vaultgen.Vault, []store.FileChange, [][]store.FileChange) {
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
	return v, files, slices.Collect(slices.Chunk(later, 1500))
}

// termsOf splits a query of words and prefixes into full-text terms.
func termsOf(text string) []index.FullTextTerm {
	var out []index.FullTextTerm
	for _, w := range strings.Fields(text) {
		out = append(out, index.FullTextTerm{Word: strings.TrimSuffix(w, "*"), Prefix: strings.HasSuffix(w, "*")})
	}
	return out
}

// commonWords returns the n words in the most pages of the full text.
func commonWords(t testing.TB, db *postgres.DB, n int) []string {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(), `SELECT word FROM fts_vocab ORDER BY pages DESC, word LIMIT $1`, n)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// queryMix is the queries the search tests run: the benchmarks' mixes of
// title words and frequent title words, and the words in the most pages
// alone, with another word, and as prefixes of two letters.
func queryMix(t testing.TB, v *vaultgen.Vault, db *postgres.DB, n int) []string {
	var queries []string
	queries = append(queries, v.Queries(n, 1)...)
	queries = append(queries, v.FrequentQueries(n, 2)...)
	for _, w := range commonWords(t, db, 8) {
		queries = append(queries, w, w+" "+queries[len(queries)%n], w[:min(2, len(w))]+"*")
	}
	// Short prefixes, which SQLite checks against each page's initials.
	queries = append(queries, v.PrefixQueries(n/2, 3)...)
	return queries
}

// match is a page that matches, with what ranks it.
type match struct {
	path  string
	title bool
	words int
}

// exhaustive ranks every page that matches q by the order Storage defines,
// from every row of the full text, the filters applied here.
func exhaustive(t testing.TB, db *postgres.DB, q index.FullTextQuery) []match {
	t.Helper()
	var tsq []string
	for _, term := range q.Terms {
		s := "'" + term.Word + "'"
		if term.Prefix {
			s += ":*"
		}
		tsq = append(tsq, s)
	}
	rows, err := db.Pool().Query(context.Background(), `SELECT f.path, coalesce(f.type, ''), t.title @@ $1::tsquery, t.words
		FROM fts t JOIN files f ON f.id = t.id WHERE t.body @@ $1::tsquery`, strings.Join(tsq, " & "))
	if err != nil {
		t.Fatal(err)
	}
	var out []match
	for rows.Next() {
		var m match
		var typ string
		if err := rows.Scan(&m.path, &typ, &m.title, &m.words); err != nil {
			t.Fatal(err)
		}
		if q.Type != "" && typ != q.Type || q.Folder != "" && !hasFolder(m.path, q.Folder) {
			continue
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b match) int {
		return cmp.Or(-cmp.Compare(boolInt(a.title), boolInt(b.title)), cmp.Compare(a.words, b.words), strings.Compare(a.path, b.path))
	})
	return out
}

// hasFolder reports whether path is under folder, ignoring ASCII case
// (as lower() of a "C" column folds).
func hasFolder(path, folder string) bool {
	if len(path) < len(folder) {
		return false
	}
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	for i := range len(folder) {
		if lower(path[i]) != lower(folder[i]) {
			return false
		}
	}
	return true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func paths(ms []match) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.path)
	}
	return out
}

func hitPaths(hs []index.SearchHit) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.Path)
	}
	return out
}

// The order a search returns is the exhaustive one, computed here from
// every match (title first, then words, then path), for both query mixes,
// words in most pages and prefixes, with and without filters, at several
// limits. Most cases match more pages than they return, and in many the
// pages of the last result's length go on past the limit, where ties are
// cut by path; some are answered among the shortest pages alone, some
// among the next shortest.
func TestIndexSearch_SameAsExhaustive(t *testing.T) {
	// Some pages change in later commits, into or out of the tiers. The
	// tiers are made as small as a vault of 80k pages would have them:
	// there is a tier of the next shortest pages.
	t.Run("changed", func(t *testing.T) { sameAsExhaustive(t, 8000, 3, 100) })
	// A vault of a dozen pages grows by commits of 1,500 files: its
	// shortest pages, every page at first, are cut back to the shortest
	// when they are more than twice 1,000.
	t.Run("grown", func(t *testing.T) { sameAsExhaustive(t, 3000, 3000/12, 0) })
	// The same with small tiers: the tier of the next shortest pages is
	// made when the vault has grown to have one, then cut back.
	t.Run("grown/tiers", func(t *testing.T) { sameAsExhaustive(t, 3000, 3000/12, 40) })
}

func sameAsExhaustive(t *testing.T, n, every, least int) {
	ctx := t.Context()
	db, st := openPostgres(t)
	if least > 0 {
		postgres.SetLeastShortPages(st, least)
	}
	v, files, later := changedVault(n, every)
	vault := buildVault(t, db, st, files, later...)
	r := vault.st.Committed()
	snap, err := r.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"fts_short", "fts_mid"} {
		if bad := snap[table]; len(bad) > 0 {
			t.Errorf("%s out of place: %v", table, bad)
		}
	}
	var pages, short, mid int
	if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM fts), (SELECT count(*) FROM fts_short), (SELECT count(*) FROM fts_mid)`).
		Scan(&pages, &short, &mid); err != nil {
		t.Fatal(err)
	}
	if short == 0 || short > pages/2 || least > 0 && (mid <= short || mid > pages/2) || least == 0 && mid != 0 {
		t.Errorf("%d pages, %d of the shortest, %d of the next shortest: the tiers should hold a few each (the next shortest, none without small tiers)", pages, short, mid)
	}
	cases := []index.FullTextQuery{{Limit: 1}, {Limit: 10}, {Limit: 100}, {Folder: "Concepts/", Limit: 10}, {Type: "entity", Limit: 10},
		{Folder: "rare/", Limit: 10}}
	// A folder of few files is read through its files' path keys first;
	// concepts/ is not.
	for folder, few := range map[string]bool{"rare/": true, "Été/": true, "été/": true, "RARE/": true, "concepts/": false, "raw/": false} {
		if first, err := postgres.ReadsFolderFirst(ctx, r, folder, 10); err != nil || first != few {
			t.Fatalf("files under %s read first: %v (%v); the test wants %v", folder, first, err, few)
		}
	}
	queries := queryMix(t, v, db, 40)
	var more, ties, inShort, inMid int
	for _, text := range queries {
		for _, q := range cases {
			q.Terms = termsOf(text)
			name, want, hits := searchExhaustive(t, db, r, text, q)
			n := min(len(want), q.Limit)
			for i, h := range hits {
				if i < n && h.InTitle != want[i].title {
					t.Errorf("%s: %s in title = %v, want %v", name, h.Path, h.InTitle, want[i].title)
				}
			}
			if len(want) > q.Limit {
				more++
				if last, next := want[q.Limit-1], want[q.Limit]; last.title == next.title && last.words == next.words {
					ties++
				}
			}
			if q.Type == "" && q.Folder == "" && len(want) >= q.Limit && !want[0].title {
				var s, m int
				tsq := strings.Join(strings.Fields(strings.ReplaceAll(text, "*", ":*")), " & ")
				if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM fts_short WHERE body @@ $1::tsquery),
					(SELECT count(*) FROM fts_mid WHERE body @@ $1::tsquery)`, tsq).Scan(&s, &m); err != nil {
					t.Fatal(err)
				}
				switch {
				case s >= q.Limit:
					inShort++
				case m >= q.Limit:
					inMid++
				}
			}
		}
	}
	// Words and short prefixes under every kind of folder: of few files
	// (read first), by another case, beyond ASCII, of none, of many, with
	// a type.
	for _, text := range []string{"s*", "ka*", "a*", "th*", "s* k*", "7*", queries[0], queries[len(queries)/2]} {
		for _, q := range []index.FullTextQuery{{Folder: "rare/", Limit: 10}, {Folder: "RARE/", Limit: 3}, {Folder: "raw/", Limit: 10},
			{Folder: "nosuch/", Limit: 10}, {Folder: "été/", Limit: 10}, {Folder: "Été/", Limit: 10}, {Folder: "Été/", Limit: 1},
			{Type: "concept", Folder: "rare/", Limit: 10}, {Type: "entity", Folder: "entities/", Limit: 3}} {
			q.Terms = termsOf(text)
			searchExhaustive(t, db, r, text, q)
		}
	}
	all := len(queries) * len(cases)
	wantShort := all / 20
	if least > 0 {
		wantShort = all / 100 // small tiers hold fewer matches
	}
	if more < all/2 || ties < all/10 || inShort < wantShort || least > 0 && inMid < all/50 {
		t.Errorf("of %d cases, %d match more pages than they return, %d tie at the limit, %d are answered among the shortest pages and %d among the next shortest; the test vault is too small",
			all, more, ties, inShort, inMid)
	}
}

// searchExhaustive searches r for q (text's terms) and checks the pages
// found against the exhaustive order: it returns the case's name, that
// order and the hits.
func searchExhaustive(t *testing.T, db *postgres.DB, r index.StorageReader, text string, q index.FullTextQuery) (string, []match, []index.SearchHit) {
	t.Helper()
	name := fmt.Sprintf("%q type=%q folder=%q limit=%d", text, q.Type, q.Folder, q.Limit)
	want := exhaustive(t, db, q)
	hits, err := r.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got, want := hitPaths(hits), paths(want[:min(len(want), q.Limit)]); !slices.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", name, got, want)
	}
	return name, want, hits
}

// Both backends, given the same commits, keep the same rows and find the
// same pages for every query of the mix, scored alike; their orders agree
// (nDCG@10 of PostgreSQL's order against SQLite's, reported), and so do
// the index's results, snippets included.
func TestIndexSearch_SameAsSQLite(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 800
	}
	ctx := t.Context()
	v, files, later := changedVault(n, 3)
	pdb, pst := openPostgres(t)
	pg := buildVault(t, pdb, pst, files, later...)
	sdb, sst := openSQLite(t)
	lite := buildVault(t, sdb, sst, files, later...)

	// The same rows.
	pgRows, err := pg.st.Committed().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	liteRows, err := lite.st.Committed().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"files", "keys", "links", "link_keys", "cites", "fields", "findings", "fts", "fts_title"} {
		if !slices.Equal(pgRows[table], liteRows[table]) {
			d := (&index.Snapshot{Tables: map[string][]string{table: pgRows[table]}}).Diff(&index.Snapshot{Tables: map[string][]string{table: liteRows[table]}})
			t.Errorf("%s: PostgreSQL's rows differ from SQLite's (%d, %d rows):\n%s", table, len(pgRows[table]), len(liteRows[table]), strings.Join(d, "\n"))
		}
	}

	queries := queryMix(t, v, pdb, 100)
	var sum float64
	var worst float64 = 1
	var compared int
	for _, text := range queries {
		for _, q := range []index.FullTextQuery{{}, {Folder: "concepts/"}, {Type: "entity"}} {
			q.Terms, q.Limit = termsOf(text), 1<<20
			name := fmt.Sprintf("%q type=%q folder=%q", text, q.Type, q.Folder)
			got, err := pg.st.Committed().Search(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want, err := lite.st.Committed().Search(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if g, w := slices.Sorted(slices.Values(hitPaths(got))), slices.Sorted(slices.Values(hitPaths(want))); !slices.Equal(g, w) {
				t.Errorf("%s: PostgreSQL finds %d pages, SQLite %d; not the same:\n got %v\nwant %v", name, len(g), len(w), g, w)
				continue
			}
			for i := range min(len(got), len(want)) {
				if g, w := got[i], want[i]; g.Path == w.Path && (math.Abs(g.Score-w.Score) > 1e-9*math.Abs(w.Score) || g.InTitle != w.InTitle || g.ID != w.ID || g.Title != w.Title || g.Type != w.Type || g.Blob != w.Blob) {
					t.Errorf("%s: hit %d: PostgreSQL %+v, SQLite %+v", name, i, g, w)
				}
			}
			if len(want) == 0 {
				continue
			}
			ndcg := ndcgAt(10, hitPaths(got), hitPaths(want))
			sum += ndcg
			worst = min(worst, ndcg)
			compared++
		}
	}
	if compared < len(queries) {
		t.Fatalf("only %d of %d searches found anything: the mix does not exercise the ranking", compared, 3*len(queries))
	}
	mean := sum / float64(compared)
	t.Logf("%d pages, %d searches that match: nDCG@10 of PostgreSQL's order against SQLite's: mean %.4f, worst %.4f", n, compared, mean, worst)
	if mean < 0.9 {
		t.Errorf("nDCG@10 = %.4f, want at least 0.9", mean)
	}

	// Through the index: phrases, snippets and offsets come from the
	// store, and agree.
	for _, text := range append(v.Queries(50, 3), `"`+strings.Join(strings.Fields(v.Queries(1, 4)[0]), " ")+`"`, commonWords(t, pdb, 1)[0]+" type:concept") {
		q := index.SearchQuery{Text: text, Limit: 10}
		got, err := pg.ix.Main().Search(ctx, q)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		want, err := lite.ix.Main().Search(ctx, q)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if len(got) != len(want) {
			t.Errorf("%q: PostgreSQL %d results, SQLite %d", text, len(got), len(want))
			continue
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Path != w.Path || g.Snippet != w.Snippet || !slices.Equal(g.Matches, w.Matches) || math.Abs(g.Score-w.Score) > 1e-9*math.Abs(w.Score) {
				t.Errorf("%q: result %d: PostgreSQL %+v, SQLite %+v", text, i, g, w)
			}
		}
	}
}

// ndcgAt is the normalized discounted cumulative gain of the first k of
// got against the first k of ideal: the page ideal ranks first has
// relevance k, the next k-1, and so on; pages ideal does not rank there
// have none.
func ndcgAt(k int, got, ideal []string) float64 {
	rel := map[string]float64{}
	for i, p := range ideal[:min(k, len(ideal))] {
		rel[p] = float64(k - i)
	}
	dcg := func(ps []string) float64 {
		s := 0.0
		for i, p := range ps[:min(k, len(ps))] {
			s += rel[p] / math.Log2(float64(i+2))
		}
		return s
	}
	best := dcg(ideal)
	if best == 0 {
		return 1
	}
	return dcg(got) / best
}

// A word longer than a lexeme may be, and a page with more distinct words
// than one tsvector holds, are indexed and found as SQLite finds them.
func TestIndexSearch_Oversized(t *testing.T) {
	ctx := t.Context()
	var big strings.Builder
	for i := range 120_000 { // 120k distinct words of about 10 bytes: over 1 MB
		fmt.Fprintf(&big, "w%08d ", i)
	}
	long := strings.Repeat("x", 3000) + "tail"
	files := []store.FileChange{
		{Path: "index.md", Data: []byte("# Home\n\nSee [[big]] and [[long]].\n")},
		{Path: "big.md", Data: []byte("# Big zebra\n\n" + big.String() + "\n\nthe end, yak\n")},
		{Path: "long.md", Data: []byte("# Long\n\n" + long + " zebra\n")},
		{Path: "other.md", Data: []byte("# Other\n\nw00000001 and w00119999 zebra yak\n")},
	}
	pdb, pst := openPostgres(t)
	pg := buildVault(t, pdb, pst, files)
	sdb, sst := openSQLite(t)
	lite := buildVault(t, sdb, sst, files)
	check := func(stage string) {
		t.Helper()
		for _, text := range []string{"w00000001", "w00119999", "w00119999 zebra", "zebra yak", "w0011999*", "xxxxxxxxxx*", "zebra w00119999 yak", "big", "w00060000 zebra",
			"v00000001", "v00129999 yak", "v0012999*", "big yak"} {
			q := index.FullTextQuery{Terms: termsOf(text), Limit: 10}
			got, err := pg.st.Committed().Search(ctx, q)
			if err != nil {
				t.Fatalf("%s: %q: %v", stage, text, err)
			}
			want, err := lite.st.Committed().Search(ctx, q)
			if err != nil {
				t.Fatalf("%s: %q: %v", stage, text, err)
			}
			if !slices.Equal(hitPaths(got), hitPaths(want)) {
				t.Errorf("%s: %q: PostgreSQL finds %v, SQLite %v", stage, text, hitPaths(got), hitPaths(want))
			}
			for i := range min(len(got), len(want)) {
				if got[i].InTitle != want[i].InTitle || math.Abs(got[i].Score-want[i].Score) > 1e-9*math.Abs(want[i].Score) {
					t.Errorf("%s: %q: hit %d: PostgreSQL %+v, SQLite %+v", stage, text, i, got[i], want[i])
				}
			}
		}
	}
	check("built")
	var more int
	if err := pdb.Pool().QueryRow(ctx, `SELECT count(*) FROM fts_more`).Scan(&more); err != nil || more == 0 {
		t.Fatalf("parts in fts_more: %d, %v; want some", more, err)
	}
	// Updated, commit by commit: the big page loses its title word and
	// half its words (its row no longer has parts), is written again
	// with other words than it had, too many for one row (an update
	// writes the parts), and goes. After each, the index is the one a
	// rebuild makes: the words' page counts, the parts and the totals.
	var other strings.Builder
	for i := range 130_000 {
		fmt.Fprintf(&other, "v%08d ", i)
	}
	for _, step := range []struct {
		stage string
		file  store.FileChange
		parts bool // the big page's words go on in fts_more
	}{
		{"edited", store.FileChange{Path: "big.md", Data: []byte("# Big\n\n" + big.String()[:len(big.String())/2] + "\n")}, false},
		{"rewritten", store.FileChange{Path: "big.md", Data: []byte("# Big yak\n\n" + other.String() + " zebra\n")}, true},
		{"deleted", store.FileChange{Path: "big.md", Delete: true}, false},
	} {
		for _, v := range []*indexed{pg, lite} {
			head, err := v.s.Head(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			c, err := v.s.ReadCommit(ctx, head)
			if err != nil {
				t.Fatal(err)
			}
			bt := v.s.NewBatch()
			tree, err := bt.Edit(ctx, c.Tree, []store.FileChange{step.file})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.PrincipalSystem, Message: step.stage}); err != nil {
				t.Fatal(err)
			}
		}
		check(step.stage)
		if err := pdb.Pool().QueryRow(ctx, `SELECT count(*) FROM fts_more`).Scan(&more); err != nil || (more > 0) != step.parts {
			t.Errorf("%s: parts in fts_more: %d, %v; want some: %v", step.stage, more, err, step.parts)
		}
		d, err := pg.ix.Check(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if !d.OK() {
			t.Errorf("%s: the updated index differs from a rebuild:\n%s", step.stage, strings.Join(d.Problems, "\n"))
		}
	}
}

// The storage refuses a transaction of another backend's, and another
// PostgreSQL database's, with EINTERNAL.
func TestIndexStorage_BeginOtherBackend(t *testing.T) {
	ctx := t.Context()
	_, st := openPostgres(t)
	lite, _ := openSQLite(t)
	other, _ := openPostgres(t)
	for name, db := range map[string]cairn.Backend{"SQLite": lite, "another database": other} {
		err := db.Update(ctx, func(tx cairn.Tx) error {
			_, err := st.Begin(ctx, tx)
			return err
		})
		if cairn.ErrorCode(err) != cairn.EINTERNAL {
			t.Errorf("Begin with a transaction of %s = %v, want EINTERNAL", name, err)
		}
	}
}

// A snapshot reads one state of the index while a full build replaces
// it, and does not wait for the build; the build, too, goes ahead while
// the snapshot is open.
func TestIndexStorage_SnapshotDuringBuild(t *testing.T) {
	ctx := t.Context()
	db, st := openPostgres(t)
	_, files, _ := changedVault(300, 3)
	vault := buildVault(t, db, st, files)
	q := index.FullTextQuery{Terms: termsOf(commonWords(t, db, 1)[0]), Limit: 5}
	before, err := st.Committed().Search(ctx, q)
	if err != nil || len(before) == 0 {
		t.Fatalf("search before: %v, %v", before, err)
	}
	snap, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if _, err := snap.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	built := make(chan error, 1)
	go func() { built <- vault.ix.Rebuild(ctx) }()
	got, err := snap.Search(ctx, q)
	if err != nil || !slices.Equal(hitPaths(got), hitPaths(before)) {
		t.Errorf("search in the snapshot during a build = %v, %v; want %v", hitPaths(got), err, hitPaths(before))
	}
	if err := <-built; err != nil {
		t.Fatalf("rebuild with a snapshot open: %v", err)
	}
	got, err = snap.Search(ctx, q)
	if err != nil || !slices.Equal(hitPaths(got), hitPaths(before)) {
		t.Errorf("search in the snapshot after the build = %v, %v; want %v", hitPaths(got), err, hitPaths(before))
	}
	if got, err := st.Committed().Search(ctx, q); err != nil || !slices.Equal(hitPaths(got), hitPaths(before)) {
		t.Errorf("search after the build = %v, %v; want %v", hitPaths(got), err, hitPaths(before))
	}
}

// indexOIDs returns the indexes of the tables a full build fills: each
// one's definition (with the constraint it belongs to, if any), and its
// object id.
func indexOIDs(t *testing.T, db *postgres.DB) (defs map[string]string, oids map[string]uint32) {
	t.Helper()
	rows, err := db.Pool().Query(t.Context(), `SELECT c.relname,
			pg_get_indexdef(c.oid) || coalesce(' constraint ' || k.conname || ' ' || pg_get_constraintdef(k.oid), '')
				|| coalesce(' tablespace ' || s.spcname, '') || coalesce(' comment ' || obj_description(c.oid, 'pg_class'), '')
				|| coalesce(' constraint comment ' || obj_description(k.oid, 'pg_constraint'), '')
				|| coalesce(' options ' || array_to_string(c.reloptions, ','), '') || CASE WHEN x.indisclustered THEN ' clustered' ELSE '' END, c.oid
		FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_class r ON r.oid = x.indrelid
		LEFT JOIN pg_constraint k ON k.conindid = x.indexrelid AND k.conrelid = x.indrelid
		LEFT JOIN pg_tablespace s ON s.oid = c.reltablespace
		WHERE r.relnamespace = current_schema()::regnamespace AND r.relname = ANY($1)`,
		[]string{"files", "keys", "links", "link_keys", "cites", "fields", "findings", "fts", "fts_short", "fts_mid", "fts_more", "fts_vocab"})
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	defs, oids = map[string]string{}, map[string]uint32{}
	for rows.Next() {
		var name, def string
		var oid uint32
		if err := rows.Scan(&name, &def, &oid); err != nil {
			t.Fatal(err)
		}
		defs[name], oids[name] = def, oid
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return defs, oids
}

// A vault's first build drops the indexes of the tables it fills and makes
// them again, exactly as they were, with the comments and tablespace an
// operator gave them; a build over a filled index, or one whose tables
// someone is reading, keeps them.
func TestIndexStorage_FirstBuildMakesIndexesAgain(t *testing.T) {
	ctx := t.Context()
	_, files, _ := changedVault(300, 3)
	for _, reader := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "while read"}[reader], func(t *testing.T) {
			db, st := openPostgres(t)
			for _, stmt := range []string{
				`COMMENT ON INDEX fts_body IS 'the body''s words \ GIN'`,
				`COMMENT ON CONSTRAINT keys_pkey ON keys IS 'one row a key'`,
				`ALTER INDEX keys_pkey SET (fillfactor = 70)`,
				`ALTER INDEX fts_pkey SET (fillfactor = 80)`,
				`ALTER TABLE keys CLUSTER ON keys_pkey`,
				`ALTER TABLE fts CLUSTER ON fts_pkey`,
			} {
				if _, err := db.Pool().Exec(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			moveToTablespace(t, db, "links_dst")
			defs, oids := indexOIDs(t, db)
			for name, want := range map[string]string{"fts_body": "comment the body's words \\ GIN", "keys_pkey": "constraint comment one row a key options fillfactor=70 clustered",
				"fts_pkey": "options fillfactor=80 clustered"} {
				if !strings.Contains(defs[name], want) {
					t.Fatalf("%s = %q, want %q in it", name, defs[name], want)
				}
			}
			for _, name := range []string{"keys_pkey", "links_dst", "fields_name_value", "fts_body"} {
				if _, ok := defs[name]; !ok {
					t.Fatalf("no index %s among %v", name, slices.Sorted(maps.Keys(defs)))
				}
			}
			if !strings.Contains(defs["keys_pkey"], "constraint keys_pkey PRIMARY KEY") {
				t.Fatalf("keys_pkey = %q, want the primary key's constraint named", defs["keys_pkey"])
			}
			if reader {
				tx, err := db.Pool().Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(ctx, `SELECT count(*) FROM keys`); err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx)
			}
			vault := buildVault(t, db, st, files)
			after, afterOIDs := indexOIDs(t, db)
			if !maps.Equal(after, defs) {
				t.Fatalf("indexes after the first build:\n%v\nwant\n%v", after, defs)
			}
			for name := range defs {
				if made := afterOIDs[name] != oids[name]; made == reader {
					t.Errorf("index %s made again: %v, want %v", name, made, !reader)
				}
			}
			if reader {
				return
			}
			if err := vault.ix.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
			if again, againOIDs := indexOIDs(t, db); !maps.Equal(again, defs) || !maps.Equal(againOIDs, afterOIDs) {
				t.Errorf("a build over a filled index changed its indexes: %v", again)
			}
			q := index.FullTextQuery{Terms: termsOf(commonWords(t, db, 1)[0]), Limit: 5}
			if got, err := st.Committed().Search(ctx, q); err != nil || len(got) == 0 {
				t.Errorf("search after the builds = %v, %v", got, err)
			}
		})
	}
}

// moveToTablespace moves index to a tablespace of its own, made in a
// folder of the test's, where the server can make one there (it runs on
// this machine, as the user postgres, and the test's role may make
// tablespaces), and returns its name; otherwise it logs why not (fails
// under CI, which runs such a server) and returns "".
func moveToTablespace(t *testing.T, db *postgres.DB, index string) string {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	u, err := user.Lookup("postgres")
	if err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		err = os.Chown(dir, uid, -1)
	}
	// The server must reach the folder through the test's own folders.
	for d := filepath.Dir(dir); err == nil && d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		err = os.Chmod(d, 0o755)
	}
	name := fmt.Sprintf("cairn_test_%d", time.Now().UnixNano())
	if err == nil {
		_, err = db.Pool().Exec(ctx, `CREATE TABLESPACE `+name+` LOCATION '`+dir+`'`)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no tablespace: %v", err)
		}
		t.Logf("no tablespace: %v", err)
		return ""
	}
	t.Cleanup(func() {
		ctx := context.Background()
		db.Pool().Exec(ctx, `ALTER INDEX `+index+` SET TABLESPACE pg_default`)
		if _, err := db.Pool().Exec(ctx, `DROP TABLESPACE `+name); err != nil {
			t.Errorf("drop the test's tablespace: %v", err)
		}
	})
	if _, err := db.Pool().Exec(ctx, `ALTER INDEX `+index+` SET TABLESPACE `+name); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := db.Pool().QueryRow(ctx, `SELECT coalesce(s.spcname, '') FROM pg_class c LEFT JOIN pg_tablespace s ON s.oid = c.reltablespace WHERE c.oid = $1::regclass`, index).Scan(&got); err != nil || got != name {
		t.Fatalf("%s's tablespace = %q, %v; want %s", index, got, err, name)
	}
	return name
}

// TestIndexRead_FirstBuildLocks: while a vault's first build holds the
// index's tables (as it does from Clear to its commit), reads of the index
// from another pool wait at most the lock timeout and fail with
// EUNAVAILABLE saying the index is being built: the first time a
// connection runs a statement (its prepare waits) and once it has it
// prepared (its execution waits), and when four times as many readers as
// the pool has connections arrive at once, none of them waiting for a
// connection past the acquire timeout. Once the build commits, reads
// answer. Every connection of the pool has the bound, the one that ran
// the migrations (without it) too; River's pool has none, whatever the
// URL says; a URL that sets one keeps it.
func TestIndexRead_FirstBuildLocks(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	builder, err := postgres.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer builder.Close()
	open := func(conns int32) (*postgres.DB, index.Storage) {
		db, err := postgres.Open(ctx, url, &postgres.Options{LockTimeout: 300 * time.Millisecond, MaxConns: conns, AcquireTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, postgres.NewIndexStorage(db)
	}
	db, st := open(2)
	warm, warmSt := open(1)
	reads := func(st index.Storage) map[string]func(context.Context) error {
		return map[string]func(context.Context) error{
			"file": func(ctx context.Context) error {
				_, err := st.Committed().FileAt(ctx, "notes/a.md")
				return err
			},
			"search": func(ctx context.Context) error {
				_, err := st.Committed().Search(ctx, index.FullTextQuery{Terms: termsOf("alpha"), Limit: 5})
				return err
			},
			"snapshot": func(ctx context.Context) error {
				snap, err := st.Snapshot(ctx)
				if err != nil {
					return err
				}
				defer snap.Close()
				_, err = snap.Titles(ctx)
				// A snapshot whose read failed answers each later
				// read with that error, not with PostgreSQL's
				// "current transaction is aborted".
				_, again := snap.FileAt(ctx, "notes/a.md")
				first, _ := errors.AsType[*cairn.Error](err)
				next, _ := errors.AsType[*cairn.Error](again)
				if err != nil && (first == nil || next != first) {
					return fmt.Errorf("the snapshot's next read: %v; want the first read's error, %v", again, err)
				}
				if err != nil {
					return err
				}
				return again
			},
		}
	}
	answered := func(what string, err error) {
		t.Helper()
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("%s: %v", what, err)
		}
	}
	building := func(what string, err error) error {
		if cairn.ErrorCode(err) != cairn.EUNAVAILABLE || !strings.Contains(err.Error(), "being built") || cairn.ErrorHint(err) == "" {
			return fmt.Errorf("%s during a first build: %v, want EUNAVAILABLE saying the index is being built, with a hint", what, err)
		}
		return nil
	}
	for name, read := range reads(warmSt) { // prepared on warm's one connection
		answered("before the build: "+name, read(ctx))
	}
	build, err := builder.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer build.Rollback(ctx)
	if _, err := build.Exec(ctx, `LOCK TABLE `+strings.Join(postgres.BuiltTables(), ", ")+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second) // a read that waits for the build fails here
	defer cancel()
	for name, read := range reads(warmSt) {
		if err := building("prepared "+name, read(rctx)); err != nil {
			t.Error(err)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	cold := reads(st)
	names := slices.Sorted(maps.Keys(cold))
	for i := range cap(errs) {
		name := names[i%len(names)]
		wg.Go(func() { errs <- building(name, cold[name](rctx)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("8 reads on 2 connections took %v, want each to give up after the lock timeout", d)
	}
	if err := build.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range []index.Storage{st, warmSt} {
		for name, read := range reads(st) {
			answered("after the build: "+name, read(ctx))
		}
	}
	lockTimeout := func(pool *pgxpool.Pool) string {
		t.Helper()
		var lt string
		if err := pool.QueryRow(ctx, `SHOW lock_timeout`).Scan(&lt); err != nil {
			t.Fatal(err)
		}
		return lt
	}
	for _, d := range []*postgres.DB{db, warm} {
		var conns []*pgxpool.Conn
		for range d.Pool().Config().MaxConns {
			c, err := d.Pool().Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			var lt string
			if err := c.QueryRow(ctx, `SHOW lock_timeout`).Scan(&lt); err != nil || lt != "300ms" {
				t.Errorf("a pool connection's lock_timeout = %q, %v; want the bound, 300ms", lt, err)
			}
		}
		for _, c := range conns {
			c.Release()
		}
	}
	if lt := lockTimeout(db.RiverPool()); lt != "0" {
		t.Errorf("River's pool's lock_timeout = %q, want none (0)", lt)
	}
	for _, tc := range []struct{ url, want string }{
		{url + "&lock_timeout=1234", "1234ms"},
		{url + "&options=-c%20lock_timeout%3D2345", "2345ms"},
		{url + "&options=--lock-timeout%3D3456", "3456ms"},
		{url + "&options=-c%20deadlock_timeout%3D2s", "300ms"}, // another setting: the bound
	} {
		d, err := postgres.Open(ctx, tc.url, &postgres.Options{LockTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if lt := lockTimeout(d.Pool()); lt != tc.want {
			t.Errorf("%s: lock_timeout = %q, want %s", tc.url, lt, tc.want)
		}
		if lt := lockTimeout(d.RiverPool()); lt != "0" {
			t.Errorf("%s: River's pool's lock_timeout = %q, want none (0)", tc.url, lt)
		}
		d.Close()
	}
}

// A first build that may not drop the indexes of the tables it fills
// builds with them in place: under a role that may write the tables but
// does not own them (DROP INDEX is the owner's); under their owner when it
// may not make indexes in their schema, or one index is in a tablespace it
// may not make indexes in; and when a
// publication publishes the tables' updates or deletes (without its
// primary key, a table that does may not have rows deleted).
func TestIndexStorage_FirstBuildKeepsIndexesItMayNotDrop(t *testing.T) {
	ctx := t.Context()
	_, files, _ := changedVault(300, 3)
	for _, tc := range []string{"not the owner", "an owner without the schema", "a tablespace not theirs", "published"} {
		t.Run(tc, func(t *testing.T) {
			url := pgtest.URL(t)
			owner, err := postgres.Open(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { owner.Close() })
			var schema string
			if err := owner.Pool().QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
				t.Fatal(err)
			}
			s := pgx.Identifier{schema}.Sanitize()
			name := "cairn_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
			password := "pw" + strconv.FormatInt(time.Now().UnixNano(), 36) // where the server asks for one
			var stmts, undo []string
			switch tc {
			case "not the owner", "an owner without the schema", "a tablespace not theirs":
				stmts = []string{
					`CREATE ROLE ` + name + ` LOGIN PASSWORD '` + password + `'`,
					`GRANT USAGE ON SCHEMA ` + s + ` TO ` + name,
					`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + s + ` TO ` + name,
					`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ` + s + ` TO ` + name,
				}
				if tc == "a tablespace not theirs" {
					stmts = append(stmts, `GRANT CREATE ON SCHEMA `+s+` TO `+name)
				}
				if tc != "not the owner" {
					for _, table := range postgres.BuiltTables() {
						stmts = append(stmts, `ALTER TABLE `+s+`.`+table+` OWNER TO `+name)
					}
				}
				undo = []string{`DROP OWNED BY ` + name, `DROP ROLE ` + name}
			case "published":
				stmts = []string{`CREATE PUBLICATION ` + name + ` FOR TABLE ` + s + `.files, ` + s + `.fts WITH (publish = 'insert, update, delete')`}
				undo = []string{`DROP PUBLICATION ` + name}
			}
			for _, stmt := range stmts {
				if _, err := owner.Pool().Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			t.Cleanup(func() {
				for _, stmt := range undo {
					if _, err := owner.Pool().Exec(context.Background(), stmt); err != nil {
						t.Errorf("%s: %v", stmt, err)
					}
				}
			})
			if tc == "a tablespace not theirs" && moveToTablespace(t, owner, "links_dst") == "" {
				t.Skip("no tablespace")
			}
			db := owner
			if tc != "published" {
				u, err := neturl.Parse(url)
				if err != nil {
					t.Fatal(err)
				}
				u.User = neturl.UserPassword(name, password)
				if db, err = postgres.Open(ctx, u.String(), nil); err != nil {
					t.Fatal(err)
				}
				defer db.Close()
			}
			defs, oids := indexOIDs(t, owner)
			st := postgres.NewIndexStorage(db)
			buildVault(t, db, st, files)
			after, afterOIDs := indexOIDs(t, owner)
			if !maps.Equal(after, defs) || !maps.Equal(afterOIDs, oids) {
				t.Errorf("indexes after the first build:\n%v\nwant them kept:\n%v", after, defs)
			}
			q := index.FullTextQuery{Terms: termsOf(commonWords(t, owner, 1)[0]), Limit: 5}
			if got, err := st.Committed().Search(ctx, q); err != nil || len(got) == 0 {
				t.Errorf("search after the build = %v, %v", got, err)
			}
			if tc != "not the owner" {
				return
			}
			// A schema the role may use but not make tables in: its
			// migrations are refused, saying who may run them.
			other, err := neturl.Parse(pgtest.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			empty := pgx.Identifier{other.Query().Get("search_path")}.Sanitize()
			for _, stmt := range []string{`CREATE SCHEMA ` + empty, `GRANT USAGE ON SCHEMA ` + empty + ` TO ` + name} {
				if _, err := owner.Pool().Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			other.User = neturl.UserPassword(name, password)
			if d, err := postgres.Open(ctx, other.String(), nil); err == nil {
				d.Close()
				t.Error("a role that may not make tables opened a schema without them")
			} else if cairn.ErrorCode(err) != cairn.EFORBIDDEN || !strings.Contains(err.Error(), "from version 0 to") ||
				!strings.Contains(cairn.ErrorHint(err), "owns the vault's tables") {
				t.Errorf("open as a role that may not make tables: %v (hint %q), want EFORBIDDEN naming the versions, with a hint", err, cairn.ErrorHint(err))
			}
		})
	}
}

// A role that may not make temporary tables (TEMP revoked from PUBLIC on
// its database) still gets a deep check: the committed rows are compared
// in memory, as before they were kept in the database, and a drift is
// named all the same.
func TestIndexCheck_WithoutTemp(t *testing.T) {
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, pgtest.Base(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	database, role := "cairn_notemp_"+suffix, "cairn_notemp_"+suffix
	for _, stmt := range []string{
		`CREATE DATABASE ` + database,
		`REVOKE TEMP ON DATABASE ` + database + ` FROM PUBLIC`,
		`CREATE ROLE ` + role + ` LOGIN PASSWORD 'pw` + suffix + `'`,
		`GRANT CREATE ON DATABASE ` + database + ` TO ` + role,
	} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	cleanupAsAdmin(t, pgtest.Base(t), `DROP DATABASE `+database+` WITH (FORCE)`, `DROP ROLE `+role)
	u, err := neturl.Parse(pgtest.Base(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + database
	u.User = neturl.UserPassword(role, "pw"+suffix)
	q := u.Query()
	q.Set("search_path", "vault")
	u.RawQuery = q.Encode()
	db, err := postgres.Open(ctx, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var temp bool
	if err := db.Pool().QueryRow(ctx, `SELECT has_database_privilege(current_database(), 'TEMP')`).Scan(&temp); err != nil || temp {
		t.Fatalf("the role may make temporary tables (%v, %v): the test tests nothing", temp, err)
	}
	_, files, _ := changedVault(200, 1)
	v := buildVault(t, db, postgres.NewIndexStorage(db), files)
	d, err := v.ix.Check(ctx, true)
	if err != nil {
		t.Fatalf("the deep check without TEMP: %v", err)
	}
	if !d.OK() {
		t.Fatalf("the deep check of a new index without TEMP: %q", d.Problems)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE files SET title = 'Wrong' WHERE id = (SELECT min(id) FROM files WHERE title IS NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if d, err = v.ix.Check(ctx, true); err != nil {
		t.Fatalf("the deep check without TEMP: %v", err)
	}
	if !slices.ContainsFunc(d.Problems, func(p string) bool { return strings.HasPrefix(p, "files: unexpected ") && strings.Contains(p, "Wrong") }) {
		t.Errorf("the deep check without TEMP of a wrong title: %q", d.Problems)
	}
}

// TestIndexCheck_BesideWrites: the deep check rebuilds into shadows in a
// view that holds no lock. Commits, each allowed half a second for the
// vault's lock, land while it runs; it finds no drift in the view it took; it
// leaves the index's tables as they were; and with the shadows it still
// names a drift.
func TestIndexCheck_BesideWrites(t *testing.T) {
	ctx := t.Context()
	db, err := postgres.Open(ctx, pgtest.URL(t), &postgres.Options{LockTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, files, _ := changedVault(5000, 1)
	v := buildVault(t, db, postgres.NewIndexStorage(db), files)
	page := files[7]

	start := time.Now()
	var d *index.Drift
	var checkErr error
	var took time.Duration
	done := make(chan struct{})
	go func() {
		d, checkErr = v.ix.Check(ctx, true)
		took = time.Since(start)
		close(done)
	}()
	finished := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	commits, during := 0, 0
	for !finished() {
		head, err := v.s.Head(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		c, err := v.s.ReadCommit(ctx, head)
		if err != nil {
			t.Fatal(err)
		}
		bt := v.s.NewBatch()
		tree, err := bt.Edit(ctx, c.Tree, []store.FileChange{{Path: page.Path, Data: fmt.Appendf(slices.Clone(page.Data), "\nline %d\n", commits)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.PrincipalSystem, Message: "beside the check"}); err != nil {
			t.Fatalf("commit %d, %v into the check: %v", commits, time.Since(start).Round(time.Millisecond), err)
		}
		commits++
		if !finished() {
			during++
		}
	}
	if checkErr != nil {
		t.Fatal(checkErr)
	}
	t.Logf("the deep check took %v; %d commits landed while it ran", took.Round(time.Millisecond), during)
	if took < time.Second || during < 3 {
		t.Fatalf("the check took %v and %d commits landed beside it: the test needs a longer check", took, during)
	}
	if !d.OK() {
		t.Fatalf("the check beside commits found drift:\n%s", strings.Join(d.Problems, "\n"))
	}

	// Nothing of the vault's is written: the index's tables, row for row.
	digest := func() map[string]string {
		out := map[string]string{}
		for _, table := range []string{"files", "keys", "links", "link_keys", "cites", "fields", "findings",
			"fts", "fts_short", "fts_mid", "fts_more", "fts_vocab", "fts_stats", "file_ids", "index_state"} {
			var sum string
			if err := db.Pool().QueryRow(ctx, `SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM `+table+` t`).Scan(&sum); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			out[table] = sum
		}
		return out
	}
	before := digest()
	if d, err = v.ix.Check(ctx, true); err != nil || !d.OK() {
		t.Fatalf("the check of a settled index: %v %q", err, d.Problems)
	}
	if after := digest(); !maps.Equal(before, after) {
		t.Errorf("the check changed the index's tables:\nbefore %v\nafter  %v", before, after)
	}

	if _, err := db.Pool().Exec(ctx, `UPDATE files SET title = 'Wrong' WHERE id = (SELECT min(id) FROM files WHERE title IS NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if d, err = v.ix.Check(ctx, true); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Problems, func(p string) bool { return strings.HasPrefix(p, "files: unexpected ") && strings.Contains(p, "Wrong") }) {
		t.Errorf("the check of a wrong title: %q", d.Problems)
	}
}

// TestIndexCheck_PgTempLast: a search_path that names pg_temp after the
// vault's schema (a common hardening) still has the check's rebuild go
// into its shadows: a writer holding a row of files, the check neither
// waits for it nor changes it.
func TestIndexCheck_PgTempLast(t *testing.T) {
	ctx := t.Context()
	u, err := neturl.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	schema := q.Get("search_path")
	q.Set("search_path", schema+",pg_temp")
	u.RawQuery = q.Encode()
	db, err := postgres.Open(ctx, u.String(), &postgres.Options{LockTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, files, _ := changedVault(300, 1)
	v := buildVault(t, db, postgres.NewIndexStorage(db), files)
	other, err := pgx.Connect(ctx, pgtest.Base(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	files_ := pgx.Identifier{schema, "files"}.Sanitize()
	if _, err := tx.Exec(ctx, `UPDATE `+files_+` SET title = title WHERE id = (SELECT min(id) FROM `+files_+`)`); err != nil {
		t.Fatal(err)
	}
	d, err := v.ix.Check(ctx, true)
	if err != nil {
		t.Fatalf("the check beside a writer, pg_temp last: %v", err)
	}
	if !d.OK() {
		t.Fatalf("the check, pg_temp last, found drift: %q", d.Problems)
	}
}
