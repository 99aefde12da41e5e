package postgres

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"cairn"
	"cairn/internal/codec"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure a database. The zero value gives the defaults.
type Options struct {
	// LockTimeout is how long a write waits for another writer of the
	// vault (another process's admission), and any statement for a lock
	// (a read of the index for a first build), before failing with
	// EUNAVAILABLE. Default 5s; a URL that sets lock_timeout keeps it
	// for all but the write lock.
	LockTimeout time.Duration
	// MaxConns is the size of the connection pool. Default: the URL's
	// pool_max_conns, else 16. River's pool (RiverPool) has at most 8 of
	// its own.
	MaxConns int32
	// AcquireTimeout is how long an operation waits for a connection of
	// an exhausted pool before failing with EUNAVAILABLE. Default 10s.
	AcquireTimeout time.Duration
	// ConnectTimeout bounds reaching the server at Open. Default 10s.
	ConnectTimeout time.Duration
	// Logger receives the database's logs. Default: discard.
	Logger *slog.Logger
}

// DB is an open vault database in PostgreSQL. It implements cairn.Backend.
type DB struct {
	pool *boundedPool
	// river is River's own pool: the pool's connections without the
	// bound on lock waits (RiverPool).
	river   *pgxpool.Pool
	url     string
	where   string // host:port/database, for messages (never the password)
	log     *slog.Logger
	codec   codec.Codec
	now     func() time.Time
	lock    time.Duration
	acquire time.Duration
	key     int64 // the vault's advisory lock key: its schema's
	// writing holds a place while a write transaction of this process
	// waits for the vault's lock or holds it: the others wait here,
	// holding no connection of the pool (which reads need, the lock's
	// holder's among them).
	writing chan struct{}
	// waits, when set (by tests), is called when a write of this process
	// waits for another's turn.
	waits func()
	// sideMost, when set (by tests), is the most of fts's indexes a first
	// build's side makes; the build's transaction makes the others.
	sideMost int
	// sideWaits, when set (by tests), is called when a first build's
	// transaction has done its part and waits for the side.
	sideWaits func()
}

var _ cairn.Backend = (*DB)(nil)

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://) rather than a file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url (postgres://user@host:port/db, with
// an optional search_path parameter naming the schema the vault lives in)
// and brings its schema up to date. A server that cannot be reached, and a
// schema newer than this binary's, are refused with a hint.
func Open(ctx context.Context, url string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.LockTimeout < 0 || opts.AcquireTimeout < 0 || opts.ConnectTimeout < 0 || opts.MaxConns < 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "database timeouts and pool size must not be negative")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a PostgreSQL URL: %v", Redact(url), err).
			WithHint("Give it as postgres://USER@HOST:PORT/DATABASE (add ?search_path=SCHEMA for a vault in a schema of its own).")
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(url, "pool_max_conns="):
		cfg.MaxConns = 16 // unless the URL says
	}
	cfg.ConnConfig.ConnectTimeout = cmp.Or(opts.ConnectTimeout, 10*time.Second)
	lock := cmp.Or(opts.LockTimeout, 5*time.Second)
	// River's pool: at most riverConns connections, never fewer than its
	// migrations hold at once (their lock's and their own), and no bound
	// on lock waits, whatever the URL says (a startup parameter outranks
	// options).
	riverCfg := cfg.Copy()
	riverCfg.MaxConns = max(2, min(cfg.MaxConns, riverConns))
	riverCfg.ConnConfig.RuntimeParams["lock_timeout"] = "0"
	if _, set := cfg.ConnConfig.RuntimeParams["lock_timeout"]; !set && !setsLockTimeout(cfg.ConnConfig.RuntimeParams["options"]) {
		// No statement of cairn's waits for a table or row lock without
		// a bound: a reader of the index waits at most this long for a
		// vault's first build (which locks the index's tables until it
		// commits), then fails with EUNAVAILABLE instead of holding its
		// connection. Sent when connecting, so it costs nothing per
		// statement; the write lock's wait sets its own, and a URL that
		// sets lock_timeout (as a parameter or in options) keeps it.
		cfg.ConnConfig.RuntimeParams["lock_timeout"] = strconv.FormatInt(max(lock.Milliseconds(), 1), 10)
	}
	db := &DB{
		url:     url,
		where:   fmt.Sprintf("%s/%s", net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))), cfg.ConnConfig.Database),
		log:     cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		now:     time.Now,
		lock:    lock,
		acquire: cmp.Or(opts.AcquireTimeout, 10*time.Second),
		writing: make(chan struct{}, 1),
	}
	schema := SchemaOf(cfg.ConnConfig.RuntimeParams["search_path"])
	h := fnv.New64a()
	io.WriteString(h, "cairn vault "+schema)
	db.key = int64(h.Sum64())
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return nil, db.unreachable(err)
	}
	db.pool = &boundedPool{Pool: pool, wait: db.acquire}
	// River's own work (its migrations, which wait for one another, and
	// its maintenance, whose REINDEX CONCURRENTLY waits for every older
	// transaction) waits as River expects: on connections of its own,
	// made when River first asks.
	if db.river, err = pgxpool.NewWithConfig(ctx, riverCfg); err != nil {
		db.pool.Close()
		return nil, db.unreachable(err)
	}
	if err := db.migrate(ctx, schema); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// riverConns is the most connections River's pool opens.
