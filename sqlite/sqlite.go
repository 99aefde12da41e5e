package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"cairn"
	"cairn/internal/codec"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure a database. The zero value gives the defaults.
type Options struct {
	// BusyTimeout is how long a write waits for another process's write
	// lock before failing with EUNAVAILABLE. Default 5s.
	BusyTimeout time.Duration
	// Synchronous is the SQLite synchronous setting: "FULL" (default; a
	// returned commit survives power loss) or "NORMAL" (faster; the last
	// commits may be lost on power loss, never corrupted).
	Synchronous string
	// Readers is the size of the read-only connection pool. Default 4.
	Readers int
	// Unmapped makes readers read pages with pread instead of mapping the
	// file. Mapping spares a short-lived process a system call per page,
	// but a reader unmaps the whole file whenever it finds that another
	// connection committed, then faults every page back: for a process
	// that serves reads while commits land (cairn serve) that costs a
	// third of its time.
	Unmapped bool
	// Bulk is for a process that writes most of the database once and
	// reads what it wrote once (adopting a folder, an import): readers do
	// not map the file (as Unmapped), and every connection keeps a small
	// page cache, since it reads no page again soon. Caches of the usual
	// size fill with pages read once, some 60 MB at 100k pages.
	Bulk bool
	// Logger receives the database's logs. Default: discard.
	Logger *slog.Logger
	// Crash, when set, is called at named points inside purges; crash tests
	// kill the process there. Nil in production.
	Crash func(point string)
	// WriteHeld, when set, is called after every write transaction of this
	// DB (Update and the object writes of PutObjects) ends, committed or
	// not, with how long it held the write lock: from BEGIN IMMEDIATE
	// returning to COMMIT or ROLLBACK returning. It is a measurement hook
	// (benchmarks); it runs on the writer's goroutine and must be quick.
	// Nil: nothing is measured.
	WriteHeld func(held time.Duration)
}

// Validate reports whether the options are usable.
func (o *Options) Validate() error {
	switch strings.ToUpper(o.Synchronous) {
	case "", "FULL", "NORMAL":
	default:
		return cairn.Errorf(cairn.EINVALID, "synchronous must be FULL or NORMAL, not %q", o.Synchronous)
	}
	if o.BusyTimeout < 0 || o.Readers < 0 {
		return cairn.Errorf(cairn.EINVALID, "busy timeout and readers must not be negative")
	}
	return nil
}

// DB is an open vault database. It implements cairn.Backend.
type DB struct {
	path string
	w    *sql.DB // one connection; transactions BEGIN IMMEDIATE
	r    *sql.DB // read-only pool
	// readers is the read pool's size.
	readers int
	rq      *readPool // r, its statements prepared once
	log     *slog.Logger
	codec   codec.Codec
	now     func() time.Time
	crash   func(string)
	held    func(time.Duration) // Options.WriteHeld
	sync    string              // the synchronous setting: FULL or NORMAL
	busy    time.Duration
	base    string // the connection string every pool starts from

	// The write-ahead log is copied into the database file by a
	// goroutine on its own connection, not by the commit that happens to
	// cross SQLite's threshold: see checkpoints.
	c              *sql.DB
	ckWake, ckStop chan struct{}
	ckDone         chan struct{}

	// Statements of the hot read paths, prepared once; getObjects[n]
	// reads n objects (2 to fewObjects), prepared on first use.
	getObject, getRef *sql.Stmt
	getObjectsMu      sync.Mutex
	getObjects        [fewObjects + 1]*sql.Stmt
}

var _ cairn.Backend = (*DB)(nil)

