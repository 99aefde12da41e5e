package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"cairn"
	"cairn/admit"
	"cairn/index"
	"cairn/store"
)

// Reindexed is what rebuilding main's index found.
type Reindexed struct {
	Stats index.Stats `json:"stats"`
	// Took is how long the rebuild took.
	Took time.Duration `json:"took"`
}

// Reindex throws main's derived index (links, full text, lint) away and
// builds it again from main's head. A vault busy with another process's
// write gives EUNAVAILABLE, naming the process.
func (a *App) Reindex(ctx context.Context) (*Reindexed, error) {
	defer a.v.MarkBusy("cairn reindex")()
	start := a.now()
	if err := a.v.Index.Rebuild(ctx); err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	st, err := a.v.Index.Main().Stats(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the index's counts: %w", err)
	}
	return &Reindexed{Stats: st, Took: a.now().Sub(start)}, nil
}

// DoctorOptions configure Doctor. The zero value checks everything.
type DoctorOptions struct {
	// Quick compares only the index's files with main's tree, not every
	// derived row. Default false.
	Quick bool
}

// Problem is one thing Doctor found wrong.
type Problem struct {
	// ID names the problem within one report: its area and its number.
	ID string `json:"id"`
	// Area is what is wrong: store, index, worktree, admission, sources.
	Area    string `json:"area"`
	Problem string `json:"problem"`
}

// DoctorReport is what Doctor checked and found.
type DoctorReport struct {
	// Problems are what is wrong, in the order checked; none when the
	// vault is well.
	Problems []Problem `json:"problems"`
	// Commits, Nodes and Blobs count the objects checked; Purged the
	// contents purged on purpose (not a problem).
	Commits int `json:"commits"`
	Nodes   int `json:"nodes"`
	Blobs   int `json:"blobs"`
	Purged  int `json:"purged"`
	// Repaired is what opening the vault put right before the checks.
	Repaired []string `json:"repaired"`
}

// OK reports whether Doctor found no problem.
func (r *DoctorReport) OK() bool { return len(r.Problems) == 0 }

// Doctor checks the vault: every object reachable from a branch, tag or pin
// (its hash and encoding), the index against main's head, each working
// tree (its folder exists and holds its branch's head), every proposal, and
// every source (its status is its proposal's; a queued or running one has a
// live job). What it finds wrong is in the report, not an error; an error
// means a check could not run.
func (a *App) Doctor(ctx context.Context, opts DoctorOptions) (*DoctorReport, error) {
	r := &DoctorReport{Repaired: a.v.Repaired}
	add := func(area, msg string) {
		r.Problems = append(r.Problems, Problem{ID: fmt.Sprintf("%s-%d", area, len(r.Problems)+1), Area: area, Problem: msg})
	}
	rep, err := a.v.Store.Verify(ctx)
	if err != nil {
		return nil, fmt.Errorf("check the store: %w", err)
	}
	r.Commits, r.Nodes, r.Blobs, r.Purged = rep.Commits, rep.Nodes, rep.Blobs, rep.Purged
	for _, p := range rep.Problems {
		add("store", p)
	}
	drift, err := a.v.Index.Check(ctx, !opts.Quick)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	for _, p := range drift.Problems {
		add("index", p)
	}
	trees, err := a.v.Trees.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the working trees: %w", err)
	}
	for _, p := range a.v.Problems {
		add("worktree", p)
	}
	for _, t := range trees {
		if _, err := os.Stat(t.Path); err != nil {
			add("worktree", fmt.Sprintf("%s is registered but missing: %v", t.Path, err))
		}
		head, err := a.v.Store.Head(ctx, t.Branch)
		if !t.Pending.IsZero() || err == nil && head != t.Base {
			// A command may be syncing the folder now: look again under
			// the tree's lock, and not at all while another holds it.
			u, unlock, lerr := a.v.Trees.Settled(ctx, t)
			if lerr != nil {
				return nil, fmt.Errorf("check the working tree %s: %w", t.Path, lerr)
			}
			if u == nil {
				continue
			}
			t = u
			head, err = a.v.Store.Head(ctx, t.Branch)
			unlock()
		}
		if !t.Pending.IsZero() {
			add("worktree", fmt.Sprintf("%s has an unfinished sync to %s (any command run there finishes it)", t.Path, t.Pending.Short()))
		}
		switch {
		case err != nil:
			add("worktree", fmt.Sprintf("%s holds branch %s, which does not exist", t.Path, t.Branch))
		case head != t.Base && t.Pending.IsZero() && !slices.ContainsFunc(a.v.Problems, func(p string) bool { return strings.HasPrefix(p, t.Path+" ") }):
			add("worktree", fmt.Sprintf("%s is behind its branch %s (the folder holds %s, the branch is at %s); another process is updating it, or the next command will",
				t.Path, t.Branch, t.Base.Short(), head.Short()))
		}
	}
	admitted, err := a.v.Admit.Check(ctx)
	if err != nil {
		return nil, fmt.Errorf("check the proposals: %w", err)
	}
	for _, p := range admitted {
		add("admission", p)
	}
	sources, err := a.doctorSources(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range sources {
		add("sources", p)
	}
	return r, nil
}

