package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/app"
)

// setupChanges returns a vault made in a temporary folder holding index.md
// and page.md, adopted as main's first commit, and a context in which
// user:ada acts.
func setupChanges(t *testing.T) (*app.App, context.Context) {
	t.Helper()
	dir := t.TempDir()
	writeChangesFile(t, dir, "index.md", "# Index\n\n- [[page]]\n")
	writeChangesFile(t, dir, "page.md", "# Page\n\nThe original line.\n")
	ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("ada"))
	a, err := initApp(t, ctx, dir, false, nil)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	res, err := a.Adopt(ctx, "start")
	if err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	if res.Commit == nil {
		t.Fatalf("Adopt: not admitted: %+v", res.Admission)
	}
	return a, ctx
}

func writeChangesFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readChangesFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// head returns the head commit of branch.
func changesHead(t *testing.T, a *app.App, branch string) *cairn.Commit {
	t.Helper()
	c, err := a.ResolveCommit(t.Context(), branch)
	if err != nil {
		t.Fatalf("ResolveCommit(%q): %v", branch, err)
	}
	return c
}

// commitOn commits files (content; "" deletes) on branch at its head.
func commitOnBranch(t *testing.T, a *app.App, ctx context.Context, branch string, files map[string]string, msg string) *cairn.Commit {
	t.Helper()
	var edits []app.FileEdit
	for p, c := range files {
		edits = append(edits, app.FileEdit{Path: p, Content: []byte(c), Delete: c == ""})
	}
	res, err := a.CommitChanges(ctx, app.ChangesRequest{Branch: branch, Base: changesHead(t, a, branch).Hash, Changes: edits, Message: msg})
	if err != nil {
		t.Fatalf("CommitChanges(%s, %q): %v", branch, msg, err)
	}
	if res.Commit == nil {
		t.Fatalf("CommitChanges(%s, %q): not admitted: %+v", branch, msg, res.Admission)
	}
	return res.Commit
}

func wantChangesCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := cairn.ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func changesRefNames(refs []cairn.Ref) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

