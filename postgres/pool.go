package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"cairn"
)

// boundedPool is the connection pool with a bound on the wait for a
// connection: an operation that finds every connection busy for the
// acquire timeout fails with EUNAVAILABLE (HTTP 503) instead of waiting for
// its caller's deadline. It has pgxpool.Pool's methods; those that run a
// statement or begin a transaction take a connection within the bound and
// give it back when the statement's rows are read or closed, or the
// transaction ends.
type boundedPool struct {
	*pgxpool.Pool
	wait time.Duration
}

// acquire takes a connection, waiting at most p.wait.
func (p *boundedPool) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	conn, err := p.Pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, cairn.Errorf(cairn.EUNAVAILABLE, "every connection to the database is busy (%d of %d) after waiting %v", p.Stat().AcquiredConns(), p.Config().MaxConns, p.wait).
				WithHint("Try again in a moment; a server under this load wants a larger pool (?pool_max_conns=N in the URL).")
		}
		return nil, translate(err)
	}
	return conn, nil
}

// Exec runs a statement on a connection of the pool.
func (p *boundedPool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	conn, err := p.acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer conn.Release()
	return conn.Exec(ctx, sql, args...)
}

// Query runs a query on a connection of the pool, given back when the rows
// are read to the end or closed.
func (p *boundedPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	conn, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		conn.Release()
		return nil, err
	}
	return &releasingRows{Rows: rows, conn: conn}, nil
}

// QueryRow runs a query of one row on a connection of the pool, given back
// when the row is scanned.
func (p *boundedPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	conn, err := p.acquire(ctx)
	if err != nil {
		return errRow{err}
	}
	return &releasingRow{row: conn.QueryRow(ctx, sql, args...), conn: conn}
}

// Begin starts a transaction on a connection of the pool, given back when
// the transaction ends.
func (p *boundedPool) Begin(ctx context.Context) (pgx.Tx, error) {
	return p.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx is Begin with options.
func (p *boundedPool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	conn, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		// A begin query of several statements may have begun the
		// transaction before one failed (the write lock not had in time).
		if pc := conn.Conn().PgConn(); !pc.IsClosed() && pc.TxStatus() != 'I' {
			pc.Exec(context.WithoutCancel(ctx), "ROLLBACK").Close()
		}
		conn.Release()
		return nil, err
	}
	return &releasing{Tx: tx, conn: conn}, nil
}

// releasingRows gives its connection back once.
type releasingRows struct {
	pgx.Rows
	conn *pgxpool.Conn
}

func (r *releasingRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.release()
	return false
}

func (r *releasingRows) Close() {
	r.Rows.Close()
	r.release()
}

func (r *releasingRows) release() {
	if r.conn != nil {
		r.Rows.Close() // before the connection is anyone else's
		r.conn.Release()
		r.conn = nil
	}
}

// releasingRow gives its connection back once scanned.
type releasingRow struct {
	row  pgx.Row
	conn *pgxpool.Conn
}

func (r *releasingRow) Scan(dest ...any) error {
	defer r.conn.Release()
	return r.row.Scan(dest...)
}

// errRow is a row that could not be queried.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// releasing is a transaction that gives its connection back when it ends.
type releasing struct {
	pgx.Tx
	conn *pgxpool.Conn
	done bool
}

func (r *releasing) Commit(ctx context.Context) error {
	err := r.Tx.Commit(ctx)
	r.release()
	return err
}

func (r *releasing) Rollback(ctx context.Context) error {
	err := r.Tx.Rollback(ctx)
	r.release()
	return err
}

func (r *releasing) release() {
	if !r.done {
		r.done = true
		r.conn.Release()
	}
}

// Querier runs statements and begins transactions on a connection of the
// vault's pool, each waiting for one within the acquire timeout (then
// EUNAVAILABLE): what the subpackages of postgres use. Transactions
// begun on it do not take the vault's write lock; DB.Update does.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Q returns the vault's pool as a Querier.
func (db *DB) Q() Querier { return db.pool }
