package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn"
	"cairn/postgres"
	"cairn/postgres/pgtest"
	"cairn/storetest"
)

func open(t *testing.T) cairn.Backend {
	t.Helper()
	db, err := postgres.Open(t.Context(), pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, open)
}

// TestOpen_Unreachable checks that a server that is not there is a clear
// error with a hint, soon.
func TestOpen_Unreachable(t *testing.T) {
	start := time.Now()
	_, err := postgres.Open(t.Context(), "postgres://nobody:secret@127.0.0.1:1/none", &postgres.Options{ConnectTimeout: 2 * time.Second})
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE || !strings.Contains(err.Error(), "127.0.0.1:1/none") || cairn.ErrorHint(err) == "" {
		t.Fatalf("open an unreachable server: %v (hint %q), want EUNAVAILABLE naming it, with a hint", err, cairn.ErrorHint(err))
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("the error shows the password: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to give up", d)
	}
	_, err = postgres.Open(t.Context(), "postgres://127.0.0.1:5432/x?sslmode=bogus", nil)
	if cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
		t.Errorf("open a bad URL: %v, want EINVALID with a hint", err)
	}
}

// TestOpen_NewerSchema checks that a database upgraded by a newer cairn is
// refused, untouched.
func TestOpen_NewerSchema(t *testing.T) {
	url := pgtest.URL(t)
	db, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.SchemaVersion(t.Context())
	if err != nil || v < 1 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	if _, err := db.Pool().Exec(t.Context(), `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, 'future.sql', 0)`, v+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = postgres.Open(t.Context(), url, nil)
	if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), "newer") || cairn.ErrorHint(err) == "" {
		t.Fatalf("open a newer schema: %v, want EINVALID saying it is newer, with a hint", err)
	}
}

// TestOpen_SearchPathAfterAnother checks that a vault whose search_path
// names an empty schema first and another vault's after it is made in the
// empty one: what Open finds made is looked for there only.
func TestOpen_SearchPathAfterAnother(t *testing.T) {
	ctx := t.Context()
	other := pgtest.URL(t)
	db, err := postgres.Open(ctx, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	o, err := url.Parse(other)
	if err != nil {
		t.Fatal(err)
	}
	mine := u.Query().Get("search_path")
	if _, err := db.Pool().Exec(ctx, `CREATE SCHEMA `+mine); err != nil { // there, and empty
		t.Fatal(err)
	}
	db.Close()
	q := u.Query()
	q.Set("search_path", mine+","+o.Query().Get("search_path"))
	u.RawQuery = q.Encode()
	db, err = postgres.Open(ctx, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relnamespace = to_regnamespace($1) AND relname IN ('schema_migrations', 'objects', 'files')`, mine).Scan(&tables); err != nil || tables != 3 {
		t.Errorf("tables made in the vault's own schema: %d, %v; want schema_migrations, objects and files", tables, err)
	}
}

// TestOpen_Concurrent checks that processes starting at once on a new
// database migrate it once.
func TestOpen_Concurrent(t *testing.T) {
	url := pgtest.URL(t)
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			db, err := postgres.Open(t.Context(), url, nil)
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestUpdate_LockTimeout checks that a writer that cannot have the vault's
// write lock within the timeout fails with EUNAVAILABLE and a hint.
func TestUpdate_LockTimeout(t *testing.T) {
	url := pgtest.URL(t)
	a, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(t.Context(), url, &postgres.Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	held, release := make(chan struct{}), make(chan struct{})
	go a.Update(t.Context(), func(cairn.Tx) error {
		close(held)
		<-release
		return nil
	})
	<-held
	err = b.Update(t.Context(), func(cairn.Tx) error { return nil })
	close(release)
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE || cairn.ErrorHint(err) == "" {
		t.Fatalf("write while another holds the lock: %v, want EUNAVAILABLE with a hint", err)
	}
	// The refused writer's connection went back to the pool out of the
	// transaction its begin had opened: writes go on, one per connection.
	for i := range 4 {
		if err := b.Update(t.Context(), func(tx cairn.Tx) error { return nil }); err != nil {
			t.Fatalf("write %d after the lock was released: %v", i, err)
		}
	}
}

// TestUpdate_WaitersLeaveTheHolderConnections: writes of one process
// waiting for the vault's lock hold no connection of its pool, so that
// the write holding the lock can still read through the pool (as it
// reads contents) however many wait behind it. With each waiter on a
// connection of its own, the holder's read found every connection taken
// until the waiters gave up (seen with the turn taken out: the read
// failed after the acquire timeout).
func TestUpdate_WaitersLeaveTheHolderConnections(t *testing.T) {
	ctx := t.Context()
	db, err := postgres.Open(ctx, pgtest.URL(t), &postgres.Options{MaxConns: 3, AcquireTimeout: time.Second, LockTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const waiters = 6
	waiting := make(chan struct{}, waiters)
	postgres.OnWriteWait(db, func() { waiting <- struct{}{} })
	held, queued := make(chan struct{}), make(chan struct{})
	release := sync.OnceFunc(func() { close(queued) })
	defer release() // before db.Close, which waits for the holder's connection
	done := make(chan error, 1)
	go func() {
		done <- db.Update(ctx, func(cairn.Tx) error {
			close(held)
			<-queued
			var one int
			return db.Pool().QueryRow(ctx, `SELECT 1`).Scan(&one)
		})
	}()
	<-held
	errs := make(chan error, waiters)
	for range waiters {
		go func() { errs <- db.Update(ctx, func(cairn.Tx) error { return nil }) }()
	}
	for range waiters {
		select {
		case <-waiting:
		case err := <-errs:
			t.Fatalf("a write behind the holder did not wait for its turn: %v", err)
		}
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("the holder's read through the pool while %d writes wait: %v", waiters, err)
	}
	for range waiters {
		if err := <-errs; err != nil {
			t.Errorf("a write waiting behind the holder: %v", err)
		}
	}
}

// TestPoolExhausted checks that a write waits for a connection of a full
// pool within a bound, then fails with EUNAVAILABLE.
func TestPoolExhausted(t *testing.T) {
	db, err := postgres.Open(t.Context(), pgtest.URL(t), &postgres.Options{MaxConns: 2, AcquireTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 2 {
		c, err := db.Pool().Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
	}
	start := time.Now()
	err = db.Update(t.Context(), func(cairn.Tx) error { return nil })
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE || cairn.ErrorHint(err) == "" {
		t.Fatalf("write on an exhausted pool: %v, want EUNAVAILABLE with a hint", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %v, want about the acquire timeout", d)
	}
	// Reads too.
	start = time.Now()
	if _, err := db.Ref(t.Context(), "heads/main"); cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
		t.Errorf("read on an exhausted pool: %v, want EUNAVAILABLE", err)
	}
	if _, err := db.Refs(t.Context(), "heads/"); cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
		t.Errorf("list on an exhausted pool: %v, want EUNAVAILABLE", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("reads gave up after %v, want about twice the acquire timeout", d)
	}
}

// TestOpen_PoolSize checks that the URL's pool_max_conns sizes the pool,
// and that without it the pool has 16 connections.
func TestOpen_PoolSize(t *testing.T) {
	url := pgtest.URL(t)
	for _, tc := range []struct {
		url  string
		want int32
	}{{url, 16}, {url + "&pool_max_conns=3", 3}} {
		db, err := postgres.Open(t.Context(), tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Pool().Config().MaxConns; got != tc.want {
			t.Errorf("%s: pool of %d connections, want %d", tc.url, got, tc.want)
		}
		db.Close()
	}
}

// TestInspect: a view takes no lock (a write by another process's
// connection lands within its lock timeout while the view is open, and
// the view does not see it), and content purged while it is open makes
// its result void (EUNAVAILABLE).
func TestInspect(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	a, err := postgres.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, url, &postgres.Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	data := []byte("a secret")
	blob := cairn.Object{Hash: cairn.Hash(sha256.Sum256(data)), Kind: cairn.KindBlob, Data: data}
	if err := a.PutObjects(ctx, []cairn.Object{blob}); err != nil {
		t.Fatal(err)
	}
	err = a.Inspect(ctx, func(tx cairn.Tx) error {
		q, err := postgres.PgxTx(tx)
		if err != nil {
			return err
		}
		err = b.Update(ctx, func(w cairn.Tx) error {
			wq, err := postgres.PgxTx(w)
			if err != nil {
				return err
			}
			_, err = wq.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('beside', '1')`)
			return err
		})
		if err != nil {
			return fmt.Errorf("a write beside the view: %w", err)
		}
		var n int
		if err := q.QueryRow(ctx, `SELECT count(*) FROM meta WHERE key = 'beside'`).Scan(&n); err != nil || n != 0 {
			return fmt.Errorf("the view sees %d rows written after it began (%v)", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Inspect(ctx, func(cairn.Tx) error {
		return b.Purge(ctx, cairn.Purge{Hash: blob.Hash, Principal: cairn.User("ada"), Reason: "leaked", Time: time.Now()})
	})
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
		t.Fatalf("a purge while the view was open: %v, want EUNAVAILABLE", err)
	}
}

