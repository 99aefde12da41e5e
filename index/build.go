package index

import (
	"context"
	"fmt"

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
		if err := build(ctx, tx.SQL(), tx, tree); err != nil {
			return err
		}
		return writeState(ctx, tx.SQL(), State{Commit: head, Tree: tree})
	})
}

// build replaces the whole index with the index of tree, computed in
// memory: every link resolved with a markdown.Resolver, reachability by one
// breadth-first search.
func build(ctx context.Context, q dbtx, t trees, tree cairn.Hash) error {
	for _, stmt := range []string{
		`DELETE FROM files`, `DELETE FROM keys`, `DELETE FROM links`, `DELETE FROM link_keys`,
		`DELETE FROM cites`, `DELETE FROM findings`, `INSERT INTO fts (fts) VALUES ('delete-all')`,
	} {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("index: clear: %w", err)
		}
	}
	var entries []cairn.Entry
	for e, err := range t.Files(ctx, tree, "") {
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	files, err := parseAll(ctx, t, entries)
	if err != nil {
		return err
	}
	ids := make(map[string]int64, len(files))
	var pages []*markdown.Page
	var attachments []string
	for _, f := range files {
		if err := writeFile(ctx, q, f); err != nil {
			return err
		}
		ids[f.path] = f.id
		if f.page != nil {
			pages = append(pages, f.page)
		} else {
			attachments = append(attachments, f.path)
		}
	}
	r := markdown.NewResolver(pages, attachments)
	holders := func(_ context.Context, k markdown.Key) ([]string, error) { return r.Holders(k), nil }

	// Resolve every link; count inbound links; collect the graph.
	inbound := map[int64]int{}
	edges := map[int64][]int64{}
	resolved := map[int64][]markdown.Resolution{}
	for _, f := range files {
		if f.page == nil {
			continue
		}
		res := make([]markdown.Resolution, len(f.page.Links))
		dsts := make([]int64, len(f.page.Links))
		for i, l := range f.page.Links {
			res[i] = r.Resolve(f.page, l)
			if res[i].Status == markdown.StatusResolved {
				dsts[i] = ids[res[i].Path]
				if dsts[i] != f.id {
					inbound[dsts[i]]++
					edges[f.id] = append(edges[f.id], dsts[i])
				}
			}
		}
		resolved[f.id] = res
		if err := writeLinks(ctx, q, f, res, dsts); err != nil {
			return err
		}
	}
	v, err := readVault(ctx, q)
	if err != nil {
		return err
	}
	var depth map[int64]int
	if v.index != 0 {
		depth = bfs(v.index, edges)
	}
	for id, n := range inbound {
		if _, err := q.ExecContext(ctx, `UPDATE files SET inbound = ? WHERE id = ?`, n, id); err != nil {
			return err
		}
	}
	for id, d := range depth {
		if err := setDepth(ctx, q, id, d); err != nil {
			return err
		}
	}
	cfg := v.config()
	for _, f := range files {
		facts := &lint.Facts{Path: f.path, Kind: f.kind, Page: f.page, HasIndex: v.index != 0}
		if f.page != nil {
			facts.Inbound = inbound[f.id]
			_, facts.Reachable = depth[f.id]
			for i, l := range f.page.Links {
				facts.Links = append(facts.Links, lint.Link{Link: l, Res: resolved[f.id][i]})
			}
			if err := pageFacts(ctx, facts, holders); err != nil {
				return err
			}
		}
		if fs := lint.Check(facts, cfg); len(fs) > 0 {
			if err := writeFindings(ctx, q, f.id, fs); err != nil {
				return err
			}
		}
	}
	return nil
}
