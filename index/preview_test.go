package index_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"cairn"
	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
	"cairn/postgres/pgtest"
	"cairn/store"
)

// TestIndex_Preview runs random edit sequences and checks, before every
// commit, that a preview of the change (the incremental update on an
// overlay of a snapshot, nothing written) reports the findings delta that
// committing it then shows, and ends with the rows the committed index has
// afterwards, read through every method of the storage's reader.
func TestIndex_Preview(t *testing.T) {
	seeds, steps := 4, 30
	if testing.Short() {
		seeds, steps = 2, 12
	}
	keys := func(fs []lint.Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Key())
		}
		slices.Sort(out)
		return out
	}
	previewed := 0
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e := setup(t)
			committed := e.st.Committed()
			g := newGen(uint64(200 + seed))
			for step := range steps {
				head, tree, b := e.stage(g.edits())
				before, err := e.ix.Main().Findings(e.ctx, index.FindingFilter{})
				if err != nil {
					t.Fatal(err)
				}
				pv, err := e.ix.Preview(e.ctx, b, head, tree)
				if errors.Is(err, index.ErrBulk) {
					e.commitTree(b, head, tree)
					continue // the vault's first commit
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				d := pv.Delta
				var inPreview string
				err = e.ix.PreviewRows(e.ctx, b, head, tree, func(r index.StorageReader) error {
					var err error
					inPreview, err = picture(e.ctx, r)
					return err
				})
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				// Nothing was written: the committed index is as it was.
				if st, err := e.ix.State(e.ctx); err != nil || st.Commit != head {
					t.Fatalf("step %d: the preview moved the index to %v (%v)", step, st, err)
				}
				// The preview's writes, made in a transaction, give the
				// rows committing the change gives.
				var replayed *index.Snapshot
				err = e.s.Update(e.ctx, func(tx *store.Tx) error {
					if err := e.ix.ApplyPreview(e.ctx, tx, pv); err != nil {
						return err
					}
					var err error
					if replayed, err = e.ix.SnapshotIn(e.ctx, tx); err != nil {
						return err
					}
					return errRollback
				})
				if !errors.Is(err, errRollback) {
					t.Fatalf("step %d: ApplyPreview: %v", step, err)
				}
				e.commitTree(b, head, tree)
				after, err := e.ix.Main().Findings(e.ctx, index.FindingFilter{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(keys(lint.New(before, after)), keys(d.New())); diff != "" {
					t.Fatalf("step %d: new findings (-committed +preview):\n%s", step, diff)
				}
				if diff := cmp.Diff(keys(lint.New(after, before)), keys(lint.New(d.Added, d.Removed))); diff != "" {
					t.Fatalf("step %d: findings gone (-committed +preview):\n%s", step, diff)
				}
				want, err := picture(e.ctx, committed)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, inPreview); diff != "" {
					t.Fatalf("step %d: rows (-committed +preview):\n%s", step, diff)
				}
				rows, err := e.ix.TakeSnapshot(e.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := rows.Diff(replayed); len(diff) > 0 {
					t.Fatalf("step %d: rows after ApplyPreview differ from the committed ones:\n%s", step, strings.Join(diff, "\n"))
				}
				previewed++
			}
			e.check()
		})
	}
	if previewed < seeds*steps/2 {
		t.Errorf("only %d of %d changes were previewed", previewed, seeds*steps)
	}
}

var errRollback = errors.New("roll back")

