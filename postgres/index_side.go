package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// The full text of a vault's first build, beside the build.
//
// PostgreSQL serves a transaction with one process, and version 15 builds
// a GIN index on one process too: the body text's index of a 100k-page
// vault took 9 of the build's last 13 seconds, with the machine's other
// cores idle (BENCHMARKS.md). A first build whose full text may be moved
// (sideEligible) therefore loads it into a table of its own, sideTable, on
// a connection of its own, and makes that table's indexes there while the
// build's transaction writes the other rows. The side's transaction
// commits the table with its rows and its constraints (adding one locks
// out every reader), then makes its indexes in a second one. From that
// first commit the build's transaction reads the table, for the tiers of
// the shortest pages, and makes those of its indexes the side has not
// begun (CREATE INDEX locks out only writers, so both make indexes of the
// one table at once). It then swaps the table in for fts (swap): fts is
// dropped and sideTable takes its name, its indexes' names, its comments
// and its privileges, all in the build's transaction, so that readers
// find the old empty fts or the whole new one.
//
// A build that fails drops sideTable, once its own transaction has let go
// of it (what it does with the table it does in a savepoint, rolled back
// on failure: textBuild.fromSide). One that fails once the swap has begun
// leaves it behind (its transaction holds the table until it ends), as
// does a crash after the side's first commit; the next full build drops
// it (dropLeftover).
//
// A reader in a snapshot taken after the side committed, and waiting for
// the build's locks, finds the new fts once the build commits, beside its
// snapshot's empty files: every read of the full text joins files, so it
// finds nothing, as it would have before.

// sideTable is the table the full text of a first build is loaded into.
// The name is the vault's: a table of another's by that name in the
// vault's schema would be dropped.
const sideTable = "fts_build"

// sideText is the connection and transaction of the side's table.
type sideText struct {
	db   *DB
	conn *pgx.Conn
	tx   pgx.Tx
	// fts holds fts's indexes as Clear dropped them: the side makes them
	// on sideTable under the names sideName gives them, and the swap gives
	// them theirs.
	fts []indexDef
	// after are the statements that carry fts's comments and privileges
	// over, run after the swap.
	after []string
	// copying receives the end of the COPY under way, if any: a batch of
	// rows is sent while the build makes the next (the side's server
	// process took some 1.6 s of the first pass's 5.4 at 100k pages, which
	// the writer of the full text waited for).
	copying chan error
	// committed is closed once the table is committed with its rows and
	// constraints, end once the side's work has ended, with err (failed);
	// ctx is the work's, and cancel stops it. They are set by start.
	committed, end chan struct{}
	err            error
	ctx            context.Context
	cancel         context.CancelFunc
	// mu guards next, the place in fts of the next index to be made, by
	// the side or by the build's transaction (take), and made, how many
	// the side took; most bounds those (DB.sideMost).
	mu         sync.Mutex
	next, made int
	most       int
	// swapping: the build's transaction started the swap (and so locks
	// sideTable).
	swapping bool
}

// sideName is the name the side gives the i-th of fts's indexes.
func sideName(i int) string { return sideTable + "_" + strconv.Itoa(i) }

// startSide opens the side's connection and transaction and makes its
// table, when fts may be moved (sideEligible) and a connection can be
// had; otherwise, it returns nil, and the build writes fts in its own
// transaction. dropped are the indexes Clear dropped: fts's are moved to
// the side; the others are returned.
func (t *indexTx) startSide(ctx context.Context, dropped []indexDef) (*sideText, []indexDef, error) {
	var rest, fts []indexDef
	for _, d := range dropped {
		if d.table == "fts" {
			fts = append(fts, d)
		} else {
			rest = append(rest, d)
		}
	}
	create, after, ok, err := t.sideEligible(ctx, fts)
	if err != nil {
		return nil, nil, fmt.Errorf("index: clear: %w", err)
	}
	if !ok {
		return nil, dropped, nil
	}
	conn, err := pgx.ConnectConfig(ctx, sideConfig(t.db))
	if err != nil {
		// No connection to spare (max_connections): the build goes on
		// in its own transaction.
		t.db.log.Info("full build: the full text is written in the build's transaction", "reason", t.db.translate(err))
		return nil, dropped, nil
	}
	s := &sideText{db: t.db, conn: conn, fts: fts, after: after, most: t.db.sideMost}
	if err := func() error {
		if err := dropLeftover(ctx, conn, 0); err != nil {
			return err
		}
		if s.tx, err = conn.Begin(ctx); err != nil {
			return err
		}
		// Not the session's default tablespace: fts's, or the
		// database's when it is in that.
		if _, err := s.tx.Exec(ctx, `SELECT set_config('default_tablespace', '', true)`); err != nil {
			return err
		}
		_, err := s.tx.Exec(ctx, create)
		return err
	}(); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		t.db.log.Info("full build: the full text is written in the build's transaction", "reason", t.db.translate(err))
		return nil, dropped, nil
	}
	return s, rest, nil
}

