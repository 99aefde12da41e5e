package worktree_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStatus_ListingsKept: a folder unchanged since a status listed it is
// not listed again, and one changed since is, however its modification
// time was set after; a folder changed just before a status is listed
// again by the next one.
func TestStatus_ListingsKept(t *testing.T) {
	e := setup(t)
	if fi, err := os.Stat(e.dir); err != nil || fi.ModTime().Nanosecond()%int(time.Millisecond) == 0 {
		t.Skip("the file system's times are too coarse to keep listings 300 ms after a change")
	}
	e.write("index.md", "# Home\n")
	e.write("notes/a.md", "a\n")
	e.write("raw/b.md", "b\n")
	e.commit("first")
	reused := func() int64 { return e.m.ReusedListings() }
	check := func(what string, want []string, wantReused int64) {
		t.Helper()
		before := reused()
		if got := e.status(); !cmp.Equal(got, want) {
			t.Fatalf("%s: status = %q, want %q", what, got, want)
		}
		if got := reused() - before; got != wantReused {
			t.Errorf("%s: %d folders not listed again, want %d", what, got, wantReused)
		}
	}

	// Within the window after their changes, no folder's listing is kept.
	e.m.SetListingRacy(time.Hour)
	check("fresh", nil, 0)
	check("fresh again", nil, 0)

	e.m.SetListingRacy(300 * time.Millisecond)
	time.Sleep(400 * time.Millisecond)
	check("listed", nil, 0) // the three folders' listings kept
	check("unchanged", nil, 3)

	e.write("notes/new.md", "new\n")
	check("a file made", []string{"added notes/new.md"}, 2)
	os.Remove(filepath.Join(e.dir, "raw/b.md"))
	check("a file removed", []string{"added notes/new.md", "deleted raw/b.md"}, 1) // notes is still new

	// A file made in a folder whose modification time is then set back:
	// its change time still differs.
	time.Sleep(400 * time.Millisecond)
	check("listed again", []string{"added notes/new.md", "deleted raw/b.md"}, 1)
	fi, err := os.Stat(filepath.Join(e.dir, "raw"))
	if err != nil {
		t.Fatal(err)
	}
	e.write("raw/hidden.md", "hidden\n")
	os.Chtimes(filepath.Join(e.dir, "raw"), fi.ModTime(), fi.ModTime())
	check("a time set back", []string{"added notes/new.md", "deleted raw/b.md", "added raw/hidden.md"}, 2)

	// A folder replaced by another of the same name and times.
	time.Sleep(400 * time.Millisecond)
	check("listed once more", []string{"added notes/new.md", "deleted raw/b.md", "added raw/hidden.md"}, 2)
	fi, err = os.Stat(filepath.Join(e.dir, "notes"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(e.dir, "notes"), filepath.Join(e.dir, "old")); err != nil {
		t.Fatal(err)
	}
	e.write("notes/a.md", "a\n")
	os.Chtimes(filepath.Join(e.dir, "notes"), fi.ModTime(), fi.ModTime())
	os.RemoveAll(filepath.Join(e.dir, "old"))
	check("a folder replaced", []string{"deleted raw/b.md", "added raw/hidden.md"}, 1)

	// A folder changed just before a status is listed again by the next:
	// a change after the listing, within the file system's tick, would
	// leave its times as they were.
	e.m.SetListingRacy(time.Hour)
	e.write("raw/c.md", "c\n")
	check("changed just before", []string{"deleted raw/b.md", "added raw/c.md", "added raw/hidden.md"}, 0)
	check("changed just before, again", []string{"deleted raw/b.md", "added raw/c.md", "added raw/hidden.md"}, 0)
}
