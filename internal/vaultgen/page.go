package vaultgen

import (
	"math/bits"
	"slices"
	"time"
)

// Dates run from 2023-01-01 over dateSpan days (to mid-2026).
const (
	epochDay = 19358 // 2023-01-01, in days since 1970-01-01
	dateSpan = 1277
)

func appendDate(b []byte, day int32) []byte {
	return time.Unix((epochDay+int64(day))*86400, 0).UTC().AppendFormat(b, time.DateOnly)
}

// headingPool holds the usual section names of each page type; a quarter of
// headings are made-up phrases instead.
var headingPool = [numKinds][]string{
	entity:   {"Overview", "Background", "History", "Role", "Relationships", "Activities", "Timeline", "Notes", "Open questions", "Related"},
	concept:  {"Definition", "Overview", "Mechanism", "Examples", "History", "Variants", "Criticism", "Applications", "Related ideas", "Open questions"},
	summary:  {"Key points", "Claims", "Evidence", "Context", "Quotes", "Takeaways", "Methods", "Limitations", "Follow-ups"},
	analysis: {"Question", "Answer", "Method", "Evidence", "Comparison", "Caveats", "Conclusion", "Next steps"},
}

// headings returns the 2–4 section headings of page i, from a stream of
// their own so that links to a heading can name one without generating the
// target page.
func (v *Vault) headings(i int, dst []string) []string {
	var r rng
	r.seed(v.cfg.Seed, streamHeadings, i, 0)
	lx := v.lex
	pool := headingPool[v.pages[i].kind]
	n := r.between(2, 4)
	dst = dst[:0]
	for len(dst) < n {
		h := pool[r.intn(len(pool))]
		if r.percent(25) {
			h = lx.caps[lx.contentWord(&r)]
			if r.percent(40) {
				h += " " + functionWords[r.intn(len(functionWords))]
			}
			h += " " + lx.words[lx.contentWord(&r)]
		}
		if !slices.Contains(dst, h) {
			dst = append(dst, h)
		}
	}
	return dst
}

// linkForm is how a wikilink names its target.
type linkForm uint8

const (
	formPath      linkForm = iota // [[folder/stem]]
	formPathTitle                 // [[folder/stem|Title]], as Eva writes index entries
	formStem                      // [[stem]]
	formTitle                     // [[Title]]
	formLabel                     // [[stem|label]]
	formHeading                   // [[stem#Heading]]
	numForms
)

// formShare is the share of each form, in per mille.
var formShare = [numForms]int{150, 50, 300, 250, 150, 100}

type link struct {
	off     int // where in the page's prose the link goes, in bytes
	target  int32
	form    linkForm
	heading string   // formHeading: a heading of the target
	label   [3]int32 // formLabel: label words, or -1 for the lower-cased title
}

// para is one paragraph or bulleted list of a page body.
type para struct {
	start   int // offset of the paragraph in the page's prose, in bytes
	budget  int // its length in bytes, give or take a word
	section int // index into the headings; -1 for the lead paragraph
	list    bool
}

// Edit kinds.
const (
	editNone = iota
	editRewrite
	editLink
	editTag
)

// gen generates files. Each goroutine has its own; its buffers are reused
// from file to file.
type gen struct {
	v       *Vault
	plan    rng // the page's structure: sizes, tags, links
	text    rng // the words of one paragraph
	buf     []byte
	paras   []para
	links   []link
	tags    []int
	heads   []string
	scratch []string
}

func (v *Vault) newGen() *gen {
	return &gen{v: v, buf: make([]byte, 0, 8192)}
}

// render generates file k of the Files order into g.buf and returns its
// path.
func (g *gen) render(k int) string {
	v := g.v
	switch n := len(v.pages); {
	case k == 0:
		g.index()
		return "index.md"
	case k == 1:
		g.log()
		return "log.md"
	case k < n+2:
		g.page(k-2, 0)
		return v.Path(k - 2)
	default:
		i := int(v.summaries[k-n-2])
		g.raw(i)
		return "raw/" + v.rawName(i)
	}
}