// TestPurge_BesideAView: a purge while a transaction that began before it
// still reads says that the content's bytes stay until that transaction
// ends; a purge with no such reader says nothing. cairn runs as a role
// that is not a superuser, which sees other roles' sessions only in part.
// The database is the test's own: any transaction of another test in it
// is a reader the purge rightly names.
func TestPurge_BesideAView(t *testing.T) {
	ctx := t.Context()
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	own := ownDatabase(t)
	var logged bytes.Buffer
	db, err := postgres.Open(ctx, asOwner(t, own, "cairn_purger_"+suffix), &postgres.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var blobs []cairn.Object
	for _, s := range []string{"a secret", "another", "a third"} {
		data := []byte(s)
		blobs = append(blobs, cairn.Object{Hash: cairn.Hash(sha256.Sum256(data)), Kind: cairn.KindBlob, Data: data})
	}
	if err := db.PutObjects(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	purge := func(o cairn.Object) {
		t.Helper()
		if err := db.Purge(ctx, cairn.Purge{Hash: o.Hash, Principal: cairn.User("ada"), Reason: "leaked", Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	purge(blobs[0])
	if strings.Contains(logged.String(), "may still read") {
		t.Fatalf("a purge with no reader warned:\n%s", logged.String())
	}
	err = db.Inspect(ctx, func(cairn.Tx) error {
		purge(blobs[1])
		return nil
	})
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE {
		t.Fatalf("a purge while the view was open: %v, want EUNAVAILABLE", err)
	}
	if !strings.Contains(logged.String(), "may still read") {
		t.Fatalf("a purge beside a view said nothing of it:\n%s", logged.String())
	}

	// A reader of another role, which sees no transaction start of
	// cairn's role in pg_stat_activity, nor cairn of its.
	logged.Reset()
	other, err := pgx.Connect(ctx, asOwner(t, own, "cairn_reader_"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	tx, err := other.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil { // the snapshot
		t.Fatal(err)
	}
	purge(blobs[2])
	if !strings.Contains(logged.String(), "may still read") {
		t.Fatalf("a purge beside another role's reader said nothing of it:\n%s", logged.String())
	}
}
