package codec

import (
	"bytes"
	"context"
	"iter"
	"runtime"
	"slices"
	"sync"

	"cairn"
)

// Encoded is an object in its stored form: Data compressed by Codec.
type Encoded struct {
	Obj   cairn.Object
	Codec int
	Data  []byte
}

// EncodeAll compresses objects, on every core when there are many. Data
// is never nil: an empty object is stored as empty, not as NULL.
func (c *Codec) EncodeAll(objs []cairn.Object) []Encoded {
	out := make([]Encoded, len(objs))
	workers := 1
	if len(objs) >= 64 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(objs); i += workers {
				data, codec := c.Compress(objs[i].Data)
				if data == nil {
					data = []byte{}
				}
				out[i] = Encoded{Obj: objs[i], Codec: codec, Data: data}
			}
		})
	}
	wg.Wait()
	return out
}

// Chunks yields objs sorted by hash (the order of the stores' primary
// keys, which inserts follow best), compressed, n at a time; the next
// chunk is compressed while the caller writes the one it has. Stopping
// early, or ctx ending, stops the compression.
func (c *Codec) Chunks(ctx context.Context, objs []cairn.Object, n int) iter.Seq[[]Encoded] {
	return func(yield func([]Encoded) bool) {
		objs = slices.Clone(objs)
		slices.SortFunc(objs, func(a, b cairn.Object) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		encoded := make(chan []Encoded, 1)
		go func() {
			defer close(encoded)
			for start := 0; start < len(objs); start += n {
				select {
				case encoded <- c.EncodeAll(objs[start:min(start+n, len(objs))]):
				case <-ctx.Done():
					return
				}
			}
		}()
		for rows := range encoded {
			if !yield(rows) {
				return
			}
		}
	}
}