// doctorSources checks the sources against their proposals and jobs, on
// the App's job queue (which runs nothing unless a worker starts it).
func (a *App) doctorSources(ctx context.Context) ([]string, error) {
	if _, err := a.jobQueue(ctx); err != nil {
		return nil, fmt.Errorf("open the job queue: %w", err)
	}
	out, err := a.ingest.Check(ctx)
	if err != nil {
		return nil, fmt.Errorf("check the sources: %w", err)
	}
	return out, nil
}

// GCOptions configure GC. The zero value collects what is unreachable and
// older than an hour.
type GCOptions struct {
	// Grace spares unreachable objects younger than it, and ref values
	// logged within it, so a running import or a reader of an old head is
	// never cut short. Default one hour; negative means none.
	Grace time.Duration
	// Now drops the grace period (only safe when no other process
	// writes). Default false.
	Now bool
	// DryRun counts what would be deleted and deletes nothing.
	DryRun bool
}

// Collected is what GC removed (or, with DryRun, would remove).
type Collected struct {
	store.GCStats
	DryRun bool `json:"dry_run"`
}

// GC deletes the objects no branch, tag, pin or recent ref value reaches
// (abandoned branches and drafts; history is never collected). A vault busy
// with another process's write gives EUNAVAILABLE, naming the process.
func (a *App) GC(ctx context.Context, opts GCOptions) (*Collected, error) {
	defer a.v.MarkBusy("cairn gc")()
	so := &store.GCOptions{Grace: opts.Grace, DryRun: opts.DryRun}
	if opts.Now {
		so.Grace = -1
	}
	st, err := a.v.Store.GC(ctx, so)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	return &Collected{GCStats: st, DryRun: opts.DryRun}, nil
}

// Purged is what Purge removed.
type Purged struct {
	// Blob is the content purged: every commit that holds it now reads it
	// as purged.
	Blob   cairn.Hash `json:"blob"`
	Path   string     `json:"path"`
	At     string     `json:"at"`
	Reason string     `json:"reason"`
	// Reindexed is set when main's head held the content, so its index
	// was rebuilt to drop the content's words.
	Reindexed bool `json:"reindexed,omitempty"`
}

// Purge removes the content path has at revision at from the database, in
// every commit that holds the same content, without rewriting history, as
// the principal's decision for reason (recorded). It needs a principal
// (EUNAUTHORIZED); an empty path, at or reason is refused (EINVALID); a
// revision or path that does not exist gives ENOTFOUND. Working trees keep
// their files.
func (a *App) Purge(ctx context.Context, path, at, reason string) (*Purged, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if path == "" || at == "" || strings.TrimSpace(reason) == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "a purge needs a path, the revision whose content to purge and a reason").
			WithHint("Try: cairn purge PATH --at REF --reason WHY")
	}
	h, err := a.v.Store.PurgePath(ctx, at, path, p, reason)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	res := &Purged{Blob: h, Path: path, At: at, Reason: reason}
	// The index may hold the page's words: index it again.
	head, err := a.v.Store.Head(ctx, admit.Branch)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return res, nil
		}
		return nil, fmt.Errorf("purge %s: read main: %w", path, err)
	}
	tree, err := a.TreeOf(ctx, head)
	if err != nil {
		return nil, fmt.Errorf("purge %s: read main: %w", path, err)
	}
	if e, err := a.v.Store.Get(ctx, tree, path); err == nil && e.Blob == h {
		if err := a.v.Index.Rebuild(ctx); err != nil {
			return nil, fmt.Errorf("purge %s: reindex main: %w", path, a.v.ExplainBusy(err))
		}
		res.Reindexed = true
	}
	return res, nil
}