func TestApp_Branches(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		ref, err := a.CreateBranch(ctx, "draft", "")
		if err != nil {
			t.Fatalf("CreateBranch: %v", err)
		}
		if ref.Name != "draft" || ref.Hash != main.Hash {
			t.Errorf("CreateBranch = %+v, want draft at %s", ref, main.Hash.Short())
		}
		refs, err := a.Branches(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"draft", "main"}, changesRefNames(refs)); diff != "" {
			t.Errorf("Branches (-want +got):\n%s", diff)
		}
		was, err := a.DeleteBranch(ctx, "draft", cairn.Hash{})
		if err != nil {
			t.Fatalf("DeleteBranch: %v", err)
		}
		if was != main.Hash {
			t.Errorf("DeleteBranch = %s, want %s", was.Short(), main.Hash.Short())
		}
		refs, _ = a.Branches(ctx)
		if diff := cmp.Diff([]string{"main"}, changesRefNames(refs)); diff != "" {
			t.Errorf("Branches after delete (-want +got):\n%s", diff)
		}
	})
	t.Run("FromRev", func(t *testing.T) {
		a, ctx := setupChanges(t)
		first := changesHead(t, a, "main")
		commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nLater.\n"}, "later")
		ref, err := a.CreateBranch(ctx, "old", first.Hash.String())
		if err != nil {
			t.Fatalf("CreateBranch: %v", err)
		}
		if ref.Hash != first.Hash {
			t.Errorf("CreateBranch(old, %s) at %s", first.Hash.Short(), ref.Hash.Short())
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.CreateBranch(t.Context(), "draft", "")
		wantChangesCode(t, "CreateBranch without principal", err, cairn.EUNAUTHORIZED)
		a.CreateBranch(ctx, "draft", "")
		_, err = a.DeleteBranch(t.Context(), "draft", cairn.Hash{})
		wantChangesCode(t, "DeleteBranch without principal", err, cairn.EUNAUTHORIZED)
	})
	t.Run("ErrBadRev", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.CreateBranch(ctx, "draft", "nope")
		wantChangesCode(t, "CreateBranch(from nope)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrBadName", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.CreateBranch(ctx, "bad name..", "")
		wantChangesCode(t, "CreateBranch(bad name)", err, cairn.EINVALID)
	})
	t.Run("ErrExists", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.CreateBranch(ctx, "main", "")
		wantChangesCode(t, "CreateBranch(main)", err, cairn.ECONFLICT)
	})
	t.Run("ErrDeleteMain", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.DeleteBranch(ctx, "main", cairn.Hash{})
		wantChangesCode(t, "DeleteBranch(main)", err, cairn.EINVALID)
	})
	t.Run("ErrDeleteMissing", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.DeleteBranch(ctx, "nope", cairn.Hash{})
		wantChangesCode(t, "DeleteBranch(nope)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrDeleteMoved", func(t *testing.T) {
		a, ctx := setupChanges(t)
		first := changesHead(t, a, "main")
		a.CreateBranch(ctx, "draft", "")
		moved := commitOnBranch(t, a, ctx, "draft", map[string]string{"page.md": "# Page\n\nOn draft.\n"}, "on draft")
		_, err := a.DeleteBranch(ctx, "draft", first.Hash)
		wantChangesCode(t, "DeleteBranch(draft, expected a stale head)", err, cairn.ECONFLICT)
		var m *app.Moved
		if !errors.As(err, &m) || m.Head != moved.Hash {
			t.Errorf("DeleteBranch(stale) = %v; want a *Moved with the head %s", err, moved.Hash.Short())
		}
		if _, err := a.DeleteBranch(ctx, "draft", moved.Hash); err != nil {
			t.Errorf("DeleteBranch(draft, its head) = %v", err)
		}
	})
	t.Run("ErrHeldByWorktree", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		if _, err := a.AddWorktree(ctx, filepath.Join(t.TempDir(), "draft"), "draft"); err != nil {
			t.Fatal(err)
		}
		_, err := a.DeleteBranch(ctx, "draft", cairn.Hash{})
		wantChangesCode(t, "DeleteBranch(held by a working tree)", err, cairn.ECONFLICT)
		if cairn.ErrorHint(err) == "" {
			t.Errorf("DeleteBranch(held by a working tree): no hint")
		}
	})
}

func TestApp_Tags(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		ref, err := a.CreateTag(ctx, "v1", "", "first")
		if err != nil {
			t.Fatalf("CreateTag: %v", err)
		}
		if ref.Hash != main.Hash {
			t.Errorf("CreateTag(v1) at %s, want %s", ref.Hash.Short(), main.Hash.Short())
		}
		tags, err := a.Tags(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"v1"}, changesRefNames(tags)); diff != "" {
			t.Errorf("Tags (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, _ := setupChanges(t)
		_, err := a.CreateTag(t.Context(), "v1", "", "")
		wantChangesCode(t, "CreateTag without principal", err, cairn.EUNAUTHORIZED)
	})
	t.Run("ErrBadRev", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.CreateTag(ctx, "v1", "nope", "")
		wantChangesCode(t, "CreateTag(at nope)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrNeverMoves", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateTag(ctx, "v1", "", "")
		commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nLater.\n"}, "later")
		_, err := a.CreateTag(ctx, "v1", "main", "")
		wantChangesCode(t, "CreateTag(v1 again)", err, cairn.ECONFLICT)
	})
}

