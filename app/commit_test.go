package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/app"
)

func TestApp_CommitEdits(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		writeChangesFile(t, a.Root(), "page.md", "# Page\n\nEdited.\n")
		writeChangesFile(t, a.Root(), "other.md", "# Other\n")
		res, err := a.CommitEdits(ctx, app.CommitEditsRequest{Message: "edit the page", Paths: []string{"page.md"}})
		if err != nil {
			t.Fatalf("CommitEdits: %v", err)
		}
		if res.Commit == nil || res.Branch != "main" || res.Admission == nil || !res.Admission.Admitted() {
			t.Fatalf("CommitEdits = %+v, want an admitted commit on main", res)
		}
		if len(res.Changes) != 1 || res.Changes[0].Path != "page.md" {
			t.Errorf("CommitEdits changes = %+v, want page.md only", res.Changes)
		}
		if diff := cmp.Diff([]cairn.Hash{main.Hash}, res.Commit.Parents); diff != "" {
			t.Errorf("commit's parents (-want +got):\n%s", diff)
		}
		if got := changesHead(t, a, "main").Hash; got != res.Commit.Hash {
			t.Errorf("main at %s, want %s", got.Short(), res.Commit.Hash.Short())
		}
	})
	t.Run("OnBranch", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		dir := filepath.Join(t.TempDir(), "draft")
		if _, err := a.AddWorktree(ctx, dir, "draft"); err != nil {
			t.Fatal(err)
		}
		d, err := app.Open(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		writeChangesFile(t, dir, "page.md", "# Page\n\nDraft.\n")
		res, err := d.CommitEdits(ctx, app.CommitEditsRequest{Message: "draft"})
		if err != nil {
			t.Fatalf("CommitEdits: %v", err)
		}
		if res.Branch != "draft" || res.Commit == nil || res.Admission != nil {
			t.Errorf("CommitEdits(in draft) = %+v, want a plain commit on draft", res)
		}
	})
	t.Run("Held", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		writeChangesFile(t, a.Root(), "raw/source.md", "a source\n")
		res, err := a.CommitEdits(ctx, app.CommitEditsRequest{Message: "add a source by hand"})
		if err != nil {
			t.Fatalf("CommitEdits: %v", err)
		}
		if res.Commit != nil || res.Admission == nil || res.Admission.Proposal == nil || res.Admission.Proposal.Status != cairn.ProposalHeld {
			t.Errorf("CommitEdits(raw/) = %+v, want held", res)
		}
		if got := changesHead(t, a, "main").Hash; got != main.Hash {
			t.Errorf("main moved to %s", got.Short())
		}
	})
	t.Run("ErrNoMessage", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.CommitEdits(ctx, app.CommitEditsRequest{})
		wantChangesCode(t, "CommitEdits without message", err, cairn.EINVALID)
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, _ := setupChanges(t)
		_, err := a.CommitEdits(t.Context(), app.CommitEditsRequest{Message: "why"})
		wantChangesCode(t, "CommitEdits without principal", err, cairn.EUNAUTHORIZED)
	})
	t.Run("ErrNoTree", func(t *testing.T) {
		ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("ada"))
		a, err := initApp(t, ctx, t.TempDir(), true, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if _, err := a.Adopt(ctx, ""); err != nil {
			t.Fatal(err)
		}
		_, err = a.CommitEdits(ctx, app.CommitEditsRequest{Message: "why"})
		wantChangesCode(t, "CommitEdits in a bare vault", err, cairn.EINVALID)
	})
}

