package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"cairn"
	"cairn/app"
	"cairn/ingest"
	"cairn/markdown"
)

// writeOut is what a write did: admitted (with the commit), held for a
// person (with the review's id), rejected, or a conflict (nothing
// changed: a file is not the version the agent read).
type writeOut struct {
	// Status is admitted, held, rejected or conflict.
	Status   string          `json:"status"`
	Message  string          `json:"message"`
	Commit   string          `json:"commit,omitempty"`
	Review   int64           `json:"review,omitempty"`
	Verdict  string          `json:"verdict,omitempty"`
	Findings []cairn.Finding `json:"findings"`
	// Files are the new hashes of the files written (send them as
	// expected_hash to change them again), by path; "" for a deletion.
	Files map[string]string `json:"files"`
	// Conflict names the file that was not the version read.
	Conflict *app.StaleFile `json:"conflict,omitempty"`
}

// write runs a change through admission and renders the outcome; on a
// server on a draft, it writes into the draft.
func (c *call) write(ctx context.Context, req app.WriteRequest) (*writeOut, error) {
	if d := c.s.opts.Draft; d != nil {
		return drafted(d.Write(ctx, req))
	}
	req.Message = cmp.Or(strings.TrimSpace(req.Message), "change from "+string(cairn.PrincipalFromContext(ctx)))
	paths := make([]string, 0, len(req.Writes))
	for _, w := range req.Writes {
		paths = append(paths, w.Path)
	}
	return c.render(ctx, func(ctx context.Context) (*app.ChangesResult, error) { return c.s.a.Write(ctx, req) }, paths)
}

// render runs a checked write and renders its outcome, with the new
// hashes of paths; a stale file is a conflict result (an error result
// with structured content).
func (c *call) render(ctx context.Context, write func(context.Context) (*app.ChangesResult, error), paths []string) (*writeOut, error) {
	res, err := write(ctx)
	if err != nil {
		return nil, conflict(err)
	}
	out := &writeOut{Findings: []cairn.Finding{}, Files: map[string]string{}}
	o := res.Admission
	if o != nil {
		out.Verdict = string(o.Verdict)
		out.Findings = append(out.Findings, o.Findings...)
	}
	switch {
	case res.Commit != nil:
		out.Status, out.Commit = "admitted", res.Commit.Hash.String()
		out.Message = "admitted: main is at " + res.Commit.Hash.Short()
		for _, p := range paths {
			if f, err := c.s.a.ReadFile(ctx, res.Commit.Hash.String(), p); err == nil {
				out.Files[p] = f.Entry.Blob.String()
			} else {
				out.Files[p] = ""
			}
		}
	case o != nil && o.Proposal != nil && o.Proposal.Status == "rejected":
		out.Status, out.Review = "rejected", o.Proposal.ID
		out.Message = "rejected by admission: the findings say why; nothing changed"
	case o != nil && o.Proposal != nil:
		out.Status, out.Review = "held", o.Proposal.ID
		out.Message = "held for a person's review (review " + itoa(o.Proposal.ID) + "): main did not change yet"
	default:
		out.Status, out.Message = "rejected", "not admitted; nothing changed"
	}
	fit(c, out, &out.Findings)
	return out, nil
}

// conflict makes a stale file's error a conflict result (an error result
// with structured content); other errors stay as they are.
func conflict(err error) error {
	var stale *app.StaleFile
	if errors.As(err, &stale) {
		return &resultError{out: &writeOut{Status: "conflict", Message: err.Error() + ". " + cairn.ErrorHint(err),
			Findings: []cairn.Finding{}, Files: map[string]string{}, Conflict: stale}}
	}
	return err
}