// sideEligible reports whether fts may be moved to the side: it returns
// the statement that makes sideTable like fts, and the statements that
// carry fts's comments and privileges over after the swap. fts may be
// moved when this role owns it, the build's transaction reads what others
// commit (READ COMMITTED), nothing depends on fts but its own parts (no
// view, trigger, policy, rule, foreign key, publication, statistics
// object, child table or function of its row type), and it has nothing
// the swap would not carry over: no parent table, security label, row
// security, storage options (its own or its TOAST table's), access method
// but heap, or replica identity of its own; its owner's privileges are
// the default ones and every privilege on it was granted by its owner;
// no column has privileges, identity, a generated value, a collation,
// storage, compression, options or statistics target of its own; and
// every one of its indexes' definitions is one the side can make on
// another table.
func (t *indexTx) sideEligible(ctx context.Context, fts []indexDef) (create string, after []string, ok bool, err error) {
	if len(fts) == 0 {
		return "", nil, false, nil
	}
	for _, d := range fts {
		if _, ok := d.on(sideTable, "x"); !ok {
			return "", nil, false, nil
		}
	}
	var cols, tablespace string
	err = t.queryRow(ctx, `WITH f AS (SELECT c.* FROM pg_class c WHERE c.oid = 'fts'::regclass)
		SELECT
			(SELECT relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) AND NOT relrowsecurity
				AND reloptions IS NULL AND relreplident = 'd' AND relpersistence = 'p' AND NOT relispartition
				AND relam = (SELECT oid FROM pg_am WHERE amname = 'heap')
				AND (f.reltoastrelid = 0 OR (SELECT t.reloptions FROM pg_class t WHERE t.oid = f.reltoastrelid) IS NULL)
				AND NOT EXISTS (SELECT FROM aclexplode(relacl) a WHERE a.grantor <> relowner)
				AND (relacl IS NULL OR `+ownerDefaults("f")+`)
				FROM f)
			AND current_setting('transaction_isolation') = 'read committed'
			AND NOT EXISTS (SELECT FROM pg_depend d, f
				WHERE (d.refclassid = 'pg_class'::regclass AND d.refobjid = f.oid OR d.refclassid = 'pg_type'::regclass AND d.refobjid = f.reltype)
				AND NOT (d.classid = 'pg_attrdef'::regclass OR d.deptype = 'i' AND d.classid IN ('pg_type'::regclass, 'pg_class'::regclass)))
			AND NOT EXISTS (SELECT FROM pg_depend d, f WHERE d.classid = 'pg_class'::regclass AND d.objid = f.oid AND d.deptype = 'e')
			AND NOT EXISTS (SELECT FROM pg_inherits i, f WHERE i.inhrelid = f.oid)
			AND NOT EXISTS (SELECT FROM pg_seclabel l, f WHERE l.classoid = 'pg_class'::regclass AND l.objoid = f.oid)
			AND NOT EXISTS (SELECT FROM pg_attribute a JOIN pg_type y ON y.oid = a.atttypid, f
				WHERE a.attrelid = f.oid AND a.attnum > 0 AND NOT a.attisdropped
				AND (a.attacl IS NOT NULL OR a.attidentity <> '' OR a.attgenerated <> '' OR a.attcollation <> y.typcollation
					OR a.attstorage <> y.typstorage OR a.attcompression <> '' OR a.attstattarget <> -1
					OR EXISTS (SELECT FROM unnest(a.attoptions) o WHERE o LIKE 'n\_distinct%'))),
			(SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
					|| CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
					|| coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum)
				FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum, f
				WHERE a.attrelid = f.oid AND a.attnum > 0 AND NOT a.attisdropped),
			(SELECT coalesce(s.spcname, '') FROM f LEFT JOIN pg_tablespace s ON s.oid = f.reltablespace)`,
		nil, &ok, &cols, &tablespace)
	if err != nil || !ok {
		return "", nil, false, err
	}
	create = `CREATE TABLE ` + sideTable + ` (` + cols + `)`
	if tablespace != "" {
		create += ` TABLESPACE ` + pgx.Identifier{tablespace}.Sanitize()
	}
	// fts's comments and privileges, as statements for after the swap:
	// the privileges the new table was given by default are taken back
	// (revokes, read then), and fts's given again.
	rows, err := t.query(ctx, `SELECT 'COMMENT ON TABLE fts IS ' || quote_literal(d.description)
			FROM pg_description d WHERE d.classoid = 'pg_class'::regclass AND d.objoid = 'fts'::regclass AND d.objsubid = 0
		UNION ALL SELECT 'COMMENT ON COLUMN fts.' || quote_ident(a.attname) || ' IS ' || quote_literal(d.description)
			FROM pg_description d JOIN pg_attribute a ON a.attrelid = d.objoid AND a.attnum = d.objsubid
			WHERE d.classoid = 'pg_class'::regclass AND d.objoid = 'fts'::regclass AND d.objsubid > 0
		UNION ALL SELECT 'GRANT ' || a.privilege_type || ' ON fts TO ' || `+granteeName+`
				|| CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END
			FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = 'fts'::regclass AND a.grantee <> c.relowner`)
	if err != nil {
		return "", nil, false, err
	}
	after, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", nil, false, fmt.Errorf("index: clear: %w", t.db.translate(err))
	}
	return create, after, true, nil
}

