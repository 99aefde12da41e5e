package confine

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxLine is the longest piece of output handed over as one line: a longer
// line is cut into pieces of this size.
const maxLine = 64 << 10

// readLines reads r until it ends or fails, calling emit for each line,
// without its line ending, and active whenever bytes arrive — a partial
// line counts as activity too, so that a progress display keeps a run alive.
func readLines(r io.Reader, stream string, emit func(stream, line string), active func()) {
	br := bufio.NewReaderSize(activityReader{r, active}, maxLine)
	cut := false // the last piece was cut at maxLine, not at a newline
	for {
		b, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			b = bytes.TrimSuffix(b[:len(b)-1], []byte("\r"))
			// The newline right after a cut piece ends that piece,
			// not an empty line.
			if !cut || len(b) > 0 {
				emit(stream, string(b))
			}
			cut = false
		case errors.Is(err, bufio.ErrBufferFull):
			emit(stream, string(b))
			cut = true
		default: // the end, or the pipe was closed under us
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
