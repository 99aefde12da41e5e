package index

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
	"cairn/store"
)

// Rebuild indexes main's head from scratch in one transaction. It is what
// `cairn reindex` runs; the result equals what the incremental updates
// produce.
func (ix *Index) Rebuild(ctx context.Context) error {
	return ix.s.Update(ctx, func(tx *store.Tx) error {
		head, err := tx.Head(ctx, Branch)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return err
		}
		tree := store.EmptyTree
		if !head.IsZero() {
			c, err := tx.ReadCommit(ctx, head)
			if err != nil {
				return err
			}
			tree = c.Tree
		}
		return ix.inTx(ctx, tx, func(q StorageTx) error {
			if err := build(ctx, q, tx, tree); err != nil {
				return err
			}
			return q.SetState(ctx, State{Commit: head, Tree: tree})
		})
	})
}

// build replaces the whole index with the index of tree. Pages are read and
// parsed on every core; links are resolved (markdown.Resolver) and rows
// prepared on every core; rows are written in key order, and the storage
// finishes the build (secondary indexes, merging the full text) last.
func build(ctx context.Context, q StorageTx, t trees, tree cairn.Hash) error {
	if err := q.Clear(ctx); err != nil {
		return err
	}
	var entries []cairn.Entry
	for e, err := range t.Files(ctx, tree, "") {
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	first, err := q.NextFileID(ctx)
	if err != nil {
		return err
	}
	w := newWriter(q)
	w.bulk = true

	files, err := parseAll(ctx, t, entries, nil)
	if err != nil {
		return err
	}
	for i, f := range files {
		f.id = first + int64(i)
	}

	var v vault
	for _, f := range files {
		if f.path == policyFile {
			data, err := t.ReadBlob(ctx, f.blob)
			if err != nil && !errors.Is(err, cairn.ErrPurged) {
				return fmt.Errorf("index: read %s: %w", policyFile, err)
			}
			v.strict = lintSettings(data).Strict
		}
	}

	// Full text needs only the parsed pages: it is written while the other
	// cores resolve links and prepare rows, the database's one writer being
	// otherwise idle then. One page a call and nothing in between, so that
	// a full-text engine that buffers (FTS5) keeps every page in memory and
	// writes large segments.
	text := make(chan error, 1)
	go func() {
		for _, f := range files {
			if f.page != nil {
				if err := w.writeText(ctx, f); err != nil {
					text <- fmt.Errorf("index: full text: %w", err)
					return
				}
			}
		}
		text <- nil
	}()
	// Nothing below returns before text is received: the writer must not
	// be in use when build returns.

	// Resolve links and prepare rows on every core.
	ids := make(map[string]int64, len(files))
	var pages []*markdown.Page
	var attachments []string
	for _, f := range files {
		ids[f.path] = f.id
		if f.page != nil {
			pages = append(pages, f.page)
		} else {
			attachments = append(attachments, f.path)
		}
		switch {
		case f.kind == lint.KindPage && equalFold(f.path, "index.md"):
			v.index = f.id
		case equalFold(f.path, "eva.json"):
			v.eva = true
		}
	}
	r := markdown.NewResolver(pages, attachments)
	resolved := make([][]markdown.Resolution, len(files))
	dsts := make([][]int64, len(files))
	parallel(len(files), func(i int) {
		f := files[i]
		if f.page == nil {
			return
		}
		resolved[i] = make([]markdown.Resolution, len(f.page.Links))
		dsts[i] = make([]int64, len(f.page.Links))
		for j, l := range f.page.Links {
			resolved[i][j] = r.Resolve(f.page, l)
			if resolved[i][j].Status == markdown.StatusResolved {
				dsts[i][j] = ids[resolved[i][j].Path]
			}
		}
	})
	inbound := map[int64]int{}
	edges := map[int64][]int64{}
	for i, f := range files {
		for _, d := range dsts[i] {
			if d != 0 && d != f.id {
				inbound[d]++
				edges[f.id] = append(edges[f.id], d)
			}
		}
	}
	var depth map[int64]int
	if v.index != 0 {
		depth = bfs(v.index, edges)
	}
	cfg := v.config()
	holders := func(_ context.Context, k markdown.Key) ([]string, error) { return r.Holders(k), nil }
	workers := make([]*writer, runtime.GOMAXPROCS(0))
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	// Each worker takes a contiguous run of files, so that the rows of
	// files and links, taken in worker order, are already in key order
	// and sorting them costs one pass.
	chunk := (len(files) + len(workers) - 1) / len(workers)
	for n := range workers {
		pw := &writer{bulk: true}
		workers[n] = pw
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n * chunk; i < min((n+1)*chunk, len(files)) && errs[n] == nil; i++ {
				errs[n] = prepareRows(ctx, pw, files[i], resolved[i], dsts[i], inbound, depth, v, cfg, holders)
			}
			pw.sortAll()
		}()
	}
	wg.Wait()
	if err := <-text; err != nil {
		return err
	}
	for n, pw := range workers {
		if errs[n] != nil {
			return errs[n]
		}
		w.take(pw)
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	return q.FinishBuild(ctx)
}

// prepareRows collects one file's rows in a bulk writer: the file, its
// keys, citations and links, and its findings.
func prepareRows(ctx context.Context, w *writer, f *file, res []markdown.Resolution, dsts []int64,
	inbound map[int64]int, depth map[int64]int, v vault, cfg *lint.Config, holders holdersFunc) error {
	d, reachable := depth[f.id]
	if !reachable {
		d = unreachable
	}
	if err := w.insertFile(ctx, f, inbound[f.id], d); err != nil {
		return err
	}
	facts := &lint.Facts{Path: f.path, Kind: f.kind, Page: f.page, HasIndex: v.index != 0}
	if f.page != nil {
		if err := w.writeLinks(ctx, f, res, dsts); err != nil {
			return err
		}
		facts.Inbound, facts.Reachable = inbound[f.id], reachable
		for i, l := range f.page.Links {
			l.Raw = rawLink(l) // as the index stores it
			facts.Links = append(facts.Links, lint.Link{Link: l, Res: res[i]})
		}
		if err := pageFacts(ctx, facts, holders); err != nil {
			return err
		}
	}
	if fs := lint.Check(facts, cfg); len(fs) > 0 {
		return w.writeFindings(ctx, f.id, fs)
	}
	return nil
}

// parallel calls fn(i) for i in [0, n) on every core.
func parallel(n int, fn func(int)) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
