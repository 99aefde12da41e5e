package index

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
	"cairn/schema"
	"cairn/store"
)

// bulkChanges is the size of a change above which the index is built from
// scratch rather than updated.
const bulkChanges = 5000

// update is the state of one incremental update: what changed and what it
// affects.
type update struct {
	q       StorageTx
	w       *writer
	t       trees
	holders map[markdown.Key][]string    // cache of key → holder paths
	ids     map[string]int64             // cache of path → file id
	paths   map[int64]string             // cache of file id → path
	pages   map[int64]*markdown.Page     // cache of page rows, for headings
	lint    map[cairn.Hash]lint.Settings // cache of cairn.yaml's lint settings by content

	values     map[string]bool  // key values whose holders changed
	dirtyLinks map[linkKey]bool // links to resolve again
	dirtyFiles map[int64]bool   // files whose findings to compute again
	removed    []edge           // edges that went away
	added      []edge           // edges that appeared
	gone       map[int64]int    // depths of deleted files
	relintAll  bool
	// linkRows are the current links of modified pages, kept in step with
	// the table, so that relinting a hub page does not read its links back.
	linkRows map[int64][]linkRow
}

// apply changes the index from tree from to tree to. When delta is set, it
// collects how the findings changed.
func (ix *Index) apply(ctx context.Context, q StorageTx, t trees, from, to cairn.Hash, delta *Delta) error {
	if from == to {
		return nil
	}
	changes, err := t.Diff(ctx, from, to, &store.DiffOptions{NoRenames: true})
	if err != nil {
		return fmt.Errorf("index: diff: %w", err)
	}
	if from == store.EmptyTree || len(changes) > bulkChanges {
		// An import: building from scratch is faster than updating.
		if delta == nil {
			return ix.build(ctx, q, t, to)
		}
		if delta.Removed, err = (&Reader{q: q}).Findings(ctx, FindingFilter{}); err != nil {
			return err
		}
		if err := ix.build(ctx, q, t, to); err != nil {
			return err
		}
		delta.Added, err = (&Reader{q: q}).Findings(ctx, FindingFilter{})
		return err
	}
	w := newWriter(q)
	w.delta = delta
	u := &update{
		q: q, w: w, t: t,
		holders: map[markdown.Key][]string{}, ids: map[string]int64{}, paths: map[int64]string{}, pages: map[int64]*markdown.Page{},
		lint:   map[cairn.Hash]lint.Settings{},
		values: map[string]bool{}, dirtyLinks: map[linkKey]bool{}, dirtyFiles: map[int64]bool{}, gone: map[int64]int{},
	}
	before, err := u.vaultFacts(ctx)
	if err != nil {
		return err
	}
	// The declared types before and after: a change to them re-checks the
	// pages of the types that changed.
	if before.types, err = ix.typesAt(ctx, t, from); err != nil {
		return err
	}
	afterTypes := before.types
	if touchesTypes(changes) {
		if afterTypes, err = ix.typesAt(ctx, t, to); err != nil {
			return err
		}
	} else {
		ix.rememberTypes(to, afterTypes)
	}
	// A page that changes type changes what the link fields leading to it
	// say: its type is read before it goes.
	typedLinks := before.types.HasLinkFields() || afterTypes.HasLinkFields()
	oldTypes := map[int64]string{}
	oldText, err := oldTexts(ctx, t, changes)
	if err != nil {
		return err
	}
	// Take out what the old versions put in.
	keep := map[string]int64{}            // modified files keep their ids
	oldKeys := map[int64][]markdown.Key{} // the keys of modified files
	oldLinks := map[int64][]linkRow{}     // the links of modified pages
	for _, c := range changes {
		if c.Kind == cairn.Added {
			continue
		}
		id, kind, err := u.fileID(ctx, c.Old.Path)
		if err != nil {
			return err
		}
		if id == 0 {
			return fmt.Errorf("index: %s is not in the index; run cairn reindex", c.Old.Path)
		}
		if typedLinks && c.Kind == cairn.Modified && kind == lint.KindPage {
			p, err := u.page(ctx, id)
			if err != nil {
				return err
			}
			oldTypes[id] = p.Type
		}
		var keys []markdown.Key
		if c.Kind == cairn.Modified && kind == lint.KindPage {
			// A modified page keeps the rows of the links it still has.
			var links []linkRow
			keys, links, err = w.deleteFileDataKeepLinks(ctx, id, oldText[c.Old.Path])
			oldLinks[id] = links
		} else {
			var edges []edge
			keys, edges, err = w.deleteFileData(ctx, id, oldText[c.Old.Path])
			u.removed = append(u.removed, edges...)
		}
		if err != nil {
			return err
		}
		if c.Kind == cairn.Deleted {
			for _, k := range keys {
				u.values[k.Value] = true
			}
			if u.gone[id], err = q.Depth(ctx, id); err != nil {
				return err
			}
			if err := q.DeleteFile(ctx, id); err != nil {
				return err
			}
			delete(u.ids, c.Old.Path)
			delete(u.dirtyFiles, id)
			continue
		}
		keep[c.Path] = id
		oldKeys[id] = keys
		// Links into a changed page must check their heading again.
		if err := u.collectLinks(q.AnchoredLinksTo(ctx, id)); err != nil {
			return err
		}
	}
	// Put in the new versions.
	var entries []cairn.Entry
	for _, c := range changes {
		if c.Kind != cairn.Deleted {
			entries = append(entries, c.New)
		}
	}
	files, err := parseAll(ctx, t, entries, true, nil)
	if err != nil {
		return err
	}
	nextFile, err := q.NextFileID(ctx)
	if err != nil {
		return err
	}
	for _, f := range files {
		if id, ok := keep[f.path]; ok {
			f.id = id
			err = w.updateFile(ctx, f)
		} else {
			f.id, nextFile = nextFile, nextFile+1
			err = w.insertFile(ctx, f, 0, unreachable)
		}
		if err != nil {
			return err
		}
		if old, kept := oldLinks[f.id]; kept {
			delete(oldLinks, f.id)
			var dirty []int
			if f.page != nil {
				var removed []edge
				if dirty, removed, err = w.updateLinks(ctx, f, old); err != nil {
					return err
				}
				u.removed = append(u.removed, removed...)
				u.cacheLinks(f, old)
			} else {
				for _, r := range old {
					if r.dst != 0 && r.dst != f.id {
						u.removed = append(u.removed, edge{src: f.id, dst: r.dst})
					}
					if err := w.deleteLink(ctx, r); err != nil {
						return err
					}
				}
			}
			for _, i := range dirty {
				u.dirtyLinks[linkKey{f.id, i}] = true
			}
			if f.page != nil {
				if err := w.writeText(ctx, f); err != nil {
					return err
				}
			}
		} else if f.page != nil {
			if err := w.writeLinks(ctx, f, nil, nil); err != nil {
				return err
			}
			if err := w.writeText(ctx, f); err != nil {
				return err
			}
			for i := range f.page.Links {
				u.dirtyLinks[linkKey{f.id, i}] = true
			}
		}
		u.ids[f.path], u.paths[f.id] = f.id, f.path
		delete(u.pages, f.id)
		// Only keys that came or went change what links find: a page
		// whose title did not change answers its links as before.
		old := oldKeys[f.id]
		now := f.keys()
		for _, k := range now {
			if !slices.Contains(old, k) {
				u.values[k.Value] = true
			}
		}
		for _, k := range old {
			if !slices.Contains(now, k) {
				u.values[k.Value] = true
			}
		}
		u.dirtyFiles[f.id] = true
		if old, ok := oldTypes[f.id]; ok && (f.page == nil || f.page.Type != old) {
			rows, err := q.LinksTo(ctx, f.id, 0, 0)
			if err != nil {
				return err
			}
			for _, r := range rows {
				u.dirtyFiles[r.Src] = true
			}
		}
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	// Links that look up a value whose holders changed; pages whose title,
	// alias or id clash may have changed; pages citing a file that came or
	// went.
	for v := range u.values {
		if err := u.collectLinks(q.LinksLookingUp(ctx, lookupHash(v))); err != nil {
			return err
		}
		clashing, err := q.KeyHolders(ctx, v, markdown.StepPath, markdown.StepTitle, markdown.StepAlias)
		if err != nil {
			return err
		}
		for _, f := range clashing {
			u.dirtyFiles[f.ID] = true
		}
		if err := u.collect(q.FilesCiting(ctx, v)); err != nil {
			return err
		}
	}
	if err := u.resolveLinks(ctx); err != nil {
		return err
	}
	if err := u.applyInbound(ctx); err != nil {
		return err
	}
	after, err := u.vaultFacts(ctx)
	if err != nil {
		return err
	}
	after.types = afterTypes
	if after.index != before.index || after.strictLint() != before.strictLint() || after.lint.Types != before.lint.Types {
		u.relintAll = true
	}
	if changed := before.types.Changed(after.types); len(changed) > 0 && !u.relintAll {
		if err := u.collect(q.FilesOfType(ctx, changed...)); err != nil {
			return err
		}
		// The declarations too: a type's findings depend on the types
		// it extends and on the other files declaring its name.
		for _, n := range changed {
			for _, p := range after.types.Declarations(n) {
				id, err := u.idOf(ctx, p)
				if err != nil {
					return err
				}
				if id != 0 {
					u.dirtyFiles[id] = true
				}
			}
		}
	}
	if err := u.reach(ctx, before, after); err != nil {
		return err
	}
	if err := u.relint(ctx, after); err != nil {
		return err
	}
	return w.flush(ctx)
}

// vault is what findings depend on vault-wide.
type vault struct {
	index int64         // the file id of the root index.md page, 0 if none
	eva   bool          // eva.json at the root: an Eva brain, strict by its standard
	lint  lint.Settings // what cairn.yaml at the root says under lint
	// types are the types the vault declares (types/).
	types *schema.Set
}

// policyFile is the vault's contract, admit.PolicyFile; its lint key
// (lint.Settings) is the one setting findings depend on.
const policyFile = "cairn.yaml"

func (u *update) vaultFacts(ctx context.Context) (vault, error) {
	return readVault(ctx, u.q, func(h cairn.Hash) (lint.Settings, error) {
		if s, ok := u.lint[h]; ok {
			return s, nil // the policy did not change: read once an update
		}
		data, err := u.t.ReadBlob(ctx, h)
		if err != nil && !errors.Is(err, cairn.ErrPurged) {
			return lint.Settings{}, fmt.Errorf("index: read %s: %w", policyFile, err)
		}
		s := lintSettings(data)
		u.lint[h] = s
		return s, nil
	})
}

// readVault reads the vault facts from the index; settingsIn reads the
// lint settings of a content of cairn.yaml.
func readVault(ctx context.Context, q StorageReader, settingsIn func(cairn.Hash) (lint.Settings, error)) (vault, error) {
	var v vault
	found, err := keyHoldersOf(ctx, q, []markdown.Key{
		{Step: markdown.StepFile, Value: "index.md"},
		{Step: markdown.StepFile, Value: "eva.json"},
		{Step: markdown.StepFile, Value: cairn.FoldPath(policyFile)},
	})
	if err != nil {
		return v, err
	}
	for _, f := range found[0] { // the first page of the name, by id
		if f.Kind == lint.KindPage && (v.index == 0 || f.ID < v.index) {
			v.index = f.ID
		}
	}
	v.eva = len(found[1]) > 0
	for _, f := range found[2] { // FileAt(policyFile): the key holder of that very path
		if f.Path == policyFile {
			v.lint, err = settingsIn(f.Blob)
			return v, err
		}
	}
	return v, nil
}

// strictLint reports whether the vault asks for strict lint.
func (v vault) strictLint() bool { return v.eva || v.lint.Strict }

func (v vault) config() *lint.Config {
	cfg := &lint.Config{Contract: v.strictLint(), DeclaredTypes: v.lint.Types == lint.TypesDeclared}
	if v.types.Len() > 0 {
		cfg.Types = v.types
	}
	return cfg
}

// linkKey names a link: the linking file and the link's position in it.
type linkKey struct {
	src int64
	ord int
}

// collectLinks adds links (a read's result) to the dirty links.
func (u *update) collectLinks(links []LinkKey, err error) error {
	for _, k := range links {
		u.dirtyLinks[linkKey{k.Src, k.Ord}] = true
	}
	return err
}

// collect adds ids (a read's result) to the dirty files.
func (u *update) collect(ids []int64, err error) error {
	for _, id := range ids {
		u.dirtyFiles[id] = true
	}
	return err
}

func (u *update) fileID(ctx context.Context, path string) (int64, lint.Kind, error) {
	return fileID(ctx, u.q, path)
}

// fileID finds a file by path: 0 when there is none.
func fileID(ctx context.Context, q StorageReader, path string) (int64, lint.Kind, error) {
	f, err := q.FileAt(ctx, path)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return 0, 0, nil
	}
	return f.ID, f.Kind, err
}

