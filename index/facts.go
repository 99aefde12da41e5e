package index

import (
	"context"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
)

// holdersFunc returns the paths of the files answering a key, sorted.
type holdersFunc func(context.Context, markdown.Key) ([]string, error)

// pageFacts completes the facts of a page from the holders of keys: the
// title and id clashes and the missing sources. The full build and the
// incremental update both use it, over memory and over the stored index.
// names, when not nil, keeps what the pages sharing a name find of it,
// for the others asking with the same holders.
func pageFacts(ctx context.Context, f *lint.Facts, holders holdersFunc, names *sharedNames) error {
	p := f.Page
	written := map[string]string{} // folded title or alias → as written
	if p.TitleSource != markdown.TitleFromFilename && p.Title != "" {
		written[cairn.FoldPath(p.Title)] = p.Title
	}
	for _, a := range p.Aliases {
		if _, ok := written[cairn.FoldPath(a)]; !ok {
			written[cairn.FoldPath(a)] = a
		}
	}
	for v, w := range written {
		titled, err := holders(ctx, markdown.Key{Step: markdown.StepTitle, Value: v})
		if err != nil {
			return err
		}
		aliased, err := holders(ctx, markdown.Key{Step: markdown.StepAlias, Value: v})
		if err != nil {
			return err
		}
		if with, more := names.others(sharedName{value: v}, p.Path, nil, titled, aliased); len(with) > 0 {
			f.TitleClashes = append(f.TitleClashes, lint.Clash{Value: w, With: with, More: more})
		}
	}
	slices.SortFunc(f.TitleClashes, func(a, b lint.Clash) int { return compare(a.Value, b.Value) })
	h, err := holders(ctx, markdown.Key{Step: markdown.StepPath, Value: cairn.FoldPath(p.ID)})
	if err != nil {
		return err
	}
	isPage := func(o string) bool { return lint.Classify(o) == lint.KindPage }
	f.IDClashes, f.MoreIDClashes = names.others(sharedName{id: true, value: cairn.FoldPath(p.ID)}, p.Path, isPage, h, nil)
	for _, s := range p.Sources {
		keys := sourceKeys(s)
		if len(keys) == 0 {
			continue
		}
		found := false
		for _, k := range keys {
			h, err := holders(ctx, k)
			if err != nil {
				return err
			}
			if len(h) > 0 {
				found = true
				break
			}
		}
		if !found {
			f.MissingSources = append(f.MissingSources, s)
		}
	}
	return nil
}