func TestApp_Merge(t *testing.T) {
	t.Run("FastForward", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		a.CreateBranch(ctx, "topic", "")
		c := commitOnBranch(t, a, ctx, "topic", map[string]string{"new.md": "# New\n"}, "topic adds new")
		res, err := a.Merge(ctx, app.MergeRequest{Branch: "topic", Into: "draft"})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if !res.FastForward || res.Commit == nil || res.Commit.Hash != c.Hash {
			t.Errorf("Merge(topic into draft) = %+v, want a fast-forward to %s", res, c.Hash.Short())
		}
		if got := changesHead(t, a, "draft").Hash; got != c.Hash {
			t.Errorf("draft at %s, want %s", got.Short(), c.Hash.Short())
		}
	})
	t.Run("IntoMain", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		a.CreateBranch(ctx, "draft", "")
		d := commitOnBranch(t, a, ctx, "draft", map[string]string{"new.md": "# New\n"}, "draft adds new")
		res, err := a.Merge(ctx, app.MergeRequest{Branch: "draft"})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if res.Into != "main" || res.Commit == nil || res.FastForward || res.Admission == nil || !res.Admission.Admitted() {
			t.Fatalf("Merge(draft) = %+v, want an admitted merge commit into main", res)
		}
		if diff := cmp.Diff([]cairn.Hash{main.Hash, d.Hash}, res.Commit.Parents); diff != "" {
			t.Errorf("merge commit's parents (-want +got):\n%s", diff)
		}
		if got := readChangesFile(t, a.Root(), "new.md"); got != "# New\n" {
			t.Errorf("new.md in the folder = %q", got)
		}
		if res.Sync == nil || len(res.Sync.Updated) != 1 {
			t.Errorf("Sync = %+v, want new.md updated", res.Sync)
		}
	})
	t.Run("UpToDate", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		main := changesHead(t, a, "main")
		res, err := a.Merge(ctx, app.MergeRequest{Branch: "draft"})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if !res.UpToDate || res.Commit.Hash != main.Hash {
			t.Errorf("Merge(draft) = %+v, want up to date at %s", res, main.Hash.Short())
		}
	})
	t.Run("Conflicts", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		commitOnBranch(t, a, ctx, "draft", map[string]string{"page.md": "# Page\n\nDraft says that.\n"}, "draft rewrites")
		m := commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nMain says this.\n"}, "main rewrites")
		res, err := a.Merge(ctx, app.MergeRequest{Branch: "draft"})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if len(res.Conflicts) != 1 || res.Commit != nil {
			t.Errorf("Merge(draft) = %+v, want 1 conflict and no commit", res)
		}
		if got := changesHead(t, a, "main").Hash; got != m.Hash {
			t.Errorf("main moved to %s", got.Short())
		}
	})
	t.Run("Held", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		a.CreateBranch(ctx, "draft", "")
		commitOnBranch(t, a, ctx, "draft", map[string]string{"raw/source.md": "a source\n"}, "draft adds a source")
		res, err := a.Merge(ctx, app.MergeRequest{Branch: "draft"})
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		if res.Commit != nil || res.Admission == nil || res.Admission.Proposal == nil || res.Admission.Proposal.Status != cairn.ProposalHeld {
			t.Errorf("Merge(draft with raw/) = %+v, want held", res)
		}
		if got := changesHead(t, a, "main").Hash; got != main.Hash {
			t.Errorf("main moved to %s", got.Short())
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		_, err := a.Merge(t.Context(), app.MergeRequest{Branch: "draft"})
		wantChangesCode(t, "Merge without principal", err, cairn.EUNAUTHORIZED)
	})
	t.Run("ErrBadBranch", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.Merge(ctx, app.MergeRequest{Branch: "nope"})
		wantChangesCode(t, "Merge(nope)", err, cairn.ENOTFOUND)
		_, err = a.Merge(ctx, app.MergeRequest{Branch: "main", Into: "nope"})
		wantChangesCode(t, "Merge(into nope)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrNoBranch", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.Merge(ctx, app.MergeRequest{})
		wantChangesCode(t, "Merge()", err, cairn.EINVALID)
	})
}

