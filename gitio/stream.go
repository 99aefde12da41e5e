package gitio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// commitInfo is what the import takes from a git commit besides its tree.
type commitInfo struct {
	id      string
	name    string // the author's
	email   string
	time    time.Time // the author's
	author  string    // the author as git writes it: "Name <email> <seconds> <±hhmm>"
	commit  string    // the committer, likewise
	message string
}

// logFormat prints the fields of commitInfo, each ended by NUL (the dates
// raw: seconds and time zone); with -z, git ends each commit's record with
// a NUL too.
const logFormat = "%H%x00%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B"

// logReader streams `git log` records, oldest first.
type logReader struct{ p *proc }

func (r *repo) startLog(ctx context.Context, head string) (*logReader, error) {
	p, err := r.start(ctx, false, "log", "--first-parent", "--reverse", "-z",
		"--no-color", "--no-show-signature", "--no-ext-diff", "--no-textconv", "--no-use-mailmap",
		"--date=raw", "--encoding=UTF-8", "--format="+logFormat, head, "--")
	if err != nil {
		return nil, err
	}
	return &logReader{p: p}, nil
}

// next returns the next commit.
func (l *logReader) next() (commitInfo, error) {
	var f [8]string
	for i := range f {
		s, err := l.p.stdout.ReadString(0)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return commitInfo{}, l.p.fail(fmt.Errorf("read: %w", err))
		}
		f[i] = s[:len(s)-1]
	}
	secs, err := rawDate(f[3])
	if err != nil {
		return commitInfo{}, l.p.fail(fmt.Errorf("commit %s: bad author date %q", f[0], f[3]))
	}
	if _, err := rawDate(f[6]); err != nil {
		return commitInfo{}, l.p.fail(fmt.Errorf("commit %s: bad committer date %q", f[0], f[6]))
	}
	return commitInfo{
		id: f[0], name: f[1], email: f[2], time: time.Unix(secs, 0).UTC(),
		author: f[1] + " <" + f[2] + "> " + f[3], commit: f[4] + " <" + f[5] + "> " + f[6],
		message: f[7],
	}, nil
}

// rawDate parses a date as git writes it raw, "<seconds> <±hhmm>", and
// returns its seconds.
func rawDate(s string) (int64, error) {
	secs, tz, ok := strings.Cut(s, " ")
	n, err := strconv.ParseInt(secs, 10, 64)
	if !ok || err != nil || len(tz) != 5 || tz[0] != '+' && tz[0] != '-' ||
		strings.ContainsFunc(tz[1:], func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, fmt.Errorf("bad date %q", s)
	}
	return n, nil
}

// wait checks that the log has ended and waits for git.
func (l *logReader) wait() error {
	if _, err := l.p.stdout.ReadByte(); err != io.EOF {
		return l.p.fail(errors.New("git log listed more commits than git rev-list"))
	}
	return l.p.wait()
}

// rawChange is one record of `git diff-tree --raw`: a path whose entry
// differs between a commit and its first parent. A zero mode is an absent
// side.
type rawChange struct {
	oldMode, newMode uint32
	oldID, newID     string
	path             string
}

// diffTree streams the changes of a list of commits, each against the one
// before it in the list (its first parent), from one `git diff-tree --stdin`
// process.
type diffTree struct {
	p      *proc
	fed    chan error // the feeder's result
	header string     // the next commit's header, read ahead
	eof    bool
}

func (r *repo) startDiffTree(ctx context.Context, commits []string) (*diffTree, error) {
	p, err := r.start(ctx, true, "diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--root", "--always")
	if err != nil {
		return nil, err
	}
	d := &diffTree{p: p, fed: make(chan error, 1)}
	// The feeder writes every request up front and closes git's input; it
	// ends when it is done or when git is gone (a write then fails).
	go func() {
		w := bufio.NewWriterSize(p.stdin, 1<<16)
		var err error
		for i, c := range commits {
			if i == 0 {
				_, err = fmt.Fprintf(w, "%s\n", c)
			} else {
				_, err = fmt.Fprintf(w, "%s %s\n", c, commits[i-1])
			}
			if err != nil {
				break
			}
		}
		if err == nil {
			err = w.Flush()
		}
		if cerr := p.stdin.Close(); err == nil {
			err = cerr
		}
		d.fed <- err
	}()
	return d, nil
}

func (d *diffTree) token() (string, error) {
	s, err := d.p.stdout.ReadString(0)
	if err != nil {
		if err == io.EOF && s == "" {
			return "", io.EOF
		}
		return "", io.ErrUnexpectedEOF
	}
	return s[:len(s)-1], nil
}