// TestIndex_PreviewStale: a preview judged against a commit the index no
// longer reflects is refused, and so is applying a preview to an index
// that moved, or that was rebuilt at the same commit (every file has a new
// id): nothing is written, and the caller judges again.
func TestIndex_PreviewStale(t *testing.T) {
	e := setup(t)
	first := e.commit(map[string]string{"index.md": "[[a]]", "a.md": "hello"})
	e.commit(map[string]string{"b.md": "[[a]]"})
	_, tree, b := e.stage(map[string]string{"c.md": "[[nowhere]]"})
	if _, err := e.ix.Preview(e.ctx, b, first.Hash, tree); !errors.Is(err, index.ErrStale) {
		t.Fatalf("Preview against an old head = %v, want ErrStale", err)
	}
	apply := func(pv *index.Preview) error {
		err := e.s.Update(e.ctx, func(tx *store.Tx) error {
			if err := e.ix.ApplyPreview(e.ctx, tx, pv); err != nil {
				return err
			}
			return errRollback
		})
		if errors.Is(err, errRollback) {
			return nil
		}
		return err
	}
	head, tree, b := e.stage(map[string]string{"c.md": "[[nowhere]]"})
	pv, err := e.ix.Preview(e.ctx, b, head, tree)
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(pv); err != nil {
		t.Fatalf("ApplyPreview on the index it read: %v", err)
	}
	if err := e.ix.Rebuild(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := apply(pv); !errors.Is(err, index.ErrStale) {
		t.Fatalf("ApplyPreview after a rebuild = %v, want ErrStale", err)
	}
	pv, err = e.ix.Preview(e.ctx, b, head, tree)
	if err != nil {
		t.Fatal(err)
	}
	e.commit(map[string]string{"d.md": "x"})
	if err := apply(pv); !errors.Is(err, index.ErrStale) {
		t.Fatalf("ApplyPreview after main moved = %v, want ErrStale", err)
	}
	e.check()
}

// stage builds the tree of changes on main's head in a batch it does not
// write: path → content, "" deletes.
func (e *env) stage(files map[string]string) (head, tree cairn.Hash, b *store.Batch) {
	e.t.Helper()
	head, err := e.s.Head(e.ctx, "main")
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		e.t.Fatal(err)
	}
	base := store.EmptyTree
	if !head.IsZero() {
		c, err := e.s.ReadCommit(e.ctx, head)
		if err != nil {
			e.t.Fatal(err)
		}
		base = c.Tree
	}
	var changes []store.FileChange
	for p, d := range files {
		changes = append(changes, store.FileChange{Path: p, Data: []byte(d), Delete: d == ""})
	}
	b = e.s.NewBatch()
	if tree, err = b.Edit(e.ctx, base, changes); err != nil {
		e.t.Fatal(err)
	}
	return head, tree, b
}

// commitTree moves main from head to a commit of tree.
func (e *env) commitTree(b *store.Batch, head, tree cairn.Hash) {
	e.t.Helper()
	_, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree,
		Principal: cairn.User("test"), Message: "edit", AllowEmpty: true})
	if err != nil {
		e.t.Fatal(err)
	}
}

