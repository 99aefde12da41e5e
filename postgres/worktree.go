package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
// use db's pool; its writes run in the transactions of db.Update they are
// given.
func NewWorktreeStorage(db *DB) *WorktreeStorage { return &WorktreeStorage{db: db} }

const treeColumns = `id, path, branch, base, pending`

// scanTree reads a row of treeColumns.
func scanTree(row pgx.Row) (*worktree.Tree, error) {
	t := &worktree.Tree{}
	var base, pending []byte
	if err := row.Scan(&t.ID, &t.Path, &t.Branch, &base, &pending); err != nil {
		return nil, err
	}
	copy(t.Base[:], base)
	copy(t.Pending[:], pending)
	return t, nil
}

// oneTree reads one tree; a missing one is ENOTFOUND, named by what.
func (s *WorktreeStorage) oneTree(row pgx.Row, what string) (*worktree.Tree, error) {
	t, err := scanTree(row)
	if err != nil {
		err = s.db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "no working tree %s", what)
		}
		return nil, fmt.Errorf("read the working tree %s: %w", what, err)
	}
	return t, nil
}

// Trees returns every working tree, by path.
func (s *WorktreeStorage) Trees(ctx context.Context) ([]*worktree.Tree, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT `+treeColumns+` FROM worktrees ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("list working trees: %w", s.db.translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*worktree.Tree, error) { return scanTree(r) })
	if err != nil {
		return nil, fmt.Errorf("list working trees: %w", s.db.translate(err))
	}
	return out, nil
}

// Tree returns the working tree with the given id; ENOTFOUND when there is
// none.
func (s *WorktreeStorage) Tree(ctx context.Context, id int64) (*worktree.Tree, error) {
	return s.oneTree(s.db.pool.QueryRow(ctx, `SELECT `+treeColumns+` FROM worktrees WHERE id = $1`, id), fmt.Sprintf("with id %d", id))
}

// TreeAt returns the working tree recorded at path; ENOTFOUND when there is
// none.
func (s *WorktreeStorage) TreeAt(ctx context.Context, path string) (*worktree.Tree, error) {
	return s.oneTree(s.db.pool.QueryRow(ctx, `SELECT `+treeColumns+` FROM worktrees WHERE path = $1`, path), "at "+path)
}

// BranchTree returns, inside tx, the first by path of the working trees
// that hold branch; ENOTFOUND when none does.
func (s *WorktreeStorage) BranchTree(ctx context.Context, tx cairn.Tx, branch string) (*worktree.Tree, error) {
	q, err := PgxTx(tx)
	if err != nil {
		return nil, err
	}
	return s.oneTree(q.QueryRow(ctx, `SELECT `+treeColumns+` FROM worktrees WHERE branch = $1 ORDER BY path LIMIT 1`, branch), "holds branch "+branch)
}

// AddTree records a working tree inside tx and returns its id; ECONFLICT
// when one is recorded at t.Path, and tx goes on.
func (s *WorktreeStorage) AddTree(ctx context.Context, tx cairn.Tx, t *worktree.Tree, created time.Time) (int64, error) {
	q, err := PgxTx(tx)
	if err != nil {
		return 0, err
	}
	var id int64
	err = q.QueryRow(ctx, `INSERT INTO worktrees (path, branch, base, created) VALUES ($1, $2, $3, $4)
		ON CONFLICT (path) DO NOTHING RETURNING id`,
		t.Path, t.Branch, nullHash(t.Base), created.UnixNano()).Scan(&id)
	if err != nil {
		err = s.db.translate(err)
		// No row: the path's is kept without an error of the statement,
		// which would end the transaction; as in SQLite, it goes on.
		if cairn.ErrorCode(err) == cairn.ENOTFOUND || cairn.ErrorCode(err) == cairn.ECONFLICT {
			return 0, cairn.Errorf(cairn.ECONFLICT, "a working tree is already recorded at %s", t.Path)
		}
		return 0, fmt.Errorf("record the working tree at %s: %w", t.Path, err)
	}
	return id, nil
}