// granteeName is, in SQL, the role of an aclexplode row a as a GRANT or
// REVOKE names it.
const granteeName = `CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END`

// ownerDefaults is, in SQL, whether the privileges that the table of
// pg_class row rel (an alias) gives its owner are the default ones.
func ownerDefaults(rel string) string {
	return `(SELECT array_agg(a.privilege_type ORDER BY a.privilege_type) FROM aclexplode(` + rel + `.relacl) a WHERE a.grantee = ` + rel + `.relowner)
		IS NOT DISTINCT FROM (SELECT array_agg(a.privilege_type ORDER BY a.privilege_type) FROM aclexplode(acldefault('r', ` + rel + `.relowner)) a)`
}

// copy begins to load rows, which it keeps, into sideTable, once the
// rows before are loaded; it returns how loading those ended.
func (s *sideText) copy(ctx context.Context, rows [][]any) error {
	if s.end != nil {
		return errors.New("rows written after the table's indexes were begun")
	}
	if err := s.copied(); err != nil {
		return err
	}
	s.copying = make(chan error, 1)
	go func() {
		_, err := s.tx.CopyFrom(ctx, pgx.Identifier{sideTable}, []string{"id", "words", "more", "title", "body"}, pgx.CopyFromRows(rows))
		s.copying <- err
	}()
	return nil
}

// copied waits for the rows being loaded, if any, and returns how that
// ended.
func (s *sideText) copied() error {
	if s.copying == nil {
		return nil
	}
	err := <-s.copying
	s.copying = nil
	return err
}

