package index

import (
	"cmp"
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"strings"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
)

// errBuild is what an overlay answers a full build with: a change that
// large is judged inside the write transaction instead ([ErrBulk]).
var errBuild = errors.New("index overlay: a full build does not run on an overlay")

// overlay is a StorageTx that keeps its writes in memory, over a reader of
// one state of the index (a snapshot of the committed rows): it answers
// every read as the storage would after the same writes, and writes
// nothing. The index's incremental update runs on it unchanged, which is
// how a change's findings are judged without the write lock ([Index.Preview]).
//
// It holds the rows the update touched, whole: every file row it read or
// wrote, every link it wrote, and the changes to the key, citation and
// lookup tables as sets of rows added and removed. Reads merge those with
// the base's rows, a search the base's hits with the words of the pages
// it wrote, a query by fields the base's answer with the field rows it
// wrote, the counts the base's adjusted by the rows it changed. A query
// of a field's containment is answered through locked when it is set; it
// and the snapshots (Snapshot, SaveSnapshot, SnapshotDrift) are not
// answered otherwise (EINTERNAL). Every write is also journaled, so that a transaction whose
// rows are still the base's can be brought to the same state by making
// the same writes, without reading or parsing again.
type overlay struct {
	base StorageReader

	state   *State
	nextID  int64
	files   map[int64]*FileRow // rows read or written; absent: the base's
	changed map[int64]bool     // files whose rows were inserted or changed
	deleted map[int64]bool     // files deleted
	depths0 bool               // ClearDepths ran: base depths read as -1

	keys      rowSet[string, KeyRow]
	keyValues map[string]bool // values of the key rows written
	cites     rowSet[string, CiteRow]
	linkKeys  rowSet[int64, LinkKeyRow]

	links map[LinkKey]*LinkRow // links written; nil: deleted
	srcs  map[int64]bool       // files with a link in links
	// baseLinks caches the base's links of files in srcs: the base does
	// not change, and a hub page's links are read once.
	baseLinks map[int64][]LinkRow

	findings map[int64][]lint.Finding // files whose findings were written

	// The full text's changes: the pages written (their title's and
	// text's words), and the base's pages whose text was deleted (their
	// words as they were written).
	texts    map[int64]pageText
	textGone map[int64]pageText

	// fields are the field rows of the files whose rows the overlay
	// deleted or wrote: all of them, which the base's are not.
	fields map[int64][]FieldRow

	// journal is every write, in order, to be made again on a transaction
	// whose rows are the base's ([Index.ApplyPreview]).
	journal []func(context.Context, StorageTx) error

	// locked, when set, makes a read the overlay does not answer itself
	// on the index of the same tree in a write transaction ([Index.View]).
	locked func(ctx context.Context, read func(StorageReader) error) error
}

// record adds a write to the journal.
func (o *overlay) record(w func(context.Context, StorageTx) error) { o.journal = append(o.journal, w) }

// rowSet is how an overlay changed a table of rows that are their own key:
// rows added (not in the base, or put back) and rows removed from it. The
// rows added are kept by the value they are looked up by (by), so that a
// lookup costs what it finds, not every row the overlay added.
type rowSet[K, T comparable] struct {
	by      func(T) K
	added   map[K]map[T]bool
	removed map[T]bool
}

func newRowSet[K, T comparable](by func(T) K) rowSet[K, T] {
	return rowSet[K, T]{by: by, added: map[K]map[T]bool{}, removed: map[T]bool{}}
}

func (s *rowSet[K, T]) add(r T) {
	delete(s.removed, r)
	k := s.by(r)
	if s.added[k] == nil {
		s.added[k] = map[T]bool{}
	}
	s.added[k][r] = true
}

func (s *rowSet[K, T]) remove(r T) {
	delete(s.added[s.by(r)], r)
	s.removed[r] = true
}

// merge returns the base's rows of k without those removed, then the rows
// of k added that match and are not among the base's.
func (s *rowSet[K, T]) merge(base []T, k K, match func(T) bool) []T {
	out := make([]T, 0, len(base))
	seen := make(map[T]bool, len(base))
	for _, r := range base {
		if !s.removed[r] {
			out = append(out, r)
			seen[r] = true
		}
	}
	for r := range s.added[k] {
		if match(r) && !seen[r] {
			out = append(out, r)
		}
	}
	return out
}

func newOverlay(base StorageReader, next int64) *overlay {
	return &overlay{
		base: base, nextID: next,
		files: map[int64]*FileRow{}, changed: map[int64]bool{}, deleted: map[int64]bool{}, keyValues: map[string]bool{},
		links: map[LinkKey]*LinkRow{}, srcs: map[int64]bool{}, baseLinks: map[int64][]LinkRow{},
		findings: map[int64][]lint.Finding{},
		texts:    map[int64]pageText{}, textGone: map[int64]pageText{},
		fields:   map[int64][]FieldRow{},
		keys:     newRowSet(func(r KeyRow) string { return r.Value }),
		cites:    newRowSet(func(r CiteRow) string { return r.Value }),
		linkKeys: newRowSet(func(r LinkKeyRow) int64 { return r.Hash }),
	}
}

var _ StorageTx = (*overlay)(nil)

func notInOverlay(what string) error {
	return cairn.Errorf(cairn.EINTERNAL, "index overlay: %s is not answered on an overlay", what)
}

// row returns the current row of file id, read from the base once and kept;
// ENOTFOUND when there is none.
func (o *overlay) row(ctx context.Context, id int64) (*FileRow, error) {
	if o.deleted[id] {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "index: no file %d", id)
	}
	if r, ok := o.files[id]; ok {
		return r, nil
	}
	r, err := o.base.File(ctx, id)
	if err != nil {
		return nil, err
	}
	if o.depths0 {
		r.Depth = -1
	}
	o.files[id] = &r
	return &r, nil
}

