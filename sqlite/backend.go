package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"cairn"
	"cairn/internal/codec"
)

// FormatVersion returns the store format recorded in the database.
func (db *DB) FormatVersion(ctx context.Context) (int, error) {
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'format_version'`).Scan(&v)
	if err != nil {
		return 0, translate(err)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, cairn.Errorf(cairn.EINTERNAL, "format version %q is not a number", v)
	}
	return n, nil
}

// GetObject returns one object.
func (db *DB) GetObject(ctx context.Context, h cairn.Hash) (cairn.Object, error) {
	var kind, codec int
	var size int64
	var data []byte
	var purged bool
	err := db.getObject.QueryRowContext(ctx, h[:]).Scan(&kind, &codec, &size, &data, &purged)
	if err != nil {
		err = translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return cairn.Object{}, cairn.Errorf(cairn.ENOTFOUND, "object %s not found", h.Short())
		}
		return cairn.Object{}, fmt.Errorf("read object %s: %w", h.Short(), err)
	}
	if purged {
		return cairn.Object{}, db.purgedError(ctx, h)
	}
	if data == nil {
		data = []byte{}
	}
	data, err = db.codec.Decompress(data, codec, size)
	if err != nil {
		return cairn.Object{}, cairn.Errorf(cairn.EINTERNAL, "read object %s: %w", h.Short(), err)
	}
	return cairn.Object{Hash: h, Kind: cairn.ObjectKind(kind), Data: data}, nil
}

// GetObjects reads objects in batches of 500, in hash order, and
// decompresses them on every core; a few (a search's snippets) are read
// with one prepared statement, in the caller's goroutine, which in-process
// costs less than workers of their own.
func (db *DB) GetObjects(ctx context.Context, hs []cairn.Hash, fn func(cairn.Object) error) error {
	hs = slices.Clone(hs)
	slices.SortFunc(hs, func(a, b cairn.Hash) int { return bytes.Compare(a[:], b[:]) })
	hs = slices.Compact(hs)
	if n := len(hs); n > 1 && n <= fewObjects {
		st, err := db.objectsStmt(ctx, n)
		if err != nil {
			return err
		}
		args := make([]any, n)
		for i, h := range hs {
			args[i] = h[:]
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return translate(err)
		}
		defer rows.Close()
		for rows.Next() {
			var h, data []byte
			var kind, codec int
			var size int64
			if err := rows.Scan(&h, &kind, &codec, &size, &data); err != nil {
				return translate(err)
			}
			if data, err = db.codec.Decompress(data, codec, size); err != nil {
				return cairn.Errorf(cairn.EINTERNAL, "read object %s: %w", cairn.Hash(h).Short(), err)
			}
			if data == nil {
				data = []byte{}
			}
			if err := fn(cairn.Object{Hash: cairn.Hash(h), Kind: cairn.ObjectKind(kind), Data: data}); err != nil {
				return err
			}
		}
		return translate(rows.Err())
	}
	if len(hs) <= fewObjects {
		for _, h := range hs {
			o, err := db.GetObject(ctx, h)
			switch {
			case cairn.ErrorCode(err) == cairn.ENOTFOUND || errors.Is(err, cairn.ErrPurged):
				continue // as the batched read: missing and purged objects are left out
			case err != nil:
				return err
			}
			if err := fn(o); err != nil {
				return err
			}
		}
		return nil
	}
	type stored struct {
		obj   cairn.Object
		codec int
		size  int64
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan stored, 256)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				data, err := db.codec.Decompress(s.obj.Data, s.codec, s.size)
				if err == nil {
					if data == nil {
						data = []byte{}
					}
					s.obj.Data = data
					err = fn(s.obj)
				} else {
					err = cairn.Errorf(cairn.EINTERNAL, "read object %s: %w", s.obj.Hash.Short(), err)
				}
				if err != nil {
					cancel(err)
				}
			}
		}()
	}
	err := func() error {
		defer close(work)
		for start := 0; start < len(hs); start += 500 {
			chunk := hs[start:min(start+500, len(hs))]
			args := make([]any, len(chunk))
			for i, h := range chunk {
				args[i] = h[:]
			}
			rows, err := db.r.QueryContext(ctx, `SELECT hash, kind, codec, size, data FROM objects
				WHERE hash IN (`+placeholders(len(chunk))+`) AND data IS NOT NULL`, args...)
			if err != nil {
				return translate(err)
			}
			for rows.Next() {
				var s stored
				var h []byte
				var kind int
				if err := rows.Scan(&h, &kind, &s.codec, &s.size, &s.obj.Data); err != nil {
					rows.Close()
					return translate(err)
				}
				s.obj.Hash, s.obj.Kind = cairn.Hash(h), cairn.ObjectKind(kind)
				select {
				case work <- s:
				case <-ctx.Done():
					rows.Close()
					return context.Cause(ctx)
				}
			}
			if err := rows.Close(); err != nil {
				return translate(err)
			}
		}
		return nil
	}()
	wg.Wait()
	if err != nil {
		return err
	}
	return context.Cause(ctx)
}

func (db *DB) purgedError(ctx context.Context, h cairn.Hash) error {
	var p cairn.Purge
	var t int64
	var principal string
	err := db.rq.QueryRowContext(ctx, `SELECT principal, reason, time FROM purges WHERE hash = ?`, h[:]).Scan(&principal, &p.Reason, &t)
	if err != nil {
		return &cairn.Error{Code: cairn.ENOTFOUND, Message: fmt.Sprintf("the content of %s was purged", h.Short()), Err: cairn.ErrPurged}
	}
	return &cairn.Error{
		Code: cairn.ENOTFOUND,
		Message: fmt.Sprintf("the content of %s was purged on %s by %s (%s)",
			h.Short(), time.Unix(0, t).UTC().Format(time.DateOnly), principal, p.Reason),
		Err: cairn.ErrPurged,
	}
}

// HasObjects reports which of hs are stored.
func (db *DB) HasObjects(ctx context.Context, hs []cairn.Hash) ([]bool, error) {
	out := make([]bool, len(hs))
	// Each chunk's hashes by place, a chunk at a time: a check of a whole
	// import's content holds one chunk's, not one for each file.
	index := make(map[cairn.Hash][]int, min(len(hs), 500))
	for start := 0; start < len(hs); start += 500 {
		chunk := hs[start:min(start+500, len(hs))]
		clear(index)
		for i, h := range chunk {
			index[h] = append(index[h], start+i)
		}
		args := make([]any, len(chunk))
		for i, h := range chunk {
			args[i] = h[:]
		}
		rows, err := db.r.QueryContext(ctx, `SELECT hash FROM objects WHERE hash IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, translate(err)
		}
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				rows.Close()
				return nil, translate(err)
			}
			for _, i := range index[cairn.Hash(b)] {
				out[i] = true
			}
		}
		if err := rows.Close(); err != nil {
			return nil, translate(err)
		}
	}
	return out, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// PutObjects stores objects in transactions of up to 2,000 objects,
