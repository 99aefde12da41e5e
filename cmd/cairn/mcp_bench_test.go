package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// timed calls a tool and returns how long the round trip took; an error
// or an error result fails the benchmark.
func timed(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) time.Duration {
	t0 := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	d := time.Since(t0)
	if err != nil || res.IsError {
		if res != nil {
			b.Fatalf("%s %v: %+v", name, args, res.Content[0])
		}
		b.Fatalf("%s %v: %v", name, args, err)
	}
	return d
}

// pageID is a page's id: its path without .md.
func pageID(path string) string { return strings.TrimSuffix(path, ".md") }

// BenchmarkMCPRead calls read_page and search at 100k pages, one call at
// a time, over stdio (cairn mcp as a child process) and over HTTP (cairn
// serve's /mcp with a token): each call's whole round trip, JSON-RPC
// encoded and decoded by the go-sdk client. Every fifth call of each is a
// search from the benchmark query mix.
func BenchmarkMCPRead(b *testing.B) {
	for _, n := range benchPages(100_000) {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			vault, pages, queries := loadVault(b, n)
			s := startServe(b, vault)
			defer func() {
				if b.Failed() {
					b.Log(s.out.String())
				}
			}()
			httpCS, err := httpSession(b, s.file.URL, s.file.Token)
			if err != nil {
				b.Fatal(err)
			}
			defer httpCS.Close()
			stdio := stdioSession(b, vault)
			sessions := []struct {
				name string
				cs   *mcp.ClientSession
			}{{"stdio", stdio}, {"http", httpCS}}
			reads := map[string][]time.Duration{}
			searches := map[string][]time.Duration{}
			for _, s := range sessions {
				// Warm: the first search reads the index's totals.
				timed(b, s.cs, "search", map[string]any{"query": queries[0]})
			}
			b.ResetTimer()
			for i := range b.N {
				for _, s := range sessions {
					reads[s.name] = append(reads[s.name], timed(b, s.cs, "read_page", map[string]any{"id": pageID(pages[i%len(pages)])}))
					if i%5 == 0 {
						searches[s.name] = append(searches[s.name], timed(b, s.cs, "search", map[string]any{"query": queries[(i/5)%len(queries)]}))
					}
				}
			}
			b.StopTimer()
			for _, s := range sessions {
				b.ReportMetric(percentile(reads[s.name], 0.50), "read-"+s.name+"-p50-ms")
				b.ReportMetric(percentile(reads[s.name], 0.99), "read-"+s.name+"-p99-ms")
				b.ReportMetric(percentile(searches[s.name], 0.50), "search-"+s.name+"-p50-ms")
				b.ReportMetric(percentile(searches[s.name], 0.99), "search-"+s.name+"-p99-ms")
			}
			s.stop(syscall.SIGTERM)
		})
	}
}

// commandSession connects a go-sdk client to an MCP server started as cmd.
// The client introduces itself as name.
func commandSession(tb testing.TB, cmd *exec.Cmd, name string) *mcp.ClientSession {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		tb.Fatalf("connect to %v: %v", cmd.Args, err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkMCPEva runs the same calls against cairn mcp and against Eva's
// MCP server (Node, packages/eva-mcp/server.mjs of the Eva-brain
// repository, which re-reads the whole vault on every call) on the same
// generated vaults, both over stdio: read_page of pages by id and search
// of the benchmark query mix, alternating between the two servers. It
// reports each one's p50 and the ratio. It needs CAIRN_EVA_MCP, the path
// of Eva's server.mjs as scripts/eva-mcp.sh installs it; without it, it is
// skipped.
func BenchmarkMCPEva(b *testing.B) {
	eva := os.Getenv("CAIRN_EVA_MCP")
	if eva == "" {
		b.Skip("CAIRN_EVA_MCP names no Eva MCP server: CAIRN_EVA_MCP=$(scripts/eva-mcp.sh EVA_CHECKOUT)")
	}
	for _, n := range benchPages(1_000, 10_000) {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			vault, pages, queries := loadVault(b, n)
			cairnCS := stdioSession(b, vault)
			cmd := exec.Command("node", eva)
			cmd.Env = append(os.Environ(), "EVA_VAULT="+vault)
			evaCS := commandSession(b, cmd, "bench")
			sessions := []struct {
				name string
				cs   *mcp.ClientSession
			}{{"cairn", cairnCS}, {"eva", evaCS}}
			reads := map[string][]time.Duration{}
			searches := map[string][]time.Duration{}
			b.ResetTimer()
			for i := range b.N {
				for _, s := range sessions {
					reads[s.name] = append(reads[s.name], timed(b, s.cs, "read_page", map[string]any{"id": pageID(pages[i%len(pages)])}))
					searches[s.name] = append(searches[s.name], timed(b, s.cs, "search", map[string]any{"query": queries[i%len(queries)]}))
				}
			}
			b.StopTimer()
			for _, s := range sessions {
				b.ReportMetric(percentile(reads[s.name], 0.50), "read-"+s.name+"-p50-ms")
				b.ReportMetric(percentile(searches[s.name], 0.50), "search-"+s.name+"-p50-ms")
			}
			b.ReportMetric(percentile(reads["eva"], 0.50)/percentile(reads["cairn"], 0.50), "read-eva/cairn")
			b.ReportMetric(percentile(searches["eva"], 0.50)/percentile(searches["cairn"], 0.50), "search-eva/cairn")
		})
	}
}

// BenchmarkMCPLoad runs 32 MCP clients over HTTP against cairn serve's
// /mcp for 60 s on a 10k-page vault: each makes nine reads (read_page, or
// every third a search of the query mix), then reads a page and appends a
// line of its own to it with write_page and the hash it read; 64 pages
// take the writes, so clients meet on them. Afterwards every line a
// client was told was admitted must be in main exactly once and every
// line refused as a conflict absent.
func BenchmarkMCPLoad(b *testing.B) {
	vault, pages, queries := loadVault(b, 10_000)
	written := pages[:64]
	heads := headsOf(b, vault, written)
	s := startServe(b, vault)
	var res *mcpLoadResult
	for range b.N {
		var sessions []*mcp.ClientSession
		for range 32 {
			cs, err := httpSession(b, s.file.URL, s.file.Token)
			if err != nil {
				b.Fatal(err)
			}
			sessions = append(sessions, cs)
		}
		res = runMCPLoad(b, sessions, mcpLoad{pages: written, readPages: pages, heads: heads, duration: 60 * time.Second, reads: 9, queries: queries})
		for _, cs := range sessions {
			cs.Close()
		}
	}
	b.StopTimer()
	rss, _ := rssKiB(s.cmd.Process.Pid)
	s.stop(syscall.SIGTERM)
	checkLines(b, vault, written, res.admitted, res.refused)
	checkRead(b, vault, written, res.read)
	secs := res.took.Seconds()
	b.ReportMetric(percentile(res.reads, 0.50), "read-p50-ms")
	b.ReportMetric(percentile(res.reads, 0.99), "read-p99-ms")
	b.ReportMetric(float64(len(res.reads))/secs, "reads/s")
	b.ReportMetric(float64(len(res.admitted))/secs, "admitted/s")
	b.ReportMetric(float64(len(res.refused))/secs, "conflicts/s")
	b.ReportMetric(float64(rss)/1024, "rss-MiB")
}

// benchPages is the vault sizes of a benchmark: def, or the sizes
// $CAIRN_BENCH_PAGES lists (comma-separated), to try a change quickly.
func benchPages(def ...int) []int {
	var out []int
	for _, f := range strings.Split(os.Getenv("CAIRN_BENCH_PAGES"), ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return def
	}
	return out
}
