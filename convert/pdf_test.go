package convert_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cairn"
	"cairn/convert"
	"cairn/internal/pdfgen"
)

func converter(t testing.TB) *convert.Converter {
	c := convert.NewConverter()
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPDF(t *testing.T) {
	c := converter(t)
	data := pdfgen.Write([][]string{
		{"Paper mills in Fabriano used water power.", "They beat rags into pulp (by hammers)."},
		{},
		{"Watermarks date the sheets."},
	}, pdfgen.Options{Title: "Paper  mills"})
	md, err := c.PDF(context.Background(), "raw/mills.pdf", data)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Paper mills\n\n## Page 1\n\nPaper mills in Fabriano used water power.\nThey beat rags into pulp (by hammers).\n\n## Page 2\n\n\n\n## Page 3\n\nWatermarks date the sheets.\n"
	if string(md) != want {
		t.Errorf("PDF =\n%q\nwant\n%q", md, want)
	}
	// Without a title, the file's name is the heading.
	md, err = c.PDF(context.Background(), "raw/notes-2026.pdf", pdfgen.Write([][]string{{"x y z"}}, pdfgen.Options{}))
	if err != nil || !strings.HasPrefix(string(md), "# notes-2026\n") {
		t.Errorf("PDF without a title = %q, %v", md, err)
	}
}

func TestPDF_Bad(t *testing.T) {
	c := converter(t)
	many := make([][]string, convert.MaxPDFPages+1)
	for i := range many {
		many[i] = []string{"p"}
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"Scanned", pdfgen.Write([][]string{{}, {}}, pdfgen.Options{}), "no text layer (a scan?)"},
		{"Encrypted", pdfgen.Write([][]string{{"secret"}}, pdfgen.Options{UserPassword: "pw"}), "encrypted"},
		{"Malformed", []byte("%PDF-1.4\nthis is no pdf at all\n"), "not a PDF cairn can read"},
		{"Truncated", pdfgen.Write([][]string{{"cut"}}, pdfgen.Options{})[:120], "not a PDF cairn can read"},
		{"TooManyPages", pdfgen.Write(many, pdfgen.Options{}), fmt.Sprintf("cairn reads at most %d", convert.MaxPDFPages)},
		{"Bomb", pdfgen.Write([][]string{{"boom"}}, pdfgen.Options{Inflate: 1 << 30}), "a PDF bomb?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := c.PDF(context.Background(), "raw/x.pdf", tc.data)
			if cairn.ErrorCode(err) != cairn.EINVALID || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "raw/x.pdf") {
				t.Fatalf("PDF = %v, want EINVALID naming the file and %q", err, tc.want)
			}
			if cairn.ErrorHint(err) == "" {
				t.Error("no hint")
			}
			t.Logf("%s: refused in %s: %v", tc.name, time.Since(start), err)
		})
	}
	// The engine still works after the failures.
	if _, err := c.PDF(context.Background(), "raw/ok.pdf", pdfgen.Write([][]string{{"fine"}}, pdfgen.Options{})); err != nil {
		t.Errorf("after the failures: %v", err)
	}
}

// BenchmarkPDF extracts the text of an ordinary 100-page text PDF (forty
// lines a page).
func BenchmarkPDF(b *testing.B) {
	c := converter(b)
	pages := make([][]string, 100)
	for i := range pages {
		for l := range 40 {
			pages[i] = append(pages[i], fmt.Sprintf("Line %d of page %d: paper mills, rags, water power and watermarks.", l, i))
		}
	}
	data := pdfgen.Write(pages, pdfgen.Options{Title: "A hundred pages"})
	if _, err := c.PDF(context.Background(), "raw/b.pdf", data); err != nil { // the engine starts
		b.Fatal(err)
	}
	start := time.Now()
	for b.Loop() {
		if _, err := c.PDF(context.Background(), "raw/b.pdf", data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/time.Since(start).Seconds(), "pages/s")
}
