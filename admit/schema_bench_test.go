package admit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/store"
)

// benchTypes declares ten types for a generated vault: a base type every
// other extends, the generator's four with their folders and fields, and
// five no page is of yet.
func benchTypes() []store.FileChange {
	base := "---\ntitle: Page\nrequires: [title, updated]\nrecommends: [tags]\nfields:\n  title: {type: string, min_length: 1}\n  updated: date\n  tags: list of string\n---\nEvery page.\n"
	decls := map[string]string{
		"page":         base,
		"entity":       "---\nextends: page\nfolder: entities\n---\n",
		"concept":      "---\nextends: page\nfolder: concepts\n---\n",
		"summary":      "---\nextends: page\nfolder: summaries\nrequires: [source]\nfields:\n  source: {type: string, pattern: '^raw/'}\n---\n",
		"analysis":     "---\nextends: page\nfolder: analyses\n---\n",
		"person":       "---\nextends: page\nfields:\n  born: date\n  employer: link to organization\n---\n",
		"organization": "---\nextends: page\nfields:\n  founded: integer\n---\n",
		"decision":     "---\nextends: page\nrequires: [status]\nfields:\n  status: {enum: [proposed, accepted, rejected]}\n---\n",
		"meeting":      "---\nextends: page\nfields:\n  attendees: list of link to person\n---\n",
		"project":      "---\nextends: page\nwhen:\n  - field: status\n    is: done\n    then: {requires: [finished]}\nfields:\n  status: string\n  finished: date\n---\n",
	}
	var out []store.FileChange
	for _, n := range slices.Sorted(mapKeys(decls)) {
		out = append(out, store.FileChange{Path: "types/" + n + ".md", Data: []byte(decls[n])})
	}
	return out
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// BenchmarkAdmit_Gates measures what the schema gate and the vault's
// policies add to admission: an agent's change of ten pages (each edited,
// a sentence appended) in a 10k-page vault without declared types or
// policies, with ten types (every page of a declared type), and with
// twenty policies.
func BenchmarkAdmit_Gates(b *testing.B) {
	for _, mode := range []string{"plain", "types=10", "policies=20"} {
		b.Run("pages=10000/"+mode, func(b *testing.B) {
			ctx := context.Background()
			s, p, titles, _ := benchVault(b, 10000, nil)
			switch mode {
			case "types=10":
				declare(b, s, p, benchTypes(), cairn.User("ada"))
			case "policies=20":
				declare(b, s, p, []store.FileChange{{Path: "cairn.yaml", Data: admit.BenchPolicies()}}, cairn.User("ada"))
			}
			var times []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				base, tree := headOf(b, s)
				var edits []store.FileChange
				for k := range 10 {
					path := titles[(i*131+k*977)%len(titles)] + ".md"
					e, err := s.Get(ctx, tree, path)
					if err != nil {
						b.Fatal(err)
					}
					data, err := s.ReadBlob(ctx, e.Blob)
					if err != nil {
						b.Fatal(err)
					}
					data = append(slices.Clip(data), fmt.Sprintf("\nEdit %d of the page.\n", i)...)
					edits = append(edits, store.FileChange{Path: path, Data: data})
				}
				pb := s.NewBatch()
				t, err := pb.Edit(ctx, tree, edits)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				out, err := p.Submit(ctx, admit.Request{Route: "ingest", Base: base, Tree: t, Batch: pb, Principal: cairn.Agent("extractive"), Message: fmt.Sprintf("edit %d", i)})
				times = append(times, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if !out.Admitted() {
					b.Fatalf("change %d not admitted: %s %v", i, out.Verdict, out.Findings)
				}
			}
			reportTimes(b, times)
		})
	}
}

// BenchmarkAdmit_TypeChange measures a person's change of the base type
// every page's type extends (a field declared, or no longer), in a
// 10k-page vault: admission re-checks every page of every type (10k
// pages) against the new declaration, and finds nothing new.
func BenchmarkAdmit_TypeChange(b *testing.B) {
	ctx := context.Background()
	s, p, _, _ := benchVault(b, 10000, nil)
	decls := benchTypes()
	declare(b, s, p, decls, cairn.User("ada"))
	base := string(decls[slices.IndexFunc(decls, func(f store.FileChange) bool { return f.Path == "types/page.md" })].Data)
	var times []time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		head, tree := headOf(b, s)
		data := base
		if i%2 == 0 {
			data = strings.Replace(base, "  tags: list of string\n", "  tags: list of string\n  extra: string\n", 1)
		}
		pb := s.NewBatch()
		t, err := pb.Edit(ctx, tree, []store.FileChange{{Path: "types/page.md", Data: []byte(data)}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		out, err := p.Submit(ctx, admit.Request{Route: "commit", Base: head, Tree: t, Batch: pb, Principal: cairn.User("ada"), Message: fmt.Sprintf("type change %d", i)})
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if !out.Admitted() {
			b.Fatalf("type change %d not admitted: %s %v", i, out.Verdict, out.Findings)
		}
	}
	reportTimes(b, times)
}

// declare commits declarations to main.
func declare(b *testing.B, s *store.Store, p *admit.Pipeline, files []store.FileChange, who cairn.Principal) {
	b.Helper()
	head, tree := headOf(b, s)
	pb := s.NewBatch()
	t, err := pb.Edit(context.Background(), tree, files)
	if err != nil {
		b.Fatal(err)
	}
	out, err := p.Submit(context.Background(), admit.Request{Route: "commit", Base: head, Tree: t, Batch: pb, Principal: who, Message: "declare types"})
	if err != nil {
		b.Fatal(err)
	}
	if !out.Admitted() {
		b.Fatalf("declarations not admitted: %s %v", out.Verdict, out.Findings)
	}
}

func headOf(b *testing.B, s *store.Store) (cairn.Hash, cairn.Hash) {
	b.Helper()
	h, err := s.Head(context.Background(), "main")
	if err != nil {
		b.Fatal(err)
	}
	c, err := s.ReadCommit(context.Background(), h)
	if err != nil {
		b.Fatal(err)
	}
	return h, c.Tree
}

func reportTimes(b *testing.B, times []time.Duration) {
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
}
