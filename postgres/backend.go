package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/internal/codec"
)

// FormatVersion returns the store format recorded in the database.
func (db *DB) FormatVersion(ctx context.Context) (int, error) {
	v, err := db.Meta(ctx, "format_version")
	if err != nil {
		return 0, err
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
	err := db.pool.QueryRow(ctx, `SELECT kind, codec, size, data, data IS NULL FROM objects WHERE hash = $1`, h[:]).
		Scan(&kind, &codec, &size, &data, &purged)
	if err != nil {
		err = db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return cairn.Object{}, cairn.Errorf(cairn.ENOTFOUND, "object %s not found", h.Short())
		}
		return cairn.Object{}, fmt.Errorf("read object %s: %w", h.Short(), err)
	}
	if purged {
		return cairn.Object{}, db.purgedError(ctx, h)
	}
	data, err = db.codec.Decompress(orEmpty(data), codec, size)
	if err != nil {
		return cairn.Object{}, cairn.Errorf(cairn.EINTERNAL, "read object %s: %w", h.Short(), err)
	}
	return cairn.Object{Hash: h, Kind: cairn.ObjectKind(kind), Data: orEmpty(data)}, nil
}

func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// hashArgs returns hs as a bytea[] argument.
func hashArgs(hs []cairn.Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		out[i] = hs[i][:]
	}
	return out
}