// ref returns the FileRef of file id; ok is false when there is none.
func (o *overlay) ref(ctx context.Context, id int64) (FileRef, bool, error) {
	r, err := o.row(ctx, id)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return FileRef{}, false, nil
	}
	if err != nil {
		return FileRef{}, false, err
	}
	return FileRef{ID: r.ID, Path: r.Path, Kind: r.Kind, Blob: r.Blob}, true, nil
}

// State returns the state written, else the base's.
func (o *overlay) State(ctx context.Context) (State, error) {
	if o.state != nil {
		return *o.state, nil
	}
	return o.base.State(ctx)
}

// FileAt finds the file through its path key, as a storage does.
func (o *overlay) FileAt(ctx context.Context, path string) (FileRef, error) {
	refs, err := o.KeyHolders(ctx, cairn.FoldPath(path), markdown.StepFile)
	if err != nil {
		return FileRef{Path: path}, err
	}
	for _, f := range refs {
		if f.Path == path {
			return f, nil
		}
	}
	return FileRef{Path: path}, cairn.Errorf(cairn.ENOTFOUND, "index: no file %s", path)
}

// KeyHolders merges the key rows step by step: the base's answer does not
// say at which step a file holds the key.
func (o *overlay) KeyHolders(ctx context.Context, value string, steps ...markdown.Step) ([]FileRef, error) {
	if !o.keyValues[value] {
		// No row of value was written: the base's answer stands, but for
		// files written or deleted since.
		base, err := o.base.KeyHolders(ctx, value, steps...)
		if err != nil {
			return nil, err
		}
		out := base[:0]
		for _, f := range base {
			if o.deleted[f.ID] {
				continue
			}
			if r, held := o.files[f.ID]; held {
				f = FileRef{ID: r.ID, Path: r.Path, Kind: r.Kind, Blob: r.Blob}
			}
			out = append(out, f)
		}
		return out, nil
	}
	var out []FileRef
	for _, step := range steps {
		base, err := o.base.KeyHolders(ctx, value, step)
		if err != nil {
			return nil, err
		}
		refs := make(map[int64]FileRef, len(base))
		rows := make([]KeyRow, len(base))
		for i, f := range base {
			rows[i] = KeyRow{Value: value, Step: step, File: f.ID}
			refs[f.ID] = f
		}
		for _, k := range o.keys.merge(rows, value, func(k KeyRow) bool { return k.Step == step }) {
			f, known := refs[k.File]
			if _, held := o.files[k.File]; held || o.deleted[k.File] || !known {
				var ok bool
				if f, ok, err = o.ref(ctx, k.File); err != nil {
					return nil, err
				}
				if !ok {
					continue // the storage joins the file's row
				}
			}
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b FileRef) int { return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// File returns the current row of file id.
func (o *overlay) File(ctx context.Context, id int64) (FileRow, error) {
	r, err := o.row(ctx, id)
	if err != nil {
		return FileRow{ID: id, Depth: -1}, err
	}
	return *r, nil
}

// Path returns the path of file id.
func (o *overlay) Path(ctx context.Context, id int64) (string, error) {
	r, err := o.row(ctx, id)
	if err != nil {
		return "", err
	}
	return r.Path, nil
}

// Depth returns the depth of file id, -1 when unreachable or missing. A
// row the overlay does not hold is not loaded whole for it.
func (o *overlay) Depth(ctx context.Context, id int64) (int, error) {
	switch r, held := o.files[id]; {
	case o.deleted[id]:
		return -1, nil
	case held:
		return r.Depth, nil
	case o.depths0:
		return -1, nil
	}
	return o.base.Depth(ctx, id)
}

// FilesOfKind lists the base's files of kinds that are still there, and
// the new ones, by id (a file's kind follows from its path, which a file
// keeps).
func (o *overlay) FilesOfKind(ctx context.Context, kinds ...lint.Kind) ([]int64, error) {
	base, err := o.base.FilesOfKind(ctx, kinds...)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, id := range base {
		if !o.deleted[id] {
			out = append(out, id)
		}
	}
	for id, r := range o.files {
		if _, found := slices.BinarySearch(base, id); !found && slices.Contains(kinds, r.Kind) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// FilesOfType lists the base's pages of types that are still there and
// still of one of them, and the overlay's pages of types.
func (o *overlay) FilesOfType(ctx context.Context, types ...string) ([]int64, error) {
	base, err := o.base.FilesOfType(ctx, types...)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, id := range base {
		if r, ok := o.files[id]; !o.deleted[id] && (!ok || slices.Contains(types, r.Type)) {
			out = append(out, id)
		}
	}
	for id, r := range o.files {
		if _, found := slices.BinarySearch(base, id); !found && r.Type != "" && slices.Contains(types, r.Type) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// FilesCiting merges the citation rows of value.
func (o *overlay) FilesCiting(ctx context.Context, value string) ([]int64, error) {
	base, err := o.base.FilesCiting(ctx, value)
	if err != nil {
		return nil, err
	}
	rows := make([]CiteRow, len(base))
	for i, id := range base {
		rows[i] = CiteRow{Value: value, File: id}
	}
	var out []int64
	for _, r := range o.cites.merge(rows, value, func(CiteRow) bool { return true }) {
		out = append(out, r.File)
	}
	return out, nil
}

// Blobs returns the content of every file by path.
func (o *overlay) Blobs(ctx context.Context) (map[string]cairn.Hash, error) {
	out, err := o.base.Blobs(ctx)
	if err != nil {
		return nil, err
	}
	for id := range o.deleted {
		r, err := o.base.File(ctx, id)
		if err == nil {
			delete(out, r.Path)
		} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, err
		}
	}
	for _, r := range o.files {
		out[r.Path] = r.Blob
	}
	return out, nil
}

// link returns the current row of link ord of src, without paths.
func (o *overlay) link(ctx context.Context, src int64, ord int) (LinkRow, error) {
	if l, ok := o.links[LinkKey{src, ord}]; ok {
		if l == nil {
			return LinkRow{}, cairn.Errorf(cairn.ENOTFOUND, "index: no link %d of file %d", ord, src)
		}
		return *l, nil
	}
	return o.base.Link(ctx, src, ord)
}

// Link returns link ord of file src.
func (o *overlay) Link(ctx context.Context, src int64, ord int) (LinkRow, error) {
	return o.link(ctx, src, ord)
}

// dstPath is the path of a link's destination as a storage joins it: ""
// when there is none.
func (o *overlay) dstPath(ctx context.Context, dst int64) (string, error) {
	if dst == 0 {
		return "", nil
	}
	f, ok, err := o.ref(ctx, dst)
	if !ok {
		return "", err
	}
	return f.Path, nil
}

// baseLinksFrom returns the base's links of src, read once for a file
// whose links were written; the caller must not change them.
func (o *overlay) baseLinksFrom(ctx context.Context, src int64) ([]LinkRow, error) {
	if !o.srcs[src] {
		return o.base.LinksFrom(ctx, src)
	}
	if ls, ok := o.baseLinks[src]; ok {
		return ls, nil
	}
	ls, err := o.base.LinksFrom(ctx, src)
	if err != nil {
		return nil, err
	}
	o.baseLinks[src] = ls
	return ls, nil
}

// LinksFrom merges the links of src, in order.
func (o *overlay) LinksFrom(ctx context.Context, src int64) ([]LinkRow, error) {
	base, err := o.baseLinksFrom(ctx, src)
	if err != nil {
		return nil, err
	}
	if !o.srcs[src] {
		for i, l := range base {
			if o.deleted[l.Dst] {
				base[i].DstPath = "" // the base's path of a file gone
			}
		}
		return base, nil
	}
	out := make([]LinkRow, 0, len(base))
	for _, l := range base {
		if _, written := o.links[LinkKey{src, l.Ord}]; !written {
			if o.deleted[l.Dst] {
				l.DstPath = ""
			}
			out = append(out, l)
		}
	}
	for k, l := range o.links {
		if k.Src != src || l == nil {
			continue
		}
		r := *l
		if r.DstPath, err = o.dstPath(ctx, r.Dst); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b LinkRow) int { return cmp.Compare(a.Ord, b.Ord) })
	return out, nil
}

// LinksTo merges the links from other files to dst, by source path and
// ord, and returns limit of them from the off-th on (limit 0: all). The
// base's are read whole: a view's changes may remove or add any of them.
func (o *overlay) LinksTo(ctx context.Context, dst int64, off, limit int) ([]LinkRow, error) {
	all, err := o.linksTo(ctx, dst)
	return Window(all, off, limit), err
}

// CountLinksTo counts the merged links from other files to dst.
func (o *overlay) CountLinksTo(ctx context.Context, dst int64) (int, error) {
	all, err := o.linksTo(ctx, dst)
	return len(all), err
}

// Window returns limit of xs from the off-th on (limit 0: all from
// there): the part of a list an offset and a limit select.
func Window[T any](xs []T, off, limit int) []T {
	xs = xs[min(max(off, 0), len(xs)):]
	if limit > 0 && limit < len(xs) {
		xs = xs[:limit]
	}
	return xs
}

// linksTo merges every link from other files to dst, by source path and
// ord.
func (o *overlay) linksTo(ctx context.Context, dst int64) ([]LinkRow, error) {
	base, err := o.base.LinksTo(ctx, dst, 0, 0)
	if err != nil {
		return nil, err
	}
	dstPath, err := o.dstPath(ctx, dst)
	if err != nil {
		return nil, err
	}
	var out []LinkRow
	for _, l := range base {
		if _, written := o.links[LinkKey{l.Src, l.Ord}]; !written && !o.deleted[l.Src] {
			l.DstPath = dstPath // a file keeps its path while it exists
			out = append(out, l)
		}
	}
	for _, l := range o.links {
		if l == nil || l.Dst != dst || l.Src == dst {
			continue
		}
		src, ok, err := o.ref(ctx, l.Src) // the storage joins the source's row
		if err != nil {
			return nil, err
		}
		if ok {
			r := *l
			r.SrcPath, r.DstPath = src.Path, dstPath
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b LinkRow) int {
		return cmp.Or(strings.Compare(a.SrcPath, b.SrcPath), cmp.Compare(a.Ord, b.Ord))
	})
	return out, nil
}

// AnchoredLinksTo merges the anchored links into dst.
func (o *overlay) AnchoredLinksTo(ctx context.Context, dst int64) ([]LinkKey, error) {
	base, err := o.base.AnchoredLinksTo(ctx, dst)
	if err != nil {
		return nil, err
	}
	var out []LinkKey
	for _, k := range base {
		if _, written := o.links[k]; !written {
			out = append(out, k)
		}
	}
	for k, l := range o.links {
		if l != nil && l.Dst == dst && l.Flags&LinkAnchored != 0 {
			out = append(out, k)
		}
	}
	return out, nil
}

// LinksLookingUp merges the lookup rows of hash.
func (o *overlay) LinksLookingUp(ctx context.Context, hash int64) ([]LinkKey, error) {
	base, err := o.base.LinksLookingUp(ctx, hash)
	if err != nil {
		return nil, err
	}
	rows := make([]LinkKeyRow, len(base))
	for i, k := range base {
		rows[i] = LinkKeyRow{Hash: hash, Src: k.Src, Ord: k.Ord}
	}
	var out []LinkKey
	for _, r := range o.linkKeys.merge(rows, hash, func(LinkKeyRow) bool { return true }) {
		out = append(out, LinkKey{r.Src, r.Ord})
	}
	return out, nil
}

// Children returns the files id's resolved links lead to.
func (o *overlay) Children(ctx context.Context, id int64) ([]int64, error) {
	if !o.srcs[id] {
		return o.base.Children(ctx, id)
	}
	links, err := o.LinksFrom(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, l := range links {
		if l.Dst != 0 && l.Dst != id && !slices.Contains(out, l.Dst) {
			out = append(out, l.Dst)
		}
	}
	return out, nil
}

// Parents returns the files with resolved links to id.
func (o *overlay) Parents(ctx context.Context, id int64) ([]int64, error) {
	base, err := o.base.Parents(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []int64
	rewritten := false
	for _, src := range base {
		if o.srcs[src] {
			rewritten = true
		} else {
			out = append(out, src)
		}
	}
	if rewritten {
		// Some of the base's parents have links written: they still lead
		// here if one of their base links that does is not rewritten (a
		// written one that does is found below).
		for _, src := range base {
			if !o.srcs[src] {
				continue
			}
			links, err := o.baseLinksFrom(ctx, src)
			if err != nil {
				return nil, err
			}
			for _, l := range links {
				if _, written := o.links[LinkKey{src, l.Ord}]; !written && l.Dst == id {
					out = append(out, src)
					break
				}
			}
		}
	}
	for _, l := range o.links {
		if l != nil && l.Dst == id && l.Src != id && !slices.Contains(out, l.Src) {
			out = append(out, l.Src)
		}
	}
	return out, nil
}

// Edges returns the whole link graph, the written links' sources read again.
func (o *overlay) Edges(ctx context.Context) (map[int64][]int64, error) {
	out, err := o.base.Edges(ctx)
	if err != nil {
		return nil, err
	}
	for src := range o.srcs {
		children, err := o.Children(ctx, src)
		if err != nil {
			return nil, err
		}
		if len(children) == 0 {
			delete(out, src)
		} else {
			out[src] = children
		}
	}
	return out, nil
}

// FindingsPart merges every finding q selects once, then sorts, counts
// and cuts the part: a view's changes can land anywhere in the order.
func (o *overlay) FindingsPart(ctx context.Context, q FindingQuery, off, limit int) ([]lint.Finding, []FindingCount, error) {
	fs, err := o.Findings(ctx, q.File, q.Rule)
	if err != nil {
		return nil, nil, err
	}
	if len(q.Severities) > 0 {
		fs = slices.DeleteFunc(fs, func(f lint.Finding) bool { return !slices.Contains(q.Severities, f.Severity) })
	}
	slices.SortFunc(fs, FindingOrder)
	return append([]lint.Finding{}, Window(fs, off, limit)...), CountFindings(fs), nil
}

// CountFindings counts fs by rule and severity, by rule then severity.
func CountFindings(fs []lint.Finding) []FindingCount {
	n := map[FindingCount]int{}
	for _, f := range fs {
		n[FindingCount{Rule: f.Rule, Severity: f.Severity}]++
	}
	out := make([]FindingCount, 0, len(n))
	for c, k := range n {
		c.N = k
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b FindingCount) int {
		return cmp.Or(strings.Compare(a.Rule, b.Rule), strings.Compare(string(a.Severity), string(b.Severity)))
	})
	return out
}

// Findings merges the findings of file (0: every file) and rule ("": every
// rule).
func (o *overlay) Findings(ctx context.Context, file int64, rule string) ([]lint.Finding, error) {
	if file != 0 {
		fs, written := o.findings[file]
		switch {
		case o.deleted[file]:
			return nil, nil // the storage joins the file's row
		case !written:
			return o.base.Findings(ctx, file, rule)
		}
		return o.written(ctx, file, fs, rule)
	}
	base, err := o.base.Findings(ctx, 0, rule)
	if err != nil {
		return nil, err
	}
	// The base's findings carry paths: leave out those of files whose
	// findings were written or that are gone.
	gone := map[string]bool{}
	for id := range o.findings {
		r, err := o.base.File(ctx, id)
		if err == nil {
			gone[r.Path] = true
		} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, err
		}
	}
	for id := range o.deleted {
		r, err := o.base.File(ctx, id)
		if err == nil {
			gone[r.Path] = true
		} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, err
		}
	}
	var out []lint.Finding
	for _, f := range base {
		if !gone[f.Page] {
			out = append(out, f)
		}
	}
	for id, fs := range o.findings {
		if o.deleted[id] {
			continue
		}
		w, err := o.written(ctx, id, fs, rule)
		if err != nil {
			return nil, err
		}
		out = append(out, w...)
	}
	return out, nil
}

// written returns the written findings fs of file id that have rule, each
// with the file's path.
func (o *overlay) written(ctx context.Context, id int64, fs []lint.Finding, rule string) ([]lint.Finding, error) {
	path, err := o.Path(ctx, id)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []lint.Finding
	for _, f := range fs {
		if rule == "" || f.Rule == rule {
			f.Page = path
			out = append(out, f)
		}
	}
	return out, nil
}

// viaLock makes read on the index of the overlay's tree in a write
// transaction, when the overlay has a way to ([Index.View]); what is
// not answered on an overlay otherwise.
func viaLock[T any](ctx context.Context, o *overlay, what string, read func(StorageReader) (T, error)) (T, error) {
	var out T
	if o.locked == nil {
		return out, notInOverlay(what)
	}
	err := o.locked(ctx, func(q StorageReader) (err error) {
		out, err = read(q)
		return err
	})
	return out, err
}

// overlayLookups is the most rows of the base a read of an overlay looks
// up one at a time (Stats, Titles, PagesWhere, Search: the base's rows of
// what the overlay changed). A change of more files, links or texts is
// read through locked, in a write transaction of its own, when the overlay
// has it; the findings of more files (a new index.md, a lint setting:
// every file linted again) are read all at once.
const overlayLookups = 500

// Stats adjusts the base's counts by the rows of the files, links and
// findings the overlay changed: the base's rows of each taken away, its
// own added.
func (o *overlay) Stats(ctx context.Context) (Stats, error) {
	if o.locked != nil && len(o.changed)+len(o.deleted)+len(o.srcs) > overlayLookups {
		return viaLock(ctx, o, "Stats", func(q StorageReader) (Stats, error) { return q.Stats(ctx) })
	}
	st, err := o.base.Stats(ctx)
	if err != nil {
		return Stats{}, err
	}
	count := func(r *FileRow, sign int) {
		st.Files += sign
		if r.Kind == lint.KindPage {
			st.Pages += sign
		}
	}
	for id := range o.changedFiles() {
		r, err := o.base.File(ctx, id)
		switch {
		case err == nil:
			count(&r, -1)
		case cairn.ErrorCode(err) != cairn.ENOTFOUND:
			return Stats{}, err
		}
		if r := o.files[id]; r != nil && !o.deleted[id] {
			count(r, 1)
		}
	}
	links := func(rows []LinkRow, sign int) {
		for _, l := range rows {
			st.Links += sign
			if l.Status != statusCodes[markdown.StatusResolved] {
				st.Broken += sign
			}
		}
	}
	for src := range o.srcs {
		base, err := o.baseLinksFrom(ctx, src)
		if err != nil {
			return Stats{}, err
		}
		links(base, -1)
		mine, err := o.LinksFrom(ctx, src)
		if err != nil {
			return Stats{}, err
		}
		links(mine, 1)
	}
	if len(o.findings) <= overlayLookups {
		for id, fs := range o.findings {
			base, err := o.base.Findings(ctx, id, "")
			if err != nil {
				return Stats{}, err
			}
			st.Findings += len(fs) - len(base)
		}
		return st, nil
	}
	// Findings of many files (a change that lints every file again): the
	// base's, all of them in one read, counted by path. A file keeps its
	// path (a renamed file is another), and the files whose findings were
	// written are held, having been linted.
	all, err := o.base.Findings(ctx, 0, "")
	if err != nil {
		return Stats{}, err
	}
	byPath := make(map[string]int, len(all))
	for _, f := range all {
		byPath[f.Page]++
	}
	for id, fs := range o.findings {
		var p string
		if r := o.files[id]; r != nil {
			p = r.Path
		} else if p, err = o.base.Path(ctx, id); cairn.ErrorCode(err) == cairn.ENOTFOUND {
			p = "" // not in the base: none of its findings are
		} else if err != nil {
			return Stats{}, err
		}
		st.Findings += len(fs)
		if p != "" {
			st.Findings -= byPath[p]
		}
	}
	return st, nil
}

// changedFiles returns the ids of the files whose rows the overlay
// inserted, changed or deleted (not those it only read).
func (o *overlay) changedFiles() map[int64]bool {
	out := make(map[int64]bool, len(o.changed)+len(o.deleted))
	for _, ids := range []iter.Seq[int64]{maps.Keys(o.changed), maps.Keys(o.deleted)} {
		for id := range ids {
			out[id] = true
		}
	}
	return out
}

// Titles merges the base's title rows with the overlay's: the rows of the
// files it changed or deleted are its own, the others the base's.
func (o *overlay) Titles(ctx context.Context) ([]TitleRow, error) {
	changed := o.changedFiles()
	if o.locked != nil && len(changed) > overlayLookups {
		return viaLock(ctx, o, "Titles", func(q StorageReader) ([]TitleRow, error) { return q.Titles(ctx) })
	}
	base, err := o.base.Titles(ctx)
	if err != nil {
		return nil, err
	}
	mine, err := o.basePaths(ctx, maps.Keys(changed))
	if err != nil {
		return nil, err
	}
	out := make([]TitleRow, 0, len(base)+len(o.changed))
	for _, r := range base {
		if !mine[r.Path] {
			out = append(out, r)
		}
	}
	for id := range o.changed {
		if r := o.files[id]; r != nil && r.Kind == lint.KindPage {
			out = append(out, titleRow(r))
		}
	}
	slices.SortFunc(out, func(a, b TitleRow) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// basePaths returns the paths in the base of the files ids that are there.
func (o *overlay) basePaths(ctx context.Context, ids iter.Seq[int64]) (map[string]bool, error) {
	out := map[string]bool{}
	for id := range ids {
		p, err := o.base.Path(ctx, id)
		if cairn.ErrorCode(err) == cairn.ENOTFOUND {
			continue // not in the base
		}
		if err != nil {
			return nil, err
		}
		out[p] = true
	}
	return out, nil
}

// Search merges the base's hits, but for the pages whose text the
// overlay changed, with the overlay's pages that match, in the order the
// Storage doc defines, and scores them all by the totals the overlay's
// changes give (TextStats).
func (o *overlay) Search(ctx context.Context, q FullTextQuery) ([]SearchHit, error) {
	if len(q.Terms) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "index: a search needs a word to look for")
	}
	if o.locked != nil && len(o.textGone) > overlayLookups {
		return viaLock(ctx, o, "Search", func(r StorageReader) ([]SearchHit, error) { return r.Search(ctx, q) })
	}
	stats, err := o.TextStats(ctx, q.Terms)
	if err != nil {
		return nil, err
	}
	gone, err := o.basePaths(ctx, maps.Keys(o.textGone))
	if err != nil {
		return nil, err
	}
	limit := max(q.Limit, 1)
	bq := q
	bq.Limit = limit + len(gone) // those the overlay answers for are left out
	base, err := o.base.Search(ctx, bq)
	if err != nil {
		return nil, err
	}
	hits := make([]SearchHit, 0, len(base)+len(o.texts))
	for _, h := range base {
		if !gone[h.Path] {
			hits = append(hits, h)
		}
	}
	for id, t := range o.texts {
		r := o.files[id]
		if r == nil || q.Type != "" && r.Type != q.Type || !underFolder(r.Path, q.Folder) || !holdsAll(t.text, q.Terms) {
			continue
		}
		hits = append(hits, SearchHit{Path: r.Path, ID: r.pageID(), Title: r.Title, Type: r.Type, Blob: r.Blob,
			InTitle: holdsAll(t.title, q.Terms), Words: r.Words})
	}
	slices.SortFunc(hits, func(a, b SearchHit) int {
		if a.InTitle != b.InTitle {
			if a.InTitle {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Words, b.Words), strings.Compare(a.Path, b.Path))
	})
	hits = hits[:min(limit, len(hits))]
	for i := range hits {
		hits[i].Score = stats.Score(hits[i].Words)
	}
	return hits, nil
}

// TextStats adjusts the base's totals and page counts by the pages whose
// text the overlay deleted and wrote.
func (o *overlay) TextStats(ctx context.Context, terms []FullTextTerm) (TextStats, error) {
	st, err := o.base.TextStats(ctx, terms)
	if err != nil {
		return TextStats{}, err
	}
	st.Holding = slices.Clone(st.Holding)
	adjust := func(texts map[int64]pageText, sign int64) {
		for _, t := range texts {
			st.Pages += sign
			st.Words += sign * int64(t.words)
			for i, term := range terms {
				st.Holding[i] += sign * int64(t.count(term))
			}
		}
	}
	adjust(o.textGone, -1)
	adjust(o.texts, 1)
	return st, nil
}

// underFolder reports whether path is under folder (a path ending in "/",
// compared ignoring ASCII case; "" is every folder), as a search's filter
// keeps it.
func underFolder(path, folder string) bool {
	if len(path) < len(folder) {
		return false
	}
	for i := range len(folder) {
		if lowerASCII(path[i]) != lowerASCII(folder[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// pageText is a page's full text as the index wrote it: the title's
// words, and the words of the title and body, each separated by spaces.
type pageText struct {
	title, text string
	words       int // of text
}

func newPageText(title, text string) pageText {
	return pageText{title: title, text: text, words: len(strings.Fields(text))}
}

// holdsAll reports whether the words of s hold every term.
func holdsAll(s string, terms []FullTextTerm) bool {
	ws := strings.Fields(s)
	for _, t := range terms {
		if !slices.ContainsFunc(ws, t.matches) {
			return false
		}
	}
	return true
}

// matches reports whether the full text's word w matches term t.
func (t FullTextTerm) matches(w string) bool {
	return w == t.Word || t.Prefix && strings.HasPrefix(w, t.Word)
}

// count is what the page adds to the pages holding term: 1 when it holds
// the word, for a prefix the number of distinct words it starts.
func (t pageText) count(term FullTextTerm) int {
	seen := map[string]bool{}
	for w := range strings.FieldsSeq(t.text) {
		if term.matches(w) {
			seen[w] = true
		}
	}
	return len(seen)
}

// Snapshot is not answered on an overlay.
func (o *overlay) Snapshot(context.Context) (map[string][]string, error) {
	return nil, notInOverlay("Snapshot")
}

// SaveSnapshot is not answered on an overlay.
func (o *overlay) SaveSnapshot(context.Context) (bool, error) {
	return false, notInOverlay("SaveSnapshot")
}

// SnapshotDrift is not answered on an overlay.
func (o *overlay) SnapshotDrift(context.Context, int) ([]TableDrift, error) {
	return nil, notInOverlay("SnapshotDrift")
}

// SetState keeps the state in memory.
func (o *overlay) SetState(_ context.Context, st State) error {
	o.state = &st
	o.record(func(ctx context.Context, q StorageTx) error { return q.SetState(ctx, st) })
	return nil
}

// NextFileID hands out the ids the base's storage would: the base's next,
// then above the ids inserted.
func (o *overlay) NextFileID(context.Context) (int64, error) { return o.nextID, nil }

// Clear refuses: a full build is judged in the write transaction.
func (o *overlay) Clear(context.Context) error { return errBuild }

// FinishBuild refuses, as Clear does.
func (o *overlay) FinishBuild(context.Context) error { return errBuild }

// InsertFiles keeps the rows.
func (o *overlay) InsertFiles(_ context.Context, rows []FileRow) error {
	rows = slices.Clone(rows)
	o.record(func(ctx context.Context, q StorageTx) error { return q.InsertFiles(ctx, rows) })
	for _, r := range rows {
		o.files[r.ID], o.changed[r.ID] = &r, true
		delete(o.deleted, r.ID)
		o.nextID = max(o.nextID, r.ID+1)
	}
	return nil
}

// UpdateFile replaces the row, keeping its inbound count and depth.
func (o *overlay) UpdateFile(ctx context.Context, r FileRow) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.UpdateFile(ctx, r) })
	cur, err := o.row(ctx, r.ID)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil // an UPDATE of no row
	}
	if err != nil {
		return err
	}
	if _, ok := o.fields[r.ID]; !ok && cur.Type != r.Type {
		// The type changed and the fields did not: the page had none
		// before (a page with frontmatter has its field rows deleted
		// when it changes), and has none now (its type is not one).
		o.fields[r.ID] = []FieldRow{}
	}
	r.Inbound, r.Depth = cur.Inbound, cur.Depth
	*cur = r
	o.changed[r.ID] = true
	return nil
}

// DeleteFile removes the row.
func (o *overlay) DeleteFile(_ context.Context, id int64) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.DeleteFile(ctx, id) })
	o.deleted[id] = true
	delete(o.files, id)
	delete(o.changed, id)
	return nil
}

// AddInbound adds delta to the inbound count of file id.
func (o *overlay) AddInbound(ctx context.Context, id int64, delta int) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.AddInbound(ctx, id, delta) })
	r, err := o.row(ctx, id)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	r.Inbound += delta
	o.changed[id] = true
	return nil
}

