package worktree

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
)

// readCache reads the status cache at path as a status does; nil when
// there is none or it cannot be trusted.
func readCache(path string) *statCache {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	return readCacheFile(f)
}

// TestReadCache_RoundTrip: a written status cache reads back as it was, and
// one cut short (its checksum made right again, so the decoder itself is
// tried) reads as none; one whose bytes are changed reads as a cache or as
// none, never panics.
func TestReadCache_RoundTrip(t *testing.T) {
	c := &statCache{base: cairn.Hash{1}, folder: cairn.Hash{2}, over: cairn.Hash{3}, overPaths: []string{"b.md", "z/ü.md"}}
	for i, p := range []string{"a/x.md", "a b.md", "a.md", "z.md", "é/😀.md"} { // in walk order
		e := cacheEntry{path: p, base: cairn.Hash{byte(i)}, baseMode: cairn.Mode(i % 2),
			size: int64(i) * 1000, mtime: -int64(i) << 40, checked: 1 << 62, blob: cairn.Hash{0: byte(i), 31: 9}}
		switch i % 3 { // no stat row; the base's content; another
		case 0:
			e.blob = cairn.Hash{}
		case 1:
			e.blob = e.base
		}
		c.entries = append(c.entries, e)
	}
	path := filepath.Join(t.TempDir(), "status.cache")
	if err := c.write(path); err != nil {
		t.Fatal(err)
	}
	got := readCache(path)
	if got == nil {
		t.Fatal("the cache just written does not read")
	}
	if diff := cmp.Diff(c, got, cmp.AllowUnexported(statCache{}, cacheEntry{})); diff != "" {
		t.Fatalf("read back (-written +read):\n%s", diff)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := data[:len(data)-4]
	resum := func(b []byte) []byte {
		return binary.BigEndian.AppendUint32(append([]byte(nil), b...), crc32.Checksum(b, castagnoli))
	}
	write := func(b []byte) {
		if err := os.WriteFile(path, resum(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(cacheMagic); i < len(body); i++ {
		write(body[:i])
		if got := readCache(path); got != nil {
			t.Errorf("cut at %d: read as a cache of %d entries", i, len(got.entries))
		}
		// These must not panic: they read as a cache or as none.
		write(append(append([]byte(nil), body[:i]...), 0xff, 0xff, 0xff))
		readCache(path)
		changed := append([]byte(nil), body...)
		changed[i] ^= 0x80
		write(changed)
		readCache(path)
	}
}