// GetObjects reads objects in batches of 1,000 and decompresses them on
// every core.
func (db *DB) GetObjects(ctx context.Context, hs []cairn.Hash, fn func(cairn.Object) error) error {
	hs = slices.Clone(hs)
	slices.SortFunc(hs, func(a, b cairn.Hash) int { return bytes.Compare(a[:], b[:]) })
	hs = slices.Compact(hs)
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
		wg.Go(func() {
			for s := range work {
				data, err := db.codec.Decompress(s.obj.Data, s.codec, s.size)
				if err == nil {
					s.obj.Data = orEmpty(data)
					err = fn(s.obj)
				} else {
					err = cairn.Errorf(cairn.EINTERNAL, "read object %s: %w", s.obj.Hash.Short(), err)
				}
				if err != nil {
					cancel(err)
				}
			}
		})
	}
	err := func() error {
		defer close(work)
		for start := 0; start < len(hs); start += 1000 {
			chunk := hs[start:min(start+1000, len(hs))]
			rows, err := db.pool.Query(ctx, `SELECT hash, kind, codec, size, data FROM objects
				WHERE hash = ANY($1) AND data IS NOT NULL`, hashArgs(chunk))
			if err != nil {
				return db.translate(err)
			}
			for rows.Next() {
				var s stored
				var h []byte
				var kind int
				if err := rows.Scan(&h, &kind, &s.codec, &s.size, &s.obj.Data); err != nil {
					rows.Close()
					return db.translate(err)
				}
				s.obj.Hash, s.obj.Kind = cairn.Hash(h), cairn.ObjectKind(kind)
				select {
				case work <- s:
				case <-ctx.Done():
					rows.Close()
					return context.Cause(ctx)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return db.translate(err)
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
	var reason, principal string
	var t int64
	err := db.pool.QueryRow(ctx, `SELECT principal, reason, time FROM purges WHERE hash = $1`, h[:]).Scan(&principal, &reason, &t)
	if err != nil {
		return &cairn.Error{Code: cairn.ENOTFOUND, Message: fmt.Sprintf("the content of %s was purged", h.Short()), Err: cairn.ErrPurged}
	}
	return &cairn.Error{
		Code: cairn.ENOTFOUND,
		Message: fmt.Sprintf("the content of %s was purged on %s by %s (%s)",
			h.Short(), time.Unix(0, t).UTC().Format(time.DateOnly), principal, reason),
		Err: cairn.ErrPurged,
	}
}

// HasObjects reports which of hs are stored.
func (db *DB) HasObjects(ctx context.Context, hs []cairn.Hash) ([]bool, error) {
	out := make([]bool, len(hs))
	// Each chunk's hashes by place, a chunk at a time: a check of a whole
	// import's content holds one chunk's, not one for each file.
	index := make(map[cairn.Hash][]int, min(len(hs), 1000))
	for start := 0; start < len(hs); start += 1000 {
		chunk := hs[start:min(start+1000, len(hs))]
		clear(index)
		for i, h := range chunk {
			index[h] = append(index[h], start+i)
		}
		rows, err := db.pool.Query(ctx, `SELECT hash FROM objects WHERE hash = ANY($1)`, hashArgs(chunk))
		if err != nil {
			return nil, db.translate(err)
		}
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				rows.Close()
				return nil, db.translate(err)
			}
			for _, i := range index[cairn.Hash(b)] {
				out[i] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, db.translate(err)
		}
	}
	return out, nil
}

// PutObjects stores objects in transactions of up to 2,000 objects,
// compressed on every core, the next chunk while the current one is
// written. The transactions commit without waiting for the server's disk
// (synchronous_commit off): they write objects that nothing reaches yet,
// and the commit that makes them reachable waits for the disk and so for
// everything written before it.
func (db *DB) PutObjects(ctx context.Context, objs []cairn.Object) error {
	for rows := range db.codec.Chunks(ctx, objs, 2000) {
		tx, err := db.begin(ctx)
		if err != nil {
			return fmt.Errorf("store objects: %w", err)
		}
		_, err = tx.Exec(ctx, `SET LOCAL synchronous_commit = off`)
		if err == nil {
			err = db.insert(ctx, tx, rows)
		}
		if err == nil {
			err = tx.Commit(ctx)
		}
		tx.Rollback(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("store objects: %w", db.translate(err))
		}
	}
	return ctx.Err()
}

// insert writes rows in one statement, skipping objects that exist.
func (db *DB) insert(ctx context.Context, tx pgx.Tx, rows []codec.Encoded) error {
	if len(rows) == 0 {
		return nil
	}
	hashes := make([][]byte, len(rows))
	kinds := make([]int16, len(rows))
	codecs := make([]int16, len(rows))
	sizes := make([]int64, len(rows))
	data := make([][]byte, len(rows))
	for i, r := range rows {
		hashes[i], kinds[i], codecs[i], sizes[i], data[i] = r.Obj.Hash[:], int16(r.Obj.Kind), int16(r.Codec), int64(len(r.Obj.Data)), r.Data
	}
	_, err := tx.Exec(ctx, `INSERT INTO objects (hash, kind, codec, size, data, created)
		SELECT h, k, c, s, d, $6 FROM unnest($1::bytea[], $2::smallint[], $3::smallint[], $4::bigint[], $5::bytea[]) AS u(h, k, c, s, d)
		ON CONFLICT (hash) DO NOTHING`, hashes, kinds, codecs, sizes, data, db.now().Unix())
	return err
}

// ObjectsByPrefix returns up to limit hashes of objects of a kind whose hex
// form starts with prefix.
func (db *DB) ObjectsByPrefix(ctx context.Context, kind cairn.ObjectKind, prefix string, limit int) ([]cairn.Hash, error) {
	lo, hi, err := cairn.HashRange(prefix)
	if err != nil {
		return nil, err
	}
	q := `SELECT hash FROM objects WHERE hash >= $1 AND kind = $2`
	args := []any{lo, int16(kind)}
	if hi != nil {
		q += ` AND hash < $4`
		args = append(args, limit, hi)
	} else {
		args = append(args, limit)
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY hash LIMIT $3`, args...)
	if err != nil {
		return nil, db.translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cairn.Hash, error) {
		var b []byte
		err := r.Scan(&b)
		return cairn.Hash(b), err
	})
	return out, db.translate(err)
}

// Objects calls fn for every stored object.
func (db *DB) Objects(ctx context.Context, fn func(cairn.ObjectInfo) error) error {
	rows, err := db.pool.Query(ctx, `SELECT hash, kind, size, created, data IS NULL FROM objects`)
	if err != nil {
		return db.translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var o cairn.ObjectInfo
		var b []byte
		var kind int
		var created int64
		if err := rows.Scan(&b, &kind, &o.Size, &created, &o.Purged); err != nil {
			return db.translate(err)
		}
		o.Hash, o.Kind, o.Created = cairn.Hash(b), cairn.ObjectKind(kind), time.Unix(created, 0)
		if err := fn(o); err != nil {
			return err
		}
	}
	return db.translate(rows.Err())
}

// DeleteObjects removes objects (garbage collection).
func (db *DB) DeleteObjects(ctx context.Context, hs []cairn.Hash) error {
	for start := 0; start < len(hs); start += 1000 {
		chunk := hs[start:min(start+1000, len(hs))]
		if _, err := db.pool.Exec(ctx, `DELETE FROM objects WHERE hash = ANY($1)`, hashArgs(chunk)); err != nil {
			return fmt.Errorf("delete objects: %w", db.translate(err))
		}
	}
	return nil
}

// Purge removes an object's content and records why, then vacuums the
// objects table so that the old row versions holding the content are
// removed from the table's files. (Copies in the server's write-ahead log
// and in backups last until those are recycled: docs/postgres.md.)
func (db *DB) Purge(ctx context.Context, p cairn.Purge) error {
	var xid string // the purge's transaction, for the readers older than it
	err := db.update(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE objects SET data = NULL, codec = 0 WHERE hash = $1 AND data IS NOT NULL`, p.Hash[:])
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM objects WHERE hash = $1)`, p.Hash[:]).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				return cairn.Errorf(cairn.ENOTFOUND, "object %s not found", p.Hash.Short())
			}
			return nil // already purged
		}
		if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id()::xid::text`).Scan(&xid); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO purges (hash, principal, reason, time) VALUES ($1, $2, $3, $4)
			ON CONFLICT (hash) DO UPDATE SET principal = excluded.principal, reason = excluded.reason, time = excluded.time`,
			p.Hash[:], string(p.Principal), p.Reason, p.Time.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("purge %s: %w", p.Hash.Short(), err)
	}
	// The purge has committed: what follows only tidies and tells.
	if err := db.vacuumObjects(ctx); err != nil {
		db.log.WarnContext(ctx, "purge: vacuum after purge did not complete; autovacuum removes the old row later", "err", err)
	}
	if xid == "" { // already purged
		return nil
	}
	// A transaction whose snapshot is older than the purge (a deep
	// check's view, a long report or dump, of any role: backend_xmin is
	// shown to every role) may see the old row, and the vacuum keeps it
	// for that transaction. Not seen here: a standby's feedback,
	// replication slots, prepared transactions.
	var readers []int32
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(array_agg(pid ORDER BY pid), '{}') FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
			AND age(backend_xmin) >= age($1::xid) AND backend_type IS DISTINCT FROM 'autovacuum worker'`, xid).Scan(&readers); err != nil {
		db.log.WarnContext(ctx, "purge: could not tell whether a transaction still reads the content", "err", db.translate(err))
	} else if len(readers) > 0 {
		db.log.WarnContext(ctx, "purge: transactions that began before it may still read the content; its bytes stay in the database until they end and objects is vacuumed again (autovacuum does)", "pids", readers)
	}
	return nil
}

