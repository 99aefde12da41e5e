package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cairn/internal/vaultgen"
)

// Whole-process benchmarks: each iteration runs the cairn binary, process
// start included, on a generated vault (see internal/vaultgen).

func benchRun(b *testing.B, dir string, args ...string) time.Duration {
	b.Helper()
	d, _ := benchProc(b, dir, false, cairnBin(b), args...)
	return d
}

func p50(ds []time.Duration) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[len(ds)/2]) / float64(time.Millisecond)
}

func p95(ds []time.Duration) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*0.95)]) / float64(time.Millisecond)
}

// BenchmarkImport runs `cairn import` of a generated folder into a new vault:
// the whole process, index and working tree included.
func BenchmarkImport(b *testing.B) {
	for _, n := range []int{10_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			src := filepath.Join(b.TempDir(), "src")
			v := vaultgen.New(vaultgen.Config{Pages: n})
			if err := v.WriteDir(b.Context(), src); err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			for i := range b.N {
				dir := filepath.Join(b.TempDir(), fmt.Sprint("v", i))
				os.MkdirAll(dir, 0o755)
				benchRun(b, dir, "init")
				total += benchRun(b, dir, "import", src)
			}
			b.ReportMetric(float64(v.Len()+2)*float64(b.N)/total.Seconds(), "pages/s")
			b.ReportMetric(total.Seconds()/float64(b.N), "s/import")
		})
	}
}

// BenchmarkAdopt runs `cairn init` of a folder of generated pages (main's
// first commit, index and stat rows included) beside `git init && git add
// -A && git commit` of another copy of the same folder, alternating: wall
// time and peak memory of each side's largest process.
func BenchmarkAdopt(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("needs git")
	}
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			v := vaultgen.New(vaultgen.Config{Pages: n})
			var ours, theirs []time.Duration
			var ourRSS, theirRSS int64
			for i := range b.N {
				b.StopTimer()
				mine, gits := filepath.Join(b.TempDir(), fmt.Sprint("cairn", i)), filepath.Join(b.TempDir(), fmt.Sprint("git", i))
				for _, dir := range []string{mine, gits} {
					if err := v.WriteDir(b.Context(), dir); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				d, rss := benchProc(b, mine, true, cairnBin(b), "init")
				ours, ourRSS = append(ours, d), max(ourRSS, rss)
				var took time.Duration
				for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "adopt"}} {
					d, rss := benchProc(b, gits, true, "git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "gc.auto=0"}, args...)...)
					took, theirRSS = took+d, max(theirRSS, rss)
				}
				theirs = append(theirs, took)
			}
			b.ReportMetric(p50(ours)/1000, "cairn-s")
			b.ReportMetric(p50(theirs)/1000, "git-s")
			b.ReportMetric(float64(ourRSS)/1024, "cairn-MiB")
			b.ReportMetric(float64(theirRSS)/1024, "git-MiB")
		})
	}
}

