// Package durable runs a vault's background work on River
// (riverqueue/river) in the vault's own database, so that enqueueing a job
// commits with the write that caused it, and a job's completion commits
// with the work it did.
//
// River's own rescue of stuck jobs waits an hour; cairn's agents may run
// for half an hour. So every process that runs jobs records itself in the
// workers table (host, pid, process start time) and beats a heartbeat; any
// worker that starts, and every running worker every few seconds, hands the
// jobs of a dead worker back to the queue: one whose process is gone on
// this host, or whose heartbeat stopped. A rescue decides and acts in one
// transaction, and resets a job only while River's attempted_by still
// names the dead worker last.
package durable

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"cairn"
	"cairn/postgres"
	"cairn/sqlite"
)

// Config configures a Queue. The zero value gives the defaults.
type Config struct {
	// Workers are the job kinds this process can run; nil for a queue that
	// only enqueues and manages jobs.
	Workers *river.Workers
	// MaxWorkers is how many jobs run at once. Default 2.
	MaxWorkers int
	// PollInterval is how often an idle worker looks for new jobs.
	// Default 200ms.
	PollInterval time.Duration
	// Heartbeat is how often a running worker says it is alive. Default 2s.
	Heartbeat time.Duration
	// DeadAfter is how long a heartbeat may be missing before the worker
	// counts as dead (when its process cannot be checked). Default 20s.
	DeadAfter time.Duration
	// RescueEvery is how often a running worker looks for dead workers'
	// jobs. Default 3s.
	RescueEvery time.Duration
	// Logger receives the queue's logs. Default: discard.
	Logger *slog.Logger
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// Crash, when set, is called at named points (crash and race tests):
	// "rescue:decided" once a rescue knows which jobs it hands back.
	Crash func(point string)
}

// Queue is a vault's job queue.
type Queue struct {
	st     Storage
	client engine
	cfg    Config
	log    *slog.Logger
	id     string
	host   string
	pid    int
	proc   string

	mu      sync.Mutex
	started bool
	stop    chan struct{}
	done    chan struct{}
}

