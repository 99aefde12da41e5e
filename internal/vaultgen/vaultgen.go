package vaultgen

import (
	"cmp"
	"iter"
	"slices"
	"strings"
	"sync"

	"cairn"
)

// MaxPages is the largest vault New generates.
const MaxPages = 10_000_000

// Config describes a vault. The zero value is a valid 1,000-page vault.
type Config struct {
	// Pages is the number of pages, not counting index.md and log.md; at
	// least 2 so that every page has another to link to. Default 1,000.
	Pages int

	// Seed selects one vault among many with the same shape. Default 1
	// (0 means the default, so seed 0 is the same vault as seed 1).
	Seed uint64

	// Flat puts every page in notes/ instead of the type folders entities/,
	// concepts/, summaries/ and analyses/. index.md and log.md stay at the
	// root and sources in raw/. Default false.
	Flat bool

	// Raw also generates the raw/ sources that summary pages cite in their
	// source field. Pages are the same bytes either way. Default false.
	Raw bool

	// IndexLimit is the most pages index.md lists, the most popular first.
	// Default 1,000, which keeps index.md under 100 KB.
	IndexLimit int

	// LogEntries is the number of ingest entries in log.md, at most one per
	// summary page. Default 36.
	LogEntries int
}

// Validate reports a config New cannot build, with code EINVALID.
func (c Config) Validate() error {
	const hint = "Leave a field zero for its default."
	switch {
	case c.Pages < 0 || c.Pages == 1 || c.Pages > MaxPages:
		return cairn.Errorf(cairn.EINVALID, "vaultgen: Pages is %d; want 2 to %d", c.Pages, MaxPages).WithHint(hint)
	case c.IndexLimit < 0:
		return cairn.Errorf(cairn.EINVALID, "vaultgen: IndexLimit is %d; want 0 or more", c.IndexLimit).WithHint(hint)
	case c.LogEntries < 0:
		return cairn.Errorf(cairn.EINVALID, "vaultgen: LogEntries is %d; want 0 or more", c.LogEntries).WithHint(hint)
	}
	return nil
}

func (c Config) withDefaults() Config {
	c.Pages = cmp.Or(c.Pages, 1000)
	c.Seed = cmp.Or(c.Seed, 1)
	c.IndexLimit = cmp.Or(c.IndexLimit, 1000)
	c.LogEntries = cmp.Or(c.LogEntries, 36)
	return c
}

// File is one file of a vault: a slash-separated vault-relative path and
// its contents.
type File struct {
	Path string
	Data []byte
}

// kind is a page type; each has its folder.
type kind uint8

const (
	entity kind = iota
	concept
	summary
	analysis
	numKinds
)

var (
	kindNames   = [numKinds]string{"entity", "concept", "summary", "analysis"}
	kindFolders = [numKinds]string{"entities", "concepts", "summaries", "analyses"}
	// kindShare is the share of pages of each type, in percent: an Eva brain
	// has a summary per source and several entities and concepts per summary.
	kindShare = [numKinds]int{40, 30, 20, 10}
	// kindPull scales how often pages of each type are link targets, in
	// percent: people link to entities and concepts far more than to
	// summaries and saved answers.
	kindPull = [numKinds]float64{100, 100, 25, 15}
)

// pageInfo is what New decides about each page; the rest of a page is
// generated when it is asked for.
type pageInfo struct {
	title   string // unique, case-insensitively, across titles and aliases
	stem    string // the lowercase kebab-case title, so unique too
	aliases []string
	day     int32 // the updated date, in days since 2023-01-01
	kind    kind
}

// Vault is a generated vault. New decides titles, types, dates and link
// popularity; file contents are generated on demand, so a Vault of 100k
// pages holds a few megabytes until its files are collected. All methods
// are safe for concurrent use.
type Vault struct {
	cfg       Config
	lex       *lexicon
	pages     []pageInfo
	pop       *sampler // link targets, popular pages first
	byPop     []int32  // page indices, most popular first
	summaries []int32  // the pages of type summary, in page order
	rawBytes  func() int64
}

