package postgres_test

import (
	"context"
	"maps"
	neturl "net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"cairn/index"
	"cairn/postgres"
	"cairn/postgres/pgtest"
)

// TestIndexStorage_FirstBuildSwapsFullText: a vault's first build loads
// the full text into a table of its own on a second connection and swaps
// it in for fts, which keeps its indexes (names, definitions, tablespaces,
// comments), its comments and its privileges, and no more privileges than
// it had; a table left by a build that died is dropped. What the swap
// would lose (a view of fts, a trigger on it) or get wrong (a build's
// transaction that does not see what others commit) keeps fts and writes
// the text in the build's transaction. The build's transaction makes the
// side's table's indexes the side has not begun. A build that fails, on
// the side or in its own transaction, leaves no table behind and fts as
// it was.
func TestIndexStorage_FirstBuildSwapsFullText(t *testing.T) {
	ctx := t.Context()
	_, files, _ := changedVault(300, 3)
	role := "cairn_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for n, tc := range []struct {
		name    string
		setup   []string // %s: the vault's schema; %r: a role of the test's
		url     string   // added to the URL
		swapped bool
		fails   string // in the build's error
		// held: another transaction holds the setup's fts_build through
		// the build, which leaves it.
		held bool
		// sessionTablespace: the build's connections default to a
		// tablespace that nothing of the index is in.
		sessionTablespace bool
		// owner: the vault is made, owned and built by a role of the
		// test's (%r), not the test database's user.
		owner bool
		// sideMost: the side makes one index of fts (body's, the first
		// by name), the build's transaction the others.
		sideMost int
		// cancelAtWait: the build is cancelled when its transaction has
		// done its part and waits for the side.
		cancelAtWait bool
	}{
		{name: "alone", swapped: true},
		{name: "alone, the build making most of its indexes", swapped: true, sideMost: 1},
		{name: "comments, privileges, a tablespace and a leftover", swapped: true, setup: []string{
			`COMMENT ON TABLE fts IS 'the pages'' words'`,
			`COMMENT ON COLUMN fts.body IS 'title and body'`,
			`GRANT SELECT ON fts TO PUBLIC`,
			`GRANT SELECT, UPDATE ON fts TO %r WITH GRANT OPTION`,
			`ALTER DEFAULT PRIVILEGES IN SCHEMA %s GRANT DELETE ON TABLES TO %r`,
			`CREATE TABLE fts_build (x int)`,
		}},
		{name: "a view of it", setup: []string{
			`CREATE VIEW page_words AS SELECT id, words FROM fts`,
			`CREATE TABLE fts_build (x int)`,
		}},
		{name: "a trigger on it", setup: []string{
			`CREATE FUNCTION count_pages() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
			`CREATE TRIGGER counted AFTER INSERT ON fts FOR EACH ROW EXECUTE FUNCTION count_pages()`,
		}},
		{name: "a column's storage of its own", setup: []string{
			`ALTER TABLE fts ALTER COLUMN body SET STORAGE EXTERNAL`,
		}},
		{name: "a column's options", setup: []string{
			`ALTER TABLE fts ALTER COLUMN words SET (n_distinct = 100)`,
		}},
		{name: "its TOAST table's options", setup: []string{
			`ALTER TABLE fts SET (toast.autovacuum_enabled = false)`,
		}},
		{name: "its owner's privileges cut", setup: []string{
			`REVOKE TRUNCATE ON fts FROM CURRENT_USER`,
		}},
		{name: "a privilege another granted", setup: []string{
			`GRANT USAGE ON SCHEMA %s TO %r`,
			`GRANT SELECT ON fts TO %r WITH GRANT OPTION`,
			`SET LOCAL ROLE %r ;; GRANT SELECT ON fts TO PUBLIC`,
		}},
		{name: "its owner's default privileges cut", swapped: true, owner: true, setup: []string{
			`ALTER DEFAULT PRIVILEGES FOR ROLE %r REVOKE DELETE, TRUNCATE ON TABLES FROM %r`,
		}},
		{name: "a leftover another holds", held: true, setup: []string{
			`CREATE TABLE fts_build (x int)`,
		}},
		{name: "a session's default tablespace", swapped: true, sessionTablespace: true},
		{name: "an exclusion constraint with options", swapped: true, setup: []string{
			`ALTER TABLE keys ADD CONSTRAINT keys_step_99 EXCLUDE USING btree (value WITH =) WITH (fillfactor = 70) WHERE (step = 99)`,
		}},
		{name: "repeatable read", url: "&default_transaction_isolation=repeatable%20read"},
		{name: "an index of it the rows break", fails: "fts_words_once", setup: []string{
			`CREATE UNIQUE INDEX fts_words_once ON fts (words)`,
		}},
		{name: "an index of it the rows break, made by the build", fails: "fts_words_once", sideMost: 1, setup: []string{
			`CREATE UNIQUE INDEX fts_words_once ON fts (words)`,
		}},
		{name: "an index of it the rows break, made by the side", fails: "a_fts_words_once", sideMost: 1, setup: []string{
			`CREATE UNIQUE INDEX a_fts_words_once ON fts (words)`,
		}},
		{name: "an index of another table the rows break", fails: "keys_step_once", setup: []string{
			`CREATE UNIQUE INDEX keys_step_once ON keys (step)`,
		}},
		// The side makes a slow index (some 9 s of sleeping at 300 pages)
		// when the build fails or is cancelled: the side's statement is
		// cancelled on the server and its table dropped.
		{name: "an index of another table the rows break, the side's slow", fails: "keys_step_once", setup: append(slowIndex,
			`CREATE UNIQUE INDEX keys_step_once ON keys (step)`)},
		{name: "cancelled while the side makes a slow index", fails: "context canceled", sideMost: 1, cancelAtWait: true, setup: slowIndex},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := pgtest.URL(t) + tc.url
			if tc.held {
				url += "&lock_timeout=200" // each wait for the held table
			}
			role := role + "_" + strconv.Itoa(n)
			if tc.owner {
				url = asOwner(t, url, role)
			}
			db, err := postgres.Open(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			postgres.SetSideIndexes(db, tc.sideMost)
			builder := db
			if tc.sessionTablespace {
				if name := moveToTablespace(t, db, "fts_title"); name != "" {
					if _, err := db.Pool().Exec(ctx, `ALTER INDEX fts_title SET TABLESPACE pg_default`); err != nil {
						t.Fatal(err)
					}
					if builder, err = postgres.Open(ctx, url+"&default_tablespace="+name, nil); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { builder.Close() })
				}
			}
			var schema string
			if err := db.Pool().QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
				t.Fatal(err)
			}
			if !tc.owner && strings.Contains(strings.Join(tc.setup, " "), "%r") {
				if _, err := db.Pool().Exec(ctx, `CREATE ROLE `+role); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					for _, stmt := range []string{`DROP OWNED BY ` + role, `DROP ROLE ` + role} {
						if _, err := db.Pool().Exec(context.Background(), stmt); err != nil {
							t.Errorf("%s: %v", stmt, err)
						}
					}
				})
			}
			if tc.name == "comments, privileges, a tablespace and a leftover" {
				moveToTablespace(t, db, "fts_title")
			}
			// Each entry in a transaction of its own, its statements
			// separated by " ;; ".
			for _, entry := range tc.setup {
				entry = strings.NewReplacer("%s", pgx.Identifier{schema}.Sanitize(), "%r", role).Replace(entry)
				err := pgx.BeginFunc(ctx, db.Pool(), func(tx pgx.Tx) error {
					for stmt := range strings.SplitSeq(entry, " ;; ") {
						if _, err := tx.Exec(ctx, stmt); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatalf("%s: %v", entry, err)
				}
			}
			if tc.held {
				tx, err := db.Pool().Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(context.Background())
				if _, err := tx.Exec(ctx, `LOCK TABLE fts_build IN ACCESS SHARE MODE`); err != nil {
					t.Fatal(err)
				}
			}
			type table struct {
				oid                uint32
				comment, acl       string
				columns, leftovers string
				tablespace         string
				rows, short, pages int // pages: files with a title
			}
			read := func() table {
				var tb table
				err := db.Pool().QueryRow(ctx, `SELECT c.oid, coalesce(obj_description(c.oid, 'pg_class'), ''),
						coalesce((SELECT string_agg(pg_get_userbyid(a.grantee) || ':' || a.privilege_type || ':' || a.is_grantable, ' '
							ORDER BY a.grantee, a.privilege_type) FROM aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a), ''),
						coalesce((SELECT string_agg(attname || ':' || coalesce(col_description(c.oid, attnum), ''), ' ' ORDER BY attnum)
							FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped), ''),
						(SELECT count(*) FROM pg_class WHERE relname LIKE 'fts\_build%' AND relnamespace = c.relnamespace)::text,
						coalesce((SELECT spcname FROM pg_tablespace WHERE oid = c.reltablespace), ''),
						(SELECT count(*) FROM fts), (SELECT count(*) FROM fts_short), (SELECT count(*) FROM files WHERE title IS NOT NULL)
					FROM pg_class c WHERE c.oid = 'fts'::regclass`).Scan(&tb.oid, &tb.comment, &tb.acl, &tb.columns, &tb.leftovers, &tb.tablespace,
					&tb.rows, &tb.short, &tb.pages)
				if err != nil {
					t.Fatal(err)
				}
				return tb
			}
			before := read()
			defs, _ := indexOIDs(t, db)
			st := postgres.NewIndexStorage(builder)
			s, _ := commitVault(t, builder, files)
			bctx := ctx
			if tc.cancelAtWait {
				var cancel context.CancelFunc
				bctx, cancel = context.WithCancel(ctx)
				defer cancel()
				postgres.OnSideWait(builder, cancel)
			}
			err = index.New(s, st, nil).Rebuild(bctx)
			after := read()
			afterDefs, _ := indexOIDs(t, db)
			if !maps.Equal(afterDefs, defs) {
				t.Errorf("indexes after the first build:\n%v\nwant\n%v", afterDefs, defs)
			}
			if want := map[bool]string{false: "0", true: "1"}[tc.held]; after.leftovers != want {
				t.Errorf("%s tables of the build's left in the schema, want %s", after.leftovers, want)
			}
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Fatalf("build: %v, want an error naming %s", err, tc.fails)
				}
				if before.leftovers = "0"; after != before {
					t.Errorf("fts after a failed build = %+v, want it as it was, %+v", after, before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if swapped := after.oid != before.oid; swapped != tc.swapped {
				t.Errorf("fts swapped: %v, want %v", swapped, tc.swapped)
			}
			if after.comment != before.comment || after.acl != before.acl || after.columns != before.columns || after.tablespace != before.tablespace {
				t.Errorf("fts's comment, privileges, columns and tablespace after the build:\n%q %q %q %q\nwant\n%q %q %q %q",
					after.comment, after.acl, after.columns, after.tablespace, before.comment, before.acl, before.columns, before.tablespace)
			}
			pages := after.pages
			if pages < len(files)/2 || after.rows != pages || after.short != pages {
				t.Errorf("fts holds %d pages, fts_short %d; want the %d of the index's files, of %d, each", after.rows, after.short, pages, len(files))
			}
			if tc.name == "a view of it" {
				var n int
				if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM page_words`).Scan(&n); err != nil || n != pages {
					t.Errorf("the view counts %d pages, %v; want %d", n, err, pages)
				}
			}
			q := index.FullTextQuery{Terms: termsOf(commonWords(t, db, 1)[0]), Limit: 5}
			if got, err := st.Committed().Search(ctx, q); err != nil || len(got) == 0 {
				t.Errorf("search after the build = %v, %v", got, err)
			}
		})
	}
}