// SetDepth sets the depth of file id.
func (o *overlay) SetDepth(ctx context.Context, id int64, depth int) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.SetDepth(ctx, id, depth) })
	r, err := o.row(ctx, id)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	r.Depth = depth
	return nil
}

// ClearDepths makes every file unreachable: the rows held now, and the
// base's as they are read.
func (o *overlay) ClearDepths(context.Context) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.ClearDepths(ctx) })
	o.depths0 = true
	for _, r := range o.files {
		r.Depth = -1
	}
	return nil
}

// InsertKeys adds key rows.
func (o *overlay) InsertKeys(_ context.Context, rows []KeyRow) error {
	rows = slices.Clone(rows)
	o.record(func(ctx context.Context, q StorageTx) error { return q.InsertKeys(ctx, rows) })
	for _, r := range rows {
		o.keys.add(r)
		o.keyValues[r.Value] = true
	}
	return nil
}

// DeleteKeys removes file's rows of keys.
func (o *overlay) DeleteKeys(_ context.Context, file int64, keys []markdown.Key) error {
	keys = slices.Clone(keys)
	o.record(func(ctx context.Context, q StorageTx) error { return q.DeleteKeys(ctx, file, keys) })
	for _, k := range keys {
		o.keys.remove(KeyRow{Value: k.Value, Step: k.Step, File: file})
		o.keyValues[k.Value] = true
	}
	return nil
}