// picture describes what a reader answers, file ids replaced by paths, so
// that two readers of one tree give equal pictures.
func picture(ctx context.Context, r index.StorageReader) (string, error) {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	blobs, err := r.Blobs(ctx)
	if err != nil {
		return "", err
	}
	paths := make([]string, 0, len(blobs))
	for p := range blobs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	pathOf := map[int64]string{}
	ids := map[string]int64{}
	for _, p := range paths {
		f, err := r.FileAt(ctx, p)
		if err != nil {
			return "", fmt.Errorf("FileAt(%s): %w", p, err)
		}
		pathOf[f.ID], ids[p] = p, f.ID
		add("file %s kind %d blob %s", p, f.Kind, f.Blob.Short())
	}
	name := func(id int64) string {
		if p, ok := pathOf[id]; ok {
			return p
		}
		if id == 0 {
			return "-"
		}
		return "(gone)"
	}
	names := func(ids []int64) string {
		var ns []string
		for _, id := range ids {
			ns = append(ns, name(id))
		}
		slices.Sort(ns)
		return strings.Join(ns, ",")
	}
	values := map[string]bool{}
	for _, p := range paths {
		id := ids[p]
		row, err := r.File(ctx, id)
		if err != nil {
			return "", err
		}
		got, err := r.Path(ctx, id)
		if err != nil || got != p {
			return "", fmt.Errorf("Path(%s) = %q, %v", p, got, err)
		}
		depth, err := r.Depth(ctx, id)
		if err != nil {
			return "", err
		}
		row.ID = 0
		add("row %s %+v depth %d", p, row, depth)
		links, err := r.LinksFrom(ctx, id)
		if err != nil {
			return "", err
		}
		for _, l := range links {
			one, err := r.Link(ctx, l.Src, l.Ord)
			if err != nil {
				return "", err
			}
			if one.Dst != l.Dst || one.Status != l.Status || !slices.Equal(one.Data, l.Data) {
				return "", fmt.Errorf("Link(%s, %d) = %+v, LinksFrom has %+v", p, l.Ord, one, l)
			}
			add("link %s#%d flags %d status %d to %s (%s) step %d %s %s", p, l.Ord, l.Flags, l.Status, name(l.Dst), l.DstPath, l.Step, l.Detail, hex.EncodeToString(l.Data))
		}
		to, err := r.LinksTo(ctx, id, 0, 0)
		if err != nil {
			return "", err
		}
		for _, l := range to {
			add("into %s from %s#%d (%s) status %d", p, l.SrcPath, l.Ord, name(l.Src), l.Status)
		}
		anchored, err := r.AnchoredLinksTo(ctx, id)
		if err != nil {
			return "", err
		}
		var as []string
		for _, k := range anchored {
			as = append(as, fmt.Sprintf("%s#%d", name(k.Src), k.Ord))
		}
		slices.Sort(as)
		children, err := r.Children(ctx, id)
		if err != nil {
			return "", err
		}
		parents, err := r.Parents(ctx, id)
		if err != nil {
			return "", err
		}
		add("graph %s anchored [%s] children [%s] parents [%s]", p, strings.Join(as, ","), names(children), names(parents))
		fs, err := r.Findings(ctx, id, "")
		if err != nil {
			return "", err
		}
		for _, f := range fs {
			add("finding of %s: %s", p, f.Key())
		}
		stem := strings.TrimSuffix(path.Base(p), ".md")
		for _, v := range []string{p, strings.TrimSuffix(p, ".md"), stem, path.Base(p)} {
			values[cairn.FoldPath(v)] = true
		}
	}
	for _, v := range append(slices.Clone(names0), titles...) {
		values[cairn.FoldPath(v)] = true
		values[cairn.FoldPath("b/"+v)] = true
	}
	vs := make([]string, 0, len(values))
	for v := range values {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	steps := []markdown.Step{markdown.StepFile, markdown.StepPath, markdown.StepSuffix, markdown.StepStem, markdown.StepTitle, markdown.StepAlias}
	for _, v := range vs {
		for _, step := range steps {
			hs, err := r.KeyHolders(ctx, v, step)
			if err != nil {
				return "", err
			}
			if len(hs) > 0 {
				var ns []string
				for _, h := range hs {
					ns = append(ns, h.Path)
				}
				add("key %q step %d: %s", v, step, strings.Join(ns, ","))
			}
		}
		both, err := r.KeyHolders(ctx, v, markdown.StepStem, markdown.StepTitle, markdown.StepAlias)
		if err != nil {
			return "", err
		}
		if len(both) > 0 {
			var ns []string
			for _, h := range both {
				ns = append(ns, h.Path)
			}
			add("key %q steps 4-6: %s", v, strings.Join(ns, ","))
		}
		citing, err := r.FilesCiting(ctx, v)
		if err != nil {
			return "", err
		}
		if len(citing) > 0 {
			add("cited %q by %s", v, names(citing))
		}
		looking, err := r.LinksLookingUp(ctx, index.LookupHash(v))
		if err != nil {
			return "", err
		}
		var ls []string
		for _, k := range looking {
			ls = append(ls, fmt.Sprintf("%s#%d", name(k.Src), k.Ord))
		}
		slices.Sort(ls)
		if len(ls) > 0 {
			add("looking up %q: %s", v, strings.Join(ls, ","))
		}
	}
	kinds, err := r.FilesOfKind(ctx, lint.KindPage, lint.KindAttachment)
	if err != nil {
		return "", err
	}
	if !slices.IsSorted(kinds) {
		return "", fmt.Errorf("FilesOfKind is not in id order: %v", kinds)
	}
	add("pages and attachments: %s", names(kinds))
	edges, err := r.Edges(ctx)
	if err != nil {
		return "", err
	}
	var es []string
	for src, dsts := range edges {
		es = append(es, name(src)+" -> "+names(dsts))
	}
	slices.Sort(es)
	add("edges: %s", strings.Join(es, "; "))
	all, err := r.Findings(ctx, 0, "")
	if err != nil {
		return "", err
	}
	var fs []string
	for _, f := range all {
		fs = append(fs, f.Key())
	}
	slices.Sort(fs)
	add("findings: %s", strings.Join(fs, "; "))
	broken, err := r.Findings(ctx, 0, lint.BrokenLink)
	if err != nil {
		return "", err
	}
	add("broken: %d", len(broken))
	st, err := r.State(ctx)
	if err != nil {
		return "", err
	}
	add("tree %s", st.Tree.Short())
	return strings.Join(out, "\n"), nil
}

// TestIndex_ViewMatchesCommitted runs random edit sequences and reads each
// change, before committing it, through a view (the overlay of a snapshot,
// no lock), then through main's index once it is committed: every read of
// a Reader (pages, links, findings, titles, counts, fields, and searches by
// words, prefixes, phrases, type and folder, with small and large limits)
// answers the same, scores to within rounding.
func TestIndex_ViewMatchesCommitted(t *testing.T) {
	seeds, steps := 3, 25
	if testing.Short() {
		seeds, steps = 2, 10
	}
	viewed := 0
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e := setup(t)
			g := newGen(uint64(300 + seed))
			for step := range steps {
				head, tree, b := e.stage(g.edits())
				var inView string
				err := e.ix.View(e.ctx, b, tree, func(r *index.Reader) error {
					var err error
					inView, err = readerPicture(e.ctx, r)
					return err
				})
				if err != nil {
					t.Fatalf("step %d: view: %v", step, err)
				}
				e.commitTree(b, head, tree)
				want, err := readerPicture(e.ctx, e.ix.Main())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, inView); diff != "" {
					t.Fatalf("step %d: reads (-committed +view):\n%s", step, diff)
				}
				viewed++
			}
		})
	}
	if viewed < seeds*steps {
		t.Errorf("only %d of %d changes were viewed", viewed, seeds*steps)
	}
}

