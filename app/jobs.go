package app

import (
	"context"
	"slices"
	"sync"
	"time"

	"cairn"
	"cairn/durable"
)

// Job states, as cairn names them (durable's names).
const (
	JobQueued    = durable.StateQueued    // waiting for a worker
	JobScheduled = durable.StateScheduled // waiting for its time
	JobRunning   = durable.StateRunning   // a worker runs it
	JobRetrying  = durable.StateRetrying  // an attempt failed; it runs again after a pause
	JobCompleted = durable.StateCompleted // done
	JobCancelled = durable.StateCancelled // cancelled, or ended by its worker without retrying
	JobFailed    = durable.StateFailed    // it used up its attempts
)

// JobStates returns the job states, in the order a job goes through them.
func JobStates() []string { return slices.Clone(durable.States) }

// Job is a job of the vault's queue with the source it ingests.
type Job struct {
	*durable.Job
	Source string `json:"source,omitempty"` // the source's id
	Name   string `json:"name,omitempty"`   // the source's name
	// Events are what happened to the job's source under this job, its
	// agent's activity among them, in order: set by Job, not by Jobs.
	Events []*Event `json:"events,omitempty"`
}

// maxJobEvents bounds the events Job reads of one job.
const maxJobEvents = 20000

// jobQueue returns the vault's job queue, made once for the App: it runs
// ingest jobs (the ingest service's worker), as many at once as
// Options.Workers or else main's policy says (agent.workers), and an idle
// worker looks for new jobs every 100ms.
func (a *App) jobQueue(ctx context.Context) (*durable.Queue, error) {
	return a.ingest.Queue(ctx, func() (durable.Config, error) {
		cfg := a.ingest.QueueConfig(ctx)
		cfg.PollInterval = 100 * time.Millisecond
		if a.workers > 0 {
			cfg.MaxWorkers = a.workers
		}
		return cfg, nil
	})
}

// job returns j with the source it ingests, when it ingests one.
func (a *App) job(ctx context.Context, j *durable.Job) *Job {
	it := &Job{Job: j}
	if src, err := a.ingest.JobSource(ctx, j); err == nil {
		it.Source, it.Name = src.ID, src.Name
	}
	return it
}

// JobFilter selects jobs. The zero value selects the newest 100.
type JobFilter struct {
	// States keeps the jobs in these states (of JobStates); all when empty.
	States []string
	// Limit is the most jobs returned. Default 100.
	Limit int
}

// Jobs lists the vault's jobs, newest first, each with the source it
// ingests. An unknown state is EINVALID (its hint names the states); a
// negative limit is EINVALID. Listing needs no principal.
func (a *App) Jobs(ctx context.Context, f JobFilter) ([]*Job, error) {
	if f.Limit < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a job list's limit is %d; it cannot be negative", f.Limit).
			WithHint("Give a limit of 1 or more, or 0 for 100.")
	}
	q, err := a.jobQueue(ctx)
	if err != nil {
		return nil, err
	}
	jobs, err := q.Jobs(ctx, f.Limit, f.States...)
	if err != nil {
		return nil, err
	}
	out := make([]*Job, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, a.job(ctx, j))
	}
	return out, nil
}

// Job returns one job with the source it ingests and what happened to the
// source under it (the agent's activity among it); ENOTFOUND when there
// is no such job, EINVALID for an id that is not positive.
func (a *App) Job(ctx context.Context, id int64) (*Job, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	q, err := a.jobQueue(ctx)
	if err != nil {
		return nil, err
	}
	j, err := q.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	it := a.job(ctx, j)
	if it.Source == "" {
		return it, nil
	}
	var after int64
	for n := 0; n < maxJobEvents; {
		rows, err := a.v.Admit.EventsAbout(ctx, it.Source, after, maxEvents)
		if err != nil {
			return nil, err
		}
		for _, ev := range a.events(ctx, rows) {
			if ev.Fields().Job == id {
				it.Events = append(it.Events, ev)
			}
		}
		if len(rows) < maxEvents {
			break
		}
		after, n = rows[len(rows)-1].ID, n+len(rows)
	}
	return it, nil
}

// CancelJob cancels a job as the principal in ctx: a queued one never
// runs, a running one's agent is stopped by its worker within seconds
// (the job returned is then still running); its source is marked failed.
// EINVALID for an id that is not positive, ENOTFOUND for no such job,
// EUNAUTHORIZED without a principal.
func (a *App) CancelJob(ctx context.Context, id int64) (*Job, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.jobQueue(ctx); err != nil {
		return nil, err
	}
	j, err := a.ingest.CancelJob(ctx, id, p)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	return a.job(ctx, j), nil
}