// holdersOf returns the paths of the files answering key k, sorted.
func (u *update) holdersOf(ctx context.Context, k markdown.Key) ([]string, error) {
	if h, ok := u.holders[k]; ok {
		return h, nil
	}
	h, err := holders(ctx, u.q, k)
	if err != nil {
		return nil, err
	}
	u.holders[k] = h
	return h, nil
}

// holders returns the paths of the files answering key k, sorted.
func holders(ctx context.Context, q StorageReader, k markdown.Key) ([]string, error) {
	fs, err := q.KeyHolders(ctx, k.Value, k.Step)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out, nil
}

func (u *update) idOf(ctx context.Context, path string) (int64, error) {
	if id, ok := u.ids[path]; ok {
		return id, nil
	}
	id, _, err := u.fileID(ctx, path)
	if err != nil {
		return 0, err
	}
	u.ids[path], u.paths[id] = id, path
	return id, nil
}

// typeOf returns a function giving the type of the page at a path, "" for
// a file that is not a page or has none.
func (u *update) typeOf(ctx context.Context) func(string) (string, error) {
	return func(path string) (string, error) {
		id, err := u.idOf(ctx, path)
		if err != nil || id == 0 {
			return "", err
		}
		p, err := u.page(ctx, id)
		if err != nil || p == nil {
			return "", err
		}
		return p.Type, nil
	}
}

