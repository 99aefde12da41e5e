package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
	"cairn/store"
)

// update is the state of one incremental update: what changed and what it
// affects.
type update struct {
	q       dbtx
	t       trees
	holders map[markdown.Key][]string // cache of key → holder paths
	ids     map[string]int64          // cache of path → file id
	paths   map[int64]string          // cache of file id → path
	pages   map[int64]*markdown.Page  // cache of page rows, for headings

	values     map[string]bool // key values whose holders changed
	dirtyLinks map[int64]bool  // links to resolve again
	dirtyFiles map[int64]bool  // files whose findings to compute again
	removed    []edge          // edges that went away
	added      []edge          // edges that appeared
	gone       map[int64]int   // depths of deleted files
	relintAll  bool
}

// apply changes the index from tree from to tree to.
func (ix *Index) apply(ctx context.Context, q dbtx, t trees, from, to cairn.Hash) error {
	if from == to {
		return nil
	}
	changes, err := t.Diff(ctx, from, to, &store.DiffOptions{NoRenames: true})
	if err != nil {
		return fmt.Errorf("index: diff: %w", err)
	}
	u := &update{
		q: q, t: t,
		holders: map[markdown.Key][]string{}, ids: map[string]int64{}, paths: map[int64]string{}, pages: map[int64]*markdown.Page{},
		values: map[string]bool{}, dirtyLinks: map[int64]bool{}, dirtyFiles: map[int64]bool{}, gone: map[int64]int{},
	}
	before, err := u.vaultFacts(ctx)
	if err != nil {
		return err
	}
	// Take out what the old versions put in.
	keep := map[string]int64{} // modified files keep their ids
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
		values, edges, err := deleteFileData(ctx, q, id, kind)
		if err != nil {
			return err
		}
		u.addValues(values)
		u.removed = append(u.removed, edges...)
		if c.Kind == cairn.Deleted {
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
		// Links into a changed page must check their heading again.
		if err := u.collect(ctx, `SELECT id FROM links WHERE dst = ? AND (heading != '' OR block != '')`, id, u.dirtyLinks); err != nil {
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
	files, err := parseAll(ctx, t, entries)
	if err != nil {
		return err
	}
	for _, f := range files {
		f.id = keep[f.path]
		if err := writeFile(ctx, q, f); err != nil {
			return err
		}
		if f.page != nil {
			if err := writeLinks(ctx, q, f, nil, nil); err != nil {
				return err
			}
		}
		u.ids[f.path], u.paths[f.id] = f.id, f.path
		delete(u.pages, f.id)
		for _, k := range f.keys() {
			u.values[k.Value] = true
		}
		u.dirtyFiles[f.id] = true
		if err := u.collect(ctx, `SELECT id FROM links WHERE src = ?`, f.id, u.dirtyLinks); err != nil {
			return err
		}
	}
	// Links that look up a value whose holders changed; pages whose title,
	// alias or id clash may have changed; pages citing a file that came or
	// went.
	for v := range u.values {
		if err := u.collect(ctx, `SELECT link FROM link_keys WHERE value = ?`, v, u.dirtyLinks); err != nil {
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
	if after != before {
		u.relintAll = true
	}
	if err := u.reach(ctx, before, after); err != nil {
		return err
	}
	return u.relint(ctx, after)
}

// vault is what findings depend on vault-wide.
type vault struct {
	index    int64 // the file id of the root index.md page, 0 if none
	contract bool  // cairn.yaml or eva.json at the root
}

func (u *update) vaultFacts(ctx context.Context) (vault, error) {
	return readVault(ctx, u.q)
}

func readVault(ctx context.Context, q dbtx) (vault, error) {
	var v vault
	err := q.QueryRowContext(ctx, `SELECT id FROM files WHERE path = 'index.md' COLLATE NOCASE AND kind = ?`, int(lint.KindPage)).Scan(&v.index)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return v, err
	}
	var n int
	err = q.QueryRowContext(ctx, `SELECT count(*) FROM files WHERE path IN ('cairn.yaml', 'eva.json') COLLATE NOCASE`).Scan(&n)
	v.contract = n > 0
	return v, err
}

func (v vault) config() *lint.Config { return &lint.Config{Contract: v.contract} }

func (u *update) addValues(vs []string) {
	for _, v := range vs {
		u.values[v] = true
	}
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
	var id int64
	var kind int
	err := u.q.QueryRowContext(ctx, `SELECT id, kind FROM files WHERE path = ?`, path).Scan(&id, &kind)
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
	id, src int64
	link    markdown.Link
	res     markdown.Resolution
	dst     int64
}

const linkColumns = `id, src, kind, raw, target, heading, block, label, path, flags, property, line, col, status, dst, step, detail`

func scanLink(sc interface{ Scan(...any) error }) (linkRow, error) {
	var r linkRow
	var kind, status string
	var flags, step int
	var dst sql.NullInt64
	var detail sql.NullString
	l := &r.link
	err := sc.Scan(&r.id, &r.src, &kind, &l.Raw, &l.Target, &l.Heading, &l.Block, &l.Label, &l.Path, &flags, &l.Property,
		&l.Line, &l.Col, &status, &dst, &step, &detail)
	if err != nil {
		return r, err
	}
	l.Kind, l.Embed, l.Escapes = markdown.LinkKind(kind), flags&1 != 0, flags&2 != 0
	r.res.Status, r.res.Step, r.dst = markdown.Status(status), markdown.Step(step), dst.Int64
	if detail.Valid {
		if err := json.Unmarshal([]byte(detail.String), &r.res); err != nil {
			return r, err
		}
		r.res.Status, r.res.Step = markdown.Status(status), markdown.Step(step)
	}
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
	ids := make([]int64, 0, len(u.dirtyLinks))
	for id := range u.dirtyLinks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r, err := scanLink(u.q.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM links WHERE id = ?`, id))
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
		if _, err := u.q.ExecContext(ctx, `UPDATE links SET status = ?, dst = ?, step = ?, detail = ? WHERE id = ?`,
			string(res.Status), dstArg, int(res.Step), detailJSON(res), id); err != nil {
			return err
		}
		u.dirtyFiles[r.src] = true
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
	var qerr error
	res := markdown.Match(markdown.LookupKeys(l), func(k markdown.Key) []string {
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
	if lint.Classify(res.Path) == lint.KindPage {
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
		if _, err := u.q.ExecContext(ctx, `UPDATE files SET inbound = inbound + ? WHERE id = ?`, d, id); err != nil {
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
		f, err := sqlFacts(ctx, u.q, id, v, u.holdersOf)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		if err := writeFindings(ctx, u.q, id, lint.Check(f, cfg)); err != nil {
			return err
		}
	}
	return nil
}

func writeFindings(ctx context.Context, q dbtx, id int64, fs []lint.Finding) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM findings WHERE file = ?`, id); err != nil {
		return err
	}
	for _, f := range fs {
		if _, err := q.ExecContext(ctx, `INSERT INTO findings (file, rule, severity, subject, message) VALUES (?, ?, ?, ?, ?)`,
			id, f.Rule, string(f.Severity), f.Subject, f.Message); err != nil {
			return err
		}
	}
	return nil
}

// parseAll reads and parses entries, on every core when there are many.
func parseAll(ctx context.Context, t trees, entries []cairn.Entry) ([]*file, error) {
	out := make([]*file, len(entries))
	workers := 1
	if len(entries) > 16 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(entries); i += workers {
				data, err := t.ReadBlob(ctx, entries[i].Blob)
				if err != nil {
					if !errors.Is(err, cairn.ErrPurged) {
						errs[w] = fmt.Errorf("index %s: %w", entries[i].Path, err)
						return
					}
					data = nil // purged content indexes as empty
				}
				out[i] = parse(entries[i], data)
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