// page generates page i at revision rev (0 for the original) into g.buf.
//
// Everything about the page is drawn from the plan stream first, the
// paragraphs' words from streams of their own, so that an edit can change
// one paragraph, add a link or add a tag and leave the rest byte for byte.
func (g *gen) page(i, rev int) {
	v, p := g.v, &g.plan
	info := &v.pages[i]
	p.seed(v.cfg.Seed, streamPlan, i, 0)

	// Body length: 1100 + 2700·x² bytes with x triangular on [0, 1), so
	// pages are 1–4 KB with frontmatter, ~2 KB on average, skewed long.
	x := uint64(p.intn(1<<16) + p.intn(1<<16))
	budget := 1100 + int(2700*x*x>>34)

	ntags := 0
	switch t := p.intn(100); {
	case t >= 90:
		ntags = 4
	case t >= 75:
		ntags = 3
	case t >= 45:
		ntags = 2
	case t >= 15:
		ntags = 1
	}
	g.tags = g.tags[:0]
	for len(g.tags) < ntags {
		g.addTag(p)
	}
	tagStyle := p.intn(100)
	hasCode := p.percent(5)

	edit, day := editNone, info.day
	var e rng
	if rev > 0 {
		e.seed(v.cfg.Seed, streamEdit, i, rev)
		switch x := e.intn(10); {
		case x < 5:
			edit = editRewrite
		case x < 8:
			edit = editLink
		default:
			edit = editTag
			g.addTag(&e)
		}
		day += 1 + int32((rev-1)%3650) // later, and within ten years
	}

	g.buf = g.buf[:0]
	g.frontmatter(i, day, tagStyle)
	g.buf = append(g.buf, "# "...)
	g.buf = append(g.buf, info.title...)
	g.buf = append(g.buf, "\n\n"...)

	g.heads = v.headings(i, g.heads)
	codeSection := g.planBody(i, budget, hasCode)
	rewrite := -1
	switch edit {
	case editRewrite:
		rewrite = e.intn(len(g.paras))
	case editLink:
		g.addLink(&e, i)
		slices.SortStableFunc(g.links, func(a, b link) int { return a.off - b.off })
	}
	g.body(i, rev, rewrite, codeSection)
}

// addTag adds a tag the page does not have yet.
func (g *gen) addTag(r *rng) {
	lx := g.v.lex
	for {
		t := lx.tagPick.draw(r.u64())
		if !slices.Contains(g.tags, t) {
			g.tags = append(g.tags, t)
			return
		}
	}
}

func (g *gen) frontmatter(i int, day int32, tagStyle int) {
	v := g.v
	info := &v.pages[i]
	b := append(g.buf, "---\ntitle: "...)
	b = append(b, info.title...)
	b = append(b, "\ntype: "...)
	b = append(b, kindNames[info.kind]...)
	if info.kind == summary {
		b = append(b, "\nsource: raw/"...)
		b = append(b, v.rawName(i)...)
	}
	switch {
	case len(g.tags) == 0 && tagStyle < 50:
		// no tags field
	case len(g.tags) == 0:
		b = append(b, "\ntags: []"...)
	case tagStyle < 70:
		b = append(b, "\ntags: ["...)
		for k, t := range g.tags {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = append(b, v.lex.tags[t]...)
		}
		b = append(b, ']')
	default:
		b = append(b, "\ntags:"...)
		for _, t := range g.tags {
			b = append(b, "\n  - "...)
			b = append(b, v.lex.tags[t]...)
		}
	}
	if len(info.aliases) > 0 {
		b = append(b, "\naliases:"...)
		for _, a := range info.aliases {
			b = append(b, "\n  - "...)
			b = append(b, a...)
		}
	}
	b = append(b, "\nupdated: "...)
	b = appendDate(b, day)
	b = append(b, "\n---\n\n"...)
	g.buf = b
}

// planBody lays out the body of page i: a lead paragraph, then for each
// section a few paragraphs of about budget bytes in all, maybe a bulleted
// list, and 3–7 links (5 on average) at random offsets. It returns the
// section that ends with a code block, or -1.
func (g *gen) planBody(i, budget int, hasCode bool) int {
	p := &g.plan
	ns := len(g.heads)
	codeSection, listSection := -1, -1
	if hasCode {
		codeSection = p.intn(ns)
		budget -= 150 // about the size of a code block
	}
	if p.percent(35) {
		listSection = p.intn(ns)
	}
	for _, h := range g.heads {
		budget -= len(h) + 5
	}
	lead := p.between(120, 320)
	rest := max(budget-lead, 200*ns)

	var weights [4]int
	total := 0
	for s := range ns {
		weights[s] = p.between(2, 5)
		total += weights[s]
	}
	g.paras = append(g.paras[:0], para{budget: lead, section: -1})
	for s := range ns {
		sb := rest * weights[s] / total
		lb := 0
		if s == listSection {
			lb = p.between(100, 300)
			sb = max(sb-lb, 100)
		}
		np := max(1, (sb+200)/420)
		for q := range np {
			pb := sb / np
			pb = pb*3/4 + p.intn(pb/2+1)
			g.paras = append(g.paras, para{budget: pb, section: s})
			if q == 0 && lb > 0 {
				g.paras = append(g.paras, para{budget: lb, section: s, list: true})
			}
		}
	}
	prose := 0
	for k := range g.paras {
		g.paras[k].start = prose
		prose += g.paras[k].budget
	}

	g.links = g.links[:0]
	for range 3 + bits.OnesCount64(p.u64()&0xf) {
		g.addLink(p, i)
	}
	slices.SortStableFunc(g.links, func(a, b link) int { return a.off - b.off })
	return codeSection
}