func TestApp_Adopt(t *testing.T) {
	t.Run("Files", func(t *testing.T) {
		a, _ := setupChanges(t)
		c := changesHead(t, a, "main")
		if c.Message != "start" || len(c.Parents) != 0 {
			t.Errorf("first commit = %q with %d parents, want \"start\" with none", c.Message, len(c.Parents))
		}
	})
	t.Run("Empty", func(t *testing.T) {
		ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("ada"))
		a, err := initApp(t, ctx, t.TempDir(), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		res, err := a.Adopt(ctx, "")
		if err != nil {
			t.Fatalf("Adopt: %v", err)
		}
		if res.Commit == nil || res.Commit.Message != "init" || len(res.Changes) != 0 || res.Admission != nil {
			t.Errorf("Adopt(empty folder) = %+v, want the empty commit \"init\"", res)
		}
	})
	t.Run("Skips", func(t *testing.T) {
		// The files are adopted in one reading, and what cannot be a vault
		// file is listed, as cairn status lists it; a folder of such
		// files alone gets the empty commit, its skips listed too.
		ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("ada"))
		for _, withPage := range []bool{true, false} {
			dir := t.TempDir()
			if withPage {
				writeChangesFile(t, dir, "notes/a.md", "# A\n")
			}
			if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "link.md")); err != nil {
				t.Fatal(err)
			}
			a, err := initApp(t, ctx, dir, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Adopt(ctx, "")
			a.Close()
			if err != nil {
				t.Fatalf("Adopt (a page: %v): %v", withPage, err)
			}
			if len(res.Skipped) != 1 || res.Skipped[0].Path != "link.md" {
				t.Errorf("Adopt (a page: %v) skipped %+v, want link.md", withPage, res.Skipped)
			}
			wantMsg, wantChanges := "init", 0
			if withPage {
				wantMsg, wantChanges = "adopt "+filepath.Base(dir), 1
			}
			if res.Commit == nil || res.Commit.Message != wantMsg || len(res.Changes) != wantChanges {
				t.Errorf("Adopt (a page: %v) = %+v, want commit %q of %d files", withPage, res, wantMsg, wantChanges)
			}
		}
	})
	t.Run("Founding", func(t *testing.T) {
		// A person's first commit establishes the vault: what admission
		// would hold later (a script) is admitted, with its findings.
		ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("ada"))
		dir := t.TempDir()
		writeChangesFile(t, dir, "run.sh", "#!/bin/sh\necho hi\n")
		a, err := initApp(t, ctx, dir, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		res, err := a.Adopt(ctx, "")
		if err != nil {
			t.Fatalf("Adopt: %v", err)
		}
		if res.Commit == nil || len(res.Changes) != 1 || res.Admission == nil || len(res.Admission.Findings) == 0 {
			t.Errorf("Adopt(run.sh) = %+v, want admitted with findings", res)
		}
	})
	t.Run("ErrAgain", func(t *testing.T) {
		a, ctx := setupChanges(t)
		_, err := a.Adopt(ctx, "")
		wantChangesCode(t, "Adopt again", err, cairn.ECONFLICT)
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, err := initApp(t, t.Context(), t.TempDir(), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		_, err = a.Adopt(t.Context(), "")
		wantChangesCode(t, "Adopt without principal", err, cairn.EUNAUTHORIZED)
	})
}

func TestApp_CommitChanges(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		res, err := a.CommitChanges(ctx, app.ChangesRequest{Base: main.Hash, Message: "api edit", Changes: []app.FileEdit{
			{Path: "notes/new.md", Content: []byte("# New\n")},
			{Path: "page.md", Delete: true},
		}})
		if err != nil {
			t.Fatalf("CommitChanges: %v", err)
		}
		if res.Commit == nil || res.Admission == nil || !res.Admission.Admitted() || res.Admission.Proposal.Route != "api" {
			t.Fatalf("CommitChanges = %+v, want admitted by route api", res)
		}
		if got := readChangesFile(t, a.Root(), "notes/new.md"); got != "# New\n" {
			t.Errorf("notes/new.md in the folder = %q", got)
		}
		if _, err := a.Vault().Store.Get(ctx, res.Commit.Tree, "page.md"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("page.md after deleting it: %v", err)
		}
	})
	t.Run("OnBranch", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		c := commitOnBranch(t, a, ctx, "draft", map[string]string{"new.md": "# New\n"}, "draft adds new")
		if got := changesHead(t, a, "draft").Hash; got != c.Hash {
			t.Errorf("draft at %s, want %s", got.Short(), c.Hash.Short())
		}
	})
	t.Run("Held", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		res, err := a.CommitChanges(ctx, app.ChangesRequest{Base: main.Hash, Message: "a source",
			Changes: []app.FileEdit{{Path: "raw/s.md", Content: []byte("source\n")}}})
		if err != nil {
			t.Fatalf("CommitChanges: %v", err)
		}
		if res.Commit != nil || res.Admission.Proposal == nil || res.Admission.Proposal.Status != cairn.ProposalHeld {
			t.Errorf("CommitChanges(raw/) = %+v, want held", res)
		}
	})
	t.Run("ErrStaleBase", func(t *testing.T) {
		a, ctx := setupChanges(t)
		old := changesHead(t, a, "main")
		now := commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nMoved on.\n"}, "moves main")
		_, err := a.CommitChanges(ctx, app.ChangesRequest{Base: old.Hash, Message: "late",
			Changes: []app.FileEdit{{Path: "other.md", Content: []byte("# Other\n")}}})
		wantChangesCode(t, "CommitChanges(stale base)", err, cairn.ECONFLICT)
		if cairn.ErrorHint(err) == "" {
			t.Errorf("CommitChanges(stale base): no hint")
		}
		if got := changesHead(t, a, "main").Hash; got != now.Hash {
			t.Errorf("main moved to %s", got.Short())
		}
		a.CreateBranch(ctx, "draft", old.Hash.String())
		commitOnBranch(t, a, ctx, "draft", map[string]string{"x.md": "x\n"}, "draft moves")
		_, err = a.CommitChanges(ctx, app.ChangesRequest{Branch: "draft", Base: old.Hash, Message: "late",
			Changes: []app.FileEdit{{Path: "other.md", Content: []byte("# Other\n")}}})
		wantChangesCode(t, "CommitChanges(stale base on draft)", err, cairn.ECONFLICT)
	})
	t.Run("ErrBadInput", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		put := func(p string) app.FileEdit { return app.FileEdit{Path: p, Content: []byte("x\n")} }
		for _, tc := range []struct {
			name string
			req  app.ChangesRequest
			code string
		}{
			{"NoMessage", app.ChangesRequest{Base: main.Hash, Changes: []app.FileEdit{put("a.md")}}, cairn.EINVALID},
			{"NoBase", app.ChangesRequest{Message: "m", Changes: []app.FileEdit{put("a.md")}}, cairn.EINVALID},
			{"NoChanges", app.ChangesRequest{Base: main.Hash, Message: "m"}, cairn.EINVALID},
			{"DotDot", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{put("../a.md")}}, cairn.EINVALID},
			{"Absolute", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{put("/etc/a.md")}}, cairn.EINVALID},
			{"Cairn", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{put(".cairn/cairn.db")}}, cairn.EINVALID},
			{"Twice", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{put("a.md"), put("A.md")}}, cairn.EINVALID},
			{"DeleteWithContent", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{{Path: "page.md", Delete: true, Content: []byte("x")}}}, cairn.EINVALID},
			{"FileOverFolder", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{put("page.md/inside.md")}}, cairn.EINVALID},
			{"Unchanged", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{{Path: "page.md", Content: []byte("# Page\n\nThe original line.\n")}}}, cairn.EINVALID},
			{"DeleteMissing", app.ChangesRequest{Base: main.Hash, Message: "m", Changes: []app.FileEdit{{Path: "nope.md", Delete: true}}}, cairn.ENOTFOUND},
			{"BadBranch", app.ChangesRequest{Branch: "nope", Base: main.Hash, Message: "m", Changes: []app.FileEdit{put("a.md")}}, cairn.ENOTFOUND},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := a.CommitChanges(ctx, tc.req)
				wantChangesCode(t, "CommitChanges", err, tc.code)
			})
		}
		if got := changesHead(t, a, "main").Hash; got != main.Hash {
			t.Errorf("main moved to %s", got.Short())
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, _ := setupChanges(t)
		_, err := a.CommitChanges(t.Context(), app.ChangesRequest{Base: changesHead(t, a, "main").Hash, Message: "m",
			Changes: []app.FileEdit{{Path: "a.md", Content: []byte("a\n")}}})
		wantChangesCode(t, "CommitChanges without principal", err, cairn.EUNAUTHORIZED)
	})
}

