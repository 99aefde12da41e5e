package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/index"
)

// IndexStorage keeps the rows of the vault's index in the vault's database
// (the tables of migration 0002; full text in tsvector columns with GIN
// indexes). It implements index.Storage.
//
// Reads of the committed index never wait for the writer, with one
// exception: a vault's first full build, which loads its tables without
// their indexes, locks them until it commits (see Clear). A read waits
// for that at most the database's lock timeout, then fails with
// EUNAVAILABLE: the index is being built.
type IndexStorage struct {
	db        *DB
	committed *indexReader
	sizes     tierSizes
}

var _ index.Storage = (*IndexStorage)(nil)

// NewIndexStorage returns the index storage of db: committed reads go
// through its pool, and writes through the transactions of db.Update.
func NewIndexStorage(db *DB) index.Storage {
	return &IndexStorage{db: db, committed: &indexReader{db: db, q: db.pool}, sizes: tierSizes{least: defaultLeastShort}}
}

// Committed returns a reader of the committed index.
func (s *IndexStorage) Committed() index.StorageReader { return s.committed }

// MaxSnapshots is a third of the pool, one connection aside: a view holds
// a connection for its snapshot, and for a read it makes in a write
// transaction one more for that transaction and one more for the reads
// of contents the transaction makes through the pool
// (index.SnapshotLimiter); none with a pool of fewer than four.
func (s *IndexStorage) MaxSnapshots() int { return (int(s.db.pool.Config().MaxConns) - 1) / 3 }

// Snapshot returns a reader of the committed index in one REPEATABLE READ
// READ ONLY transaction: it sees the state of its first read until it is
// closed, and neither waits for the writer nor holds it up.
func (s *IndexStorage) Snapshot(ctx context.Context) (index.StorageSnapshot, error) {
	tx, err := s.db.beginIndexRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("index: begin a snapshot: %w", err)
	}
	return &indexSnapshot{indexReader: indexReader{db: s.db, q: tx, ended: new(error)}, tx: tx}, nil
}

// beginIndexRead starts a read-only transaction of one snapshot (the
// pool bounds the wait for a connection).
func (db *DB) beginIndexRead(ctx context.Context) (pgx.Tx, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	return tx, db.translate(err)
}

// indexSnapshot is a read transaction of the committed index.
type indexSnapshot struct {
	indexReader
	tx pgx.Tx
}

// Close ends the read transaction.
func (s *indexSnapshot) Close() error {
	return s.db.translate(s.tx.Rollback(context.Background()))
}

// Begin returns the index rows inside tx, a transaction of s's database
// (EINTERNAL for any other). Writes other than a full build's are queued
// and sent many to a round trip, before the next read and at Close: every
// read sees every write made before it.
func (s *IndexStorage) Begin(ctx context.Context, tx cairn.Tx) (index.StorageTx, error) {
	t, ok := tx.(*Tx)
	if !ok || t.db != s.db {
		return nil, cairn.Errorf(cairn.EINTERNAL, "index storage: %T is not a transaction of this database", tx)
	}
	it := &indexTx{tx: t.tx, queued: &pgx.Batch{}, sizes: s.sizes, view: t.view}
	it.indexReader = indexReader{db: s.db, q: t.tx, w: it}
	return it, nil
}

// indexQuerier is what reads need: the pool, or a transaction.
type indexQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// indexTx is the index inside a write transaction.
type indexTx struct {
	indexReader
	tx    pgx.Tx
	sizes tierSizes
	// queued holds the writes not sent yet; queuedWrites says what each
	// is for (its error names it) and what reads its result, if anything.
	queued       *pgx.Batch
	queuedWrites []queuedWrite
	// building is the full text of a full build, between Clear and
	// FinishBuild.
	building *textBuild
	// bounds are the tiers' bounds as this transaction sees them, read
	// once (nil: not read yet); textChanged says pages entered or left
	// the full text, so that SetState may fit the tiers.
	bounds      *[2]int
	textChanged bool
	// totals and vocab are what the pages written and deleted add to the
	// full text's totals and to the page counts of their words, not
	// written yet (saveText): every page adds to the same rows, which
	// are written once.
	totals textTotals
	vocab  map[string]int32
	// view: the transaction holds no lock (DB.Inspect); shadowed: the
	// index's tables are the transaction's own (Shadow).
	view, shadowed bool
	closed         bool
}