// vacuumObjects vacuums the objects table, waiting for the locks it
// needs however long: a purge's content must leave the table's pages.
func (db *DB) vacuumObjects(ctx context.Context) error {
	conn, err := db.pool.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if err := unboundedLocks(ctx, conn.Conn()); err != nil {
		return err
	}
	defer boundedLocks(ctx, conn.Conn())
	_, err = conn.Exec(ctx, `VACUUM objects`)
	return err
}

// Purges lists the purge records, oldest first.
func (db *DB) Purges(ctx context.Context) ([]cairn.Purge, error) {
	rows, err := db.pool.Query(ctx, `SELECT hash, principal, reason, time FROM purges ORDER BY time, hash`)
	if err != nil {
		return nil, db.translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cairn.Purge, error) {
		var p cairn.Purge
		var b []byte
		var principal string
		var t int64
		err := r.Scan(&b, &principal, &p.Reason, &t)
		p.Hash, p.Principal, p.Time = cairn.Hash(b), cairn.Principal(principal), time.Unix(0, t).UTC()
		return p, err
	})
	return out, db.translate(err)
}

// Ref returns one ref.
func (db *DB) Ref(ctx context.Context, name string) (cairn.Ref, error) {
	return readRef(ctx, db, db.pool, name)
}

type queryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readRef(ctx context.Context, db *DB, q queryer, name string) (cairn.Ref, error) {
	r := cairn.Ref{Name: name}
	var b []byte
	var kind int
	var updated int64
	err := q.QueryRow(ctx, `SELECT kind, hash, updated FROM refs WHERE name = $1`, name).Scan(&kind, &b, &updated)
	if err != nil {
		err = db.translate(err)
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
	rows, err := db.pool.Query(ctx, `SELECT name, kind, hash, updated FROM refs WHERE starts_with(name, $1) ORDER BY name`, prefix)
	if err != nil {
		return nil, db.translate(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (cairn.Ref, error) {
		var r cairn.Ref
		var b []byte
		var kind int
		var updated int64
		err := row.Scan(&r.Name, &kind, &b, &updated)
		r.Kind, r.Hash, r.Updated = cairn.RefKind(kind), cairn.Hash(b), time.Unix(0, updated).UTC()
		return r, err
	})
	return out, db.translate(err)
}

// RefLog returns ref updates newer than since, newest first.
func (db *DB) RefLog(ctx context.Context, name string, since time.Time) ([]cairn.RefLogEntry, error) {
	q := `SELECT name, old, new, principal, message, time FROM reflog WHERE time > $1`
	args := []any{since.UnixNano()}
	if since.IsZero() {
		args[0] = int64(-1 << 63)
	}
	if name != "" {
		q += ` AND name = $2`
		args = append(args, name)
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY time DESC, id DESC`, args...)
	if err != nil {
		return nil, db.translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cairn.RefLogEntry, error) {
		var e cairn.RefLogEntry
		var old, new []byte
		var principal string
		var t int64
		err := r.Scan(&e.Name, &old, &new, &principal, &e.Message, &t)
		copy(e.Old[:], old)
		copy(e.New[:], new)
		e.Principal, e.Time = cairn.Principal(principal), time.Unix(0, t).UTC()
		return e, err
	})
	return out, db.translate(err)
}

// Pins returns the pins that have not expired at now.
func (db *DB) Pins(ctx context.Context, now time.Time) ([]cairn.Pin, error) {
	rows, err := db.pool.Query(ctx, `SELECT hash, reason, created, expires FROM pins
		WHERE expires IS NULL OR expires > $1 ORDER BY created, reason COLLATE "C"`, now.UnixNano())
	if err != nil {
		return nil, db.translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cairn.Pin, error) {
		var p cairn.Pin
		var b []byte
		var created int64
		var expires *int64
		err := r.Scan(&b, &p.Reason, &created, &expires)
		p.Hash, p.Created = cairn.Hash(b), time.Unix(0, created).UTC()
		if expires != nil {
			p.Expires = time.Unix(0, *expires).UTC()
		}
		return p, err
	})
	return out, db.translate(err)
}

// Update runs fn in one write transaction holding the vault's write lock.
func (db *DB) Update(ctx context.Context, fn func(cairn.Tx) error) error {
	return db.update(ctx, func(tx pgx.Tx) error { return fn(&Tx{db: db, tx: tx}) })
}

// Inspect runs fn in a transaction that sees one snapshot of the vault
// (REPEATABLE READ) and takes no lock, then rolls it back: writers in
// every process go on, and what they change is not part of what fn sees.
// fn must write nothing of the vault's; what it writes into temporary
// tables (index.Shadower) goes with the rollback. It runs on a connection
// of its own, opened for it and closed after, so that no statement a
// pooled connection prepared before runs in it. Objects are read through
// the pool, outside the snapshot: content purged meanwhile voids fn's
// result (EUNAVAILABLE).
//
// A role that may not make temporary tables gets a transaction that holds
// the write lock instead, rolled back all the same: what fn would write
// into temporary tables it writes into the vault's own, which only a
// transaction holding the lock may.
func (db *DB) Inspect(ctx context.Context, fn func(cairn.Tx) error) error {
	var temp bool
	if err := db.pool.QueryRow(ctx, `SELECT has_database_privilege(current_database(), 'TEMP')`).Scan(&temp); err != nil {
		return db.translate(err)
	}
	if !temp {
		err := db.update(ctx, func(tx pgx.Tx) error {
			if err := fn(&Tx{db: db, tx: tx}); err != nil {
				return err
			}
			return errInspected
		})
		if errors.Is(err, errInspected) {
			return nil
		}
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return db.translate(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return db.translate(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The snapshot is taken by the first statement.
	var purged, after int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM purges`).Scan(&purged); err != nil {
		return db.translate(err)
	}
	err = fn(&Tx{db: db, tx: tx, view: true})
	if perr := db.pool.QueryRow(ctx, `SELECT count(*) FROM purges`).Scan(&after); perr != nil {
		return errors.Join(db.translate(err), fmt.Errorf("read the purges after a view: %w", db.translate(perr)))
	}
	if after != purged {
		return cairn.Errorf(cairn.EUNAVAILABLE, "content was purged while the vault was read").
			WithHint("Run the command again.")
	}
	return db.translate(err)
}

// errInspected rolls back the transaction that stands in for a view.
var errInspected = errors.New("postgres: inspected")

// Tx is a write transaction; it implements cairn.Tx.
type Tx struct {
	db *DB
	tx pgx.Tx
	// view: the transaction of Inspect that holds no lock.
	view bool
	// refs are the refs read or written in the transaction: it holds the
	// vault's write lock, which every ref update in every process takes,
	// so they stay as read until it writes them (a round trip saved on
	// every commit, which reads its branch before it moves it).
	refs map[string]txRef
}

// txRef is a ref as the transaction knows it; !exists: there is none.
type txRef struct {
	ref    cairn.Ref
	exists bool
}

var _ cairn.Tx = (*Tx)(nil)

// PgxTx returns the database transaction of a transaction of DB.Update,
// for the storage implementations in the subpackages of postgres and for
// River's driver; another backend's transaction is EINTERNAL.
func PgxTx(tx cairn.Tx) (pgx.Tx, error) {
	if t, ok := tx.(*Tx); ok {
		return t.tx, nil
	}
	return nil, cairn.Errorf(cairn.EINTERNAL, "a transaction of another backend (%T) was given to the PostgreSQL storage", tx)
}

// PutObjects stores objects as part of the transaction.
func (t *Tx) PutObjects(ctx context.Context, objs []cairn.Object) error {
	return t.db.insert(ctx, t.tx, t.db.codec.EncodeAll(objs))
}

// Ref reads a ref inside the transaction.
func (t *Tx) Ref(ctx context.Context, name string) (cairn.Ref, error) {
	if r, ok := t.refs[name]; ok {
		if !r.exists {
			return cairn.Ref{Name: name}, cairn.Errorf(cairn.ENOTFOUND, "ref %s not found", name)
		}
		return r.ref, nil
	}
	r, err := readRef(ctx, t.db, t.tx, name)
	if err == nil || cairn.ErrorCode(err) == cairn.ENOTFOUND {
		t.know(txRef{ref: r, exists: err == nil})
	}
	return r, err
}

// know records a ref as the transaction now knows it.
func (t *Tx) know(r txRef) {
	if t.refs == nil {
		t.refs = map[string]txRef{}
	}
	t.refs[r.ref.Name] = r
}

// UpdateRef applies one compare-and-swap and logs it. The vault's write
// lock, which the transaction holds, keeps it from racing another.
func (t *Tx) UpdateRef(ctx context.Context, u cairn.RefUpdate) error {
	cur, err := t.Ref(ctx, u.Name)
	exists := err == nil
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return err
	}
	if err := cairn.CheckRefUpdate(cur, exists, u); err != nil {
		return err
	}
	// The ref and its log entry in one round trip.
	now := t.db.now().UnixNano()
	var b pgx.Batch
	if u.New.IsZero() {
		b.Queue(`DELETE FROM refs WHERE name = $1`, u.Name)
	} else {
		b.Queue(`INSERT INTO refs (name, kind, hash, updated) VALUES ($1, $2, $3, $4)
			ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, updated = excluded.updated`,
			u.Name, int16(u.Kind), u.New[:], now)
	}
	b.Queue(`INSERT INTO reflog (name, old, new, principal, message, time) VALUES ($1, $2, $3, $4, $5, $6)`,
		u.Name, nullHash(u.Old), nullHash(u.New), string(u.Principal), u.Message, now)
	if err := t.tx.SendBatch(ctx, &b).Close(); err != nil {
		return t.db.translate(err) // the transaction is over: nothing reads t.refs again
	}
	// An update keeps the ref's kind, which CheckRefUpdate found equal.
	t.know(txRef{ref: cairn.Ref{Name: u.Name, Kind: u.Kind, Hash: u.New, Updated: time.Unix(0, now).UTC()}, exists: !u.New.IsZero()})
	return nil
}

func nullHash(h cairn.Hash) []byte {
	if h.IsZero() {
		return nil
	}
	return h[:]
}

// SetPin adds or replaces the pin (p.Hash, p.Reason).
func (t *Tx) SetPin(ctx context.Context, p cairn.Pin) error {
	var expires *int64
	if !p.Expires.IsZero() {
		e := p.Expires.UnixNano()
		expires = &e
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO pins (hash, reason, created, expires) VALUES ($1, $2, $3, $4)
		ON CONFLICT (hash, reason) DO UPDATE SET created = excluded.created, expires = excluded.expires`,
		p.Hash[:], p.Reason, p.Created.UnixNano(), expires)
	return t.db.translate(err)
}

// DeletePin removes the pin (h, reason) if it exists.
func (t *Tx) DeletePin(ctx context.Context, h cairn.Hash, reason string) error {
	_, err := t.tx.Exec(ctx, `DELETE FROM pins WHERE hash = $1 AND reason = $2`, h[:], reason)
	return t.db.translate(err)
}
