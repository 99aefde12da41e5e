// Package codec compresses stored objects with Zstandard
// (github.com/klauspost/compress) for the storage backends. Content is
// compressed only when that saves at least an eighth of its size; small
// objects are stored as they are.
package codec

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Codecs, as recorded beside each stored object.
const (
	Raw  = 0
	Zstd = 1
)

// minSize is the smallest input worth compressing.
const minSize = 64

// Codec compresses and decompresses; it is safe for concurrent use.
type Codec struct {
	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
	err  error
}

func (c *Codec) init() {
	c.once.Do(func() {
		// The fastest level: pages are small, and on them it is twice as
		// fast as the default for about 13% larger output. A small window
		// makes the per-object setup cheap; the frame checksum is left out
		// because the store hashes every object anyway. One encoder per
		// core, so that concurrent calls compress in parallel.
		c.enc, c.err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithEncoderCRC(false),
			zstd.WithWindowSize(1<<16),
		)
		if c.err == nil {
			c.dec, c.err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<31))
		}
	})
}

// Compress returns data in its stored form and the codec used.
func (c *Codec) Compress(data []byte) ([]byte, int) {
	if len(data) < minSize {
		return data, Raw
	}
	c.init()
	if c.err != nil {
		return data, Raw
	}
	out := c.enc.EncodeAll(data, make([]byte, 0, len(data)/2))
	if len(out) > len(data)-len(data)/8 {
		return data, Raw
	}
	return out, Zstd
}

// Decompress returns the original bytes of stored data; size is the
// original length, used to size the buffer.
func (c *Codec) Decompress(stored []byte, codec int, size int64) ([]byte, error) {
	switch codec {
	case Raw:
		return stored, nil
	case Zstd:
		c.init()
		if c.err != nil {
			return nil, c.err
		}
		out, err := c.dec.DecodeAll(stored, make([]byte, 0, size))
		if err != nil {
			return nil, fmt.Errorf("decompress: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown codec %d", codec)
}
