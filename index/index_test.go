package index_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"cairn"
	"cairn/index"
	"cairn/lint"
	"cairn/markdown"
	"cairn/store"
)

var propertySeeds = flag.Int("seeds", 6, "random edit sequences for TestIndex_Incremental")

type env struct {
	t   *testing.T
	ctx context.Context
	b   *backend
	st  index.Storage
	s   *store.Store
	ix  *index.Index
}

// setup opens a vault database of the test's own (openBackend: SQLite, or
// PostgreSQL under CAIRN_TEST_BACKEND=postgres) with an index on main.
func setup(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	b := openBackend(t)
	s, err := store.New(ctx, b.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix := index.New(s, b.st, nil)
	s.AddHook(ix.Hook())
	return &env{t: t, ctx: ctx, b: b, st: b.st, s: s, ix: ix}
}

// commit applies changes to main: path → content, "" deletes.
func (e *env) commit(files map[string]string) *cairn.Commit {
	e.t.Helper()
	head, err := e.s.Head(e.ctx, "main")
	if err != nil && cairn.ErrorCode(err) != cairn.ENOTFOUND {
		e.t.Fatal(err)
	}
	base := store.EmptyTree
	if !head.IsZero() {
		c, _ := e.s.ReadCommit(e.ctx, head)
		base = c.Tree
	}
	var changes []store.FileChange
	for p, d := range files {
		if d == "" {
			changes = append(changes, store.FileChange{Path: p, Delete: true})
		} else {
			changes = append(changes, store.FileChange{Path: p, Data: []byte(d)})
		}
	}
	b := e.s.NewBatch()
	tree, err := b.Edit(e.ctx, base, changes)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := e.s.Commit(e.ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.User("test"), Message: "edit", AllowEmpty: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) check() {
	e.t.Helper()
	d, err := e.ix.Check(e.ctx, true)
	if err != nil {
		e.t.Fatal(err)
	}
	if !d.OK() {
		e.t.Fatalf("incremental index differs from a rebuild:\n%s", strings.Join(d.Problems, "\n"))
	}
}

func (e *env) findings() []string {
	e.t.Helper()
	fs, err := e.ix.Main().Findings(e.ctx, index.FindingFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s %q", f.Page, f.Rule, f.Severity, f.Subject))
	}
	return out
}

func TestIndex_Basics(t *testing.T) {
	e := setup(t)
	e.commit(map[string]string{
		"index.md":           "---\ntitle: Home\ntype: index\n---\n# Home\n- [[Alpha]]\n- [[concepts/beta|Beta]]\n",
		"entities/alpha.md":  "---\ntitle: Alpha\ntype: entity\naliases: [The First]\n---\nAlpha meets [[beta#Origins]] and [[gamma]].\n\n```\n[[not a link]]\n```\n",
		"concepts/beta.md":   "---\ntitle: Beta\ntype: concept\n---\n# Beta\n## Origins\nBeta came from [[The First]] and ![[diagram.png]].\n",
		"images/diagram.png": "\x89PNG",
		"summaries/paper.md": "---\ntitle: Paper\ntype: summary\nsource: raw/paper.md\n---\nA summary of a paper about quantum gardening.\n",
		"raw/paper.md":       "The paper.",
		"notes/lonely.md":    "Nobody links here. [[Beta#Nowhere]]",
		"notes/loop-a.md":    "---\ntitle: Loop A\ntype: concept\n---\n[[loop-b]]",
		"notes/loop-b.md":    "---\ntitle: Loop B\ntype: concept\n---\n[[loop-a]]",
		"scripts/run.sh":     "#!/bin/sh",
		"cairn.yaml":         "lint:\n  strict: true\n",
		"notes/twin-one.md":  "---\ntitle: Twin\ntype: concept\n---\n[[index]]",
		"concepts/twin-2.md": "---\ntitle: Twin\ntype: concept\n---\n[[Twin]]",
		"notes/beta.md":      "---\ntitle: Other beta\ntype: concept\n---\nsee [[beta]]",
	})
	e.check()
	r := e.ix.Main()
	links, err := r.Links(e.ctx, "Alpha")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range links {
		got = append(got, l.Raw+" -> "+l.Status+" "+l.To)
	}
	want := []string{"[[beta#Origins]] -> resolved notes/beta.md", "[[gamma]] -> broken "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Links(Alpha) mismatch (-want +got):\n%s", diff)
	}
	back, err := r.Backlinks(e.ctx, "entities/alpha.md")
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, l := range back {
		got = append(got, l.From+" "+l.Raw)
	}
	want = []string{"concepts/beta.md [[The First]]", "index.md [[Alpha]]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Backlinks(alpha) mismatch (-want +got):\n%s", diff)
	}
	out, in, err := r.Edges(e.ctx, "entities/alpha.md")
	if err != nil || !cmp.Equal(out, links) || !cmp.Equal(in, back) {
		t.Errorf("Edges(alpha) = %v, %v, %v; want Links and Backlinks", out, in, err)
	}
	if _, _, err := r.Edges(e.ctx, "Alpha"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("Edges of a title, not a path: %v, want not found", err)
	}
	res, err := r.Search(e.ctx, index.SearchQuery{Text: "quantum gard*"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Path != "summaries/paper.md" || !strings.Contains(res[0].Snippet, "quantum gardening") || len(res[0].Matches) != 2 {
		t.Errorf("Search = %+v", res)
	}
	if _, err := r.Search(e.ctx, index.SearchQuery{Text: "type:concept"}); cairn.ErrorCode(err) != cairn.EINVALID {
		t.Errorf("Search with no words: error = %v, want invalid", err)
	}
	res, err = r.Search(e.ctx, index.SearchQuery{Text: "beta", Type: "concept", Folder: "concepts"})
	if err != nil || len(res) != 1 || res[0].Path != "concepts/beta.md" {
		t.Errorf("Search(beta, type concept, folder concepts) = %+v, %v", res, err)
	}
	// Two pages have the title Twin: a link by that title is ambiguous,
	// never silently the first. Two have the stem beta: a link by it goes
	// to the one beside it (notes/lonely.md's, notes/beta.md's own), else
	// to the shorter path (alpha's), which lint notes.
	wantFindings := []string{
		`concepts/twin-2.md ambiguous-link warning "Twin"`,
		`concepts/twin-2.md duplicate-title warning "Twin"`,
		`concepts/twin-2.md orphan warning ""`,
		`entities/alpha.md ambiguous-link info "beta"`,
		`entities/alpha.md broken-link warning "gamma"`,
		`entities/alpha.md missing-heading warning "beta#Origins"`,
		`notes/lonely.md missing-heading warning "Beta#Nowhere"`,
		`notes/lonely.md missing-title warning "title"`,
		`notes/lonely.md missing-type warning "type"`,
		`notes/lonely.md orphan warning ""`,
		`notes/loop-a.md unreachable warning ""`,
		`notes/loop-b.md unreachable warning ""`,
		`notes/twin-one.md duplicate-title warning "Twin"`,
		`notes/twin-one.md orphan warning ""`,
		`scripts/run.sh non-markdown-file warning ""`,
		`summaries/paper.md orphan warning ""`,
	}
	if diff := cmp.Diff(wantFindings, e.findings()); diff != "" {
		t.Errorf("findings mismatch (-want +got):\n%s", diff)
	}
	// Fixing things updates only what changed, and equals a rebuild.
	e.commit(map[string]string{"notes/beta.md": "", "entities/gamma.md": "---\ntitle: Gamma\ntype: entity\n---\nBack to [[alpha]].", "scripts/run.sh": ""})
	e.check()
	got = e.findings()
	if !slices.Contains(got, `notes/lonely.md missing-heading warning "Beta#Nowhere"`) {
		t.Errorf("after the fix, [[Beta#Nowhere]] is not reported as a missing heading:\n%s", strings.Join(got, "\n"))
	}
	for _, f := range got {
		if strings.HasPrefix(f, "entities/") || strings.HasPrefix(f, "notes/beta.md") || strings.HasPrefix(f, "scripts/") {
			t.Errorf("after the fix, still: %s", f)
		}
	}
	links, _ = r.Links(e.ctx, "Alpha")
	if links[0].Status != "resolved" || links[0].To != "concepts/beta.md" || links[1].To != "entities/gamma.md" {
		t.Errorf("after the fix Links(Alpha) = %+v", links)
	}
}

// TestIndex_Incremental runs random edit sequences and checks after every
// commit that the incrementally updated index (links, backlinks,
// reachability, findings, full text) equals a rebuild from scratch.
func TestIndex_Incremental(t *testing.T) {
	seeds, steps := *propertySeeds, 40
	if testing.Short() {
		seeds, steps = 2, 15
	}
	chosen := 0 // links that took the shortest of several paths
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e := setup(t)
			g := newGen(uint64(seed))
			for step := range steps {
				e.commit(g.edits())
				d, err := e.ix.Check(e.ctx, true)
				if err != nil {
					t.Fatal(err)
				}
				if !d.OK() {
					t.Fatalf("step %d: incremental index differs from a rebuild:\n%s", step, strings.Join(d.Problems, "\n"))
				}
				fs, err := e.ix.Main().Findings(e.ctx, index.FindingFilter{Rule: lint.AmbiguousLink})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range fs {
					if f.Severity == lint.Info {
						chosen++
					}
				}
			}
		})
	}
	if chosen == 0 {
		t.Errorf("no link took the shortest of several paths: the edits do not exercise the rule")
	}
}

