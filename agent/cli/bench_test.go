package cli_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"cairn"
	"cairn/agent"
	_ "cairn/agent/cli"
	"cairn/app"
	"cairn/internal/confine"
	"cairn/internal/vaultgen"
	"cairn/vault"
	"cairn/worktree"
)

func TestMain(m *testing.M) {
	confine.MaybeExec()
	os.Exit(m.Run())
}

// BenchmarkOverhead measures cairn's own part of one job of each agent
// CLI runtime: finding and checking the CLI, its credentials, writing its
// config, serving its MCP tools, reading its events and the workspace
// back — everything but making the workspace (Result.Materialize) and the
// agent's process (Result.Agent), which is the stand-in of testdata/standin
// writing one page. The vault has 1,000 pages ($CAIRN_BENCH_PAGES to
// change it); overhead-ms/op is the number issue 15 bounds (≤ 100 ms).
func BenchmarkOverhead(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	pages := 1000
	if n, err := strconv.Atoi(os.Getenv("CAIRN_BENCH_PAGES")); err == nil && n > 0 {
		pages = n
	}
	if err := vaultgen.New(vaultgen.Config{Pages: pages}).WriteDir(ctx, dir); err != nil {
		b.Fatal(err)
	}
	a, err := app.Init(ctx, dir, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Adopt(cairn.NewContextWithPrincipal(ctx, "user:bench"), "adopt"); err != nil {
		b.Fatal(err)
	}
	a.Close()
	v, _, err := vault.Open(ctx, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	head, err := v.Store.Head(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	b.Setenv("CAIRN_TEST_KEY", "sk-standin")
	b.Setenv("STANDIN_MODE", "bench") // as ok, without the MCP call
	for _, name := range []string{"claude", "codex", "opencode"} {
		b.Run(name, func(b *testing.B) {
			standin, err := filepath.Abs(filepath.Join("testdata", "standin", name))
			if err != nil {
				b.Fatal(err)
			}
			internal := filepath.Join(dir, vault.DirName)
			// Workspaces are removed in the background, as the worker
			// does it; waited for at the end.
			var bg sync.WaitGroup
			defer bg.Wait()
			rt, err := agent.New(agent.Env{
				Background: func(work func()) { bg.Go(work) },
				Settings: agent.Settings{
					Runtime: name, Command: standin, Env: []string{"STANDIN_MODE"},
					BaseURL: "http://127.0.0.1:9/v1", KeyEnv: "CAIRN_TEST_KEY", Model: "standin-model",
					Unconfined: true, Timeout: time.Minute, Inactivity: time.Minute,
				},
				Store: v.Store, Index: v.Index,
				Root: dir, Internal: internal, Database: filepath.Join(internal, vault.DBName),
				Tools: func(ctx context.Context, conn io.ReadWriteCloser, base cairn.Hash, dir string, _ *worktree.Snapshot) error {
					_, err := io.Copy(io.Discard, conn)
					return err
				},
			})
			if err != nil {
				b.Fatal(err)
			}
			var overhead, mat, ag time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				began := time.Now()
				res, err := rt.Run(ctx, &agent.Task{Job: int64(i + 1), Attempt: 1, Base: head,
					Source: agent.SourceDoc{Path: "raw/standin.md", Data: []byte("# Stand-in\n")}})
				if err != nil {
					b.Fatal(err)
				}
				total := time.Since(began)
				overhead += total - res.Materialize - res.Agent
				mat += res.Materialize
				ag += res.Agent
			}
			n := float64(b.N)
			b.ReportMetric(float64(overhead.Microseconds())/1000/n, "overhead-ms/op")
			b.ReportMetric(float64(mat.Microseconds())/1000/n, "materialize-ms/op")
			b.ReportMetric(float64(ag.Microseconds())/1000/n, "agent-ms/op")
		})
	}
}
