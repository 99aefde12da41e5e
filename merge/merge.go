package merge

import (
	"bytes"
	"cmp"
	"path"
	"strings"
	"unicode/utf8"

	"cairn"
)

// Options adjust a merge. The zero value, like a nil *Options, means the
// defaults.
type Options struct {
	// Markers writes each unresolved conflict into Result.Data between
	// git-style conflict markers (<<<<<<< ours, ||||||| base, =======,
	// >>>>>>> theirs), in addition to returning it in Result.Conflicts.
	// Default false: a conflicted result has no Data.
	Markers bool

	// OursLabel and TheirsLabel follow "<<<<<<<" and ">>>>>>>" in conflict
	// markers, with line breaks replaced by spaces. Defaults "ours" and
	// "theirs".
	OursLabel, TheirsLabel string
}

// Result is the outcome of merging one file.
type Result struct {
	// Data is the merged content. It is meaningful when Conflicts is empty,
	// or when Options.Markers is set, in which case it holds the conflicts
	// between markers. Without Markers it is nil for a conflicted merge. It
	// may share memory with base, ours or theirs, and it may be nil when the
	// merged file is empty.
	Data []byte

	// Conflicts lists what could not be merged, in file order. Path is left
	// empty for the caller to fill in.
	Conflicts []cairn.Conflict
}

// MaxFrontmatter is the largest YAML frontmatter, in bytes, that [Markdown]
// merges field by field. A larger one is merged as plain lines: it bounds
// the work and memory the YAML parser may spend on one page.
const MaxFrontmatter = 256 << 10

// File merges one file's three versions, choosing the strategy by its
// vault-relative, slash-separated path:
//
//   - "log.md" (at the vault root only) is merged by [Log];
//   - names ending in ".md" or ".markdown", in any letter case, by [Markdown];
//   - other files whose versions are all valid UTF-8 without NUL bytes by
//     [Text].
//
// A version that is not valid UTF-8 or holds a NUL byte makes the file
// binary, whatever its name: unless two of the three versions are equal the
// result is a single [cairn.ConflictBinary] conflict, whose Base, Ours and
// Theirs are empty. With Options.Markers its Data is ours unchanged, since
// binary content cannot hold markers.
//
// A nil base means the sides have no common ancestor (both added the file)
// and is merged as an empty base.
func File(path string, base, ours, theirs []byte, opts *Options) Result {
	if r, ok := trivial(base, ours, theirs); ok {
		return r
	}
	if isBinary(base) || isBinary(ours) || isBinary(theirs) {
		r := Result{Conflicts: []cairn.Conflict{{Kind: cairn.ConflictBinary}}}
		if opts != nil && opts.Markers {
			r.Data = ours
		}
		return r
	}
	switch {
	case path == "log.md":
		return Log(base, ours, theirs, opts)
	case isMarkdown(path):
		return Markdown(base, ours, theirs, opts)
	default:
		return Text(base, ours, theirs, opts)
	}
}

// trivial settles the cases where at most one side changed anything, or
// both made the same change.
func trivial(base, ours, theirs []byte) (Result, bool) {
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(base, theirs):
		return Result{Data: ours}, true
	case bytes.Equal(base, ours):
		return Result{Data: theirs}, true
	}
	return Result{}, false
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}

func isMarkdown(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return true
	}
	return false
}

// settings are Options with the defaults filled in.
type settings struct {
	markers                bool
	oursLabel, theirsLabel string
}

func resolve(opts *Options) settings {
	if opts == nil {
		opts = &Options{}
	}
	return settings{
		markers:     opts.Markers,
		oursLabel:   oneLine(cmp.Or(opts.OursLabel, "ours")),
		theirsLabel: oneLine(cmp.Or(opts.TheirsLabel, "theirs")),
	}
}

func oneLine(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }

// threeWay merges one indivisible value: it reports false when both sides
// changed it differently.
func threeWay(base, ours, theirs []byte) ([]byte, bool) {
	r, ok := trivial(base, ours, theirs)
	return r.Data, ok
}