// Migrate brings River's tables in db up to date; it takes the write lock
// only when something is missing, which it finds out on read (a reader of
// the same database: a process that only reads never opens a writer's
// connection).
func Migrate(ctx context.Context, read, db *sql.DB) error {
	drv := riversqlite.New(db)
	m, err := rivermigrate.New(drv, nil)
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	all := m.AllVersions()
	var have int
	err = read.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'river_migration'`).Scan(&have)
	if err == nil && have == 1 {
		err = read.QueryRowContext(ctx, `SELECT count(*) FROM river_migration`).Scan(&have)
		if err == nil && have >= len(all) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	defer tx.Rollback()
	if _, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	return tx.Commit()
}

// migrationLock is the advisory lock River's migrations run under in
// PostgreSQL, so that processes starting at once do not race.
const migrationLock = 0x63616972_6e726976 // "cairnriv"

// MigratePostgres brings River's tables in the vault's PostgreSQL database
// (the schema pool's search_path names) up to date; pool is the vault's
// RiverPool, whose connections wait for locks without a bound. Each of River's
// versions commits on its own (a version may use an enum value the one
// before it added); a session advisory lock keeps processes that start at
// once from racing.
func MigratePostgres(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", postgres.Translate(err))
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("job queue migrations: %w", postgres.Translate(err))
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("job queue migrations: %w", postgres.Translate(err))
	}
	return nil
}

// atLeast is a handler that passes on only records of level min or above.
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(as), h.min}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.min}
}

// New returns the queue of the vault whose SQLite write connection is db,
// which River's driver uses, and whose records of workers are kept in st
// (sqldurable.New for the vault's SQLite database).
func New(db *sql.DB, st Storage, cfg Config) (*Queue, error) {
	return newQueue(st, cfg, func(rc *river.Config) (engine, error) {
		rc.PollOnly = true // SQLite has no LISTEN/NOTIFY
		c, err := river.NewClient(riversqlite.New(db), rc)
		return &client[*sql.Tx]{c: c, txOf: sqlite.SQLTx}, err
	})
}

// NewPostgres returns the queue of the vault whose PostgreSQL database
// pool is (its RiverPool), on River's riverpgxv5 driver: workers hear of new jobs by
// LISTEN/NOTIFY as well as by polling. st keeps the records of workers
// (pgdurable.New).
func NewPostgres(pool *pgxpool.Pool, st Storage, cfg Config) (*Queue, error) {
	return newQueue(st, cfg, func(rc *river.Config) (engine, error) {
		c, err := river.NewClient(riverpgxv5.New(pool), rc)
		return &client[pgx.Tx]{c: c, txOf: postgres.PgxTx}, err
	})
}

func newQueue(st Storage, cfg Config, build func(*river.Config) (engine, error)) (*Queue, error) {
	cfg.MaxWorkers = cmp.Or(cfg.MaxWorkers, 2)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, 200*time.Millisecond)
	cfg.Heartbeat = cmp.Or(cfg.Heartbeat, 2*time.Second)
	cfg.DeadAfter = cmp.Or(cfg.DeadAfter, 20*time.Second)
	cfg.RescueEvery = cmp.Or(cfg.RescueEvery, 3*time.Second)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	q := &Queue{
		st:   st,
		cfg:  cfg,
		log:  cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		pid:  os.Getpid(),
		proc: procStart(os.Getpid()),
	}
	// The worker id names the host and process, so that a rescue can tell
	// a dead worker on this host from a live one.
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("job queue: read the host name: %w", err)
	}
	q.host = host
	var nonce [4]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("job queue: worker id: %w", err)
	}
	q.id = fmt.Sprintf("%s:%d:%x", q.host, q.pid, nonce)
	rc := &river.Config{
		ID: q.id,
		// River's own logs are its internals (a client started, a
		// leadership change): only its warnings and errors reach the
		// vault's log.
		Logger:                      slog.New(atLeast{q.log.Handler(), slog.LevelWarn}).With("component", "river"),
		FetchCooldown:               min(20*time.Millisecond, cfg.PollInterval),
		FetchPollInterval:           cfg.PollInterval,
		JobTimeout:                  -1, // agents have their own timeouts, from the policy
		RescueStuckJobsAfter:        24 * time.Hour,
		CompletedJobRetentionPeriod: 7 * 24 * time.Hour,
		CancelledJobRetentionPeriod: 30 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 30 * 24 * time.Hour,
	}
	if cfg.Workers != nil {
		rc.Workers = cfg.Workers
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.MaxWorkers}}
	}
	c, err := build(rc)
	if err != nil {
		return nil, fmt.Errorf("job queue: %w", err)
	}
	q.client = c
	return q, nil
}

func (q *Queue) point(name string) {
	if q.cfg.Crash != nil {
		q.cfg.Crash(name)
	}
}

// ID returns the queue's worker id: host:pid:nonce.
func (q *Queue) ID() string { return q.id }

// Start records this process as a worker, rescues dead workers' jobs and
// starts working. Stop ends it.
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return nil
	}
	if q.cfg.Workers == nil {
		return fmt.Errorf("job queue: no workers configured")
	}
	now := q.cfg.Now()
	if err := q.st.PutWorker(ctx, Worker{ID: q.id, Host: q.host, PID: q.pid, Proc: q.proc, Started: now, Heartbeat: now}); err != nil {
		return fmt.Errorf("record worker: %w", err)
	}
	q.rescue(ctx)
	if err := q.client.start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start job queue: %w", err)
	}
	q.started = true
	q.stop, q.done = make(chan struct{}), make(chan struct{})
	go q.maintain(context.WithoutCancel(ctx))
	return nil
}

// maintain beats the heartbeat and rescues dead workers' jobs until Stop.
func (q *Queue) maintain(ctx context.Context) {
	defer close(q.done)
	beat := time.NewTicker(q.cfg.Heartbeat)
	defer beat.Stop()
	rescue := time.NewTicker(q.cfg.RescueEvery)
	defer rescue.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-beat.C:
			if err := q.st.Beat(ctx, q.id, q.cfg.Now()); err != nil {
				q.log.Warn("heartbeat", "err", err)
			}
		case <-rescue.C:
			q.rescue(ctx)
		}
	}
}

// rescue runs Rescue and logs what it did: the jobs it handed back, or why
// it could not.
func (q *Queue) rescue(ctx context.Context) {
	if ids, err := q.Rescue(ctx); err != nil {
		q.log.WarnContext(ctx, "rescue jobs of dead workers", "err", err)
	} else if len(ids) > 0 {
		q.log.InfoContext(ctx, "rescued jobs of dead workers", "jobs", ids)
	}
}

// Stop stops working: running jobs finish (their contexts are cancelled
// when ctx is), and the worker's record is removed. It may be called twice.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		return nil
	}
	q.started = false
	close(q.stop)
	<-q.done
	err := q.client.stop(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = q.client.stopAndCancel(context.WithoutCancel(ctx))
	}
	if derr := q.st.RemoveWorker(context.WithoutCancel(ctx), q.id); derr != nil && err == nil {
		err = fmt.Errorf("forget worker %s: %w", q.id, derr)
	}
	return err
}

// InsertTx enqueues a job inside tx: it exists only if tx commits.
func (q *Queue) InsertTx(ctx context.Context, tx cairn.Tx, args river.JobArgs, opts *river.InsertOpts) (int64, error) {
	res, err := q.client.insertTx(ctx, tx, args, opts)
	if err != nil {
		return 0, fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return res.Job.ID, nil
}

// Job states, as cairn names them. River's own names, which stay inside
// this package, are in brackets.
const (
	StateQueued    = "queued"    // waiting for a worker [available]
	StateScheduled = "scheduled" // waiting for its time [scheduled]
	StateRunning   = "running"   // a worker runs it [running]
	StateRetrying  = "retrying"  // an attempt failed; it runs again after a pause [retryable]
	StateCompleted = "completed" // done [completed]
	StateCancelled = "cancelled" // cancelled, or ended by its worker without retrying [cancelled]
	StateFailed    = "failed"    // it used up its attempts [discarded]
	StatePending   = "pending"   // held back; cairn makes no such jobs [pending]
)

// States are the job states, in the order a job goes through them.
var States = []string{StateQueued, StateScheduled, StateRunning, StateRetrying, StateCompleted, StateCancelled, StateFailed}

// riverStates maps cairn's state names to River's.
var riverStates = map[string]rivertype.JobState{
	StateQueued: rivertype.JobStateAvailable, StateScheduled: rivertype.JobStateScheduled,
	StateRunning: rivertype.JobStateRunning, StateRetrying: rivertype.JobStateRetryable,
	StateCompleted: rivertype.JobStateCompleted, StateCancelled: rivertype.JobStateCancelled,
	StateFailed: rivertype.JobStateDiscarded, StatePending: rivertype.JobStatePending,
}

// stateName is cairn's name of a River job state.
func stateName(s rivertype.JobState) string {
	for name, rs := range riverStates {
		if rs == s {
			return name
		}
	}
	return string(s)
}

// Job is a job as cairn shows it.
type Job struct {
	ID   int64  `json:"id"`
	Kind string `json:"kind"`
	// State is one of States (StatePending never happens in cairn).
	State       string          `json:"state"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	Args        json.RawMessage `json:"args"`
	Errors      []string        `json:"errors,omitempty"`
	Worker      string          `json:"worker,omitempty"` // the last worker that ran it
	Created     time.Time       `json:"created"`
	Finalized   time.Time       `json:"finalized,omitzero"`
}