// start commits sideTable with its rows and constraints, then makes its
// indexes (those the build's transaction has not taken: take) and commits
// them, on its own goroutine. It does nothing once started.
func (s *sideText) start(ctx context.Context) {
	if s.end != nil {
		return
	}
	s.committed, s.end = make(chan struct{}), make(chan struct{})
	ctx, s.cancel = context.WithCancel(ctx)
	s.ctx = ctx
	go func() {
		defer close(s.end)
		s.err = func() error {
			if err := s.copied(); err != nil {
				return err
			}
			if err := s.buildMemory(ctx); err != nil {
				return err
			}
			for i, d := range s.fts {
				if d.constraint {
					if err := s.make(ctx, s.tx, i); err != nil {
						return err
					}
				}
			}
			if err := s.tx.Commit(ctx); err != nil {
				return err
			}
			close(s.committed)
			tx, err := s.conn.Begin(ctx)
			if err != nil {
				return err
			}
			s.tx = tx
			if err := s.buildMemory(ctx); err != nil {
				return err
			}
			for i, ok := s.take(true); ok; i, ok = s.take(true) {
				if err := s.make(ctx, s.tx, i); err != nil {
					return err
				}
			}
			return s.tx.Commit(ctx)
		}()
	}()
}

// buildMemory gives the side's transaction the memory of a build.
func (s *sideText) buildMemory(ctx context.Context) error {
	_, err := s.tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '`+buildMemory+`'`)
	return err
}

// sideConfig is the configuration of the side's connection: the pool's,
// but a statement of the side that is cancelled (the build failed, or was
// cancelled) is cancelled on the server, and the connection kept, rather
// than the connection closed, which leaves the server's process making
// an index, holding the side's table, until it next writes to the
// connection.
func sideConfig(db *DB) *pgx.ConnConfig {
	c := db.pool.Config().ConnConfig.Copy()
	c.BuildContextWatcherHandler = func(conn *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: conn, DeadlineDelay: sideCancelWait}
	}
	return c
}

// sideCancelWait is how long a cancelled statement of the side may take
// to end on the server before its connection is closed; and how long
// closing the side waits for its table (sideText.close).
const sideCancelWait = 5 * time.Second

// take returns the place in fts of the next index (not constraint) to
// make on sideTable, for the side or the build's transaction; ok is false
// when none is left (for the side: or it made the most it may).
func (s *sideText) take(side bool) (i int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.next < len(s.fts) && s.fts[s.next].constraint {
		s.next++
	}
	if s.next == len(s.fts) || side && s.most > 0 && s.made == s.most {
		return 0, false
	}
	if side {
		s.made++
	}
	s.next++
	return s.next - 1, true
}

// make makes the i-th of fts's indexes on sideTable in tx, in fts's
// tablespace.
func (s *sideText) make(ctx context.Context, tx pgx.Tx, i int) error {
	var was string
	if err := tx.QueryRow(ctx, `SELECT current_setting('default_tablespace')`).Scan(&was); err != nil {
		return fmt.Errorf("make index %s of fts: %w", s.fts[i].name, s.db.translate(err))
	}
	made, _ := s.fts[i].on(sideTable, sideName(i))
	for _, stmt := range made.create(was) {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("make index %s of fts: %w", s.fts[i].name, s.db.translate(err))
		}
	}
	return nil
}

// readable waits until sideTable is committed, when the build's
// transaction may read it, and starts the side if it was not.
func (s *sideText) readable(ctx context.Context) error {
	s.start(ctx)
	select {
	case <-s.committed:
		return nil
	case <-s.end:
		select {
		case <-s.committed:
			return nil // and the side ended since
		default:
			return s.failed()
		}
	case <-ctx.Done():
		return fmt.Errorf("index: full text: %w", context.Cause(ctx))
	}
}

// wait waits for the side's work to end, and returns how it ended.
func (s *sideText) wait() error {
	<-s.end
	if s.err != nil {
		return s.failed()
	}
	return nil
}

// failed is the error of the side's work, which ended with one: the
// build's context's, when that ended (the server then reports the
// statement cancelled).
func (s *sideText) failed() error {
	if cause := context.Cause(s.ctx); cause != nil {
		return fmt.Errorf("index: full text: %w", cause)
	}
	return fmt.Errorf("index: full text: %w", s.db.translate(s.err))
}

// help makes, in the build's transaction t, the indexes of sideTable the
// side has not begun; the table must be committed (readable).
func (s *sideText) help(ctx context.Context, t *indexTx) error {
	if _, err := t.tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '`+buildMemory+`'`); err != nil {
		return fmt.Errorf("index: full text: %w", t.db.translate(err))
	}
	for i, ok := s.take(false); ok; i, ok = s.take(false) {
		if err := s.make(ctx, t.tx, i); err != nil {
			return fmt.Errorf("index: full text: %w", err)
		}
	}
	return nil
}