// gen makes random edits to a small vault whose pages link to each other
// by every route resolution knows: path, suffix, stem, title, alias,
// headings and blocks, with collisions, renames and index.md coming and
// going. Pages and attachments of one name sit in several folders, nested
// and side by side, so that which one a link takes depends on the linking
// page's folder and on the others' path lengths.
type gen struct {
	rng   *rand.Rand
	files map[string]string
}

func newGen(seed uint64) *gen {
	return &gen{rng: rand.New(rand.NewPCG(seed, 99)), files: map[string]string{}}
}

var (
	folders = []string{"", "notes/", "concepts/", "a/b/", "x/b/", "notes/deep/", "zz/"}
	names0  = []string{"alpha", "beta", "gamma", "delta", "index", "Alpha", "omega"}
	titles  = []string{"Alpha", "Beta", "Home", "Gamma", "Shared"}
)

func (g *gen) page() string {
	var b strings.Builder
	if g.rng.IntN(4) > 0 {
		b.WriteString("---\n")
		fmt.Fprintf(&b, "title: %s\n", titles[g.rng.IntN(len(titles))])
		if g.rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "type: %s\n", []string{"concept", "summary", "index"}[g.rng.IntN(3)])
		}
		if g.rng.IntN(3) == 0 {
			fmt.Fprintf(&b, "aliases: [%s]\n", names0[g.rng.IntN(len(names0))])
		}
		if g.rng.IntN(4) == 0 {
			fmt.Fprintf(&b, "sources: raw/%s.md, %s\n", names0[g.rng.IntN(len(names0))], names0[g.rng.IntN(len(names0))])
		}
		if g.rng.IntN(3) == 0 { // a link field of the declared types
			fmt.Fprintf(&b, "see: \"[[%s]]\"\n", names0[g.rng.IntN(len(names0))])
		}
		if g.rng.IntN(3) == 0 {
			fmt.Fprintf(&b, "n: %s\n", []string{"3", "x", "12"}[g.rng.IntN(3)])
		}
		b.WriteString("---\n")
	}
	fmt.Fprintf(&b, "# %s\n\n## Part %d\n", titles[g.rng.IntN(len(titles))], g.rng.IntN(3))
	for range g.rng.IntN(5) {
		target := names0[g.rng.IntN(len(names0))]
		switch g.rng.IntN(7) {
		case 0:
			target = folders[g.rng.IntN(len(folders))] + target
		case 6:
			target = "b/" + target // a suffix that a/b/ and x/b/ both answer
		case 1:
			target = titles[g.rng.IntN(len(titles))]
		case 2:
			target += fmt.Sprintf("#Part %d", g.rng.IntN(3))
		case 3:
			target = "#Part 1"
		}
		fmt.Fprintf(&b, "See [[%s]]. ", target)
	}
	if g.rng.IntN(5) == 0 {
		b.WriteString("![[pic.png]] [rel](../notes/beta.md)\n")
	}
	b.WriteString("\nwords about gardens\n")
	return b.String()
}

