package app_test

import (
	"errors"
	"testing"

	"cairn"
	"cairn/app"
)

func TestApp_Reindex(t *testing.T) {
	a, _ := adminSetup(t)
	// Reindexing changes no page: it needs no principal.
	res, err := a.Reindex(t.Context())
	if err != nil {
		t.Fatalf("Reindex: %v", err)
	}
	if res.Stats.Files != 1 || res.Stats.Pages != 1 {
		t.Errorf("Reindex().Stats = %+v, want 1 file, 1 page", res.Stats)
	}
}

func TestApp_Doctor(t *testing.T) {
	a, _ := adminSetup(t)
	for _, quick := range []bool{false, true} {
		rep, err := a.Doctor(t.Context(), app.DoctorOptions{Quick: quick})
		if err != nil {
			t.Fatalf("Doctor(quick %v): %v", quick, err)
		}
		if !rep.OK() || rep.Commits != 1 || rep.Blobs < 1 {
			t.Errorf("Doctor(quick %v) = %+v, want no problem, 1 commit", quick, rep)
		}
	}
}

func TestApp_GC(t *testing.T) {
	a, _ := adminSetup(t)
	for _, opts := range []app.GCOptions{{DryRun: true}, {DryRun: true, Now: true}, {}} {
		res, err := a.GC(t.Context(), opts)
		if err != nil {
			t.Fatalf("GC(%+v): %v", opts, err)
		}
		if res.Deleted != 0 || res.Reachable == 0 || res.DryRun != opts.DryRun {
			t.Errorf("GC(%+v) = %+v, want nothing deleted (everything is reachable)", opts, res)
		}
	}
}

func TestApp_Purge(t *testing.T) {
	setup := func(t *testing.T) *app.App {
		a, ctx := adminSetup(t)
		for _, key := range []string{"sk-live-1234", "<redacted>"} {
			if _, err := a.ImportFolder(ctx, adminFiles(t, map[string]string{"notes.md": "API_KEY=" + key + "\n"}), nil); err != nil {
				t.Fatalf("ImportFolder(notes.md): %v", err)
			}
		}
		return a
	}
	t.Run("OK", func(t *testing.T) {
		a := setup(t)
		ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("tester"))
		res, err := a.Purge(ctx, "notes.md", "main~1", "leaked API key")
		if err != nil {
			t.Fatalf("Purge(notes.md at main~1): %v", err)
		}
		if res.Reindexed {
			t.Errorf("Purge of content main's head does not hold reindexed main")
		}
		if _, err := a.Vault().Store.ReadBlob(ctx, res.Blob); !errors.Is(err, cairn.ErrPurged) {
			t.Errorf("reading the purged content: %v, want ErrPurged", err)
		}
		head, err := a.Purge(ctx, "notes.md", "main", "the fix, too")
		if err != nil || !head.Reindexed {
			t.Errorf("Purge(notes.md at main) = %+v, %v; want main reindexed", head, err)
		}
		rep, err := a.Doctor(ctx, app.DoctorOptions{})
		if err != nil || !rep.OK() || rep.Purged != 2 {
			t.Errorf("Doctor after two purges = %+v, %v; want no problem, 2 purged", rep, err)
		}
	})
	t.Run("Err", func(t *testing.T) {
		a := setup(t)
		ctx := cairn.NewContextWithPrincipal(t.Context(), cairn.User("tester"))
		_, err := a.Purge(t.Context(), "notes.md", "main~1", "leaked")
		adminCode(t, "Purge without a principal", err, cairn.EUNAUTHORIZED)
		_, err = a.Purge(ctx, "notes.md", "main~1", " ")
		adminCode(t, "Purge without a reason", err, cairn.EINVALID)
		_, err = a.Purge(ctx, "notes.md", "", "leaked")
		adminCode(t, "Purge without a revision", err, cairn.EINVALID)
		_, err = a.Purge(ctx, "notes.md", "nosuchbranch", "leaked")
		adminCode(t, "Purge at a missing revision", err, cairn.ENOTFOUND)
		_, err = a.Purge(ctx, "missing.md", "main", "leaked")
		adminCode(t, "Purge of a missing file", err, cairn.ENOTFOUND)
	})
}
