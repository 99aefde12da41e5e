package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cairn/httpapi"
	"cairn/index"
	"cairn/internal/vaultgen"
)

// loadConfig is a load of clients against a server: how many clients,
// for how long, which pages they read and which words they search.
type loadConfig struct {
	clients  int
	duration time.Duration
	pages    []string // paths of pages to read
	words    []string // words to search for
	// writeEvery makes one operation in writeEvery a changeset; the
	// others are reads. Default 10.
	writeEvery int
	// think is the mean pause of a client between two requests
	// (exponentially distributed, so the requests of all clients arrive
	// as a Poisson stream); 0: none, each client sends its next request
	// as soon as it has an answer.
	think time.Duration
	// kill, when set, is called once, halfway through.
	kill func()
	// prefix starts the names of the pages the changesets write, so that
	// loads on several servers of one vault write different pages.
	prefix string
	// ingestEvery makes one operation in ingestEvery an upload of a new
	// source (POST /api/v1/sources), which the servers' workers integrate;
	// 0: none.
	ingestEvery int
}

// loadResult is what the clients saw. A change is admitted when the
// server said so (200 with a commit), refused when it said it was not
// (409: the base moved), unknown when no answer came (the server died).
type loadResult struct {
	mu                          sync.Mutex
	reads                       []time.Duration
	admitted, refused, unknown  []string // the changes' paths
	queued                      int      // sources uploaded and queued
	status                      map[int]int
	readErrors, transportErrors int
	took                        time.Duration
}

func (r *loadResult) count(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status[code]++
}

// serverErrors counts the answers with a 5xx status.
func (r *loadResult) serverErrors() int {
	n := 0
	for code, c := range r.status {
		if code >= 500 {
			n += c
		}
	}
	return n
}

