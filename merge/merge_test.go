package merge_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"cairn"
	"cairn/merge"
)

// mergeFunc is the shape of every strategy.
type mergeFunc func(base, ours, theirs []byte, opts *merge.Options) merge.Result

// test is one merge with its expected outcome: want when clean, or the
// conflicts.
type test struct {
	name               string
	base, ours, theirs string
	nilBase            bool // base is nil: both sides added the file
	want               string
	conflicts          []cairn.Conflict
}

// run checks a table of merges, each also with the sides swapped.
func run(t *testing.T, fname string, f mergeFunc, tests []test) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := []byte(tt.base)
			if tt.nilBase {
				base = nil
			}
			got := f(base, []byte(tt.ours), []byte(tt.theirs), nil)
			check(t, fname, tt, got)

			swapped := f(base, []byte(tt.theirs), []byte(tt.ours), nil)
			tt.conflicts = swapConflicts(tt.conflicts)
			check(t, fname+" (swapped)", tt, swapped)
		})
	}
}

func check(t *testing.T, fname string, tt test, got merge.Result) {
	t.Helper()
	if diff := cmp.Diff(tt.conflicts, got.Conflicts, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s(%q, %q, %q) conflicts mismatch (-want +got):\n%s", fname, tt.base, tt.ours, tt.theirs, diff)
	}
	if len(tt.conflicts) > 0 {
		if got.Data != nil {
			t.Errorf("%s(%q, %q, %q).Data = %q, want nil for a conflict without markers", fname, tt.base, tt.ours, tt.theirs, got.Data)
		}
		return
	}
	if string(got.Data) != tt.want {
		t.Errorf("%s(%q, %q, %q) = %q, want %q", fname, tt.base, tt.ours, tt.theirs, got.Data, tt.want)
	}
}

func swapConflicts(cs []cairn.Conflict) []cairn.Conflict {
	var out []cairn.Conflict
	for _, c := range cs {
		c.Ours, c.Theirs = c.Theirs, c.Ours
		if c.Lines != nil {
			l := *c.Lines
			l.Ours, l.Theirs = l.Theirs, l.Ours
			c.Lines = &l
		}
		out = append(out, c)
	}
	return out
}

// content builds a content conflict; ranges are base, ours, theirs as
// (start, count) pairs.
func content(base, ours, theirs string, r ...int) cairn.Conflict {
	return cairn.Conflict{
		Kind: cairn.ConflictContent,
		Lines: &cairn.ConflictLines{
			Base:   cairn.LineRange{Start: r[0], Count: r[1]},
			Ours:   cairn.LineRange{Start: r[2], Count: r[3]},
			Theirs: cairn.LineRange{Start: r[4], Count: r[5]},
		},
		Base: base, Ours: ours, Theirs: theirs,
	}
}

