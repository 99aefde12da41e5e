package worktree

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadListings_Untrusted: folder listings read back as written; a
// file with a name that is not one (a path, "..", empty, a NUL), names out
// of order or twice, or written at a time still to come (the clock set
// back since) is not trusted at all.
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
	same := cmp.Comparer(func(a, b *folderList) bool { return cmp.Equal(*a, *b, cmp.AllowUnexported(folderList{}, fileID{})) })

	want := good("a.md", "b.md", "é.md")
	if err := m.writeListings(tree, nil, want); err != nil {
		t.Fatal(err)
	}
	if got := m.readListings(tree); !cmp.Equal(got, want, same) {
		t.Fatalf("read back %v, want %v", got, want)
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
		if err := m.writeListings(tree, nil, good(names...)); err != nil {
			t.Fatal(err)
		}
		if got := m.readListings(tree); got != nil {
			t.Errorf("names %q read %v, want no listings", names, got)
		}
	}
}
