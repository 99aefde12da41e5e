package ingest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"cairn"
	"cairn/admit"
	"cairn/durable"
	"cairn/ingest"
	"cairn/internal/vaultgen"
	"cairn/sqlite/sqldurable"
	"cairn/sqlite/sqlingest"
	"cairn/store"
	"cairn/vault"
)

// BenchmarkIngest measures the main job end to end in one process: sources
// of 10 KB of text, each stored, enqueued, summarized by the extractive
// agent, admitted (merged onto main's head when another ingest landed
// first) and synced into main's folder, in a vault of 1k generated pages.
// One op ingests 10 sources at once; sources/s is the throughput.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	root := b.TempDir()
	v, err := vault.Init(ctx, filepath.Join(root, "vault"), false, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	g := vaultgen.New(vaultgen.Config{Pages: 1000, Raw: true})
	var files []store.FileChange
	var words []string
	for _, f := range g.All() {
		files = append(files, store.FileChange{Path: f.Path, Data: f.Data})
		if strings.HasPrefix(f.Path, "concepts/") && len(words) < 20000 {
			words = append(words, strings.Fields(string(f.Data))...)
		}
	}
	bb := v.Store.NewBatch()
	tree, err := bb.BuildTree(ctx, files)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Admit.Submit(ctx, admit.Request{Route: "init", Tree: tree, Batch: bb, Principal: cairn.User("ada"), Message: "import"}); err != nil {
		b.Fatal(err)
	}
	if _, err := v.SyncMain(ctx); err != nil {
		b.Fatal(err)
	}
	svc := ingest.New(v, sqlingest.New(v.DB), sqldurable.New(v.DB), nil)
	v.Admit.OnDecided(svc.Decided)
	workers := river.NewWorkers()
	svc.Register(workers)
	q, err := durable.New(v.DB.Write(), sqldurable.New(v.DB), durable.Config{Workers: workers, PollInterval: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	svc.SetQueue(q)
	if err := q.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer q.Stop(ctx)
	rng := rand.New(rand.NewPCG(1, 2))
	source := func(n int) string {
		var s strings.Builder
		fmt.Fprintf(&s, "# Source %d\n\n", n)
		for s.Len() < 10<<10 {
			k := 8 + rng.IntN(20)
			for j := range k {
				if j > 0 {
					s.WriteByte(' ')
				}
				s.WriteString(strings.Trim(words[rng.IntN(len(words))], "[]#*|:-"))
			}
			s.WriteString(". ")
			if rng.IntN(6) == 0 {
				s.WriteString("\n\n")
			}
		}
		return s.String()
	}
	const perOp = 10
	n := 0
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		var paths []string
		for range perOp {
			p := filepath.Join(root, fmt.Sprintf("source-%d.md", n))
			os.WriteFile(p, []byte(source(n)), 0o644)
			paths = append(paths, p)
			n++
		}
		b.StartTimer()
		start := time.Now()
		added, err := svc.Add(ctx, paths, cairn.User("ada"))
		if err != nil {
			b.Fatal(err)
		}
		for _, ad := range added {
			for {
				var status string
				if err := v.DB.Read().QueryRowContext(ctx, `SELECT status FROM sources WHERE id = ?`, ad.Source.ID).Scan(&status); err != nil {
					b.Fatal(err)
				}
				if status == ingest.Merged {
					break
				}
				if status != ingest.Queued && status != ingest.Running {
					b.Fatalf("%s: %s", ad.Source.Name, status)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		svc.Flush() // main's folder holds the result
		total += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(n)/total.Seconds(), "sources/s")
}
