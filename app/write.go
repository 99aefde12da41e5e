package app

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"cairn"
	"cairn/admit"
	"cairn/markdown"
)

// PageWrite is one file of a Write: what the writer wants it to become,
// and the version of it the writer read.
type PageWrite struct {
	// Path is the vault path (cairn.CleanPath).
	Path string
	// Expected is the hash of the file's content as the writer read it
	// (FileAt.Entry.Blob); "" says the file must not exist yet. A file
	// that is not at that version is a *StaleFile: never overwritten.
	// With AnyVersion, Expected is ignored: Edit decides from what the
	// file holds.
	Expected   string
	AnyVersion bool
	// Content is the new content, or Delete removes the file.
	Content []byte
	Delete  bool
	// Edit, when set, computes the new content from the current one
	// (exists is false for a file not there); its error changes nothing.
	Edit func(current []byte, exists bool) ([]byte, error)
}

// WriteRequest is a change to main of a few files, each checked against
// the version its writer read.
type WriteRequest struct {
	Writes  []PageWrite
	Message string
	// Propose holds the change for review whatever admission's gates say.
	Propose bool
}

// StaleFile is the cause of the ECONFLICT error of a write whose writer
// read another version of a file than main has: nothing was changed.
type StaleFile struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	// Current is the file's content hash in main now; "" when main has
	// no such file.
	Current string `json:"current"`
	Head    string `json:"head"`
}

func (s *StaleFile) Error() string {
	switch {
	case s.Current == "":
		return fmt.Sprintf("%s is not in main (read at %s)", s.Path, s.Expected)
	case s.Expected == "":
		return fmt.Sprintf("%s already exists in main (at %s)", s.Path, s.Current)
	}
	return fmt.Sprintf("%s changed since it was read: it is at %s, not %s", s.Path, s.Current, s.Expected)
}

// writeAttempts bounds how often Write tries again when main moves
// between its read and its commit.
const writeAttempts = 8

// Write changes the files of req on main through admission (route "api"),
// if each is still the version its writer read: a file that is not is a
// *StaleFile (ECONFLICT) and nothing changes. The check is made on main's
// head and again in the transaction that admits the change: when main
// moved meanwhile by changes to other files, admission merges this one
// onto it; a file someone else changed meanwhile is stale. Errors are
// those of CommitChanges; an Edit's error is returned as it is.
func (a *App) Write(ctx context.Context, req WriteRequest) (*ChangesResult, error) {
	if _, err := Principal(ctx); err != nil {
		return nil, err
	}
	if len(req.Writes) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "the write holds no files")
	}
	for attempt := 1; ; attempt++ {
		head, err := a.v.Store.Head(ctx, admit.Branch)
		if err != nil {
			return nil, err
		}
		edits, files, err := a.writeEdits(ctx, head, req.Writes)
		if err != nil {
			return nil, err
		}
		cr := ChangesRequest{Branch: admit.Branch, Base: head, Changes: edits, Message: req.Message, files: files}
		var res *ChangesResult
		if req.Propose {
			res, err = a.ProposeChanges(ctx, cr)
		} else {
			res, err = a.CommitChanges(ctx, cr)
		}
		var moved *Moved
		if errors.As(err, &moved) && attempt < writeAttempts && ctx.Err() == nil {
			continue
		}
		return res, err
	}
}

// writeEdits checks each write against main's head and returns the edits,
// with the hash each file must still have when they land ("" absent).
func (a *App) writeEdits(ctx context.Context, head cairn.Hash, ws []PageWrite) ([]FileEdit, map[string]string, error) {
	tree, err := a.TreeOf(ctx, head)
	if err != nil {
		return nil, nil, err
	}
	return checkWrites(ctx, a.treeFiles(tree), head.String(), ws)
}

// fileLookup says what a path holds where writes are checked: its content
// hash ("" when absent) and how to read it.
type fileLookup func(ctx context.Context, path string) (cur string, read func() ([]byte, error), err error)

