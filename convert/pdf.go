package convert

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"cairn"
)

// Limits of a PDF's extraction.
const (
	// MaxPDFPages is the most pages a PDF source may have.
	MaxPDFPages = 5000
	// MaxPDFText is the most text extracted from one PDF.
	MaxPDFText = 32 << 20
	// PDFTimeout bounds one extraction.
	PDFTimeout = 60 * time.Second
	// pdfMemoryPages bounds PDFium's memory, in WebAssembly pages of 64
	// KiB: 512 MiB. A PDF bomb runs out of it and fails.
	pdfMemoryPages = 8192
)

// Converter converts sources. It holds the PDF engine (PDFium compiled to
// WebAssembly, run by wazero: no cgo, no file system, bounded memory),
// started on the first PDF and kept until Close. It is safe for concurrent
// use.
type Converter struct {
	// CacheDir keeps PDFium's compiled code between processes; "" for
	// none (each process then compiles it once, a few seconds).
	CacheDir string

	mu   sync.Mutex
	pool pdfium.Pool
}

// NewConverter returns a converter whose compiled PDF engine is kept in
// the user's cache folder, when there is one.
func NewConverter() *Converter {
	c := &Converter{}
	if dir, err := os.UserCacheDir(); err == nil {
		c.CacheDir = filepath.Join(dir, "cairn", "wazero")
	}
	return c
}

// Close stops the PDF engine.
func (c *Converter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool == nil {
		return nil
	}
	err := c.pool.Close()
	c.pool = nil
	return err
}

// Source returns the text an agent integrates for the source at path:
// its content as it is for Markdown and text, converted to Markdown for
// HTML and PDF. converted says which.
func (c *Converter) Source(ctx context.Context, p string, data []byte) (text []byte, converted bool, err error) {
	switch Needed(p) {
	case "html":
		text, err := HTML(ctx, p, data)
		return text, true, err
	case "pdf":
		text, err := c.PDF(ctx, p, data)
		return text, true, err
	}
	return data, false, nil
}

// engine starts PDFium on first use.
func (c *Converter) engine() (pdfium.Pool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool != nil {
		return c.pool, nil
	}
	rc := wazero.NewRuntimeConfig().
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithMemoryLimitPages(pdfMemoryPages).
		WithCloseOnContextDone(true)
	if c.CacheDir != "" {
		if cache, err := wazero.NewCompilationCacheWithDir(c.CacheDir); err == nil {
			rc = rc.WithCompilationCache(cache)
		}
	}
	pool, err := webassembly.Init(webassembly.Config{
		// One instance kept between documents (a new one costs some 0.4
		// s); one that failed is killed, never reused.
		MinIdle: 0, MaxIdle: 1, MaxTotal: 4, ReuseWorkers: true,
		// Nothing of the file system: PDFium reads the PDF from memory.
		FSConfig:      wazero.NewFSConfig(),
		RuntimeConfig: rc,
		Stdout:        discard{}, Stderr: discard{},
	})
	if err != nil {
		return nil, fmt.Errorf("convert: start PDFium: %w", err)
	}
	c.pool = pool
	return pool, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// PDF extracts the text of a PDF as Markdown: its title, then each page's
// text under a "## Page N" heading, so that a summary can cite the page. A
// PDF that is encrypted, malformed, has no text layer (a scan), more than
// MaxPDFPages pages, or whose extraction takes longer than PDFTimeout or
// more memory than PDFium is given, is refused with an EINVALID error that
// names the file and the problem.
func (c *Converter) PDF(ctx context.Context, name string, data []byte) ([]byte, error) {
	bad := func(format string, args ...any) *cairn.Error {
		return cairn.Errorf(cairn.EINVALID, "%s: "+format, append([]any{name}, args...)...)
	}
	pool, err := c.engine()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, PDFTimeout)
	defer cancel()
	inst, err := pool.GetInstanceWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("convert: PDFium: %w", err)
	}
	type result struct {
		md  []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("PDFium failed: %v", r)}
			}
		}()
		md, err := extract(inst, name, data)
		done <- result{md, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			inst.Kill()
		} else {
			inst.Close()
		}
		var ce *cairn.Error
		switch {
		case errors.As(r.err, &ce):
			return nil, r.err
		case r.err != nil && strings.Contains(r.err.Error(), "wasm error"):
			// PDFium trapped: it ran out of the memory it is given, or
			// the file broke it. The instance is gone with it.
			first, _, _ := strings.Cut(r.err.Error(), "\n")
			return nil, bad("PDFium stopped reading the PDF (%s): it needs more than %d MiB, or is damaged (a PDF bomb?)", first, pdfMemoryPages/16).
				WithHint("Save its text as Markdown or text and ingest that.")
		case r.err != nil:
			return nil, bad("the PDF could not be read: %v", r.err).WithHint("Save it again from the program that made it, or ingest its text.")
		}
		return r.md, nil
	case <-ctx.Done():
		inst.Kill() // interrupts PDFium where it runs
		if ctx.Err() == context.DeadlineExceeded {
			return nil, bad("reading the PDF took longer than %s (a PDF bomb?)", PDFTimeout).
				WithHint("Save its text as Markdown or text and ingest that.")
		}
		return nil, ctx.Err()
	}
}

// extract reads a PDF's pages with one PDFium instance.
func extract(inst pdfium.Pdfium, name string, data []byte) ([]byte, error) {
	bad := func(format string, args ...any) *cairn.Error {
		return cairn.Errorf(cairn.EINVALID, "%s: "+format, append([]any{name}, args...)...)
	}
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	switch {
	case errors.Is(err, pdfiumerrors.ErrPassword):
		return nil, bad("the PDF is encrypted (it needs a password)").WithHint("Save a copy without a password, or its text, and ingest that.")
	case errors.Is(err, pdfiumerrors.ErrFormat), errors.Is(err, pdfiumerrors.ErrFile):
		return nil, bad("the file is not a PDF cairn can read (%v)", err).WithHint("Save it again from the program that made it, or ingest its text.")
	case err != nil:
		return nil, err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return nil, err
	}
	if count.PageCount > MaxPDFPages {
		return nil, bad("the PDF has %d pages; cairn reads at most %d", count.PageCount, MaxPDFPages).
			WithHint("Split it, and ingest the parts that matter.")
	}
	title := strings.TrimSuffix(path.Base(name), path.Ext(name))
	if m, err := inst.FPDF_GetMetaText(&requests.FPDF_GetMetaText{Document: doc.Document, Tag: "Title"}); err == nil && strings.TrimSpace(m.Value) != "" {
		title = strings.Join(strings.Fields(m.Value), " ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", title)
	text := 0
	for i := range count.PageCount {
		t, err := inst.GetPageText(&requests.GetPageText{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}}})
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		page := strings.TrimSpace(strings.NewReplacer("\r\n", "\n", "\r", "\n", "\x00", "").Replace(t.Text))
		text += len(strings.TrimSpace(page))
		if b.Len()+len(page) > MaxPDFText {
			return nil, bad("the PDF holds more than %d MiB of text", MaxPDFText>>20).WithHint("Split it, and ingest the parts that matter.")
		}
		fmt.Fprintf(&b, "\n## Page %d\n\n%s\n", i+1, page)
	}
	if text == 0 {
		return nil, bad("the PDF has no text layer (a scan?); cairn reads text, not images").
			WithHint("Run OCR on it first (ocrmypdf adds a text layer), then ingest the result.")
	}
	return []byte(b.String()), nil
}
