package markdown

import (
	"slices"
	"strconv"
	"strings"
)

// Step is one step of link resolution. A link looks its target up step by
// step, in the order below; the first step where any file answers decides.
// One file resolves the link. Several files at StepSuffix or StepStem (the
// steps that match file names) are told apart as Obsidian does: the one in
// the linking page's own folder (not an ancestor's), else the shortest
// path, the first in byte order among equally short ones (see Match).
// Several files at any other step make the link ambiguous, never silently
// the first. All matching is on folded text (Unicode full case folding and
// NFC, as cairn.FoldPath), so it ignores case.
type Step int

// Resolution steps, in the order they are tried.
const (
	// StepFile: a path the link spells out — a Markdown destination or a
	// "./", "../" or "/" wikilink — resolved against the linking page's
	// folder or the vault root; "x" also finds "x.md".
	StepFile Step = iota + 1
	// StepPath: a page's id, or its path without ".md"; an attachment's
	// path.
	StepPath
	// StepSuffix: trailing whole segments of a path, two or more:
	// "sub/note" finds "a/sub/note.md" but "b/note" does not find
	// "a/sub/note.md" and "ub/note" finds nothing.
	StepSuffix
	// StepStem: a page's file name without ".md", an attachment's file
	// name with its extension ("diagram.png").
	StepStem
	// StepTitle: a page's title from its frontmatter or its first
	// heading (a title from the file name is its stem already).
	StepTitle
	// StepAlias: one of a page's aliases.
	StepAlias
)

var stepNames = [...]string{"none", "file", "path", "suffix", "stem", "title", "alias"}

// String returns the step's name: file, path, suffix, stem, title, alias;
// "none" for 0, the step of a broken or same-page link.
func (s Step) String() string {
	if s >= 0 && int(s) < len(stepNames) {
		return stepNames[s]
	}
	return "step(" + itoa(int(s)) + ")"
}

// Key is one thing a file answers to, or a link looks up, at one step:
// Value is folded text. The incremental index stores a page's keys (key →
// file rows) and each link's lookup keys (link → key rows): when a key
// gains or loses a file, exactly the links that look it up may resolve
// differently.
type Key struct {
	Step  Step   `json:"step"`
	Value string `json:"value"`
}

