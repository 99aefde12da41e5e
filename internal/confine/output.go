package confine

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLine is the longest piece of output handed over as one line
// when Spec.MaxLine is 0: a longer line is cut into pieces of this size.
const DefaultMaxLine = 64 << 10

// readBuffer is the size of the buffer output is read through.
const readBuffer = 64 << 10

// readLines reads r until it ends or fails, calling emit for each line,
// without its line ending, cut into pieces of max bytes at most, and
// active whenever bytes arrive — a partial line counts as activity too,
// so that a progress display keeps a run alive.
func readLines(r io.Reader, stream string, max int, emit func(stream, line string), active func()) {
	br := bufio.NewReaderSize(activityReader{r, active}, min(max, readBuffer))
	var acc []byte // the line read so far, when it is longer than the buffer
	cut := false   // the last piece was cut at max, not at a newline
	for {
		b, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			if acc != nil {
				b = append(acc, b...)
				acc = nil
			}
			b = bytes.TrimSuffix(b[:len(b)-1], []byte("\r"))
			// The newline right after a cut piece ends that piece,
			// not an empty line.
			for len(b) > max {
				emit(stream, string(b[:max]))
				b = b[max:]
			}
			if !cut || len(b) > 0 {
				emit(stream, string(b))
			}
			cut = false
		case errors.Is(err, bufio.ErrBufferFull):
			acc = append(acc, b...)
			cut = false
			for len(acc) >= max {
				emit(stream, string(acc[:max]))
				acc = append(acc[:0], acc[max:]...)
				cut = len(acc) == 0
			}
			if len(acc) == 0 {
				acc = nil
			}
		default: // the end, or the pipe was closed under us
			b = append(acc, b...)
			for len(b) > max {
				emit(stream, string(b[:max]))
				b = b[max:]
			}
			if len(b) > 0 {
				emit(stream, string(b))
			}
			return
		}
	}
}

// activityReader calls active after each read that returned bytes.
type activityReader struct {
	r      io.Reader
	active func()
}

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.active()
	}
	return n, err
}