// runLoad runs cfg against the server f describes, every client with the
// owner's token (the vault's server.rate must allow the load).
func runLoad(tb testing.TB, f *httpapi.ServerFile, cfg loadConfig) *loadResult {
	tb.Helper()
	writeEvery := cfg.writeEvery
	if writeEvery == 0 {
		writeEvery = 10
	}
	res := &loadResult{status: map[int]int{}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.clients
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration)
	defer cancel()
	do := func(req *http.Request) (int, []byte, http.Header, error) {
		req.Header.Set("Authorization", "Bearer "+f.Token)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, body, resp.Header, err
	}
	var wg sync.WaitGroup
	start := time.Now()
	if cfg.kill != nil {
		wg.Go(func() {
			select {
			case <-time.After(cfg.duration / 2):
				cfg.kill()
			case <-ctx.Done():
			}
		})
	}
	for c := range cfg.clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			var reads []time.Duration
			defer func() {
				res.mu.Lock()
				res.reads = append(res.reads, reads...)
				res.mu.Unlock()
			}()
			for n := 0; ctx.Err() == nil; n++ {
				if cfg.think > 0 {
					select {
					case <-time.After(time.Duration(rng.ExpFloat64() * float64(cfg.think))):
					case <-ctx.Done():
						return
					}
				}
				if cfg.ingestEvery > 0 && rng.IntN(cfg.ingestEvery) == 0 {
					var buf bytes.Buffer
					mw := multipart.NewWriter(&buf)
					w, _ := mw.CreateFormFile("file", fmt.Sprintf("src-%s%02d-%05d.md", cfg.prefix, c, n))
					fmt.Fprintf(w, "# Source %s %d %d\n\nPaper mills beat rags into pulp, batch %d of client %d.\n", cfg.prefix, c, n, n, c)
					mw.Close()
					req, _ := http.NewRequest(http.MethodPost, f.URL+"/api/v1/sources", &buf)
					req.Header.Set("Content-Type", mw.FormDataContentType())
					code, data, _, err := do(req)
					res.mu.Lock()
					if err != nil {
						res.transportErrors++
					} else {
						if code >= 500 {
							tb.Logf("POST /api/v1/sources: %d %s", code, data)
						}
						res.status[code]++
						if code == 202 {
							res.queued++
						}
					}
					res.mu.Unlock()
					continue
				}
				if rng.IntN(writeEvery) != 0 {
					u := f.URL + "/api/v1/files?path=" + url.QueryEscape(cfg.pages[rng.IntN(len(cfg.pages))])
					if len(cfg.words) > 0 && rng.IntN(5) == 0 {
						u = f.URL + "/api/v1/search?q=" + url.QueryEscape(cfg.words[rng.IntN(len(cfg.words))])
					}
					req, _ := http.NewRequest(http.MethodGet, u, nil)
					t0 := time.Now()
					code, data, _, err := do(req)
					d := time.Since(t0)
					if code >= 500 {
						tb.Logf("GET %s: %d %s", u, code, data)
					}
					if err != nil {
						res.mu.Lock()
						res.transportErrors++
						res.mu.Unlock()
						continue
					}
					res.count(code)
					if code == 200 {
						reads = append(reads, d)
					} else {
						res.mu.Lock()
						res.readErrors++
						res.mu.Unlock()
					}
					continue
				}
				// A changeset on main's head, as read just before.
				path := fmt.Sprintf("load/%sc%02d-%05d.md", cfg.prefix, c, n)
				req, _ := http.NewRequest(http.MethodGet, f.URL+"/api/v1/branch?name=main", nil)
				code, data, h, err := do(req)
				if code >= 500 {
					tb.Logf("GET /api/v1/branch: %d %s", code, data)
				}
				if err != nil || code != 200 {
					if err != nil {
						res.mu.Lock()
						res.transportErrors++
						res.mu.Unlock()
					} else {
						res.count(code)
					}
					continue
				}
				body := fmt.Sprintf(`{"message":"load %s","changes":[{"path":%q,"content":"---\ntitle: Load %s\ntype: note\n---\nWritten under load. [[index]]\n"}]}`, path, path, path)
				req, _ = http.NewRequest(http.MethodPost, f.URL+"/api/v1/changes", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("If-Match", h.Get("ETag"))
				code, data, _, err = do(req)
				res.mu.Lock()
				switch {
				case err != nil:
					res.transportErrors++
					res.unknown = append(res.unknown, path)
				case code == 200 && strings.Contains(string(data), `"commit":{`):
					res.admitted = append(res.admitted, path)
				case code == 409:
					res.refused = append(res.refused, path)
				default:
					res.unknown = append(res.unknown, path)
					tb.Logf("%s: %d %s", path, code, data)
				}
				if err == nil {
					res.status[code]++
				}
				res.mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.took = time.Since(start)
	return res
}

// checkOnce checks that every change the load was told was admitted is in
// main, in one commit, and every refused one is absent: the files under
// load/ and the commits that wrote them.
func checkOnce(tb testing.TB, vault string, res *loadResult) {
	tb.Helper()
	r := runTB(tb, vault, "ls", "-r", "main:load", "--json")
	var listing struct {
		Items []struct{ Path string }
	}
	if r.code == 0 {
		json.Unmarshal([]byte(r.stdout), &listing)
	}
	inMain := map[string]bool{}
	for _, it := range listing.Items {
		inMain[it.Path] = true
	}
	r = runTB(tb, vault, "log", "--json")
	if r.code != 0 {
		tb.Fatalf("cairn log: %s", r.stderr)
	}
	var log struct {
		Items []struct{ Message string }
	}
	json.Unmarshal([]byte(r.stdout), &log)
	commits := map[string]int{}
	for _, c := range log.Items {
		if p, ok := strings.CutPrefix(c.Message, "load "); ok {
			commits[p]++
		}
	}
	for _, p := range res.admitted {
		if !inMain[p] || commits[p] != 1 {
			tb.Errorf("%s was admitted; main has it: %v, in %d commits (want 1)", p, inMain[p], commits[p])
		}
	}
	for _, p := range res.refused {
		if inMain[p] || commits[p] != 0 {
			tb.Errorf("%s was refused; main has it: %v, in %d commits (want 0)", p, inMain[p], commits[p])
		}
	}
	known := len(res.admitted) + len(res.unknown)
	if n := len(inMain); n > known {
		tb.Errorf("main holds %d files under load/, more than the %d changes admitted or unanswered", n, known)
	}
}

// runTB is run for a benchmark too.
func runTB(tb testing.TB, dir string, args ...string) result {
	tb.Helper()
	if t, ok := tb.(*testing.T); ok {
		return run(t, dir, nil, args...)
	}
	cmd := exec.Command(cairnBin(tb), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAIRN_USER=tester")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	r := result{stdout: string(out), stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		tb.Fatalf("cairn %v: %v", args, err)
	}
	return r
}

// loadVault makes a vault of n generated pages, with a rate that lets a
// load through, and returns its folder, some pages to read and searches
// (the benchmark query mix).
func loadVault(tb testing.TB, n int) (vault string, pages, words []string) {
	tb.Helper()
	vault = filepath.Join(tb.TempDir(), "vault")
	v := vaultgen.New(vaultgen.Config{Pages: n})
	if err := v.WriteDir(context.Background(), vault); err != nil {
		tb.Fatal(err)
	}
	for _, args := range [][]string{{"init"}, {"settings", "set", "server.rate", "1000000"}, {"settings", "set", "server.burst", "1000000"}} {
		if r := runTB(tb, vault, args...); r.code != 0 {
			tb.Fatalf("cairn %v: exit %d %s", args, r.code, r.stderr)
		}
	}
	for i := range min(n, 2000) {
		pages = append(pages, v.Path(i*max(1, n/2000)))
	}
	return vault, pages, v.Queries(200, 1)
}

// TestServe_Load runs clients that read and send changesets against their
// bases at once: no answer is a 5xx, and afterwards every change a client
// was told was admitted is in main in one commit, every refused one absent.
func TestServe_Load(t *testing.T) {
	if testing.Short() {
		t.Skip("a load of a few seconds")
	}
	vault, pages, words := loadVault(t, 300)
	s := startServe(t, vault)
	res := runLoad(t, s.file, loadConfig{clients: 16, duration: 4 * time.Second, pages: pages, words: words, writeEvery: 5})
	t.Logf("%d reads, %d admitted, %d refused, %d unknown; statuses %v", len(res.reads), len(res.admitted), len(res.refused), len(res.unknown), res.status)
	if n := res.serverErrors(); n != 0 || res.transportErrors != 0 || res.readErrors != 0 || len(res.unknown) != 0 {
		t.Errorf("%d answers were 5xx, %d reads failed, %d requests got no answer, %d changes no clear outcome: %v", n, res.readErrors, res.transportErrors, len(res.unknown), res.status)
	}
	if len(res.admitted) == 0 || len(res.refused) == 0 {
		t.Errorf("%d changes admitted and %d refused: the load should see both (bases that moved)", len(res.admitted), len(res.refused))
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("cairn serve exited %d:\n%s", code, s.out.String())
	}
	checkOnce(t, vault, res)
	if d := run(t, vault, nil, "doctor"); d.code != 0 {
		t.Errorf("doctor after the load:\n%s%s", d.stdout, d.stderr)
	}
}

// TestServe_KillDuringLoad kills the server (kill -9) in the middle of a
// load. A new server starts on the vault; doctor is clean, every change a
// client was told was admitted is in main once, every refused one absent;
// the changes that got no answer are in main or not, never twice.
func TestServe_KillDuringLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	vault, pages, words := loadVault(t, 300)
	s := startServe(t, vault)
	res := runLoad(t, s.file, loadConfig{clients: 16, duration: 4 * time.Second, pages: pages, words: words, writeEvery: 5,
		kill: func() { s.cmd.Process.Kill() }})
	<-s.done
	t.Logf("%d reads, %d admitted, %d refused, %d unknown; statuses %v", len(res.reads), len(res.admitted), len(res.refused), len(res.unknown), res.status)
	if n := res.serverErrors(); n != 0 {
		t.Errorf("%d answers were 5xx before the kill", n)
	}
	s2 := startServe(t, vault)
	if d := run(t, vault, nil, "doctor"); d.code != 0 || !strings.Contains(d.stdout, "No problems found") {
		t.Errorf("doctor after the kill, through the new server:\n%s%s", d.stdout, d.stderr)
	}
	if code := s2.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("the new server exited %d:\n%s", code, s2.out.String())
	}
	checkOnce(t, vault, res)
	if d := run(t, vault, nil, "doctor"); d.code != 0 {
		t.Errorf("doctor after the kill:\n%s%s", d.stdout, d.stderr)
	}
}