// inserted in hash order so the hash index grows sequentially. Objects are
// compressed on every core before the write lock is taken, the next chunk
// while the current one is written.
//
// These transactions run with synchronous=NORMAL: they write objects that
// nothing reaches yet, and the commit that makes them reachable runs with
// the database's setting (FULL by default) and so syncs the write-ahead log
// up to and including them.
func (db *DB) PutObjects(ctx context.Context, objs []cairn.Object) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return translate(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
		return translate(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = `+db.sync)
	for rows := range db.codec.Chunks(ctx, objs, 2000) {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store objects: %w", translate(err))
		}
		start := time.Now()
		if err := db.insert(ctx, tx, rows); err != nil {
			tx.Rollback()
			db.measure(start)
			return fmt.Errorf("store objects: %w", translate(err))
		}
		err = tx.Commit()
		db.measure(start)
		if err != nil {
			return fmt.Errorf("store objects: %w", translate(err))
		}
	}
	return ctx.Err()
}

// objectsStmt returns the statement that reads n objects, that are stored
// and not purged.
func (db *DB) objectsStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	db.getObjectsMu.Lock()
	defer db.getObjectsMu.Unlock()
	if db.getObjects[n] == nil {
		st, err := db.r.PrepareContext(ctx, `SELECT hash, kind, codec, size, data FROM objects
			WHERE hash IN (`+placeholders(n)+`) AND data IS NOT NULL`)
		if err != nil {
			return nil, translate(err)
		}
		db.getObjects[n] = st
	}
	return db.getObjects[n], nil
}

// fewObjects is the most objects GetObjects reads with one statement.
const fewObjects = 16

// insertBatch is the number of objects one INSERT statement writes.
const insertBatch = 64

func (db *DB) insert(ctx context.Context, tx *sql.Tx, rows []codec.Encoded) error {
	// coalesce: the driver binds an empty byte slice as NULL, and NULL
	// means purged.
	const values = `(?, ?, ?, ?, coalesce(?, X''), ?),`
	const head = `INSERT OR IGNORE INTO objects (hash, kind, codec, size, data, created) VALUES `
	now := db.now().Unix()
	for start := 0; start < len(rows); start += insertBatch {
		part := rows[start:min(start+insertBatch, len(rows))]
		args := make([]any, 0, 6*len(part))
		for _, r := range part {
			args = append(args, r.Obj.Hash[:], int(r.Obj.Kind), r.Codec, len(r.Obj.Data), r.Data, now)
		}
		q := head + strings.TrimSuffix(strings.Repeat(values, len(part)), ",")
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// ObjectsByPrefix returns up to limit hashes of objects of a kind whose hex
// form starts with prefix.
func (db *DB) ObjectsByPrefix(ctx context.Context, kind cairn.ObjectKind, prefix string, limit int) ([]cairn.Hash, error) {
	lo, hi, err := cairn.HashRange(prefix)
	if err != nil {
		return nil, err
	}
	q := `SELECT hash FROM objects WHERE hash >= ? AND kind = ?`
	args := []any{lo, int(kind)}
	if hi != nil {
		q += ` AND hash < ?`
		args = append(args, hi)
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY hash LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []cairn.Hash
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, translate(err)
		}
		out = append(out, cairn.Hash(b))
	}
	return out, translate(rows.Err())
}

// Objects calls fn for every stored object.
func (db *DB) Objects(ctx context.Context, fn func(cairn.ObjectInfo) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT hash, kind, size, created, data IS NULL FROM objects`)
	if err != nil {
		return translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var o cairn.ObjectInfo
		var b []byte
		var kind int
		var created int64
		if err := rows.Scan(&b, &kind, &o.Size, &created, &o.Purged); err != nil {
			return translate(err)
		}
		o.Hash, o.Kind, o.Created = cairn.Hash(b), cairn.ObjectKind(kind), time.Unix(created, 0)
		if err := fn(o); err != nil {
			return err
		}
	}
	return translate(rows.Err())
}

