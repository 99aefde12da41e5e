package admit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/sqlite"
	"cairn/store"
)

// BenchmarkAdmitLock measures how long one admission holds SQLite's write
// lock, the lock every other writer of the vault (another process's
// commit, the job queue) waits for, in a vault of 10k generated pages. The
// proposal is an ingest agent's: a summary page linking ten pages and a
// line in index.md. "admitted" proposals are admitted; "held" ones link a
// page that does not exist too, a new lint finding that holds them.
//
// It reports, per admission, lock-ms: the time spent inside write
// transactions of any kind (the admission's, and the object writes that may
// precede it), p50 and p95; tx-ms: the longest single write transaction;
// and wall-ms: Submit's wall time. The lock is measured by
// sqlite.Options.WriteHeld.
func BenchmarkAdmitLock(b *testing.B) {
	for _, held := range []bool{false, true} {
		name := "admitted"
		if held {
			name = "held"
		}
		b.Run("pages=10000/"+name, func(b *testing.B) { benchAdmitLock(b, 10000, held) })
	}
}

func benchAdmitLock(b *testing.B, pages int, held bool) {
	ctx := context.Background()
	var (
		mu        sync.Mutex
		measuring bool
		lock, tx  time.Duration
	)
	s, p, titles, raws := benchVault(b, pages, &sqlite.Options{
		WriteHeld: func(d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if measuring {
				lock += d
				tx = max(tx, d)
			}
		},
	})
	base, err := s.Head(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	var locks, txs, walls []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if !held {
			if base, err = s.Head(ctx, "main"); err != nil {
				b.Fatal(err)
			}
		}
		c, err := s.ReadCommit(ctx, base)
		if err != nil {
			b.Fatal(err)
		}
		var body strings.Builder
		fmt.Fprintf(&body, "---\ntitle: Source %d\ntype: summary\nsource: %s\n---\n# Source %d\n\n", i, raws[i%len(raws)], i)
		for k := range 10 {
			fmt.Fprintf(&body, "- [[%s]]\n", titles[(i*31+k*97)%len(titles)])
		}
		if held {
			fmt.Fprintf(&body, "- [[no such page %d]]\n", i)
		}
		idx, err := s.Get(ctx, c.Tree, "index.md")
		if err != nil {
			b.Fatal(err)
		}
		data, err := s.ReadBlob(ctx, idx.Blob)
		if err != nil {
			b.Fatal(err)
		}
		data = append(slices.Clip(data), fmt.Sprintf("- [[summaries/src-%d|Source %d]]\n", i, i)...)
		pb := s.NewBatch()
		t, err := pb.Edit(ctx, c.Tree, []store.FileChange{
			{Path: fmt.Sprintf("summaries/src-%d.md", i), Data: []byte(body.String())},
			{Path: "index.md", Data: data},
		})
		if err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		measuring, lock, tx = true, 0, 0
		mu.Unlock()
		b.StartTimer()
		start := time.Now()
		out, err := p.Submit(ctx, admit.Request{
			Route: "ingest", Base: base, Tree: t, Batch: pb, Principal: cairn.Agent("extractive"),
			Message: fmt.Sprintf("ingest: src-%d.md", i), Summary: "Created a summary.",
			Log: &cairn.LogEntry{Op: "ingest", Subject: fmt.Sprintf("src-%d.md", i), Body: "Created a summary."},
		})
		wall := time.Since(start)
		b.StopTimer()
		mu.Lock()
		measuring = false
		locks, txs, walls = append(locks, lock), append(txs, tx), append(walls, wall)
		mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		if want := !held; out.Admitted() != want {
			b.Fatalf("proposal %d: admitted %v, want %v: %s %v", i, out.Admitted(), want, out.Verdict, out.Findings)
		}
		b.StartTimer()
	}
	b.StopTimer()
	report := func(ds []time.Duration, unit string) {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, unit+"-p50")
		b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds())/1000, unit+"-p95")
	}
	report(locks, "lock-ms")
	report(txs, "tx-ms")
	report(walls, "wall-ms")
}