const riverConns = 8

// setsLockTimeout reports whether a connection's options (-c name=value,
// --name=value) set lock_timeout.
func setsLockTimeout(options string) bool {
	return regexp.MustCompile(`(^|[^A-Za-z_-])(-c\s*|--)lock[_-]timeout\s*=`).MatchString(options)
}

// unboundedLocks lets the statements of conn, a connection of the pool,
// wait for locks without a bound until boundedLocks.
func unboundedLocks(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `SET lock_timeout = 0`)
	return err
}

// boundedLocks gives conn back the pool's bound on lock waits; a
// connection that cannot have it is closed, so that the pool does not
// hand it out again.
func boundedLocks(ctx context.Context, conn *pgx.Conn) {
	ctx = context.WithoutCancel(ctx)
	if _, err := conn.Exec(ctx, `RESET lock_timeout`); err != nil {
		conn.Close(ctx)
	}
}

// unreachable is the error for a server that cannot be reached at all.
func (db *DB) unreachable(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: fmt.Sprintf("the PostgreSQL database %s refused the connection: %s", db.where, pe.Message),
			Hint: "Check the user, the password and the database name in the URL; the database must exist (createdb NAME).", Err: err}
	}
	return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: fmt.Sprintf("cannot reach the PostgreSQL database %s: %v", db.where, err),
		Hint: "Check that PostgreSQL is running and that the URL's host and port are right.", Err: err}
}

// Redact returns url with its password replaced by "xxxxx", for messages.
func Redact(url string) string {
	if cfg, err := pgx.ParseConfig(url); err == nil && cfg.Password != "" {
		return strings.Replace(url, ":"+cfg.Password+"@", ":xxxxx@", 1)
	}
	return url
}

// Pool returns the connection pool, for subsystems that query their own
// tables (package postgres's subpackages). Its connections wait for a
// lock at most the lock timeout.
func (db *DB) Pool() *pgxpool.Pool { return db.pool.Pool }

// RiverPool returns the pool River's driver works on: the same database,
// its connections without cairn's bound on lock waits. Jobs enqueued in
// a write go in that write's transaction, on Pool.
func (db *DB) RiverPool() *pgxpool.Pool { return db.river }

// URL returns the URL the database was opened with (password included:
// see Redact).
func (db *DB) URL() string { return db.url }

// Where returns host:port/database, without credentials.
func (db *DB) Where() string { return db.where }

// Close closes the pools (the vault's and River's).
func (db *DB) Close() error {
	db.pool.Close()
	db.river.Close()
	return nil
}

