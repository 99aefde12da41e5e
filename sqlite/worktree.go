package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"cairn"
	"cairn/worktree"
)

// WorktreeStorage keeps the records of a vault's working trees in its
// database: the tables worktrees, worktree_files (stat rows) and
// worktree_bases (overrides) of migration 0003.
type WorktreeStorage struct {
	db *DB
}

var _ worktree.Storage = (*WorktreeStorage)(nil)

// NewWorktreeStorage returns the working trees' storage in db. Its reads
// use db's read-only pool; its writes run in the transactions of db.Update
// they are given.
func NewWorktreeStorage(db *DB) *WorktreeStorage { return &WorktreeStorage{db: db} }

// asSQLTx returns the database transaction of a transaction of this
// package's Update; another backend's transaction is an internal error.
func asSQLTx(tx cairn.Tx) (*sql.Tx, error) {
	t, ok := tx.(*Tx)
	if !ok {
		return nil, cairn.Errorf(cairn.EINTERNAL, "a %T is not a transaction of the SQLite backend", tx)
	}
	return t.tx, nil
}

const treeColumns = `id, path, branch, base, pending`

func scanTree(sc interface{ Scan(...any) error }) (*worktree.Tree, error) {
	t := &worktree.Tree{}
	var base, pending []byte
	if err := sc.Scan(&t.ID, &t.Path, &t.Branch, &base, &pending); err != nil {
		return nil, err
	}
	copy(t.Base[:], base)
	copy(t.Pending[:], pending)
	return t, nil
}

// oneTree reads one tree; a missing one is ENOTFOUND, named by what.
func oneTree(row *sql.Row, what string) (*worktree.Tree, error) {
	t, err := scanTree(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "no working tree %s", what)
	}
	return t, translate(err)
}

// Trees returns every working tree, by path.
func (s *WorktreeStorage) Trees(ctx context.Context) ([]*worktree.Tree, error) {
	rows, err := s.db.rq.QueryContext(ctx, `SELECT `+treeColumns+` FROM worktrees ORDER BY path`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []*worktree.Tree
	for rows.Next() {
		t, err := scanTree(rows)
		if err != nil {
			return nil, translate(err)
		}
		out = append(out, t)
	}
	return out, translate(rows.Err())
}

// Tree returns the working tree with the given id; ENOTFOUND when there is
// none.
func (s *WorktreeStorage) Tree(ctx context.Context, id int64) (*worktree.Tree, error) {
	return oneTree(s.db.rq.QueryRowContext(ctx, `SELECT `+treeColumns+` FROM worktrees WHERE id = ?`, id), fmt.Sprintf("with id %d", id))
}

// TreeAt returns the working tree recorded at path; ENOTFOUND when there is
// none.
func (s *WorktreeStorage) TreeAt(ctx context.Context, path string) (*worktree.Tree, error) {
	return oneTree(s.db.rq.QueryRowContext(ctx, `SELECT `+treeColumns+` FROM worktrees WHERE path = ?`, path), "at "+path)
}

// BranchTree returns, inside tx, the first by path of the working trees
// that hold branch; ENOTFOUND when none does.
func (s *WorktreeStorage) BranchTree(ctx context.Context, tx cairn.Tx, branch string) (*worktree.Tree, error) {
	q, err := asSQLTx(tx)
	if err != nil {
		return nil, err
	}
	return oneTree(q.QueryRowContext(ctx, `SELECT `+treeColumns+` FROM worktrees WHERE branch = ? ORDER BY path LIMIT 1`, branch), "holds branch "+branch)
}

// AddTree records a working tree inside tx and returns its id; ECONFLICT
// when one is recorded at t.Path.
func (s *WorktreeStorage) AddTree(ctx context.Context, tx cairn.Tx, t *worktree.Tree, created time.Time) (int64, error) {
	q, err := asSQLTx(tx)
	if err != nil {
		return 0, err
	}
	var id int64
	err = q.QueryRowContext(ctx, `INSERT INTO worktrees (path, branch, base, created) VALUES (?, ?, ?, ?) RETURNING id`,
		t.Path, t.Branch, nullHash(t.Base), created.UnixNano()).Scan(&id)
	if isUnique(err) {
		return 0, cairn.Errorf(cairn.ECONFLICT, "a working tree is already recorded at %s", t.Path)
	}
	return id, translate(err)
}

// MoveTree records inside tx that tree id, recorded at from, is at to; it
// does nothing when tree id is not at from. ECONFLICT when another tree is
// recorded at to.
func (s *WorktreeStorage) MoveTree(ctx context.Context, tx cairn.Tx, id int64, from, to string) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `UPDATE worktrees SET path = ? WHERE id = ? AND path = ?`, to, id, from)
	if isUnique(err) {
		return cairn.Errorf(cairn.ECONFLICT, "a working tree is already recorded at %s", to)
	}
	return translate(err)
}

// SetPending records inside tx that a sync of tree id to target is under
// way.
func (s *WorktreeStorage) SetPending(ctx context.Context, tx cairn.Tx, id int64, target cairn.Hash) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `UPDATE worktrees SET pending = ? WHERE id = ?`, nullHash(target), id)
	return translate(err)
}

