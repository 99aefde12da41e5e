// Package index keeps the derived index of a vault's main branch: every
// file with what its parse found, the keys links resolve by, every link and
// where it leads, backlinks, reachability from index.md, lint findings and
// full-text search (SQLite FTS5, contentless: page bodies live only in the
// store).
//
// The index is updated in the transaction that moves main, by a store hook,
// and the work is proportional to what the change affects: the files that
// changed, the links whose lookups a changed key answers, the pages whose
// reachability or inbound links changed. It can be rebuilt from any commit,
// checked against the store, and applied to any other tree without being
// kept ([Index.View]), which is how branches and old commits are read.
package index

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"

	"cairn"
	"cairn/store"
)

// Branch is the branch the index follows.
const Branch = "main"

// Options configure an Index. The zero value gives the defaults.
type Options struct {
	// Logger receives the index's logs. Default: discard.
	Logger *slog.Logger
}

// Index is the derived index of branch main. It is safe for concurrent use.
type Index struct {
	s   *store.Store
	db  *sql.DB // read-only pool
	log *slog.Logger
}

// New returns the index over the store s, reading through the read-only
// pool db. Register [Index.Hook] with the store so that main never moves
// without the index.
func New(s *store.Store, db *sql.DB, opts *Options) *Index {
	if opts == nil {
		opts = &Options{}
	}
	return &Index{s: s, db: db, log: cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))}
}

// dbtx is what the index needs from a database handle: the read pool for
// queries of the committed index, a transaction for updates and views.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// prepared is a transaction whose statements are prepared once and reused:
// SQLite spends longer parsing SQL than running the small statements an
// update is made of.
type prepared struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	// raw, when set, calls a function with the driver connection the
	// transaction runs on (store.Tx.Raw); execDriver then binds values to
	// driver statements, prepared once, without database/sql converting
	// each value.
	raw    func(func(driverConn any) error) (bool, error)
	driver map[string]driver.Stmt
	values []driver.NamedValue // reused by execDriver
}

func newPrepared(tx *sql.Tx) *prepared { return &prepared{tx: tx, stmts: map[string]*sql.Stmt{}} }