// InsertFields adds field rows to a file's (whose fields the base held
// none of, or the overlay deleted).
func (o *overlay) InsertFields(_ context.Context, rows []FieldRow) error {
	rows = slices.Clone(rows)
	o.record(func(ctx context.Context, q StorageTx) error { return q.InsertFields(ctx, rows) })
	for _, r := range rows {
		o.fields[r.File] = append(o.fields[r.File], r)
	}
	return nil
}

// DeleteFields removes a file's field rows.
func (o *overlay) DeleteFields(_ context.Context, file int64) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.DeleteFields(ctx, file) })
	o.fields[file] = []FieldRow{}
	return nil
}

// PagesWhere takes the base's answer for the files whose fields and type
// the overlay did not change (with their rows as the overlay holds them)
// and checks the others' field rows itself (a page whose type changed
// counts as one whose fields did: UpdateFile). A condition of containment
// (which ignores case as the storage's SQL does), or a change of more
// files than overlayLookups, is answered through locked.
func (o *overlay) PagesWhere(ctx context.Context, typ string, where []FieldQuery) ([]TitleRow, error) {
	ids := o.changedFiles()
	for id := range o.fields {
		ids[id] = true
	}
	if slices.ContainsFunc(where, func(w FieldQuery) bool { return w.Op == OpContains }) || o.locked != nil && len(ids) > overlayLookups {
		return viaLock(ctx, o, "PagesWhere", func(q StorageReader) ([]TitleRow, error) { return q.PagesWhere(ctx, typ, where) })
	}
	base, err := o.base.PagesWhere(ctx, typ, where)
	if err != nil {
		return nil, err
	}
	// The base's rows of files whose fields the overlay changed, or
	// deleted, are left out; those it only holds are its rows; those it
	// holds, new or with fields changed, it checks.
	changed := make(map[string]bool, len(ids))
	held := make(map[string]*FileRow, len(ids))
	var check []*FileRow
	for id := range ids {
		p, err := o.base.Path(ctx, id)
		inBase := err == nil
		if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
			return nil, err
		}
		_, fieldsChanged := o.fields[id]
		r := o.files[id]
		switch {
		case inBase && (fieldsChanged || o.deleted[id]):
			changed[p] = true
		case inBase && r != nil:
			held[p] = r
		}
		if r != nil && !o.deleted[id] && (!inBase || fieldsChanged) {
			check = append(check, r)
		}
	}
	out := make([]TitleRow, 0, len(base))
	for _, t := range base {
		if changed[t.Path] {
			continue
		}
		if r := held[t.Path]; r != nil {
			t = titleRow(r)
		}
		out = append(out, t)
	}
	for _, r := range check {
		if r.Kind != lint.KindPage || typ != "" && r.Type != typ || !fieldsMeet(o.fields[r.ID], where) {
			continue
		}
		out = append(out, titleRow(r))
	}
	slices.SortFunc(out, func(a, b TitleRow) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func titleRow(r *FileRow) TitleRow {
	return TitleRow{Path: r.Path, Title: r.Title, Type: r.Type, Aliases: r.Aliases, Inbound: r.Inbound}
}

// fieldsMeet reports whether a page's field rows meet every condition, as
// a storage's PagesWhere selects them (FieldQuery; Groups): each group met
// by one row, and a != met by no row.
func fieldsMeet(rows []FieldRow, where []FieldQuery) bool {
	for _, group := range Groups(where) {
		met := slices.ContainsFunc(rows, func(r FieldRow) bool {
			if r.Name != group[0].Name {
				return false
			}
			for _, c := range group {
				if !fieldMeets(r, c) {
					return false
				}
			}
			return true
		})
		if !met {
			return false
		}
		if w := group[0]; w.Op == OpNe && slices.ContainsFunc(rows, func(r FieldRow) bool {
			return r.Name == w.Name && fieldMeets(r, FieldQuery{Name: w.Name, Op: OpEq, Value: w.Value})
		}) {
			return false
		}
	}
	return true
}

// fieldMeets reports whether one field row meets a condition on its field
// (!= and a field's presence are met by every row; see fieldsMeet).
func fieldMeets(r FieldRow, c FieldQuery) bool {
	n, num := c.Num()
	switch c.Op {
	case OpEq:
		return r.Value == c.Value || num && r.Num != nil && *r.Num == n
	case OpLt, OpLe, OpGt, OpGe:
		var d int
		if num {
			if r.Num == nil {
				return false
			}
			d = cmp.Compare(*r.Num, n)
		} else {
			d = strings.Compare(r.Value, c.Value)
		}
		switch c.Op {
		case OpLt:
			return d < 0
		case OpLe:
			return d <= 0
		case OpGt:
			return d > 0
		}
		return d >= 0
	}
	return true
}

// InsertCites adds citation rows.
func (o *overlay) InsertCites(_ context.Context, rows []CiteRow) error {
	rows = slices.Clone(rows)
	o.record(func(ctx context.Context, q StorageTx) error { return q.InsertCites(ctx, rows) })
	for _, r := range rows {
		o.cites.add(r)
	}
	return nil
}

// DeleteCites removes file's citations of values.
func (o *overlay) DeleteCites(_ context.Context, file int64, values []string) error {
	values = slices.Clone(values)
	o.record(func(ctx context.Context, q StorageTx) error { return q.DeleteCites(ctx, file, values) })
	for _, v := range values {
		o.cites.remove(CiteRow{Value: v, File: file})
	}
	return nil
}

// InsertLinks keeps the link rows.
func (o *overlay) InsertLinks(_ context.Context, rows []LinkRow) error {
	rows = slices.Clone(rows)
	for i := range rows {
		rows[i].Data = slices.Clone(rows[i].Data)
	}
	o.record(func(ctx context.Context, q StorageTx) error { return q.InsertLinks(ctx, rows) })
	for _, r := range rows {
		r.SrcPath, r.DstPath = "", ""
		o.links[LinkKey{r.Src, r.Ord}] = &r
		o.srcs[r.Src] = true
	}
	return nil
}

// InsertLinkKeys adds lookup rows.
func (o *overlay) InsertLinkKeys(_ context.Context, rows []LinkKeyRow) error {
	rows = slices.Clone(rows)
	o.record(func(ctx context.Context, q StorageTx) error { return q.InsertLinkKeys(ctx, rows) })
	for _, r := range rows {
		o.linkKeys.add(r)
	}
	return nil
}

// DeleteLink removes link ord of src and its lookup rows of hashes.
func (o *overlay) DeleteLink(_ context.Context, src int64, ord int, hashes []int64) error {
	hashes = slices.Clone(hashes)
	o.record(func(ctx context.Context, q StorageTx) error { return q.DeleteLink(ctx, src, ord, hashes) })
	o.links[LinkKey{src, ord}] = nil
	o.srcs[src] = true
	for _, h := range hashes {
		o.linkKeys.remove(LinkKeyRow{Hash: h, Src: src, Ord: ord})
	}
	return nil
}

// edit changes link ord of src as fn says.
func (o *overlay) edit(ctx context.Context, src int64, ord int, fn func(*LinkRow)) error {
	l, err := o.link(ctx, src, ord)
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil // an UPDATE of no row
	}
	if err != nil {
		return err
	}
	l.SrcPath, l.DstPath = "", ""
	fn(&l)
	o.links[LinkKey{src, ord}] = &l
	o.srcs[src] = true
	return nil
}