// ResolutionKeys returns the keys page p answers to: its folded path
// (StepFile); its id and its path without ".md" (StepPath); each trailing
// run of two or more path segments short of the whole (StepSuffix); its
// file name without ".md" (StepStem); its title unless it comes from the
// file name (StepTitle); its aliases (StepAlias). No key repeats.
func ResolutionKeys(p *Page) []Key {
	path := fold(p.Path)
	noExt := trimMD(path)
	keys := []Key{{StepFile, path}, {StepPath, fold(p.ID)}}
	if noExt != keys[1].Value {
		keys = append(keys, Key{StepPath, noExt})
	}
	keys = appendSuffixKeys(keys, noExt)
	if p.TitleSource != TitleFromFilename && p.Title != "" {
		keys = append(keys, Key{StepTitle, fold(p.Title)})
	}
	for _, a := range p.Aliases {
		k := Key{StepAlias, fold(a)}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// AttachmentKeys returns the keys an attachment (any file that is not a
// page) answers to: its folded path at StepFile and StepPath, its trailing
// segments at StepSuffix, its file name with extension at StepStem.
func AttachmentKeys(path string) []Key {
	path = fold(path)
	return appendSuffixKeys([]Key{{StepFile, path}, {StepPath, path}}, path)
}

// appendSuffixKeys adds the StepSuffix and StepStem keys of path.
func appendSuffixKeys(keys []Key, path string) []Key {
	last := strings.LastIndexByte(path, '/')
	for i := 0; i < last; i++ {
		if path[i] == '/' {
			keys = append(keys, Key{StepSuffix, path[i+1:]})
		}
	}
	return append(keys, Key{StepStem, path[last+1:]})
}

// LookupKeys returns the keys link l looks up, in step order; several keys
// of one step are alternatives (StepFile tries "x" and "x.md").
//
//   - A same-page link ("[[#h]]", "[x](#h)") and a path escaping the vault
//     look up nothing.
//   - A wikilink, embed or frontmatter link spelling a path ("./", "../",
//     "/") looks up that file only.
//   - Any other wikilink looks its Target up at StepPath, then StepSuffix
//     (a target with '/') or StepStem (one without), StepTitle, StepAlias.
//   - A Markdown link looks up the file its destination names relative to
//     the page (CommonMark's and GitHub's reading); unless the destination
//     starts with "./", "../" or "/", it then falls back to StepPath,
//     StepSuffix or StepStem with its Target, because Obsidian resolves
//     Markdown destinations like wikilinks, vault-wide ("Sub/My%20Note.md"
//     written in "Sub/x.md" means "Sub/My Note.md"). A Markdown link names
//     a file, never a title or alias.
func LookupKeys(l Link) []Key {
	if l.Escapes || l.SamePage() {
		return nil
	}
	var keys []Key
	if l.Path != "" {
		p := fold(l.Path)
		keys = append(keys, Key{StepFile, p})
		if trimMD(p) == p {
			keys = append(keys, Key{StepFile, p + ".md"})
		}
	}
	if isExplicitPath(l.Target) || l.Target == "" {
		return keys
	}
	t := fold(l.Target)
	keys = append(keys, Key{StepPath, t})
	if strings.Contains(t, "/") {
		keys = append(keys, Key{StepSuffix, t})
	} else {
		keys = append(keys, Key{StepStem, t})
	}
	if l.Kind != LinkMarkdown {
		keys = append(keys, Key{StepTitle, t}, Key{StepAlias, t})
	}
	return keys
}

// Status is the outcome of resolving a link.
type Status string

// Statuses.
const (
	StatusResolved  Status = "resolved"  // exactly one file answered first
	StatusBroken    Status = "broken"    // no file answers any key
	StatusAmbiguous Status = "ambiguous" // several files answered at the deciding step
)

// Resolution is where a link leads.
type Resolution struct {
	Status Status `json:"status"`
	// Path is the file the link leads to, when resolved; for a same-page
	// link, the linking page.
	Path string `json:"path,omitempty"`
	// Step is the step that decided (0 for broken and same-page links).
	Step Step `json:"step,omitempty"`
	// Candidates are the files that answered at the deciding step, sorted:
	// those an ambiguous link could mean, or those the shortest-path rule
	// chose Path among (see Match), Path included. Nil when one file
	// answered, or the linking page's folder held the one. At most
	// MaxCandidates are listed; MoreCandidates counts the others.
	Candidates     []string `json:"candidates,omitempty"`
	MoreCandidates int      `json:"more_candidates,omitempty"`
	// SamePage marks "[[#heading]]" and "[x](#heading)" links.
	SamePage bool `json:"same_page,omitempty"`
	// MissingHeading and MissingBlock mark a resolved link to a page that
	// has no such heading or block id (lint warns). Attachments are not
	// checked: "#page=3" in a PDF link is no heading.
	MissingHeading bool `json:"missing_heading,omitempty"`
	MissingBlock   bool `json:"missing_block,omitempty"`
}

// MaxCandidates is the most candidates a resolution lists, and the most
// files ListPaths names. A name that many files share (an index.md in
// every folder, a template's title) answers a link with all of them, and
// each such link or page, kept with its candidates in the index and
// lint's findings, cost their paths: 1,500 namesakes linked from 1,500
// pages made a 217 MB index of a 3,000-file vault and 101 MB of lint;
// 1,500 pages of one title, alias and id, 233 MB and 77 MB.
const MaxCandidates = 10

// CandidateList is the resolution's candidates for a person (ListPaths).
func (r Resolution) CandidateList() string { return ListPaths(r.Candidates, r.MoreCandidates) }

// ListPaths words paths for a person, as lint's findings and the CLI name
// the files a name could mean: the first MaxCandidates of them, then how
// many more there are (those past MaxCandidates, and more, the count of
// others not in paths).
func ListPaths(paths []string, more int) string {
	if len(paths) > MaxCandidates {
		paths, more = paths[:MaxCandidates], more+len(paths)-MaxCandidates
	}
	list := strings.Join(paths, ", ")
	if more > 0 {
		list += " and " + strconv.Itoa(more) + " more"
	}
	return list
}

// withCandidates returns r with found (sorted, unique) as its candidates,
// cut to MaxCandidates; r.Path, when set, stays among them.
func (r Resolution) withCandidates(found []string) Resolution {
	if len(found) <= MaxCandidates {
		r.Candidates = found
		return r
	}
	r.Candidates = slices.Clip(found[:MaxCandidates])
	if r.Path != "" && !slices.Contains(r.Candidates, r.Path) {
		// Path sorts after the first MaxCandidates: it takes the last place.
		r.Candidates = append(slices.Clone(found[:MaxCandidates-1]), r.Path)
	}
	r.MoreCandidates = len(found) - len(r.Candidates)
	return r
}

// Chosen reports whether the shortest-path rule picked the link's file
// among several: Obsidian follows the link there, but the name alone does
// not say which file is meant (lint notes it).
func (r Resolution) Chosen() bool { return r.Status == StatusResolved && len(r.Candidates) > 1 }

// Match applies the resolution rule to the lookup keys of a link written
// in the page at path from ("" for a reference with no linking page):
// holders returns the files (paths) answering one key. The first step at
// which any key has holders decides. At StepSuffix and StepStem, several
// holders are narrowed as Obsidian 1.13.7's getFirstLinkpathDest narrows
// them (an exact path is StepPath, already tried): to those in from's
// folder, when any are; then to the shortest path, counted in UTF-16 code
// units as Obsidian counts it; then to the first in byte order, a
// deterministic pick where Obsidian's is not stable. holders must return
// each file once, sorted; the result's Candidates may be what it returned.
// Match is exported so the incremental index, which keeps holders in SQL,
// decides exactly as Resolver does.
func Match(from string, keys []Key, holders func(Key) []string) Resolution {
	return match(from, keys, holders, nil)
}

// match is Match, where shortest, when not nil, returns the shortest
// path of the files answering a key several answer (as nearest would find
// it among them), or "" when it does not know it.
func match(from string, keys []Key, holders func(Key) []string, shortest func(Key) string) Resolution {
	for i := 0; i < len(keys); {
		step := keys[i].Step
		j := i + 1
		for j < len(keys) && keys[j].Step == step {
			j++
		}
		found := holders(keys[i])
		// One key's holders are sorted already; several keys' are merged.
		// (A copy and a sort of a key's holders on every lookup cost some
		// 3 ms a link to a name 80k files share.)
		if j > i+1 {
			found = slices.Clone(found)
			for _, k := range keys[i+1 : j] {
				found = append(found, holders(k)...)
			}
			slices.Sort(found)
			found = slices.Compact(found)
		}
		key := keys[i]
		i = j
		switch {
		case len(found) == 0:
			continue
		case len(found) == 1:
			return Resolution{Status: StatusResolved, Path: found[0], Step: step}
		case step == StepSuffix || step == StepStem: // one key each (LookupKeys)
			return nearest(from, key, found, shortest)
		}
		return Resolution{Status: StatusAmbiguous, Step: step}.withCandidates(found)
	}
	return Resolution{Status: StatusBroken}
}

// nearest picks among several files sharing a name (sorted, unique), the
// holders of key, for a link written in the page at path from: the one in
// from's folder, else the shortest path, the first in byte order among
// equally short ones (which shortest, when not nil, may know: see match).
func nearest(from string, key Key, found []string, shortest func(Key) string) Resolution {
	step := key.Step
	dir := from[:strings.LastIndexByte(from, '/')+1]
	// The files under dir are one run of found (sorted): those directly in
	// it are looked for there.
	lo, _ := slices.BinarySearch(found, dir)
	var own []string
	for _, p := range found[lo:] {
		if !strings.HasPrefix(p, dir) {
			break
		}
		if strings.LastIndexByte(p, '/')+1 == len(dir) {
			own = append(own, p)
		}
	}
	switch len(own) {
	case 1:
		return Resolution{Status: StatusResolved, Path: own[0], Step: step}
	case 0:
		if shortest != nil {
			if p := shortest(key); p != "" {
				return Resolution{Status: StatusResolved, Path: p, Step: step}.withCandidates(found)
			}
		}
		own = found
	}
	return Resolution{Status: StatusResolved, Path: shortestOf(own), Step: step}.withCandidates(own)
}

// shortestOf returns the shortest of paths (sorted, not empty) in UTF-16
// code units, the first in byte order among equally short ones.
func shortestOf(paths []string) string {
	best, bestLen := paths[0], utf16Len(paths[0])
	for _, p := range paths[1:] {
		if n := utf16Len(p); n < bestLen {
			best, bestLen = p, n
		}
	}
	return best
}

// utf16Len is the length of s in UTF-16 code units, JavaScript's length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// Resolver resolves links within one vault, in memory: full index builds,
// lint, and the oracle the incremental index is tested against. It is
// immutable, so safe for concurrent use.
//
// It holds what resolving needs of each file and no page: the keys each
// answers to, and a page's headings and block ids, packed in one string
// (unless its caller keeps those: AddPageKeys). A full index build holds
// one for the whole vault.
type Resolver struct {
	files []string // every file's path, sorted, unique
	keys  keyTable // the keys, by their digests, with the files' places
	// many holds the paths of the files of each key several answer to,
	// sorted, by the keys' lists (keyTable.lookup); short, the shortest of
	// each list (shortestOf): a link to a name N files share from a folder
	// holding none of them would otherwise scan all N.
	many  [][]string
	short []string
	// frags holds, for each of files, its headings and block ids
	// (PackFragments) when it is a page added with AddPage, "" when it is
	// an attachment or was added with AddPageKeys; nil until a page is
	// added with AddPage.
	frags []string
}

// NewResolver indexes the vault's pages and attachments (the paths of its
// other files). Paths should be unique; an attachment path that is also a
// page's is ignored. The result does not depend on the order of either
// slice.
func NewResolver(pages []*Page, attachments []string) *Resolver {
	byPath := make(map[string]*Page, len(pages))
	for _, p := range pages {
		if q, dup := byPath[p.Path]; dup && q.ID <= p.ID {
			continue // keep one page per path, whatever the order
		}
		byPath[p.Path] = p
	}
	files := make([]string, 0, len(byPath)+len(attachments))
	for path := range byPath {
		files = append(files, path)
	}
	files = append(files, attachments...)
	b := NewResolverBuilder(files)
	for _, p := range byPath {
		b.AddPage(p)
	}
	for _, a := range attachments {
		if _, isPage := byPath[a]; !isPage {
			b.AddAttachment(a)
		}
	}
	return b.Resolver()
}

// A ResolverBuilder makes a Resolver one file at a time, keeping only what
// resolving needs of each page, so that a caller reading a whole vault
// need not hold its pages. Files must be added at most once each.
type ResolverBuilder struct {
	r *Resolver
}

// NewResolverBuilder starts a Resolver of the files at paths (every page's
// and attachment's that will be added; duplicates are ignored). It sorts
// paths in place and keeps it.
func NewResolverBuilder(paths []string) *ResolverBuilder {
	slices.Sort(paths)
	files := slices.Compact(paths)
	// Every file has a key at StepFile, StepPath and StepStem, most pages
	// a title too.
	return &ResolverBuilder{r: &Resolver{files: files, keys: newKeyTable(4 * len(files))}}
}

// AddPage adds page p, whose path is one of those the builder was made
// with; nothing of p is kept after it returns.
func (b *ResolverBuilder) AddPage(p *Page) {
	if i, ok := b.addPage(p); ok {
		if b.r.frags == nil {
			b.r.frags = make([]string, len(b.r.files))
		}
		b.r.frags[i] = PackFragments(p)
	}
}

// AddPageKeys adds page p as AddPage does but keeps only the keys it
// answers to, not its headings and block ids: the Resolver then leaves a
// link's fragment to its caller (see Resolve), which keeps them where it
// chooses (a full index build, on disk).
func (b *ResolverBuilder) AddPageKeys(p *Page) { b.addPage(p) }

// addPage files page p under its keys, and returns its place in files.
func (b *ResolverBuilder) addPage(p *Page) (int, bool) {
	i, ok := slices.BinarySearch(b.r.files, p.Path)
	if !ok {
		return 0, false
	}
	// The keys are filed by their digests: nothing of p is kept.
	for _, k := range ResolutionKeys(p) {
		b.add(k, i)
	}
	return i, true
}

// AddAttachment adds the file at path, one of those the builder was made
// with, as an attachment.
func (b *ResolverBuilder) AddAttachment(path string) {
	i, ok := slices.BinarySearch(b.r.files, path)
	if !ok {
		return
	}
	for _, k := range AttachmentKeys(b.r.files[i]) {
		b.add(k, i)
	}
}

// add files the file at i under key k.
func (b *ResolverBuilder) add(k Key, i int) {
	if k.Step >= StepFile && k.Step <= StepAlias {
		b.r.keys.add(k, i)
	}
}

// Resolver returns the resolver made; the builder must not be used after.
func (b *ResolverBuilder) Resolver() *Resolver {
	r := b.r
	r.keys.done()
	r.many = make([][]string, len(r.keys.many))
	r.short = make([]string, len(r.keys.many))
	for i, m := range r.keys.many {
		r.many[i] = make([]string, len(m))
		for j, f := range m {
			r.many[i][j] = r.files[f]
		}
		r.short[i] = shortestOf(r.many[i])
	}
	r.keys.many = nil // the lists are r.many now
	b.r = nil
	return r
}

// Holders returns the files answering key, sorted. The slice must not be
// modified.
func (r *Resolver) Holders(k Key) []string {
	if k.Step < StepFile || k.Step > StepAlias {
		return nil
	}
	one, list := r.keys.lookup(k)
	switch {
	case one >= 0:
		return r.files[one : one+1 : one+1]
	case list >= 0:
		return r.many[list]
	}
	return nil
}

// shortest returns the shortest of the files answering k when several
// do, else "".
func (r *Resolver) shortest(k Key) string {
	if k.Step < StepFile || k.Step > StepAlias {
		return ""
	}
	if _, list := r.keys.lookup(k); list >= 0 {
		return r.short[list]
	}
	return ""
}

// Resolve resolves link l written in page from. With a nil from, a
// same-page link is broken and files sharing a name are told apart as for
// a page at the vault root. A link to a heading or block of a page added
// with AddPageKeys is not checked for it (MissingHeading and MissingBlock
// are false): CheckFragments does that with the page's PackFragments.
func (r *Resolver) Resolve(from *Page, l Link) Resolution {
	if l.SamePage() {
		if from == nil {
			return Resolution{Status: StatusBroken}
		}
		res := Resolution{Status: StatusResolved, Path: from.Path, SamePage: true}
		checkFragment(&res, from.Headings, from.BlockIDs, l)
		return res
	}
	fromPath := ""
	if from != nil {
		fromPath = from.Path
	}
	res := match(fromPath, LookupKeys(l), r.Holders, r.shortest)
	if res.Status == StatusResolved && (l.Heading != "" || l.Block != "") {
		if i, ok := slices.BinarySearch(r.files, res.Path); ok && r.frags != nil {
			CheckFragments(&res, r.frags[i], l)
		}
	}
	return res
}

// CheckFragments sets res.MissingHeading and res.MissingBlock for link l,
// resolved (res) to a page whose headings and block ids packed are
// (PackFragments); "" for a file that is not a page, which is not
// checked.
func CheckFragments(res *Resolution, packed string, l Link) {
	if packed == "" || l.Heading == "" && l.Block == "" {
		return
	}
	headings, blocks := unpackFragments(packed)
	checkFragment(res, headings, blocks, l)
}

func checkFragment(res *Resolution, headings []Heading, blocks []string, l Link) {
	res.MissingHeading = l.Heading != "" && !hasHeading(headings, l.Heading)
	res.MissingBlock = l.Block != "" && !hasBlock(blocks, l.Block)
}
