package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
)

// file is one vault file as the index sees it.
type file struct {
	id   int64
	path string
	kind lint.Kind
	blob cairn.Hash
	size int64
	page *markdown.Page // for pages
	text string         // the page's plain text, for full-text search
}

// parse derives what the index stores about one file.
func parse(e cairn.Entry, data []byte) *file {
	f := &file{path: e.Path, kind: lint.Classify(e.Path), blob: e.Blob, size: e.Size}
	if f.kind == lint.KindPage {
		f.page = markdown.Parse(e.Path, data)
		f.text = markdown.PlainText(data)
	}
	return f
}

// keys returns what the file answers to when links are resolved.
func (f *file) keys() []markdown.Key {
	if f.page != nil {
		return markdown.ResolutionKeys(f.page)
	}
	return markdown.AttachmentKeys(f.path)
}

func jsonText(v any) any {
	switch x := v.(type) {
	case []string:
		if len(x) == 0 {
			return nil
		}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	case []markdown.Heading:
		if len(x) == 0 {
			return nil
		}
	case []markdown.Problem:
		if len(x) == 0 {
			return nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return string(b)
}

// writeFile inserts (f.id == 0) or replaces the file's row, keeping its id
// and inbound count, then its keys, citations and full text. Links are
// written by writeLinks.
func writeFile(ctx context.Context, q dbtx, f *file) error {
	var pageID, title, titleSource, typ any
	var fm, aliases, sources, headings, blocks, problems any
	if p := f.page; p != nil {
		pageID, title, titleSource = p.ID, p.Title, string(p.TitleSource)
		if p.Type != "" {
			typ = p.Type
		}
		fm, aliases, sources = jsonText(p.Frontmatter), jsonText(p.Aliases), jsonText(p.Sources)
		headings, blocks, problems = jsonText(p.Headings), jsonText(p.BlockIDs), jsonText(p.Problems)
	}
	args := []any{f.path, int(f.kind), f.blob[:], f.size, pageID, title, titleSource, typ, fm, aliases, sources, headings, blocks, problems}
	if f.id == 0 {
		err := q.QueryRowContext(ctx, `INSERT INTO files (path, kind, blob, size, page_id, title, title_source, type,
			frontmatter, aliases, sources, headings, block_ids, problems) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`,
			args...).Scan(&f.id)
		if err != nil {
			return fmt.Errorf("index %s: %w", f.path, err)
		}
	} else {
		_, err := q.ExecContext(ctx, `UPDATE files SET path = ?, kind = ?, blob = ?, size = ?, page_id = ?, title = ?,
			title_source = ?, type = ?, frontmatter = ?, aliases = ?, sources = ?, headings = ?, block_ids = ?, problems = ?
			WHERE id = ?`, append(args, f.id)...)
		if err != nil {
			return fmt.Errorf("index %s: %w", f.path, err)
		}
	}
	for _, k := range f.keys() {
		if _, err := q.ExecContext(ctx, `INSERT OR IGNORE INTO keys (value, step, file) VALUES (?, ?, ?)`, k.Value, int(k.Step), f.id); err != nil {
			return err
		}
	}
	if f.page == nil {
		return nil
	}
	for _, v := range citeValues(f.page) {
		if _, err := q.ExecContext(ctx, `INSERT OR IGNORE INTO cites (value, file) VALUES (?, ?)`, v, f.id); err != nil {
			return err
		}
	}
	_, err := q.ExecContext(ctx, `INSERT INTO fts (rowid, title, body) VALUES (?, ?, ?)`, f.id, f.page.Title, f.text)
	return err
}

// writeLinks inserts a page's links. res holds their resolutions and dsts
// the ids they lead to (full builds); with nil res they are stored broken,
// to be resolved by the caller (updates).
func writeLinks(ctx context.Context, q dbtx, f *file, res []markdown.Resolution, dsts []int64) error {
	for i, l := range f.page.Links {
		status, step, detail := "broken", 0, any(nil)
		var dst any
		if res != nil {
			status, step, detail = string(res[i].Status), int(res[i].Step), detailJSON(res[i])
			if dsts[i] != 0 {
				dst = dsts[i]
			}
		}
		var id int64
		err := q.QueryRowContext(ctx, `INSERT INTO links (src, ord, kind, raw, target, heading, block, label, path, flags,
			property, line, col, status, dst, step, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`,
			f.id, i, string(l.Kind), l.Raw, l.Target, l.Heading, l.Block, l.Label, l.Path, linkFlags(l), l.Property, l.Line, l.Col,
			status, dst, step, detail).Scan(&id)
		if err != nil {
			return err
		}
		for _, v := range lookupValues(l) {
			if _, err := q.ExecContext(ctx, `INSERT OR IGNORE INTO link_keys (value, link) VALUES (?, ?)`, v, id); err != nil {
				return err
			}
		}
	}
	return nil
}

func linkFlags(l markdown.Link) int {
	flags := 0
	if l.Embed {
		flags |= 1
	}
	if l.Escapes {
		flags |= 2
	}
	return flags
}

// lookupValues returns the distinct key values a link looks up.
func lookupValues(l markdown.Link) []string {
	var out []string
	for _, k := range markdown.LookupKeys(l) {
		if !slices.Contains(out, k.Value) {
			out = append(out, k.Value)
		}
	}
	return out
}

// citeValues returns the key values a page's sources are looked up by:
// each source as a path, with ".md" added, and as an id. Sources written as
// wikilinks are links, checked as such.
func citeValues(p *markdown.Page) []string {
	var out []string
	for _, s := range p.Sources {
		for _, v := range sourceKeys(s) {
			if !slices.Contains(out, v.Value) {
				out = append(out, v.Value)
			}
		}
	}
	return out
}

// sourceKeys returns the keys a source entry may be found by; none for a
// wikilink.
func sourceKeys(s string) []markdown.Key {
	s = strings.TrimPrefix(strings.TrimSpace(s), "/")
	if s == "" || strings.Contains(s, "[[") {
		return nil
	}
	v := cairn.FoldPath(s)
	keys := []markdown.Key{{Step: markdown.StepFile, Value: v}, {Step: markdown.StepPath, Value: v}}
	if !strings.HasSuffix(v, ".md") {
		keys = append(keys, markdown.Key{Step: markdown.StepFile, Value: v + ".md"})
	}
	return keys
}

// deleteFileData removes what writeFile added for a file, except the
// files row itself. It returns the file's old key values and its resolved
// outgoing edges, which the caller needs to find what the removal affects.
func deleteFileData(ctx context.Context, q dbtx, id int64, kind lint.Kind) (values []string, edges []edge, err error) {
	rows, err := q.QueryContext(ctx, `SELECT value FROM keys WHERE file = ?`, id)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, nil, err
		}
		values = append(values, v)
	}
	if err := rows.Close(); err != nil {
		return nil, nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT dst FROM links WHERE src = ? AND dst IS NOT NULL AND dst != src`, id)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		e := edge{src: id}
		if err := rows.Scan(&e.dst); err != nil {
			rows.Close()
			return nil, nil, err
		}
		edges = append(edges, e)
	}
	if err := rows.Close(); err != nil {
		return nil, nil, err
	}
	for _, stmt := range []string{
		`DELETE FROM keys WHERE file = ?`,
		`DELETE FROM link_keys WHERE link IN (SELECT id FROM links WHERE src = ?)`,
		`DELETE FROM links WHERE src = ?`,
		`DELETE FROM cites WHERE file = ?`,
		`DELETE FROM findings WHERE file = ?`,
	} {
		if _, err := q.ExecContext(ctx, stmt, id); err != nil {
			return nil, nil, err
		}
	}
	if kind == lint.KindPage {
		if _, err := q.ExecContext(ctx, `DELETE FROM fts WHERE rowid = ?`, id); err != nil {
			return nil, nil, err
		}
	}
	return values, edges, nil
}

// edge is a resolved link between two different files.
type edge struct{ src, dst int64 }

// pageRow reads back the parts of a page that lint needs.
func pageRow(ctx context.Context, q dbtx, id int64) (*markdown.Page, lint.Kind, string, error) {
	var path string
	var kind int
	var pageID, title, titleSource, typ, fm, aliases, sources, headings, blocks, problems sql.NullString
	err := q.QueryRowContext(ctx, `SELECT path, kind, page_id, title, title_source, type, frontmatter, aliases, sources,
		headings, block_ids, problems FROM files WHERE id = ?`, id).
		Scan(&path, &kind, &pageID, &title, &titleSource, &typ, &fm, &aliases, &sources, &headings, &blocks, &problems)
	if err != nil {
		return nil, 0, "", err
	}
	if lint.Kind(kind) != lint.KindPage {
		return nil, lint.Kind(kind), path, nil
	}
	p := &markdown.Page{Path: path, ID: pageID.String, Title: title.String, TitleSource: markdown.TitleSource(titleSource.String), Type: typ.String}
	for _, x := range []struct {
		s   sql.NullString
		dst any
	}{{fm, &p.Frontmatter}, {aliases, &p.Aliases}, {sources, &p.Sources}, {headings, &p.Headings}, {blocks, &p.BlockIDs}, {problems, &p.Problems}} {
		if x.s.Valid {
			if err := json.Unmarshal([]byte(x.s.String), x.dst); err != nil {
				return nil, 0, "", fmt.Errorf("index row of %s: %w", path, err)
			}
		}
	}
	return p, lint.KindPage, path, nil
}