// FinishSync records inside tx what a sync of tree id did, then its new
// base with no sync pending.
func (s *WorktreeStorage) FinishSync(ctx context.Context, tx cairn.Tx, id int64, done worktree.Synced) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	for _, p := range done.Resolved {
		if _, err := q.ExecContext(ctx, `DELETE FROM worktree_bases WHERE worktree = ? AND path = ?`, id, p); err != nil {
			return translate(err)
		}
	}
	if err := setOverrides(ctx, q, id, done.Overrides); err != nil {
		return err
	}
	for _, p := range done.Deleted {
		if _, err := q.ExecContext(ctx, `DELETE FROM worktree_files WHERE worktree = ? AND path = ?`, id, p); err != nil {
			return translate(err)
		}
	}
	if err := putStats(ctx, q, id, done.Stats); err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `UPDATE worktrees SET base = ?, pending = NULL WHERE id = ?`, nullHash(done.Base), id)
	return translate(err)
}

// DeleteTree removes tree id, its stat rows and overrides inside tx.
func (s *WorktreeStorage) DeleteTree(ctx context.Context, tx cairn.Tx, id int64) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	for _, stmt := range []string{
		`DELETE FROM worktree_files WHERE worktree = ?`,
		`DELETE FROM worktree_bases WHERE worktree = ?`,
		`DELETE FROM worktrees WHERE id = ?`,
	} {
		if _, err := q.ExecContext(ctx, stmt, id); err != nil {
			return translate(err)
		}
	}
	return nil
}

// Stats returns the stat rows of tree id by path.
func (s *WorktreeStorage) Stats(ctx context.Context, id int64) (map[string]worktree.FileStat, error) {
	rows, err := s.db.rq.QueryContext(ctx, `SELECT path, size, mtime, checked, blob FROM worktree_files WHERE worktree = ?`, id)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]worktree.FileStat{}
	for rows.Next() {
		var r worktree.FileStat
		var b []byte
		if err := rows.Scan(&r.Path, &r.Size, &r.Mtime, &r.Checked, &b); err != nil {
			return nil, translate(err)
		}
		copy(r.Blob[:], b)
		out[r.Path] = r
	}
	return out, translate(rows.Err())
}

// Stat returns the stat row of one path of tree id; ENOTFOUND when there is
// none.
func (s *WorktreeStorage) Stat(ctx context.Context, id int64, path string) (worktree.FileStat, error) {
	r := worktree.FileStat{Path: path}
	var b []byte
	err := s.db.rq.QueryRowContext(ctx, `SELECT size, mtime, checked, blob FROM worktree_files WHERE worktree = ? AND path = ?`,
		id, path).Scan(&r.Size, &r.Mtime, &r.Checked, &b)
	if errors.Is(err, sql.ErrNoRows) {
		return worktree.FileStat{}, cairn.Errorf(cairn.ENOTFOUND, "no stat row of %s in working tree %d", path, id)
	}
	if err != nil {
		return worktree.FileStat{}, translate(err)
	}
	copy(r.Blob[:], b)
	return r, nil
}

// PutStats writes stat rows of tree id inside tx, replacing those of the
// same paths.
func (s *WorktreeStorage) PutStats(ctx context.Context, tx cairn.Tx, id int64, stats []worktree.FileStat) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	return putStats(ctx, q, id, stats)
}

func putStats(ctx context.Context, q *sql.Tx, id int64, stats []worktree.FileStat) error {
	// Many rows a statement: a sync of an import writes ten thousand.
	const perStmt = 100
	stmt := func(rows int) string {
		return `INSERT INTO worktree_files (worktree, path, size, mtime, blob, checked) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?),", rows), ",") +
			` ON CONFLICT (worktree, path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, blob = excluded.blob, checked = excluded.checked`
	}
	full := stmt(perStmt)
	args := make([]any, 0, 6*perStmt)
	for start := 0; start < len(stats); start += perStmt {
		chunk := stats[start:min(start+perStmt, len(stats))]
		args = args[:0]
		for i := range chunk {
			r := &chunk[i]
			args = append(args, id, r.Path, r.Size, r.Mtime, r.Blob[:], r.Checked)
		}
		query := full
		if len(chunk) < perStmt {
			query = stmt(len(chunk))
		}
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			return translate(err)
		}
	}
	return nil
}

// Overrides returns the overrides of tree id by path; a NULL blob (an
// absent file) gives a zero Blob.
func (s *WorktreeStorage) Overrides(ctx context.Context, id int64) (map[string]cairn.Entry, error) {
	rows, err := s.db.rq.QueryContext(ctx, `SELECT path, blob, size, mode FROM worktree_bases WHERE worktree = ?`, id)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]cairn.Entry{}
	for rows.Next() {
		e := cairn.Entry{}
		var b []byte
		var mode int
		if err := rows.Scan(&e.Path, &b, &e.Size, &mode); err != nil {
			return nil, translate(err)
		}
		copy(e.Blob[:], b)
		e.Mode = cairn.Mode(mode)
		out[e.Path] = e
	}
	return out, translate(rows.Err())
}

// SetOverrides records overrides of tree id inside tx, replacing those of
// the same paths; a zero Blob is stored as NULL.
func (s *WorktreeStorage) SetOverrides(ctx context.Context, tx cairn.Tx, id int64, over []cairn.Entry) error {
	q, err := asSQLTx(tx)
	if err != nil {
		return err
	}
	return setOverrides(ctx, q, id, over)
}

func setOverrides(ctx context.Context, q *sql.Tx, id int64, over []cairn.Entry) error {
	for _, e := range over {
		if _, err := q.ExecContext(ctx, `INSERT OR REPLACE INTO worktree_bases (worktree, path, blob, size, mode) VALUES (?, ?, ?, ?, ?)`,
			id, e.Path, nullHash(e.Blob), e.Size, int(e.Mode)); err != nil {
			return translate(err)
		}
	}
	return nil
}

// isUnique reports whether err is the violation of a UNIQUE constraint or
// a primary key.
func isUnique(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}