// DeleteObjects removes objects and returns their pages to the file system.
func (db *DB) DeleteObjects(ctx context.Context, hs []cairn.Hash) error {
	for start := 0; start < len(hs); start += 500 {
		chunk := hs[start:min(start+500, len(hs))]
		args := make([]any, len(chunk))
		for i, h := range chunk {
			args[i] = h[:]
		}
		err := db.update(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM objects WHERE hash IN (`+placeholders(len(chunk))+`)`, args...)
			return err
		})
		if err != nil {
			return fmt.Errorf("delete objects: %w", err)
		}
	}
	_, err := db.w.ExecContext(ctx, `PRAGMA incremental_vacuum`)
	return translate(err)
}

// Purge removes an object's content (overwriting it on disk: the writer
// runs with secure_delete) and records why, then checkpoints the
// write-ahead log so that no copy stays in it.
func (db *DB) Purge(ctx context.Context, p cairn.Purge) error {
	err := db.update(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE objects SET data = NULL, codec = 0 WHERE hash = ? AND data IS NOT NULL`, p.Hash[:])
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var exists int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM objects WHERE hash = ?`, p.Hash[:]).Scan(&exists); err != nil {
				return err
			}
			if exists == 0 {
				return cairn.Errorf(cairn.ENOTFOUND, "object %s not found", p.Hash.Short())
			}
			return nil // already purged
		}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO purges (hash, principal, reason, time) VALUES (?, ?, ?, ?)`,
			p.Hash[:], string(p.Principal), p.Reason, p.Time.UnixNano())
		if err == nil && db.crash != nil {
			db.crash("purge:updated")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("purge %s: %w", p.Hash.Short(), err)
	}
	if db.crash != nil {
		db.crash("purge:committed")
	}
	if err := db.Checkpoint(ctx); err != nil {
		db.log.WarnContext(ctx, "purge: checkpoint after purge did not complete; the log is rewritten at the next checkpoint", "err", err)
	}
	return nil
}