// pathOf returns the path of the file with the given id.
func (u *update) pathOf(ctx context.Context, id int64) (string, error) {
	if p, ok := u.paths[id]; ok {
		return p, nil
	}
	p, err := u.q.Path(ctx, id)
	if err != nil {
		return "", err
	}
	u.paths[id] = p
	return p, nil
}

func (u *update) page(ctx context.Context, id int64) (*markdown.Page, error) {
	if p, ok := u.pages[id]; ok {
		return p, nil
	}
	_, p, err := pageRow(ctx, u.q, id)
	if err != nil {
		return nil, err
	}
	u.pages[id] = p
	return p, nil
}

// linkRow is a stored link.
type linkRow struct {
	src  int64
	ord  int
	link markdown.Link
	res  markdown.Resolution
	dst  int64
}

// linkOf decodes a stored link; DstPath, when the read filled it, becomes
// the resolution's path.
func linkOf(row LinkRow) (linkRow, error) {
	r := linkRow{src: row.Src, ord: row.Ord, dst: row.Dst}
	l := &r.link
	if err := decodeLink(row.Data, row.Flags, l); err != nil {
		return r, err
	}
	l.Raw = rawLink(*l)
	if row.Detail != "" {
		if err := json.Unmarshal([]byte(row.Detail), &r.res); err != nil {
			return r, err
		}
	}
	r.res.Status, r.res.Step, r.res.Path = statusNames[row.Status], markdown.Step(row.Step), row.DstPath
	return r, nil
}