func TestText(t *testing.T) {
	run(t, "Text", merge.Text, []test{
		{name: "OursOnly", base: "a\nb\n", ours: "a\nB\n", theirs: "a\nb\n", want: "a\nB\n"},
		{name: "SameChange", base: "a\nb\n", ours: "a\nB\n", theirs: "a\nB\n", want: "a\nB\n"},
		{name: "Disjoint", base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nb\nC\n", want: "A\nb\nC\n"},
		{
			name: "DisjointInsertAndDelete",
			base: "1\n2\n3\n4\n5\n6\n", ours: "0\n1\n2\n3\n4\n5\n6\n", theirs: "1\n2\n3\n5\n6\n7\n",
			want: "0\n1\n2\n3\n5\n6\n7\n",
		},
		{
			name: "ConflictBothChanged",
			base: "a\nb\nc\n", ours: "a\nB1\nc\n", theirs: "a\nB2\nc\n",
			conflicts: []cairn.Conflict{content("b\n", "B1\n", "B2\n", 2, 1, 2, 1, 2, 1)},
		},
		{
			name: "ConflictAdjacent",
			base: "a\nb\n", ours: "A\nb\n", theirs: "a\nB\n",
			conflicts: []cairn.Conflict{content("a\nb\n", "A\nb\n", "a\nB\n", 1, 2, 1, 2, 1, 2)},
		},
		{
			name: "ConflictInsertSamePlace",
			base: "a\nb\n", ours: "a\nx\nb\n", theirs: "a\ny\nb\n",
			conflicts: []cairn.Conflict{content("", "x\n", "y\n", 2, 0, 2, 1, 2, 1)},
		},
		{
			name: "ConflictDeleteModify",
			base: "a\nb\nc\n", ours: "a\nc\n", theirs: "a\nB\nc\n",
			conflicts: []cairn.Conflict{content("b\n", "", "B\n", 2, 1, 2, 0, 2, 1)},
		},
		{name: "BothDeleteSame", base: "a\nb\nc\n", ours: "a\nc\n", theirs: "a\nc\n", want: "a\nc\n"},
		{
			name: "ConflictCommonLinesTrimmed",
			base: "a\nb\nc\n", ours: "a\nx\nB1\ny\nc\n", theirs: "a\nx\nB2\ny\nc\n",
			conflicts: []cairn.Conflict{content("b\n", "B1\n", "B2\n", 2, 1, 3, 1, 3, 1)},
		},
		{
			name: "CommonInsertionThenOneSided",
			base: "a\nb\nc\n", ours: "a\nx\nb\nc\n", theirs: "a\nx\nB\nc\n",
			want: "a\nx\nB\nc\n",
		},
		{name: "CRLF", base: "a\r\nb\r\nc\r\n", ours: "A\r\nb\r\nc\r\n", theirs: "a\r\nb\r\nC\r\n", want: "A\r\nb\r\nC\r\n"},
		{name: "NoFinalNewline", base: "a\nb\nc", ours: "A\nb\nc", theirs: "a\nb\nC", want: "A\nb\nC"},
		{name: "AddFinalNewline", base: "a\nm\nb", ours: "a\nm\nb\nc\n", theirs: "A\nm\nb", want: "A\nm\nb\nc\n"},
		{
			name: "ConflictFinalNewline",
			base: "a\nb", ours: "a\nb\n", theirs: "a\nB",
			conflicts: []cairn.Conflict{content("b", "b\n", "B", 2, 1, 2, 1, 2, 1)},
		},
		{name: "BOM", base: "\ufeffa\nb\nc\n", ours: "\ufeffA\nb\nc\n", theirs: "\ufeffa\nb\nC\n", want: "\ufeffA\nb\nC\n"},
		{name: "EmptyOurs", base: "a\n", ours: "", theirs: "a\n", want: ""},
		{name: "EmptyAll", base: "", ours: "", theirs: "", want: ""},
		{
			name: "ConflictFromEmpty",
			base: "", ours: "a\n", theirs: "b\n",
			conflicts: []cairn.Conflict{content("", "a\n", "b\n", 1, 0, 1, 1, 1, 1)},
		},
		{
			name: "AddAdd", nilBase: true, ours: "a\nb\nc\n", theirs: "a\nB\nc\n",
			conflicts: []cairn.Conflict{content("", "b\n", "B\n", 1, 0, 2, 1, 2, 1)},
		},
		{name: "AddAddSame", nilBase: true, ours: "a\n", theirs: "a\n", want: "a\n"},
		{
			name: "ListsAreNotUnited",
			base: "- a\n", ours: "- a\n- b\n", theirs: "- a\n- c\n",
			conflicts: []cairn.Conflict{content("", "- b\n", "- c\n", 2, 0, 2, 1, 2, 1)},
		},
		{
			name: "TwoConflicts",
			base: "a\nb\nc\nd\ne\n", ours: "A1\nb\nc\nd\nE1\n", theirs: "A2\nb\nc\nd\nE2\n",
			conflicts: []cairn.Conflict{
				content("a\n", "A1\n", "A2\n", 1, 1, 1, 1, 1, 1),
				content("e\n", "E1\n", "E2\n", 5, 1, 5, 1, 5, 1),
			},
		},
	})
}

func TestText_Markers(t *testing.T) {
	base := "a\nb\nc\n"
	ours := "a\nB1\nc\n"
	theirs := "a\nB2\nc\n"
	tests := []struct {
		name string
		opts merge.Options
		want string
	}{
		{"Default", merge.Options{Markers: true}, "a\n<<<<<<< ours\nB1\n||||||| base\nb\n=======\nB2\n>>>>>>> theirs\nc\n"},
		{
			"Labels", merge.Options{Markers: true, OursLabel: "main", TheirsLabel: "job-7"},
			"a\n<<<<<<< main\nB1\n||||||| base\nb\n=======\nB2\n>>>>>>> job-7\nc\n",
		},
		{
			"LabelLineBreaks", merge.Options{Markers: true, OursLabel: "main\nx", TheirsLabel: "job\r\n7"},
			"a\n<<<<<<< main x\nB1\n||||||| base\nb\n=======\nB2\n>>>>>>> job  7\nc\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := merge.Text([]byte(base), []byte(ours), []byte(theirs), &tt.opts)
			if string(got.Data) != tt.want {
				t.Errorf("Text(%q, %q, %q, %+v) = %q, want %q", base, ours, theirs, tt.opts, got.Data, tt.want)
			}
			want := []cairn.Conflict{content("b\n", "B1\n", "B2\n", 2, 1, 2, 1, 2, 1)}
			if diff := cmp.Diff(want, got.Conflicts); diff != "" {
				t.Errorf("Text(%q, %q, %q, %+v) conflicts mismatch (-want +got):\n%s", base, ours, theirs, tt.opts, diff)
			}
		})
	}

	t.Run("NoFinalNewline", func(t *testing.T) {
		got := merge.Text([]byte("a\nb"), []byte("a\nB1"), []byte("a\nB2"), &merge.Options{Markers: true})
		want := "a\n<<<<<<< ours\nB1\n||||||| base\nb\n=======\nB2\n>>>>>>> theirs\n"
		if string(got.Data) != want {
			t.Errorf("Text = %q, want %q", got.Data, want)
		}
	})
	t.Run("CRLF", func(t *testing.T) {
		got := merge.Text([]byte("a\r\nb\r\n"), []byte("a\r\nB1\r\n"), []byte("a\r\nB2\r\n"), &merge.Options{Markers: true})
		want := "a\r\n<<<<<<< ours\r\nB1\r\n||||||| base\r\nb\r\n=======\r\nB2\r\n>>>>>>> theirs\r\n"
		if string(got.Data) != want {
			t.Errorf("Text = %q, want %q", got.Data, want)
		}
	})
}