// New generates the titles, types and link structure of the vault cfg
// describes. It panics if cfg is invalid (see Config.Validate): configs are
// constants in tests and benchmarks.
func New(cfg Config) *Vault {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	v := &Vault{cfg: cfg, lex: theLexicon(), pages: make([]pageInfo, cfg.Pages)}
	v.rawBytes = sync.OnceValue(v.countBytes)

	// Titles, types and dates, in page order. names holds the kebab-case
	// form of every title (its stem) and alias, so that none is reused.
	var r rng
	r.seed(cfg.Seed, streamTitles, 0, 0)
	names := make(map[string]bool, cfg.Pages+cfg.Pages/8)
	var words []int
	var b []byte
	for i := range v.pages {
		p := &v.pages[i]
		x := r.intn(100)
		for p.kind = entity; x >= kindShare[p.kind]; p.kind++ {
			x -= kindShare[p.kind]
		}
		for {
			words = v.titleWords(&r, p.kind, words[:0])
			b = b[:0]
			for k, w := range words {
				if k > 0 {
					b = append(b, '-')
				}
				b = v.lex.appendWord(b, w)
			}
			if !names[string(b)] {
				break
			}
		}
		p.stem = string(b)
		names[p.stem] = true
		for k := range b {
			if b[k] == '-' {
				b[k] = ' '
			} else if k == 0 || b[k-1] == ' ' {
				b[k] -= 'a' - 'A'
			}
		}
		p.title = string(b)
		p.day = int32(r.intn(dateSpan))
		if p.kind == summary {
			v.summaries = append(v.summaries, int32(i))
		}
	}
	for i := range v.pages {
		if r.percent(12) {
			v.pages[i].aliases = v.makeAliases(&r, v.pages[i].title, names)
		}
	}

	// Popularity: a random rank per page (a shuffle), Zipf weights over
	// ranks, scaled by type.
	r.seed(cfg.Seed, streamPopularity, 0, 0)
	v.byPop = make([]int32, cfg.Pages)
	for i := range v.byPop {
		j := r.intn(i + 1)
		v.byPop[i] = v.byPop[j]
		v.byPop[j] = int32(i)
	}
	weights := make([]float64, cfg.Pages)
	for rank, i := range v.byPop {
		weights[i] = float64(powNeg(rank+1, 1) * kindPull[v.pages[i].kind])
	}
	v.pop = newSampler(weights)
	slices.SortStableFunc(v.byPop, func(i, j int32) int { return cmp.Compare(weights[j], weights[i]) })
	return v
}

// titleWords draws the words of a title: 2–3 for entities (names), up to 5
// for summaries and analyses, never the same word twice.
func (v *Vault) titleWords(r *rng, k kind, dst []int) []int {
	n := 2
	switch k {
	case entity:
		n = r.between(2, 3)
	case concept:
		n = r.between(2, 4)
	default:
		n = r.between(3, 5)
	}
	for len(dst) < n {
		if w := v.lex.contentWord(r); !slices.Contains(dst, w) {
			dst = append(dst, w)
		}
	}
	return dst
}

// makeAliases returns one or two aliases for title that no other page uses
// as title or alias: its acronym, its last word, or its first two words.
// Stems always contain a hyphen and aliases never do, so aliases cannot
// collide with stems either. An acronym that YAML 1.1 reads as a boolean or
// null ("YES", "NULL") is skipped.
func (v *Vault) makeAliases(r *rng, title string, names map[string]bool) []string {
	words := strings.Fields(title)
	var out []string
	n := r.between(1, 2)
	for try := 0; try < 4 && len(out) < n; try++ {
		var a string
		switch r.intn(3) {
		case 0:
			if len(words) < 3 {
				continue
			}
			var b strings.Builder
			for _, w := range words {
				b.WriteByte(w[0])
			}
			a = b.String()
		case 1:
			a = words[len(words)-1]
		default:
			if len(words) < 3 {
				continue
			}
			a = words[0] + " " + words[1]
		}
		key := strings.ToLower(strings.ReplaceAll(a, " ", "-"))
		if !names[key] && !slices.Contains(yamlWords[:], key) {
			names[key] = true
			out = append(out, a)
		}
	}
	return out
}

// Len returns the number of pages.
func (v *Vault) Len() int { return len(v.pages) }

// Path returns the vault-relative path of page i, such as
// "entities/varo-kentila.md".
func (v *Vault) Path(i int) string {
	return v.folder(i) + "/" + v.pages[i].stem + ".md"
}

func (v *Vault) folder(i int) string {
	if v.cfg.Flat {
		return "notes"
	}
	return kindFolders[v.pages[i].kind]
}

// rawName returns the file name under raw/ of the source summary page i
// cites: the ingest date and the summary's stem.
func (v *Vault) rawName(i int) string {
	return string(appendDate(nil, v.pages[i].day)) + "-" + v.pages[i].stem + ".md"
}

// Titles returns the title of every page, in page order.
func (v *Vault) Titles() []string {
	out := make([]string, len(v.pages))
	for i := range v.pages {
		out[i] = v.pages[i].title
	}
	return out
}

// Vocabulary returns the words pages are written in, most frequent first:
// VocabularySize distinct lowercase ASCII words of 2 to 12 letters (and
// "a"), the same for every config.
func (v *Vault) Vocabulary() []string { return slices.Clone(v.lex.words) }

// numFiles returns the number of files Files yields.
func (v *Vault) numFiles() int {
	n := 2 + len(v.pages)
	if v.cfg.Raw {
		n += len(v.summaries)
	}
	return n
}

