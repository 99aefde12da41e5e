package webui_test

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"testing"
)

// assetBudget is what the interface's assets may weigh, gzip-compressed,
// all together (issue 17: at most 1 MB).
const assetBudget = 1 << 20

// TestAssets_Size checks that the assets, compressed, stay within the
// budget, and says what they weigh.
func TestAssets_Size(t *testing.T) {
	var raw, packed int
	err := fs.WalkDir(os.DirFS("assets"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile("assets/" + p)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		raw += len(b)
		packed += buf.Len()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("assets: %d bytes, %d gzip-compressed", raw, packed)
	if packed > assetBudget {
		t.Errorf("the assets weigh %d bytes compressed, over the budget of %d", packed, assetBudget)
	}
}