// percentile returns the p-th percentile of ds in milliseconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Millisecond)
}

// rssKiB returns a process's resident memory now and at its peak, in KiB.
func rssKiB(pid int) (now, peak int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			now = n
		case "VmHWM:":
			peak = n
		}
	}
	return now, peak
}

// BenchmarkServeLoad runs 64 clients for 60 seconds against cairn serve on
// a generated vault, 90% reads (four in five a page by path, one a search
// from the benchmark query mix of title words) and 10% changesets against
// the head they read. Each client pauses 100 ms on average between two
// requests (640 requests a second offered in all); the saturated runs
// (think=0) send each request as soon as the last is answered, so their
// latency is the clients' number divided by the throughput. It reports the
// reads' p50 and p99, the rates, the 5xx answers (which fail it, as a
// change admitted twice or a refused one in main does), and the server's
// memory afterwards.
func BenchmarkServeLoad(b *testing.B) {
	for _, tc := range []struct {
		pages int
		think time.Duration
	}{{10_000, 100 * time.Millisecond}, {10_000, 0}, {100_000, 100 * time.Millisecond}} {
		b.Run(fmt.Sprintf("pages=%d/think=%v", tc.pages, tc.think), func(b *testing.B) {
			vault, pages, words := loadVault(b, tc.pages)
			s := startServe(b, vault)
			_, startPeak := rssKiB(s.cmd.Process.Pid)
			var res *loadResult
			for range b.N {
				res = runLoad(b, s.file, loadConfig{clients: 64, duration: 60 * time.Second, pages: pages, words: words, think: tc.think})
			}
			b.StopTimer()
			rss, peak := rssKiB(s.cmd.Process.Pid)
			if n := res.serverErrors(); n != 0 || res.transportErrors != 0 {
				b.Errorf("%d answers were 5xx, %d got no answer: %v", n, res.transportErrors, res.status)
			}
			s.stop(syscall.SIGTERM)
			checkOnce(b, vault, res)
			secs := res.took.Seconds()
			b.ReportMetric(percentile(res.reads, 0.50), "read-p50-ms")
			b.ReportMetric(percentile(res.reads, 0.99), "read-p99-ms")
			b.ReportMetric(float64(len(res.reads))/secs, "reads/s")
			b.ReportMetric(float64(len(res.admitted))/secs, "admitted/s")
			b.ReportMetric(float64(len(res.refused))/secs, "refused/s")
			b.ReportMetric(float64(res.serverErrors()), "5xx")
			b.ReportMetric(float64(rss)/1024, "rss-MiB")
			b.ReportMetric(float64(peak)/1024, "peak-MiB")
			b.ReportMetric(float64(startPeak)/1024, "start-peak-MiB")
		})
	}
}

