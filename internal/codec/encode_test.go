package codec

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cairn"
)

func objects(n int) []cairn.Object {
	objs := make([]cairn.Object, n)
	for i := range objs {
		data := []byte(strings.Repeat(fmt.Sprintf("object %d ", i), i%50))
		objs[i] = cairn.Object{Hash: cairn.HashBytes(data), Kind: cairn.KindBlob, Data: data}
	}
	return objs
}

// TestChunks checks that every object comes back once, sorted by hash,
// in chunks of the size asked for, each decoding to its content.
func TestChunks(t *testing.T) {
	var c Codec
	objs := objects(1000)
	var got []Encoded
	sizes := []int{}
	for chunk := range c.Chunks(t.Context(), objs, 300) {
		sizes = append(sizes, len(chunk))
		got = append(got, chunk...)
	}
	if !slices.Equal(sizes, []int{300, 300, 300, 100}) {
		t.Fatalf("chunk sizes %v, want 300, 300, 300, 100", sizes)
	}
	if !slices.IsSortedFunc(got, func(a, b Encoded) int { return bytes.Compare(a.Obj.Hash[:], b.Obj.Hash[:]) }) {
		t.Fatal("chunks are not in hash order")
	}
	want := map[cairn.Hash][]byte{}
	for _, o := range objs {
		want[o.Hash] = o.Data
	}
	for _, e := range got {
		if e.Data == nil {
			t.Fatalf("object %s encoded as nil (NULL means purged)", e.Obj.Hash.Short())
		}
		data, err := c.Decompress(e.Data, e.Codec, int64(len(e.Obj.Data)))
		if err != nil || !bytes.Equal(data, want[e.Obj.Hash]) {
			t.Fatalf("object %s: decoded %d bytes, err %v", e.Obj.Hash.Short(), len(data), err)
		}
		delete(want, e.Obj.Hash)
	}
	if len(want) != 0 {
		t.Fatalf("%d objects missing from the chunks", len(want))
	}
}

// TestChunks_Stop checks that a caller may stop early.
func TestChunks_Stop(t *testing.T) {
	var c Codec
	n := 0
	for range c.Chunks(t.Context(), objects(500), 100) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("stopped after %d chunks, want 2", n)
	}
}