// swap waits for the side, then puts sideTable in fts's place in the
// build's transaction.
func (s *sideText) swap(ctx context.Context, t *indexTx) error {
	s.start(ctx)
	if err := s.wait(); err != nil {
		return err
	}
	s.swapping = true
	stmts := []string{`DROP TABLE fts`, `ALTER TABLE ` + sideTable + ` RENAME TO fts`}
	for i, d := range s.fts {
		if d.constraint {
			stmts = append(stmts, `ALTER TABLE fts RENAME CONSTRAINT `+sideName(i)+` TO `+pgx.Identifier{d.name}.Sanitize())
		} else {
			stmts = append(stmts, `ALTER INDEX `+sideName(i)+` RENAME TO `+pgx.Identifier{d.name}.Sanitize())
		}
		stmts = append(stmts, d.marks()...)
	}
	// The privileges the new table was given by default (ALTER DEFAULT
	// PRIVILEGES) go, its owner's are made the default ones as fts's
	// were (sideEligible), and fts's others come back.
	rows, err := t.tx.Query(ctx, `SELECT DISTINCT 'REVOKE ALL ON fts FROM ' || `+granteeName+`
		FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = $1::regclass AND a.grantee <> c.relowner
		UNION ALL SELECT 'GRANT ALL ON fts TO ' || quote_ident(pg_get_userbyid(c.relowner)) FROM pg_class c
		WHERE c.oid = $1::regclass AND c.relacl IS NOT NULL AND NOT `+ownerDefaults("c"), sideTable)
	if err != nil {
		return fmt.Errorf("index: full text: %w", t.db.translate(err))
	}
	revokes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("index: full text: %w", t.db.translate(err))
	}
	stmts = append(append(stmts, revokes...), s.after...)
	for _, stmt := range stmts {
		if _, err := t.tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("index: full text: put the build's table in place: %w", t.db.translate(err))
		}
	}
	s.close(ctx)
	return nil
}

// close ends the side: its work is waited for, its transaction ended,
// a table it committed that the build's transaction has not started to
// swap in is dropped (the build failed; a commit that answered with an
// error may have committed too), and its connection closed.
func (s *sideText) close(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if s.end != nil {
		s.cancel()
		<-s.end
	}
	s.copied()         // after a failure, how the rows were loaded is moot
	s.tx.Rollback(ctx) // unless it committed
	if !s.swapping {   // else the next full build drops the table
		if err := s.drop(ctx); err != nil {
			s.db.log.Info("full build: a table a build left stays for the next", "table", sideTable, "reason", s.db.translate(err))
		}
	}
	s.conn.Close(ctx)
}

// drop drops sideTable after a build that failed, over the side's
// connection or, when a cancellation closed that, a new one; waiting at
// most sideCancelWait for the table, which a cancelled statement's
// server process may hold a moment longer.
func (s *sideText) drop(ctx context.Context) error {
	conn := s.conn
	if conn.IsClosed() {
		var err error
		if conn, err = pgx.ConnectConfig(ctx, sideConfig(s.db)); err != nil {
			return err
		}
		defer conn.Close(ctx)
	}
	return dropLeftover(ctx, conn, sideCancelWait)
}

// dropLeftover drops sideTable from the vault's schema, where a build that
// failed or a crash left it, unless it is not this role's to drop, or
// another holds it (then it fails at once).
func dropLeftover(ctx context.Context, q interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}, wait time.Duration) error {
	return pgx.BeginFunc(ctx, q, func(tx pgx.Tx) error {
		var name string
		err := tx.QueryRow(ctx, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relname = $1 AND c.relkind = 'r' AND pg_has_role(c.relowner, 'USAGE')`, sideTable).Scan(&name)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		lock := `LOCK TABLE ` + name + ` IN ACCESS EXCLUSIVE MODE`
		if wait > 0 {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, wait.Milliseconds())); err != nil {
				return err
			}
		} else {
			lock += ` NOWAIT`
		}
		if _, err := tx.Exec(ctx, lock); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DROP TABLE `+name)
		return err
	})
}
