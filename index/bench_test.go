package index_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cairn"
	"cairn/index"
	"cairn/internal/vaultgen"
	"cairn/markdown"
	"cairn/store"
)

// Benchmarks on generated vaults (see internal/vaultgen); `make bench`
// runs them all, the 100k-page ones included.

type generated struct {
	v     *vaultgen.Vault
	files []store.FileChange
}

var (
	vaultMu sync.Mutex
	vaults  = map[int]*generated{}
)

func vault(pages int) *generated {
	vaultMu.Lock()
	defer vaultMu.Unlock()
	if g, ok := vaults[pages]; ok {
		return g
	}
	g := &generated{v: vaultgen.New(vaultgen.Config{Pages: pages, Raw: true})}
	for _, f := range g.v.All() {
		g.files = append(g.files, store.FileChange{Path: f.Path, Data: f.Data})
	}
	vaults[pages] = g
	return g
}

type fixture struct {
	db   *backend
	s    *store.Store
	ix   *index.Index
	head cairn.Hash
	tree cairn.Hash
	g    *generated
	// storeBytes and indexBytes are the database's size without and with
	// the index, after a checkpoint.
	storeBytes, indexBytes int64
	importTime, buildTime  time.Duration
}

// benchSetup imports a generated vault into the store, then builds the index.
func benchSetup(b *testing.B, pages int) *fixture {
	b.Helper()
	ctx := context.Background()
	f := &fixture{g: vault(pages)}
	var err error
	f.db = openBackend(b)
	if f.s, err = store.New(ctx, f.db.db, nil); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	bt := f.s.NewBatch()
	if f.tree, err = bt.BuildTree(ctx, f.g.files); err != nil {
		b.Fatal(err)
	}
	if err := bt.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	c, err := f.s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Tree: f.tree, Principal: cairn.PrincipalSystem, Message: "import"})
	if err != nil {
		b.Fatal(err)
	}
	f.importTime = time.Since(start)
	f.head = c.Hash
	f.storeBytes = f.db.size(b)
	f.ix = index.New(f.s, f.db.st, nil)
	f.s.AddHook(f.ix.Hook())
	start = time.Now()
	if err := f.ix.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	f.buildTime = time.Since(start)
	f.indexBytes = f.db.size(b) - f.storeBytes
	return f
}

var sizes = []int{1_000, 10_000, 100_000}

// BenchmarkBuild imports a vault into the store and builds its index from
// scratch: pages per second for the whole, and the index's size against the
// raw bytes.
func BenchmarkBuild(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			vault(n)
			var total time.Duration
			var f *fixture
			for range b.N {
				f = benchSetup(b, n)
				total += f.importTime + f.buildTime
			}
			b.ReportMetric(float64(len(f.g.files))*float64(b.N)/total.Seconds(), "pages/s")
			b.ReportMetric(float64(len(f.g.files))/f.buildTime.Seconds(), "index-pages/s")
			b.ReportMetric(float64(f.indexBytes)/float64(f.g.v.RawBytes()), "index/raw")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkCheckDeep is cairn doctor's check of the index: a rebuild in a
// transaction it rolls back, and every row compared with the committed
// ones.
func BenchmarkCheckDeep(b *testing.B) {
	for _, n := range sizes[:2] {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			f := benchSetup(b, n)
			ctx := context.Background()
			for b.Loop() {
				d, err := f.ix.Check(ctx, true)
				if err != nil {
					b.Fatal(err)
				}
				if !d.OK() {
					b.Fatalf("a new index differs from a rebuild: %q", d.Problems)
				}
			}
		})
	}
}

// BenchmarkUpdate10 commits a change of 10 pages to main: store commit,
// index update and lint in one transaction.
func BenchmarkUpdate10(b *testing.B) {
	for _, n := range sizes[:2] {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			f := benchSetup(b, n)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(3, uint64(n)))
			head, tree := f.head, f.tree
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				var changes []store.FileChange
				for _, page := range rng.Perm(n)[:10] {
					p := f.g.v.Edit(page, i+1)
					changes = append(changes, store.FileChange{Path: p.Path, Data: p.Data})
				}
				b.StartTimer()
				start := time.Now()
				bt := f.s.NewBatch()
				next, err := bt.Edit(ctx, tree, changes)
				if err != nil {
					b.Fatal(err)
				}
				c, err := f.s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Expected: head, Tree: next, Principal: cairn.User("bench"), Message: "ten edits"})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				head, tree = c.Hash, next
			}
			b.StopTimer()
			b.ReportMetric(percentile(lat, 0.5), "p50-ms")
			b.ReportMetric(percentile(lat, 0.95), "p95-ms")
		})
	}
}