// Purges lists the purge records, oldest first.
func (db *DB) Purges(ctx context.Context) ([]cairn.Purge, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT hash, principal, reason, time FROM purges ORDER BY time, hash`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []cairn.Purge
	for rows.Next() {
		var p cairn.Purge
		var b []byte
		var principal string
		var t int64
		if err := rows.Scan(&b, &principal, &p.Reason, &t); err != nil {
			return nil, translate(err)
		}
		p.Hash, p.Principal, p.Time = cairn.Hash(b), cairn.Principal(principal), time.Unix(0, t).UTC()
		out = append(out, p)
	}
	return out, translate(rows.Err())
}

// Ref returns one ref.
func (db *DB) Ref(ctx context.Context, name string) (cairn.Ref, error) {
	return scanRef(name, db.getRef.QueryRowContext(ctx, name))
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readRef(ctx context.Context, q queryer, name string) (cairn.Ref, error) {
	return scanRef(name, q.QueryRowContext(ctx, `SELECT kind, hash, updated FROM refs WHERE name = ?`, name))
}

func scanRef(name string, row *sql.Row) (cairn.Ref, error) {
	r := cairn.Ref{Name: name}
	var b []byte
	var kind int
	var updated int64
	err := row.Scan(&kind, &b, &updated)
	if err != nil {
		err = translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return r, cairn.Errorf(cairn.ENOTFOUND, "ref %s not found", name)
		}
		return r, err
	}
	r.Kind, r.Hash, r.Updated = cairn.RefKind(kind), cairn.Hash(b), time.Unix(0, updated).UTC()
	return r, nil
}

// Refs returns the refs whose names start with prefix, sorted by name.
func (db *DB) Refs(ctx context.Context, prefix string) ([]cairn.Ref, error) {
	rows, err := db.rq.QueryContext(ctx, `SELECT name, kind, hash, updated FROM refs WHERE substr(name, 1, ?) = ? ORDER BY name`,
		len(prefix), prefix)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []cairn.Ref
	for rows.Next() {
		var r cairn.Ref
		var b []byte
		var kind int
		var updated int64
		if err := rows.Scan(&r.Name, &kind, &b, &updated); err != nil {
			return nil, translate(err)
		}
		r.Kind, r.Hash, r.Updated = cairn.RefKind(kind), cairn.Hash(b), time.Unix(0, updated).UTC()
		out = append(out, r)
	}
	return out, translate(rows.Err())
}

// RefLog returns ref updates newer than since, newest first.
func (db *DB) RefLog(ctx context.Context, name string, since time.Time) ([]cairn.RefLogEntry, error) {
	q := `SELECT name, old, new, principal, message, time FROM reflog WHERE time > ?`
	args := []any{since.UnixNano()}
	if since.IsZero() {
		args[0] = int64(-1 << 63)
	}
	if name != "" {
		q += ` AND name = ?`
		args = append(args, name)
	}
	rows, err := db.rq.QueryContext(ctx, q+` ORDER BY time DESC, id DESC`, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []cairn.RefLogEntry
	for rows.Next() {
		var e cairn.RefLogEntry
		var old, new []byte
		var principal string
		var t int64
		if err := rows.Scan(&e.Name, &old, &new, &principal, &e.Message, &t); err != nil {
			return nil, translate(err)
		}
		copy(e.Old[:], old)
		copy(e.New[:], new)
		e.Principal, e.Time = cairn.Principal(principal), time.Unix(0, t).UTC()
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// Pins returns the pins that have not expired at now.
func (db *DB) Pins(ctx context.Context, now time.Time) ([]cairn.Pin, error) {
	rows, err := db.rq.QueryContext(ctx, `SELECT hash, reason, created, expires FROM pins
		WHERE expires IS NULL OR expires > ? ORDER BY created, reason`, now.UnixNano())
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []cairn.Pin
	for rows.Next() {
		var p cairn.Pin
		var b []byte
		var created int64
		var expires sql.NullInt64
		if err := rows.Scan(&b, &p.Reason, &created, &expires); err != nil {
			return nil, translate(err)
		}
		p.Hash, p.Created = cairn.Hash(b), time.Unix(0, created).UTC()
		if expires.Valid {
			p.Expires = time.Unix(0, expires.Int64).UTC()
		}
		out = append(out, p)
	}
	return out, translate(rows.Err())
}

// Update runs fn in one write transaction.
func (db *DB) Update(ctx context.Context, fn func(cairn.Tx) error) error {
	return db.updateConn(ctx, func(conn *sql.Conn, tx *sql.Tx) error { return fn(&Tx{db: db, conn: conn, tx: tx}) })
}

// Inspect runs fn in a transaction that reads one view of the database
// and takes no write lock: a deferred transaction on a connection of its
// own, always rolled back. fn may write the connection's temporary tables
// (a deep check of the index rebuilds it in shadows of its tables, see
// indexTx.Shadow); a write to the database itself would take the lock as
// any write does, and be undone.
func (db *DB) Inspect(ctx context.Context, fn func(cairn.Tx) error) error {
	pool, err := sql.Open("sqlite", db.base)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", db.path, err)
	}
	defer pool.Close()
	conn, err := pool.Conn(ctx)
	if err != nil {
		return translate(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback()
	// The view starts with this read. Objects are read through the read
	// pool, outside it: content purged meanwhile is gone from what fn
	// reads, so fn's result does not stand.
	var purged, after int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM purges`).Scan(&purged); err != nil {
		return translate(err)
	}
	err = fn(&Tx{db: db, conn: conn, tx: tx})
	if perr := db.r.QueryRowContext(ctx, `SELECT count(*) FROM purges`).Scan(&after); perr != nil {
		return errors.Join(err, fmt.Errorf("read the purges after a view of %s: %w", db.path, translate(perr)))
	}
	if after != purged {
		return cairn.Errorf(cairn.EUNAVAILABLE, "content was purged while %s was read", db.path).
			WithHint("Run the command again.")
	}
	return err
}