// changes returns the changes of the next commit, which must be commit.
func (d *diffTree) changes(commit string) ([]rawChange, error) {
	if d.header == "" && !d.eof {
		h, err := d.token()
		if err != nil {
			return nil, d.p.fail(fmt.Errorf("read: %w", err))
		}
		d.header = h
	}
	if d.header != commit {
		return nil, d.p.fail(fmt.Errorf("expected the changes of %s, got %.50q", commit, d.header))
	}
	d.header = ""
	var out []rawChange
	for {
		t, err := d.token()
		if err == io.EOF {
			d.eof = true
			return out, nil
		}
		if err != nil {
			return nil, d.p.fail(fmt.Errorf("read: %w", err))
		}
		if !strings.HasPrefix(t, ":") {
			d.header = t
			return out, nil
		}
		path, err := d.token()
		if err != nil {
			return nil, d.p.fail(fmt.Errorf("read: %w", err))
		}
		c, err := parseRaw(t, path)
		if err != nil {
			return nil, d.p.fail(err)
		}
		out = append(out, c)
	}
}

// parseRaw parses ":100644 100644 <old> <new> M" and its path.
func parseRaw(rec, path string) (rawChange, error) {
	f := strings.Fields(rec[1:])
	if len(f) != 5 {
		return rawChange{}, fmt.Errorf("bad diff-tree record %q", rec)
	}
	oldMode, err1 := strconv.ParseUint(f[0], 8, 32)
	newMode, err2 := strconv.ParseUint(f[1], 8, 32)
	if err1 != nil || err2 != nil {
		return rawChange{}, fmt.Errorf("bad modes in diff-tree record %q", rec)
	}
	return rawChange{oldMode: uint32(oldMode), newMode: uint32(newMode), oldID: f[2], newID: f[3], path: path}, nil
}

// wait reads the end of the output and waits for git and the feeder.
func (d *diffTree) wait() error {
	if !d.eof || d.header != "" {
		return d.p.fail(errors.New("output left unread"))
	}
	if err := d.p.wait(); err != nil {
		return err
	}
	return <-d.fed
}

// catFile reads objects through one `git cat-file --batch` process.
type catFile struct {
	p      *proc
	in     *bufio.Writer
	broken error
}

func (r *repo) startCatFile(ctx context.Context) (*catFile, error) {
	p, err := r.start(ctx, true, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	return &catFile{p: p, in: bufio.NewWriterSize(p.stdin, 1<<16)}, nil
}

// read calls fn with each blob of ids, in order. A blob larger than max is
// not read: fn gets its size and nil data.
func (c *catFile) read(ids []string, max int64, fn func(i int, data []byte, size int64) error) error {
	if c.broken != nil {
		return c.broken
	}
	// The requests go in from a goroutine so that a large answer never
	// blocks git while we are still writing. It ends once every id is
	// written, or when git is gone (a write then fails); after an error the
	// process is killed, so it never outlives the import.
	fed := make(chan error, 1)
	go func() {
		for _, id := range ids {
			c.in.WriteString(id)
			c.in.WriteByte('\n')
		}
		fed <- c.in.Flush()
	}()
	for i, id := range ids {
		if err := c.readOne(i, id, max, fn); err != nil {
			c.broken = err
			return err
		}
	}
	if err := <-fed; err != nil {
		c.broken = c.p.fail(err)
		return c.broken
	}
	return nil
}

func (c *catFile) readOne(i int, id string, max int64, fn func(i int, data []byte, size int64) error) error {
	out := c.p.stdout
	header, err := out.ReadString('\n')
	if err != nil {
		return c.p.fail(fmt.Errorf("read %s: %w", id, err))
	}
	f := strings.Fields(header)
	if len(f) == 2 && f[1] == "missing" {
		return c.p.fail(fmt.Errorf("object %s is missing from the repository", id))
	}
	if len(f) != 3 || f[0] != id || f[1] != "blob" {
		return c.p.fail(fmt.Errorf("read %s: unexpected answer %q", id, header))
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return c.p.fail(fmt.Errorf("read %s: bad size in %q", id, header))
	}
	var data []byte
	if size > max {
		if _, err := io.CopyN(io.Discard, out, size); err != nil {
			return c.p.fail(fmt.Errorf("read %s: %w", id, err))
		}
	} else {
		data = make([]byte, size)
		if _, err := io.ReadFull(out, data); err != nil {
			return c.p.fail(fmt.Errorf("read %s: %w", id, err))
		}
	}
	if b, err := out.ReadByte(); err != nil || b != '\n' {
		return c.p.fail(fmt.Errorf("read %s: object not followed by a newline", id))
	}
	return fn(i, data, size)
}

// close ends the process.
func (c *catFile) close() error {
	if c.broken != nil {
		c.p.kill()
		return nil
	}
	if err := c.in.Flush(); err != nil {
		return c.p.fail(err)
	}
	return c.p.wait()
}
