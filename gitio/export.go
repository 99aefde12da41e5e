package gitio

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"cairn"
	"cairn/store"
)

// Trailers ExportGit appends to each commit message.
const (
	TrailerCommit    = "Cairn-Commit"
	TrailerPrincipal = "Cairn-Principal"
	TrailerMeta      = "Cairn-Meta" // "Cairn-Meta-<key>: <value>" or "Cairn-Meta: <key>=<value>"
)

// Bounds on the file contents an export reads from the store at once.
const (
	exportChunkBytes = 32 << 20
	exportChunkBlobs = 1024
)

// ExportOptions adjust ExportGit. The zero value gives the defaults.
type ExportOptions struct {
	// Branch is the cairn branch to export; the git branch gets its name.
	// Default "main".
	Branch string
	// Author maps a principal to the git identity of its commits, as author
	// and committer, for the commits not imported from git (those keep
	// their own). Default DefaultAuthor. Neither part may hold '<', '>' or
	// a newline.
	Author func(p cairn.Principal) (name, email string)
	// Progress, when set, is called after each exported commit.
	Progress func(done, total int)
}

// ExportResult reports an export.
type ExportResult struct {
	// Head is the commit exported: the branch head (ExportGit), the commit
	// whose files were written (ExportFiles).
	Head cairn.Hash
	// Commits is the number of commits exported (ExportGit).
	Commits int
	// Files is the number of files written (ExportFiles).
	Files int
	// Placeholders lists the files whose content was purged from the store
	// and which the export wrote as a placeholder: for ExportGit, each path
	// at each commit that wrote it (the commits after it that keep the file
	// as it is keep the placeholder too).
	Placeholders []Placeholder
}

// ExportGit writes the history of a branch into a new git repository at
// dir: every commit the branch reaches, merges with all their parents,
// parents before children, through one `git fast-import`, and then checks
// out the branch head so that the working tree matches it.
//
// A commit that ImportHistory made from a git commit (its metadata holds
// the git commit's hash, author and committer) is written with that author
// and committer, dates and time zones included, and its message as
// imported; what git has no place for goes into a note on it, under
// refs/notes/commits, as the trailers below. Any other commit's git author
// and committer come from opts.Author and the commit time, and its message
// ends with trailers that keep what git has no place for:
//
//	Cairn-Commit: <cairn commit hash>
//	Cairn-Principal: user:ada
//	Cairn-Meta-job: 42               (one per metadata key, sorted)
//	Cairn-Meta: git.commit=<hash>    (keys git does not allow in a trailer)
//
// Git allows only letters, digits and '-' in a trailer's key, and ignores a
// whole block in which one line breaks that rule; a metadata key with any
// other character is therefore written as "Cairn-Meta: <key>=<value>", with
// '%', '=' and control characters in the key escaped as %XX. A value's
// newlines become continuation lines that start with a space.
//
// dir must not exist or be an empty folder (EINVALID otherwise). Content
// purged from the store is written as a one-line placeholder that says
// when, by whom and why it was purged; the result lists where. When the
// export fails, whatever it wrote into dir is removed.
func ExportGit(ctx context.Context, s *store.Store, dir string, opts *ExportOptions) (*ExportResult, error) {
	var o ExportOptions
	if opts != nil {
		o = *opts
	}
	o.Branch = cmp.Or(o.Branch, "main")
	if o.Author == nil {
		o.Author = DefaultAuthor
	}
	res, err := exportGit(ctx, s, dir, &o)
	if err != nil {
		return nil, fmt.Errorf("export %s to %s: %w", o.Branch, dir, err)
	}
	return res, nil
}

func exportGit(ctx context.Context, s *store.Store, dir string, o *ExportOptions) (_ *ExportResult, err error) {
	head, err := s.Head(ctx, o.Branch)
	if err != nil {
		return nil, err
	}
	undo, err := prepareDir(dir)
	if err != nil {
		return nil, err
	}
	defer undo(&err)
	commits, err := topoOrder(ctx, s, head)
	if err != nil {
		return nil, err
	}
	sb, err := newSandbox()
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	g, err := sb.repo(dir)
	if err != nil {
		return nil, err
	}
	// No template: nothing, hooks included, is copied into the new
	// repository.
	if _, err := g.run(ctx, "init", "--quiet", "--template=", "--initial-branch="+o.Branch); err != nil {
		return nil, err
	}
	p, err := g.start(ctx, true, "fast-import", "--quiet", "--done")
	if err != nil {
		return nil, err
	}
	defer p.kill()
	w := &fastImport{
		s: s, o: o, w: bufio.NewWriterSize(p.stdin, 1<<20),
		ref:     "refs/heads/" + o.Branch,
		blobs:   make(map[cairn.Hash]int),
		commits: make(map[cairn.Hash]int),
		purges:  &purges{s: s},
		purged:  make(map[cairn.Hash]bool),
	}
	for i, c := range commits {
		if err := w.commit(ctx, c); err != nil {
			if w.broken {
				return nil, p.fail(err)
			}
			return nil, err
		}
		if o.Progress != nil {
			o.Progress(i+1, len(commits))
		}
	}
	if err := w.writeNotes(commits[len(commits)-1]); err != nil {
		return nil, p.fail(err)
	}
	if _, err := io.WriteString(w.w, "done\n"); err != nil {
		return nil, p.fail(err)
	}
	if err := w.w.Flush(); err != nil {
		return nil, p.fail(err)
	}
	if err := p.wait(); err != nil {
		return nil, err
	}
	if _, err := g.run(ctx, "reset", "--quiet", "--hard"); err != nil {
		return nil, err
	}
	return &ExportResult{Head: head, Commits: len(commits), Placeholders: w.placeholders}, nil
}

