package admit_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/index"
	"cairn/internal/vaultgen"
	"cairn/sqlite"
	"cairn/store"
)

// BenchmarkAdmit measures admission's own work for one agent proposal —
// gates, the index update and lint delta, the log entry, the commits and
// records, in one transaction — excluding the agent, in vaults of 1k and
// 10k generated pages. The proposal is what an ingest makes: a summary page
// linking ten pages and a line in index.md. "rebased" proposals were made
// one commit behind main, so admission merges them onto the head first.
func BenchmarkAdmit(b *testing.B) {
	for _, pages := range []int{1000, 10000} {
		for _, rebased := range []bool{false, true} {
			b.Run(fmt.Sprintf("pages=%d/rebased=%v", pages, rebased), func(b *testing.B) {
				benchAdmit(b, pages, rebased)
			})
		}
	}
}

func benchAdmit(b *testing.B, pages int, rebased bool) {
	ctx := context.Background()
	s, p, titles, raws := benchVault(b, pages, nil)
	head := func() (cairn.Hash, cairn.Hash) {
		h, err := s.Head(ctx, "main")
		if err != nil {
			b.Fatal(err)
		}
		c, err := s.ReadCommit(ctx, h)
		if err != nil {
			b.Fatal(err)
		}
		return h, c.Tree
	}
	// proposal builds the change an ingest agent makes on base.
	proposal := func(i int, base cairn.Hash) (*store.Batch, cairn.Hash) {
		var body strings.Builder
		fmt.Fprintf(&body, "---\ntitle: Source %d\ntype: summary\nsource: %s\n---\n# Source %d\n\n", i, raws[i%len(raws)], i)
		for k := range 10 {
			fmt.Fprintf(&body, "- [[%s]]\n", titles[(i*31+k*97)%len(titles)])
		}
		idx, err := s.Get(ctx, base, "index.md")
		if err != nil {
			b.Fatal(err)
		}
		data, err := s.ReadBlob(ctx, idx.Blob)
		if err != nil {
			b.Fatal(err)
		}
		data = append(slices.Clip(data), fmt.Sprintf("- [[summaries/src-%d|Source %d]]\n", i, i)...)
		pb := s.NewBatch()
		t, err := pb.Edit(ctx, base, []store.FileChange{
			{Path: fmt.Sprintf("summaries/src-%d.md", i), Data: []byte(body.String())},
			{Path: "index.md", Data: data},
		})
		if err != nil {
			b.Fatal(err)
		}
		return pb, t
	}
	var times []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		base, baseTree := head()
		if rebased {
			// main moves after the agent started: a person's commit.
			other := fmt.Sprintf("summaries/person-%d.md", i)
			pb, t := proposal(1_000_000+i, baseTree)
			if _, err := p.Submit(ctx, admit.Request{Route: "commit", Base: base, Tree: t, Batch: pb, Principal: cairn.User("ada"), Message: other}); err != nil {
				b.Fatal(err)
			}
		}
		pb, t := proposal(i, baseTree)
		b.StartTimer()
		start := time.Now()
		out, err := p.Submit(ctx, admit.Request{
			Route: "ingest", Base: base, Tree: t, Batch: pb, Principal: cairn.Agent("extractive"),
			Message: fmt.Sprintf("ingest: src-%d.md", i), Summary: "Created a summary.",
			Log: &cairn.LogEntry{Op: "ingest", Subject: fmt.Sprintf("src-%d.md", i), Body: "Created a summary."},
		})
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if !out.Admitted() {
			b.Fatalf("proposal %d not admitted: %s %v", i, out.Verdict, out.Findings)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
}

// benchVault makes a vault of pages generated pages in a database opened
// with opts, imported into main through admission, and returns its store,
// its pipeline, the generated pages' names (without .md) and raw files.
func benchVault(b *testing.B, pages int, opts *sqlite.Options) (*store.Store, *admit.Pipeline, []string, []string) {
	b.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "cairn.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s, err := store.New(ctx, db, nil)
	if err != nil {
		b.Fatal(err)
	}
	ix := index.New(s, sqlite.NewIndexStorage(db), nil)
	s.AddHook(ix.Hook())
	p := admit.New(s, ix, sqlite.NewAdmitStorage(db), nil)
	g := vaultgen.New(vaultgen.Config{Pages: pages, Raw: true})
	var files []store.FileChange
	var titles, raws []string
	for _, f := range g.All() {
		if strings.HasPrefix(f.Path, "raw/") {
			raws = append(raws, f.Path)
		}
		files = append(files, store.FileChange{Path: f.Path, Data: f.Data})
		if strings.HasSuffix(f.Path, ".md") && !strings.HasPrefix(f.Path, "raw/") && f.Path != "index.md" && f.Path != "log.md" {
			titles = append(titles, strings.TrimSuffix(f.Path, ".md"))
		}
	}
	bb := s.NewBatch()
	tree, err := bb.BuildTree(ctx, files)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Submit(ctx, admit.Request{Route: "import", Tree: tree, Batch: bb, Principal: cairn.PrincipalSystem, Message: "import"}); err != nil {
		b.Fatal(err)
	}
	return s, p, titles, raws
}