func TestText_LargeEdits(t *testing.T) {
	// Many scattered edits on both sides, far enough apart to merge.
	var base, ours, theirs strings.Builder
	var want strings.Builder
	for i := range 5000 {
		line := "line " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "\n"
		base.WriteString(line)
		switch {
		case i%40 == 10:
			ours.WriteString("ours " + line)
			theirs.WriteString(line)
			want.WriteString("ours " + line)
		case i%40 == 30:
			ours.WriteString(line)
			want.WriteString("theirs " + line)
			theirs.WriteString("theirs " + line)
		default:
			ours.WriteString(line)
			theirs.WriteString(line)
			want.WriteString(line)
		}
	}
	got := merge.Text([]byte(base.String()), []byte(ours.String()), []byte(theirs.String()), nil)
	if len(got.Conflicts) > 0 {
		t.Fatalf("Text: %d conflicts, first %+v", len(got.Conflicts), got.Conflicts[0])
	}
	if string(got.Data) != want.String() {
		t.Errorf("Text: merged %d bytes, want %d bytes", len(got.Data), want.Len())
	}
}

func TestFile(t *testing.T) {
	log := "# Log\n\n## [2026-11-28] ingest | a\n"
	tests := []struct {
		name                     string
		path                     string
		base, ours, theirs, want string
		kind                     cairn.ConflictKind // of a single conflict, or ""
	}{
		{name: "Text", path: "notes.txt", base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nb\nC\n", want: "A\nb\nC\n"},
		{name: "TextListsConflict", path: "todo.txt", base: "- a\n", ours: "- a\n- b\n", theirs: "- a\n- c\n", kind: cairn.ConflictContent},
		{name: "Markdown", path: "wiki/index.md", base: "- a\n", ours: "- a\n- b\n", theirs: "- a\n- c\n", want: "- a\n- b\n- c\n"},
		{name: "MarkdownUpperCase", path: "INDEX.MD", base: "- a\n", ours: "- a\n- b\n", theirs: "- a\n- c\n", want: "- a\n- b\n- c\n"},
		{name: "MarkdownLongExt", path: "a.markdown", base: "- a\n", ours: "- a\n- b\n", theirs: "- a\n- c\n", want: "- a\n- b\n- c\n"},
		{
			name: "Log", path: "log.md", base: log,
			ours:   log + "\n## [2026-11-29] ingest | x\n",
			theirs: log + "\n## [2026-11-29] ingest | y\n",
			want:   log + "\n## [2026-11-29] ingest | x\n\n## [2026-11-29] ingest | y\n",
		},
		{
			name: "LogOnlyAtRoot", path: "notes/log.md", base: log,
			ours:   log + "\n## [2026-11-29] ingest | x\n",
			theirs: log + "\n## [2026-11-29] ingest | y\n",
			kind:   cairn.ConflictContent,
		},
		{name: "Binary", path: "a.png", base: "\x89PNG\x00a", ours: "\x89PNG\x00b", theirs: "\x89PNG\x00c", kind: cairn.ConflictBinary},
		{name: "BinaryInvalidUTF8", path: "a.txt", base: "a\n", ours: "\xff\n", theirs: "b\n", kind: cairn.ConflictBinary},
		{name: "BinaryMarkdown", path: "a.md", base: "a\x00", ours: "b\x00", theirs: "c\x00", kind: cairn.ConflictBinary},
		{name: "BinaryTrivial", path: "a.png", base: "\x00a", ours: "\x00b", theirs: "\x00a", want: "\x00b"},
		{name: "BinaryBothSame", path: "a.png", base: "\x00a", ours: "\x00b", theirs: "\x00b", want: "\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, swap := range []bool{false, true} {
				ours, theirs := tt.ours, tt.theirs
				if swap {
					ours, theirs = theirs, ours
				}
				got := merge.File(tt.path, []byte(tt.base), []byte(ours), []byte(theirs), nil)
				if tt.kind == "" {
					if len(got.Conflicts) > 0 || string(got.Data) != tt.want {
						t.Errorf("File(%q, %q, %q, %q) = %q, %+v; want %q", tt.path, tt.base, ours, theirs, got.Data, got.Conflicts, tt.want)
					}
					continue
				}
				if len(got.Conflicts) != 1 || got.Conflicts[0].Kind != tt.kind {
					t.Errorf("File(%q, %q, %q, %q) conflicts = %+v, want one %s conflict", tt.path, tt.base, ours, theirs, got.Conflicts, tt.kind)
				}
			}
		})
	}

	t.Run("BinaryMarkersKeepOurs", func(t *testing.T) {
		got := merge.File("a.bin", []byte("\x00a"), []byte("\x00b"), []byte("\x00c"), &merge.Options{Markers: true})
		want := []cairn.Conflict{{Kind: cairn.ConflictBinary}}
		if diff := cmp.Diff(want, got.Conflicts); diff != "" || !bytes.Equal(got.Data, []byte("\x00b")) {
			t.Errorf("File(a.bin, Markers) = %q, %+v; want ours and one binary conflict", got.Data, got.Conflicts)
		}
	})
	t.Run("NilBase", func(t *testing.T) {
		got := merge.File("index.md", nil, []byte("# Index\n- [[a]]\n"), []byte("# Index\n- [[b]]\n"), nil)
		want := "# Index\n- [[a]]\n- [[b]]\n"
		if len(got.Conflicts) > 0 || string(got.Data) != want {
			t.Errorf("File(index.md, nil, ...) = %q, %+v; want %q", got.Data, got.Conflicts, want)
		}
	})
}
