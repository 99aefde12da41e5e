package app

import (
	"context"
	"time"

	"cairn/ingest"
)

// IngestOptions configure Ingest and IngestBytes. The zero value stores
// and queues the sources, then runs their jobs here until each source has
// a verdict.
type IngestOptions struct {
	// Detach only stores and queues: a worker (StartWorker, RunWorker)
	// runs the jobs.
	Detach bool
	// Added, when set, is called once the sources are stored and queued,
	// before any job runs, with what was done with each file.
	Added func(added []*ingest.Added)
	// Progress, when set, is called while the jobs run here: with
	// (0, total) before they start, then with how many of the total
	// sources waited for have a verdict (or wait for a job that is gone),
	// each time it is checked.
	Progress func(done, total int)
	// Event, when set, receives the events recorded from just before the
	// sources were stored until the jobs run here have stopped, in order.
	// Nothing is reported when no job runs here (Detach, or nothing to
	// wait for).
	Event func(*Event)
}

// IngestResult is where the sources of an ingest ended.
type IngestResult struct {
	// Files are the files (or named contents) given, in order.
	Files []*IngestedFile `json:"files"`
	// Queued is how many sources were queued now.
	Queued int `json:"queued"`
	// Before is how many sources queued before (by an ingest that was
	// interrupted, or detached) whose jobs had not finished this ingest
	// took up: it ran them, or with Detach left them to a worker.
	Before int `json:"before"`
	// Counts are how many of the sources this ingest is about (those
	// recorded now, and those it took up) ended in each status.
	Counts map[string]int `json:"counts"`
	// Refused reports whether any file's Refused is set.
	Refused bool `json:"refused"`
}

// IngestedFile is what an ingest did with one file, and where its source
// ended.
type IngestedFile struct {
	// Added is what storing it did; Added.Source is the source as it
	// ended, read again (with its history) when Tracked.
	ingest.Added
	// Tracked is set when the ingest is about the source's job: queued
	// now, or queued before and not finished.
	Tracked bool `json:"tracked"`
	// Stuck, for a tracked source still queued or running, says why no
	// job will run it (RetrySource queues it again).
	Stuck string `json:"stuck,omitempty"`
	// Refused is set when the source did not merge: it was held,
	// rejected or failed now, it is content on record that stays
	// rejected or failed, or it is stuck.
	Refused bool `json:"refused"`
}

// Ingest stores files (local paths) as sources under raw/ as the
// principal in ctx, commits them to main, records them and queues their
// jobs, in one transaction (see ingest.Service.Add); then, unless
// opts.Detach, it runs the jobs here until each source it is about has a
// verdict, or its job is gone. A source queued before whose job has not
// finished is not queued again: its job runs here too. A file that cannot
// be a source is recorded as a failed source, not an error. No files, or
// a missing file or a folder, is EINVALID and nothing changes; no
// principal is EUNAUTHORIZED; when ctx ends while jobs run, the sources
// not finished stay queued and ctx's error is returned.
func (a *App) Ingest(ctx context.Context, files []string, opts IngestOptions) (*IngestResult, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.runIngest(ctx, opts, func(ctx context.Context) ([]*ingest.Added, error) {
		return a.ingest.Add(ctx, files, p)
	})
}

// IngestData is Ingest for contents given with file names rather than
// read from local paths (what an HTTP or MCP client uploads), stored in
// one transaction: the same checks apply as to files of those names (name
// rules, NFC, size, format, binary or empty content), and content on
// record is not ingested again. No items, or an item without a name, is
// EINVALID and nothing changes.
func (a *App) IngestData(ctx context.Context, items []ingest.Data, opts IngestOptions) (*IngestResult, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	return a.runIngest(ctx, opts, func(ctx context.Context) ([]*ingest.Added, error) {
		return a.ingest.AddData(ctx, items, p)
	})
}

