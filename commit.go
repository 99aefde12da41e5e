package cairn

import (
	"maps"
	"slices"
	"time"
)

// Commit is an immutable snapshot of the vault tree.
type Commit struct {
	Hash      Hash              `json:"id"`
	Tree      Hash              `json:"tree"`
	Parents   []Hash            `json:"parents"`
	Principal Principal         `json:"principal"`
	Time      time.Time         `json:"time"`
	Message   string            `json:"message"`
	Meta      map[string]string `json:"meta,omitempty"`
}

// Clone returns a deep copy of c: a caller may change the copy's parents
// and metadata without changing c.
func (c *Commit) Clone() *Commit {
	d := *c
	d.Parents = slices.Clone(c.Parents)
	d.Meta = maps.Clone(c.Meta)
	return &d
}

// Mode is the kind of a tree entry.
type Mode uint8

// Modes. Only regular files and executables are stored; symbolic links and
// other special files are refused at the edge.
const (
	ModeFile       Mode = 0
	ModeExecutable Mode = 1
)

// Entry is one file in a vault tree.
type Entry struct {
	Path string `json:"path"`
	Blob Hash   `json:"blob"`
	Size int64  `json:"size"`
	Mode Mode   `json:"mode,omitempty"`
}

// ChangeKind says how a path differs between two trees.
type ChangeKind string

// Change kinds.
const (
	Added    ChangeKind = "added"
	Modified ChangeKind = "modified"
	Deleted  ChangeKind = "deleted"
	Renamed  ChangeKind = "renamed" // same content under a new path (case-only renames included)
)

// Change is one difference between two trees. Old is the zero Entry for an
// addition, New for a deletion. For a rename Old.Path is the source.
type Change struct {
	Kind ChangeKind `json:"kind"`
	Path string     `json:"path"`
	Old  Entry      `json:"old"`
	New  Entry      `json:"new"`
}

// ConflictKind says why a path could not be merged.
type ConflictKind string

// Conflict kinds.
const (
	ConflictContent      ConflictKind = "content"       // both sides changed the same lines
	ConflictField        ConflictKind = "field"         // both sides set one frontmatter field differently
	ConflictModifyDelete ConflictKind = "modify-delete" // one side changed what the other deleted
	ConflictAddAdd       ConflictKind = "add-add"       // both sides added the path with different content
	ConflictRename       ConflictKind = "rename"        // both sides renamed one file to different paths, or two files to one
	ConflictBinary       ConflictKind = "binary"        // both sides changed a file that is not text
	ConflictCase         ConflictKind = "case"          // the merged tree would hold two paths differing only in case
)

// LineRange is a 1-based, inclusive range of lines; Count 0 means an empty
// range placed before line Start.
type LineRange struct {
	Start int `json:"start"`
	Count int `json:"count"`
}

// Conflict is one thing a three-way merge could not decide. Base, Ours and
// Theirs hold the competing text (a field's YAML value, or the lines of the
// hunk); Lines are set for content conflicts.
type Conflict struct {
	Path   string         `json:"path"`
	Kind   ConflictKind   `json:"kind"`
	Field  string         `json:"field,omitempty"`
	Lines  *ConflictLines `json:"lines,omitempty"`
	Base   string         `json:"base"`
	Ours   string         `json:"ours"`
	Theirs string         `json:"theirs"`
}

// ConflictLines locates a content conflict in each version of the file.
type ConflictLines struct {
	Base   LineRange `json:"base"`
	Ours   LineRange `json:"ours"`
	Theirs LineRange `json:"theirs"`
}