// prepareDir checks that dir is missing or empty and makes it exist. It
// returns what undoes that when the export fails: call it deferred, with
// the export's error (it removes dir if it made it, else what the export
// put in it, and adds any error of its own).
func prepareDir(dir string) (undo func(*error), err error) {
	created, err := makeDir(dir)
	if err != nil {
		return nil, err
	}
	return func(errp *error) {
		if *errp != nil {
			if cerr := cleanDir(dir, created); cerr != nil {
				*errp = errors.Join(*errp, cerr)
			}
		}
	}, nil
}

// makeDir makes dir, or checks that it is an empty folder, and reports
// whether it made it.
func makeDir(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, os.MkdirAll(dir, 0o777)
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return false, cairn.Errorf(cairn.EINVALID, "not a folder").WithHint("Export into a new or empty folder.")
		}
		return false, err
	case len(entries) > 0:
		return false, cairn.Errorf(cairn.EINVALID, "the folder is not empty").WithHint("Export into a new or empty folder.")
	}
	return false, nil
}

// cleanDir undoes a failed export: it removes dir if the export created it,
// else what the export put into it.
func cleanDir(dir string, created bool) error {
	if created {
		return os.RemoveAll(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

// topoOrder returns the commits head reaches, each after all its parents:
// a depth-first walk that takes parents in order, so a branch's own line
// comes before what was merged into it.
func topoOrder(ctx context.Context, s *store.Store, head cairn.Hash) ([]*cairn.Commit, error) {
	type frame struct {
		c    *cairn.Commit
		next int // the next parent to visit
	}
	c, err := s.ReadCommit(ctx, head)
	if err != nil {
		return nil, err
	}
	seen := map[cairn.Hash]bool{head: true}
	stack := []frame{{c: c}}
	var order []*cairn.Commit
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next == len(f.c.Parents) {
			order = append(order, f.c)
			stack = stack[:len(stack)-1]
			continue
		}
		h := f.c.Parents[f.next]
		f.next++
		if seen[h] {
			continue
		}
		seen[h] = true
		pc, err := s.ReadCommit(ctx, h)
		if err != nil {
			return nil, err
		}
		stack = append(stack, frame{c: pc})
	}
	return order, nil
}

// fastImport writes a git fast-import stream.
type fastImport struct {
	s       *store.Store
	o       *ExportOptions
	ref     string
	mu      sync.Mutex // guards w and mark while blobs are read
	w       *bufio.Writer
	broken  bool // a write failed: fast-import has stopped reading
	mark    int
	blobs   map[cairn.Hash]int // blob → mark
	commits map[cairn.Hash]int // commit → mark
	notes   []gitNote          // the notes to write once every commit is written
	purges  *purges
	purged  map[cairn.Hash]bool // blobs written as a placeholder
	// placeholders are the files written as a placeholder, each at the
	// commit that wrote it.
	placeholders []Placeholder
}

// gitNote is a note on an exported commit: the marks of its text, written
// as a blob beside the commit, and of the commit.
type gitNote struct{ text, commit int }

// identity returns the git author and committer of c, its git message, and
// the text of a note on it. A commit imported from git (its metadata holds
// the git commit's author and committer) gets them back as they were, and
// its own message: what git has no place for goes into a note, so that the
// commit is the one that was imported. Any other commit gets opts.Author's
// identity and its time, and trailers at the end of its message.
func (w *fastImport) identity(c *cairn.Commit) (author, committer, msg, note string, err error) {
	author, committer = c.Meta[MetaAuthor], c.Meta[MetaCommitter]
	if c.Meta[MetaCommit] != "" && validIdent(author) && validIdent(committer) {
		msg := strings.TrimRight(c.Message, "\n") + "\n"
		if c.Message == noMessage(c.Meta[MetaCommit]) {
			msg = ""
		}
		return author, committer, msg, strings.TrimLeft(trailers(c), "\n"), nil
	}
	name, email := w.o.Author(c.Principal)
	if strings.ContainsAny(name, "<>\n") || strings.ContainsAny(email, "<>\n") {
		return "", "", "", "", cairn.Errorf(cairn.EINVALID, "git identity %q <%s> of %s holds '<', '>' or a newline", name, email, c.Principal)
	}
	ident := fmt.Sprintf("%s <%s> %d +0000", name, email, c.Time.Unix())
	if name == "" {
		ident = ident[1:]
	}
	return ident, ident, gitMessage(c), "", nil
}

// validIdent reports whether s is a git identity as an import records it
// and fast-import takes it: "Name <email> <seconds> <±hhmm>", the name and
// address without '<', '>' or a newline.
func validIdent(s string) bool {
	name, rest, ok := strings.Cut(s, "<")
	if !ok || name != "" && !strings.HasSuffix(name, " ") {
		return false
	}
	email, date, ok := strings.Cut(rest, "> ")
	if !ok || strings.ContainsAny(name+email, "<>\n") {
		return false
	}
	_, err := rawDate(date)
	return err == nil
}

// writeNotes writes the notes of the exported commits as one commit on
// refs/notes/commits, git's default notes ref, so that git log shows them.
func (w *fastImport) writeNotes(head *cairn.Commit) error {
	if len(w.notes) == 0 {
		return nil
	}
	msg := "Notes by cairn export: what git has no place for in commits imported from git\n"
	if err := w.write(fmt.Sprintf("commit refs/notes/commits\ncommitter cairn <system@cairn.invalid> %d +0000\ndata %d\n%s\n",
		head.Time.Unix(), len(msg), msg)); err != nil {
		return err
	}
	for _, n := range w.notes {
		if err := w.write(fmt.Sprintf("N :%d :%d\n", n.text, n.commit)); err != nil {
			return err
		}
	}
	return w.write("\n")
}

// commit writes the blobs c adds and c itself. Its file changes are the
// difference from its first parent, which fast-import starts from.
func (w *fastImport) commit(ctx context.Context, c *cairn.Commit) error {
	base := store.EmptyTree
	if len(c.Parents) > 0 {
		pc, err := w.s.ReadCommit(ctx, c.Parents[0])
		if err != nil {
			return err
		}
		base = pc.Tree
	}
	changes, err := w.s.Diff(ctx, base, c.Tree, &store.DiffOptions{NoRenames: true})
	if err != nil {
		return fmt.Errorf("commit %s: %w", c.Hash.Short(), err)
	}
	if err := w.writeBlobs(ctx, c, changes); err != nil {
		return err
	}
	for _, ch := range changes {
		if ch.Kind != cairn.Deleted && w.purged[ch.New.Blob] {
			w.placeholders = append(w.placeholders, Placeholder{Commit: c.Hash, Path: ch.New.Path, Blob: ch.New.Blob})
		}
	}
	author, committer, msg, note, err := w.identity(c)
	if err != nil {
		return err
	}
	var b strings.Builder
	if len(c.Parents) == 0 {
		// Without a from, fast-import would continue the branch.
		fmt.Fprintf(&b, "reset %s\n\n", w.ref)
	}
	if note != "" {
		w.mark++
		fmt.Fprintf(&b, "blob\nmark :%d\ndata %d\n%s\n", w.mark, len(note), note)
		w.notes = append(w.notes, gitNote{text: w.mark, commit: w.mark + 1})
	}
	w.mark++
	w.commits[c.Hash] = w.mark
	fmt.Fprintf(&b, "commit %s\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s\n", w.ref, w.mark, author, committer, len(msg), msg)
	for i, p := range c.Parents {
		m, ok := w.commits[p]
		if !ok {
			return fmt.Errorf("commit %s: parent %s not exported before it", c.Hash.Short(), p.Short())
		}
		cmd := "merge"
		if i == 0 {
			cmd = "from"
		}
		fmt.Fprintf(&b, "%s :%d\n", cmd, m)
	}
	// Deletions first: a file may become a folder in the same commit. A
	// change of case alone is a deletion and an addition to git.
	for _, ch := range changes {
		if ch.Kind == cairn.Deleted || ch.Kind != cairn.Added && ch.Old.Path != ch.New.Path {
			fmt.Fprintf(&b, "D %s\n", quotePath(ch.Old.Path))
		}
	}
	for _, ch := range changes {
		if ch.Kind == cairn.Deleted {
			continue
		}
		mode := "100644"
		if ch.New.Mode == cairn.ModeExecutable {
			mode = "100755"
		}
		fmt.Fprintf(&b, "M %s :%d %s\n", mode, w.blobs[ch.New.Blob], quotePath(ch.New.Path))
	}
	b.WriteString("\n")
	return w.write(b.String())
}

func (w *fastImport) write(s string) error {
	if _, err := w.w.WriteString(s); err != nil {
		w.broken = true
		return err
	}
	return nil
}

// writeBlobs writes the contents changes adds that no earlier commit had,
// reading them from the store in bulk, a chunk at a time.
func (w *fastImport) writeBlobs(ctx context.Context, c *cairn.Commit, changes []cairn.Change) error {
	var todo []cairn.Entry
	for _, ch := range changes {
		if ch.Kind == cairn.Deleted {
			continue
		}
		if _, ok := w.blobs[ch.New.Blob]; !ok {
			w.blobs[ch.New.Blob] = 0 // marked when written
			todo = append(todo, ch.New)
		}
	}
	for len(todo) > 0 {
		n, size := 0, int64(0)
		for n < len(todo) && n < exportChunkBlobs && (n == 0 || size+todo[n].Size <= exportChunkBytes) {
			size += todo[n].Size
			n++
		}
		chunk := todo[:n]
		todo = todo[n:]
		hs := make([]cairn.Hash, len(chunk))
		for i, e := range chunk {
			hs[i] = e.Blob
		}
		err := w.s.ReadBlobs(ctx, hs, func(h cairn.Hash, data []byte) error {
			return w.blob(h, data)
		})
		if err != nil {
			return fmt.Errorf("commit %s: %w", c.Hash.Short(), err)
		}
		// ReadBlobs skips what it cannot read: purged content gets its
		// placeholder, anything else is an error.
		for _, e := range chunk {
			if w.blobs[e.Blob] != 0 {
				continue
			}
			data, purged, err := w.purges.content(ctx, e.Blob)
			if err != nil {
				return fmt.Errorf("%s in commit %s: %w", e.Path, c.Hash.Short(), err)
			}
			w.purged[e.Blob] = purged
			if err := w.blob(e.Blob, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// blob writes one blob; ReadBlobs may call it from several goroutines.
func (w *fastImport) blob(h cairn.Hash, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.blobs[h] != 0 {
		return nil
	}
	w.mark++
	w.blobs[h] = w.mark
	if err := w.write(fmt.Sprintf("blob\nmark :%d\ndata %d\n", w.mark, len(data))); err != nil {
		return err
	}
	if _, err := w.w.Write(data); err != nil {
		w.broken = true
		return err
	}
	return w.write("\n")
}

// quotePath writes a path as fast-import reads it: as is, or C-quoted when
// it starts with a quote or holds a character that would end the line.
func quotePath(p string) string {
	if !strings.HasPrefix(p, `"`) && !strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// gitMessage is a commit's message followed by a blank line and its
// trailers.
func gitMessage(c *cairn.Commit) string {
	return strings.TrimRight(c.Message, "\n") + trailers(c)
}

// trailers are the lines that keep what git has no place for, after a
// blank line.
func trailers(c *cairn.Commit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n%s: %s\n%s: %s\n", TrailerCommit, c.Hash, TrailerPrincipal, c.Principal)
	keys := make([]string, 0, len(c.Meta))
	for k := range c.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(metaTrailer(k, c.Meta[k]) + "\n")
	}
	return b.String()
}

// metaTrailer returns the trailer for one metadata key: Cairn-Meta-<key>
// when the key is a valid trailer key (letters, digits and '-'), else
// Cairn-Meta with "<key>=<value>", the key's '%', '=' and control characters
// escaped as %XX. One key git cannot parse (git.commit) would make git
// ignore the whole trailer block. A value's newlines become continuation
// lines.
func metaTrailer(k, v string) string {
	v = strings.ReplaceAll(strings.TrimRight(v, "\n"), "\n", "\n ")
	if k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
	}) {
		return TrailerMeta + "-" + k + ": " + v
	}
	var b strings.Builder
	b.WriteString(TrailerMeta + ": ")
	for i := 0; i < len(k); i++ {
		if c := k[i]; c == '%' || c == '=' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteString("=" + v)
	return b.String()
}

// DefaultAuthor maps a principal to a git identity: user:ada is
// "ada <ada@cairn.invalid>" (a name that is an email address is used as
// the address), agent:extractive is "agent extractive
// <agent.extractive@cairn.invalid>", and system is
// "cairn <system@cairn.invalid>".
func DefaultAuthor(p cairn.Principal) (name, email string) {
	kind, n := p.Kind(), p.Name()
	switch {
	case kind == cairn.PrincipalSys || kind == "":
		return "cairn", "system@cairn.invalid"
	case kind == cairn.PrincipalUser && strings.Contains(n, "@"):
		return n, n
	case kind == cairn.PrincipalUser:
		return n, n + "@cairn.invalid"
	}
	return kind + " " + n, kind + "." + n + "@cairn.invalid"
}
