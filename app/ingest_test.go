package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/text/unicode/norm"

	"cairn"
	"cairn/app"
	"cairn/ingest"
)

const article = "# Paper mills\n\nIn 1390 Ulman Stromer set up the first paper mill in Nuremberg.\n"

// setupIngest returns a new vault's App, a context in which ada acts, and
// a folder to write files to ingest in.
func setupIngest(t *testing.T) (*app.App, context.Context, string) {
	t.Helper()
	root := t.TempDir()
	a, err := initApp(t, t.Context(), filepath.Join(root, "vault"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	in := filepath.Join(root, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	return a, cairn.NewContextWithPrincipal(t.Context(), cairn.User("ada")), in
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApp_Ingest(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx, in := setupIngest(t)
		var added []*ingest.Added
		var total int
		var kinds []string
		res, err := a.Ingest(ctx, []string{writeFile(t, in, "mills.md", article)}, app.IngestOptions{
			Added:    func(ad []*ingest.Added) { added = ad },
			Progress: func(_, n int) { total = n },
			Event:    func(ev *app.Event) { kinds = append(kinds, ev.Kind) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(added) != 1 || !added[0].Queued || total != 1 {
			t.Fatalf("Added saw %d files (queued %v), Progress a total of %d; want 1 queued of 1", len(added), len(added) > 0 && added[0].Queued, total)
		}
		if len(res.Files) != 1 || res.Queued != 1 {
			t.Fatalf("Ingest = %d files, %d queued; want 1, 1", len(res.Files), res.Queued)
		}
		f := res.Files[0]
		if !f.Tracked || f.Source.Status != ingest.Merged || f.Refused || res.Refused || res.Counts[ingest.Merged] != 1 {
			t.Errorf("Ingest: file tracked %v, status %s, refused %v (result %v), counts %v; want a tracked merged source", f.Tracked, f.Source.Status, f.Refused, res.Refused, res.Counts)
		}
		if len(f.Source.History) == 0 {
			t.Errorf("Ingest: the final source has no history")
		}
		if !contains(kinds, "ingest.merged") {
			t.Errorf("Ingest reported events %v; want ingest.merged among them", kinds)
		}

		// The same content again is known, not queued, and not refused.
		again, err := a.Ingest(ctx, []string{writeFile(t, in, "copy.md", article)}, app.IngestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g := again.Files[0]; g.Queued || !g.Known || g.Note == "" || g.Refused || again.Refused {
			t.Errorf("Ingest(same content) = queued %v, known %v, note %q, refused %v; want known, not queued, not refused", g.Queued, g.Known, g.Note, g.Refused)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		a, ctx, in := setupIngest(t)
		res, err := a.Ingest(ctx, []string{writeFile(t, in, "empty.md", "  \n")}, app.IngestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Files[0]; f.Source.Status != ingest.Failed || !f.Refused || !res.Refused {
			t.Errorf("Ingest(empty file) = status %s, refused %v; want failed and refused", f.Source.Status, f.Refused)
		}
	})
	t.Run("ErrMissingFile", func(t *testing.T) {
		a, ctx, in := setupIngest(t)
		_, err := a.Ingest(ctx, []string{filepath.Join(in, "nope.md")}, app.IngestOptions{})
		if cairn.ErrorCode(err) != cairn.EINVALID {
			t.Fatalf("Ingest(missing file) = %v, want EINVALID", err)
		}
		if l, err := a.Sources(ctx, app.SourceFilter{}); err != nil || len(l.Sources) != 0 || l.Total != 0 {
			t.Errorf("Sources after a refused ingest = %+v, %v; want none", l, err)
		}
	})
	t.Run("ErrNoFiles", func(t *testing.T) {
		a, ctx, _ := setupIngest(t)
		if _, err := a.Ingest(ctx, nil, app.IngestOptions{}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Fatalf("Ingest(no files) = %v, want EINVALID", err)
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, _, in := setupIngest(t)
		_, err := a.Ingest(t.Context(), []string{writeFile(t, in, "mills.md", article)}, app.IngestOptions{})
		if cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
			t.Fatalf("Ingest(no principal) = %v, want EUNAUTHORIZED", err)
		}
	})
}

func TestApp_IngestData(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		a, ctx, in := setupIngest(t)
		res, err := a.IngestData(ctx, []ingest.Data{{Name: "mills.md", Data: []byte(article)}}, app.IngestOptions{Detach: true})
		if err != nil {
			t.Fatal(err)
		}
		f := res.Files[0]
		if !f.Queued || f.File != "mills.md" || f.Source.Path != "raw/mills.md" || f.Source.Status != ingest.Queued {
			t.Fatalf("IngestData = queued %v, file %q, path %q, status %s; want mills.md queued as raw/mills.md", f.Queued, f.File, f.Source.Path, f.Source.Status)
		}
		// The same bytes from a file are the same source.
		again, err := a.Ingest(ctx, []string{writeFile(t, in, "other.md", article)}, app.IngestOptions{Detach: true})
		if err != nil {
			t.Fatal(err)
		}
		if g := again.Files[0]; g.Queued || !g.Known || g.Source.ID != f.Source.ID {
			t.Errorf("Ingest(the same content as bytes before) = queued %v, known %v, id %.12s; want the known source %.12s", g.Queued, g.Known, g.Source.ID, f.Source.ID)
		}
	})
	t.Run("NFC", func(t *testing.T) {
		a, ctx, _ := setupIngest(t)
		name := norm.NFD.String("café.md")
		res, err := a.IngestData(ctx, []ingest.Data{{Name: name, Data: []byte(article)}}, app.IngestOptions{Detach: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Files[0].Source.Name, norm.NFC.String("café.md"); got != want {
			t.Errorf("IngestData(NFD name) recorded name %q, want %q (NFC)", got, want)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct{ test, name, data string }{
			{"Hidden", ".secret.md", article},
			{"Slash", "a/b.md", article},
			{"Binary", "bin.md", "text\x00more"},
			{"Format", "paper.pdf", article},
			{"Empty", "empty.md", ""},
		} {
			t.Run(tc.test, func(t *testing.T) {
				a, ctx, _ := setupIngest(t)
				res, err := a.IngestData(ctx, []ingest.Data{{Name: tc.name, Data: []byte(tc.data)}}, app.IngestOptions{Detach: true})
				if err != nil {
					t.Fatal(err)
				}
				if f := res.Files[0]; f.Queued || f.Source.Status != ingest.Failed || f.Source.Path != "" || !f.Refused {
					t.Errorf("IngestData(%q) = queued %v, status %s, path %q, refused %v; want a failed source, not stored", tc.name, f.Queued, f.Source.Status, f.Source.Path, f.Refused)
				}
			})
		}
	})
	t.Run("ErrNoName", func(t *testing.T) {
		a, ctx, _ := setupIngest(t)
		if _, err := a.IngestData(ctx, []ingest.Data{{Name: "", Data: []byte(article)}}, app.IngestOptions{}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Fatalf("IngestData(no name) = %v, want EINVALID", err)
		}
		if l, err := a.Sources(ctx, app.SourceFilter{}); err != nil || len(l.Sources) != 0 || l.Total != 0 {
			t.Errorf("Sources after a refused ingest = %+v, %v; want none", l, err)
		}
	})
	t.Run("ErrNoPrincipal", func(t *testing.T) {
		a, _, _ := setupIngest(t)
		if _, err := a.IngestData(t.Context(), []ingest.Data{{Name: "mills.md", Data: []byte(article)}}, app.IngestOptions{}); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
			t.Fatalf("IngestData(no principal) = %v, want EUNAUTHORIZED", err)
		}
	})
}

func TestApp_Sources(t *testing.T) {
	a, ctx, _ := setupIngest(t)
	res, err := a.IngestData(ctx, []ingest.Data{{Name: "mills.md", Data: []byte(article)}}, app.IngestOptions{Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Files[0].Source.ID
	t.Run("List", func(t *testing.T) {
		l, err := a.Sources(ctx, app.SourceFilter{Status: ingest.Queued})
		if err != nil {
			t.Fatal(err)
		}
		if srcs := l.Sources; len(srcs) != 1 || srcs[0].ID != id || l.Total != 1 {
			t.Errorf("Sources(queued) = %d sources of %d, want the one queued", len(srcs), l.Total)
		}
		if l, err := a.Sources(ctx, app.SourceFilter{Offset: 1}); err != nil || len(l.Sources) != 0 || l.Total != 1 {
			t.Errorf("Sources(offset 1) = %+v, %v; want none of 1", l, err)
		}
	})
	t.Run("Show", func(t *testing.T) {
		src, err := a.Source(ctx, id[:8])
		if err != nil {
			t.Fatal(err)
		}
		if src.ID != id || len(src.History) == 0 {
			t.Errorf("Source(%.8s) = %.12s with %d steps of history; want %.12s with its history", id, src.ID, len(src.History), id)
		}
	})
	t.Run("ErrStatus", func(t *testing.T) {
		if _, err := a.Sources(ctx, app.SourceFilter{Status: "bogus"}); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("Sources(bogus) = %v, want EINVALID", err)
		}
		for _, f := range []app.SourceFilter{{Offset: -1}, {Limit: -1}} {
			if _, err := a.Sources(ctx, f); cairn.ErrorCode(err) != cairn.EINVALID {
				t.Errorf("Sources(%+v) = %v, want EINVALID", f, err)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := a.Source(ctx, "ffffffff"); cairn.ErrorCode(err) != cairn.ENOTFOUND {
			t.Errorf("Source(ffffffff) = %v, want ENOTFOUND", err)
		}
	})
	t.Run("ErrRetryQueued", func(t *testing.T) {
		if _, err := a.RetrySource(ctx, id[:12]); cairn.ErrorCode(err) != cairn.EINVALID {
			t.Errorf("RetrySource(a queued source whose job will run it) = %v, want EINVALID", err)
		}
	})
	t.Run("ErrRetryNoPrincipal", func(t *testing.T) {
		if _, err := a.RetrySource(t.Context(), id[:12]); cairn.ErrorCode(err) != cairn.EUNAUTHORIZED {
			t.Errorf("RetrySource(no principal) = %v, want EUNAUTHORIZED", err)
		}
	})
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