// typeDecls are declarations the random edits write to types/: requiring
// fields, with a link field to concepts, extending base, and broken.
var typeDecls = []string{
	"requires: [title]\nfields:\n  n: {type: integer, max: 10}\n",
	"extends: base\nfields:\n  see: link to concept\n",
	"recommends: [see]\nfields:\n  see: link\n",
	"extends: summary\n",
	"closed: true\nfields:\n  see: link to summary\n",
	"fields:\n  n: {pattern: '[x-'}\n",
}

func (g *gen) edits() map[string]string {
	out := map[string]string{}
	for range 1 + g.rng.IntN(4) {
		var p string
		switch g.rng.IntN(12) {
		case 0:
			p = "raw/" + names0[g.rng.IntN(len(names0))] + ".md"
		case 1:
			p = folders[g.rng.IntN(len(folders))] + "pic.png"
		case 2:
			p = []string{"cairn.yaml", "eva.json"}[g.rng.IntN(2)] // the lint setting comes and goes
		case 3:
			p = "types/" + []string{"concept", "summary", "base"}[g.rng.IntN(3)] + []string{".md", ".yaml"}[g.rng.IntN(5)/4]
		default:
			p = folders[g.rng.IntN(len(folders))] + names0[g.rng.IntN(len(names0))] + ".md"
		}
		if _, exists := g.files[p]; exists && g.rng.IntN(3) == 0 {
			out[p] = ""
			continue
		}
		switch {
		case p == "cairn.yaml":
			out[p] = []string{"agent:\n  timeout: 10m\n", "lint:\n  strict: true\n", "lint:\n  strict: false\n"}[g.rng.IntN(3)]
		case p == "eva.json":
			out[p] = "{}"
		case strings.HasPrefix(p, "types/"):
			out[p] = typeDecls[g.rng.IntN(len(typeDecls))]
		case strings.HasSuffix(p, ".png") || strings.HasPrefix(p, "raw/"):
			out[p] = fmt.Sprint("data ", g.rng.IntN(100))
		default:
			out[p] = g.page()
		}
	}
	// Drop edits the store would refuse: case clashes with other files.
	for p, d := range out {
		for q := range g.files {
			if q != p && strings.EqualFold(q, p) {
				delete(out, p)
			}
		}
		for q := range out {
			if q != p && strings.EqualFold(q, p) && q < p {
				delete(out, p)
			}
		}
		_ = d
	}
	for p, d := range out {
		if d == "" {
			if _, ok := g.files[p]; !ok {
				delete(out, p)
				continue
			}
			delete(g.files, p)
		} else {
			g.files[p] = d
		}
	}
	return out
}

func TestIndex_View(t *testing.T) {
	e := setup(t)
	c := e.commit(map[string]string{"a.md": "[[b]]", "b.md": "hello"})
	b := e.s.NewBatch()
	tree, err := b.Edit(e.ctx, c.Tree, []store.FileChange{{Path: "b.md", Delete: true}, {Path: "c.md", Data: []byte("[[a]]")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(e.ctx); err != nil {
		t.Fatal(err)
	}
	var inView []lint.Finding
	err = e.ix.View(e.ctx, nil, tree, func(r *index.Reader) error {
		var err error
		inView, err = r.Findings(e.ctx, index.FindingFilter{Rule: lint.BrokenLink})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inView) != 1 || inView[0].Page != "a.md" {
		t.Errorf("findings in the view = %+v, want a.md's broken link", inView)
	}
	// The view left nothing behind.
	now, _ := e.ix.Main().Findings(e.ctx, index.FindingFilter{Rule: lint.BrokenLink})
	if len(now) != 0 {
		t.Errorf("the view changed the index: %+v", now)
	}
	e.check()
	if !slices.Contains([]string{"a.md"}, inView[0].Page) {
		t.Fail()
	}
}

// TestIndex_Apply checks the findings delta Apply reports against the
// findings of the whole vault before and after, on random edit sequences.
func TestIndex_Apply(t *testing.T) {
	seeds, steps := 3, 25
	if testing.Short() {
		seeds, steps = 1, 10
	}
	keys := func(fs []lint.Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Key())
		}
		slices.Sort(out)
		return out
	}
	errRollback := fmt.Errorf("roll back")
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e := setup(t)
			g := newGen(uint64(100 + seed))
			for step := range steps {
				edits := g.edits()
				before, err := e.ix.Main().Findings(e.ctx, index.FindingFilter{})
				if err != nil {
					t.Fatal(err)
				}
				c := e.commit(edits)
				after, err := e.ix.Main().Findings(e.ctx, index.FindingFilter{})
				if err != nil {
					t.Fatal(err)
				}
				// Go back to the parent and apply the same change again,
				// this time through Apply, rolled back.
				parentTree := store.EmptyTree
				if len(c.Parents) > 0 {
					parent, err := e.s.ReadCommit(e.ctx, c.Parents[0])
					if err != nil {
						t.Fatal(err)
					}
					parentTree = parent.Tree
				}
				var d *index.Delta
				err = e.s.Update(e.ctx, func(tx *store.Tx) error {
					if _, err := e.ix.Apply(e.ctx, tx, parentTree); err != nil {
						return err
					}
					if d, err = e.ix.Apply(e.ctx, tx, c.Tree); err != nil {
						return err
					}
					return errRollback
				})
				if err != errRollback {
					t.Fatal(err)
				}
				if diff := cmp.Diff(keys(lint.New(before, after)), keys(d.New())); diff != "" {
					t.Fatalf("step %d: new findings (-whole vault +delta):\n%s", step, diff)
				}
				if diff := cmp.Diff(keys(lint.New(after, before)), keys(lint.New(d.Added, d.Removed))); diff != "" {
					t.Fatalf("step %d: findings gone (-whole vault +delta):\n%s", step, diff)
				}
			}
			e.check()
		})
	}
}

