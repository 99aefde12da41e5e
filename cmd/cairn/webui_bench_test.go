package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// signInLink returns the secret of the sign-in link s printed.
func signInLink(tb testing.TB, s *serveProc) string {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := regexp.MustCompile(`/signin\?link=(\S+)`).FindStringSubmatch(s.out.String()); m != nil {
			return m[1]
		}
	}
	tb.Fatalf("cairn serve printed no sign-in link:\n%s", s.out.String())
	return ""
}

// webSession signs in to the web interface of s with the link it printed
// and returns a client holding the session.
func webSession(tb testing.TB, s *serveProc) *http.Client {
	tb.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(s.file.URL+"/signin", url.Values{"token": {signInLink(tb, s)}})
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		tb.Fatalf("sign in: %d", resp.StatusCode)
	}
	return c
}

// fetch GETs path and returns how long the whole answer took.
func fetch(b *testing.B, c *http.Client, base, path string) time.Duration {
	t0 := time.Now()
	resp, err := c.Get(base + path)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s = %d", path, resp.StatusCode)
	}
	return d
}

// BenchmarkWebUI measures the web interface's reader and search views at
// 100k pages ($CAIRN_BENCH_PAGES): each GET's whole round trip through
// cairn serve on loopback, the page rendered (the reader: the page, its
// frontmatter, links, backlinks, findings and last commits; search: the
// benchmark query mix, 30 results with their snippets).
func BenchmarkWebUI(b *testing.B) {
	for _, n := range benchPages(100_000) {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			vault, pages, queries := loadVault(b, n)
			s := startServe(b, vault)
			c := webSession(b, s)
			fetch(b, c, s.file.URL, "/search?q="+url.QueryEscape(queries[0])) // warm the index's totals
			var reads, searches []time.Duration
			b.ResetTimer()
			for i := range b.N {
				reads = append(reads, fetch(b, c, s.file.URL, "/pages/"+pages[i%len(pages)]))
				searches = append(searches, fetch(b, c, s.file.URL, "/search?q="+url.QueryEscape(queries[i%len(queries)])))
			}
			b.StopTimer()
			b.ReportMetric(percentile(reads, 0.50), "reader-p50-ms")
			b.ReportMetric(percentile(reads, 0.99), "reader-p99-ms")
			b.ReportMetric(percentile(searches, 0.50), "search-p50-ms")
			b.ReportMetric(percentile(searches, 0.99), "search-p99-ms")
			s.stop(syscall.SIGTERM)
		})
	}
}

// BenchmarkWebUIBrowser measures, in headless Chromium, the reader's first
// contentful paint and how long the graph of the whole vault takes to be
// drawn (from navigating to its first frame with every page), at 10k pages
// ($CAIRN_BENCH_PAGES): the first graph of a tree is computed and laid out
// by the server (cold), later ones come from its cache (warm).
func BenchmarkWebUIBrowser(b *testing.B) {
	exe, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("no Chromium: apt-get install chromium")
	}
	for _, n := range benchPages(10_000) {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			vault, pages, _ := loadVault(b, n)
			s := startServe(b, vault)
			opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
				chromedp.DisableGPU, chromedp.WindowSize(1280, 800), chromedp.UserDataDir(b.TempDir()))
			actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
			defer cancelAlloc()
			ctx, cancel := chromedp.NewContext(actx)
			defer cancel()
			err := chromedp.Do(ctx, chromedp.Navigate(s.file.URL+"/signin?link="+signInLink(b, s)), chromedp.Click(chromedp.ID("use-link")),
				chromedp.WaitVisible(chromedp.CSS("form.who")))
			if err != nil {
				b.Fatal(err)
			}
			graph := func() time.Duration {
				t0 := time.Now()
				if err := chromedp.Do(ctx, chromedp.Navigate(s.file.URL+"/graph"), chromedp.WaitVisible(chromedp.CSS("#graph[data-ready]"))); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			cold := graph()
			var fcps, warm []time.Duration
			b.ResetTimer()
			for i := range b.N {
				if err := chromedp.Do(ctx, chromedp.Navigate(s.file.URL+"/pages/"+pages[i%len(pages)]), chromedp.WaitVisible(chromedp.CSS(".reader .body"))); err != nil {
					b.Fatal(err)
				}
				// The paint entry is recorded a moment after the paint.
				fcp := -1.0
				for try := 0; fcp < 0 && try < 50; try++ {
					if fcp, err = chromedp.Run(ctx, chromedp.Evaluate[float64](`(performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint") || {startTime: -1}).startTime`)); err != nil {
						b.Fatal(err)
					}
					if fcp < 0 {
						time.Sleep(20 * time.Millisecond)
					}
				}
				if fcp < 0 {
					b.Fatal("no first contentful paint was recorded")
				}
				fcps = append(fcps, time.Duration(fcp*float64(time.Millisecond)))
				warm = append(warm, graph())
			}
			b.StopTimer()
			b.ReportMetric(percentile(fcps, 0.50), "reader-fcp-p50-ms")
			b.ReportMetric(float64(cold)/float64(time.Millisecond), "graph-cold-ms")
			b.ReportMetric(percentile(warm, 0.50), "graph-warm-p50-ms")
			s.stop(syscall.SIGTERM)
		})
	}
}