// Files returns every file of the vault, generated as it is asked for, in
// this order: index.md, log.md, the pages in page order, then (with
// Config.Raw) the raw/ sources in the order of the summaries that cite them.
// Each File owns its Data. Files generates on the calling goroutine; All is
// faster where the whole vault fits in memory.
func (v *Vault) Files() iter.Seq[File] {
	return func(yield func(File) bool) {
		g := v.newGen()
		for k := range v.numFiles() {
			path := g.render(k)
			if !yield(File{Path: path, Data: slices.Clone(g.buf)}) {
				return
			}
		}
	}
}

// Page returns page i, 0 ≤ i < Len(), without generating the others. It
// panics if i is out of range.
func (v *Vault) Page(i int) File {
	return v.Edit(i, 0)
}

// Edit returns page i as it reads after revision rev, rev ≥ 0, of a small
// realistic edit: half the time one paragraph is rewritten (its links kept),
// otherwise a link or a tag is added; the updated date moves on by rev days
// (modulo ten years).
// Edits do not accumulate: each revision is one edit of the original page,
// so any sequence of revisions gives a stream of one-page changes of
// realistic size. Edit(i, 0) is Page(i). It panics if i or rev is out of
// range.
func (v *Vault) Edit(i, rev int) File {
	if i < 0 || i >= len(v.pages) || rev < 0 {
		panic("vaultgen: page or revision out of range")
	}
	g := v.newGen()
	g.page(i, rev)
	return File{Path: v.Path(i), Data: slices.Clone(g.buf)}
}

// Queries returns n search queries of 1 to 3 lowercase words taken, in
// order, from the titles of pages picked uniformly; the same (n, seed) gives
// the same queries.
func (v *Vault) Queries(n int, seed uint64) []string {
	var r rng
	r.seed(v.cfg.Seed+0x9e3779b97f4a7c15*mix(seed), streamQueries, 0, 0)
	out := make([]string, n)
	var b strings.Builder
	for q := range out {
		words := strings.Split(v.pages[r.intn(len(v.pages))].stem, "-")
		k := 1
		if x := r.intn(100); x >= 80 {
			k = 3
		} else if x >= 45 {
			k = 2
		}
		k = min(k, len(words))
		// Selection sampling: k of the words, in title order.
		b.Reset()
		for j, w := range words {
			if r.intn(len(words)-j) < k {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(w)
				k--
			}
		}
		out[q] = b.String()
	}
	return out
}

// FrequentQueries returns n search queries of one to three words of which
// at least one is among the top title words of the vault (the words that
// occur in the most titles), the others taken from one page's title in
// title order: the harder mix, whose frequent words match many pages.
// Deterministic for a vault and a seed.
func (v *Vault) FrequentQueries(n int, seed uint64) []string {
	const top = 20
	count := map[string]int{}
	for _, p := range v.pages {
		for _, w := range strings.Split(p.stem, "-") {
			count[w]++
		}
	}
	words := make([]string, 0, len(count))
	for w := range count {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	frequent := words[:min(top, len(words))]
	var r rng
	r.seed(v.cfg.Seed+0x9e3779b97f4a7c15*mix(seed), streamQueries, 1, 0)
	out := make([]string, n)
	for q := range out {
		terms := []string{frequent[r.intn(len(frequent))]}
		if x := r.intn(100); x >= 30 {
			title := strings.Split(v.pages[r.intn(len(v.pages))].stem, "-")
			terms = append(terms, title[r.intn(len(title))])
			if x >= 75 {
				terms = append(terms, frequent[r.intn(len(frequent))])
			}
		}
		out[q] = strings.Join(terms, " ")
	}
	return out
}

// PrefixQueries returns n search queries that end in a prefix term: the
// first one to three letters of a word of a page's title followed by "*",
// alone or after a word of another page's title, as a user types a query.
// A prefix of one or two letters starts hundreds or thousands of the
// vocabulary's words. Deterministic for a vault and a seed.
func (v *Vault) PrefixQueries(n int, seed uint64) []string {
	var r rng
	r.seed(v.cfg.Seed+0x9e3779b97f4a7c15*mix(seed), streamQueries, 2, 0)
	word := func() string {
		title := strings.Split(v.pages[r.intn(len(v.pages))].stem, "-")
		return title[r.intn(len(title))]
	}
	out := make([]string, n)
	for q := range out {
		w := []rune(word())
		prefix := string(w[:min(1+r.intn(3), len(w))]) + "*"
		if r.intn(2) == 1 {
			prefix = word() + " " + prefix
		}
		out[q] = prefix
	}
	return out
}

// RawBytes returns the total size of all files Files yields. The first call
// generates the whole vault (in parallel); later calls return the result.
func (v *Vault) RawBytes() int64 { return v.rawBytes() }