// MoveTree records inside tx that tree id, recorded at from, is at to; it
// does nothing when tree id is not at from. ECONFLICT when another tree is
// recorded at to, and tx goes on.
func (s *WorktreeStorage) MoveTree(ctx context.Context, tx cairn.Tx, id int64, from, to string) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	// Another tree at to is found first, rather than by the unique key's
	// error, which would end the transaction: as in SQLite, it goes on.
	var conflict bool
	err = q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM worktrees WHERE id = $1 AND path = $2)
		AND EXISTS (SELECT 1 FROM worktrees WHERE path = $3 AND id <> $1)`, id, from, to).Scan(&conflict)
	if err == nil && !conflict {
		_, err = q.Exec(ctx, `UPDATE worktrees SET path = $1 WHERE id = $2 AND path = $3`, to, id, from)
	}
	err = s.db.translate(err)
	if conflict || cairn.ErrorCode(err) == cairn.ECONFLICT {
		return cairn.Errorf(cairn.ECONFLICT, "a working tree is already recorded at %s", to)
	}
	if err != nil {
		return fmt.Errorf("move working tree %d to %s: %w", id, to, err)
	}
	return nil
}

// SetPending records inside tx that a sync of tree id to target is under
// way.
func (s *WorktreeStorage) SetPending(ctx context.Context, tx cairn.Tx, id int64, target cairn.Hash) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `UPDATE worktrees SET pending = $1 WHERE id = $2`, nullHash(target), id); err != nil {
		return fmt.Errorf("record the sync of working tree %d: %w", id, s.db.translate(err))
	}
	return nil
}

// FinishSync records inside tx what a sync of tree id did, then its new
// base with no sync pending.
func (s *WorktreeStorage) FinishSync(ctx context.Context, tx cairn.Tx, id int64, done worktree.Synced) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	if len(done.Resolved) > 0 {
		if _, err := q.Exec(ctx, `DELETE FROM worktree_bases WHERE worktree = $1 AND path = ANY($2)`, id, done.Resolved); err != nil {
			return fmt.Errorf("finish the sync of working tree %d: %w", id, s.db.translate(err))
		}
	}
	if err := s.setOverrides(ctx, q, id, done.Overrides); err != nil {
		return fmt.Errorf("finish the sync of working tree %d: %w", id, err)
	}
	if len(done.Deleted) > 0 {
		if _, err := q.Exec(ctx, `DELETE FROM worktree_files WHERE worktree = $1 AND path = ANY($2)`, id, done.Deleted); err != nil {
			return fmt.Errorf("finish the sync of working tree %d: %w", id, s.db.translate(err))
		}
	}
	if err := s.putStats(ctx, q, id, done.Stats); err != nil {
		return fmt.Errorf("finish the sync of working tree %d: %w", id, err)
	}
	if _, err := q.Exec(ctx, `UPDATE worktrees SET base = $1, pending = NULL WHERE id = $2`, nullHash(done.Base), id); err != nil {
		return fmt.Errorf("finish the sync of working tree %d: %w", id, s.db.translate(err))
	}
	return nil
}

// DeleteTree removes tree id, its stat rows and overrides inside tx.
func (s *WorktreeStorage) DeleteTree(ctx context.Context, tx cairn.Tx, id int64) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	for _, stmt := range []string{
		`DELETE FROM worktree_files WHERE worktree = $1`,
		`DELETE FROM worktree_bases WHERE worktree = $1`,
		`DELETE FROM worktrees WHERE id = $1`,
	} {
		if _, err := q.Exec(ctx, stmt, id); err != nil {
			return fmt.Errorf("forget working tree %d: %w", id, s.db.translate(err))
		}
	}
	return nil
}

// Stats returns the stat rows of tree id by path.
func (s *WorktreeStorage) Stats(ctx context.Context, id int64) (map[string]worktree.FileStat, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT path, size, mtime, checked, blob FROM worktree_files WHERE worktree = $1`, id)
	if err != nil {
		return nil, fmt.Errorf("read the stat rows of working tree %d: %w", id, s.db.translate(err))
	}
	defer rows.Close()
	out := map[string]worktree.FileStat{}
	for rows.Next() {
		var r worktree.FileStat
		var b []byte
		if err := rows.Scan(&r.Path, &r.Size, &r.Mtime, &r.Checked, &b); err != nil {
			return nil, fmt.Errorf("read the stat rows of working tree %d: %w", id, s.db.translate(err))
		}
		copy(r.Blob[:], b)
		out[r.Path] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the stat rows of working tree %d: %w", id, s.db.translate(err))
	}
	return out, nil
}

// Stat returns the stat row of one path of tree id; ENOTFOUND when there is
// none.
func (s *WorktreeStorage) Stat(ctx context.Context, id int64, path string) (worktree.FileStat, error) {
	r := worktree.FileStat{Path: path}
	var b []byte
	err := s.db.pool.QueryRow(ctx, `SELECT size, mtime, checked, blob FROM worktree_files WHERE worktree = $1 AND path = $2`,
		id, path).Scan(&r.Size, &r.Mtime, &r.Checked, &b)
	if err != nil {
		err = s.db.translate(err)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return worktree.FileStat{}, cairn.Errorf(cairn.ENOTFOUND, "no stat row of %s in working tree %d", path, id)
		}
		return worktree.FileStat{}, fmt.Errorf("read the stat row of %s in working tree %d: %w", path, id, err)
	}
	copy(r.Blob[:], b)
	return r, nil
}

