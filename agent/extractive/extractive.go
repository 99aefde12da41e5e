package extractive

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"cairn"
	"cairn/agent"
	"cairn/index"
	"cairn/store"
)

// Name is the runtime's name, agent.runtime's default.
const Name = agent.DefaultRuntime

func init() {
	agent.Register(agent.Factory{
		Name: Name,
		Help: "offline, no key",
		New: func(env agent.Env) (agent.Runtime, error) {
			return &Runtime{Store: env.Store, Index: env.Index}, nil
		},
	})
}

// Runtime is the default runtime: offline, deterministic, no key. It
// writes an extractive summary of the source (Extract) through a draft in
// the store; it needs no folder, and no setting.
type Runtime struct {
	Store *store.Store
	Index *index.Index
}

var _ agent.Runtime = (*Runtime)(nil)

// Name returns "extractive".
func (x *Runtime) Name() string { return Name }

// Run summarizes the task's source on its base commit.
func (x *Runtime) Run(ctx context.Context, t *agent.Task) (*agent.Result, error) {
	c, err := x.Store.ReadCommit(ctx, t.Base)
	if err != nil {
		return nil, fmt.Errorf("extractive agent: %w", err)
	}
	titles, err := x.Index.Main().Titles(ctx)
	if err != nil {
		return nil, fmt.Errorf("extractive agent: read titles: %w", err)
	}
	pages := make([]PageRef, 0, len(titles))
	// The names existing pages answer to: a new summary must not take one,
	// or links that meant those pages would lead to it, or grow ambiguous.
	names := map[string]bool{}
	for _, ti := range titles {
		pages = append(pages, PageRef{Path: ti.Path, Title: ti.Title, Aliases: ti.Aliases, Type: ti.Type})
		names[cairn.FoldPath(strings.TrimSuffix(path.Base(ti.Path), ".md"))] = true
		names[cairn.FoldPath(ti.Title)] = true
		for _, a := range ti.Aliases {
			names[cairn.FoldPath(a)] = true
		}
	}
	read := func(path string) ([]byte, error) {
		e, err := x.Store.Get(ctx, c.Tree, path)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := x.Store.ReadBlob(ctx, e.Blob)
		if data == nil && err == nil {
			data = []byte{} // present but empty: not the same as absent
		}
		return data, err
	}
	idx, err := read("index.md")
	if err != nil {
		return nil, err
	}
	sumIdx, err := read("summaries/index.md")
	if err != nil {
		return nil, err
	}
	var sources []string // the files under raw/: their slugs are not free
	for e, err := range x.Store.Files(ctx, c.Tree, "raw/") {
		if err != nil {
			return nil, fmt.Errorf("extractive agent: list raw/: %w", err)
		}
		sources = append(sources, e.Path)
	}
	out, err := Extract(Input{
		Source: t.Source, Pages: pages, Index: idx, SummariesIndex: sumIdx, Date: t.Date, Sources: sources,
		Taken: func(p string) bool {
			if names[cairn.FoldPath(strings.TrimSuffix(path.Base(p), ".md"))] {
				return true
			}
			_, err := x.Store.GetFold(ctx, c.Tree, p)
			return err == nil
		},
	})
	if err != nil {
		return nil, &agent.Failure{Reason: "input", Message: err.Error()}
	}
	var edits []store.FileChange
	paths := make([]string, 0, len(out.Files))
	for p := range out.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		edits = append(edits, store.FileChange{Path: p, Data: out.Files[p]})
		if t.Activity != nil {
			t.Activity("file", p)
		}
	}
	b := x.Store.NewBatch()
	tree, err := b.Edit(ctx, c.Tree, edits)
	if err != nil {
		return nil, fmt.Errorf("extractive agent: %w", err)
	}
	if tree == c.Tree {
		return nil, &agent.Failure{Reason: "empty", Message: "the extractive agent changed nothing"}
	}
	return &agent.Result{Batch: b, Tree: tree, Summary: out.Summary, Mode: "store"}, nil
}