func TestApp_ProposeChanges(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx := setupChanges(t)
		main := changesHead(t, a, "main")
		res, err := a.ProposeChanges(ctx, app.ChangesRequest{Base: main.Hash, Message: "please review",
			Changes: []app.FileEdit{{Path: "page.md", Content: []byte("# Page\n\nProposed.\n")}}})
		if err != nil {
			t.Fatalf("ProposeChanges: %v", err)
		}
		if res.Commit != nil || res.Admission == nil || res.Admission.Proposal == nil || res.Admission.Proposal.Status != cairn.ProposalHeld {
			t.Fatalf("ProposeChanges = %+v, want a held proposal", res)
		}
		if got := changesHead(t, a, "main").Hash; got != main.Hash {
			t.Errorf("main moved to %s", got.Short())
		}
		if got := readChangesFile(t, a.Root(), "page.md"); got != "# Page\n\nThe original line.\n" {
			t.Errorf("page.md in the folder = %q", got)
		}
	})
	t.Run("ErrBranch", func(t *testing.T) {
		a, ctx := setupChanges(t)
		a.CreateBranch(ctx, "draft", "")
		_, err := a.ProposeChanges(ctx, app.ChangesRequest{Branch: "draft", Base: changesHead(t, a, "draft").Hash, Message: "m",
			Changes: []app.FileEdit{{Path: "a.md", Content: []byte("a\n")}}})
		wantChangesCode(t, "ProposeChanges(on draft)", err, cairn.EINVALID)
	})
	t.Run("ErrStaleBase", func(t *testing.T) {
		a, ctx := setupChanges(t)
		old := changesHead(t, a, "main")
		commitOnBranch(t, a, ctx, "main", map[string]string{"page.md": "# Page\n\nMoved on.\n"}, "moves main")
		_, err := a.ProposeChanges(ctx, app.ChangesRequest{Base: old.Hash, Message: "late",
			Changes: []app.FileEdit{{Path: "a.md", Content: []byte("a\n")}}})
		wantChangesCode(t, "ProposeChanges(stale base)", err, cairn.ECONFLICT)
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, _ := setupChanges(t)
		_, err := a.ProposeChanges(t.Context(), app.ChangesRequest{Base: changesHead(t, a, "main").Hash, Message: "m",
			Changes: []app.FileEdit{{Path: "a.md", Content: []byte("a\n")}}})
		wantChangesCode(t, "ProposeChanges without principal", err, cairn.EUNAUTHORIZED)
	})
}
