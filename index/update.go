package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
	"cairn/store"
)

// bulkChanges is the size of a change above which the index is built from
// scratch rather than updated.
const bulkChanges = 5000

// update is the state of one incremental update: what changed and what it
// affects.
type update struct {
	q       *prepared
	w       *writer
	t       trees
	holders map[markdown.Key][]string // cache of key → holder paths
	ids     map[string]int64          // cache of path → file id
	paths   map[int64]string          // cache of file id → path
	pages   map[int64]*markdown.Page  // cache of page rows, for headings
	strict  map[cairn.Hash]bool       // cache of cairn.yaml's lint.strict by content

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
func (ix *Index) apply(ctx context.Context, q *prepared, t trees, from, to cairn.Hash, delta *Delta) error {
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
			return build(ctx, q, t, to)
		}
		if delta.Removed, err = (&Reader{q: q}).Findings(ctx, FindingFilter{}); err != nil {
			return err
		}
		if err := build(ctx, q, t, to); err != nil {
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
		strict: map[cairn.Hash]bool{},
		values: map[string]bool{}, dirtyLinks: map[linkKey]bool{}, dirtyFiles: map[int64]bool{}, gone: map[int64]int{},
	}
	before, err := u.vaultFacts(ctx)
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
		var keys []markdown.Key
		if c.Kind == cairn.Modified && kind == lint.KindPage {
			// A modified page keeps the rows of the links it still has.
			var links []linkRow
			keys, links, err = w.deleteFileDataKeepLinks(ctx, q, id)
			oldLinks[id] = links
		} else {
			var edges []edge
			keys, edges, err = w.deleteFileData(ctx, q, id)
			u.removed = append(u.removed, edges...)
		}
		if err != nil {
			return err
		}
		if c.Kind == cairn.Deleted {
			for _, k := range keys {
				u.values[k.Value] = true
			}
			if u.gone[id], err = depthOf(ctx, q, id); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, `DELETE FROM files WHERE id = ?`, id); err != nil {
				return err
			}
			delete(u.ids, c.Old.Path)
			delete(u.dirtyFiles, id)
			continue
		}
		keep[c.Path] = id
		oldKeys[id] = keys
		// Links into a changed page must check their heading again.
		if err := u.collectLinks(ctx, `SELECT src, ord FROM links WHERE dst = ? AND flags & 4 != 0`, id); err != nil {
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
	files, err := parseAll(ctx, t, entries, nil)
	if err != nil {
		return err
	}
	nextFile, err := nextID(ctx, q, "files")
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
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	// Links that look up a value whose holders changed; pages whose title,
	// alias or id clash may have changed; pages citing a file that came or
	// went.
	for v := range u.values {
		if err := u.collectLinks(ctx, `SELECT src, ord FROM link_keys WHERE hash = ?`, lookupHash(v)); err != nil {
			return err
		}
		if err := u.collect(ctx, `SELECT file FROM keys WHERE value = ? AND step IN (2, 5, 6)`, v, u.dirtyFiles); err != nil {
			return err
		}
		if err := u.collect(ctx, `SELECT file FROM cites WHERE value = ?`, v, u.dirtyFiles); err != nil {
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
	if after.index != before.index || after.strictLint() != before.strictLint() {
		u.relintAll = true
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
	index  int64 // the file id of the root index.md page, 0 if none
	eva    bool  // eva.json at the root: an Eva brain, strict by its standard
	strict bool  // cairn.yaml at the root sets lint.strict
}

// policyFile is the vault's contract, admit.PolicyFile; its lint key
// (lint.Settings) is the one setting findings depend on.
const policyFile = "cairn.yaml"

func (u *update) vaultFacts(ctx context.Context) (vault, error) {
	return readVault(ctx, u.q, func(h cairn.Hash) (bool, error) {
		if s, ok := u.strict[h]; ok {
			return s, nil // the policy did not change: read once an update
		}
		data, err := u.t.ReadBlob(ctx, h)
		if err != nil && !errors.Is(err, cairn.ErrPurged) {
			return false, fmt.Errorf("index: read %s: %w", policyFile, err)
		}
		s := lintSettings(data).Strict
		u.strict[h] = s
		return s, nil
	})
}

// readVault reads the vault facts from the index; strictIn says whether
// the content of cairn.yaml sets lint.strict.
func readVault(ctx context.Context, q dbtx, strictIn func(cairn.Hash) (bool, error)) (vault, error) {
	var v vault
	err := q.QueryRowContext(ctx, `SELECT f.id FROM keys k JOIN files f ON f.id = k.file
		WHERE k.value = 'index.md' AND k.step = 1 AND f.kind = ?`, int(lint.KindPage)).Scan(&v.index)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return v, err
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM keys WHERE value = 'eva.json' AND step = 1`).Scan(&n); err != nil {
		return v, err
	}
	v.eva = n > 0
	var blob []byte
	err = q.QueryRowContext(ctx, `SELECT f.blob FROM keys k JOIN files f ON f.id = k.file
		WHERE k.value = ? AND k.step = 1 AND f.path = ?`, policyFile, policyFile).Scan(&blob)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return v, nil
	case err != nil:
		return v, err
	}
	v.strict, err = strictIn(cairn.Hash(blob))
	return v, err
}

// strictLint reports whether the vault asks for strict lint.
func (v vault) strictLint() bool { return v.eva || v.strict }

func (v vault) config() *lint.Config { return &lint.Config{Contract: v.strictLint()} }

// linkKey names a link: the linking file and the link's position in it.
type linkKey struct {
	src int64
	ord int
}

// collectLinks adds the links a one-argument query returns (src, ord) to
// the dirty links.
func (u *update) collectLinks(ctx context.Context, query string, arg any) error {
	rows, err := u.q.QueryContext(ctx, query, arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k linkKey
		if err := rows.Scan(&k.src, &k.ord); err != nil {
			return err
		}
		u.dirtyLinks[k] = true
	}
	return rows.Err()
}

// collect adds the ids a one-argument query returns to set.
func (u *update) collect(ctx context.Context, query string, arg any, set map[int64]bool) error {
	rows, err := u.q.QueryContext(ctx, query, arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		set[id] = true
	}
	return rows.Err()
}

func (u *update) fileID(ctx context.Context, path string) (int64, lint.Kind, error) {
	return fileID(ctx, u.q, path)
}

// fileID finds a file by path: 0 when there is none.
func fileID(ctx context.Context, q dbtx, path string) (int64, lint.Kind, error) {
	var id int64
	var kind int
	err := q.QueryRowContext(ctx, `SELECT f.id, f.kind FROM keys k JOIN files f ON f.id = k.file
		WHERE k.value = ? AND k.step = 1 AND f.path = ?`, cairn.FoldPath(path), path).Scan(&id, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	return id, lint.Kind(kind), err
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

func holders(ctx context.Context, q dbtx, k markdown.Key) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT f.path FROM keys k JOIN files f ON f.id = k.file WHERE k.value = ? AND k.step = ? ORDER BY f.path`,
		k.Value, int(k.Step))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
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

// pathOf returns the path of the file with the given id.
func (u *update) pathOf(ctx context.Context, id int64) (string, error) {
	if p, ok := u.paths[id]; ok {
		return p, nil
	}
	var p string
	if err := u.q.QueryRowContext(ctx, `SELECT path FROM files WHERE id = ?`, id).Scan(&p); err != nil {
		return "", err
	}
	u.paths[id] = p
	return p, nil
}

func (u *update) page(ctx context.Context, id int64) (*markdown.Page, error) {
	if p, ok := u.pages[id]; ok {
		return p, nil
	}
	p, _, _, err := pageRow(ctx, u.q, id)
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

const linkColumns = `src, ord, flags, status, dst, step, detail, link`

func scanLink(sc interface{ Scan(...any) error }) (linkRow, error) {
	var r linkRow
	var status, flags, step int
	var dst sql.NullInt64
	var detail sql.NullString
	var packed []byte
	err := sc.Scan(&r.src, &r.ord, &flags, &status, &dst, &step, &detail, &packed)
	if err != nil {
		return r, err
	}
	l := &r.link
	if err := decodeLink(packed, flags, l); err != nil {
		return r, err
	}
	l.Raw = rawLink(*l)
	if detail.Valid {
		if err := json.Unmarshal([]byte(detail.String), &r.res); err != nil {
			return r, err
		}
	}
	r.res.Status, r.res.Step, r.dst = statusNames[status], markdown.Step(step), dst.Int64
	return r, nil
}

// detailJSON stores the parts of a resolution beyond status, step and
// destination.
func detailJSON(res markdown.Resolution) any {
	d := markdown.Resolution{Candidates: res.Candidates, SamePage: res.SamePage, MissingHeading: res.MissingHeading, MissingBlock: res.MissingBlock}
	if d.Candidates == nil && !d.SamePage && !d.MissingHeading && !d.MissingBlock {
		return nil
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// resolveLinks resolves every dirty link again and records what changed.
func (u *update) resolveLinks(ctx context.Context) error {
	keys := make([]linkKey, 0, len(u.dirtyLinks))
	for k := range u.dirtyLinks {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b linkKey) int {
		if a.src != b.src {
			return int(a.src - b.src)
		}
		return a.ord - b.ord
	})
	for _, k := range keys {
		r, err := scanLink(u.q.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM links WHERE src = ? AND ord = ?`, k.src, k.ord))
		if errors.Is(err, sql.ErrNoRows) {
			continue // its page went away
		}
		if err != nil {
			return err
		}
		res, dst, err := u.resolve(ctx, r.src, r.link)
		if err != nil {
			return err
		}
		if res.Status == r.res.Status && dst == r.dst && detailJSON(res) == detailJSON(r.res) && res.Step == r.res.Step {
			continue
		}
		var dstArg any
		if dst != 0 {
			dstArg = dst
		}
		if err := u.w.exec(ctx, `UPDATE links SET status = ?, dst = ?, step = ?, detail = ? WHERE src = ? AND ord = ?`,
			statusCodes[res.Status], dstArg, int(res.Step), detailJSON(res), k.src, k.ord); err != nil {
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
		if err := u.w.exec(ctx, `UPDATE files SET inbound = inbound + ? WHERE id = ?`, d, id); err != nil {
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
		if err := u.collect(ctx, `SELECT id FROM files WHERE kind IN (1, 2) AND id > ?`, 0, u.dirtyFiles); err != nil {
			return err
		}
	}
	ids := make([]int64, 0, len(u.dirtyFiles))
	for id := range u.dirtyFiles {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	cfg := v.config()
	for _, id := range ids {
		var f *lint.Facts
		var err error
		if rows, ok := u.linkRows[id]; ok {
			f, err = u.cachedFacts(ctx, id, rows, v)
		} else {
			f, err = sqlFacts(ctx, u.q, id, v, u.holdersOf)
		}
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		if err := u.w.dropFindings(ctx, id); err != nil {
			return err
		}
		if err := u.w.writeFindings(ctx, id, lint.Check(f, cfg)); err != nil {
			return err
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
		if err := w.insert(ctx, `INSERT INTO findings (file, rule, severity, subject, message) VALUES `,
			id, f.Rule, string(f.Severity), f.Subject, f.Message); err != nil {
			return err
		}
	}
	return nil
}

// parseAll reads and parses entries: content is read in bulk and parsed on
// every core. Purged content is indexed as empty. each, when set, is called
// with every parsed file as soon as it is ready, possibly concurrently.
func parseAll(ctx context.Context, t trees, entries []cairn.Entry, each func(int, *file)) ([]*file, error) {
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
			out[i] = parse(entries[i], data)
			if each != nil {
				each(i, out[i])
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
		out[i] = parse(entries[i], data)
		if each != nil {
			each(i, out[i])
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

// cachedFacts is sqlFacts for a page whose links are in linkRows.
func (u *update) cachedFacts(ctx context.Context, id int64, rows []linkRow, v vault) (*lint.Facts, error) {
	p, kind, path, err := pageRow(ctx, u.q, id)
	if err != nil {
		return nil, err
	}
	f := &lint.Facts{Path: path, Kind: kind, Page: p, HasIndex: v.index != 0}
	var depth sql.NullInt64
	if err := u.q.QueryRowContext(ctx, `SELECT inbound, depth FROM files WHERE id = ?`, id).Scan(&f.Inbound, &depth); err != nil {
		return nil, err
	}
	f.Reachable = depth.Valid
	for _, r := range rows {
		res := r.res
		if r.dst != 0 && (res.MissingHeading || res.MissingBlock || res.Chosen()) {
			if err := u.q.QueryRowContext(ctx, `SELECT path FROM files WHERE id = ?`, r.dst).Scan(&res.Path); err != nil {
				return nil, err
			}
		}
		f.Links = append(f.Links, lint.Link{Link: r.link, Res: res})
	}
	return f, pageFacts(ctx, f, u.holdersOf)
}