// BenchmarkServeRead reads pages at main (GET /api/v1/files) and searches
// (GET /api/v1/search, the benchmark query mix) through cairn serve, one
// request at a time, on a generated vault: each request's whole round
// trip over loopback, token checked, JSON encoded.
func BenchmarkServeRead(b *testing.B) {
	for _, n := range []int{100_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			vault, pages, queries := loadVault(b, n)
			s := startServe(b, vault)
			c, err := httpapi.NewClient(s.file.URL, s.file.Token)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			// Warm: the first search reads the index's totals.
			c.Search(ctx, index.SearchQuery{Text: queries[0]})
			var reads, searches []time.Duration
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				if _, err := c.ReadFile(ctx, "main", pages[i%len(pages)]); err != nil {
					b.Fatal(err)
				}
				reads = append(reads, time.Since(t0))
				if i%5 == 0 {
					t0 = time.Now()
					if _, err := c.Search(ctx, index.SearchQuery{Text: queries[(i/5)%len(queries)]}); err != nil {
						b.Fatal(err)
					}
					searches = append(searches, time.Since(t0))
				}
			}
			b.StopTimer()
			rss, _ := rssKiB(s.cmd.Process.Pid)
			s.stop(syscall.SIGTERM)
			b.ReportMetric(percentile(reads, 0.50), "read-p50-ms")
			b.ReportMetric(percentile(reads, 0.99), "read-p99-ms")
			b.ReportMetric(percentile(searches, 0.50), "search-p50-ms")
			b.ReportMetric(percentile(searches, 0.95), "search-p95-ms")
			b.ReportMetric(float64(rss)/1024, "rss-MiB")
		})
	}
}