// treeFiles looks files up in a tree of the store.
func (a *App) treeFiles(tree cairn.Hash) fileLookup {
	return func(ctx context.Context, p string) (string, func() ([]byte, error), error) {
		e, err := a.v.Store.Get(ctx, tree, p)
		switch {
		case cairn.ErrorCode(err) == cairn.ENOTFOUND:
			return "", nil, nil
		case err != nil:
			return "", nil, err
		}
		return e.Blob.String(), func() ([]byte, error) { return a.v.Store.ReadBlob(ctx, e.Blob) }, nil
	}
}

// checkWrites checks each write against what lookup says its file holds
// (at, for conflicts: the head or draft it was checked on) and returns
// the edits, with the hash each file had ("" absent).
func checkWrites(ctx context.Context, lookup fileLookup, at string, ws []PageWrite) ([]FileEdit, map[string]string, error) {
	out := make([]FileEdit, 0, len(ws))
	files := make(map[string]string, len(ws))
	for _, w := range ws {
		p, err := cairn.CleanPath(w.Path)
		if err != nil {
			return nil, nil, err
		}
		cur, read, err := lookup(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		if !w.AnyVersion && !sameHash(w.Expected, cur) {
			return nil, nil, staleError(&StaleFile{Path: p, Expected: w.Expected, Current: cur, Head: at})
		}
		edit := FileEdit{Path: p, Content: w.Content, Delete: w.Delete}
		if w.Edit != nil {
			var data []byte
			if cur != "" {
				if data, err = read(); err != nil {
					return nil, nil, err
				}
			}
			if edit.Content, err = w.Edit(data, cur != ""); err != nil {
				return nil, nil, err
			}
			if cur != "" && bytes.Equal(edit.Content, data) {
				return nil, nil, cairn.Errorf(cairn.EINVALID, "the edit leaves %s as it is", cairn.Quote(p))
			}
		}
		if edit.Delete && cur == "" {
			return nil, nil, cairn.Errorf(cairn.ENOTFOUND, "%s is not there to delete", cairn.Quote(p))
		}
		out = append(out, edit)
		files[p] = cur
	}
	return out, files, nil
}

// sameHash compares a hash a writer sent (a full hash, or a prefix of at
// least 12 hex digits) with a file's.
func sameHash(expected, current string) bool {
	expected = strings.ToLower(strings.TrimSpace(expected))
	if expected == "" || current == "" {
		return expected == current
	}
	return len(expected) >= 12 && strings.HasPrefix(current, expected)
}

func staleError(s *StaleFile) error {
	e := cairn.Errorf(cairn.ECONFLICT, "%s; nothing was changed", s.Error())
	switch {
	case s.Current == "":
		e = e.WithHint("Write it as a new file: send no expected hash.")
	default:
		e = e.WithHint("Read it again, apply your change to what it holds now, and send that version's hash.")
	}
	e.Err = s
	return e
}

// SectionEdit replaces the body of the section under a heading.
type SectionEdit struct {
	// Heading is the heading's text as written (without the #s), matched
	// without regard to case; it must name one heading of the page.
	Heading string
	// Content replaces everything under the heading up to the next
	// heading of the same or a higher level (the heading line stays).
	Content string
}

// ReplaceSection returns src with the section under heading replaced.
func ReplaceSection(path string, src []byte, e SectionEdit) ([]byte, error) {
	p := markdown.Parse(path, src)
	want := strings.TrimSpace(e.Heading)
	want = strings.TrimSpace(strings.TrimLeft(want, "#"))
	at := -1
	var found []string
	for i, h := range p.Headings {
		found = append(found, h.Text)
		if strings.EqualFold(h.Text, want) {
			if at >= 0 {
				return nil, cairn.Errorf(cairn.EINVALID, "%s has more than one heading %q", cairn.Quote(path), want).
					WithHint("Replace an exact text instead.")
			}
			at = i
		}
	}
	if at < 0 {
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s has no heading %q", cairn.Quote(path), want).
			WithHint("Its headings: " + strings.Join(found, "; "))
	}
	lines := strings.SplitAfter(string(src), "\n")
	start := p.Headings[at].Line // the line after the heading (0-based index)
	end := len(lines)
	for _, h := range p.Headings[at+1:] {
		if h.Level <= p.Headings[at].Level {
			end = h.Line - 1
			break
		}
	}
	body := strings.Trim(e.Content, "\n")
	if body != "" {
		body = "\n" + body + "\n" // a blank line under the heading
	}
	if end < len(lines) && body != "" && !strings.HasSuffix(body, "\n\n") {
		body += "\n"
	}
	out := strings.Join(lines[:start], "") + body + strings.Join(lines[end:], "")
	return []byte(out), nil
}

// ReplaceText returns src with old replaced by new, which must occur
// exactly count times (count 0 counts as 1).
func ReplaceText(path string, src []byte, old, new string, count int) ([]byte, error) {
	if old == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "the text to replace is empty")
	}
	count = max(count, 1)
	if n := strings.Count(string(src), old); n != count {
		return nil, cairn.Errorf(cairn.EINVALID, "%s holds the text %d times, not %d", cairn.Quote(path), n, count).
			WithHint("Quote more of the text around it so that it occurs as often as you say.")
	}
	return []byte(strings.ReplaceAll(string(src), old, new)), nil
}