// detailJSON stores the parts of a resolution beyond status, step and
// destination.
func detailJSON(res markdown.Resolution) string {
	d := markdown.Resolution{Candidates: res.Candidates, MoreCandidates: res.MoreCandidates, SamePage: res.SamePage,
		MissingHeading: res.MissingHeading, MissingBlock: res.MissingBlock}
	if d.Candidates == nil && !d.SamePage && !d.MissingHeading && !d.MissingBlock {
		return ""
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// resolveLinks resolves every dirty link again and records what changed.
func (u *update) resolveLinks(ctx context.Context) error {
	// The links, and the holders of every key they may look up, in two
	// reads where the storage can (a commit on a server pays a round trip
	// for each read); then each in order of file and position.
	lks := make([]LinkKey, 0, len(u.dirtyLinks))
	for k := range u.dirtyLinks {
		lks = append(lks, LinkKey{Src: k.src, Ord: k.ord})
	}
	stored, err := linksAt(ctx, u.q, lks)
	if err != nil {
		return err
	}
	rows := make([]linkRow, 0, len(stored))
	var lookups []markdown.Key
	ahead := batching(u.q)
	for _, row := range stored {
		r, err := linkOf(row)
		if err != nil {
			return err
		}
		rows = append(rows, r)
		if ahead {
			lookups = append(lookups, markdown.LookupKeys(r.link)...)
		}
	}
	slices.SortFunc(rows, func(a, b linkRow) int { return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.ord, b.ord)) })
	if err := u.warmHolders(ctx, lookups); err != nil {
		return err
	}
	for _, r := range rows {
		res, dst, err := u.resolve(ctx, r.src, r.link)
		if err != nil {
			return err
		}
		if res.Status == r.res.Status && dst == r.dst && detailJSON(res) == detailJSON(r.res) && res.Step == r.res.Step {
			continue
		}
		if err := u.q.SetResolution(ctx, r.src, r.ord, LinkRow{Status: statusCodes[res.Status], Dst: dst, Step: int(res.Step), Detail: detailJSON(res)}); err != nil {
			return err
		}
		u.dirtyFiles[r.src] = true
		if rows, ok := u.linkRows[r.src]; ok && r.ord < len(rows) {
			rows[r.ord].res, rows[r.ord].dst = res, dst
		}
		if r.dst != 0 && r.dst != r.src {
			u.removed = append(u.removed, edge{r.src, r.dst})
		}
		if dst != 0 && dst != r.src {
			u.added = append(u.added, edge{r.src, dst})
		}
	}
	return nil
}