// drafted renders a write into a draft: written, with the new hashes, or
// a conflict.
func drafted(files map[string]string, err error) (*writeOut, error) {
	if err != nil {
		return nil, conflict(err)
	}
	return &writeOut{Status: "written", Files: files, Findings: []cairn.Finding{},
		Message: "written to your draft: it becomes one change, judged by admission, when you finish"}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// bodyOf is a page's text after its frontmatter.
func bodyOf(src []byte) []byte { return markdown.Split(src).Body }

type writePageIn struct {
	Path         string `json:"path" jsonschema:"the vault path, like concepts/ink.md"`
	Content      string `json:"content" jsonschema:"the page's whole new content"`
	ExpectedHash string `json:"expected_hash,omitempty" jsonschema:"the hash read_page gave for the version you read; none for a new page"`
	Message      string `json:"message,omitempty" jsonschema:"why: the commit message"`
}

func writePageTool(ctx context.Context, c *call, in writePageIn) (*writeOut, error) {
	return c.write(ctx, app.WriteRequest{Message: in.Message, Writes: []app.PageWrite{
		{Path: in.Path, Content: []byte(in.Content), Expected: in.ExpectedHash},
	}})
}

type sectionArg struct {
	Heading string `json:"heading" jsonschema:"the heading's text, without the #s"`
	Content string `json:"content" jsonschema:"what the section under it becomes (the heading stays)"`
}

type fieldArg struct {
	Field string `json:"field" jsonschema:"the frontmatter field"`
	Value any    `json:"value,omitempty" jsonschema:"its new value (a string, number, boolean or list)"`
}

type replaceArg struct {
	Old   string `json:"old" jsonschema:"the exact text to replace"`
	New   string `json:"new" jsonschema:"what replaces it"`
	Count int    `json:"count,omitempty" jsonschema:"how many times old occurs (default 1): a different count changes nothing"`
}

type editPageIn struct {
	Path         string      `json:"path" jsonschema:"the vault path of the page"`
	ExpectedHash string      `json:"expected_hash,omitempty" jsonschema:"the hash of the version you read; without it the edit applies to the page as it is"`
	Section      *sectionArg `json:"section,omitempty" jsonschema:"replace the section under a heading"`
	SetField     *fieldArg   `json:"set_field,omitempty" jsonschema:"set a frontmatter field"`
	RemoveField  string      `json:"remove_field,omitempty" jsonschema:"remove a frontmatter field"`
	Replace      *replaceArg `json:"replace,omitempty" jsonschema:"replace an exact text"`
	Message      string      `json:"message,omitempty" jsonschema:"why: the commit message"`
}

func editPageTool(ctx context.Context, c *call, in editPageIn) (*writeOut, error) {
	n := 0
	for _, set := range []bool{in.Section != nil, in.SetField != nil, in.RemoveField != "", in.Replace != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, cairn.Errorf(cairn.EINVALID, "an edit is one of section, set_field, remove_field or replace; %d were given", n)
	}
	path := in.Path
	return c.edit(ctx, path, in.ExpectedHash, in.Message, func(cur []byte) ([]byte, error) {
		switch {
		case in.Section != nil:
			return app.ReplaceSection(path, cur, app.SectionEdit{Heading: in.Section.Heading, Content: in.Section.Content})
		case in.SetField != nil:
			return app.SetField(path, cur, in.SetField.Field, in.SetField.Value, false)
		case in.RemoveField != "":
			return app.SetField(path, cur, in.RemoveField, nil, true)
		default:
			return app.ReplaceText(path, cur, in.Replace.Old, in.Replace.New, in.Replace.Count)
		}
	})
}

// edit changes the page at path, which must exist, by fn applied to what
// it holds: at the version expected when set, else as it is.
func (c *call) edit(ctx context.Context, path, expected, message string, fn func(cur []byte) ([]byte, error)) (*writeOut, error) {
	edit := func(cur []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, cairn.Errorf(cairn.ENOTFOUND, "%s is not in main", cairn.Quote(path)).WithHint("Make it with write_page.")
		}
		return fn(cur)
	}
	return c.write(ctx, app.WriteRequest{Message: message, Writes: []app.PageWrite{
		{Path: path, Expected: expected, AnyVersion: expected == "", Edit: edit},
	}})
}

type appendIn struct {
	Path         string `json:"path" jsonschema:"the vault path of the page"`
	Content      string `json:"content" jsonschema:"the text to add at its end"`
	ExpectedHash string `json:"expected_hash,omitempty" jsonschema:"the hash of the version you read; without it the text is added to the page as it is"`
	Message      string `json:"message,omitempty"`
}

func appendTool(ctx context.Context, c *call, in appendIn) (*writeOut, error) {
	if in.Content == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "there is nothing to append")
	}
	return c.edit(ctx, in.Path, in.ExpectedHash, in.Message, func(cur []byte) ([]byte, error) {
		return app.AppendText(cur, in.Content), nil
	})
}

type moveIn struct {
	From         string `json:"from" jsonschema:"the page's vault path"`
	To           string `json:"to" jsonschema:"its new vault path (not taken)"`
	ExpectedHash string `json:"expected_hash" jsonschema:"the hash of the version you read"`
	Message      string `json:"message,omitempty"`
}

