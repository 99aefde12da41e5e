package markdown_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn/markdown"
)

// typicalPage is about 2 KB: frontmatter in the common form, headings, a
// list, a code fence, five links.
var typicalPage = []byte(`---
title: Attention Is All You Need
type: summary
source: raw/attention.pdf
updated: 2024-03-01
aliases: [Transformer paper, Vaswani 2017]
tags:
  - ml
  - nlp
---
# Attention Is All You Need

The paper introduces the [[Transformer]], an architecture based solely on
attention mechanisms, dispensing with recurrence and convolutions entirely.
Experiments on two machine translation tasks show these models to be superior
in quality while being more parallelizable and requiring significantly less
time to train.

## Key ideas

- Scaled dot-product attention and [[multi-head attention|multi-head]] let the
  model attend to information from different representation subspaces.
- Positional encodings inject order information; see [[Positional encoding#Sinusoids]].
- The encoder and decoder stacks each have six identical layers. ^stacks

` + "```python" + `
def attention(q, k, v):
    return softmax(q @ k.T / sqrt(d)) @ v  # [[not a link]]
` + "```" + `

## Results

The model reaches 28.4 BLEU on the WMT 2014 English-to-German translation
task, improving over the existing best results, including ensembles, by over
2 BLEU. On English-to-French it establishes a new single-model state of the
art BLEU score of 41.8 after training for 3.5 days on eight GPUs, a small
fraction of the training costs of the best models from the literature. See
the [original paper](../raw/attention.pdf) and ![[architecture.png]] for the
full picture. The ` + "`inline [[code]]`" + ` is not a link either.

## Notes

It generalizes well to other tasks, applied successfully to English
constituency parsing both with large and limited training data. Later work
built encoder-only and decoder-only models on the same blocks, which now
dominate natural language processing and increasingly vision and speech.
`)

func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(typicalPage)))
	b.ReportAllocs()
	for b.Loop() {
		markdown.Parse("summaries/attention.md", typicalPage)
	}
}

func BenchmarkPlainText(b *testing.B) {
	b.SetBytes(int64(len(typicalPage)))
	b.ReportAllocs()
	for b.Loop() {
		markdown.PlainText(typicalPage)
	}
}

// BenchmarkParseSlowYAML parses a page whose frontmatter needs yaml.v3.
func BenchmarkParseSlowYAML(b *testing.B) {
	src := []byte(strings.Replace(string(typicalPage), "type: summary", "type: summary # a comment\nnested:\n  a: 1", 1))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		markdown.Parse("summaries/attention.md", src)
	}
}

// BenchmarkResolver builds a Resolver of a generated vault of 100k pages
// a page at a time, as a full index build does (AddPageKeys), and
// resolves every link of the vault: it reports the heap the resolver
// holds a file and the time of a link's resolution.
func BenchmarkResolver(b *testing.B) {
	pages, attachments, _ := generatedVault(b, 100_000)
	var links []markdown.Link
	var from []*markdown.Page
	for _, p := range pages {
		for _, l := range p.Links {
			links, from = append(links, l), append(from, p)
		}
	}
	paths := make([]string, 0, len(pages)+len(attachments))
	for _, p := range pages {
		paths = append(paths, p.Path)
	}
	paths = append(paths, attachments...)
	var resolved int
	b.ResetTimer()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rb := markdown.NewResolverBuilder(slices.Clone(paths))
		for _, p := range pages {
			rb.AddPageKeys(p)
		}
		for _, a := range attachments {
			rb.AddAttachment(a)
		}
		r := rb.Resolver()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(paths)), "heap-B/file")
		start := time.Now()
		resolved = 0
		for i, l := range links {
			if r.Resolve(from[i], l).Status == markdown.StatusResolved {
				resolved++
			}
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(len(links)), "ns/link")
		runtime.KeepAlive(r)
	}
	if resolved < len(links)/2 {
		b.Fatalf("%d of %d links resolved", resolved, len(links))
	}
}

// BenchmarkResolverSharedName builds a Resolver of 80k pages that share
// one name (index.md in a folder each) and resolves a link to that name
// from a hundred of them, and from a folder that holds none (the shortest
// of all 80k, which the resolver keeps): a key of many files costs its
// files once each to build.
func BenchmarkResolverSharedName(b *testing.B) {
	const n = 80_000
	pages := make([]*markdown.Page, n)
	paths := make([]string, n)
	for i := range pages {
		paths[i] = fmt.Sprintf("d%05d/index.md", i)
		pages[i] = markdown.Parse(paths[i], []byte("# Overview\n\n[[index]] and [[Overview]]\n"))
	}
	elsewhere := markdown.Parse("notes/n.md", []byte("[[index]]\n"))
	var build, resolve, away time.Duration
	for range b.N {
		start := time.Now()
		rb := markdown.NewResolverBuilder(slices.Clone(paths))
		for _, p := range pages {
			rb.AddPageKeys(p)
		}
		r := rb.Resolver()
		build += time.Since(start)
		start = time.Now()
		for _, p := range pages[:100] {
			for _, l := range p.Links {
				if res := r.Resolve(p, l); res.Status == markdown.StatusBroken {
					b.Fatalf("%s → %s: broken", p.Path, l.Raw)
				}
			}
		}
		resolve += time.Since(start)
		// From a folder that holds no index.md: the shortest of them all.
		start = time.Now()
		for range 100 {
			if res := r.Resolve(elsewhere, elsewhere.Links[0]); res.Path != "d00000/index.md" {
				b.Fatalf("from %s: %+v", elsewhere.Path, res)
			}
		}
		away += time.Since(start)
	}
	b.ReportMetric(float64(build.Milliseconds())/float64(b.N), "build-ms")
	b.ReportMetric(float64(resolve.Microseconds())/float64(b.N*200), "µs/link")
	b.ReportMetric(float64(away.Microseconds())/float64(b.N*100), "µs/link-elsewhere")
}
