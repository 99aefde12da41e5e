package vaultgen_test

import (
	"strconv"
	"testing"

	"cairn/internal/vaultgen"
)

// BenchmarkGenerate generates whole vaults: New, then every file, streamed
// through Files on one goroutine or collected by All on GOMAXPROCS.
func BenchmarkGenerate(b *testing.B) {
	for _, mode := range []string{"Files", "All"} {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(mode+"/pages="+strconv.Itoa(n), func(b *testing.B) {
				var size int64
				for b.Loop() {
					v := vaultgen.New(vaultgen.Config{Pages: n, Raw: true})
					size = 0
					if mode == "All" {
						for _, f := range v.All() {
							size += int64(len(f.Data))
						}
						continue
					}
					for f := range v.Files() {
						size += int64(len(f.Data))
					}
				}
				b.SetBytes(size)
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			})
		}
	}
}

// BenchmarkNew decides the titles and link structure of a 100k-page vault.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		vaultgen.New(vaultgen.Config{Pages: 100000})
	}
}

// BenchmarkPage generates single pages of a 100k-page vault.
func BenchmarkPage(b *testing.B) {
	v := vaultgen.New(vaultgen.Config{Pages: 100000})
	i := 0
	for b.Loop() {
		v.Page(i % v.Len())
		i += 7919
	}
}
