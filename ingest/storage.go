package ingest

import (
	"context"

	"cairn"
)

// Storage keeps the records of a vault's sources: each source, named by
// its content's hash, with its status, and its history, one Step per
// change of status. The SQLite implementation is sqlingest.Storage
// (package cairn/sqlite/sqlingest); docs/storage.md lists the others.
//
// Methods that take a cairn.Tx read or write inside the store's write
// transaction (store.Tx.Backend gives it), so that a source's record
// commits with the ref update, the job and the admission decision it goes
// with; a transaction of another backend is EINTERNAL. The others read
// what is committed. Errors of the database are returned with cairn's
// codes: a missing row has code ENOTFOUND, a write lock that cannot be had
// EUNAVAILABLE.
type Storage interface {
	// Source returns the source with the full id; ENOTFOUND when there is
	// none. Its History is not read (see History).
	Source(ctx context.Context, id string) (*Source, error)
	// SourceTx is Source read inside tx.
	SourceTx(ctx context.Context, tx cairn.Tx, id string) (*Source, error)
	// SourceOfJob returns the source whose record names job as its job;
	// ENOTFOUND when none does.
	SourceOfJob(ctx context.Context, job int64) (*Source, error)
	// SourceOfJobTx is SourceOfJob read inside tx.
	SourceOfJobTx(ctx context.Context, tx cairn.Tx, job int64) (*Source, error)
	// SourcesWithPrefix returns at most limit sources whose id starts with
	// prefix (lower-case hex), by id; none is an empty result, not an
	// error.
	SourcesWithPrefix(ctx context.Context, prefix string, limit int) ([]*Source, error)
	// SourcesNamed returns at most limit sources whose name or path is
	// name, newest first; none is an empty result, not an error.
	SourcesNamed(ctx context.Context, name string, limit int) ([]*Source, error)
	// Sources returns the sources whose status is status (every source
	// for ""), newest first, then by name: limit of them from the off-th
	// on (limit 0: all from there). An unknown status matches none.
	Sources(ctx context.Context, status string, off, limit int) ([]*Source, error)
	// CountSources counts the sources whose status is status (every
	// source for "").
	CountSources(ctx context.Context, status string) (int, error)
	// History returns the history of source id, oldest first (empty when
	// it has none or there is no such source).
	History(ctx context.Context, id string) ([]Step, error)

	// PutSource records src inside tx, with step as the first entry of a
	// new history or the next of its history: a new record, or one that
	// replaces the record of the same id (a source refused at the door
	// that is ingested again), which keeps its creation time. The record
	// holds src's Name, Path, Size, Status, Job, Error and Hint, no
	// attempt and no proposal; step.Time is its update time (and, when
	// new, its creation time). src itself is not changed.
	PutSource(ctx context.Context, tx cairn.Tx, src *Source, step Step) error
	// SetStatus changes, inside tx, the status of source id to
	// c.Status as of c.Time, with the other fields of c, and adds c.Step
	// to its history; ENOTFOUND when there is no such source.
	SetStatus(ctx context.Context, tx cairn.Tx, id string, c StatusChange) error
}

// StatusChange is a change of a source's status (Storage.SetStatus).
type StatusChange struct {
	// Step is the new status, when, by whom and why; it is added to the
	// source's history.
	Step
	// Job, Attempt and Proposal are recorded when not zero; zero keeps
	// the ones on record.
	Job, Attempt, Proposal int64
	// Error and Hint replace the ones on record: "" clears them.
	Error, Hint string
}