// BenchmarkStatus runs `cairn status` in a working tree of 10k and of 100k
// generated pages with 10 local edits, and `git status --short` in the
// same folder (a git repository too, its edits the same), alternating:
// cold (no other cairn process), while `cairn worker` watches the folder
// (status opens the vault and reads the worker's journal), and while
// `cairn serve` does (status goes through the server). With
// $CAIRN_BENCH_BASE, the path of another cairn binary, the cold runs
// interleave its status too (base-p50-ms).
func BenchmarkStatus(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "vault")
			v := vaultgen.New(vaultgen.Config{Pages: n})
			if err := v.WriteDir(b.Context(), dir); err != nil {
				b.Fatal(err)
			}
			_, hasGit := exec.LookPath("git")
			git := func(args ...string) time.Duration {
				d, _ := benchProc(b, dir, false, "git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "gc.auto=0"}, args...)...)
				return d
			}
			if hasGit == nil {
				git("init", "-q")
			}
			benchRun(b, dir, "init")
			if hasGit == nil {
				git("add", "-A")
				git("commit", "-q", "-m", "start")
			}
			for i := range 10 {
				f := v.Edit(i*997, 1)
				if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			benchRun(b, dir, "status") // the first status reads the edited files
			for _, mode := range []string{"cold", "worker", "serve"} {
				b.Run(mode, func(b *testing.B) {
					switch mode {
					case "worker":
						w := exec.Command(cairnBin(b), "worker")
						w.Dir, w.Env = dir, append(os.Environ(), "CAIRN_USER=bench")
						if err := w.Start(); err != nil {
							b.Fatal(err)
						}
						defer func() { w.Process.Signal(os.Interrupt); w.Wait() }()
					case "serve":
						p := startServe(b, dir)
						defer p.stop(syscall.SIGINT)
					}
					if mode != "cold" {
						// The watcher is up once its journal is there; the
						// first status after it walks.
						for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
							if m, _ := filepath.Glob(filepath.Join(dir, ".cairn", "status-*.watch")); len(m) > 0 {
								break
							}
							if time.Now().After(deadline) {
								b.Fatal("no watch journal within 60s")
							}
						}
						benchRun(b, dir, "status")
					}
					// Another cairn to compare ours with (the code
					// before a change) runs between ours and git's in
					// each iteration, cold only: interleaved, the three
					// see the same machine, which from one run to the
					// next moves more than a change does.
					base := os.Getenv("CAIRN_BENCH_BASE")
					if mode != "cold" {
						base = ""
					}
					if base != "" {
						benchProc(b, dir, false, base, "status") // its first status writes its cache
					}
					var ours, theirs, before []time.Duration
					b.ResetTimer()
					for range b.N {
						ours = append(ours, benchRun(b, dir, "status"))
						if base != "" {
							d, _ := benchProc(b, dir, false, base, "status")
							before = append(before, d)
						}
						if hasGit == nil {
							theirs = append(theirs, git("status", "--short"))
						}
					}
					b.StopTimer()
					b.ReportMetric(p50(ours), "p50-ms")
					b.ReportMetric(p95(ours), "p95-ms")
					if len(before) > 0 {
						b.ReportMetric(p50(before), "base-p50-ms")
					}
					if len(theirs) > 0 {
						b.ReportMetric(p50(theirs), "git-p50-ms")
					}
				})
			}
		})
	}
}

// BenchmarkRead runs `cairn show`, `cairn search` and `cairn backlinks` on
// a 100k-page vault.
func BenchmarkRead(b *testing.B) {
	root := b.TempDir()
	src := filepath.Join(root, "src")
	v := vaultgen.New(vaultgen.Config{Pages: 100_000})
	if err := v.WriteDir(b.Context(), src); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, "vault")
	os.MkdirAll(dir, 0o755)
	benchRun(b, dir, "init", "--bare")
	benchRun(b, dir, "import", src)
	queries := v.Queries(200, 3)
	for _, tc := range []struct {
		name string
		args func(i int) []string
	}{
		{"show", func(i int) []string { return []string{"show", v.Path(i * 37 % v.Len())} }},
		{"search", func(i int) []string { return []string{"search", queries[i%len(queries)]} }},
		{"backlinks", func(i int) []string { return []string{"backlinks", v.Path(i * 53 % v.Len())} }},
		// The default agent's answer, by retrieval: a question naming a
		// page's title among question words.
		{"ask", func(i int) []string {
			return []string{"ask", "What do the notes say about " + v.Titles()[i*61%v.Len()] + "?"}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ds []time.Duration
			for i := range b.N {
				ds = append(ds, benchRun(b, dir, tc.args(i)...))
			}
			b.ReportMetric(p50(ds), "p50-ms")
			b.ReportMetric(p95(ds), "p95-ms")
		})
	}
	// A word in most pages, beside grep -ril W | head on the folder: the
	// commonest that cairn searches for (not a stopword).
	var common string
	var share float64
	for _, c := range commonWords(v, 200) {
		cmd := exec.Command(cairnBin(b), "search", c.word)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "CAIRN_USER=bench")
		out, err := cmd.CombinedOutput()
		if err == nil {
			common, share = c.word, c.share
			break
		}
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 { // 2: a stopword
			b.Fatalf("cairn search %s: %v\n%s", c.word, err, out)
		}
	}
	if common == "" {
		b.Fatal("every common word is a stopword")
	}
	b.Run("search-common", func(b *testing.B) {
		var ours, theirs []time.Duration
		for range b.N {
			ours = append(ours, benchRun(b, dir, "search", common))
			d, _ := benchProc(b, src, false, "sh", "-c", "grep -ril "+common+" . | head")
			theirs = append(theirs, d)
		}
		b.ReportMetric(share, "pages-matched-%")
		b.ReportMetric(p50(ours), "cairn-p50-ms")
		b.ReportMetric(p95(ours), "cairn-p95-ms")
		b.ReportMetric(p50(theirs), "grep-p50-ms")
	})
}

// wordShare is a word and the share of pages holding it, in percent.
type wordShare struct {
	word  string
	share float64
}

