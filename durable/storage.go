package durable

import (
	"context"
	"time"
)

// Storage keeps what the queue records beside River's own tables: the
// processes that run jobs (Worker), and the rescue's reads and resets of
// River's running jobs. River reaches its tables through its own driver
// (riversqlite), which New builds on the database it is given. The SQLite
// implementation is sqldurable.Storage (package cairn/sqlite/sqldurable);
// docs/storage.md lists the others.
//
// A Storage writes in transactions of its own, not in the store's: a
// worker's record and a rescue commit on their own. Errors of the database
// are returned with cairn's codes: a write lock that cannot be had within
// the busy timeout is EUNAVAILABLE, a River row the storage cannot read
// EINTERNAL.
type Storage interface {
	// PutWorker records w, replacing the record of the same id.
	PutWorker(ctx context.Context, w Worker) error
	// Beat records that worker id was alive at t; it does nothing when
	// there is no such worker.
	Beat(ctx context.Context, id string, t time.Time) error
	// RemoveWorker forgets worker id; it does nothing when there is none.
	RemoveWorker(ctx context.Context, id string) error

	// Workers returns every recorded worker, in no particular order.
	Workers(ctx context.Context) ([]Worker, error)
	// RunningJobs returns the jobs River has running, in no particular
	// order. A job whose attempted_by is not a list of worker ids is
	// EINTERNAL.
	RunningJobs(ctx context.Context) ([]RunningJob, error)
	// Rescue reads the workers and the running jobs in one write
	// transaction, asks decide what to hand back, and does it in that
	// transaction: each job of the plan is reset (see Handback) only while
	// it is still running under the attempt and the last worker it was
	// decided for, and the plan's dead workers are forgotten. It returns
	// the ids of the jobs it reset. An error of decide rolls everything
	// back and is returned as it is.
	Rescue(ctx context.Context, decide func(workers []Worker, running []RunningJob) (*Plan, error)) ([]int64, error)
}

// Worker is a process that runs jobs, as the queue records it.
type Worker struct {
	ID   string // host:pid:nonce
	Host string
	PID  int
	// Proc is the process's start time in clock ticks since boot ("" when
	// it could not be read), so that a reused pid does not pass for it.
	Proc      string
	Started   time.Time
	Heartbeat time.Time
}

// RunningJob is a job River has running.
type RunningJob struct {
	ID          int64
	Attempt     int
	MaxAttempts int
	// Worker is the last worker of the job's attempted_by: the one running
	// it ("" when none is named).
	Worker string
}

// Plan is what a rescue does (Storage.Rescue).
type Plan struct {
	// At is when: the time of the jobs' errors, and when they are
	// scheduled or finalized.
	At time.Time
	// Jobs are the running jobs to hand back.
	Jobs []Handback
	// Dead are the ids of the workers to forget.
	Dead []string
}

// Handback is a running job a rescue hands back: queued to run again now,
// or, when Discard is set (its attempts are used up), failed for good; its
// errors gain Error for its attempt, at Plan.At, as River records a
// rescue's.
type Handback struct {
	ID      int64
	Attempt int
	Worker  string // the worker it is running under, the dead one
	Discard bool
	Error   string
}