// TestIndex_ViewTakesNoLock: while another transaction holds the write
// lock, a view of a draft answers its reads, searches and counts
// included; a query of a field's containment, which the overlay answers in
// a write transaction of its own, waits for the lock.
func TestIndex_ViewTakesNoLock(t *testing.T) {
	e := setup(t)
	e.commit(map[string]string{"a.md": "# Alpha\n\n[[b]] gardens", "b.md": "# Beta\n\nhello gardens"})
	_, tree, b := e.stage(map[string]string{"c.md": "---\ntitle: Gamma\n---\n[[a]] gardens of gamma", "b.md": ""})
	holding, release := make(chan struct{}), make(chan struct{})
	locked := make(chan error, 1)
	go func() {
		locked <- e.s.Update(e.ctx, func(tx *store.Tx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Second)
	defer cancel()
	var found []index.SearchResult
	var titles []index.Title
	var broken []lint.Finding
	err := e.ix.View(ctx, b, tree, func(r *index.Reader) error {
		var err error
		if found, err = r.Search(ctx, index.SearchQuery{Text: "gardens"}); err != nil {
			return err
		}
		if titles, err = r.Titles(ctx); err != nil {
			return err
		}
		if broken, err = r.Findings(ctx, index.FindingFilter{Rule: lint.BrokenLink}); err != nil {
			return err
		}
		st, err := r.Stats(ctx)
		if err == nil && (st.Pages != 2 || st.Links != 2 || st.Broken != 1) {
			err = fmt.Errorf("stats = %+v, want 2 pages, 2 links, 1 broken", st)
		}
		return err
	})
	if err != nil {
		t.Fatalf("a view beside the write lock: %v", err)
	}
	var paths []string
	for _, f := range found {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"c.md", "a.md"}) && !slices.Equal(paths, []string{"a.md", "c.md"}) {
		t.Errorf("search in the view = %v, want a.md and c.md", paths)
	}
	if len(titles) != 2 || titles[0].Path != "a.md" || titles[1].Path != "c.md" {
		t.Errorf("titles in the view = %+v", titles)
	}
	if len(broken) != 1 || broken[0].Page != "a.md" {
		t.Errorf("broken links in the view = %+v, want a.md's", broken)
	}
	// A field's containment waits for the lock, here past the deadline.
	contains := []index.FieldQuery{{Name: "title", Op: index.OpContains, Value: "amm"}}
	short, cancel2 := context.WithTimeout(e.ctx, 300*time.Millisecond)
	defer cancel2()
	err = e.ix.View(short, b, tree, func(r *index.Reader) error {
		_, err := r.Where(short, "", contains)
		return err
	})
	if err == nil {
		t.Errorf("a containment in a view answered while another transaction held the write lock")
	}
	close(release)
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
	err = e.ix.View(e.ctx, b, tree, func(r *index.Reader) error {
		ts, err := r.Where(e.ctx, "", contains)
		if err == nil && (len(ts) != 1 || ts[0].Path != "c.md") {
			err = fmt.Errorf("pages whose title holds amm = %+v, want c.md", ts)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readerPicture describes what a Reader answers.
func readerPicture(ctx context.Context, r *index.Reader) (string, error) {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	titles, err := r.Titles(ctx)
	if err != nil {
		return "", err
	}
	for _, ti := range titles {
		add("title %+v", ti)
		p, err := r.Page(ctx, ti.Path)
		if err != nil {
			return "", err
		}
		add("page %+v", *p)
		links, err := r.Links(ctx, ti.Path)
		if err != nil {
			return "", err
		}
		back, err := r.Backlinks(ctx, ti.Path)
		if err != nil {
			return "", err
		}
		add("links %+v back %+v", links, back)
		// The same backlinks read in parts of two.
		var parts []index.LinkInfo
		for off := 0; ; off += 2 {
			pg, err := r.BacklinksPage(ctx, ti.Path, off, 2)
			if err != nil {
				return "", err
			}
			if pg.Total != len(back) || pg.Page != ti.Path {
				return "", fmt.Errorf("BacklinksPage(%s, %d, 2) gives total %d of %s, want %d of %s", ti.Path, off, pg.Total, pg.Page, len(back), ti.Path)
			}
			if len(pg.Links) == 0 {
				break
			}
			parts = append(parts, pg.Links...)
		}
		if !cmp.Equal(parts, back, cmpopts.EquateEmpty()) {
			return "", fmt.Errorf("BacklinksPage(%s) in parts of two = %+v, want %+v", ti.Path, parts, back)
		}
	}
	for _, ref := range append(slices.Clone(names0), titles0()...) {
		to, err := r.Resolve(ctx, ref)
		add("resolve %s: %s %v", ref, to, cairn.ErrorCode(err))
	}
	fs, err := r.Findings(ctx, index.FindingFilter{})
	if err != nil {
		return "", err
	}
	for _, f := range fs {
		add("finding %s", f.Key())
	}
	// The same findings read in parts of two, with their counts, for
	// every file, a rule and a least severity.
	filters := []index.FindingFilter{{}, {Min: lint.Warning}, {Min: lint.Error}}
	if len(fs) > 0 {
		filters = append(filters, index.FindingFilter{Rule: fs[len(fs)/2].Rule}, index.FindingFilter{Page: fs[0].Page, Min: lint.Warning})
	}
	for _, f := range filters {
		want, err := r.Findings(ctx, f)
		if err != nil {
			return "", err
		}
		slices.SortFunc(want, index.FindingOrder)
		var parts []lint.Finding
		for off := 0; ; off += 2 {
			pg, err := r.FindingsPage(ctx, f, off, 2)
			if err != nil {
				return "", err
			}
			if !cmp.Equal(pg.Counts, index.CountFindings(want), cmpopts.EquateEmpty()) {
				return "", fmt.Errorf("FindingsPage(%+v, %d, 2) counts %+v, want %+v", f, off, pg.Counts, index.CountFindings(want))
			}
			if len(pg.Findings) == 0 {
				break
			}
			parts = append(parts, pg.Findings...)
		}
		if !cmp.Equal(parts, want, cmpopts.EquateEmpty()) {
			return "", fmt.Errorf("FindingsPage(%+v) in parts of two = %+v, want %+v", f, parts, want)
		}
	}
	st, err := r.Stats(ctx)
	if err != nil {
		return "", err
	}
	add("stats %+v", st)
	for _, q := range []struct {
		typ   string
		where []index.FieldQuery
	}{
		{"", nil},
		{"concept", nil},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpGt, Value: "5"}}},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpGt, Value: "2"}, {Name: "n", Op: index.OpLe, Value: "12"}}},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpNe, Value: "3"}}},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpGt, Value: "3"}}},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpGe, Value: "12"}}},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpLt, Value: "12"}}},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpLe, Value: "3"}}},
		{"", []index.FieldQuery{{Name: "n", Op: index.OpGe, Value: "x"}}},
		{"", []index.FieldQuery{{Name: "n"}}},
		{"summary", []index.FieldQuery{{Name: "n", Op: index.OpEq, Value: "x"}}},
		{"", []index.FieldQuery{{Name: "title", Op: index.OpEq, Value: "Alpha"}}},
		{"", []index.FieldQuery{{Name: "title", Op: index.OpLt, Value: "C"}}},
		{"", []index.FieldQuery{{Name: "aliases", Op: index.OpEq, Value: "alpha"}, {Name: "sources"}}},
		{"", []index.FieldQuery{{Name: "title", Op: index.OpContains, Value: "PH"}}},
	} {
		ts, err := r.Where(ctx, q.typ, q.where)
		if err != nil {
			return "", err
		}
		add("where %s %v: %+v", q.typ, q.where, ts)
	}
	for _, text := range []string{"gardens", "alpha", "part", "see", "a*", "ga*", "home", "words gardens",
		`"about gardens"`, "gardens type:concept", "gardens folder:notes", "b* folder:a/b", "zzz", "shared gardens"} {
		for _, limit := range []int{1, 3, 100} {
			res, err := r.Search(ctx, index.SearchQuery{Text: text, Limit: limit})
			if err != nil {
				return "", fmt.Errorf("search %q: %w", text, err)
			}
			for i, h := range res {
				add("search %q limit %d #%d: %s %s %q %s score %.9f snippet %q %v", text, limit, i, h.Path, h.ID, h.Title, h.Type, h.Score, h.Snippet, h.Matches)
			}
		}
	}
	return strings.Join(out, "\n"), nil
}

