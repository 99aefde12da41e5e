package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/admit"
	"cairn/app"
	"cairn/index"
	"cairn/lint"
	"cairn/store"
	"cairn/worktree"
)

// env is a vault with a working tree at main and two commits: first
// holds index.md, notes/a.md and notes/deep/b.md; second changes
// notes/a.md and adds notes/c.md.
type env struct {
	t             *testing.T
	ctx           context.Context
	a             *app.App
	dir           string
	first, second *cairn.Commit
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	a, err := initApp(t, ctx, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	e := &env{t: t, ctx: ctx, a: a, dir: dir}
	e.write("index.md", "# Home\n\n- [[Alpha]]\n- [[missing page]]\n")
	e.write("notes/a.md", "---\ntitle: Alpha\n---\n# Alpha\n\nMovable type came first. [[index]]\n")
	e.write("notes/deep/b.md", "# Beta\n\nDeep down.\n")
	e.first = e.commit("first")
	e.write("notes/a.md", "---\ntitle: Alpha\n---\n# Alpha\n\nMovable type came first, then presses. [[index]]\n")
	e.write("notes/c.md", "# Gamma\n\n[[Alpha]]\n")
	e.second = e.commit("second")
	return e
}

// write writes a file of the working tree's folder.
func (e *env) write(path, data string) {
	e.t.Helper()
	p := filepath.Join(e.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
	// A later mtime than any stat row, whatever the clock's resolution.
	later := time.Now().Add(time.Duration(len(data)+1) * time.Millisecond)
	os.Chtimes(p, later, later)
}

// commit records the folder's local edits on main through admission, as
// cairn commit does.
func (e *env) commit(msg string) *cairn.Commit {
	e.t.Helper()
	v := e.a.Vault()
	land := func(ctx context.Context, l *worktree.Landing) (*cairn.Commit, []cairn.Conflict, error) {
		out, err := v.Admit.Submit(ctx, admit.Request{
			Route: "commit", Base: l.Base, BaseTree: l.BaseTree, Tree: l.Tree, Batch: l.Batch,
			Principal: tester, Message: msg,
			Within: func(ctx context.Context, tx *store.Tx, out *admit.Outcome) error {
				if out.Admitted() {
					return l.Record(ctx, tx, out.Commit)
				}
				return nil
			},
		})
		if err != nil {
			return nil, nil, err
		}
		if !out.Admitted() {
			e.t.Fatalf("commit %q: not admitted: %+v", msg, out)
		}
		return out.Commit, out.Conflicts, nil
	}
	res, err := v.Trees.Commit(e.ctx, e.a.Tree(), worktree.CommitRequest{Message: msg, Principal: tester, Land: land})
	if err != nil {
		e.t.Fatalf("commit %q: %v", msg, err)
	}
	return res.Commit
}

const tester = cairn.Principal("user:tester")

// bare returns a bare vault with one commit on main.
func bare(t *testing.T) *app.App {
	t.Helper()
	ctx := t.Context()
	a, err := initApp(t, ctx, t.TempDir(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s := a.Vault().Store
	b := s.NewBatch()
	tree, err := b.BuildTree(ctx, []store.FileChange{{Path: "index.md", Data: []byte("# Home\n")}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Vault().Admit.Submit(ctx, admit.Request{Route: "commit", Tree: tree, Batch: b, Principal: tester, Message: "first"})
	if err != nil || !out.Admitted() {
		t.Fatalf("first commit of a bare vault: %+v, %v", out, err)
	}
	return a
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := cairn.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func TestApp_ReadFile(t *testing.T) {
	e := setup(t)
	t.Run("OK", func(t *testing.T) {
		f, err := e.a.ReadFile(e.ctx, "main~1", "notes/a.md")
		if err != nil {
			t.Fatal(err)
		}
		if f.Commit != e.first.Hash || f.Entry.Path != "notes/a.md" || !strings.Contains(f.Content, "came first. [[index]]") {
			t.Errorf("ReadFile(main~1, notes/a.md) = %+v, want the first commit's notes/a.md", f)
		}
		if f.Entry.Size != int64(len(f.Content)) {
			t.Errorf("ReadFile: entry size %d, content %d bytes", f.Entry.Size, len(f.Content))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.a.ReadFile(e.ctx, "main~1", "notes/c.md")
		wantCode(t, "ReadFile of a file added later", err, cairn.ENOTFOUND)
		_, err = e.a.ReadFile(e.ctx, "main", "NOTES/A.MD")
		wantCode(t, "ReadFile with another case", err, cairn.ENOTFOUND)
		_, err = e.a.ReadFile(e.ctx, "nobranch", "index.md")
		wantCode(t, "ReadFile at an unknown revision", err, cairn.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := e.a.ReadFile(e.ctx, "main", "../outside.md")
		wantCode(t, "ReadFile(../outside.md)", err, cairn.EINVALID)
		_, err = e.a.ReadFile(e.ctx, "", "index.md")
		wantCode(t, "ReadFile at an empty revision", err, cairn.EINVALID)
	})
}

func TestApp_List(t *testing.T) {
	e := setup(t)
	ids := func(l *app.Listing) []string {
		var out []string
		for _, le := range l.Entries {
			out = append(out, le.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name, rev, dir string
		recursive      bool
		want           []string
	}{
		{"Top", "main", "", false, []string{"notes/", "index.md"}},
		{"TopDot", "main", ".", false, []string{"notes/", "index.md"}},
		{"Folder", "main", "notes/", false, []string{"notes/deep/", "notes/a.md", "notes/c.md"}},
		{"FolderAnyCase", "main", "NOTES", false, []string{"notes/deep/", "notes/a.md", "notes/c.md"}},
		{"Recursive", "main", "notes", true, []string{"notes/a.md", "notes/c.md", "notes/deep/b.md"}},
		{"File", "main", "Notes/A.md", false, []string{"notes/a.md"}},
		{"Older", "main~1", "notes", false, []string{"notes/deep/", "notes/a.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := e.a.List(e.ctx, tc.rev, tc.dir, app.ListOptions{Recursive: tc.recursive})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(l)); diff != "" {
				t.Errorf("List(%q, %q) (-want +got):\n%s", tc.rev, tc.dir, diff)
			}
		})
	}
	t.Run("FolderSize", func(t *testing.T) {
		l, err := e.a.List(e.ctx, "main", "", app.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f := l.Entries[0]
		if f.Kind != "folder" || f.Files != 3 || f.Size == 0 || l.Commit != e.second.Hash {
			t.Errorf("List(main, top)[0] = %+v at %s, want the folder notes/ with 3 files at %s", f, l.Commit.Short(), e.second.Hash.Short())
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.a.List(e.ctx, "main", "nothing-here", app.ListOptions{})
		wantCode(t, "List(nothing-here)", err, cairn.ENOTFOUND)
		if h := cairn.ErrorHint(err); !strings.Contains(h, "cairn ls main:") {
			t.Errorf("List(nothing-here) hint %q, want it to name the revision", h)
		}
		_, err = e.a.List(e.ctx, "nobranch", "", app.ListOptions{})
		wantCode(t, "List at an unknown revision", err, cairn.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := e.a.List(e.ctx, "main", "../outside", app.ListOptions{})
		wantCode(t, "List(../outside)", err, cairn.EINVALID)
	})
}

func TestApp_Log(t *testing.T) {
	e := setup(t)
	hashes := func(cs []*cairn.Commit) []cairn.Hash {
		var out []cairn.Hash
		for _, c := range cs {
			out = append(out, c.Hash)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		rev  string
		opts app.LogOptions
		want []cairn.Hash
	}{
		{"All", "main", app.LogOptions{}, []cairn.Hash{e.second.Hash, e.first.Hash}},
		{"Limit", "main", app.LogOptions{Limit: 1}, []cairn.Hash{e.second.Hash}},
		{"Path", "main", app.LogOptions{Path: "notes/deep/b.md"}, []cairn.Hash{e.first.Hash}},
		{"FirstParent", "main", app.LogOptions{FirstParent: true}, []cairn.Hash{e.second.Hash, e.first.Hash}},
		{"Older", e.first.Hash.String(), app.LogOptions{}, []cairn.Hash{e.first.Hash}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := e.a.Log(e.ctx, tc.rev, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, hashes(cs)); diff != "" {
				t.Errorf("Log(%q, %+v) (-want +got):\n%s", tc.rev, tc.opts, diff)
			}
		})
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.a.Log(e.ctx, "nobranch", app.LogOptions{})
		wantCode(t, "Log(nobranch)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := e.a.Log(e.ctx, "main", app.LogOptions{Path: "../outside.md"})
		wantCode(t, "Log with a path outside the vault", err, cairn.EINVALID)
	})
}

func TestApp_ShowCommit(t *testing.T) {
	e := setup(t)
	t.Run("OK", func(t *testing.T) {
		d, err := e.a.ShowCommit(e.ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]cairn.ChangeKind{}
		for _, ch := range d.Changes {
			got[ch.Path] = ch.Kind
		}
		want := map[string]cairn.ChangeKind{"notes/a.md": cairn.Modified, "notes/c.md": cairn.Added}
		if d.Commit.Hash != e.second.Hash || !cmp.Equal(got, want) {
			t.Errorf("ShowCommit(main) = %s with %v, want %s with %v", d.Commit.Hash.Short(), got, e.second.Hash.Short(), want)
		}
	})
	t.Run("Root", func(t *testing.T) {
		d, err := e.a.ShowCommit(e.ctx, "main~1")
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Changes) != 3 {
			t.Errorf("ShowCommit(main~1) = %d changes, want the 3 files it added", len(d.Changes))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.a.ShowCommit(e.ctx, "nobranch")
		wantCode(t, "ShowCommit(nobranch)", err, cairn.ENOTFOUND)
	})
}

func TestApp_Diff(t *testing.T) {
	e := setup(t)
	e.write("index.md", "# Home, edited\n")
	paths := func(d *app.TreeDiff) map[string]cairn.ChangeKind {
		out := map[string]cairn.ChangeKind{}
		for _, ch := range d.Changes {
			out[ch.Path] = ch.Kind
		}
		return out
	}
	for _, tc := range []struct {
		name, from, to string
		want           map[string]cairn.ChangeKind
	}{
		{"Revisions", "main~1", "main", map[string]cairn.ChangeKind{"notes/a.md": cairn.Modified, "notes/c.md": cairn.Added}},
		{"RevisionAndFolder", "main~1", "", map[string]cairn.ChangeKind{"notes/a.md": cairn.Modified, "notes/c.md": cairn.Added, "index.md": cairn.Modified}},
		{"LocalEdits", "", "", map[string]cairn.ChangeKind{"index.md": cairn.Modified}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.a.Diff(e.ctx, tc.from, tc.to, app.DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, paths(d)); diff != "" {
				t.Errorf("Diff(%q, %q) (-want +got):\n%s", tc.from, tc.to, diff)
			}
		})
	}
	t.Run("Patch", func(t *testing.T) {
		d, err := e.a.Diff(e.ctx, "", "", app.DiffOptions{Patch: true})
		if err != nil {
			t.Fatal(err)
		}
		// The folder's content is not in the store: the diff's Files read it.
		p := d.Patches[0]
		if !strings.Contains(p, "+# Home, edited") || !strings.Contains(p, "--- a/index.md") {
			t.Errorf("Patch of the local edit = %q, want a unified diff of index.md", p)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.a.Diff(e.ctx, "main", "nobranch", app.DiffOptions{})
		wantCode(t, "Diff(main, nobranch)", err, cairn.ENOTFOUND)
		_, err = e.a.Diff(e.ctx, "nobranch", "", app.DiffOptions{})
		wantCode(t, "Diff(nobranch, folder)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := e.a.Diff(e.ctx, "", "main", app.DiffOptions{})
		wantCode(t, "Diff to a revision from nothing", err, cairn.EINVALID)
	})
	t.Run("ErrNoTree", func(t *testing.T) {
		a := bare(t)
		_, err := a.Diff(t.Context(), "main", "", app.DiffOptions{})
		wantCode(t, "Diff against the folder of a bare vault", err, cairn.EINVALID)
		if _, err := a.Diff(t.Context(), "main", "main", app.DiffOptions{}); err != nil {
			t.Errorf("Diff(main, main) in a bare vault: %v", err)
		}
	})
}

func TestApp_Status(t *testing.T) {
	e := setup(t)
	t.Run("Clean", func(t *testing.T) {
		st, err := e.a.Status(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Changes) != 0 || st.Head != e.second.Hash || st.Tree.Base != e.second.Hash || st.Tree.Branch != "main" {
			t.Errorf("Status() = %+v, want no changes on main at %s", st, e.second.Hash.Short())
		}
	})
	t.Run("Edits", func(t *testing.T) {
		e.write("index.md", "# Home, edited\n")
		e.write("new.md", "# New\n")
		if err := os.Remove(filepath.Join(e.dir, "notes/c.md")); err != nil {
			t.Fatal(err)
		}
		st, err := e.a.Status(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []worktree.Change{
			{Path: "index.md", Kind: cairn.Modified},
			{Path: "new.md", Kind: cairn.Added},
			{Path: "notes/c.md", Kind: cairn.Deleted},
		}
		if diff := cmp.Diff(want, st.Changes); diff != "" {
			t.Errorf("Status().Changes (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrNoTree", func(t *testing.T) {
		_, err := bare(t).Status(t.Context())
		wantCode(t, "Status of a bare vault", err, cairn.EINVALID)
	})
}

func TestApp_Search(t *testing.T) {
	e := setup(t)
	t.Run("OK", func(t *testing.T) {
		res, err := e.a.Search(e.ctx, index.SearchQuery{Text: "presses"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Path != "notes/a.md" || len(res[0].Matches) == 0 {
			t.Fatalf("Search(presses) = %+v, want notes/a.md with its matches", res)
		}
		m := res[0].Matches[0]
		if got := res[0].Snippet[m[0]:m[1]]; !strings.EqualFold(got, "presses") {
			t.Errorf("Search(presses): the match is %q, want presses", got)
		}
	})
	t.Run("Folder", func(t *testing.T) {
		res, err := e.a.Search(e.ctx, index.SearchQuery{Text: "movable", Folder: "elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 0 {
			t.Errorf("Search(movable, folder elsewhere) = %+v, want nothing", res)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := e.a.Search(e.ctx, index.SearchQuery{Text: "the"})
		wantCode(t, "Search with no words", err, cairn.EINVALID)
		_, err = e.a.Search(e.ctx, index.SearchQuery{Text: "movable", Limit: 101})
		wantCode(t, "Search with a limit of 101", err, cairn.EINVALID)
	})
}

func TestApp_Links(t *testing.T) {
	e := setup(t)
	t.Run("Links", func(t *testing.T) {
		ls, err := e.a.Links(e.ctx, "index")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ls {
			got = append(got, l.Status+" "+l.To)
		}
		if diff := cmp.Diff([]string{"resolved notes/a.md", "broken "}, got); diff != "" {
			t.Errorf("Links(index) (-want +got):\n%s", diff)
		}
	})
	t.Run("Backlinks", func(t *testing.T) {
		p, err := e.a.Backlinks(e.ctx, "Alpha", app.BacklinkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range p.Links {
			got = append(got, l.From)
		}
		if diff := cmp.Diff([]string{"index.md", "notes/c.md"}, got); diff != "" {
			t.Errorf("Backlinks(Alpha) (-want +got):\n%s", diff)
		}
		if p.Page != "notes/a.md" || p.Total != 2 {
			t.Errorf("Backlinks(Alpha) = page %q, total %d; want notes/a.md, 2", p.Page, p.Total)
		}
		// The second link alone, then nothing past the end.
		p, err = e.a.Backlinks(e.ctx, "Alpha", app.BacklinkOptions{Offset: 1, Limit: 1})
		if err != nil || len(p.Links) != 1 || p.Links[0].From != "notes/c.md" || p.Total != 2 {
			t.Errorf("Backlinks(Alpha, offset 1, limit 1) = %+v, %v; want notes/c.md's link of 2", p, err)
		}
		p, err = e.a.Backlinks(e.ctx, "Alpha", app.BacklinkOptions{Offset: 2})
		if err != nil || len(p.Links) != 0 || p.Links == nil || p.Total != 2 {
			t.Errorf("Backlinks(Alpha, offset 2) = %+v, %v; want no links of 2", p, err)
		}
		for _, o := range []app.BacklinkOptions{{Offset: -1}, {Limit: -5}} {
			_, err := e.a.Backlinks(e.ctx, "Alpha", o)
			wantCode(t, fmt.Sprintf("Backlinks(Alpha, %+v)", o), err, cairn.EINVALID)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.a.Links(e.ctx, "no such page")
		wantCode(t, "Links(no such page)", err, cairn.ENOTFOUND)
		_, err = e.a.Backlinks(e.ctx, "no such page", app.BacklinkOptions{})
		wantCode(t, "Backlinks(no such page)", err, cairn.ENOTFOUND)
	})
}

func TestApp_Lint(t *testing.T) {
	e := setup(t)
	broken := func(fs []lint.Finding) int {
		n := 0
		for _, f := range fs {
			if f.Rule == "broken-link" {
				n++
			}
		}
		return n
	}
	t.Run("Main", func(t *testing.T) {
		rep, err := e.a.Lint(e.ctx, app.LintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fs := rep.Findings
		if rep.Total != len(fs) || rep.Errors+rep.Warnings+rep.Infos != len(fs) || rep.Rules["broken-link"] != 1 {
			t.Errorf("Lint() counts %d findings (%d, %d, %d; rules %v) of %d", rep.Total, rep.Errors, rep.Warnings, rep.Infos, rep.Rules, len(fs))
		}
		// The same findings a part of two at a time, each with the counts
		// of them all.
		if len(fs) < 3 {
			t.Fatalf("Lint() = %d findings, too few to read in parts", len(fs))
		}
		var parts []lint.Finding
		for off := 0; off < len(fs); off += 2 {
			part, err := e.a.Lint(e.ctx, app.LintOptions{Offset: off, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			if part.Total != rep.Total || part.Warnings != rep.Warnings || len(part.Findings) != min(2, len(fs)-off) {
				t.Fatalf("Lint(offset %d, limit 2) = %d findings of %d, want %d of %d", off, len(part.Findings), part.Total, min(2, len(fs)-off), rep.Total)
			}
			parts = append(parts, part.Findings...)
		}
		if !slices.Equal(parts, fs) {
			t.Errorf("Lint in parts of two = %+v, want %+v", parts, fs)
		}
		if past, err := e.a.Lint(e.ctx, app.LintOptions{Offset: 1000}); err != nil || len(past.Findings) != 0 || past.Findings == nil || past.Total != rep.Total {
			t.Errorf("Lint(offset 1000) = %+v, %v; want no findings of %d", past, err, rep.Total)
		}
		if broken(fs) != 1 {
			t.Errorf("Lint() = %+v, want the one broken link of index.md", fs)
		}
		if !slices.ContainsFunc(fs, func(f lint.Finding) bool { return f.Page == "notes/c.md" }) {
			t.Errorf("Lint() = %+v, want a finding of notes/c.md (nothing links to it)", fs)
		}
	})
	t.Run("Filters", func(t *testing.T) {
		rep, err := e.a.Lint(e.ctx, app.LintOptions{Page: "notes/a.md", Rule: "broken-link"})
		if err != nil {
			t.Fatal(err)
		}
		if fs := rep.Findings; len(fs) != 0 || rep.Total != 0 {
			t.Errorf("Lint(page notes/a.md, rule broken-link) = %+v, want none", fs)
		}
		rep, err = e.a.Lint(e.ctx, app.LintOptions{Min: lint.Error})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Severity != lint.Error {
				t.Errorf("Lint(min error) gave %+v", f)
			}
		}
	})
	t.Run("At", func(t *testing.T) {
		// At the first commit notes/c.md, main's orphan, does not exist.
		rep, err := e.a.Lint(e.ctx, app.LintOptions{At: "main~1"})
		if err != nil {
			t.Fatal(err)
		}
		fs := rep.Findings
		for _, f := range fs {
			if f.Page == "notes/c.md" {
				t.Errorf("Lint(at main~1) has a finding of notes/c.md, added later: %+v", f)
			}
		}
		if broken(fs) != 1 {
			t.Errorf("Lint(at main~1) = %+v, want the one broken link of index.md", fs)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := e.a.Lint(e.ctx, app.LintOptions{Min: "fatal"})
		wantCode(t, "Lint(min fatal)", err, cairn.EINVALID)
		_, err = e.a.Lint(e.ctx, app.LintOptions{Offset: -1})
		wantCode(t, "Lint(offset -1)", err, cairn.EINVALID)
		_, err = e.a.Lint(e.ctx, app.LintOptions{Limit: -1})
		wantCode(t, "Lint(limit -1)", err, cairn.EINVALID)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.a.Lint(e.ctx, app.LintOptions{At: "nobranch"})
		wantCode(t, "Lint(at nobranch)", err, cairn.ENOTFOUND)
	})
}

// TestApp_SearchEmpty: a vault whose main holds no page finds nothing,
// without an error.
func TestApp_SearchEmpty(t *testing.T) {
	a, ctx := adminEmpty(t)
	if _, err := a.Adopt(ctx, ""); err != nil {
		t.Fatal(err)
	}
	res, err := a.Search(ctx, index.SearchQuery{Text: "anything"})
	if err != nil || len(res) != 0 {
		t.Errorf("Search(empty vault) = %v, %v; want no results", res, err)
	}
}
