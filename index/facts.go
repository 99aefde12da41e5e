package index

import (
	"context"
	"slices"

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
func pageFacts(ctx context.Context, f *lint.Facts, holders holdersFunc) error {
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
		var with []string
		for _, step := range []markdown.Step{markdown.StepTitle, markdown.StepAlias} {
			h, err := holders(ctx, markdown.Key{Step: step, Value: v})
			if err != nil {
				return err
			}
			with = append(with, h...)
		}
		with = others(with, p.Path)
		if len(with) > 0 {
			f.TitleClashes = append(f.TitleClashes, lint.Clash{Value: w, With: with})
		}
	}
	slices.SortFunc(f.TitleClashes, func(a, b lint.Clash) int { return compare(a.Value, b.Value) })
	h, err := holders(ctx, markdown.Key{Step: markdown.StepPath, Value: cairn.FoldPath(p.ID)})
	if err != nil {
		return err
	}
	for _, o := range others(h, p.Path) {
		if lint.Classify(o) == lint.KindPage {
			f.IDClashes = append(f.IDClashes, o)
		}
	}
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

// others returns paths without self, sorted and unique.
func others(paths []string, self string) []string {
	var out []string
	for _, p := range paths {
		if p != self {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
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