// SetResolution records how link ord of src resolves.
func (o *overlay) SetResolution(ctx context.Context, src int64, ord int, r LinkRow) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.SetResolution(ctx, src, ord, r) })
	return o.edit(ctx, src, ord, func(l *LinkRow) { l.Status, l.Dst, l.Step, l.Detail = r.Status, r.Dst, r.Step, r.Detail })
}

// SetLinkData replaces the packed form of link ord of src.
func (o *overlay) SetLinkData(ctx context.Context, src int64, ord int, data []byte) error {
	data = slices.Clone(data)
	o.record(func(ctx context.Context, q StorageTx) error { return q.SetLinkData(ctx, src, ord, data) })
	return o.edit(ctx, src, ord, func(l *LinkRow) { l.Data = data })
}

// InsertFindings adds findings, after the base's of their files.
func (o *overlay) InsertFindings(ctx context.Context, rows []FindingRow) error {
	rows = slices.Clone(rows)
	o.record(func(ctx context.Context, q StorageTx) error { return q.InsertFindings(ctx, rows) })
	for _, r := range rows {
		if _, written := o.findings[r.File]; !written {
			base, err := o.base.Findings(ctx, r.File, "")
			if err != nil {
				return err
			}
			o.findings[r.File] = base
		}
		o.findings[r.File] = append(o.findings[r.File], r.Finding)
	}
	return nil
}

// DeleteFindings removes the findings of file.
func (o *overlay) DeleteFindings(_ context.Context, file int64) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.DeleteFindings(ctx, file) })
	o.findings[file] = []lint.Finding{}
	return nil
}

// WriteText keeps the page's words.
func (o *overlay) WriteText(_ context.Context, id int64, title, text string) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.WriteText(ctx, id, title, text) })
	o.texts[id] = newPageText(title, text)
	return nil
}

// DeleteText drops the page's words written, or notes the base's as gone.
func (o *overlay) DeleteText(_ context.Context, id int64, text string) error {
	o.record(func(ctx context.Context, q StorageTx) error { return q.DeleteText(ctx, id, text) })
	if _, written := o.texts[id]; written {
		delete(o.texts, id)
		return nil
	}
	o.textGone[id] = newPageText("", text)
	return nil
}

// Close releases nothing; the caller closes the base.
func (o *overlay) Close() error { return nil }
