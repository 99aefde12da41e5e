// Package ingest is cairn's main job: sources go in, an agent integrates
// each into the wiki, and admission decides.
//
// `cairn ingest FILE` stores each source under raw/ (never overwriting:
// a different file whose name is taken gets its hash in its name), commits
// it to main as system, records the source (named by the SHA-256 of its
// content) and enqueues its job, in one transaction. A worker runs the job:
// the vault's agent runtime makes a proposal on main's head, and admission
// admits it, holds it for review or rejects it; the job's completion and
// the source's status commit with that decision. The same content is never
// ingested twice; a rejected source stays rejected until retried.
package ingest

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"cairn"
	"cairn/store"
)

// Source statuses, named as Eva names them.
const (
	Queued   = "queued"   // waiting for a worker
	Running  = "running"  // an agent is working on it
	Merged   = "merged"   // its proposal was admitted (or accepted in review)
	Held     = "held"     // its proposal waits for a review
	Rejected = "rejected" // its proposal was rejected; it stays so until retried
	Failed   = "failed"   // it could not be ingested; the error says why
)

// Source is an immutable input document, named by its content's hash.
type Source struct {
	ID       string    `json:"id"`   // SHA-256 of the content, hex
	Name     string    `json:"name"` // the file name it was given
	Path     string    `json:"path"` // where it is in the vault; "" when it was refused
	Size     int64     `json:"size"`
	Status   string    `json:"status"`
	Job      int64     `json:"job,omitempty"`
	Attempt  int64     `json:"attempt,omitempty"`
	Proposal int64     `json:"proposal,omitempty"`
	Error    string    `json:"error,omitempty"`
	Hint     string    `json:"hint,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	History  []Step    `json:"history,omitempty"`
}

// Step is one entry of a source's history.
type Step struct {
	Time      time.Time       `json:"time"`
	Status    string          `json:"status"`
	Principal cairn.Principal `json:"principal"`
	Detail    string          `json:"detail,omitempty"`
}

// Formats ingested now; HTML and PDF follow.
var formats = []string{".md", ".markdown", ".txt", ".html", ".htm", ".pdf"}

// refusal is why a file cannot be a source, with a hint.
type refusal struct{ msg, hint string }

// checkName reports what makes a file name unusable for a source, or
// returns the name as the vault holds it: NFC, as cairn.CleanPath makes
// every path (macOS gives accented names in NFD).
func checkName(name string) (string, *refusal) {
	hint := "Rename the file to a plain name like notes-2026.md and ingest it again."
	switch {
	case !utf8.ValidString(name):
		return "", &refusal{"the file name is not valid UTF-8", hint}
	case strings.HasPrefix(name, "."):
		return "", &refusal{fmt.Sprintf("the file name %s starts with a dot (a hidden file)", cairn.Quote(name)), hint}
	case strings.ContainsAny(name, "\\/"):
		return "", &refusal{fmt.Sprintf("the file name %s holds a slash", cairn.Quote(name)), hint}
	case len(name) > 200:
		return "", &refusal{fmt.Sprintf("the file name is %d bytes; at most 200", len(name)), hint}
	}
	clean, err := cairn.CleanPath("raw/" + name)
	if err != nil {
		return "", &refusal{fmt.Sprintf("the file name %s cannot be a vault path: %v", cairn.Quote(name), err), hint}
	}
	return strings.TrimPrefix(clean, "raw/"), nil
}

// checkContent reports what makes content unusable for a source.
func checkContent(name string, data []byte, size, max int64) *refusal {
	ext := strings.ToLower(path.Ext(name))
	switch {
	case size > max:
		return &refusal{fmt.Sprintf("the file is %s; the limit is %s", mib(size), mib(max)),
			"Split it, or raise the limit: cairn settings set sources.max_size 128MiB"}
	case !containsString(formats, ext):
		what := "has no extension"
		if ext != "" {
			what = "is a " + ext + " file"
		}
		return &refusal{fmt.Sprintf("%s %s; cairn ingests Markdown, text, HTML and PDF sources (.md, .txt, .html, .pdf)", name, what),
			"Convert it to Markdown or plain text first."}
	case len(bytes.TrimSpace(data)) == 0:
		return &refusal{"the file is empty", "Ingest a file that has text in it."}
	case ext == ".pdf":
		// Its text is extracted when its job runs (package convert).
		if !bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")) {
			return &refusal{name + " is not a PDF: it does not start with %PDF-", "Ingest the file the program that made it saved as PDF."}
		}
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		return &refusal{"the file is binary, not UTF-8 text", "Save it as UTF-8 text (.md, .txt or .html) first."}
	}
	return nil
}

func mib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// getSource reads a source by its full id, inside tx when it is not nil;
// nil when there is none.
func (s *Service) getSource(ctx context.Context, tx *store.Tx, id string) (*Source, error) {
	var src *Source
	var err error
	if tx != nil {
		src, err = s.st.SourceTx(ctx, tx.Backend(), id)
	} else {
		src, err = s.st.Source(ctx, id)
	}
	if cairn.ErrorCode(err) == cairn.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read source %.12s: %w", id, err)
	}
	return src, nil
}

// resolveSource finds a source by id prefix (at least 4 hex digits) or by
// name.
func (s *Service) resolveSource(ctx context.Context, ref string) (*Source, error) {
	ref = norm.NFC.String(strings.TrimSpace(ref)) // names are stored in NFC
	if ref == "" {
		return nil, cairn.Errorf(cairn.EINVALID, "no source named").WithHint("Try: cairn sources")
	}
	var found []*Source
	var err error
	if isHex(ref) && len(ref) >= 4 {
		found, err = s.st.SourcesWithPrefix(ctx, strings.ToLower(ref), 3)
	} else {
		found, err = s.st.SourcesNamed(ctx, ref, 3)
	}
	if err != nil {
		return nil, fmt.Errorf("find source %s: %w", ref, err)
	}
	switch len(found) {
	case 0:
		return nil, cairn.Errorf(cairn.ENOTFOUND, "no source is named %q", ref).WithHint("Try: cairn sources")
	case 1:
		return found[0], nil
	}
	var ids []string
	for _, s := range found {
		ids = append(ids, s.ID[:12]+" ("+s.Name+")")
	}
	return nil, cairn.Errorf(cairn.EINVALID, "%q could mean %s", ref, strings.Join(ids, ", ")).WithHint("Give more of the id.")
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// setStatus changes a source's status inside tx and records it in its
// history.
func (s *Service) setStatus(ctx context.Context, tx *store.Tx, id string, c StatusChange) error {
	if err := s.st.SetStatus(ctx, tx.Backend(), id, c); err != nil {
		return fmt.Errorf("source %.12s: set %s: %w", id, c.Status, err)
	}
	return nil
}
