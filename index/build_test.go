package index_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cairn"
	"cairn/index"
	"cairn/internal/vaultgen"
)

// A full build reads the vault a chunk at a time: links between pages of
// different chunks, the pages' inbound counts and depths, and every other
// row must come out as the incremental updates make them, which see each
// change whole. The second pass parses the content the first left on
// disk, or, for a vault too large for that, reads the store again.
func TestIndex_BuildInChunks(t *testing.T) {
	for _, spilled := range []bool{true, false} {
		t.Run(map[bool]string{true: "content on disk", false: "content read again"}[spilled], func(t *testing.T) {
			e := setup(t)
			if !spilled {
				index.SetContentSpillMax(e.ix, 0)
			}
			v := vaultgen.New(vaultgen.Config{Pages: 2*index.BuildChunk + 900, Raw: true})
			files := v.All()
			if len(files) <= 2*index.BuildChunk {
				t.Fatalf("%d files: want more than two chunks of %d", len(files), index.BuildChunk)
			}
			// Added in parts, each indexed incrementally but the first
			// (onto an empty tree, a full build of its own).
			const parts = 10
			for p := range parts {
				change := map[string]string{}
				for i := p; i < len(files); i += parts {
					change[files[i].Path] = string(files[i].Data)
				}
				e.commit(change)
			}
			// Then pages edited, so that links and titles move between
			// files.
			edits := map[string]string{}
			for i := 0; i < v.Len(); i += 97 {
				f := v.Edit(i, 1)
				edits[f.Path] = string(f.Data)
			}
			e.commit(edits)
			e.check()
		})
	}
}

// A deep check names the rows in which the committed index differs from
// a rebuild, the first five of each table each way and a count of the
// rest, on each backend, and changes nothing: the same check after it
// finds the same.
func TestIndex_CheckNamesDrift(t *testing.T) {
	e := setup(t)
	files := map[string]string{"index.md": "# Home\n"}
	for i := range 8 {
		files[fmt.Sprintf("p%d.md", i)] = fmt.Sprintf("# Page %d\n\nSee [[index]] and [[p%d]].\n", i, (i+1)%8)
	}
	e.commit(files)
	e.check()
	e.b.exec(t, `UPDATE files SET title = 'Wrong' WHERE path = 'p3.md'`)
	e.b.exec(t, `UPDATE links SET ord = ord + 100`)
	want := []string{
		"files: missing p3.md | ", "files: unexpected p3.md | ",
		"links: missing ", "links: 11 more rows missing",
		"links: unexpected ", "links: 11 more rows that should not be there",
	}
	for range 2 {
		d, err := e.ix.Check(e.ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !slices.ContainsFunc(d.Problems, func(p string) bool { return strings.HasPrefix(p, w) }) {
				t.Errorf("no problem starts %q:\n%s", w, strings.Join(d.Problems, "\n"))
			}
		}
		if n := len(d.Problems); n != 2+6+6 {
			t.Errorf("%d problems, want 14 (two of files; five links and a count, each way):\n%s", n, strings.Join(d.Problems, "\n"))
		}
		if !slices.ContainsFunc(d.Problems, func(p string) bool { return strings.Contains(p, "Wrong") }) {
			t.Errorf("the wrong title is not named:\n%s", strings.Join(d.Problems, "\n"))
		}
	}
}

// KeepFirst keeps the lines that sort first, in order, whatever order
// they come in.
func TestKeepFirst(t *testing.T) {
	lines := []string{"m", "c", "x", "a", "q", "b", "z", "d", "c2"}
	var first []string
	for _, l := range lines {
		first = index.KeepFirst(first, l, 4)
	}
	if want := []string{"a", "b", "c", "c2"}; !slices.Equal(first, want) {
		t.Errorf("KeepFirst = %q, want %q", first, want)
	}
}

// A full build whose temporary folder cannot be written fails with an
// error that names the folder and says what to do, and leaves the index
// as it was.
func TestRebuild_NoTemporaryFolder(t *testing.T) {
	e := setup(t)
	e.commit(map[string]string{"index.md": "# Home\n[[a]]\n", "a.md": "# A\n[[index#Home]] [[index#Nope]]\n"})
	before := e.findings()
	missing, tmp := filepath.Join(t.TempDir(), "gone"), os.Getenv("TMPDIR")
	t.Setenv("TMPDIR", missing)
	err := e.ix.Rebuild(e.ctx)
	if cairn.ErrorCode(err) != cairn.EUNAVAILABLE || !errors.Is(err, fs.ErrNotExist) || cairn.ErrorHint(err) == "" {
		t.Fatalf("rebuild with TMPDIR=%s: %v (hint %q); want EUNAVAILABLE for a missing folder, with a hint", missing, err, cairn.ErrorHint(err))
	}
	if after := e.findings(); !slices.Equal(before, after) || len(after) == 0 {
		t.Errorf("findings after the failed rebuild: %v, want %v", after, before)
	}
	t.Setenv("TMPDIR", tmp) // "" is the system's
	e.check()
}