// BenchmarkView1 reads a draft that changes one page of main (an agent's
// workspace): View applies the difference to a snapshot of the committed
// index in memory and reads the page's findings, or searches for a word of
// its title. It takes no write lock (TestIndex_ViewTakesNoLock): ns/op is
// the read's time, which no writer waits for. (Until 2026-12-07 the
// difference was applied in a write transaction rolled back after the
// read, which held the lock for all of it.)
func BenchmarkView1(b *testing.B) {
	for _, n := range sizes[:2] {
		f := benchSetup(b, n)
		ctx := context.Background()
		p := f.g.v.Edit(7, 1)
		bt := f.s.NewBatch() // the draft, made once: View only reads it
		draft, err := bt.Edit(ctx, f.tree, []store.FileChange{{Path: p.Path, Data: p.Data}})
		if err != nil {
			b.Fatal(err)
		}
		word := strings.Fields(f.g.v.Titles()[7])[0]
		reads := map[string]func(r *index.Reader) error{
			"findings": func(r *index.Reader) error {
				_, err := r.Findings(ctx, index.FindingFilter{Page: p.Path})
				return err
			},
			"search": func(r *index.Reader) error {
				_, err := r.Search(ctx, index.SearchQuery{Text: word})
				return err
			},
		}
		for _, name := range []string{"findings", "search"} {
			b.Run(fmt.Sprintf("pages=%d/%s", n, name), func(b *testing.B) {
				for b.Loop() {
					if err := f.ix.View(ctx, bt, draft, reads[name]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCommitBesideViews commits one page at a time into main while a
// goroutine reads a draft of another page without pause (a search, then
// the page's findings, as an agent reads its workspace): p50-ms and
// p95-ms are the commits' latencies, views-per-op how many reads of the
// draft ran per commit. A view that held the write lock made every commit
// wait for the read in progress.
func BenchmarkCommitBesideViews(b *testing.B) {
	n := sizes[1]
	f := benchSetup(b, n)
	ctx := context.Background()
	p := f.g.v.Edit(7, 1)
	bt := f.s.NewBatch()
	draft, err := bt.Edit(ctx, f.tree, []store.FileChange{{Path: p.Path, Data: p.Data}})
	if err != nil {
		b.Fatal(err)
	}
	word := strings.Fields(f.g.v.Titles()[7])[0]
	stop := make(chan struct{})
	var views sync.WaitGroup
	var viewed atomic.Int64
	views.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := f.ix.View(ctx, bt, draft, func(r *index.Reader) error {
				if _, err := r.Search(ctx, index.SearchQuery{Text: word}); err != nil {
					return err
				}
				_, err := r.Findings(ctx, index.FindingFilter{Page: p.Path})
				return err
			})
			if err != nil {
				b.Error(err)
				return
			}
			viewed.Add(1)
		}
	})
	head, tree := f.head, f.tree
	var lat []time.Duration
	rev := 0
	for b.Loop() {
		rev++
		e := f.g.v.Edit(9, rev)
		start := time.Now()
		cb := f.s.NewBatch()
		next, err := cb.Edit(ctx, tree, []store.FileChange{{Path: e.Path, Data: e.Data}})
		if err != nil {
			b.Fatal(err)
		}
		c, err := f.s.Commit(ctx, cb, store.CommitRequest{Branch: "main", Expected: head, Tree: next, Principal: cairn.User("bench"), Message: "one edit"})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		head, tree = c.Hash, next
	}
	close(stop)
	views.Wait()
	b.ReportMetric(percentile(lat, 0.5), "p50-ms")
	b.ReportMetric(percentile(lat, 0.95), "p95-ms")
	b.ReportMetric(float64(viewed.Load())/float64(len(lat)), "views-per-op")
}

func percentile(ds []time.Duration, p float64) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Millisecond)
}

// BenchmarkSearch runs a mix of 1–3-term queries drawn from page titles,
// top 10 with snippets.
func BenchmarkSearch(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) { benchSearch(b, n, (*vaultgen.Vault).Queries) })
	}
}

// BenchmarkSearchFrequent is BenchmarkSearch over the harder mix: every
// query holds one of the vault's most frequent title words
// (vaultgen.FrequentQueries), which match many pages.
func BenchmarkSearchFrequent(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) { benchSearch(b, n, (*vaultgen.Vault).FrequentQueries) })
	}
}

// BenchmarkSearchPrefix is BenchmarkSearch over queries that end in a
// prefix of one to three letters (vaultgen.PrefixQueries), which starts
// hundreds or thousands of the vocabulary's words.
func BenchmarkSearchPrefix(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) { benchSearch(b, n, (*vaultgen.Vault).PrefixQueries) })
	}
}

