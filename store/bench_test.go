package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"cairn"
	"cairn/internal/vaultgen"
	"cairn/sqlite"
	"cairn/store"
)

// The benchmarks run on generated vaults of realistic pages (~2 KB, YAML
// frontmatter, 5 links, Zipf words over a 30k vocabulary). The 100k-page
// sizes take a while to set up; `make bench` runs them all.

var sizes = []int{1_000, 10_000, 100_000}

type generated struct {
	v     *vaultgen.Vault
	files []store.FileChange
}

var (
	vaultMu sync.Mutex
	vaults  = map[int]*generated{}
)

// vault returns a generated vault and its files, made once per size.
func vault(pages int) *generated {
	vaultMu.Lock()
	defer vaultMu.Unlock()
	if g, ok := vaults[pages]; ok {
		return g
	}
	g := &generated{v: vaultgen.New(vaultgen.Config{Pages: pages})}
	for f := range g.v.Files() {
		g.files = append(g.files, store.FileChange{Path: f.Path, Data: f.Data})
	}
	vaults[pages] = g
	return g
}

type fixture struct {
	db   *sqlite.DB
	s    *store.Store
	head cairn.Hash
	tree cairn.Hash
	v    *vaultgen.Vault
}

// setup imports a generated vault into a fresh store and commits it.
func setup(b *testing.B, pages int) *fixture {
	b.Helper()
	ctx := context.Background()
	g := vault(pages)
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "cairn.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, err := store.New(ctx, db, nil)
	if err != nil {
		b.Fatal(err)
	}
	head, tree := importVault(b, s, g.files)
	return &fixture{db: db, s: s, head: head, tree: tree, v: g.v}
}

func importVault(b *testing.B, s *store.Store, files []store.FileChange) (cairn.Hash, cairn.Hash) {
	ctx := context.Background()
	bt := s.NewBatch()
	tree, err := bt.BuildTree(ctx, files)
	if err != nil {
		b.Fatal(err)
	}
	if err := bt.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	c, err := s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Tree: tree, Principal: cairn.PrincipalSystem, Message: "import"})
	if err != nil {
		b.Fatal(err)
	}
	return c.Hash, tree
}

func fileSize(b *testing.B, db *sqlite.DB) int64 {
	b.Helper()
	if err := db.Checkpoint(context.Background()); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(db.Path())
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

func percentile(ds []time.Duration, p float64) float64 {
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Millisecond)
}

// BenchmarkCommitOnePage commits a realistic edit of one page per
// iteration, with synchronous=FULL. It reports the median and 95th
// percentile latency and the growth of the database file per commit after
// a WAL checkpoint (run with -benchtime=100x for the target's "averaged over
// 100 commits").
func BenchmarkCommitOnePage(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			f := setup(b, n)
			ctx := context.Background()
			before := fileSize(b, f.db)
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
			growth := fileSize(b, f.db) - before
			b.ReportMetric(percentile(lat, 0.5), "p50-ms")
			b.ReportMetric(percentile(lat, 0.95), "p95-ms")
			b.ReportMetric(float64(growth)/float64(b.N)/1024, "KB/commit")
		})
	}
}

// BenchmarkReadPinned reads one page at a pinned commit (by hash): resolve,
// look up, read content.
func BenchmarkReadPinned(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			f := setup(b, n)
			ctx := context.Background()
			rev := f.head.String()
			rng := rand.New(rand.NewPCG(2, uint64(n)))
			b.ResetTimer()
			for range b.N {
				path := f.v.Path(rng.IntN(n))
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
			}
		})
	}
}

// BenchmarkDiff10 diffs two commits that differ by 10 pages: the cost must
// not grow with the vault.
func BenchmarkDiff10(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			f := setup(b, n)
			ctx := context.Background()
			var changes []store.FileChange
			for i := range 10 {
				p := f.v.Edit(i*(n/10), 1)
				changes = append(changes, store.FileChange{Path: p.Path, Data: p.Data})
			}
			bt := f.s.NewBatch()
			next, err := bt.Edit(ctx, f.tree, changes)
			if err != nil {
				b.Fatal(err)
			}
			c, err := f.s.Commit(ctx, bt, store.CommitRequest{Branch: "main", Expected: f.head, Tree: next, Principal: cairn.User("bench"), Message: "ten edits"})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				d, err := f.s.DiffCommits(ctx, f.head, c.Hash, nil)
				if err != nil || len(d) != 10 {
					b.Fatalf("diff = %d changes, %v", len(d), err)
				}
			}
		})
	}
}

// BenchmarkImport bulk-imports a vault into a fresh store (no index) and
// reports pages per second and the store's size against the raw bytes.
func BenchmarkImport(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			g := vault(n)
			var ratio float64
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				ctx := context.Background()
				db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "cairn.db"), nil)
				if err != nil {
					b.Fatal(err)
				}
				s, err := store.New(ctx, db, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				importVault(b, s, g.files)
				b.StopTimer()
				ratio = float64(fileSize(b, db)) / float64(g.v.RawBytes())
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(len(g.files))*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			b.ReportMetric(ratio, "store/raw")
		})
	}
}