// addLink adds a link from page i to another page at a random place in its
// prose.
func (g *gen) addLink(r *rng, i int) {
	v := g.v
	last := g.paras[len(g.paras)-1]
	l := link{off: r.intn(last.start + last.budget), label: [3]int32{-1, -1, -1}}
	l.target = int32(g.target(r, i))
	x := r.intn(1000)
	for l.form = 0; x >= formShare[l.form]; l.form++ {
		x -= formShare[l.form]
	}
	switch l.form {
	case formHeading:
		g.scratch = v.headings(int(l.target), g.scratch)
		l.heading = g.scratch[r.intn(len(g.scratch))]
	case formLabel:
		if r.percent(40) {
			// A short phrase that ends in a content word: "the kroabro".
			n := r.between(1, 3)
			for k := range n - 1 {
				l.label[k] = int32(v.lex.word(r))
			}
			l.label[n-1] = int32(v.lex.contentWord(r))
		}
	}
	g.links = append(g.links, l)
}

// target picks the page a link from page i goes to: a popular page (45%),
// a page created around the same time (35%) or any page (20%); never page i
// itself, and rarely a page already linked.
func (g *gen) target(r *rng, i int) int {
	v := g.v
	n := len(v.pages)
	for try := 0; ; try++ {
		var j int
		switch x := r.intn(100); {
		case x < 45:
			j = v.pop.draw(r.u64())
		case x < 80:
			j = i + r.between(-48, 48)
		default:
			j = r.intn(n)
		}
		if j < 0 || j >= n || j == i {
			continue
		}
		if try < 8 && slices.ContainsFunc(g.links, func(l link) bool { return int(l.target) == j }) {
			continue
		}
		return j
	}
}

// body writes the planned paragraphs, headings, links and code block.
// Paragraph k's words come from stream (page, k), or from (page, rev) for
// the paragraph an edit rewrites.
func (g *gen) body(i, rev, rewrite, codeSection int) {
	v := g.v
	links := g.links
	for k, pa := range g.paras {
		if pa.section >= 0 && g.paras[k-1].section != pa.section {
			g.buf = append(g.buf, "## "...)
			g.buf = append(g.buf, g.heads[pa.section]...)
			g.buf = append(g.buf, "\n\n"...)
		}
		if k == rewrite {
			g.text.seed(v.cfg.Seed, streamRewrite, i, rev)
		} else {
			g.text.seed(v.cfg.Seed, streamText, i, k)
		}
		n := 0
		for n < len(links) && links[n].off < pa.start+pa.budget {
			n++
		}
		g.prose(pa, links[:n])
		links = links[n:]
		if codeSection >= 0 && pa.section == codeSection && (k+1 == len(g.paras) || g.paras[k+1].section != pa.section) {
			g.code(i)
		}
	}
	g.buf = g.buf[:len(g.buf)-1] // one newline at the end of the file
}

