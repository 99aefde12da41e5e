package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cairn"
	"cairn/store"
)

// Drift is what [Index.Check] found wrong.
type Drift struct {
	// Problems describe each difference between the index and the store.
	Problems []string `json:"problems"`
}

// OK reports whether the index matches the store.
func (d *Drift) OK() bool { return len(d.Problems) == 0 }

// Check compares the index with the store: the indexed commit with main's
// head, and the indexed files with the tree. With deep, it also rebuilds
// the index from scratch inside a transaction it rolls back, and compares
// every derived row (keys, links, findings, reachability, full text) with
// the committed ones. `cairn reindex` repairs what it reports.
func (ix *Index) Check(ctx context.Context, deep bool) (*Drift, error) {
	d := &Drift{}
	err := ix.s.Update(ctx, func(tx *store.Tx) error {
		q := newPrepared(tx.SQL())
		defer q.close()
		st, err := readState(ctx, q)
		if err != nil {
			return err
		}
		head, err := tx.Head(ctx, Branch)
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return err
		}
		if head != st.Commit {
			d.Problems = append(d.Problems, fmt.Sprintf("the index reflects commit %s, but main is at %s", short(st.Commit), short(head)))
		}
		indexed := map[string]cairn.Hash{}
		rows, err := q.QueryContext(ctx, `SELECT path, blob FROM files`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p string
			var b []byte
			if err := rows.Scan(&p, &b); err != nil {
				rows.Close()
				return err
			}
			indexed[p] = cairn.Hash(b)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		for e, err := range tx.Files(ctx, st.Tree, "") {
			if err != nil {
				return err
			}
			h, ok := indexed[e.Path]
			switch {
			case !ok:
				d.Problems = append(d.Problems, fmt.Sprintf("%s is in the tree but not in the index", e.Path))
			case h != e.Blob:
				d.Problems = append(d.Problems, fmt.Sprintf("%s: the index has content %s, the tree %s", e.Path, h.Short(), e.Blob.Short()))
			}
			delete(indexed, e.Path)
		}
		for p := range indexed {
			d.Problems = append(d.Problems, fmt.Sprintf("%s is in the index but not in the tree", p))
		}
		if deep && d.OK() {
			before, err := snapshot(ctx, q)
			if err != nil {
				return err
			}
			if err := build(ctx, q, tx, st.Tree); err != nil {
				return err
			}
			after, err := snapshot(ctx, q)
			if err != nil {
				return err
			}
			d.Problems = append(d.Problems, after.Diff(before)...)
		}
		return errRollback
	})
	if err != nil && !errors.Is(err, errRollback) {
		return nil, err
	}
	slices.Sort(d.Problems)
	return d, nil
}

func short(h cairn.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.Short()
}

// Snapshot is the content of the index with file ids replaced by paths,
// one line per row, sorted: two indexes of one tree have equal snapshots.
type Snapshot struct {
	Tables map[string][]string
}

var snapshotQueries = map[string]string{
	"files": `SELECT path, kind, hex(blob), size, page_id, title, title_source, type, frontmatter, aliases, sources,
		headings, block_ids, problems, inbound, depth FROM files`,
	"keys": `SELECT k.value, k.step, f.path FROM keys k JOIN files f ON f.id = k.file`,
	"links": `SELECT s.path, l.ord, l.flags, l.status, d.path, l.step, l.detail, hex(l.link)
		FROM links l JOIN files s ON s.id = l.src LEFT JOIN files d ON d.id = l.dst`,
	"link_keys": `SELECT k.hash, s.path, k.ord FROM link_keys k JOIN files s ON s.id = k.src`,
	"cites":     `SELECT c.value, f.path FROM cites c JOIN files f ON f.id = c.file`,
	"findings":  `SELECT f.path, n.rule, n.severity, n.subject, n.message FROM findings n JOIN files f ON f.id = n.file`,
	"fts":       `SELECT f.path FROM fts JOIN files f ON f.id = fts.rowid`,
	"fts_title": `SELECT f.path FROM fts_title JOIN files f ON f.id = fts_title.rowid`,
}

// TakeSnapshot returns the current content of the committed index.
func (ix *Index) TakeSnapshot(ctx context.Context) (*Snapshot, error) { return snapshot(ctx, ix.db) }

func snapshot(ctx context.Context, q dbtx) (*Snapshot, error) {
	s := &Snapshot{Tables: map[string][]string{}}
	for table, query := range snapshotQueries {
		rows, err := q.QueryContext(ctx, query)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", table, err)
		}
		cols, _ := rows.Columns()
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		var lines []string
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				if v.Valid {
					parts[i] = v.String
				} else {
					parts[i] = "NULL"
				}
			}
			lines = append(lines, strings.Join(parts, " | "))
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		slices.Sort(lines)
		s.Tables[table] = lines
	}
	return s, nil
}

// Diff describes how s differs from other, at most five rows per table.
func (s *Snapshot) Diff(other *Snapshot) []string {
	var out []string
	for table, lines := range s.Tables {
		theirs := other.Tables[table]
		only := func(a, b []string) []string {
			var o []string
			for _, l := range a {
				if _, found := slices.BinarySearch(b, l); !found {
					o = append(o, l)
				}
			}
			return o
		}
		missing, extra := only(lines, theirs), only(theirs, lines)
		for i, l := range missing {
			if i == 5 {
				out = append(out, fmt.Sprintf("%s: %d more rows missing", table, len(missing)-5))
				break
			}
			out = append(out, fmt.Sprintf("%s: missing %s", table, l))
		}
		for i, l := range extra {
			if i == 5 {
				out = append(out, fmt.Sprintf("%s: %d more rows that should not be there", table, len(extra)-5))
				break
			}
			out = append(out, fmt.Sprintf("%s: unexpected %s", table, l))
		}
	}
	slices.Sort(out)
	return out
}