// resolve resolves one link of the page src as markdown.Resolver would.
func (u *update) resolve(ctx context.Context, src int64, l markdown.Link) (markdown.Resolution, int64, error) {
	if l.SamePage() {
		p, err := u.page(ctx, src)
		if err != nil {
			return markdown.Resolution{}, 0, err
		}
		res := markdown.Resolution{Status: markdown.StatusResolved, Path: p.Path, SamePage: true}
		res.MissingHeading = l.Heading != "" && !p.HasHeading(l.Heading)
		res.MissingBlock = l.Block != "" && !p.HasBlock(l.Block)
		return res, src, nil
	}
	from, err := u.pathOf(ctx, src)
	if err != nil {
		return markdown.Resolution{}, 0, err
	}
	var qerr error
	res := markdown.Match(from, markdown.LookupKeys(l), func(k markdown.Key) []string {
		h, err := u.holdersOf(ctx, k)
		if err != nil && qerr == nil {
			qerr = err
		}
		return h
	})
	if qerr != nil || res.Status != markdown.StatusResolved {
		return res, 0, qerr
	}
	dst, err := u.idOf(ctx, res.Path)
	if err != nil {
		return res, 0, err
	}
	if (l.Heading != "" || l.Block != "") && lint.Classify(res.Path) == lint.KindPage {
		p, err := u.page(ctx, dst)
		if err != nil {
			return res, 0, err
		}
		if p != nil {
			res.MissingHeading = l.Heading != "" && !p.HasHeading(l.Heading)
			res.MissingBlock = l.Block != "" && !p.HasBlock(l.Block)
		}
	}
	return res, dst, nil
}