func jobOf(r *rivertype.JobRow) *Job {
	j := &Job{ID: r.ID, Kind: r.Kind, State: stateName(r.State), Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
		Args: json.RawMessage(r.EncodedArgs), Created: r.CreatedAt}
	for _, e := range r.Errors {
		j.Errors = append(j.Errors, e.Error)
	}
	if n := len(r.AttemptedBy); n > 0 {
		j.Worker = r.AttemptedBy[n-1]
	}
	if r.FinalizedAt != nil {
		j.Finalized = *r.FinalizedAt
	}
	return j
}

// Jobs lists jobs, newest first, at most limit (default 100); states, when
// given, keeps the jobs in those states (of States). An unknown state is
// EINVALID.
func (q *Queue) Jobs(ctx context.Context, limit int, states ...string) ([]*Job, error) {
	p := river.NewJobListParams().First(cmp.Or(limit, 100)).OrderBy(river.JobListOrderByID, river.SortOrderDesc)
	if len(states) > 0 {
		var ss []rivertype.JobState
		for _, s := range states {
			rs, ok := riverStates[strings.TrimSpace(s)]
			if !ok {
				return nil, cairn.Errorf(cairn.EINVALID, "unknown job state %q", s).
					WithHint("Use " + strings.Join(States[:len(States)-1], ", ") + " or " + States[len(States)-1] + ".")
			}
			ss = append(ss, rs)
		}
		p = p.States(ss...)
	}
	res, err := q.client.jobList(ctx, p)
	if err != nil {
		return nil, translate(fmt.Errorf("list jobs: %w", err))
	}
	var out []*Job
	for _, r := range res.Jobs {
		out = append(out, jobOf(r))
	}
	return out, nil
}

