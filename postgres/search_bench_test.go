package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"cairn/index"
	"cairn/internal/vaultgen"
	"cairn/store"
)

var searchPages = flag.Int("search.pages", 2000, "pages of the vault BenchmarkSearch searches")

// BenchmarkSearch searches a generated vault of -search.pages pages on
// PostgreSQL, top 10 with snippets, as index's BenchmarkSearch,
// BenchmarkSearchFrequent, BenchmarkSearchCommon and BenchmarkSearchPrefix
// do on SQLite: 1–3-term queries drawn from page titles (titles), the
// harder mix in which every query holds one of the most frequent title
// words (frequent), the five words in the most pages, alone (common), and
// queries that end in a prefix of one to three letters (prefixes). It
// reports the latency's median and 95th percentile.
func BenchmarkSearch(b *testing.B) {
	n := *searchPages
	ctx := context.Background()
	v := vaultgen.New(vaultgen.Config{Pages: n, Raw: true})
	var files []store.FileChange
	for _, f := range v.All() {
		files = append(files, store.FileChange{Path: f.Path, Data: f.Data})
	}
	db, st := openPostgres(b)
	vault := buildVault(b, db, st, files)
	if _, err := db.Pool().Exec(ctx, `VACUUM ANALYZE files, fts, fts_vocab`); err != nil { // as autovacuum leaves them
		b.Fatal(err)
	}
	mixes := []struct {
		name    string
		queries []string
	}{
		{"titles", v.Queries(1000, 7)},
		{"frequent", v.FrequentQueries(1000, 7)},
		{"common", commonWords(b, db, 5)},
		{"prefixes", v.PrefixQueries(1000, 7)},
	}
	for _, mix := range mixes {
		b.Run(fmt.Sprintf("pages=%d/%s", n, mix.name), func(b *testing.B) {
			r := vault.ix.Main()
			lat := make([]time.Duration, 0, b.N)
			results := 0
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				res, err := r.Search(ctx, index.SearchQuery{Text: mix.queries[i%len(mix.queries)], Limit: 10})
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
		})
	}
	// The storage's share: the same searches' full-text query alone,
	// without the index's parse of the query and its snippets.
	b.Run(fmt.Sprintf("pages=%d/titles/storage", n), func(b *testing.B) {
		queries := mixes[0].queries
		r := st.Committed()
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			if _, err := r.Search(ctx, index.FullTextQuery{Terms: termsOf(queries[i%len(queries)]), Limit: 10}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		b.ReportMetric(percentile(lat, 0.5), "p50-ms")
		b.ReportMetric(percentile(lat, 0.95), "p95-ms")
	})
}

// percentile returns the p-th quantile of ds in milliseconds.
func percentile(ds []time.Duration, p float64) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Millisecond)
}