func TestApp_Revert(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := setupChanges(t)
		c := commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nRewritten.\n"}, "rewrite")
		res, err := a.Revert(ctx, app.RevertRequest{Commit: "main"})
		if err != nil {
			t.Fatalf("Revert: %v", err)
		}
		if res.Commit == nil || res.Nothing || res.Reverted.Hash != c.Hash || res.Admission == nil || !res.Admission.Admitted() {
			t.Fatalf("Revert(main) = %+v, want an admitted revert of %s", res, c.Hash.Short())
		}
		if got := res.Commit.Meta["revert"]; got != c.Hash.String() {
			t.Errorf("revert commit's meta revert = %q, want %s", got, c.Hash)
		}
		if got := readChangesFile(t, a.Root(), "page.md"); got != "# Page\n\nThe original line.\n" {
			t.Errorf("page.md in the folder = %q", got)
		}
	})
	t.Run("Nothing", func(t *testing.T) {
		a, ctx := setupChanges(t)
		c := commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nRewritten.\n"}, "rewrite")
		if _, err := a.Revert(ctx, app.RevertRequest{Commit: c.Hash.String()}); err != nil {
			t.Fatal(err)
		}
		now := changesHead(t, a, "main")
		res, err := a.Revert(ctx, app.RevertRequest{Commit: c.Hash.String()})
		if err != nil {
			t.Fatalf("Revert again: %v", err)
		}
		if !res.Nothing || res.Commit.Hash != now.Hash {
			t.Errorf("Revert again = %+v, want nothing to revert", res)
		}
	})
	t.Run("KeepsLog", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		commitOnBranch(t, a, ctx, "draft", map[string]string{"log.md": "# Log\n\n- one\n"}, "log starts")
		c := commitOnBranch(t, a, ctx, "draft", map[string]string{"log.md": "# Log\n\n- one\n- two\n", "page.md": "# Page\n\nTwo.\n"}, "two")
		res, err := a.Revert(ctx, app.RevertRequest{Commit: c.Hash.String(), Branch: "draft"})
		if err != nil {
			t.Fatalf("Revert: %v", err)
		}
		if res.Commit == nil || res.Admission != nil {
			t.Fatalf("Revert(on draft) = %+v, want a plain commit", res)
		}
		f, err := a.Vault().Store.Get(ctx, res.Commit.Tree, "log.md")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := a.Vault().Store.ReadBlob(ctx, f.Blob)
		if string(data) != "# Log\n\n- one\n- two\n" {
			t.Errorf("log.md after the revert = %q, want it kept", data)
		}
	})
	t.Run("Conflicts", func(t *testing.T) {
		a, ctx := setupChanges(t)
		c := commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nRewritten.\n"}, "rewrite")
		later := commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nRewritten again.\n"}, "again")
		res, err := a.Revert(ctx, app.RevertRequest{Commit: c.Hash.String()})
		if err != nil {
			t.Fatalf("Revert: %v", err)
		}
		if len(res.Conflicts) == 0 || res.Commit != nil {
			t.Errorf("Revert = %+v, want conflicts", res)
		}
		if got := changesHead(t, a, "main").Hash; got != later.Hash {
			t.Errorf("main moved to %s", got.Short())
		}
	})
	t.Run("ErrOutsideHistory", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		d := commitOnBranch(t, a, ctx, "draft", map[string]string{"new.md": "# New\n"}, "draft adds new")
		_, err := a.Revert(ctx, app.RevertRequest{Commit: d.Hash.String(), Branch: "main"})
		wantChangesCode(t, "Revert(a draft commit on main)", err, cairn.EINVALID)
		if cairn.ErrorHint(err) == "" {
			t.Errorf("Revert(a draft commit on main): no hint")
		}
	})
	t.Run("ErrFirstCommit", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.Revert(ctx, app.RevertRequest{Commit: "main"})
		wantChangesCode(t, "Revert(the first commit)", err, cairn.EINVALID)
	})
	t.Run("ErrBadRev", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.Revert(ctx, app.RevertRequest{Commit: "nope"})
		wantChangesCode(t, "Revert(nope)", err, cairn.ENOTFOUND)
		commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nRewritten.\n"}, "rewrite")
		_, err = a.Revert(ctx, app.RevertRequest{Commit: "main", Branch: "nope"})
		wantChangesCode(t, "Revert(on nope)", err, cairn.ENOTFOUND)
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, _ := setupChanges(t)
		_, err := a.Revert(t.Context(), app.RevertRequest{Commit: "main"})
		wantChangesCode(t, "Revert without principal", err, cairn.EUNAUTHORIZED)
	})
}