// Get returns one job.
func (q *Queue) Get(ctx context.Context, id int64) (*Job, error) {
	r, err := q.client.jobGet(ctx, id)
	if err != nil {
		return nil, notFound(id, err)
	}
	return jobOf(r), nil
}

// Cancel cancels a job: a queued one never runs; a running one has its
// context cancelled within seconds, wherever it runs, which stops its
// agent.
func (q *Queue) Cancel(ctx context.Context, id int64) (*Job, error) {
	r, err := q.client.jobCancel(ctx, id)
	if err != nil {
		return nil, notFound(id, err)
	}
	return jobOf(r), nil
}

// Retry makes a finished or failed job run again now. A running job is
// left alone.
func (q *Queue) Retry(ctx context.Context, id int64) (*Job, error) {
	r, err := q.client.jobRetry(ctx, id)
	if err != nil {
		return nil, notFound(id, err)
	}
	return jobOf(r), nil
}

// RetryTx is Retry inside tx.
func (q *Queue) RetryTx(ctx context.Context, tx cairn.Tx, id int64) (*Job, error) {
	r, err := q.client.jobRetryTx(ctx, tx, id)
	if err != nil {
		return nil, notFound(id, err)
	}
	return jobOf(r), nil
}

// CancelTx is Cancel inside tx.
func (q *Queue) CancelTx(ctx context.Context, tx cairn.Tx, id int64) (*Job, error) {
	r, err := q.client.jobCancelTx(ctx, tx, id)
	if err != nil {
		return nil, notFound(id, err)
	}
	return jobOf(r), nil
}

// CompleteTx marks the job a worker runs completed inside tx, the store's
// write transaction that records what the job did: the job ends exactly
// when its effect commits.
func CompleteTx[T river.JobArgs](ctx context.Context, tx cairn.Tx, job *river.Job[T]) error {
	var err error
	if stx, serr := sqlite.SQLTx(tx); serr == nil {
		_, err = river.JobCompleteTx[*riversqlite.Driver](ctx, stx, job)
	} else if ptx, perr := postgres.PgxTx(tx); perr == nil {
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, ptx, job)
	} else {
		return serr
	}
	if err != nil {
		return fmt.Errorf("complete job %d: %w", job.ID, err)
	}
	return nil
}

// engine is River's client, whatever its driver: the queue's calls of it,
// with the store's transaction in place of the driver's.
type engine interface {
	start(ctx context.Context) error
	stop(ctx context.Context) error
	stopAndCancel(ctx context.Context) error
	insertTx(ctx context.Context, tx cairn.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	jobList(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error)
	jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	jobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	jobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	jobCancelTx(ctx context.Context, tx cairn.Tx, id int64) (*rivertype.JobRow, error)
	jobRetryTx(ctx context.Context, tx cairn.Tx, id int64) (*rivertype.JobRow, error)
}

// client is River's client on a driver whose transactions are TTx; txOf
// finds the driver's transaction in the store's (EINTERNAL for another
// backend's).
type client[TTx any] struct {
	c    *river.Client[TTx]
	txOf func(cairn.Tx) (TTx, error)
}

func (c *client[TTx]) start(ctx context.Context) error         { return c.c.Start(ctx) }
func (c *client[TTx]) stop(ctx context.Context) error          { return c.c.Stop(ctx) }
func (c *client[TTx]) stopAndCancel(ctx context.Context) error { return c.c.StopAndCancel(ctx) }

func (c *client[TTx]) insertTx(ctx context.Context, tx cairn.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	t, err := c.txOf(tx)
	if err != nil {
		return nil, err
	}
	return c.c.InsertTx(ctx, t, args, opts)
}

func (c *client[TTx]) jobList(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error) {
	return c.c.JobList(ctx, p)
}

func (c *client[TTx]) jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return c.c.JobGet(ctx, id)
}

func (c *client[TTx]) jobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return c.c.JobCancel(ctx, id)
}

func (c *client[TTx]) jobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return c.c.JobRetry(ctx, id)
}

func (c *client[TTx]) jobCancelTx(ctx context.Context, tx cairn.Tx, id int64) (*rivertype.JobRow, error) {
	t, err := c.txOf(tx)
	if err != nil {
		return nil, err
	}
	return c.c.JobCancelTx(ctx, t, id)
}

