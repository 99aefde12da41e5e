package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"cairn/internal/vaultgen"
)

// Whole-process benchmarks: each iteration runs the cairn binary, process
// start included, on a generated vault (see internal/vaultgen).

func benchRun(b *testing.B, dir string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(cairnBinB(b), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAIRN_USER=bench")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		b.Fatalf("cairn %v: %v\n%s", args, err, out)
	}
	return d
}

func cairnBinB(b *testing.B) string {
	p, err := exec.LookPath("cairn")
	if err != nil {
		b.Fatal(err)
	}
	return p
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

// BenchmarkStatus runs `cairn status` in a 10k-page working tree with 10
// local edits.
func BenchmarkStatus(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "vault")
	v := vaultgen.New(vaultgen.Config{Pages: 10_000})
	if err := v.WriteDir(b.Context(), dir); err != nil {
		b.Fatal(err)
	}
	benchRun(b, dir, "init")
	for i := range 10 {
		f := v.Edit(i*997, 1)
		if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchRun(b, dir, "status") // the first status reads the edited files
	var ds []time.Duration
	b.ResetTimer()
	for range b.N {
		ds = append(ds, benchRun(b, dir, "status"))
	}
	b.ReportMetric(p50(ds), "p50-ms")
	b.ReportMetric(p95(ds), "p95-ms")
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
}