// factKeys returns every key pageFacts may ask the holders of for page p,
// so that they can be read at once.
func factKeys(p *markdown.Page) []markdown.Key {
	var keys []markdown.Key
	if p.TitleSource != markdown.TitleFromFilename && p.Title != "" {
		v := cairn.FoldPath(p.Title)
		keys = append(keys, markdown.Key{Step: markdown.StepTitle, Value: v}, markdown.Key{Step: markdown.StepAlias, Value: v})
	}
	for _, a := range p.Aliases {
		v := cairn.FoldPath(a)
		keys = append(keys, markdown.Key{Step: markdown.StepTitle, Value: v}, markdown.Key{Step: markdown.StepAlias, Value: v})
	}
	keys = append(keys, markdown.Key{Step: markdown.StepPath, Value: cairn.FoldPath(p.ID)})
	for _, s := range p.Sources {
		keys = append(keys, sourceKeys(s)...)
	}
	return keys
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// firstOthers merges a and b (each sorted; b may be nil) without self,
// without repeats and, when keep is not nil, without what keep refuses: it
// returns the first most of them, sorted, and how many more there are.
// One pass, no copy of the lists and no sort.
func firstOthers(self string, keep func(string) bool, most int, a, b []string) ([]string, int) {
	var first []string
	more, last := 0, ""
	for n := 0; len(a) > 0 || len(b) > 0; n++ {
		var p string
		if len(b) == 0 || len(a) > 0 && a[0] <= b[0] {
			p, a = a[0], a[1:]
		} else {
			p, b = b[0], b[1:]
		}
		if n > 0 && p == last || p == self || keep != nil && !keep(p) {
			last = p
			continue
		}
		last = p
		if len(first) < most {
			first = append(first, p)
		} else {
			more++
		}
	}
	return first, more
}

// sharedNames keeps, for each title or alias (folded) and each id that
// pages share, the first of the pages holding it and how many hold it:
// every one of N pages sharing a name asks for the others (lint names the
// first markdown.MaxCandidates of them and counts the rest), and merging
// the N holders for each was N² in a full build and on every commit that
// changes who shares the name (every such page is linted again). It is
// safe for concurrent use, and right for one source of holders: a build's
// resolver, or one update's reads.
type sharedNames struct {
	mu    sync.Mutex
	names map[sharedName]sharers
}

type sharedName struct {
	id    bool // an id (the pages holding the path key); else a title or alias
	value string
}

// sharers are the first markdown.MaxCandidates+1 holders of a name (one
// more than lint names, for a page that is among them) and how many there
// are.
type sharers struct {
	first []string
	n     int
}

func newSharedNames() *sharedNames { return &sharedNames{names: map[sharedName]sharers{}} }

// others returns the first markdown.MaxCandidates of the files in a and b
// (each sorted) that keep accepts, but self, and how many more there are:
// firstOthers, from what the name's first asker found.
func (s *sharedNames) others(name sharedName, self string, keep func(string) bool, a, b []string) ([]string, int) {
	// A name few files hold (most are held by one) is merged on the spot:
	// kept, the names of a 100k-page build would cost tens of MB and a
	// lock for every page.
	if s == nil || len(a)+len(b) <= markdown.MaxCandidates+1 {
		return firstOthers(self, keep, markdown.MaxCandidates, a, b)
	}
	s.mu.Lock()
	all, ok := s.names[name]
	s.mu.Unlock()
	if !ok {
		first, more := firstOthers("", keep, markdown.MaxCandidates+1, a, b)
		all = sharers{first: first, n: len(first) + more}
		s.mu.Lock()
		s.names[name] = all
		s.mu.Unlock()
	}
	n := all.n
	first := all.first
	if i, found := slices.BinarySearch(first, self); found {
		first, n = slices.Delete(slices.Clone(first), i, i+1), n-1
	} else if (holds(a, self) || holds(b, self)) && (keep == nil || keep(self)) {
		n-- // self sorts after the first
	}
	first = slices.Clip(first[:min(len(first), markdown.MaxCandidates)]) // the memory's: not to be appended to
	if len(first) == 0 {
		first = nil
	}
	return first, n - len(first)
}

// holds reports whether the sorted list has p.
func holds(list []string, p string) bool {
	_, ok := slices.BinarySearch(list, p)
	return ok
}

// storedFacts reads the facts of one file from the index.
// The facts that depend on other files' keys are left to pageFacts.
func storedFacts(ctx context.Context, q StorageReader, id int64, v vault) (*lint.Facts, error) {
	row, p, err := pageRow(ctx, q, id)
	if err != nil {
		return nil, err
	}
	f := &lint.Facts{Path: row.Path, Kind: row.Kind, Page: p, HasIndex: v.index != 0}
	if row.Kind != lint.KindPage {
		return f, nil
	}
	f.Inbound, f.Reachable = row.Inbound, row.Depth != unreachable
	// The links with the paths they lead to, in one read: a hub page (an
	// index.md of 10k links) is relinted on every change to it.
	links, err := q.LinksFrom(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		r, err := linkOf(l)
		if err != nil {
			return nil, err
		}
		f.Links = append(f.Links, lint.Link{Link: r.link, Res: r.res})
	}
	return f, nil
}

// lintSettings reads the lint key of cairn.yaml. The admission pipeline
// validates the file before it reaches main (admit.ParsePolicy, whose
// Policy holds the same lint.Settings); here a file that does not parse
// counts as the default.
func lintSettings(data []byte) lint.Settings {
	var doc struct {
		Lint lint.Settings `yaml:"lint"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return lint.Settings{}
	}
	return doc.Lint
}

func equalFold(a, b string) bool { return len(a) == len(b) && cairn.FoldPath(a) == cairn.FoldPath(b) }