// Open opens (creating if needed) the database file at path and brings its
// schema up to date.
func Open(ctx context.Context, path string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	busy := cmp.Or(opts.BusyTimeout, 5*time.Second)
	sync := strings.ToUpper(cmp.Or(opts.Synchronous, "FULL"))
	base := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?_busy_timeout=" + strconv.FormatInt(busy.Milliseconds(), 10)
	db := &DB{
		path:  abs,
		log:   cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		now:   time.Now,
		crash: opts.Crash,
		held:  opts.WriteHeld,
	}
	db.sync, db.busy, db.base = sync, busy, base
	// auto_vacuum is set when the database is made (migrate): as a
	// connection parameter it would take the write lock on every open.
	// Checkpoints run in the background (checkpoints), not in commits.
	// Page caches, in KiB: the writer's holds the tables' inner pages
	// between commits; readers keep what searches touch when unmapped.
	wcache, rcache := "-32768", "-8192"
	if opts.Bulk {
		wcache, rcache = "-8192", "-1024"
	}
	db.w, err = sql.Open("sqlite", base+"&_journal_mode=WAL&_synchronous="+sync+
		"&_txlock=immediate&_pragma=secure_delete(ON)&_pragma=foreign_keys(ON)&_pragma=cache_size("+wcache+")"+
		"&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)
	// Readers map the file (up to 1 GiB) unless opts.Unmapped or Bulk: a cold
	// process reads the pages a search touches without a system call each.
	mmap := "1073741824"
	if opts.Unmapped || opts.Bulk {
		mmap = "0"
	}
	db.r, err = sql.Open("sqlite", base+"&_query_only=1&_pragma=cache_size("+rcache+")&_pragma=mmap_size("+mmap+")")
	if err != nil {
		db.w.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.rq = &readPool{db: db.r, stmts: map[string]*sql.Stmt{}}
	n := cmp.Or(opts.Readers, 4)
	db.readers = n
	db.r.SetMaxOpenConns(n)
	db.r.SetMaxIdleConns(n)
	db.r.SetConnMaxIdleTime(0)
	if err := db.migrate(ctx); err != nil {
		db.r.Close()
		db.w.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if db.getObject, err = db.r.PrepareContext(ctx, `SELECT kind, codec, size, data, data IS NULL FROM objects WHERE hash = ?`); err == nil {
		db.getRef, err = db.r.PrepareContext(ctx, `SELECT kind, hash, updated FROM refs WHERE name = ?`)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.c, err = sql.Open("sqlite", base+"&_synchronous="+sync)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.c.SetMaxOpenConns(1)
	db.ckWake, db.ckStop, db.ckDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go db.checkpoints()
	return db, nil
}

// readPool runs reads on the read-only pool, each statement prepared once
// (database/sql prepares it again on each connection that runs it):
// SQLite spends longer parsing the small queries of a request (a token, a
// working tree, a proposal, the index's rows) than running them. The
// statements live as long as the database; past readPoolMax different
// texts (queries made for their arguments, IN lists of each length),
// the others run unprepared.
type readPool struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// readPoolMax is how many statements a readPool keeps prepared.
const readPoolMax = 512

// stmt returns query prepared, nil when the pool is full.
func (p *readPool) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.stmts[query]; ok {
		return st, nil
	}
	if len(p.stmts) >= readPoolMax {
		return nil, nil
	}
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.stmts[query] = st
	return st, nil
}

// QueryContext runs a query, prepared once.
func (p *readPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return p.db.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs a query for one row, prepared once.
func (p *readPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, query)
	if err != nil || st == nil {
		return p.db.QueryRowContext(ctx, query, args...) // reports the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// close closes the statements prepared.
func (p *readPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.stmts {
		st.Close()
	}
	clear(p.stmts)
}

// checkpointEvery is the least time between two background checkpoints;
// checkpointIdle is how often the log is looked at when no commit of this
// process asked (the job queue writes on its own).
const (
	checkpointEvery = time.Second
	checkpointIdle  = 5 * time.Second
)

// checkpoints copies committed pages from the write-ahead log into the
// database file, passively (never blocking a reader or a writer), soon
// after a commit and then at most once a second. SQLite's own automatic
// checkpoint would run inside whichever commit crossed 1,000 pages and
// add its copying and fsync to that commit's latency. Close truncates
// the log as before.
func (db *DB) checkpoints() {
	defer close(db.ckDone)
	idle := time.NewTicker(checkpointIdle)
	defer idle.Stop()
	for {
		select {
		case <-db.ckStop:
			return
		case <-db.ckWake:
		case <-idle.C:
		}
		if _, err := db.c.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil && cairn.ErrorCode(translate(err)) != cairn.EUNAVAILABLE {
			db.log.Warn("background checkpoint", "err", err)
		}
		select {
		case <-db.ckStop:
			return
		case <-time.After(checkpointEvery):
		}
	}
}

// committed tells the checkpointer that the log has grown (a no-op while
// Open migrates, before the checkpointer exists: a send on a nil channel
// is never ready).
func (db *DB) committed() {
	select {
	case db.ckWake <- struct{}{}:
	default:
	}
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Read returns the read-only connection pool, for subsystems that query
// their own tables.
func (db *DB) Read() *sql.DB { return db.r }

// Write returns the write connection (one connection; transactions begin
// IMMEDIATE), for subsystems that run their own transactions on the
// vault's database: the job queue. Never use it inside Update.
func (db *DB) Write() *sql.DB { return db.w }

// QuickCheck runs SQLite's quick_check on the database: an error when the
// file is damaged (its pages, indexes and records do not agree).
func (db *DB) QuickCheck(ctx context.Context) error {
	var res string
	if err := db.r.QueryRowContext(ctx, `PRAGMA quick_check(1)`).Scan(&res); err != nil {
		return fmt.Errorf("check the database: %w", translate(err))
	}
	if res != "ok" {
		return cairn.Errorf(cairn.EINTERNAL, "the database fails its check: %s", res).
			WithHint("Try: cairn doctor")
	}
	return nil
}

// Close checkpoints the write-ahead log, when no other process is writing,
// and closes the database; it never waits for another process.
func (db *DB) Close() error {
	var errs []error
	for _, st := range append([]*sql.Stmt{db.getObject, db.getRef}, db.getObjects[:]...) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if db.rq != nil {
		db.rq.close()
	}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.c != nil {
		close(db.ckStop)
		<-db.ckDone
		errs = append(errs, db.c.Close())
	}
	if db.w != nil && db.w.Stats().OpenConnections > 0 {
		// Without waiting: a reader's exit must never wait for another
		// process's write, and a log another connection is using is
		// truncated by whichever process closes last. A process that
		// wrote nothing (its writer never connected) leaves the log to
		// those that write.
		_, err := db.w.Exec("PRAGMA busy_timeout = 0")
		if err == nil {
			_, err = db.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		}
		if err != nil && cairn.ErrorCode(translate(err)) != cairn.EUNAVAILABLE {
			errs = append(errs, err)
		}
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	return errors.Join(errs...)
}

// Checkpoint copies the write-ahead log into the database file and truncates
// the log; it is what a size measurement must call first. A checkpoint
// that another connection's (the background checkpointer's, another
// process's) got in the way of is tried again, for up to the busy timeout.
// Each try waits for nothing: a truncating checkpoint holds the write
// lock while it waits for readers, and a long reader (a deep check's
// view) would stall every writer for the busy timeout of each try.
func (db *DB) Checkpoint(ctx context.Context) error {
	deadline := time.Now().Add(db.busy)
	for {
		busy, err := db.checkpointOnce(ctx)
		if err != nil {
			return err
		}
		if !busy {
			return nil
		}
		if time.Now().After(deadline) {
			return cairn.Errorf(cairn.EUNAVAILABLE, "the write-ahead log could not be checkpointed: another connection is reading or checkpointing").
				WithHint("Wait for the other command to finish and try again.")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// checkpointOnce tries a truncating checkpoint without waiting for other
// connections, and reports whether one was in the way.
func (db *DB) checkpointOnce(ctx context.Context) (bool, error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return false, translate(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return false, translate(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA busy_timeout = "+strconv.FormatInt(db.busy.Milliseconds(), 10))
	var busy, log, done int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
		return false, translate(err)
	}
	return busy != 0, nil
}

// migrate applies the embedded migrations that the database has not seen,
// each in its own transaction, in the order of their numbers.
func (db *DB) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	versions := make([]int, len(names))
	latest := 0
	for i, name := range names {
		num, _, ok := strings.Cut(filepath.Base(name), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("migration %s: name must start with a number", filepath.Base(name))
		}
		versions[i], latest = v, max(latest, v)
	}
	// Usually everything is applied already: find out on a reader, without
	// taking the write lock (opening a vault never waits for another
	// process) or opening the writer's connection (a command that only
	// reads never parses the schema twice).
	var applied, have int
	err = db.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'`).Scan(&applied)
	if err == nil && applied == 1 {
		err = db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(max(version), 0) FROM schema_migrations`).Scan(&applied, &have)
		if err == nil && applied == len(names) && have == latest {
			return nil
		}
	}
	if err != nil {
		return translate(err)
	}
	// A newer cairn's tables would be written without what its own
	// writes keep in them (a column an older cairn does not know stays
	// empty), and its searches would then miss pages.
	if have > latest {
		return cairn.Errorf(cairn.EINVALID, "the vault's database schema is at version %d, newer than this cairn knows (%d)", have, latest).
			WithHint("A newer cairn has upgraded this database: run that version (cairn --version says which this is).")
	}
	if applied == 0 {
		// A new database: incremental vacuum must be chosen before the
		// first table exists (gc and purge give space back with it).
		// In WAL mode the setting takes effect with a VACUUM, cheap on
		// an empty file.
		if _, err := db.w.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
			return translate(err)
		}
		if _, err := db.w.ExecContext(ctx, `VACUUM`); err != nil {
			return translate(err)
		}
	}
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)`); err != nil {
		return translate(err)
	}
	for i, name := range names {
		base, version := filepath.Base(name), versions[i]
		err := db.update(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			body, err := migrationFS.ReadFile(name)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", base, err)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)`,
				version, base, db.now().Unix())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// update runs fn in one IMMEDIATE transaction on the writer connection.
func (db *DB) update(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.updateConn(ctx, func(_ *sql.Conn, tx *sql.Tx) error { return fn(tx) })
}

// updateConn is update, giving fn the connection the transaction runs on
// as well (for Tx.Raw).
func (db *DB) updateConn(ctx context.Context, fn func(*sql.Conn, *sql.Tx) error) (err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return translate(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	defer db.measure(time.Now())
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(conn, tx); err != nil {
		tx.Rollback()
		return translate(err)
	}
	if err := tx.Commit(); err != nil {
		return translate(err)
	}
	db.committed()
	return nil
}

// measure reports to Options.WriteHeld how long a write transaction that
// began at start held the write lock.
func (db *DB) measure(start time.Time) {
	if db.held != nil {
		db.held(time.Since(start))
	}
}

// translate maps driver errors to cairn errors at the package boundary.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var ce *cairn.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return &cairn.Error{Code: cairn.ENOTFOUND, Message: "not found"}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return &cairn.Error{
				Code:    cairn.EUNAVAILABLE,
				Message: "the vault database is locked by another cairn process",
				Hint:    "Wait for the other command to finish and try again.",
				Err:     err,
			}
		case sqlite3.SQLITE_FULL:
			return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: "the disk is full", Err: err}
		case sqlite3.SQLITE_READONLY:
			return &cairn.Error{Code: cairn.EFORBIDDEN, Message: "the vault database is read-only", Err: err}
		}
	}
	return err
}

// ReadMeta reads one value of the meta table of the database at path,
// read-only, without migrating or changing anything: "" when the file or
// the key is missing. It is for looking at another vault's database (is it
// the one this vault was copied from?).
func ReadMeta(ctx context.Context, path, key string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", nil
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_query_only=1&_busy_timeout=1000")
	if err != nil {
		return "", fmt.Errorf("open database %s: %w", path, err)
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s from %s: %w", key, path, translate(err))
	}
	return v, nil
}