// commonWords returns the n words of four letters or more found in the
// most pages' text of v, commonest first.
func commonWords(v *vaultgen.Vault, n int) []wordShare {
	count := map[string]int{}
	pages := 0
	for _, f := range v.All() {
		if !strings.HasSuffix(f.Path, ".md") {
			continue
		}
		pages++
		text := string(f.Data)
		if rest, ok := strings.CutPrefix(text, "---\n"); ok {
			_, text, _ = strings.Cut(rest, "\n---\n") // the frontmatter is not searched
		}
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if len(w) >= 4 && !seen[w] {
				seen[w] = true
				count[w]++
			}
		}
	}
	words := slices.Collect(maps.Keys(count))
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	out := make([]wordShare, min(n, len(words)))
	for i := range out {
		out[i].word, out[i].share = words[i], 100*float64(count[words[i]])/float64(pages)
	}
	return out
}

// BenchmarkCommitPath edits one page of a generated vault that is also a
// git repository, and commits it both ways in the same run, alternating:
// `cairn commit -m e PATH`, and `git add PATH && git commit -m e`. It
// reports each side's whole-process time (git's two processes together)
// and the peak resident memory of its largest process; "status" runs
// `cairn status PATH` and `git status PATH` the same way.
func BenchmarkCommitPath(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("needs git")
	}
	for _, n := range []int{10_000, 100_000} {
		dir := filepath.Join(b.TempDir(), "vault")
		v := vaultgen.New(vaultgen.Config{Pages: n})
		if err := v.WriteDir(b.Context(), dir); err != nil {
			b.Fatal(err)
		}
		git := func(args ...string) (time.Duration, int64) {
			b.Helper()
			return benchProc(b, dir, true, "git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "gc.auto=0"}, args...)...)
		}
		git("init", "-q")
		benchRun(b, dir, "init") // adopts the folder; writes .gitignore's line for .cairn
		git("add", "-A")
		git("commit", "-q", "-m", "start")
		round := 0 // edits differ across the runs the framework makes
		edit := func(i int) string {
			round++
			f := v.Edit(i, round)
			if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, 0o644); err != nil {
				b.Fatal(err)
			}
			return f.Path
		}
		b.Run(fmt.Sprintf("pages=%d/commit", n), func(b *testing.B) {
			var ours, theirs []time.Duration
			var ourRSS, theirRSS int64
			for i := range b.N {
				p := edit(i * 7919 % v.Len())
				d, rss := benchProc(b, dir, true, cairnBin(b), "commit", "-m", "e", p)
				ours, ourRSS = append(ours, d), max(ourRSS, rss)
				p = edit((i*7919 + 1) % v.Len())
				d1, rss1 := git("add", p)
				d2, rss2 := git("commit", "-q", "-m", "e")
				theirs, theirRSS = append(theirs, d1+d2), max(theirRSS, rss1, rss2)
			}
			b.ReportMetric(p50(ours), "cairn-p50-ms")
			b.ReportMetric(p50(theirs), "git-p50-ms")
			b.ReportMetric(float64(ourRSS)/1024, "cairn-MiB")
			b.ReportMetric(float64(theirRSS)/1024, "git-MiB")
		})
		b.Run(fmt.Sprintf("pages=%d/status", n), func(b *testing.B) {
			var ours, theirs []time.Duration
			for i := range b.N {
				p := edit(i * 104729 % v.Len())
				d, _ := benchProc(b, dir, true, cairnBin(b), "status", p)
				ours = append(ours, d)
				d, _ = git("status", "--short", p)
				theirs = append(theirs, d)
			}
			b.ReportMetric(p50(ours), "cairn-p50-ms")
			b.ReportMetric(p50(theirs), "git-p50-ms")
		})
	}
}

// benchProc runs a program in dir and returns its wall time and, with rss,
// its peak resident memory in KiB, measured by /usr/bin/time (0 without
// it): the peak a process forked from this one reports counts this one's
// memory, which a small parent does not add to.
func benchProc(b *testing.B, dir string, rss bool, prog string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(prog, args...)
	rssFile := filepath.Join(b.TempDir(), "rss")
	if _, err := os.Stat("/usr/bin/time"); err == nil && rss {
		cmd = exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", rssFile, prog}, args...)...)
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAIRN_USER=bench")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s %v: %v\n%s", prog, args, err, out)
	}
	var kib int64
	if data, err := os.ReadFile(rssFile); err == nil {
		kib, _ = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	}
	return d, kib
}