// prose writes a paragraph (or a bulleted list) of about pa.budget bytes of
// Zipf-distributed words in sentences, with links placed at their offsets,
// drawing from g.text.
func (g *gen) prose(pa para, links []link) {
	r, lx := &g.text, g.v.lex
	start := len(g.buf)
	if pa.list {
		g.buf = append(g.buf, "- "...)
	}
	left := g.sentenceLen(pa.list)
	words := 0 // in the current sentence
	inSentence, first := false, true
	for {
		// Stop at the budget, but not after a sentence of one or two
		// words.
		n := len(g.buf) - start
		if len(links) == 0 && n >= pa.budget && (words == 0 || words >= 3) {
			break
		}
		switch {
		case inSentence:
			g.buf = append(g.buf, ' ')
		case !first && pa.list:
			g.buf = append(g.buf, "\n- "...)
		case !first:
			g.buf = append(g.buf, ' ')
		}
		if len(links) > 0 && pa.start+n >= links[0].off {
			g.link(links[0])
			links = links[1:]
		} else {
			w := lx.word(r)
			aux := r.u64() // emphasis in bits 0–9, comma in 10–16
			switch x := aux & 1023; {
			case !inSentence:
				k := len(g.buf)
				g.buf = lx.appendWord(g.buf, w)
				g.buf[k] -= 'a' - 'A'
			case w < len(functionWords):
				g.buf = lx.appendWord(g.buf, w)
			case x < 8: // 0.8% of content words are bold,
				g.buf = append(g.buf, "**"...)
				g.buf = lx.appendWord(g.buf, w)
				g.buf = append(g.buf, "**"...)
			case x < 13: // 0.5% code
				g.buf = append(g.buf, '`')
				g.buf = lx.appendWord(g.buf, w)
				g.buf = append(g.buf, '`')
			default:
				g.buf = lx.appendWord(g.buf, w)
			}
			if left > 1 && aux>>10&127 < 9 { // 7%
				g.buf = append(g.buf, ',')
			}
		}
		inSentence, first = true, false
		words++
		if left--; left == 0 {
			g.endSentence(pa.list)
			inSentence, left, words = false, g.sentenceLen(pa.list), 0
		}
	}
	if inSentence {
		g.endSentence(pa.list)
	}
	g.buf = append(g.buf, "\n\n"...)
}

// sentenceLen draws the number of words in a sentence or list item.
func (g *gen) sentenceLen(list bool) int {
	if list {
		return g.text.between(2, 8)
	}
	return g.text.between(4, 22)
}

func (g *gen) endSentence(list bool) {
	r := &g.text
	if n := len(g.buf); g.buf[n-1] == ',' {
		g.buf = g.buf[:n-1]
	}
	switch x := r.intn(100); {
	case list && x < 50:
	case x < 4:
		g.buf = append(g.buf, '?')
	default:
		g.buf = append(g.buf, '.')
	}
}

func (g *gen) link(l link) {
	v := g.v
	t := &v.pages[l.target]
	b := append(g.buf, "[["...)
	switch l.form {
	case formPath, formPathTitle:
		b = append(b, v.folder(int(l.target))...)
		b = append(b, '/')
		b = append(b, t.stem...)
		if l.form == formPathTitle {
			b = append(b, '|')
			b = append(b, t.title...)
		}
	case formStem:
		b = append(b, t.stem...)
	case formTitle:
		b = append(b, t.title...)
	case formLabel:
		b = append(b, t.stem...)
		b = append(b, '|')
		if l.label[0] < 0 {
			for _, c := range []byte(t.title) {
				b = append(b, c|0x20) // ASCII letters and spaces only
			}
		}
		for k, w := range l.label {
			if w >= 0 {
				if k > 0 {
					b = append(b, ' ')
				}
				b = append(b, v.lex.words[w]...)
			}
		}
	case formHeading:
		b = append(b, t.stem...)
		b = append(b, '#')
		b = append(b, l.heading...)
	}
	g.buf = append(b, "]]"...)
}

// code writes a fenced code block of page i, from a stream of its own.
func (g *gen) code(i int) {
	v := g.v
	r, lx := &g.text, v.lex
	r.seed(v.cfg.Seed, streamCode, i, 0)
	id := func() string { return lx.words[lx.contentWord(r)] }
	b := g.buf
	lines := r.between(2, 6)
	switch r.intn(5) {
	case 0:
		b = append(b, "```go\nfunc "...)
		b = append(b, lx.caps[lx.contentWord(r)]...)
		b = append(b, "("+id()+" int) int {\n"...)
		for range lines {
			b = append(b, "\t"+id()+" := "+id()+"("+id()+")\n"...)
		}
		b = append(b, "\treturn "+id()+"\n}\n"...)
	case 1:
		b = append(b, "```python\ndef "+id()+"_"+id()+"("+id()+", "+id()+"):\n"...)
		for range lines {
			b = append(b, "    "+id()+" = "+id()+"."+id()+"("+id()+")\n"...)
		}
		b = append(b, "    return "+id()+"\n"...)
	case 2:
		b = append(b, "```sh\n"...)
		for range lines {
			b = append(b, "cairn "+id()+" --"+id()+" "+id()+"/"+id()+".md\n"...)
		}
	case 3:
		b = append(b, "```yaml\n"+id()+":\n"...)
		for range lines {
			b = append(b, "  "+id()+": "+id()+"\n"...)
		}
	default:
		b = append(b, "```json\n{\n"...)
		for k := range lines {
			b = append(b, "  \""+id()+"\": \""+id()+"\""...)
			if k < lines-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, "}\n"...)
	}
	g.buf = append(b, "```\n\n"...)
}