// SetField returns src with the frontmatter field set to value (any
// JSON-like value: a string, a number, a bool, a list), or removed when
// remove is set; a page without frontmatter gets a block. The rest of the
// frontmatter keeps its order; comments in it may move.
func SetField(path string, src []byte, field string, value any, remove bool) ([]byte, error) {
	field = strings.TrimSpace(field)
	if field == "" || strings.ContainsAny(field, ":\n") {
		return nil, cairn.Errorf(cairn.EINVALID, "%q is not a frontmatter field name", field)
	}
	parts := markdown.Split(src)
	var doc yaml.Node
	if parts.Found && len(bytes.TrimSpace(parts.YAML)) > 0 {
		if err := yaml.Unmarshal(parts.YAML, &doc); err != nil {
			return nil, cairn.Errorf(cairn.EINVALID, "the frontmatter of %s is not YAML: %v", cairn.Quote(path), err).
				WithHint("Replace the page's text instead.")
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, cairn.Errorf(cairn.EINVALID, "the frontmatter of %s is not a mapping of fields", cairn.Quote(path))
	}
	at := -1
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == field {
			at = i
		}
	}
	switch {
	case remove && at < 0:
		return nil, cairn.Errorf(cairn.ENOTFOUND, "%s has no frontmatter field %q", cairn.Quote(path), field)
	case remove:
		m.Content = append(m.Content[:at], m.Content[at+2:]...)
	default:
		var v yaml.Node
		if err := v.Encode(value); err != nil {
			return nil, cairn.Errorf(cairn.EINVALID, "the value of %q cannot be written as YAML: %v", field, err)
		}
		if at >= 0 {
			m.Content[at+1] = &v
		} else {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: field}, &v)
		}
	}
	var y bytes.Buffer
	if len(m.Content) > 0 {
		enc := yaml.NewEncoder(&y)
		enc.SetIndent(2)
		if err := enc.Encode(&doc); err != nil {
			return nil, fmt.Errorf("frontmatter of %s: %w", path, err)
		}
		enc.Close()
	}
	head, tail, body := parts.Head, parts.Tail, parts.Body
	if !parts.Found {
		head, tail = []byte("---\n"), []byte("---\n")
	}
	if y.Len() == 0 && !parts.Found {
		return src, nil
	}
	return slices.Concat(head, y.Bytes(), tail, body), nil
}

// Move moves the file from to the path to (which must be free) on main,
// through admission like any Write, if from is still at the hash expected
// its mover read: its content moves whole or not at all. Links to it are
// not rewritten.
func (a *App) Move(ctx context.Context, from, to, expected, message string) (*ChangesResult, error) {
	f, err := a.ReadFile(ctx, admit.Branch, from)
	if err != nil {
		return nil, err
	}
	// Write checks again that from is the version read, in the
	// transaction that admits the move.
	return a.Write(ctx, WriteRequest{Message: cmp.Or(message, "move "+from+" to "+to), Writes: []PageWrite{
		{Path: from, Expected: expected, Delete: true},
		{Path: to, Content: []byte(f.Content)},
	}})
}

// AppendText returns src with text added at its end, on lines of its own.
func AppendText(src []byte, text string) []byte {
	out := append([]byte{}, src...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, text...)
	if !strings.HasSuffix(text, "\n") {
		out = append(out, '\n')
	}
	return out
}