// runIngest adds sources with add, then runs and waits for their jobs.
func (a *App) runIngest(ctx context.Context, opts IngestOptions, add func(context.Context) ([]*ingest.Added, error)) (*IngestResult, error) {
	if _, err := a.jobQueue(ctx); err != nil {
		return nil, err
	}
	since, err := a.LastEvent(ctx)
	if err != nil {
		return nil, err
	}
	added, err := add(ctx)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	if opts.Added != nil {
		opts.Added(added)
	}
	// Wait for the sources queued now, and for those queued before (by an
	// ingest that was killed, or detached) whose jobs have not finished:
	// their jobs run here too.
	var wait []string
	queued, before := 0, 0
	seen := map[string]bool{}
	for _, ad := range added {
		if seen[ad.Source.ID] || !ad.Queued && !pending(ad) {
			continue
		}
		seen[ad.Source.ID] = true
		wait = append(wait, ad.Source.ID)
		if ad.Queued {
			queued++
		} else {
			before++
		}
	}
	if opts.Detach || len(wait) == 0 {
		return a.ingestResult(ctx, added, queued, before), nil
	}
	if opts.Progress != nil {
		opts.Progress(0, len(wait))
	}
	if err := a.ingest.StartJobs(ctx); err != nil {
		return nil, err
	}
	err = a.follow(ctx, &since, opts.Event, func() (bool, error) {
		done := 0
		for _, id := range wait {
			src, err := a.ingest.Get(ctx, id)
			if err != nil {
				return false, err
			}
			if _, stuck := a.ingest.Stuck(ctx, src); final(src.Status) || stuck {
				done++ // a source whose job is gone waits for nothing
			}
		}
		if opts.Progress != nil {
			opts.Progress(done, len(wait))
		}
		return done == len(wait), nil
	})
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := a.ingest.StopJobs(stopCtx); serr != nil && err == nil {
		err = serr
	}
	a.ingest.Flush()
	if err != nil {
		return nil, err
	}
	return a.ingestResult(ctx, added, queued, before), nil
}

// ingestResult reads where every source ended.
func (a *App) ingestResult(ctx context.Context, added []*ingest.Added, queued, before int) *IngestResult {
	res := &IngestResult{Files: []*IngestedFile{}, Queued: queued, Before: before, Counts: map[string]int{}}
	for _, ad := range added {
		f := &IngestedFile{Added: *ad, Tracked: ad.Queued || pending(ad)}
		if f.Tracked {
			if cur, err := a.ingest.Get(ctx, ad.Source.ID); err == nil {
				f.Source = cur
			}
		}
		src := f.Source
		if ad.Note != "" && !f.Tracked && (src.Status == ingest.Rejected || src.Status == ingest.Failed) {
			f.Refused = true // known content that stays refused
		}
		if ad.Note == "" || f.Tracked {
			res.Counts[src.Status]++
			if src.Status != ingest.Merged && (f.Tracked || src.Status == ingest.Failed) && final(src.Status) {
				f.Refused = true
			}
		}
		if why, ok := a.ingest.Stuck(ctx, src); f.Tracked && ok {
			f.Stuck, f.Refused = why, true
		}
		res.Refused = res.Refused || f.Refused
		res.Files = append(res.Files, f)
	}
	return res
}

// final reports whether a source's status is a verdict (or a failure):
// nothing more happens to it unless it is retried.
func final(status string) bool {
	switch status {
	case ingest.Merged, ingest.Held, ingest.Rejected, ingest.Failed:
		return true
	}
	return false
}

// pending reports whether a file's source was queued before and its job
// has not finished: the ingest runs (or waits for) that job.
func pending(ad *ingest.Added) bool {
	return ad.Known && (ad.Source.Status == ingest.Queued || ad.Source.Status == ingest.Running)
}

// SourceFilter selects sources. The zero value gives them all.
type SourceFilter struct {
	// Status keeps the sources of this status: queued, running, merged,
	// held, rejected or failed ("": every source).
	Status string
	// Offset and Limit keep Limit of them from the Offset-th on (Limit
	// 0: all from there).
	Offset, Limit int
}

// SourceList is a part of the sources, newest first, with how many there
// are of the status asked for.
type SourceList struct {
	Sources []*ingest.Source `json:"sources"`
	Total   int              `json:"total"`
}

// Sources returns the sources f selects, newest first, with how many
// there are of its status. An unknown status, or a negative offset or
// limit, is EINVALID. Listing needs no principal.
func (a *App) Sources(ctx context.Context, f SourceFilter) (*SourceList, error) {
	srcs, n, err := a.ingest.List(ctx, f.Status, f.Offset, f.Limit)
	if err != nil {
		return nil, err
	}
	if srcs == nil {
		srcs = []*ingest.Source{}
	}
	return &SourceList{Sources: srcs, Total: n}, nil
}

// Source returns a source with its history, by id (4 or more leading hex
// digits) or name: ENOTFOUND when none matches, EINVALID for an empty or
// ambiguous ref.
func (a *App) Source(ctx context.Context, ref string) (*ingest.Source, error) {
	return a.ingest.Get(ctx, ref)
}

// RetrySource queues a failed or rejected source again (or a queued one
// whose job is gone) as the principal in ctx, and returns it queued: a
// worker runs its job. A source refused at the door, or one whose job
// will still run it, is EINVALID; one whose job is still stopping, or
// that changed meanwhile, is ECONFLICT; nothing changes then. No
// principal is EUNAUTHORIZED.
func (a *App) RetrySource(ctx context.Context, ref string) (*ingest.Source, error) {
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.jobQueue(ctx); err != nil {
		return nil, err
	}
	src, err := a.ingest.Retry(ctx, ref, p)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	return src, nil
}