func (c *client[TTx]) jobRetryTx(ctx context.Context, tx cairn.Tx, id int64) (*rivertype.JobRow, error) {
	t, err := c.txOf(tx)
	if err != nil {
		return nil, err
	}
	return c.c.JobRetryTx(ctx, t, id)
}

func notFound(id int64, err error) error {
	if errors.Is(err, river.ErrNotFound) || errors.Is(err, rivertype.ErrNotFound) {
		return cairn.Errorf(cairn.ENOTFOUND, "there is no job %d", id).WithHint("Try: cairn jobs")
	}
	return translate(fmt.Errorf("job %d: %w", id, err))
}

// translate maps a busy or lost database to EUNAVAILABLE.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if perr := postgres.Translate(err); cairn.ErrorCode(perr) == cairn.EUNAVAILABLE {
		return perr
	}
	if strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked") {
		return cairn.Errorf(cairn.EUNAVAILABLE, "the vault is busy: %w", err).WithHint("Another cairn process is writing; try again.")
	}
	return err
}

// Rescue hands the running jobs of dead workers back to the queue (or
// discards them when they used up their attempts) and forgets those
// workers. It returns the rescued job ids.
//
// Which workers are dead and which jobs are theirs is decided and acted
// on in one write transaction (Storage.Rescue), and a job is reset only
// while it is still running under the attempt and the worker (River's
// attempted_by) it was decided for: a job a live worker took meanwhile,
// from another process's rescue, is never taken from it. A read outside
// the transaction first spares the write lock when there is nothing to
// rescue.
func (q *Queue) Rescue(ctx context.Context) ([]int64, error) {
	workers, err := q.st.Workers(ctx)
	if err != nil {
		return nil, fmt.Errorf("read workers: %w", err)
	}
	running, err := q.st.RunningJobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read running jobs: %w", err)
	}
	if p := q.plan(workers, running); len(p.Jobs) == 0 && len(p.Dead) == 0 {
		return nil, nil
	}
	rescued, err := q.st.Rescue(ctx, func(workers []Worker, running []RunningJob) (*Plan, error) {
		p := q.plan(workers, running)
		q.point("rescue:decided")
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("rescue: %w", err)
	}
	return rescued, nil
}

// plan decides what a rescue hands back: the running jobs whose last
// worker is dead, and the dead workers to forget.
func (q *Queue) plan(workers []Worker, running []RunningJob) *Plan {
	now := q.cfg.Now()
	byID := map[string]Worker{}
	for _, w := range workers {
		byID[w.ID] = w
	}
	p := &Plan{At: now}
	dead := map[string]bool{}
	for _, w := range workers {
		if w.ID != q.id && !q.alive(w, now) {
			dead[w.ID] = true
			p.Dead = append(p.Dead, w.ID)
		}
	}
	for _, j := range running {
		if j.Worker == "" || j.Worker == q.id {
			continue
		}
		if _, known := byID[j.Worker]; known && !dead[j.Worker] {
			continue
		} else if !known && !deadUnknown(j.Worker, q.host) {
			continue
		}
		p.Jobs = append(p.Jobs, Handback{ID: j.ID, Attempt: j.Attempt, Worker: j.Worker, Discard: j.Attempt >= j.MaxAttempts,
			Error: fmt.Sprintf("the worker %s died while running the job", j.Worker)})
	}
	return p
}

// alive reports whether a recorded worker still runs: on this host, its
// process (the same one: same start time) exists; elsewhere, its
// heartbeat is recent.
func (q *Queue) alive(w Worker, now time.Time) bool {
	if w.Host == q.host {
		return processAlive(w.PID, w.Proc)
	}
	return now.Sub(w.Heartbeat) < q.cfg.DeadAfter
}

// deadUnknown reports whether a job's worker, which has no record (it
// never registered, or its record was removed), is dead: on this host,
// when its process is gone.
func deadUnknown(id, host string) bool {
	h, rest, ok := strings.Cut(id, ":")
	if !ok || h != host {
		return false
	}
	pidText, _, _ := strings.Cut(rest, ":")
	pid, err := strconv.Atoi(pidText)
	return err == nil && !processAlive(pid, "")
}

// processAlive reports whether pid runs and, when start is given, started
// at that time (so a reused pid does not pass for the worker).
func processAlive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i > 0 && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z") {
			return false // exited, not yet reaped
		}
	}
	return start == "" || procStart(pid) == start
}

// procStart returns a process's start time in clock ticks since boot
// (field 22 of /proc/PID/stat), or "" when it cannot be read.
func procStart(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it follow the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}