func moveTool(ctx context.Context, c *call, in moveIn) (*writeOut, error) {
	if d := c.s.opts.Draft; d != nil {
		return drafted(d.Move(ctx, in.From, in.To, in.ExpectedHash))
	}
	return c.render(ctx, func(ctx context.Context) (*app.ChangesResult, error) {
		return c.s.a.Move(ctx, in.From, in.To, in.ExpectedHash, in.Message)
	}, []string{in.From, in.To})
}

type deleteIn struct {
	Path         string `json:"path" jsonschema:"the page's vault path"`
	ExpectedHash string `json:"expected_hash" jsonschema:"the hash of the version you read"`
	Message      string `json:"message,omitempty"`
}

func deleteTool(ctx context.Context, c *call, in deleteIn) (*writeOut, error) {
	return c.write(ctx, app.WriteRequest{Message: cmp.Or(in.Message, "delete "+in.Path), Writes: []app.PageWrite{
		{Path: in.Path, Expected: in.ExpectedHash, Delete: true},
	}})
}

type proposeFile struct {
	Path         string `json:"path"`
	Content      string `json:"content,omitempty" jsonschema:"the file's whole new content"`
	Delete       bool   `json:"delete,omitempty" jsonschema:"remove the file"`
	ExpectedHash string `json:"expected_hash,omitempty" jsonschema:"the hash of the version you read; none for a new file"`
}

type proposeIn struct {
	Files   []proposeFile `json:"files" jsonschema:"the files to change, each at most once"`
	Message string        `json:"message" jsonschema:"why: the commit message"`
	Hold    bool          `json:"hold,omitempty" jsonschema:"hold the change for a person's review whatever the gates say"`
}

func proposeTool(ctx context.Context, c *call, in proposeIn) (*writeOut, error) {
	if len(in.Files) == 0 {
		return nil, cairn.Errorf(cairn.EINVALID, "a proposal changes at least one file")
	}
	ws := make([]app.PageWrite, 0, len(in.Files))
	for _, f := range in.Files {
		if f.Delete && f.Content != "" {
			return nil, cairn.Errorf(cairn.EINVALID, "%s: a deletion has no content", cairn.Quote(f.Path))
		}
		ws = append(ws, app.PageWrite{Path: f.Path, Content: []byte(f.Content), Delete: f.Delete, Expected: f.ExpectedHash})
	}
	return c.write(ctx, app.WriteRequest{Message: in.Message, Writes: ws, Propose: in.Hold})
}

type ingestIn struct {
	Name    string `json:"name" jsonschema:"the source's file name, like notes-2026.md (.md, .txt or .html)"`
	Content string `json:"content" jsonschema:"the source's text"`
}

type ingestOut struct {
	Source *ingest.Source `json:"source"`
	Job    int64          `json:"job,omitempty"`
	Queued bool           `json:"queued"`
	Note   string         `json:"note,omitempty"`
}

func ingestTool(ctx context.Context, c *call, in ingestIn) (*ingestOut, error) {
	res, err := c.s.a.IngestData(ctx, []ingest.Data{{Name: in.Name, Data: []byte(in.Content)}}, app.IngestOptions{Detach: true})
	if err != nil {
		return nil, err
	}
	if len(res.Files) != 1 || res.Files[0].Source == nil {
		return nil, cairn.Errorf(cairn.EINTERNAL, "ingest returned no source")
	}
	f := res.Files[0]
	out := &ingestOut{Source: f.Source, Job: f.Source.Job, Queued: f.Queued, Note: f.Note}
	out.Source.History = nil
	if out.Queued {
		out.Note = cmp.Or(out.Note, "queued: job_status reports its progress")
	}
	return out, nil
}

type decideIn struct {
	ID       int64  `json:"id" jsonschema:"the review's (proposal's) id"`
	Decision string `json:"decision" jsonschema:"accept or reject"`
	Reason   string `json:"reason,omitempty" jsonschema:"why (required to reject)"`
}

func decideTool(ctx context.Context, c *call, in decideIn) (*app.Decision, error) {
	switch in.Decision {
	case "accept":
		return c.s.a.Accept(ctx, in.ID)
	case "reject":
		return c.s.a.Reject(ctx, in.ID, in.Reason)
	}
	return nil, cairn.Errorf(cairn.EINVALID, "decision is accept or reject, not %q", in.Decision)
}
