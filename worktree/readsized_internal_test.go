package worktree

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadSized holds that a read sized by a stat gets the whole content
// whether the file shrank, stayed or grew since, in reads of any length,
// in a buffer of its length and one byte when it stayed, and passes an
// error on.
func TestReadSized(t *testing.T) {
	content := strings.Repeat("a line of a page\n", 300) // 5,100 bytes
	for _, size := range []int64{0, 1, 100, int64(len(content)) - 1, int64(len(content)), int64(len(content)) + 1, 10_000} {
		for name, r := range map[string]io.Reader{
			"whole":    strings.NewReader(content),
			"one byte": iotest.OneByteReader(strings.NewReader(content)),
			"half":     iotest.HalfReader(strings.NewReader(content)),
		} {
			got, err := readSized(r, size)
			if err != nil || !bytes.Equal(got, []byte(content)) {
				t.Fatalf("size %d, %s reads: %d bytes, %v; want the %d bytes", size, name, len(got), err, len(content))
			}
			if size == int64(len(content)) && cap(got) != len(content)+1 {
				t.Errorf("size %d, %s reads: a buffer of %d bytes; want %d", size, name, cap(got), len(content)+1)
			}
		}
	}
	boom := errors.New("boom")
	if _, err := readSized(iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader(content))), 10); err == nil {
		t.Error("a read that failed gave no error")
	}
	if _, err := readSized(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 3); !errors.Is(err, boom) {
		t.Errorf("a read that failed after its size: %v; want %v", err, boom)
	}
}
