package vaultgen

import (
	"cmp"
	"slices"
	"strconv"
)

var indexSections = [numKinds]string{"Entities", "Concepts", "Source summaries", "Analyses"}

// index writes index.md, Eva's Home page: a section per page type listing
// up to Config.IndexLimit pages, the most popular first, each with a short
// description.
func (g *gen) index() {
	v := g.v
	var byKind [numKinds][]int32
	var counts [numKinds]int
	for i := range v.pages {
		counts[v.pages[i].kind]++
	}
	for _, i := range v.byPop[:min(len(v.byPop), v.cfg.IndexLimit)] {
		k := v.pages[i].kind
		byKind[k] = append(byKind[k], i)
	}

	b := append(g.buf[:0], "---\ntitle: Home\ntype: index\n---\n\n# Home\n\nThis vault holds "...)
	b = strconv.AppendInt(b, int64(len(v.pages)), 10)
	b = append(b, " pages: "...)
	for k, n := range counts {
		if k > 0 {
			b = append(b, ", "...)
		}
		if k == int(numKinds)-1 {
			b = append(b, "and "...)
		}
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ' ')
		b = append(b, kindFolders[k]...)
	}
	b = append(b, ". The lists below show the most linked pages of each kind.\n"...)

	r := &g.text
	lx := v.lex
	for k, pages := range byKind {
		b = append(b, "\n## "...)
		b = append(b, indexSections[k]...)
		b = append(b, "\n\n"...)
		slices.SortFunc(pages, func(x, y int32) int { return cmp.Compare(v.pages[x].title, v.pages[y].title) })
		for _, i := range pages {
			p := &v.pages[i]
			b = append(b, "- [["...)
			b = append(b, v.folder(int(i))...)
			b = append(b, '/')
			b = append(b, p.stem...)
			b = append(b, '|')
			b = append(b, p.title...)
			b = append(b, "]] — "...)
			r.seed(v.cfg.Seed, streamIndex, int(i), 0)
			b = lx.appendWord(b, lx.contentWord(r))
			for range r.between(2, 5) {
				b = append(b, ' ')
				b = lx.appendWord(b, lx.word(r))
			}
			b = append(b, '\n')
		}
	}
	g.buf = b
}

// log writes log.md in Eva's format: ingest entries for Config.LogEntries
// summaries spread over the vault, oldest first.
func (g *gen) log() {
	v := g.v
	n := min(v.cfg.LogEntries, len(v.summaries))
	picked := make([]int32, n)
	for k := range picked {
		picked[k] = v.summaries[k*len(v.summaries)/n]
	}
	slices.SortFunc(picked, func(x, y int32) int {
		return cmp.Or(cmp.Compare(v.pages[x].day, v.pages[y].day), cmp.Compare(x, y))
	})

	b := append(g.buf[:0], "# Log\n\nAppend-only history of ingests and saved answers. Entries read `## [YYYY-MM-DD] operation | subject`.\n"...)
	r := &g.text
	for _, i := range picked {
		p := &v.pages[i]
		r.seed(v.cfg.Seed, streamLog, int(i), 0)
		b = append(b, "\n## ["...)
		b = appendDate(b, p.day)
		b = append(b, "] ingest | "...)
		b = append(b, v.rawName(int(i))...)
		b = append(b, "\n\nSummarized the source in [["...)
		b = append(b, v.folder(int(i))...)
		b = append(b, '/')
		b = append(b, p.stem...)
		b = append(b, '|')
		b = append(b, p.title...)
		b = append(b, "]]; updated "...)
		b = strconv.AppendInt(b, int64(r.between(2, 6)), 10)
		b = append(b, " pages and created "...)
		b = strconv.AppendInt(b, int64(r.between(1, 4)), 10)
		b = append(b, ".\n"...)
	}
	g.buf = b
}

// raw writes the source that summary page i cites: a title, a dateline and
// a few paragraphs of plain prose, 0.6–2.5 KB.
func (g *gen) raw(i int) {
	v := g.v
	p := &v.pages[i]
	r := &g.plan
	r.seed(v.cfg.Seed, streamRaw, i, 0)
	b := append(g.buf[:0], "# "...)
	b = append(b, p.title...)
	b = append(b, "\n\nCaptured "...)
	b = appendDate(b, p.day)
	b = append(b, ".\n\n"...)
	g.buf = b
	for k := range r.between(2, 5) {
		g.text.seed(v.cfg.Seed, streamRaw, i, k+1)
		g.prose(para{budget: r.between(250, 500)}, nil)
	}
	g.buf = g.buf[:len(g.buf)-1]
}