// BenchmarkSearchCommon searches for each of the five words that are in
// the most pages, alone: every one of them matches most of the vault.
func BenchmarkSearchCommon(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			var share float64
			benchSearch(b, n, func(v *vaultgen.Vault, _ int, _ uint64) []string {
				var words []string
				words, share = commonWords(v, 5)
				return words
			})
			b.ReportMetric(share, "pages-matched-%")
		})
	}
}

// commonWords returns the n words found in the most pages of v, and the
// share of pages that hold the last of them, in percent.
func commonWords(v *vaultgen.Vault, n int) ([]string, float64) {
	count := map[string]int{}
	pages := 0
	for _, f := range v.All() {
		if !strings.HasSuffix(f.Path, ".md") {
			continue
		}
		pages++
		for _, w := range strings.Fields(index.FTSText(markdown.PlainText(f.Data))) {
			count[w]++
		}
	}
	words := slices.Collect(maps.Keys(count))
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	words = words[:n]
	return words, 100 * float64(count[words[n-1]]) / float64(pages)
}

func benchSearch(b *testing.B, n int, mix func(*vaultgen.Vault, int, uint64) []string) {
	f := benchSetup(b, n)
	ctx := context.Background()
	queries := mix(f.g.v, 1000, 7)
	r := f.ix.Main()
	lat := make([]time.Duration, 0, b.N)
	results := 0
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		res, err := r.Search(ctx, index.SearchQuery{Text: queries[i%len(queries)], Limit: 10})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		results += len(res)
	}
	b.StopTimer()
	b.ReportMetric(percentile(lat, 0.5), "p50-ms")
	b.ReportMetric(percentile(lat, 0.95), "p95-ms")
	b.ReportMetric(float64(results)/float64(b.N), "results/query")
}

// BenchmarkLinks reads the links and the backlinks of random pages.
func BenchmarkLinks(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			f := benchSetup(b, n)
			ctx := context.Background()
			r := f.ix.Main()
			rng := rand.New(rand.NewPCG(4, uint64(n)))
			b.ResetTimer()
			for range b.N {
				p := f.g.v.Path(rng.IntN(n))
				if _, err := r.Links(ctx, p); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Backlinks(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/2, "µs/read")
		})
	}
}

// BenchmarkPreview4000 previews (the lint gate's in-memory update) a change
// of 4,000 pages on a 10k-page vault: the largest change judged without the
// write lock (bulkChanges is 5,000), whose overlay answers every lookup of
// the links it touches.
func BenchmarkPreview4000(b *testing.B) {
	f := benchSetup(b, 10_000)
	ctx := context.Background()
	var changes []store.FileChange
	for page := range 4000 {
		p := f.g.v.Edit(page*2, 1)
		changes = append(changes, store.FileChange{Path: p.Path, Data: p.Data})
	}
	bt := f.s.NewBatch()
	next, err := bt.Edit(ctx, f.tree, changes)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := f.ix.Preview(ctx, bt, f.head, next); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWhere lists the pages whose frontmatter meets conditions, from
// the field rows: a selective one (pages updated on one day), a range over
// dates (a month) and a type with a list item (summaries tagged meeting).
func BenchmarkWhere(b *testing.B) {
	queries := []struct {
		name  string
		typ   string
		where []index.FieldQuery
	}{
		{"day", "", []index.FieldQuery{{Name: "updated", Op: index.OpEq, Value: "2025-03-14"}}},
		{"month", "", []index.FieldQuery{{Name: "updated", Op: index.OpGe, Value: "2025-03-01"}, {Name: "updated", Op: index.OpLt, Value: "2025-04-01"}}},
		{"tagged", "summary", []index.FieldQuery{{Name: "tags", Op: index.OpEq, Value: "meeting"}}},
	}
	for _, n := range []int{10_000, 100_000} {
		for _, q := range queries {
			b.Run(fmt.Sprintf("pages=%d/%s", n, q.name), func(b *testing.B) {
				f := benchSetup(b, n)
				ctx := context.Background()
				r := f.ix.Main()
				lat := make([]time.Duration, 0, b.N)
				results := 0
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					ts, err := r.Where(ctx, q.typ, q.where)
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
					results += len(ts)
				}
				b.StopTimer()
				b.ReportMetric(percentile(lat, 0.5), "p50-ms")
				b.ReportMetric(percentile(lat, 0.95), "p95-ms")
				b.ReportMetric(float64(results)/float64(b.N), "results/query")
			})
		}
	}
}