// TestServe_RaceWithLocal runs a load of changesets through the server
// while other processes on the vault's machine import folders into main
// directly (cairn import opens the vault itself, beside the server), round
// after round: every change the server admitted is in main once, every
// refused one absent, every import's files are in main, and doctor is
// clean: no process lost another's change.
func TestServe_RaceWithLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("races processes")
	}
	vault, pages, words := loadVault(t, 200)
	root := filepath.Dir(vault)
	s := startServe(t, vault)
	const importers, rounds = 2, 4
	var wg sync.WaitGroup
	imported := make([][]string, importers)
	for i := range importers {
		wg.Go(func() {
			for r := range rounds {
				dir := filepath.Join(root, fmt.Sprintf("in-%d-%d", i, r))
				name := fmt.Sprintf("page-%d-%d.md", i, r)
				os.MkdirAll(dir, 0o755)
				os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("---\ntitle: Imported %d %d\ntype: note\n---\nImported beside the server. [[index]]\n", i, r)), 0o644)
				res := run(t, vault, nil, "import", "--prefix", fmt.Sprintf("imp/%d-%d", i, r), dir)
				if res.code != 0 {
					t.Errorf("import %d/%d: exit %d\n%s%s", i, r, res.code, res.stdout, res.stderr)
					continue
				}
				imported[i] = append(imported[i], fmt.Sprintf("imp/%d-%d/%s", i, r, name))
			}
		})
	}
	res := runLoad(t, s.file, loadConfig{clients: 8, duration: 5 * time.Second, pages: pages, words: words, writeEvery: 3})
	wg.Wait()
	t.Logf("%d reads, %d admitted, %d refused, %d unknown; statuses %v", len(res.reads), len(res.admitted), len(res.refused), len(res.unknown), res.status)
	if n := res.serverErrors(); n != 0 || res.transportErrors != 0 {
		t.Errorf("%d answers were 5xx, %d got none: %v", n, res.transportErrors, res.status)
	}
	if code := s.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("cairn serve exited %d:\n%s", code, s.out.String())
	}
	checkOnce(t, vault, res)
	for i, paths := range imported {
		if len(paths) != rounds {
			t.Errorf("importer %d landed %d of %d imports", i, len(paths), rounds)
		}
		for _, p := range paths {
			if r := run(t, vault, nil, "show", "main:"+p); r.code != 0 {
				t.Errorf("%s, imported beside the server, is not in main: %s", p, r.stderr)
			}
		}
	}
	if d := run(t, vault, nil, "doctor"); d.code != 0 {
		t.Errorf("doctor:\n%s%s", d.stdout, d.stderr)
	}
}