// queuedWrite is a write waiting in the batch.
type queuedWrite struct {
	what string
	read func(pgx.Rows) error // reads what it returns; nil: nothing
}

var _ index.StorageTx = (*indexTx)(nil)

// maxQueued is the most writes held before they are sent.
const maxQueued = 512

// exec queues one write, naming the step of the index it is for in its
// error.
func (t *indexTx) exec(ctx context.Context, what, query string, args ...any) error {
	return t.execRead(ctx, what, nil, query, args...)
}

// execRead queues one write whose result read reads when it is sent.
func (t *indexTx) execRead(ctx context.Context, what string, read func(pgx.Rows) error, query string, args ...any) error {
	if t.closed {
		return cairn.Errorf(cairn.EINTERNAL, "index storage: used after Close")
	}
	t.queued.Queue(query, args...)
	t.queuedWrites = append(t.queuedWrites, queuedWrite{what: what, read: read})
	if len(t.queuedWrites) >= maxQueued {
		return t.sendQueued(ctx)
	}
	return nil
}

// flush sends the queued writes and the full build's held text.
func (t *indexTx) flush(ctx context.Context) error {
	if t.closed {
		return cairn.Errorf(cairn.EINTERNAL, "index storage: used after Close")
	}
	if err := t.sendQueued(ctx); err != nil {
		return err
	}
	if t.building != nil {
		return t.building.flush(ctx, t)
	}
	return nil
}

// query runs a query after the queued writes, in the same round trip.
func (t *indexTx) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.closed || t.building != nil || len(t.queuedWrites) == 0 {
		if err := t.flush(ctx); err != nil {
			return nil, err
		}
		rows, err := t.tx.Query(ctx, sql, args...)
		return rows, t.db.translate(err)
	}
	batch := t.queued
	batch.Queue(sql, args...)
	res, err := t.send(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := res.Query()
	if err != nil {
		res.Close()
		return nil, t.db.translate(err)
	}
	return &batchRows{Rows: rows, res: res}, nil
}

// send sends the queued writes, and anything queued after them, and
// reads the writes' results; the caller reads the rest and closes the
// results.
func (t *indexTx) send(ctx context.Context) (pgx.BatchResults, error) {
	batch, writes := t.queued, t.queuedWrites
	t.queued, t.queuedWrites = &pgx.Batch{}, nil
	res := t.tx.SendBatch(ctx, batch)
	for _, w := range writes {
		var err error
		if w.read == nil {
			_, err = res.Exec()
		} else {
			var rows pgx.Rows
			if rows, err = res.Query(); err == nil {
				err = w.read(rows)
				rows.Close()
				if rerr := rows.Err(); err == nil {
					err = rerr
				}
			}
		}
		if err != nil {
			res.Close()
			return nil, fmt.Errorf("index: %s: %w", w.what, t.db.translate(err))
		}
	}
	return res, nil
}

// batchRows are the rows of the last query of a batch, which ends with
// them.
type batchRows struct {
	pgx.Rows
	res pgx.BatchResults
	err error
}

// Next advances to the next row; after the last, it closes the batch, so
// that Err reports the batch's error too.
func (r *batchRows) Next() bool {
	if r.res != nil && r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

// Close closes the rows and the batch.
func (r *batchRows) Close() {
	if r.res == nil {
		return
	}
	r.Rows.Close()
	r.err = r.res.Close()
	r.res = nil
}

// Err returns the rows' error, or the batch's.
func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// sendQueued sends the queued writes in one batch.
func (t *indexTx) sendQueued(ctx context.Context) error {
	if len(t.queuedWrites) == 0 {
		return nil
	}
	res, err := t.send(ctx)
	if err != nil {
		return err
	}
	return t.db.translate(res.Close())
}

// Close sends what is queued; nothing may be used after it.
func (t *indexTx) Close() error {
	if t.closed {
		return nil
	}
	ctx := context.Background()
	if t.building != nil {
		t.building.abandon(ctx) // a build that did not finish: its writes are moot
		t.building = nil
	}
	err := t.saveText(ctx)
	if err == nil {
		err = t.flush(ctx)
	}
	t.closed = true
	return err
}

// indexNull is s, or NULL when empty.
func indexNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// indexNullID is id, or NULL when zero.
func indexNullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// indexNullDepth is d, or NULL when unreachable (negative).
func indexNullDepth(d int) *int32 {
	if d < 0 {
		return nil
	}
	v := int32(d)
	return &v
}
