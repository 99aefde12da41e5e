package postgres_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/index"
	"cairn/internal/vaultgen"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/sqlite"
	"cairn/store"
)

// The store's benchmarks of issue 18, SQLite and PostgreSQL side by side in
// one run on the same generated vault: commit one page, read one page at a
// pinned commit, bulk import with the index. -pages sets the sizes.

var benchPages = flag.String("pages", "1000", "comma-separated vault sizes of the store benchmarks")

func benchSizes(b *testing.B) []int {
	var out []int
	for _, s := range strings.Split(*benchPages, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			b.Fatalf("-pages %q: %v", *benchPages, err)
		}
		out = append(out, n)
	}
	return out
}

// benchBackend opens a fresh backend of the named kind.
func benchBackend(b *testing.B, kind string) cairn.Backend {
	b.Helper()
	ctx := context.Background()
	var db cairn.Backend
	var err error
	if kind == "postgres" {
		db, err = postgres.Open(ctx, pgtest.URL(b), nil)
	} else {
		db, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "cairn.db"), nil)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func indexStorage(db cairn.Backend) index.Storage {
	if pg, ok := db.(*postgres.DB); ok {
		return postgres.NewIndexStorage(pg)
	}
	return sqlite.NewIndexStorage(db.(*sqlite.DB))
}

type storeFixture struct {
	s          *store.Store
	head, tree cairn.Hash
	v          *vaultgen.Vault
}

// vaultFiles returns the generated vault's files, to import.
func vaultFiles(v *vaultgen.Vault) []store.FileChange {
	var files []store.FileChange
	for f := range v.Files() {
		files = append(files, store.FileChange{Path: f.Path, Data: f.Data})
	}
	return files
}

// importInto imports files into s and commits them to main.
func importInto(b *testing.B, s *store.Store, files []store.FileChange) (head, tree cairn.Hash) {
	b.Helper()
	ctx := context.Background()
	bt := s.NewBatch()
	tree, err := bt.BuildTree(ctx, files)
	if err == nil {
		err = bt.Flush(ctx)
	}
	if err != nil {
		b.Fatal(err)
	}
	c, err := s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Tree: tree, Principal: cairn.PrincipalSystem, Message: "import"})
	if err != nil {
		b.Fatal(err)
	}
	return c.Hash, tree
}

// storeSetup makes a store of kind holding a generated vault of n pages,
// indexed when indexed is set.
func storeSetup(b *testing.B, kind string, n int, indexed bool) *storeFixture {
	b.Helper()
	ctx := context.Background()
	db := benchBackend(b, kind)
	s, err := store.New(ctx, db, nil)
	if err != nil {
		b.Fatal(err)
	}
	if indexed {
		ix := index.New(s, indexStorage(db), nil)
		s.AddHook(ix.Hook())
	}
	v := vaultgen.New(vaultgen.Config{Pages: n})
	head, tree := importInto(b, s, vaultFiles(v))
	settle(b, db)
	return &storeFixture{s: s, head: head, tree: tree, v: v}
}

// settle brings a database that has just taken a bulk import to the state
// a vault of that size is in when it serves: PostgreSQL's statistics
// gathered and the import's dirty pages written (what autovacuum and the
// checkpointer would do in the next minutes, during the measurement),
// SQLite's write-ahead log checkpointed.
func settle(b *testing.B, db cairn.Backend) {
	b.Helper()
	ctx := context.Background()
	var err error
	switch db := db.(type) {
	case *postgres.DB:
		var tables []string
		rows, _ := db.Pool().Query(ctx, `SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema()`)
		if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			break
		}
		for _, t := range tables {
			if _, err = db.Pool().Exec(ctx, `VACUUM ANALYZE `+t); err != nil {
				break
			}
		}
		if err == nil {
			_, err = db.Pool().Exec(ctx, `CHECKPOINT`)
		}
	case *sqlite.DB:
		err = db.Checkpoint(ctx)
	}
	if err != nil {
		b.Fatalf("settle after the import: %v", err)
	}
}

func pct(ds []time.Duration, p float64) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Millisecond)
}

// BenchmarkBackendCommitOnePage commits a realistic edit of one page per
// iteration into an indexed vault, the index updated in the commit's
// transaction, and reports the median and 95th percentile.
func BenchmarkBackendCommitOnePage(b *testing.B) {
	pgtest.Base(b)
	for _, n := range benchSizes(b) {
		for _, kind := range []string{"sqlite", "postgres"} {
			b.Run(fmt.Sprintf("pages=%d/%s", n, kind), func(b *testing.B) {
				f := storeSetup(b, kind, n, true)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(1, uint64(n)))
				head, tree := f.head, f.tree
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					page := f.v.Edit(rng.IntN(n), i+1)
					start := time.Now()
					bt := f.s.NewBatch()
					next, err := bt.Edit(ctx, tree, []store.FileChange{{Path: page.Path, Data: page.Data}})
					if err != nil {
						b.Fatal(err)
					}
					c, err := f.s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Expected: head, Tree: next, Principal: cairn.User("bench"), Message: "edit " + page.Path})
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
					head, tree = c.Hash, next
				}
				b.StopTimer()
				b.ReportMetric(pct(lat, 0.5), "p50-ms")
				b.ReportMetric(pct(lat, 0.95), "p95-ms")
			})
		}
	}
}

// BenchmarkBackendReadPinned reads one page at a pinned commit (by hash):
// resolve, look up, read content.
func BenchmarkBackendReadPinned(b *testing.B) {
	pgtest.Base(b)
	for _, n := range benchSizes(b) {
		for _, kind := range []string{"sqlite", "postgres"} {
			b.Run(fmt.Sprintf("pages=%d/%s", n, kind), func(b *testing.B) {
				f := storeSetup(b, kind, n, false)
				ctx := context.Background()
				rev := f.head.String()
				rng := rand.New(rand.NewPCG(2, uint64(n)))
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					path := f.v.Path(rng.IntN(n))
					start := time.Now()
					h, err := f.s.Resolve(ctx, rev)
					if err != nil {
						b.Fatal(err)
					}
					c, err := f.s.ReadCommit(ctx, h)
					if err != nil {
						b.Fatal(err)
					}
					e, err := f.s.Get(ctx, c.Tree, path)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := f.s.ReadBlob(ctx, e.Blob); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				b.ReportMetric(pct(lat, 0.5), "p50-ms")
				b.ReportMetric(pct(lat, 0.95), "p95-ms")
			})
		}
	}
}

// BenchmarkBackendImportIndexed imports a generated vault into a fresh,
// indexed store (objects, tree, commit, and the index built in the
// commit's transaction) and reports pages per second.
func BenchmarkBackendImportIndexed(b *testing.B) {
	pgtest.Base(b)
	for _, n := range benchSizes(b) {
		// The files are made before the clock starts: an import is given
		// them (until 2026-12-07 their generation, about a second at 100k
		// pages, was timed with it).
		files := vaultFiles(vaultgen.New(vaultgen.Config{Pages: n}))
		for _, kind := range []string{"sqlite", "postgres"} {
			b.Run(fmt.Sprintf("pages=%d/%s", n, kind), func(b *testing.B) {
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					db := benchBackend(b, kind)
					s, err := store.New(ctx, db, nil)
					if err != nil {
						b.Fatal(err)
					}
					ix := index.New(s, indexStorage(db), nil)
					s.AddHook(ix.Hook())
					b.StartTimer()
					importInto(b, s, files)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			})
		}
	}
}