// migrationKey is the session advisory lock that migrations of every
// vault in the database take turns on.
const migrationKey = 0x636169726e // "cairn"

// migrate applies the embedded migrations the schema has not seen, in one
// transaction each, under an advisory lock so that processes starting at
// once do not race; a schema with migrations this binary does not know is
// refused.
func (db *DB) migrate(ctx context.Context, schema string) error {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	latest := 0
	for _, name := range names {
		v, err := migrationVersion(name)
		if err != nil {
			return err
		}
		latest = max(latest, v)
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.unreachable(err)
	}
	defer conn.Release()
	// Migrations wait for each other (another process starting at once)
	// and for readers of the tables they change, however long.
	if err := unboundedLocks(ctx, conn.Conn()); err != nil {
		return fmt.Errorf("migrate %s: %w", db.where, translate(err))
	}
	defer boundedLocks(ctx, conn.Conn())
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationKey); err != nil {
		return fmt.Errorf("migrate %s: %w", db.where, translate(err))
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationKey)
	// What is there already is not made again: PostgreSQL checks the
	// privilege to make it before it sees that it exists, and a role that
	// may only read and write a vault made by another opens it too.
	var hasSchema, hasTable bool
	if err := conn.QueryRow(ctx, `SELECT to_regnamespace($1) IS NOT NULL,
			EXISTS (SELECT FROM pg_class WHERE relnamespace = to_regnamespace($1) AND relname = 'schema_migrations')`,
		pgx.Identifier{schema}.Sanitize()).Scan(&hasSchema, &hasTable); err != nil {
		return fmt.Errorf("migrate %s: %w", db.where, translate(err))
	}
	if !hasSchema {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return db.migrationDenied(err, 0, latest)
		}
	}
	if !hasTable { // never there without its schema
		if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)`); err != nil {
			return db.migrationDenied(err, 0, latest)
		}
	}
	var have int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("migrate %s: %w", db.where, translate(err))
	}
	if have > latest {
		return cairn.Errorf(cairn.EINVALID, "the vault's database schema is at version %d, newer than this cairn knows (%d)", have, latest).
			WithHint("A newer cairn has upgraded this database: run that version (cairn --version says which this is).")
	}
	for _, name := range names {
		version, _ := migrationVersion(name)
		if version <= have {
			continue
		}
		body, err := migrationFS.ReadFile(name)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return fmt.Errorf("migration %s: %w", path.Base(name), err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
				version, path.Base(name), db.now().Unix())
			return err
		})
		if err != nil {
			return db.migrationDenied(err, have, latest)
		}
	}
	return nil
}

// migrationDenied is the error of a migration that failed: for a role
// without the privilege to make or change the vault's tables, one that
// says so and names the way out.
func (db *DB) migrationDenied(err error, have, latest int) error {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == "42501" { // insufficient_privilege
		return cairn.Errorf(cairn.EFORBIDDEN, "migrate %s: this role may not bring the vault's database schema from version %d to %d: %s", db.where, have, latest, pe.Message).
			WithHint("Run any cairn command once as the role that owns the vault's tables, or may make them (it applies the migrations), then again as this one.")
	}
	return fmt.Errorf("migrate %s: %w", db.where, translate(err))
}

// SchemaOf returns the schema a search_path setting makes tables in: its
// first element, as PostgreSQL reads it: unquoted, with its ASCII letters
// in lower case (in a UTF-8 database, PostgreSQL folds no other letter);
// quoted, as written. "public" when the setting is empty.
func SchemaOf(searchPath string) string {
	first, _, _ := strings.Cut(searchPath, ",")
	first = strings.TrimSpace(first)
	if len(first) >= 2 && first[0] == '"' && first[len(first)-1] == '"' {
		return strings.ReplaceAll(first[1:len(first)-1], `""`, `"`)
	}
	folded := []byte(first)
	for i, c := range folded {
		if 'A' <= c && c <= 'Z' {
			folded[i] = c + 'a' - 'A'
		}
	}
	return cmp.Or(string(folded), "public")
}

