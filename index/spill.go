package index

import (
	"bufio"
	"errors"
	"os"

	"cairn"
)

// A spill keeps a list of byte strings in a temporary file, written in
// order once and then read from any goroutine: what a full build needs of
// every page between its passes, which held in memory would grow with the
// vault. It holds their offsets, 8 bytes a string. The file is removed as
// soon as it is made, so that nothing is left behind if the process dies;
// it lives in os.TempDir ($TMPDIR).
type spill struct {
	f    *os.File
	name string // the file's, when it could not be removed while open
	w    *bufio.Writer
	at   []int64 // where each string starts; one more, where the last ends
}

// newSpill makes an empty spill for n strings.
func newSpill(n int) (*spill, error) {
	f, err := os.CreateTemp("", "cairn-build-*")
	if err != nil {
		return nil, spillError("make a temporary file", err)
	}
	s := &spill{f: f, w: bufio.NewWriterSize(f, 256<<10), at: make([]int64, 1, n+1)}
	// Removed now where an open file can be (it stays until closed);
	// else when it is closed.
	if os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	return s, nil
}

// add appends s as the next string.
func (s *spill) add(b string) error {
	if _, err := s.w.WriteString(b); err != nil {
		return spillError("write its temporary file", err)
	}
	s.at = append(s.at, s.at[len(s.at)-1]+int64(len(b)))
	return nil
}

// done ends the writing; the strings can be read after it.
func (s *spill) done() error {
	if err := s.w.Flush(); err != nil {
		return spillError("write its temporary file", err)
	}
	return nil
}

// get returns string i.
func (s *spill) get(i int) (string, error) { return s.span(i, i+1) }

// span returns strings lo to hi (excluded) one after the other: the
// string of i starts at s.at[i]-s.at[lo].
func (s *spill) span(lo, hi int) (string, error) {
	buf, err := s.read(lo, hi)
	return string(buf), err
}

// read is span as bytes, the caller's own.
func (s *spill) read(lo, hi int) ([]byte, error) {
	n := s.at[hi] - s.at[lo]
	if n == 0 {
		return nil, nil
	}
	buf := make([]byte, n)
	if _, err := s.f.ReadAt(buf, s.at[lo]); err != nil {
		return nil, spillError("read its temporary file", err)
	}
	return buf, nil
}

// close removes the file and lets the offsets go; again, or on a nil
// spill, it does nothing.
func (s *spill) close() error {
	if s == nil || s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		err = errors.Join(err, os.Remove(s.name))
	}
	s.f, s.w, s.at = nil, nil, nil
	return err
}

// spillError is the error of a build that could not do what with its
// temporary file: the folder is missing, not writable or full.
func spillError(what string, err error) error {
	return cairn.Errorf(cairn.EUNAVAILABLE, "index: the build could not %s in %s: %w", what, os.TempDir(), err).
		WithHint("Set TMPDIR to a folder cairn can write with room for the vault's links (some 200 bytes a page).")
}
