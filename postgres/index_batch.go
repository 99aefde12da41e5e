package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
)

// The index's batched reads (index.BatchReader): an incremental update
// asks for the links it resolves again, the holders of the keys they look
// up and the depths it starts from each in one round trip instead of one
// per item. Each joins the array of what is asked for laterally (OFFSET 0
// keeps the planner from turning the lookups into a scan of the table).

var _ index.BatchReader = (*indexReader)(nil)

// KeyHoldersOf returns the holders of each key, each sorted by path, in
// the order of keys.
func (r *indexReader) KeyHoldersOf(ctx context.Context, keys []markdown.Key) ([][]index.FileRef, error) {
	values := make([]string, len(keys))
	steps := make([]int32, len(keys))
	for i, k := range keys {
		values[i], steps[i] = k.Value, int32(k.Step)
	}
	rows, err := r.query(ctx, `SELECT q.i, f.id, f.path, f.kind, f.blob
		FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS q(value, step, i)
		CROSS JOIN LATERAL (SELECT file FROM keys WHERE value = q.value COLLATE "C" AND step = q.step OFFSET 0) k
		CROSS JOIN LATERAL (SELECT id, path, kind, blob FROM files WHERE id = k.file OFFSET 0) f`, values, steps)
	if err != nil {
		return nil, fmt.Errorf("index: look up %d keys: %w", len(keys), err)
	}
	defer rows.Close()
	out := make([][]index.FileRef, len(keys))
	for rows.Next() {
		var i int64
		var f index.FileRef
		var kind int
		var blob []byte
		if err := rows.Scan(&i, &f.ID, &f.Path, &kind, &blob); err != nil {
			return nil, fmt.Errorf("index: look up %d keys: %w", len(keys), r.db.translate(err))
		}
		f.Kind = lint.Kind(kind)
		copy(f.Blob[:], blob)
		out[i-1] = append(out[i-1], f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: look up %d keys: %w", len(keys), r.db.translate(err))
	}
	for _, fs := range out {
		slices.SortFunc(fs, func(a, b index.FileRef) int { return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.ID, b.ID)) })
	}
	return out, nil
}

// LinksAt returns the links among keys that exist.
func (r *indexReader) LinksAt(ctx context.Context, keys []index.LinkKey) ([]index.LinkRow, error) {
	srcs := make([]int64, len(keys))
	ords := make([]int32, len(keys))
	for i, k := range keys {
		srcs[i], ords[i] = k.Src, int32(k.Ord)
	}
	rows, err := r.query(ctx, `SELECT `+indexLinkColumns+`
		FROM unnest($1::bigint[], $2::int[]) AS q(src, ord)
		CROSS JOIN LATERAL (SELECT * FROM links WHERE src = q.src AND ord = q.ord OFFSET 0) l`, srcs, ords)
	if err != nil {
		return nil, fmt.Errorf("index: read %d links: %w", len(keys), err)
	}
	defer rows.Close()
	out := make([]index.LinkRow, 0, len(keys))
	for rows.Next() {
		var l index.LinkRow
		var dst *int64
		var detail *string
		if err := rows.Scan(&l.Src, &l.Ord, &l.Flags, &l.Status, &dst, &l.Step, &detail, &l.Data); err != nil {
			return nil, fmt.Errorf("index: read %d links: %w", len(keys), r.db.translate(err))
		}
		l.Dst, l.Detail = deref(dst), deref(detail)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: read %d links: %w", len(keys), r.db.translate(err))
	}
	return out, nil
}

// Depths returns the depth of each file, -1 when unreachable or missing.
func (r *indexReader) Depths(ctx context.Context, ids []int64) ([]int, error) {
	rows, err := r.query(ctx, `SELECT q.i, f.depth
		FROM unnest($1::bigint[]) WITH ORDINALITY AS q(id, i)
		CROSS JOIN LATERAL (SELECT depth FROM files WHERE id = q.id OFFSET 0) f`, ids)
	if err != nil {
		return nil, fmt.Errorf("index: read the depths of %d files: %w", len(ids), err)
	}
	defer rows.Close()
	out := make([]int, len(ids))
	for i := range out {
		out[i] = -1
	}
	for rows.Next() {
		var i int64
		var d *int32
		if err := rows.Scan(&i, &d); err != nil {
			return nil, fmt.Errorf("index: read the depths of %d files: %w", len(ids), r.db.translate(err))
		}
		if d != nil {
			out[i-1] = int(*d)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: read the depths of %d files: %w", len(ids), r.db.translate(err))
	}
	return out, nil
}