func (p *prepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
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

// ExecContext runs a prepared statement.
func (p *prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryContext runs a prepared query.
func (p *prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs a prepared query for one row.
func (p *prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return p.tx.QueryRowContext(ctx, query, args...) // reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

func (p *prepared) close() {
	for _, st := range p.stmts {
		st.Close()
	}
	if len(p.driver) > 0 && p.raw != nil {
		p.raw(func(any) error {
			for _, st := range p.driver {
				st.Close()
			}
			return nil
		})
	}
}

// useDriver makes execDriver bind values straight to the driver when t
// gives its connection.
func (p *prepared) useDriver(t any) {
	if r, ok := t.(interface {
		Raw(func(driverConn any) error) (bool, error)
	}); ok {
		p.raw, p.driver = r.Raw, map[string]driver.Stmt{}
	}
}

// execDriver runs query with args on the driver connection when there is
// one (see useDriver), and as ExecContext otherwise. Values must be of the
// types database/sql passes drivers, or int.
func (p *prepared) execDriver(ctx context.Context, query string, args ...any) error {
	if p.raw == nil {
		_, err := p.ExecContext(ctx, query, args...)
		return err
	}
	vals := p.values[:0]
	for i, a := range args {
		switch v := a.(type) {
		case int:
			a = int64(v)
		case nil, int64, float64, bool, []byte, string:
		default:
			_, err := p.ExecContext(ctx, query, args...)
			return err
		}
		vals = append(vals, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	defer func() {
		clear(vals)
		p.values = vals[:0]
	}()
	ok, err := p.raw(func(c any) error {
		st, ok := p.driver[query]
		if !ok {
			pc, ok := c.(driver.ConnPrepareContext)
			if !ok {
				return fmt.Errorf("index: driver connection %T cannot prepare statements", c)
			}
			var err error
			if st, err = pc.PrepareContext(ctx, query); err != nil {
				return err
			}
			p.driver[query] = st
		}
		ec, ok := st.(driver.StmtExecContext)
		if !ok {
			return fmt.Errorf("index: driver statement %T cannot run with a context", st)
		}
		_, err := ec.ExecContext(ctx, vals)
		return err
	})
	if !ok { // the backend gives no driver connection
		p.raw = nil
		_, err = p.ExecContext(ctx, query, args...)
	}
	return err
}

// trees reads trees and content: the store, or a store transaction whose new
// objects are not committed yet.
type trees interface {
	Diff(ctx context.Context, a, b cairn.Hash, opts *store.DiffOptions) ([]cairn.Change, error)
	Files(ctx context.Context, tree cairn.Hash, prefix string) iter.Seq2[cairn.Entry, error]
	ReadBlob(ctx context.Context, h cairn.Hash) ([]byte, error)
	ReadBlobs(ctx context.Context, hs []cairn.Hash, fn func(h cairn.Hash, data []byte) error) error
	ReadCommit(ctx context.Context, h cairn.Hash) (*cairn.Commit, error)
}

// State is the commit the index reflects.
type State struct {
	Commit cairn.Hash `json:"commit"`
	Tree   cairn.Hash `json:"tree"`
}

// State returns the commit the index reflects; a zero State when main has
// never been indexed.
func (ix *Index) State(ctx context.Context) (State, error) {
	return readState(ctx, ix.db)
}

func readState(ctx context.Context, q dbtx) (State, error) {
	var st State
	var c, t []byte
	err := q.QueryRowContext(ctx, `SELECT commit_hash, tree FROM index_state WHERE ref = ?`, Branch).Scan(&c, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return State{Tree: store.EmptyTree}, nil
	}
	if err != nil {
		return st, err
	}
	copy(st.Commit[:], c)
	copy(st.Tree[:], t)
	return st, nil
}

func writeState(ctx context.Context, q dbtx, st State) error {
	_, err := q.ExecContext(ctx, `INSERT INTO index_state (ref, commit_hash, tree) VALUES (?, ?, ?)
		ON CONFLICT (ref) DO UPDATE SET commit_hash = excluded.commit_hash, tree = excluded.tree`,
		Branch, st.Commit[:], st.Tree[:])
	return err
}

// Hook returns the store hook that updates the index whenever main moves,
// inside the same transaction.
func (ix *Index) Hook() store.RefHook {
	return func(ctx context.Context, tx *store.Tx, u cairn.RefUpdate) error {
		if u.Name != "heads/"+Branch {
			return nil
		}
		return ix.follow(ctx, tx.SQL(), tx, u.New)
	}
}

// follow brings the index to commit c (zero: main was deleted), updating
// incrementally from the indexed commit.
func (ix *Index) follow(ctx context.Context, tx *sql.Tx, t trees, c cairn.Hash) error {
	q := newPrepared(tx)
	defer q.close()
	st, err := readState(ctx, q)
	if err != nil {
		return err
	}
	to := store.EmptyTree
	if !c.IsZero() {
		cm, err := t.ReadCommit(ctx, c)
		if err != nil {
			return err
		}
		to = cm.Tree
	}
	if err := ix.apply(ctx, q, t, st.Tree, to, nil); err != nil {
		return err
	}
	return writeState(ctx, q, State{Commit: c, Tree: to})
}

// Update brings the index up to the current head of main in its own
// transaction; it is a no-op when the index is current. Use it after
// opening a vault whose index may lag (a vault indexed by an older cairn,
// or a rebuilt database).
func (ix *Index) Update(ctx context.Context) error {
	return ix.s.Update(ctx, func(tx *store.Tx) error {
		head, err := tx.Head(ctx, Branch)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return err
		}
		st, err := readState(ctx, tx.SQL())
		if err != nil {
			return err
		}
		if st.Commit == head {
			return nil
		}
		return ix.follow(ctx, tx.SQL(), tx, head)
	})
}

// errRollback ends a view's transaction without keeping anything.
var errRollback = errors.New("index view: roll back")

// View applies the difference between the indexed tree and tree inside a
// write transaction, calls fn with a Reader of the result, and rolls back:
// nothing is kept. It serves branches, proposals and old commits without
// indexing them; the cost follows the size of the difference. It holds the
// write lock while fn runs, so fn should be quick.
func (ix *Index) View(ctx context.Context, tree cairn.Hash, fn func(*Reader) error) error {
	var fnErr error
	err := ix.s.Update(ctx, func(tx *store.Tx) error {
		st, err := readState(ctx, tx.SQL())
		if err != nil {
			return err
		}
		q := newPrepared(tx.SQL())
		defer q.close()
		if err := ix.apply(ctx, q, tx, st.Tree, tree, nil); err != nil {
			return err
		}
		fnErr = fn(&Reader{q: q, t: tx})
		return errRollback
	})
	if errors.Is(err, errRollback) {
		return fnErr
	}
	return err
}

// Main returns a Reader of the committed index of main.
func (ix *Index) Main() *Reader { return &Reader{q: ix.db, t: ix.s} }