func titles0() []string { return titles }

// TestIndex_ViewEdgeCases reads changes the random edits do not make
// through a view and through main once committed, and compares.
func TestIndex_ViewEdgeCases(t *testing.T) {
	long := strings.Repeat("t", 300) // a type too long to be a field row
	many := map[string]string{}
	for i := range 600 {
		many[fmt.Sprintf("p%03d.md", i)] = fmt.Sprintf("# P%d\n\nwords about gardens [[p%03d]]\n", i, (i+1)%600)
	}
	for _, c := range []struct {
		name         string
		base, change map[string]string
		reads        []viewRead
	}{
		{"a folder whose name is not ASCII",
			map[string]string{"café/a.md": "# A\n\ngardens\n", "Émile/b.md": "# B\n\ngardens\n", "notes/b.md": "# B\n\ngardens\n"},
			map[string]string{"café/new.md": "# New\n\ngardens new\n", "Émile/c.md": "# C\n\ngardens\n", "notes/c.md": "# C\n\ngardens\n"},
			[]viewRead{{search: "gardens folder:café"}, {search: "gardens folder:CAFÉ"}, {search: "gardens folder:Café"}, {search: "gardens folder:émile"},
				{search: "gardens folder:Émile"}, {search: "gardens folder:NOTES"}, {search: "g* folder:café"}}},
		{"a type that is no field row",
			map[string]string{"a.md": "# A\n\ngardens\n", "b.md": "---\ntype: " + long + "\n---\n# B\n"},
			map[string]string{"a.md": "---\ntype: " + long + "\n---\n# A\n\ngardens\n"},
			[]viewRead{{typ: long}, {search: "gardens type:" + long}, {typ: long, where: []index.FieldQuery{{Name: "title"}}}}},
		{"a change of every file's findings and depth",
			many, map[string]string{"index.md": "# Home\n\n[[p000]]\n", "p300.md": "# P300\n\nchanged gardens\n"},
			[]viewRead{{stats: true}, {titles: true}, {typ: ""}, {search: "gardens"}, {search: "changed"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t)
			e.commit(c.base)
			head, tree, b := e.stage(c.change)
			var inView string
			err := e.ix.View(e.ctx, b, tree, func(r *index.Reader) error {
				var err error
				inView, err = readAll(e.ctx, r, c.reads)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			e.commitTree(b, head, tree)
			want, err := readAll(e.ctx, e.ix.Main(), c.reads)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, inView); diff != "" {
				t.Errorf("reads (-committed +view):\n%s", diff)
			}
		})
	}
}

// viewRead is one read of TestIndex_ViewEdgeCases: a search, or pages by
// type and fields, or the counts, or the titles.
type viewRead struct {
	search        string
	typ           string
	where         []index.FieldQuery
	stats, titles bool
}

func readAll(ctx context.Context, r *index.Reader, reads []viewRead) (string, error) {
	var out []string
	for _, q := range reads {
		switch {
		case q.search != "":
			res, err := r.Search(ctx, index.SearchQuery{Text: q.search, Limit: 20})
			if err != nil {
				return "", err
			}
			for i, h := range res {
				out = append(out, fmt.Sprintf("search %.40q #%d %s score %.9f", q.search, i, h.Path, h.Score))
			}
			out = append(out, fmt.Sprintf("search %.40q: %d", q.search, len(res)))
		case q.stats:
			st, err := r.Stats(ctx)
			if err != nil {
				return "", err
			}
			out = append(out, fmt.Sprintf("stats %+v", st))
		case q.titles:
			ts, err := r.Titles(ctx)
			if err != nil {
				return "", err
			}
			out = append(out, fmt.Sprintf("titles %+v", ts))
		default:
			ts, err := r.Where(ctx, q.typ, q.where)
			if err != nil {
				return "", err
			}
			for _, ti := range ts {
				out = append(out, fmt.Sprintf("where %.20s %v: %s %.20s %d", q.typ, q.where, ti.Path, ti.Type, ti.Inbound))
			}
			out = append(out, fmt.Sprintf("where %.20s %v: %d", q.typ, q.where, len(ts)))
		}
	}
	return strings.Join(out, "\n"), nil
}

// TestIndex_ViewsAtOnce: more views at once than the read pool has
// connections, each reading contents (a search's snippets) while it holds
// its snapshot, half of them also a field's containment (made in a write
// transaction, which on PostgreSQL takes connections of the same pool),
// all answer: snapshots are bounded below the pool (SnapshotLimiter), so
// that the reads of contents always find one, and on PostgreSQL a
// process's writes wait for their turn holding no connection.
func TestIndex_ViewsAtOnce(t *testing.T) {
	e := setup(t)
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("p%d.md", i)] = fmt.Sprintf("---\nstatus: draft %d\n---\n# P%d\n\nwords about gardens %d [[p%d]]\n", i, i, i, (i+1)%200)
	}
	e.commit(files)
	n := 8
	if pgtest.Enabled() {
		n = 24 // the pool has 16
	}
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		change := map[string]string{}
		for j := range 30 {
			change[fmt.Sprintf("p%d.md", (i*30+j)%200)] = fmt.Sprintf("# Q%d\n\nchanged gardens %d %d\n", j, i, j)
		}
		_, tree, b := e.stage(change)
		if i%2 == 1 { // a stored tree (a branch's), its contents read from the store
			if err := b.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			b = nil
		}
		wg.Go(func() {
			for range 10 {
				err := e.ix.View(ctx, b, tree, func(r *index.Reader) error {
					if _, err := r.Search(ctx, index.SearchQuery{Text: "gardens", Limit: 20}); err != nil || b != nil {
						return err
					}
					_, err := r.Where(ctx, "", []index.FieldQuery{{Name: "status", Op: index.OpContains, Value: "RAF"}})
					return err
				})
				if err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestIndex_ViewCancelled: a view whose context ends while fn runs
// returns what fn returned, the context's error, not what closing the
// snapshot then met.
func TestIndex_ViewCancelled(t *testing.T) {
	e := setup(t)
	e.commit(map[string]string{"a.md": "# A\n\ngardens\n"})
	_, tree, b := e.stage(map[string]string{"b.md": "# B\n\ngardens\n"})
	for range 10 {
		ctx, cancel := context.WithCancel(e.ctx)
		err := e.ix.View(ctx, b, tree, func(r *index.Reader) error {
			cancel()
			time.Sleep(5 * time.Millisecond)
			return ctx.Err()
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled view returned %v, want context.Canceled", err)
		}
	}
}

// TestIndex_ViewsLockedAtOnce: views of stored branches that all make a
// read in a write transaction (a field's containment) at about the same
// moment (each waits up to a second for the others inside its view) all
// answer, and answer right. On PostgreSQL each such view holds a
// connection for its snapshot, one for the transaction and may take one
// more for the contents that transaction reads: snapshots are a third of
// the pool, and a process's writes wait for their turn holding no
// connection.
func TestIndex_ViewsLockedAtOnce(t *testing.T) {
	e := setup(t)
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("p%d.md", i)] = fmt.Sprintf("---\ntype: note\nstatus: draft %d\n---\n# P%d\n\ngardens %d\n", i, i, i)
	}
	e.commit(files)
	const n = 8
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var inside atomic.Int32
	errs := make([]error, n)
	for i := range n {
		change := map[string]string{}
		for j := range 10 {
			change[fmt.Sprintf("p%d.md", (i*10+j)%50)] = fmt.Sprintf("---\ntype: note\nstatus: final %d\n---\n# Q%d\n\nchanged %d\n", j, j, i)
		}
		_, tree, b := e.stage(change)
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			errs[i] = e.ix.View(ctx, nil, tree, func(r *index.Reader) error {
				inside.Add(1)
				for wait := time.Now(); inside.Load() < n && time.Since(wait) < time.Second; {
					time.Sleep(time.Millisecond)
				}
				ts, err := r.Where(ctx, "note", []index.FieldQuery{{Name: "status", Op: index.OpContains, Value: "fin"}})
				if err == nil && len(ts) != 10 {
					err = fmt.Errorf("%d pages of status ~ fin, want 10", len(ts))
				}
				return err
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