// PutStats writes stat rows of tree id inside tx, replacing those of the
// same paths.
func (s *WorktreeStorage) PutStats(ctx context.Context, tx cairn.Tx, id int64, stats []worktree.FileStat) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	if err := s.putStats(ctx, q, id, stats); err != nil {
		return fmt.Errorf("write the stat rows of working tree %d: %w", id, err)
	}
	return nil
}

// statsPerStmt bounds the rows one statement writes.
const statsPerStmt = 5000

// putStats writes the rows as arrays, many a statement (a sync of an
// import writes ten thousand). A path given twice keeps its last row, as
// the SQLite implementation's inserts in order do; one statement of
// PostgreSQL cannot update one row twice.
func (s *WorktreeStorage) putStats(ctx context.Context, q pgx.Tx, id int64, stats []worktree.FileStat) error {
	stats = lastOfEach(stats, func(r worktree.FileStat) string { return r.Path })
	for start := 0; start < len(stats); start += statsPerStmt {
		chunk := stats[start:min(start+statsPerStmt, len(stats))]
		paths := make([]string, len(chunk))
		sizes, mtimes, checked := make([]int64, len(chunk)), make([]int64, len(chunk)), make([]int64, len(chunk))
		blobs := make([][]byte, len(chunk))
		for i := range chunk {
			r := &chunk[i]
			paths[i], sizes[i], mtimes[i], blobs[i], checked[i] = r.Path, r.Size, r.Mtime, r.Blob[:], r.Checked
		}
		_, err := q.Exec(ctx, `INSERT INTO worktree_files (worktree, path, size, mtime, blob, checked)
			SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bytea[], $6::bigint[])
			ON CONFLICT (worktree, path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, blob = excluded.blob, checked = excluded.checked`,
			id, paths, sizes, mtimes, blobs, checked)
		if err != nil {
			return s.db.translate(err)
		}
	}
	return nil
}

// Overrides returns the overrides of tree id by path; a NULL blob (an
// absent file) gives a zero Blob.
func (s *WorktreeStorage) Overrides(ctx context.Context, id int64) (map[string]cairn.Entry, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT path, blob, size, mode FROM worktree_bases WHERE worktree = $1`, id)
	if err != nil {
		return nil, fmt.Errorf("read the overrides of working tree %d: %w", id, s.db.translate(err))
	}
	defer rows.Close()
	out := map[string]cairn.Entry{}
	for rows.Next() {
		e := cairn.Entry{}
		var b []byte
		var mode int32
		if err := rows.Scan(&e.Path, &b, &e.Size, &mode); err != nil {
			return nil, fmt.Errorf("read the overrides of working tree %d: %w", id, s.db.translate(err))
		}
		copy(e.Blob[:], b)
		e.Mode = cairn.Mode(mode)
		out[e.Path] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the overrides of working tree %d: %w", id, s.db.translate(err))
	}
	return out, nil
}

// SetOverrides records overrides of tree id inside tx, replacing those of
// the same paths; a zero Blob is stored as NULL.
func (s *WorktreeStorage) SetOverrides(ctx context.Context, tx cairn.Tx, id int64, over []cairn.Entry) error {
	q, err := PgxTx(tx)
	if err != nil {
		return err
	}
	if err := s.setOverrides(ctx, q, id, over); err != nil {
		return fmt.Errorf("record the overrides of working tree %d: %w", id, err)
	}
	return nil
}

// setOverrides writes the overrides in one statement; a path given twice
// keeps its last entry.
func (s *WorktreeStorage) setOverrides(ctx context.Context, q pgx.Tx, id int64, over []cairn.Entry) error {
	over = lastOfEach(over, func(e cairn.Entry) string { return e.Path })
	if len(over) == 0 {
		return nil
	}
	paths := make([]string, len(over))
	blobs := make([][]byte, len(over))
	sizes := make([]int64, len(over))
	modes := make([]int32, len(over))
	for i, e := range over {
		paths[i], blobs[i], sizes[i], modes[i] = e.Path, nullHash(e.Blob), e.Size, int32(e.Mode)
	}
	_, err := q.Exec(ctx, `INSERT INTO worktree_bases (worktree, path, blob, size, mode)
		SELECT $1, * FROM unnest($2::text[], $3::bytea[], $4::bigint[], $5::integer[])
		ON CONFLICT (worktree, path) DO UPDATE SET blob = excluded.blob, size = excluded.size, mode = excluded.mode`,
		id, paths, blobs, sizes, modes)
	return s.db.translate(err)
}

// lastOfEach returns xs with only the last of the elements of each key,
// in the order of those; xs itself when no key repeats.
func lastOfEach[T any](xs []T, key func(T) string) []T {
	last := make(map[string]int, len(xs))
	for i, x := range xs {
		last[key(x)] = i
	}
	if len(last) == len(xs) {
		return xs
	}
	out := make([]T, 0, len(last))
	for i, x := range xs {
		if last[key(x)] == i {
			out = append(out, x)
		}
	}
	return out
}
