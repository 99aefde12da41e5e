package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"cairn"
	"cairn/index"
)

// IndexStorage keeps the rows of the vault's index in the vault's database
// (the tables of migrations 0002, 0005 to 0008 and 0011 to 0013; full text
// in two contentless FTS5 tables, see index_text.go). It implements
// index.Storage.
type IndexStorage struct {
	db        *DB
	committed *indexReader
}

var _ index.Storage = (*IndexStorage)(nil)

// NewIndexStorage returns the index storage of db: committed reads go
// through its read-only pool, and writes through the transactions of
// db.Update.
func NewIndexStorage(db *DB) *IndexStorage {
	return &IndexStorage{db: db, committed: &indexReader{q: db.rq}}
}

// Committed returns a reader of the committed index.
func (s *IndexStorage) Committed() index.StorageReader { return s.committed }

// MaxSnapshots is half the read pool: a snapshot holds a connection of
// it while the store's reads of trees and contents take one more at a
// time (index.SnapshotLimiter); none with a pool of one.
func (s *IndexStorage) MaxSnapshots() int { return s.db.readers / 2 }

// Snapshot returns a reader of the committed index in one read
// transaction of the read pool (SQLite's WAL keeps the state it first
// reads until it ends). Its statements are prepared in the transaction,
// as a write transaction's are.
func (s *IndexStorage) Snapshot(ctx context.Context) (index.StorageSnapshot, error) {
	tx, err := s.db.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("index: begin a snapshot: %w", translate(err))
	}
	p := &indexPrepared{tx: tx, stmts: map[string]*sql.Stmt{}}
	return &indexSnapshot{indexReader: indexReader{q: p}, p: p, tx: tx}, nil
}

// indexSnapshot is a read transaction of the committed index.
type indexSnapshot struct {
	indexReader
	p  *indexPrepared
	tx *sql.Tx
}

// Close closes the statements and ends the read transaction (which
// database/sql has ended already when the context it began with ended).
func (s *indexSnapshot) Close() error {
	err := s.p.close()
	if rerr := s.tx.Rollback(); err == nil && !errors.Is(rerr, sql.ErrTxDone) {
		err = rerr
	}
	return translate(err)
}

// Begin returns the index rows inside tx, a transaction of s's database
// (EINTERNAL for any other). Statements are prepared once for the life of
// the StorageTx: SQLite spends longer parsing SQL than running the small
// statements an update is made of. Writes bind values straight to the
// driver's statements, on the connection tx runs on.
func (s *IndexStorage) Begin(ctx context.Context, tx cairn.Tx) (index.StorageTx, error) {
	t, ok := tx.(*Tx)
	if !ok || t.db != s.db {
		return nil, cairn.Errorf(cairn.EINTERNAL, "index storage: %T is not a transaction of this database", tx)
	}
	p := &indexPrepared{tx: t.tx, raw: t.Raw, stmts: map[string]*sql.Stmt{}, driver: map[string]driver.Stmt{}}
	return &indexTx{indexReader: indexReader{q: p}, p: p}, nil
}

// indexQuerier is what reads need: the read pool, or a transaction's
// prepared statements.
type indexQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// indexPrepared is a transaction whose statements are prepared once and
// reused.
type indexPrepared struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	// raw calls a function with the driver connection the transaction
	// runs on (Tx.Raw); exec binds values to driver statements, prepared
	// once, without database/sql converting each value.
	raw    func(func(driverConn any) error) error
	driver map[string]driver.Stmt
	values []driver.NamedValue // reused by exec
}

func (p *indexPrepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := p.stmts[query]; ok {
		return st, nil
	}
	st, err := p.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.stmts[query] = st
	return st, nil
}

// QueryContext runs a prepared query.
func (p *indexPrepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs a prepared query for one row.
func (p *indexPrepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return p.tx.QueryRowContext(ctx, query, args...) // reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// close closes every statement prepared; the driver's through the
// connection, which the transaction still holds.
func (p *indexPrepared) close() error {
	for _, st := range p.stmts {
		st.Close()
	}
	if len(p.driver) == 0 {
		return nil
	}
	return p.raw(func(any) error {
		for _, st := range p.driver {
			st.Close()
		}
		clear(p.driver)
		return nil
	})
}

// exec runs query with args on the driver connection. Values must be of
// the types database/sql passes drivers, or int; a statement with another
// type runs through database/sql.
func (p *indexPrepared) exec(ctx context.Context, query string, args ...any) error {
	vals := p.values[:0]
	for i, a := range args {
		switch v := a.(type) {
		case int:
			a = int64(v)
		case nil, int64, float64, bool, []byte, string:
		default:
			st, err := p.stmt(ctx, query)
			if err == nil {
				_, err = st.ExecContext(ctx, args...)
			}
			return err
		}
		vals = append(vals, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	defer func() {
		clear(vals)
		p.values = vals[:0]
	}()
	return p.raw(func(c any) error {
		st, ok := p.driver[query]
		if !ok {
			pc, ok := c.(driver.ConnPrepareContext)
			if !ok {
				return fmt.Errorf("index storage: driver connection %T cannot prepare statements", c)
			}
			var err error
			if st, err = pc.PrepareContext(ctx, query); err != nil {
				return err
			}
			p.driver[query] = st
		}
		ec, ok := st.(driver.StmtExecContext)
		if !ok {
			return fmt.Errorf("index storage: driver statement %T cannot run with a context", st)
		}
		_, err := ec.ExecContext(ctx, vals)
		return err
	})
}

// indexTx is the index inside a write transaction.
type indexTx struct {
	indexReader
	p *indexPrepared
	// inserts caches the text of multi-row INSERT statements by head and
	// number of rows.
	inserts map[indexInsertKey]string
	args    []any // reused to pass one statement's values
	// text holds the full-text writes not yet made, textBytes their
	// size, textKeys the key of each page they write (see flushText);
	// slots the next slot of each word count this transaction handed out,
	// freed the key each page it removed had (newKey, WriteText).
	// building is set between Clear and FinishBuild.
	text      []textWrite
	textBytes int
	textKeys  map[int64]int64
	slots     map[int64]int64
	freed     map[int64]int64
	building  bool
	// words counts, for each word whose pages the transaction's text
	// writes changed, how many more pages hold it (fewer when negative);
	// saveWords adds them to fts_words. A full build counts nothing: it
	// fills fts_words from fts_vocab at its end.
	words map[string]int
}

var _ index.StorageTx = (*indexTx)(nil)

// Close closes the statements the transaction prepared.
func (t *indexTx) Close() error { return translate(t.p.close()) }

// exec runs one statement, naming the step of the index it is for in its
// error.
func (t *indexTx) exec(ctx context.Context, what, query string, args ...any) error {
	if err := t.p.exec(ctx, query, args...); err != nil {
		return fmt.Errorf("index: %s: %w", what, translate(err))
	}
	return nil
}

// indexNull is s, or NULL when empty.
func indexNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// indexNullID is id, or NULL when zero.
func indexNullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
