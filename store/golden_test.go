package store

import (
	"bufio"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cairn"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// OpenTestBackend opens a new backend for the tests of this package that
// look inside the store. It is set by backend_test.go, in the external test
// package: this one cannot import sqlite, which imports the subsystems
// (worktree, index) that import the store.
var OpenTestBackend func(tb testing.TB) cairn.Backend

func newTestStore(tb testing.TB) *Store {
	tb.Helper()
	s, err := New(tb.Context(), OpenTestBackend(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// goldenVectors computes the format's test vectors: names that must never
// change, because every hash in every vault depends on them.
func goldenVectors(t *testing.T) [][2]string {
	s := newTestStore(t)
	b := s.NewBatch()
	ctx := t.Context()
	var out [][2]string
	add := func(name, value string) { out = append(out, [2]string{name, value}) }

	add("blob \"\"", BlobHash(nil).String())
	add("blob \"hello\\n\"", BlobHash([]byte("hello\n")).String())
	add("tree {}", EmptyTree.String())
	add("tree {} encoding", hex.EncodeToString(encodeNode(0, nil)))
	for _, k := range []string{"index.md", "notes/p-00011.md", "notes/p-01158.md"} {
		add(fmt.Sprintf("keyLevel(%q)", k), fmt.Sprint(keyLevel(k)))
	}

	small, err := b.BuildTree(ctx, []FileChange{
		{Path: "index.md", Data: []byte("# Home\n")},
		{Path: "Notes/Alpha.md", Data: []byte("alpha\n")},
		{Path: "run.sh", Data: []byte("#!/bin/sh\n"), Mode: cairn.ModeExecutable},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.node(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	add("tree {index.md, Notes/Alpha.md, run.sh (executable)}", small.String())
	add("tree {index.md, Notes/Alpha.md, run.sh (executable)} encoding", hex.EncodeToString(n.enc))

	c := &cairn.Commit{
		Tree:      small,
		Parents:   []cairn.Hash{BlobHash([]byte("parent"))},
		Principal: cairn.User("alice"),
		Time:      time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Message:   "Add alpha",
		Meta:      map[string]string{"source": "raw/a.md", "job": "42"},
	}
	enc := encodeCommit(c)
	add("commit", commitHash(enc).String())
	add("commit encoding", hex.EncodeToString(enc))

	var files []FileChange
	for i := range 10000 {
		files = append(files, FileChange{Path: fmt.Sprintf("notes/p-%05d.md", i), Data: fmt.Appendf(nil, "page %d\n", i)})
	}
	big, err := b.BuildTree(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	root, err := b.node(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	add("tree of notes/p-00000.md … notes/p-09999.md (\"page N\\n\")", big.String())
	add("  its root level and children", fmt.Sprintf("%d %d", root.level, len(root.items)))

	// Names that are never boundaries: only the size bound cuts nodes.
	files = files[:0]
	for i := 0; len(files) < 3000; i++ {
		p := fmt.Sprintf("bound/%s-%05d.md", strings.Repeat("x", 200), i)
		if keyLevel(p) == 0 {
			files = append(files, FileChange{Path: p, Data: fmt.Appendf(nil, "page %d\n", i)})
		}
	}
	bound, err := b.BuildTree(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if root, err = b.node(ctx, bound); err != nil {
		t.Fatal(err)
	}
	add("tree of the first 3000 files bound/x…x-NNNNN.md (200 x) whose keys are not boundaries (\"page N\\n\")", bound.String())
	add("  its root level and leaves", fmt.Sprintf("%d %d", root.level, len(root.items)))
	return out
}

// TestGolden holds the format fixed: the vectors in testdata/golden.txt are
// recomputed and compared, and docs/format.md must quote each hash.
func TestGolden(t *testing.T) {
	got := goldenVectors(t)
	path := filepath.Join("testdata", "golden.txt")
	if *update {
		var sb strings.Builder
		for _, kv := range got {
			fmt.Fprintf(&sb, "%s\t%s\n", kv[0], kv[1])
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), "\t")
		want[name] = value
	}
	if len(want) != len(got) {
		t.Errorf("golden file has %d vectors, computed %d", len(want), len(got))
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range got {
		if want[kv[0]] != kv[1] {
			t.Errorf("%s = %s, want %s (the format changed: every hash in every vault would change)", kv[0], kv[1], want[kv[0]])
		}
		if len(kv[1]) == 64 && !strings.Contains(string(doc), kv[1]) {
			t.Errorf("docs/format.md does not quote the vector %s = %s", kv[0], kv[1])
		}
	}
}