func migrationVersion(name string) (int, error) {
	num, _, ok := strings.Cut(path.Base(name), "_")
	v, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, fmt.Errorf("migration %s: name must start with a number", path.Base(name))
	}
	return v, nil
}

// SchemaVersion returns the highest migration applied to the database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, db.translate(err)
}

// update runs fn in one transaction that holds the vault's write lock.
// Writes of this process take their turn before they take a connection
// (writing), then the vault's lock; together they wait at most the lock
// timeout.
func (db *DB) update(ctx context.Context, fn func(pgx.Tx) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	turn := time.NewTimer(db.lock)
	defer turn.Stop()
	select {
	case db.writing <- struct{}{}:
	default:
		if db.waits != nil {
			db.waits()
		}
		select {
		case db.writing <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		case <-turn.C:
			return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: fmt.Sprintf("the vault database is busy: another write of this process held it for %v", db.lock),
				Hint: "Try again when the vault is less busy."}
		}
	}
	defer func() { <-db.writing }()
	lock := max(db.lock-time.Since(start), time.Millisecond)
	// Begin and take the lock in one round trip (the simple protocol runs
	// both statements of one query; both values are numbers).
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: fmt.Sprintf(
		`BEGIN; SELECT set_config('lock_timeout', '%d', true), pg_advisory_xact_lock(%d)`, max(lock.Milliseconds(), 1), db.key)})
	if err != nil {
		return db.translate(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return db.translate(err)
	}
	return db.translate(tx.Commit(ctx))
}

// begin starts a transaction, waiting at most the acquire timeout for a
// connection of the pool.
func (db *DB) begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := db.pool.Begin(ctx)
	return tx, db.translate(err)
}

// Translate maps an error of the driver to cairn's codes, as this package's
// own methods return them: no rows is ENOTFOUND, a unique key refusing a
// duplicate ECONFLICT, a lock not had within the lock timeout, a lost
// connection or a server shutting down EUNAVAILABLE; cairn errors and nil
// pass unchanged.
func Translate(err error) error { return translate(err) }

func (db *DB) translate(err error) error {
	err = translate(err)
	if e, ok := errors.AsType[*cairn.Error](err); ok && e.Code == cairn.EUNAVAILABLE && strings.HasPrefix(e.Message, lostMessage) &&
		!strings.HasPrefix(e.Message, lostMessage+" "+db.where) { // once, however often it is translated
		e.Message = lostMessage + " " + db.where + strings.TrimPrefix(e.Message, lostMessage)
	}
	return err
}

const lostMessage = "lost the connection to the PostgreSQL database"

func translate(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*cairn.Error](err); ok {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &cairn.Error{Code: cairn.ENOTFOUND, Message: "not found"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch {
		case pe.Code == "23505": // unique_violation
			return &cairn.Error{Code: cairn.ECONFLICT, Message: "already exists: " + pe.Detail, Err: err}
		case pe.Code == "55P03", pe.Code == "40001", pe.Code == "40P01": // lock_not_available, serialization, deadlock
			return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: "the vault database is busy with another cairn process's write",
				Hint: "Wait for the other command to finish and try again.", Err: err}
		case strings.HasPrefix(pe.Code, "57P"), strings.HasPrefix(pe.Code, "08"), pe.Code == "53300": // shutdown, connection, too many connections
			return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: lostMessage + ": " + pe.Message,
				Hint: "Check that PostgreSQL is running, then try again.", Err: err}
		case pe.Code == "53100": // disk_full
			return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: "the database's disk is full", Err: err}
		case pe.Code == "25006": // read_only_sql_transaction
			return &cairn.Error{Code: cairn.EFORBIDDEN, Message: "the vault database is read-only", Err: err}
		}
		return err
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isNetError(err) {
		return &cairn.Error{Code: cairn.EUNAVAILABLE, Message: lostMessage, Hint: "Check that PostgreSQL is running, then try again.", Err: err}
	}
	return err
}

func isNetError(err error) bool {
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "conn closed")
}