// Tx is a write transaction; it implements cairn.Tx.
type Tx struct {
	db   *DB
	conn *sql.Conn
	tx   *sql.Tx
}

var _ cairn.Tx = (*Tx)(nil)

// Raw calls fn with the driver connection the transaction runs on (see
// [sql.Conn.Raw]): bulk writers bind values straight to the driver's
// statements, skipping database/sql's conversion of every value. fn must
// not keep the connection, nor commit or roll back.
func (t *Tx) Raw(fn func(driverConn any) error) error { return t.conn.Raw(fn) }

// PutObjects stores objects as part of the transaction.
func (t *Tx) PutObjects(ctx context.Context, objs []cairn.Object) error {
	return t.db.insert(ctx, t.tx, t.db.codec.EncodeAll(objs))
}

// Ref reads a ref inside the transaction.
func (t *Tx) Ref(ctx context.Context, name string) (cairn.Ref, error) {
	return readRef(ctx, t.tx, name)
}

// UpdateRef applies one compare-and-swap and logs it.
func (t *Tx) UpdateRef(ctx context.Context, u cairn.RefUpdate) error {
	cur, err := t.Ref(ctx, u.Name)
	exists := err == nil
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return err
	}
	if err := cairn.CheckRefUpdate(cur, exists, u); err != nil {
		return err
	}
	now := t.db.now().UnixNano()
	if u.New.IsZero() {
		_, err = t.tx.ExecContext(ctx, `DELETE FROM refs WHERE name = ?`, u.Name)
	} else {
		_, err = t.tx.ExecContext(ctx, `INSERT INTO refs (name, kind, hash, updated) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, updated = excluded.updated`,
			u.Name, int(u.Kind), u.New[:], now)
	}
	if err != nil {
		return translate(err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO reflog (name, old, new, principal, message, time) VALUES (?, ?, ?, ?, ?, ?)`,
		u.Name, nullHash(u.Old), nullHash(u.New), string(u.Principal), u.Message, now)
	return translate(err)
}

func nullHash(h cairn.Hash) any {
	if h.IsZero() {
		return nil
	}
	return h[:]
}

// SetPin adds or replaces the pin (p.Hash, p.Reason).
func (t *Tx) SetPin(ctx context.Context, p cairn.Pin) error {
	var expires any
	if !p.Expires.IsZero() {
		expires = p.Expires.UnixNano()
	}
	_, err := t.tx.ExecContext(ctx, `INSERT OR REPLACE INTO pins (hash, reason, created, expires) VALUES (?, ?, ?, ?)`,
		p.Hash[:], p.Reason, p.Created.UnixNano(), expires)
	return translate(err)
}

// DeletePin removes the pin (h, reason) if it exists.
func (t *Tx) DeletePin(ctx context.Context, h cairn.Hash, reason string) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM pins WHERE hash = ? AND reason = ?`, h[:], reason)
	return translate(err)
}
