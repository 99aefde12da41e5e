package index_test

import (
	"testing"

	"cairn/index"
	"cairn/internal/vaultgen"
)

// A full build reads the vault a chunk at a time: links between pages of
// different chunks, the pages' inbound counts and depths, and every other
// row must come out as the incremental updates make them, which see each
// change whole.
func TestIndex_BuildInChunks(t *testing.T) {
	e := setup(t)
	v := vaultgen.New(vaultgen.Config{Pages: 2*index.BuildChunk + 900, Raw: true})
	files := v.All()
	if len(files) <= 2*index.BuildChunk {
		t.Fatalf("%d files: want more than two chunks of %d", len(files), index.BuildChunk)
	}
	// Added in parts, each indexed incrementally but the first (onto an
	// empty tree, a full build of its own).
	const parts = 10
	for p := range parts {
		change := map[string]string{}
		for i := p; i < len(files); i += parts {
			change[files[i].Path] = string(files[i].Data)
		}
		e.commit(change)
	}
	// Then pages edited, so that links and titles move between files.
	edits := map[string]string{}
	for i := 0; i < v.Len(); i += 97 {
		f := v.Edit(i, 1)
		edits[f.Path] = string(f.Data)
	}
	e.commit(edits)
	e.check()
}