// RetryJob queues the source of job id again, as RetrySource does, and
// returns the job that will run it (the same job, or a new one when the
// queue has forgotten it). A job still running is ECONFLICT and nothing
// changes; EINVALID for an id that is not positive or a source that
// cannot be retried, ENOTFOUND for a job that ingests no source,
// EUNAUTHORIZED without a principal.
func (a *App) RetryJob(ctx context.Context, id int64) (*Job, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	p, err := Principal(ctx)
	if err != nil {
		return nil, err
	}
	q, err := a.jobQueue(ctx)
	if err != nil {
		return nil, err
	}
	src, err := a.ingest.RetryJob(ctx, id, p)
	if err != nil {
		return nil, a.v.ExplainBusy(err)
	}
	j, err := q.Get(ctx, src.Job)
	if err != nil {
		return nil, err
	}
	return &Job{Job: j, Source: src.ID, Name: src.Name}, nil
}

func checkJobID(id int64) error {
	if id <= 0 {
		return cairn.Errorf(cairn.EINVALID, "%d is not a job id (a positive number)", id).WithHint("Try: cairn jobs")
	}
	return nil
}

// Idle reports whether no job is queued, scheduled, running or retrying.
func (a *App) Idle(ctx context.Context) (bool, error) {
	q, err := a.jobQueue(ctx)
	if err != nil {
		return false, err
	}
	jobs, err := q.Jobs(ctx, 1, JobQueued, JobRunning, JobRetrying, JobScheduled)
	return len(jobs) == 0, err
}

// Worker runs the vault's jobs in this process, from StartWorker until
// Stop. Several workers, in this process or others, may run on one vault.
type Worker struct {
	a    *App
	id   string
	once sync.Once
	err  error
	// stopWatch ends the watcher of the vault's working trees, and
	// watched is closed when it has.
	stopWatch context.CancelFunc
	watched   chan struct{}
}

// StartWorker starts running queued jobs in this process (as many at once
// as main's policy says, agent.workers): it records this process as a
// worker and hands the jobs of workers that died back to the queue. Until
// Stop, the process also watches the vault's working trees for whole-tree
// statuses (worktree.Manager.Watch). The
// jobs run until Stop, which the caller must call. Workers of one App
// (and Ingest, while it runs jobs) share its queue: it runs until the last
// of them stops. Jobs act as system, so no principal is needed.
func (a *App) StartWorker(ctx context.Context) (*Worker, error) {
	q, err := a.jobQueue(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.ingest.StartJobs(ctx); err != nil {
		return nil, err
	}
	// While a worker runs, its process journals the working trees'
	// changes, so whole-tree statuses need not walk them (one process
	// at a time does it for a tree).
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	w := &Worker{a: a, id: q.ID(), stopWatch: stop, watched: make(chan struct{})}
	go func() {
		defer close(w.watched)
		if err := a.v.Trees.Watch(wctx, a.log); err != nil {
			a.log.Warn("watch the working trees; statuses walk their folders", "err", err)
		}
	}()
	return w, nil
}

// ID returns the worker's id, host:pid:nonce, as jobs name it.
func (w *Worker) ID() string { return w.id }

// Stop stops running jobs: those running finish, or have their contexts
// cancelled when ctx ends; the folder syncs they scheduled are waited
// for, and main's folder is left at main's head (a sync after an
// admission may have been cut short; a vault before its first commit has
// none). It returns the first error of these steps; a second call
// returns the first's result. The queue goes on running jobs while
// another Worker of the App, or an Ingest, runs.
func (w *Worker) Stop(ctx context.Context) error {
	w.once.Do(func() {
		w.stopWatch()
		<-w.watched
		w.err = w.a.ingest.StopJobs(ctx)
		w.a.ingest.Flush()
		// A vault before its first commit has no folder to sync.
		if _, err := w.a.v.SyncMain(ctx); err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND && w.err == nil {
			w.err = err
		}
	})
	return w.err
}

// WorkerOptions configure RunWorker. The zero value runs until ctx ends.
type WorkerOptions struct {
	// Drain stops the worker once no job is queued or running.
	Drain bool
	// Started, when set, is called once the worker runs, with its id.
	Started func(id string)
	// Event, when set, receives every event recorded from the moment the
	// worker starts until it has stopped, in order.
	Event func(*Event)
}

// RunWorker runs the vault's jobs here until ctx ends or, with Drain, no
// job is queued or running; then it stops the worker (waiting up to 30s
// for the jobs running) and reports the last events. It returns nil when
// ctx ends and the worker stopped cleanly, and otherwise the first error.
func (a *App) RunWorker(ctx context.Context, opts WorkerOptions) error {
	after, err := a.LastEvent(ctx)
	if err != nil {
		return err
	}
	w, err := a.StartWorker(ctx)
	if err != nil {
		return err
	}
	if _, err = a.v.SyncMain(ctx); err == nil {
		if opts.Started != nil {
			opts.Started(w.ID())
		}
		err = a.follow(ctx, &after, opts.Event, func() (bool, error) {
			if !opts.Drain {
				return false, nil
			}
			return a.Idle(ctx)
		})
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	serr := w.Stop(stopCtx)
	if ferr := a.report(stopCtx, &after, opts.Event); ferr != nil && serr == nil {
		serr = ferr
	}
	if ctx.Err() != nil || err == nil {
		return serr
	}
	return err
}
