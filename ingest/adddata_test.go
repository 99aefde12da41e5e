package ingest_test

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"cairn"
	"cairn/ingest"
)

// TestAddData is TestIngest_BadSources for content given as bytes: the
// same checks refuse the same contents and names with the same reasons,
// and a good one is stored, merged, and known to a file of the same bytes.
func TestAddData(t *testing.T) {
	e := setup(t, "sources:\n  max_size: 1MiB\n")
	items := []ingest.Data{
		{Name: "empty.md", Data: nil},
		{Name: "blank.txt", Data: []byte(" \n\t\n")},
		{Name: "binary.md", Data: []byte("PK\x03\x04\x00\x00binary")},
		{Name: "latin1.txt", Data: []byte("caf\xe9\n")},
		{Name: "big.md", Data: []byte(strings.Repeat("a", 2<<20))},
		{Name: ".hidden.md", Data: []byte("hidden text\n")},
		{Name: "bad\x01name.md", Data: []byte("text\n")},
		{Name: "gpj.\u202Eevil.md", Data: []byte("bidi text\n")},
		{Name: "../up.md", Data: []byte("up text\n")},
		{Name: "paper.docx", Data: []byte("PK\x03\x04 text\n")},
		{Name: norm.NFD.String("café.md"), Data: []byte(article)},
	}
	wantErr := map[string]string{
		"empty.md": "empty", "blank.txt": "empty", "binary.md": "binary", "latin1.txt": "binary",
		"big.md": "the limit is 1.0 MiB", ".hidden.md": "starts with a dot", "bad\x01name.md": "cannot be a vault path",
		"gpj.\u202Eevil.md": "invisible character U+202E", "../up.md": "starts with a dot", "paper.docx": "cairn ingests Markdown, text, HTML and PDF",
	}
	added, err := e.svc.AddData(e.ctx, items, cairn.User("ada"))
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != len(items) {
		t.Fatalf("AddData(%d items) = %d results", len(items), len(added))
	}
	for i, ad := range added {
		src := ad.Source
		if ad.File != items[i].Name {
			t.Errorf("AddData: result %d is for %q, want %q", i, ad.File, items[i].Name)
		}
		if src.Name == norm.NFC.String("café.md") {
			if !ad.Queued || src.Path != "raw/"+norm.NFC.String("café.md") {
				t.Errorf("AddData(café.md) = queued %v as %q; want it queued under its NFC name", ad.Queued, src.Path)
			}
			continue
		}
		want, ok := wantErr[src.Name]
		if !ok {
			t.Errorf("AddData: unexpected source %q (%s)", src.Name, src.Status)
			continue
		}
		if src.Status != ingest.Failed || !strings.Contains(src.Error, want) || src.Hint == "" || src.Path != "" {
			t.Errorf("AddData(%q) = status %s error %q hint %q path %q; want failed with %q and a hint, not stored", src.Name, src.Status, src.Error, src.Hint, src.Path, want)
		}
	}
	// The same bytes from a file are the same source.
	again, err := e.svc.Add(e.ctx, []string{e.file("other.md", article)}, cairn.User("ada"))
	if err != nil {
		t.Fatal(err)
	}
	if !again[0].Known || again[0].Queued {
		t.Errorf("Add(the bytes given before) = known %v, queued %v; want known, not queued", again[0].Known, again[0].Queued)
	}
	// No items, or an item without a name, changes nothing.
	for _, bad := range [][]ingest.Data{nil, {{Name: "", Data: []byte(article)}}} {
		if _, err := e.svc.AddData(e.ctx, bad, cairn.User("ada")); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("AddData(%v) = %v, want EINVALID", bad, err)
		}
	}
}