// TestIndex_SameName: files sharing a name are told apart as Obsidian
// does, by the linking page's folder and then by the shortest path, and
// the incremental index re-resolves a link when a page of that name comes
// or goes anywhere.
func TestIndex_SameName(t *testing.T) {
	e := setup(t)
	links := func(ref string) []string {
		t.Helper()
		ls, err := e.ix.Main().Links(e.ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range ls {
			out = append(out, fmt.Sprintf("%s -> %s %s %v", l.Raw, l.Status, l.To, l.Candidates))
		}
		return out
	}
	const (
		sync    = "Obsidian Sync/Security and privacy.md"
		publish = "Obsidian Publish/Security and privacy.md"
	)
	e.commit(map[string]string{
		sync:                             "# Security\n## Encryption\n",
		publish:                          "# Security\n",
		"Obsidian Sync/Headless Sync.md": "[[Security and privacy#Encryption]]",
		"Obsidian Publish/Custom.md":     "[[Security and privacy]]",
		"Home.md":                        "[[Security and privacy]]",
		"Obsidian Sync/deep/Ancestor.md": "[[Security and privacy]]",
	})
	e.check()
	want := []string{"[[Security and privacy#Encryption]] -> resolved " + sync + " []"}
	if diff := cmp.Diff(want, links("Obsidian Sync/Headless Sync.md")); diff != "" {
		t.Errorf("Links(Headless Sync) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"[[Security and privacy]] -> resolved " + publish + " []"}, links("Obsidian Publish/Custom.md")); diff != "" {
		t.Errorf("Links(Custom) mismatch (-want +got):\n%s", diff)
	}
	// From the root and from below a folder, the shortest path.
	chosen := "[[Security and privacy]] -> resolved " + sync + " [" + publish + " " + sync + "]"
	for _, ref := range []string{"Home.md", "Obsidian Sync/deep/Ancestor.md"} {
		if diff := cmp.Diff([]string{chosen}, links(ref)); diff != "" {
			t.Errorf("Links(%s) mismatch (-want +got):\n%s", ref, diff)
		}
	}
	wantFindings := func(want ...string) {
		t.Helper()
		var got []string
		for _, f := range e.findings() {
			if strings.Contains(f, "ambiguous-link") || strings.Contains(f, "missing-heading") {
				got = append(got, f)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("link findings mismatch (-want +got):\n%s", diff)
		}
	}
	wantFindings(`Home.md ambiguous-link info "Security and privacy"`,
		`Obsidian Sync/deep/Ancestor.md ambiguous-link info "Security and privacy"`)

	// A page of that name at the root is an exact path: it wins everywhere
	// but where the link names it by folder.
	e.commit(map[string]string{"Security and privacy.md": "# Root\n"})
	e.check()
	if diff := cmp.Diff([]string{"[[Security and privacy#Encryption]] -> resolved Security and privacy.md []"}, links("Obsidian Sync/Headless Sync.md")); diff != "" {
		t.Errorf("Links(Headless Sync) mismatch (-want +got):\n%s", diff)
	}
	wantFindings(`Obsidian Sync/Headless Sync.md missing-heading warning "Security and privacy#Encryption"`)
	// One in the linking page's folder, then gone again.
	e.commit(map[string]string{"Security and privacy.md": "", "Obsidian Sync/deep/Security and privacy.md": "x"})
	e.check()
	if diff := cmp.Diff([]string{"[[Security and privacy]] -> resolved Obsidian Sync/deep/Security and privacy.md []"}, links("Obsidian Sync/deep/Ancestor.md")); diff != "" {
		t.Errorf("Links(Ancestor) mismatch (-want +got):\n%s", diff)
	}
	e.commit(map[string]string{"Obsidian Sync/deep/Security and privacy.md": ""})
	e.check()
	wantFindings(`Home.md ambiguous-link info "Security and privacy"`,
		`Obsidian Sync/deep/Ancestor.md ambiguous-link info "Security and privacy"`)
}

// TestIndex_ManyNamesakes: a link to a name a hundred files share keeps
// the first markdown.MaxCandidates of them and a count, in its stored row
// and in lint's message, and the incremental index agrees with a rebuild
// as namesakes come and go.
func TestIndex_ManyNamesakes(t *testing.T) {
	e := setup(t)
	files := map[string]string{"notes/a.md": "[[index]]", "notes/b.md": "[[index]]"}
	for i := range 100 {
		files[fmt.Sprintf("t%03d/index.md", i)] = "# Index\n"
	}
	e.commit(files)
	e.check()
	ls, err := e.ix.Main().Links(e.ctx, "notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	// All equally short: the first in byte order, chosen among them.
	if len(ls) != 1 || ls[0].To != "t000/index.md" || len(ls[0].Candidates) != markdown.MaxCandidates || ls[0].MoreCandidates != 100-markdown.MaxCandidates {
		t.Fatalf("Links(notes/a.md) = %+v, want one link to t000/index.md among %d candidates and %d more", ls, markdown.MaxCandidates, 100-markdown.MaxCandidates)
	}
	fs, err := e.ix.Main().Findings(e.ctx, index.FindingFilter{Rule: "ambiguous-link"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || !strings.Contains(fs[0].Message, "t009/index.md and 90 more;") || strings.Contains(fs[0].Message, "t010/") {
		t.Fatalf("findings = %+v, want two naming t000–t009 and 90 more", fs)
	}
	// One shorter namesake: the links lead there, and it is listed first.
	e.commit(map[string]string{"a/index.md": "# Home\n", "t050/index.md": ""})
	e.check()
	if ls, err = e.ix.Main().Links(e.ctx, "notes/b.md"); err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].To != "a/index.md" || len(ls[0].Candidates) == 0 || ls[0].Candidates[0] != "a/index.md" ||
		ls[0].MoreCandidates != 100-markdown.MaxCandidates {
		t.Fatalf("Links(notes/b.md) = %+v, want a/index.md among %d and %d more", ls, markdown.MaxCandidates, 100-markdown.MaxCandidates)
	}
}

// TestReader_SearchSnippet: a snippet is the page's text as written, its
// own Markdown included, and the matches are byte offsets into it.
func TestReader_SearchSnippet(t *testing.T) {
	e := setup(t)
	long := strings.Repeat("filler words here ", 20)
	e.commit(map[string]string{
		"a.md": "---\ntitle: Gardens\n---\n" + long + "\nThe **quantum**   gardener's *Quantum*\tgardens: [[x|Gärden]] grow.\n\n" + long,
	})
	res, err := e.ix.Main().Search(e.ctx, index.SearchQuery{Text: "quantum gard*"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("Search = %+v, want one result", res)
	}
	s := res[0]
	if strings.Contains(s.Snippet, "  ") || strings.ContainsAny(s.Snippet, "\t\n") {
		t.Errorf("Snippet %q has white space runs", s.Snippet)
	}
	if !strings.Contains(s.Snippet, "The **quantum** gardener's *Quantum* gardens: Gärden grow.") {
		t.Errorf("Snippet = %q, want the page's text as written", s.Snippet)
	}
	var got []string
	for _, m := range s.Matches {
		if m[0] < 0 || m[0] >= m[1] || m[1] > len(s.Snippet) {
			t.Fatalf("Matches %v out of Snippet %q", s.Matches, s.Snippet)
		}
		got = append(got, s.Snippet[m[0]:m[1]])
	}
	want := []string{"quantum", "gardener", "Quantum", "gardens", "Gärden"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the matches in %q (-want +got):\n%s", s.Snippet, diff)
	}
}

// TestReader_SearchPages: pages of results, by offset, are the slices of
// one long result, with or without a phrase; an offset past the depth
// is EINVALID.
func TestReader_SearchPages(t *testing.T) {
	e := setup(t)
	files := map[string]string{}
	for i := range 23 {
		files[fmt.Sprintf("p%02d.md", i)] = fmt.Sprintf("---\ntitle: Page %d\n---\n%s movable type press\n", i, strings.Repeat("word ", i))
	}
	e.commit(files)
	for _, text := range []string{"movable", `"movable type"`} {
		all, err := e.ix.Main().Search(e.ctx, index.SearchQuery{Text: text, Limit: 100})
		if err != nil || len(all) != 23 {
			t.Fatalf("Search(%s) = %d results, %v; want 23", text, len(all), err)
		}
		var paged []string
		for off := 0; off < len(all); off += 5 {
			page, err := e.ix.Main().Search(e.ctx, index.SearchQuery{Text: text, Limit: 5, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				paged = append(paged, r.Path)
			}
		}
		var want []string
		for _, r := range all {
			want = append(want, r.Path)
		}
		if diff := cmp.Diff(want, paged); diff != "" {
			t.Errorf("Search(%s) in pages of 5 (-whole +paged):\n%s", text, diff)
		}
	}
	for _, off := range []int{-1, 991} {
		if _, err := e.ix.Main().Search(e.ctx, index.SearchQuery{Text: "movable", Limit: 10, Offset: off}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Search(offset %d) = %v, want EINVALID", off, err)
		}
	}
}

// TestIndex_LintStrict: cairn.yaml changes lint only by its lint.strict
// key; an Eva brain (eva.json) is strict. The index follows either
// incrementally and agrees with a rebuild.
func TestIndex_LintStrict(t *testing.T) {
	e := setup(t)
	severities := func() []string {
		t.Helper()
		var out []string
		for _, f := range e.findings() {
			if strings.Contains(f, "missing-title") || strings.Contains(f, "orphan") {
				out = append(out, f)
			}
		}
		return out
	}
	plain := []string{`notes/a.md missing-title info "title"`, `notes/a.md orphan info ""`}
	strict := []string{`notes/a.md missing-title warning "title"`, `notes/a.md orphan warning ""`}
	for _, step := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"Plain", map[string]string{"notes/a.md": "no frontmatter\n"}, plain},
		{"OtherSetting", map[string]string{"cairn.yaml": "agent:\n  timeout: 10m\n"}, plain},
		{"Strict", map[string]string{"cairn.yaml": "agent:\n  timeout: 10m\nlint:\n  strict: true\n"}, strict},
		{"PageEditedWhileStrict", map[string]string{"notes/a.md": "still no frontmatter\n"}, strict},
		{"NotStrict", map[string]string{"cairn.yaml": "lint:\n  strict: false\n"}, plain},
		{"StrictAgain", map[string]string{"cairn.yaml": "lint: {strict: yes}\n"}, strict},
		{"Removed", map[string]string{"cairn.yaml": ""}, plain},
		{"EvaBrain", map[string]string{"eva.json": "{}"}, strict},
		{"EvaBrainNotStrictInCairn", map[string]string{"cairn.yaml": "lint:\n  strict: false\n"}, strict},
		{"EvaGone", map[string]string{"eva.json": ""}, plain},
	} {
		e.commit(step.files)
		e.check()
		if diff := cmp.Diff(step.want, severities()); diff != "" {
			t.Errorf("%s: findings mismatch (-want +got):\n%s", step.name, diff)
		}
	}
}

func TestIndex_Types(t *testing.T) {
	e := setup(t)
	schemaFindings := func() []string {
		t.Helper()
		var out []string
		for _, f := range e.findings() {
			if strings.Contains(f, " schema-") || strings.Contains(f, " invalid-type ") {
				out = append(out, f)
			}
		}
		return out
	}
	const person = "---\ntitle: Person\nrequires: [name]\nfields:\n  name: string\n  employer: link to organization\n---\nA person.\n"
	for _, step := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"Declared", map[string]string{
			"types/person.md":       person,
			"types/organization.md": "---\nfields:\n  name: string\n---\n",
			"people/ann.md":         "---\ntype: person\n---\n",
			"acme.md":               "---\ntype: note\n---\n",
		}, []string{`people/ann.md schema-required error "name"`}},
		{"Fixed", map[string]string{"people/ann.md": "---\ntype: person\nname: Ann\n---\n"}, nil},
		{"LinkToWrongType", map[string]string{"people/ann.md": "---\ntype: person\nname: Ann\nemployer: \"[[acme]]\"\n---\n"},
			[]string{`people/ann.md schema-link error "employer"`}},
		{"TargetChangesType", map[string]string{"acme.md": "---\ntype: organization\n---\n"}, nil},
		{"TargetChangesBack", map[string]string{"acme.md": "---\ntype: note\n---\nnow a note\n"}, []string{`people/ann.md schema-link error "employer"`}},
		{"TargetGone", map[string]string{"acme.md": ""}, []string{`people/ann.md schema-link error "employer"`}},
		{"TargetBack", map[string]string{"acme.md": "---\ntype: organization\n---\n"}, nil},
		{"TypeRequiresMore", map[string]string{"types/person.md": strings.Replace(person, "[name]", "[name, born]", 1)},
			[]string{`people/ann.md schema-required error "born"`}},
		{"TypeBroken", map[string]string{"types/person.md": "---\nextends: person\n---\n"},
			[]string{`types/person.md invalid-type error "extends"`}},
		{"TypeBack", map[string]string{"types/person.md": person}, nil},
		{"ParentAdded", map[string]string{"types/person.md": strings.Replace(person, "title: Person", "title: Person\nextends: entity", 1),
			"types/entity.md": "---\nrequires: [source]\n---\n"}, []string{`people/ann.md schema-required error "source"`}},
		{"ParentChanged", map[string]string{"types/entity.md": "---\nfields:\n  source: string\n---\n"}, nil},
		{"ParentGone", map[string]string{"types/entity.md": ""}, []string{`types/person.md invalid-type error "extends"`}},
		{"Undeclared", map[string]string{"types/person.md": "", "people/bob.md": "---\ntype: person\n---\n"}, nil},
		{"YAMLDeclaration", map[string]string{"types/person.yaml": "requires: [name]\n"}, []string{`people/bob.md schema-required error "name"`}},
	} {
		e.commit(step.files)
		e.check()
		if diff := cmp.Diff(step.want, schemaFindings()); diff != "" {
			t.Errorf("%s: findings mismatch (-want +got):\n%s", step.name, diff)
		}
	}
	// A declaration is no page of the wiki: no orphan or missing type.
	for _, f := range e.findings() {
		if strings.HasPrefix(f, "types/") {
			t.Errorf("a declaration got %s", f)
		}
	}
}

func TestIndex_DeclaredTypes(t *testing.T) {
	e := setup(t)
	undeclared := func() []string {
		t.Helper()
		var out []string
		for _, f := range e.findings() {
			if strings.Contains(f, " undeclared-type ") {
				out = append(out, f)
			}
		}
		return out
	}
	for _, step := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"OpenWorld", map[string]string{"notes/a.md": "---\ntitle: A\ntype: musing\n---\n", "notes/b.md": "---\ntitle: B\ntype: person\n---\n"}, nil},
		{"VaultAsks", map[string]string{"cairn.yaml": "lint:\n  types: declared\n"},
			[]string{`notes/a.md undeclared-type info "musing"`, `notes/b.md undeclared-type info "person"`}},
		{"Declared", map[string]string{"types/person.md": "---\nfields:\n  born: date\n---\n"}, []string{`notes/a.md undeclared-type info "musing"`}},
		{"Undeclared", map[string]string{"types/person.md": ""}, []string{`notes/a.md undeclared-type info "musing"`, `notes/b.md undeclared-type info "person"`}},
		{"VaultStopsAsking", map[string]string{"cairn.yaml": "lint:\n  strict: false\n"}, nil},
	} {
		e.commit(step.files)
		e.check()
		if diff := cmp.Diff(step.want, undeclared()); diff != "" {
			t.Errorf("%s: findings mismatch (-want +got):\n%s", step.name, diff)
		}
	}
}

func TestReader_Where(t *testing.T) {
	e := setup(t)
	page := func(title, fm string) string { return "---\ntitle: " + title + "\n" + fm + "---\n# " + title + "\n" }
	e.commit(map[string]string{
		"a.md": page("A", "type: decision\nstatus: done\nyear: 2019\ntags: [ink, paper]\nupdated: 2026-01-05\n"),
		"b.md": page("B", "type: decision\nstatus: open\nyear: 2021\ntags: [Ink]\nupdated: 2026-03-01\n"),
		"c.md": page("C", "type: note\nstatus: done\nyear: '2023'\nowner: ada\n"),
		"d.md": page("D", "type: decision\nyear: 2020.5\ncode: '007'\n"),
		"e.md": "no frontmatter\n",
	})
	for _, tc := range []struct {
		typ   string
		where []string
		want  []string
	}{
		{"", []string{"status = done"}, []string{"a.md", "c.md"}},
		{"decision", []string{"status = done"}, []string{"a.md"}},
		{"", []string{"status != done"}, []string{"b.md"}},
		{"", []string{"year >= 2020"}, []string{"b.md", "c.md", "d.md"}},
		{"", []string{"year = 2023"}, []string{"c.md"}},
		{"", []string{"year < 2020.5", "status = done"}, []string{"a.md"}},
		{"", []string{"updated < 2026-02"}, []string{"a.md"}},
		{"", []string{"tags ~ INK"}, []string{"a.md", "b.md"}},
		{"", []string{"tags = ink"}, []string{"a.md"}},
		{"", []string{"owner"}, []string{"c.md"}},
		{"", []string{"code = 007"}, []string{"d.md"}},
		{"", []string{"code = 7"}, nil},
		{"", []string{"title = B"}, []string{"b.md"}},
		{"", []string{"nothing"}, nil},
		{"", []string{"year > 2019", "year < 2021.5"}, []string{"b.md", "d.md"}}, // one range, one value in it
		{"", []string{"tags = ink", "tags = paper"}, []string{"a.md"}},           // two items of a list
	} {
		var where []index.FieldQuery
		for _, w := range tc.where {
			q, err := index.ParseWhere(w)
			if err != nil {
				t.Fatal(err)
			}
			where = append(where, q)
		}
		ts, err := e.ix.Main().Where(e.ctx, tc.typ, where)
		if err != nil {
			t.Fatalf("%v: %v", tc.where, err)
		}
		var got []string
		for _, p := range ts {
			got = append(got, p.Path)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Where(%q, %v) = %v, want %v", tc.typ, tc.where, got, tc.want)
		}
	}
	// An edit and a deletion update the rows; the index equals a rebuild.
	e.commit(map[string]string{"a.md": page("A", "type: decision\nstatus: open\n"), "c.md": ""})
	e.check()
	ts, err := e.ix.Main().Where(e.ctx, "", []index.FieldQuery{{Name: "status", Op: index.OpEq, Value: "open"}})
	if err != nil || len(ts) != 2 || ts[0].Path != "a.md" || ts[1].Path != "b.md" {
		t.Errorf("after the edit: %v %v", ts, err)
	}
	for _, bad := range []string{"", "a b", "x =", "= y", "x >= "} {
		if _, err := index.ParseWhere(bad); cairn.ErrorCode(err) != cairn.EINVALID || cairn.ErrorHint(err) == "" {
			t.Errorf("ParseWhere(%q) = %v, want EINVALID with a hint", bad, err)
		}
	}
}

// TestBacklinksPage reads the links into a page many others link to in
// parts: every part in order, the total with each, nothing past the end.
func TestBacklinksPage(t *testing.T) {
	e := setup(t)
	files := map[string]string{"hub.md": "---\ntitle: Hub\n---\nA page [[Hub]] links to itself."}
	for i := range 23 {
		body := "[[hub]]"
		if i%5 == 0 {
			body += " and again [[Hub#Top]]"
		}
		files[fmt.Sprintf("notes/n%02d.md", i)] = body
	}
	files["notes/none.md"] = "[[elsewhere]]"
	e.commit(files)
	r := e.ix.Main()
	all, err := r.Backlinks(e.ctx, "Hub")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 28 {
		t.Fatalf("Backlinks(Hub) gives %d links, want 28 (23 pages, 5 of them twice)", len(all))
	}
	var got []index.LinkInfo
	for off := 0; off < len(all); off += 5 {
		pg, err := r.BacklinksPage(e.ctx, "Hub", off, 5)
		if err != nil {
			t.Fatal(err)
		}
		if pg.Page != "hub.md" || pg.Total != len(all) {
			t.Fatalf("BacklinksPage(Hub, %d, 5) = page %q, total %d; want hub.md, %d", off, pg.Page, pg.Total, len(all))
		}
		if want := min(5, len(all)-off); len(pg.Links) != want {
			t.Fatalf("BacklinksPage(Hub, %d, 5) gives %d links, want %d", off, len(pg.Links), want)
		}
		got = append(got, pg.Links...)
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("the parts differ from Backlinks (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ off, limit, want int }{{0, 0, 28}, {26, 0, 2}, {28, 5, 0}, {1000, 5, 0}, {27, 100, 1}} {
		pg, err := r.BacklinksPage(e.ctx, "hub.md", c.off, c.limit)
		if err != nil || len(pg.Links) != c.want || pg.Total != 28 || pg.Links == nil {
			t.Errorf("BacklinksPage(hub, %d, %d) = %v, %v; want %d links of 28", c.off, c.limit, pg, err, c.want)
		}
	}
	if _, err := r.BacklinksPage(e.ctx, "no such page", 0, 5); cairn.ErrorCode(err) != cairn.ENOTFOUND {
		t.Errorf("BacklinksPage(no such page) = %v, want ENOTFOUND", err)
	}
}

// TestFindingsPage reads a vault's lint findings in parts: put together,
// the parts are every finding in FindingOrder, with paths and subjects
// that differ in case and in letters beyond ASCII (compared byte by byte
// on both backends), and the counts are those of every finding the
// filter keeps.
func TestFindingsPage(t *testing.T) {
	e := setup(t)
	files := map[string]string{}
	for i, name := range []string{"B.md", "a.md", "é/x.md", "Z/y.md", "c.md", "ä.md"} {
		files[name] = fmt.Sprintf("# Page %d\n\n[[Zeta]] [[alpha]] [[Émile]] [[beta]] [[Beta]] [[zeta#Top]] ![[zzz]] [[%d]]\n", i, i)
	}
	files["ok.md"] = "---\ntitle: Ok\ntype: concept\n---\n# Ok\n"
	e.commit(files)
	r := e.ix.Main()
	for _, f := range []index.FindingFilter{{}, {Min: lint.Warning}, {Min: lint.Error}, {Page: "é/x.md"}, {Page: "missing.md"}} {
		want, err := r.Findings(e.ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if f.Page == "" && f.Min == "" && len(want) < 30 {
			t.Fatalf("the vault has %d findings, want at least 30", len(want))
		}
		slices.SortFunc(want, index.FindingOrder)
		var got []lint.Finding
		for off := 0; ; off += 3 {
			pg, err := r.FindingsPage(e.ctx, f, off, 3)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(index.CountFindings(want), pg.Counts, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("FindingsPage(%+v, %d, 3) counts differ (-want +got):\n%s", f, off, diff)
			}
			if pg.Findings == nil || len(pg.Findings) > 3 {
				t.Fatalf("FindingsPage(%+v, %d, 3) gives %v", f, off, pg.Findings)
			}
			if len(pg.Findings) == 0 {
				break
			}
			got = append(got, pg.Findings...)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("FindingsPage(%+v) in parts of three differs from the findings in order (-want +got):\n%s", f, diff)
		}
		all, err := r.FindingsPage(e.ctx, f, 0, 0)
		if err != nil || !cmp.Equal(all.Findings, want, cmpopts.EquateEmpty()) {
			t.Errorf("FindingsPage(%+v, 0, 0) = %v, %v; want all %d", f, all, err, len(want))
		}
		// The same of a working set: the findings of its files only.
		set := []string{"a.md", "é/x.md", "missing.md", "ok.md"}
		in := slices.DeleteFunc(slices.Clone(want), func(x lint.Finding) bool { return !slices.Contains(set, x.Page) })
		pg, err := r.FindingsPageIn(e.ctx, set, f, 2, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(pg.Findings, index.Window(in, 2, 5), cmpopts.EquateEmpty()) || !cmp.Equal(pg.Counts, index.CountFindings(in), cmpopts.EquateEmpty()) {
			t.Errorf("FindingsPageIn(%v, %+v, 2, 5) = %+v, want %+v of %d", set, f, pg, index.Window(in, 2, 5), len(in))
		}
	}
}

// whileCommitting calls read, with the number of reads before it, until
// 60 commits made meanwhile on another goroutine, the i-th of files(i),
// have ended, and once more after.
func whileCommitting(e *env, files func(i int) map[string]string, read func(n int)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 60; i++ {
			e.commit(files(i))
		}
	}()
	for n, finished := 0, false; !finished; n++ {
		select {
		case <-done:
			finished = true
		default:
		}
		read(n)
	}
}

// TestFindingsPage_OneState reads a part of the findings while commits
// add more: each answer's counts add up to the findings of its part (a
// part large enough for all), the counts and the part being read from
// one state of the index.
func TestFindingsPage_OneState(t *testing.T) {
	e := setup(t)
	e.commit(map[string]string{"notes/n000.md": "[[missing-0]]"})
	r := e.ix.Main()
	whileCommitting(e, func(i int) map[string]string {
		return map[string]string{fmt.Sprintf("notes/n%03d.md", i): fmt.Sprintf("[[missing-%d]]", i)}
	}, func(read int) {
		// A limit, so that the storage counts and cuts (every finding
		// at once is read in one statement).
		p, err := r.FindingsPage(e.ctx, index.FindingFilter{}, 0, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Findings) != p.Total() {
			t.Fatalf("read %d: %d findings, counts adding up to %d", read, len(p.Findings), p.Total())
		}
	})
	if p, err := r.FindingsPage(e.ctx, index.FindingFilter{Rule: "broken-link"}, 0, 1_000_000); err != nil || len(p.Findings) != 61 || p.Total() != 61 {
		t.Errorf("after the commits, FindingsPage(broken-link) = %+v, %v; want 61 findings", p, err)
	}
}

// TestBacklinksPage_OneState reads a page's backlinks while commits add
// more: each answer's total is the number of its links, the count and the
// part being read from one state of the index.
func TestBacklinksPage_OneState(t *testing.T) {
	e := setup(t)
	e.commit(map[string]string{"hub.md": "# Hub\n", "notes/n000.md": "[[hub]]"})
	r := e.ix.Main()
	whileCommitting(e, func(i int) map[string]string {
		return map[string]string{fmt.Sprintf("notes/n%03d.md", i): "[[hub]]"}
	}, func(read int) {
		p, err := r.BacklinksPage(e.ctx, "hub", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Links) != p.Total {
			t.Fatalf("read %d: %d links, total %d", read, len(p.Links), p.Total)
		}
	})
	if p, err := r.BacklinksPage(e.ctx, "hub", 0, 0); err != nil || p.Total != 61 {
		t.Errorf("after the commits, BacklinksPage(hub) = %+v, %v; want 61 links", p, err)
	}
}