// ownDatabase makes a database of the test's own, dropped when the test
// ends, and returns its URL with a search_path as pgtest.URL's: for a test
// that must see no other session's transaction in its database (the other
// packages' tests share the test database, each in a schema, and may run
// at the same time).
func ownDatabase(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, pgtest.Base(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	database := "cairn_own_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+database); err != nil {
		t.Fatal(err)
	}
	cleanupAsAdmin(t, pgtest.Base(t), `DROP DATABASE `+database+` WITH (FORCE)`)
	u, err := neturl.Parse(pgtest.Base(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + database
	q := u.Query()
	q.Set("search_path", "vault")
	u.RawQuery = q.Encode()
	return u.String()
}

// asOwner makes a login role name that may make schemas in url's
// database, dropped with what it owns when the test ends, and returns url
// as that role's.
func asOwner(t *testing.T, url, name string) string {
	t.Helper()
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	password := "pw" + strconv.FormatInt(time.Now().UnixNano(), 36) // where the server asks for one
	var database string
	if err := admin.QueryRow(ctx, `SELECT current_database()`).Scan(&database); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE ROLE ` + name + ` LOGIN PASSWORD '` + password + `'`,
		`GRANT CREATE ON DATABASE ` + pgx.Identifier{database}.Sanitize() + ` TO ` + name,
	} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	cleanupAsAdmin(t, url, `DROP SCHEMA IF EXISTS `+pgx.Identifier{u.Query().Get("search_path")}.Sanitize()+` CASCADE`,
		`DROP OWNED BY `+name, `DROP ROLE `+name)
	u.User = neturl.UserPassword(name, password)
	return u.String()
}

// cleanupAsAdmin runs stmts, in order, on the test database as its
// administrator when the test ends: dropping what a test made as it.
func cleanupAsAdmin(t *testing.T, url string, stmts ...string) {
	t.Cleanup(func() {
		ctx := context.Background()
		admin, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close(ctx)
		for _, stmt := range stmts {
			if _, err := admin.Exec(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
}

// slowIndex makes an index of fts that sorts first by name and takes
// some 30 ms a page to make.
var slowIndex = []string{
	`CREATE FUNCTION slow_words(int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT $1 FROM pg_sleep(0.03) $$`,
	`CREATE INDEX fts_a_slow ON fts (slow_words(words))`,
}
