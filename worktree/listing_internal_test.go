package worktree

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadListings_Untrusted: folder listings read back as written; a
// listing with a name that is not one (a path, "..", empty, a NUL), or
// names out of order or twice, is not used, and a file written at a time
// still to come (the clock set back since) is not trusted at all.
func TestReadListings_Untrusted(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	m := &Manager{lockDir: t.TempDir(), Now: func() time.Time { return now }}
	tree := &Tree{ID: 1, Path: "/vault"}
	good := func(names ...string) map[string]*folderList {
		return map[string]*folderList{
			"":      {id: fileID{dev: 1, ino: 2}, mtime: 3, ctime: 4, names: []string{".git", "index.md", "notes"}},
			"notes": {id: fileID{dev: 1, ino: 5}, mtime: -6, ctime: 7, names: names},
		}
	}
	// The listing of folder rel, as a walk that finds the folder as it
	// was listed gets it: nil when it cannot be used.
	use := func(got map[string]*folderList, rel string) []string {
		ls := &listings{known: got}
		l := got[rel]
		if l == nil {
			t.Fatalf("no listing of %q read", rel)
		}
		if used := ls.cached(rel, fileStat{dev: l.id.dev, ino: l.id.ino, mtime: l.mtime, ctime: l.ctime}); used != nil {
			return used.names
		}
		return nil
	}

	want := good("a.md", "b.md", "é.md")
	if err := m.writeListings(tree, nil, want, true); err != nil {
		t.Fatal(err)
	}
	got := m.readListings(tree)
	if len(got) != 2 || !cmp.Equal(use(got, ""), want[""].names) || !cmp.Equal(use(got, "notes"), want["notes"].names) {
		t.Fatalf("read back %v, want %v", got, want)
	}
	// Written again as read, unused: the same.
	if err := m.writeListings(tree, nil, got, true); err != nil {
		t.Fatal(err)
	}
	if again := m.readListings(tree); len(again) != 2 || !cmp.Equal(use(again, "notes"), want["notes"].names) {
		t.Fatalf("written again as read, read back %v, want %v", again, want)
	}
	if st := (fileStat{dev: 1, ino: 5, mtime: -6, ctime: 8}); (&listings{known: got}).cached("notes", st) != nil {
		t.Error("a listing was used for a folder changed since")
	}
	if got := m.readListings(&Tree{ID: 1, Path: "/elsewhere"}); got != nil {
		t.Errorf("another folder's tree read %v, want none", got)
	}
	now = now.Add(-time.Second)
	if got := m.readListings(tree); got != nil {
		t.Errorf("listings written after now read %v, want none", got)
	}
	now = now.Add(time.Second)

	for _, names := range [][]string{
		{"a.md", "link/secret.md"},
		{"..", "a.md"},
		{".", "a.md"},
		{"", "a.md"},
		{"a.md", "b\x00.md"},
		{"b.md", "a.md"},
		{"a.md", "a.md"},
	} {
		if err := m.writeListings(tree, nil, good(names...), true); err != nil {
			t.Fatal(err)
		}
		got := m.readListings(tree)
		if used := use(got, "notes"); used != nil {
			t.Errorf("names %q used as %q, want the folder listed", names, used)
		}
		if used := use(got, ""); len(used) != 3 {
			t.Errorf("names %q in another folder: the root's listing used as %q", names, used)
		}
	}
}
