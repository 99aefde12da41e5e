package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"cairn"
	"cairn/store"
	"cairn/worktree"
)

// countingStorage counts the transactions that write stat rows, and fails
// the one numbered failAt.
type countingStorage struct {
	worktree.Storage
	puts   atomic.Int64
	failAt atomic.Int64
}

func (c *countingStorage) PutStats(ctx context.Context, tx cairn.Tx, id int64, stats []worktree.FileStat) error {
	if c.puts.Add(1) == c.failAt.Load() {
		return errors.New("the database went away")
	}
	return c.Storage.PutStats(ctx, tx, id, stats)
}

// TestSync_StatRowsInParts holds that a sync of many files writes the stat
// rows of files older than the racy window a part at a time, not all with
// its end, that every file written still gets its row, and that rows of
// files too recently modified wait for the end, so that the next status
// reads those again, as before.
func TestSync_StatRowsInParts(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	vdir := filepath.Join(dir, ".cairn")
	if err := os.Mkdir(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	db, wst := openBackend(t, vdir)
	s, err := store.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStorage{Storage: wst}
	m := worktree.NewManager(s, st, vdir)
	m.SetStatsPart(8)
	wt, err := m.Register(ctx, dir, "main", cairn.Hash{})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(from, n int) map[string]cairn.Hash {
		head, _ := s.Head(ctx, "main")
		base := store.EmptyTree
		if !head.IsZero() {
			c, err := s.ReadCommit(ctx, head)
			if err != nil {
				t.Fatal(err)
			}
			base = c.Tree
		}
		want := map[string]cairn.Hash{}
		var changes []store.FileChange
		for i := from; i < from+n; i++ {
			p := fmt.Sprintf("notes/n%03d.md", i)
			data := []byte(fmt.Sprintf("# Note %d\n", i))
			want[p] = store.BlobHash(data)
			changes = append(changes, store.FileChange{Path: p, Data: data})
		}
		b := s.NewBatch()
		tree, err := b.Edit(ctx, base, changes)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree,
			Principal: cairn.Agent("test"), Message: "elsewhere"}); err != nil {
			t.Fatal(err)
		}
		return want
	}
	checkRows := func(want map[string]cairn.Hash, early bool) {
		t.Helper()
		for p, h := range want {
			r, ok := m.StatRow(ctx, wt, p)
			info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
			switch {
			case err != nil:
				t.Fatalf("%s not written: %v", p, err)
			case !ok:
				t.Fatalf("%s has no stat row", p)
			case r.Blob != h || r.Size != info.Size() || r.Mtime != info.ModTime().UnixNano():
				t.Fatalf("%s: row %+v, file %d bytes at %d, content %s", p, r, info.Size(), info.ModTime().UnixNano(), h.Short())
			case early && r.Checked < r.Mtime+int64(2*time.Second):
				t.Fatalf("%s: a row written before the sync's end checked at %d, within the racy window of %d", p, r.Checked, r.Mtime)
			}
		}
	}

	// A clock an hour ahead: every file the sync writes is older than the
	// racy window when its row is written.
	m.Now = func() time.Time { return time.Now().Add(time.Hour) }
	first := commit(0, 50)
	if _, err := m.SyncHead(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if n := st.puts.Load(); n < 5 {
		t.Errorf("the sync of 50 files wrote its stat rows in %d transactions of their own; want them in parts of 8", n)
	}
	checkRows(first, true)

	// The real clock: every file is within the racy window, so every row
	// waits for the end.
	m.Now = time.Now
	st.puts.Store(0)
	second := commit(50, 30)
	if _, err := m.SyncHead(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if n := st.puts.Load(); n != 0 {
		t.Errorf("%d transactions wrote rows of files modified within the racy window before the sync's end", n)
	}
	checkRows(second, false)
	status, err := m.Status(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if len(status.Changes) != 0 {
		t.Errorf("status after the syncs: %v; want none", status.Changes)
	}

	// A sync that fails after a part of its rows is written: the next
	// finishes it, and the rows and the status are as if it had not.
	m.Now = func() time.Time { return time.Now().Add(time.Hour) }
	st.puts.Store(0)
	st.failAt.Store(3)
	third := commit(80, 40)
	if _, err := m.SyncHead(ctx, wt); err == nil {
		t.Fatal("a sync whose rows could not be written ended well")
	}
	st.failAt.Store(0)
	if _, err := m.SyncHead(ctx, wt); err != nil {
		t.Fatal(err)
	}
	checkRows(third, false)
	if status, err = m.Status(ctx, wt); err != nil || len(status.Changes) != 0 {
		t.Errorf("status after a sync finished again: %v, %v; want none", status.Changes, err)
	}

	// A local edit of a file the target deletes is left alone: its row,
	// deleted with the end, is written after, not before.
	m.SetStatsPart(1)
	edited := filepath.Join(dir, "notes", "n000.md")
	if err := os.WriteFile(edited, []byte("# Note 0, edited here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	os.Chtimes(edited, past, past)
	head, _ := s.Head(ctx, "main")
	c, _ := s.ReadCommit(ctx, head)
	b := s.NewBatch()
	tree, err := b.Edit(ctx, c.Tree, []store.FileChange{{Path: "notes/n000.md", Delete: true}, {Path: "notes/n999.md", Data: []byte("new\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, b, store.CommitRequest{Branch: "main", Expected: head, Tree: tree, Principal: cairn.Agent("test"), Message: "delete"}); err != nil {
		t.Fatal(err)
	}
	rep, err := m.SyncHead(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.LeftAlone) != 1 || rep.LeftAlone[0] != "notes/n000.md" {
		t.Fatalf("left alone: %v; want the local edit", rep.LeftAlone)
	}
	if r, ok := m.StatRow(ctx, wt, "notes/n000.md"); !ok || r.Blob != store.BlobHash([]byte("# Note 0, edited here\n")) {
		t.Errorf("the local edit left alone has row %+v (%v); want its content's", r, ok)
	}
}