// applyInbound updates the inbound counts of the edges' ends.
func (u *update) applyInbound(ctx context.Context) error {
	delta := map[int64]int{}
	for _, e := range u.removed {
		delta[e.dst]--
	}
	for _, e := range u.added {
		delta[e.dst]++
	}
	for id, d := range delta {
		if d == 0 {
			continue
		}
		if err := u.q.AddInbound(ctx, id, d); err != nil {
			return err
		}
		u.dirtyFiles[id] = true
	}
	return nil
}

// relint computes the findings of the dirty files again (of every file
// when something vault-wide changed).
func (u *update) relint(ctx context.Context, v vault) error {
	if u.relintAll {
		if err := u.collect(u.q.FilesOfKind(ctx, lint.KindPage, lint.KindAttachment)); err != nil {
			return err
		}
	}
	ids := make([]int64, 0, len(u.dirtyFiles))
	for id := range u.dirtyFiles {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	cfg := v.config()
	names := newSharedNames() // of u.holdersOf's reads, which it keeps
	// A chunk of files at a time: their facts, then the holders of every
	// key those ask about in one read where the storage can, then the
	// findings.
	const chunk = 256
	ahead := batching(u.q)
	for ids := range slices.Chunk(ids, chunk) {
		facts := make([]*lint.Facts, 0, len(ids))
		var keys []markdown.Key
		for _, id := range ids {
			var f *lint.Facts
			var err error
			if rows, ok := u.linkRows[id]; ok {
				f, err = u.cachedFacts(ctx, id, rows, v)
			} else {
				f, err = storedFacts(ctx, u.q, id, v)
			}
			if cairn.ErrorCode(err) == cairn.ENOTFOUND {
				facts = append(facts, nil)
				continue
			}
			if err != nil {
				return err
			}
			facts = append(facts, f)
			if f.Kind == lint.KindPage && ahead {
				keys = append(keys, factKeys(f.Page)...)
			}
		}
		if err := u.warmHolders(ctx, keys); err != nil {
			return err
		}
		for i, f := range facts {
			if f == nil {
				continue
			}
			if f.Kind == lint.KindPage {
				if err := pageFacts(ctx, f, u.holdersOf, names); err != nil {
					return err
				}
				if err := linkTypes(f, v.types, u.typeOf(ctx)); err != nil {
					return err
				}
			}
			if err := u.w.dropFindings(ctx, ids[i]); err != nil {
				return err
			}
			if err := u.w.writeFindings(ctx, ids[i], lint.Check(f, cfg)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFindings adds a file's findings; the caller removes old ones.
func (w *writer) writeFindings(ctx context.Context, id int64, fs []lint.Finding) error {
	if w.delta != nil {
		w.delta.Added = append(w.delta.Added, fs...)
	}
	for _, f := range fs {
		if w.findings.add(FindingRow{File: id, Finding: f}, w.bulk) {
			if err := w.writeFindingRows(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseAll reads and parses entries: content is read in bulk and parsed on
// every core. Purged content is indexed as empty. With text, pages' words
// are taken for the full text (see parse). each, when set, is called with
// every parsed file and its content (which it must not keep) as soon as it
// is ready, possibly concurrently.
func parseAll(ctx context.Context, t trees, entries []cairn.Entry, text bool, each func(int, *file, []byte)) ([]*file, error) {
	out := make([]*file, len(entries))
	at := make(map[cairn.Hash][]int, len(entries))
	hs := make([]cairn.Hash, 0, len(entries))
	for i, e := range entries {
		if _, ok := at[e.Blob]; !ok {
			hs = append(hs, e.Blob)
		}
		at[e.Blob] = append(at[e.Blob], i)
	}
	err := t.ReadBlobs(ctx, hs, func(h cairn.Hash, data []byte) error {
		for _, i := range at[h] {
			out[i] = parse(entries[i], data, text)
			if each != nil {
				each(i, out[i], data)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index: read content: %w", err)
	}
	for i, f := range out {
		if f != nil {
			continue
		}
		data, err := t.ReadBlob(ctx, entries[i].Blob)
		if err != nil && !errors.Is(err, cairn.ErrPurged) {
			return nil, fmt.Errorf("index %s: %w", entries[i].Path, err)
		}
		out[i] = parse(entries[i], data, text)
		if each != nil {
			each(i, out[i], data)
		}
	}
	return out, nil
}

// oldTexts reads the full text the old versions of the pages that changes
// modify or delete were written with, by path (see StorageTx.DeleteText).
func oldTexts(ctx context.Context, t trees, changes []cairn.Change) (map[string]string, error) {
	var olds []cairn.Entry
	for _, c := range changes {
		if c.Kind != cairn.Added && lint.Classify(c.Old.Path) == lint.KindPage {
			olds = append(olds, c.Old)
		}
	}
	if len(olds) == 0 {
		return nil, nil
	}
	files, err := parseAll(ctx, t, olds, true, nil)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(files))
	for _, f := range files {
		if f.page != nil {
			out[f.path] = f.fullText()
		}
	}
	return out, nil
}

// cacheLinks records a modified page's links as updateLinks left them: the
// kept rows with their new labels and positions, the replaced ones broken
// until resolveLinks resolves them.
func (u *update) cacheLinks(f *file, old []linkRow) {
	byOrd := make(map[int]linkRow, len(old))
	for _, r := range old {
		byOrd[r.ord] = r
	}
	rows := make([]linkRow, len(f.page.Links))
	for i, l := range f.page.Links {
		l.Raw = rawLink(l) // as the index stores it
		if r, ok := byOrd[i]; ok && sameLookup(r.link, l) {
			r.link = l
			rows[i] = r
			continue
		}
		rows[i] = linkRow{src: f.id, ord: i, link: l, res: markdown.Resolution{Status: markdown.StatusBroken}}
	}
	if u.linkRows == nil {
		u.linkRows = map[int64][]linkRow{}
	}
	u.linkRows[f.id] = rows
}

// cachedFacts is storedFacts for a page whose links are in linkRows.
func (u *update) cachedFacts(ctx context.Context, id int64, rows []linkRow, v vault) (*lint.Facts, error) {
	row, p, err := pageRow(ctx, u.q, id)
	if err != nil {
		return nil, err
	}
	f := &lint.Facts{Path: row.Path, Kind: row.Kind, Page: p, HasIndex: v.index != 0}
	f.Inbound, f.Reachable = row.Inbound, row.Depth != unreachable
	for _, r := range rows {
		res := r.res
		if r.dst != 0 && (res.MissingHeading || res.MissingBlock || res.Chosen()) {
			if res.Path, err = u.q.Path(ctx, r.dst); err != nil {
				return nil, err
			}
		}
		f.Links = append(f.Links, lint.Link{Link: r.link, Res: res})
	}
	return f, nil
}
