package merge_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cairn"
	"cairn/merge"
)

func field(key, base, ours, theirs string) cairn.Conflict {
	return cairn.Conflict{Kind: cairn.ConflictField, Field: key, Base: base, Ours: ours, Theirs: theirs}
}

func TestMarkdown(t *testing.T) {
	const index = "# Index\n\n## Entities\n- [[a]]\n"
	run(t, "Markdown", merge.Markdown, []test{
		// Bodies: diff3 with list union.
		{
			name: "ListUnion",
			base: index, ours: index + "- [[b]]\n", theirs: index + "- [[c]]\n",
			want: index + "- [[b]]\n- [[c]]\n",
		},
		{
			name:   "ListUnionUnderHeading",
			base:   "## Entities\n- [[a]]\n\n## Concepts\n- [[x]]\n",
			ours:   "## Entities\n- [[a]]\n- [[b]]\n\n## Concepts\n- [[x]]\n",
			theirs: "## Entities\n- [[a]]\n- [[c]]\n\n## Concepts\n- [[x]]\n- [[y]]\n",
			want:   "## Entities\n- [[a]]\n- [[b]]\n- [[c]]\n\n## Concepts\n- [[x]]\n- [[y]]\n",
		},
		{
			name: "ListUnionSameItemOnce",
			base: index, ours: index + "- [[b]]\n- [[c]]\n", theirs: index + "- [[b]]\n- [[d]]\n",
			want: index + "- [[b]]\n- [[c]]\n- [[d]]\n",
		},
		{
			name: "ListUnionSmallerFirst",
			base: index, ours: index + "- [[z]]\n", theirs: index + "- [[b]]\n- [[y]]\n",
			want: index + "- [[b]]\n- [[y]]\n- [[z]]\n",
		},
		{
			name:   "ListUnionContinuationLines",
			base:   "- a\n",
			ours:   "- a\n- b\n  more about b\n  - nested\n",
			theirs: "- a\n1. c\n",
			want:   "- a\n- b\n  more about b\n  - nested\n1. c\n",
		},
		{
			name: "ListUnionStars",
			base: "* a\n", ours: "* a\n* b\n", theirs: "* a\n+ c\n",
			want: "* a\n* b\n+ c\n",
		},
		{
			name: "ListUnionNoFinalNewline",
			base: "## E\n- [[a]]", ours: "## E\n- [[a]]\n- [[b]]", theirs: "## E\n- [[a]]\n- [[c]]\n",
			want: "## E\n- [[a]]\n- [[b]]\n- [[c]]\n",
		},
		{
			name: "ListUnionCRLF",
			base: "## E\r\n- a\r\n", ours: "## E\r\n- a\r\n- b\r\n", theirs: "## E\r\n- a\r\n- c\r\n",
			want: "## E\r\n- a\r\n- b\r\n- c\r\n",
		},
		{
			name: "ListUnionAddAdd", nilBase: true,
			ours: "# Index\n- [[a]]\n", theirs: "# Index\n- [[b]]\n",
			want: "# Index\n- [[a]]\n- [[b]]\n",
		},
		{
			// A revert of an older ingest: its entry goes, the entries
			// added after it stay.
			name:   "ListRemovedBesideAdded",
			base:   index + "- [[s1]]\n",
			ours:   index + "- [[s1]]\n- [[s2]]\n- [[s3]]\n",
			theirs: index,
			want:   index + "- [[s2]]\n- [[s3]]\n",
		},
		{
			name:   "ListRemovedWithNestedLines",
			base:   "- a\n- b\n  about b\n  - nested\n- c\n",
			ours:   "- a\n- c\n",
			theirs: "- a\n- b\n  about b\n  - nested\n- b2\n- c\n",
			want:   "- a\n- b2\n- c\n",
		},
		{
			name:   "ListChangedBesideAdded",
			base:   "- a\n- b\n",
			ours:   "- a\n- B\n",
			theirs: "- a\n- b\n- c\n",
			want:   "- a\n- B\n- c\n",
		},
		{
			name: "ListRemovedByBoth",
			base: "- a\n- b\n- c\n", ours: "- a\n- c\n- d\n", theirs: "- a\n- c\n",
			want: "- a\n- c\n- d\n",
		},
		{
			name: "ConflictRemovedAgainstChanged",
			base: "- a\n- b\n", ours: "- a\n", theirs: "- a\n- b2\n",
			conflicts: []cairn.Conflict{content("- b\n", "", "- b2\n", 2, 1, 2, 0, 2, 1)},
		},
		{
			// The review's cases: what one side adds under an item the
			// other removed has nowhere to go.
			name: "ConflictAddedUnderRemoved",
			base: "- a\n- b\n", ours: "- a\n", theirs: "- a\n- b\n  - b1\n",
			conflicts: []cairn.Conflict{content("- b\n", "", "- b\n  - b1\n", 2, 1, 2, 0, 2, 2)},
		},
		{
			name: "ConflictAddedUnderRemovedFirst",
			base: "- a\n- b\n", ours: "- b\n", theirs: "- a\n  - a1\n- b\n",
			conflicts: []cairn.Conflict{content("- a\n", "", "- a\n  - a1\n", 1, 1, 1, 0, 1, 2)},
		},
		{
			name:      "ConflictAddedUnderRemovedNested",
			base:      "# I\n- [[s1]]\n  - detail\n- [[s0]]\n",
			ours:      "# I\n- [[s0]]\n",
			theirs:    "# I\n- [[s1]]\n  - detail\n  - more detail\n- [[s0]]\n",
			conflicts: []cairn.Conflict{content("- [[s1]]\n  - detail\n", "", "- [[s1]]\n  - detail\n  - more detail\n", 2, 2, 2, 0, 2, 3)},
		},
		{
			name:      "ConflictRemovedItemKeepsItsLines",
			base:      "- a\n- b\n  more\n",
			ours:      "- a\n  more\n",
			theirs:    "- a\n- c\n- b\n  more\n",
			conflicts: []cairn.Conflict{content("- b\n", "", "- c\n- b\n", 2, 1, 2, 0, 2, 2)},
		},
		{
			name: "ConflictNotListItems",
			base: index, ours: index + "- [[b]]\nprose\n", theirs: index + "- [[c]]\n",
			conflicts: []cairn.Conflict{content("", "- [[b]]\nprose\n", "- [[c]]\n", 5, 0, 5, 2, 5, 1)},
		},
		{
			name: "ConflictChangedItem",
			base: "- a\n- b\n", ours: "- a\n- B\n", theirs: "- a\n- b2\n",
			conflicts: []cairn.Conflict{content("- b\n", "- B\n", "- b2\n", 2, 1, 2, 1, 2, 1)},
		},
		{
			name: "ConflictThematicBreak",
			base: "a\n", ours: "a\n* * *\n", theirs: "a\n- b\n",
			conflicts: []cairn.Conflict{content("", "* * *\n", "- b\n", 2, 0, 2, 1, 2, 1)},
		},

		// Frontmatter, field by field.
		{
			name:   "FieldChangedAndAdded",
			base:   "---\ntitle: A\n---\nbody\n",
			ours:   "---\ntitle: B\n---\nbody\n",
			theirs: "---\ntitle: A\ntags: [x]\n---\nbody\n",
			want:   "---\ntitle: B\ntags: [x]\n---\nbody\n",
		},
		{
			name:      "ConflictField",
			base:      "---\ntitle: A\ntype: note\n---\nbody\n",
			ours:      "---\ntitle: B\ntype: note\n---\nbody\n",
			theirs:    "---\ntitle: C\ntype: note\n---\nbody\n",
			conflicts: []cairn.Conflict{field("title", "A", "B", "C")},
		},
		{
			name:   "ListFieldUnion",
			base:   "---\naliases: [a]\n---\n",
			ours:   "---\naliases: [a, b]\n---\n",
			theirs: "---\naliases: [a, c]\n---\n",
			want:   "---\naliases: [a, b, c]\n---\n",
		},
		{
			name:   "ListFieldUnionBlock",
			base:   "---\ntitle: T\naliases:\n  - a\nx: 1\n---\n",
			ours:   "---\ntitle: T\naliases:\n  - a\n  - \"b\"\nx: 1\n---\n",
			theirs: "---\ntitle: T\naliases:\n  - a\n  - c\n  - b\nx: 1\n---\n",
			want:   "---\ntitle: T\naliases:\n  - a\n  - \"b\"\n  - c\nx: 1\n---\n",
		},
		{
			name:   "ListFieldUnionKeepsSurroundingLines",
			base:   "---\n# aliases\naliases:\n  - a\n\n# end\n---\n",
			ours:   "---\n# aliases\naliases:\n  - a\n  - b\n\n# end\n---\n",
			theirs: "---\n# aliases\naliases:\n  - a\n  - c\n\n# end\n---\n",
			want:   "---\n# aliases\naliases:\n  - a\n  - b\n  - c\n\n# end\n---\n",
		},
		{
			name:   "ListFieldUnionCompactIndent",
			base:   "---\ntags:\n- a\n---\n",
			ours:   "---\ntags:\n- a\n- b\n---\n",
			theirs: "---\ntags:\n- a\n- c\n---\n",
			want:   "---\ntags:\n- a\n- b\n- c\n---\n",
		},
		{
			name:   "ListFieldUnionAddAdd",
			base:   "---\ntitle: T\n---\n",
			ours:   "---\ntitle: T\ntags: [b]\n---\n",
			theirs: "---\ntitle: T\ntags: [a]\n---\n",
			want:   "---\ntitle: T\ntags: [a, b]\n---\n",
		},
		{
			name:   "ListFieldUnionSameItemQuotedDifferently",
			base:   "---\ntags: [a]\n---\n",
			ours:   "---\ntags: [a, \"b\"]\n---\n",
			theirs: "---\ntags: [b, a]\n---\n",
			want:   "---\ntags: [a, b]\n---\n",
		},
		{
			name:      "ConflictListFieldRemoved",
			base:      "---\ntags: [a, b]\n---\n",
			ours:      "---\ntags: [a]\n---\n",
			theirs:    "---\ntags: [a, b, c]\n---\n",
			conflicts: []cairn.Conflict{field("tags", "[a, b]", "[a]", "[a, b, c]")},
		},
		{
			name:   "FieldDeletedUnchanged",
			base:   "---\ntitle: A\nstatus: draft\n---\nbody\n",
			ours:   "---\ntitle: A\n---\nbody\n",
			theirs: "---\ntitle: A\nstatus: draft\n---\nbody 2\n",
			want:   "---\ntitle: A\n---\nbody 2\n",
		},
		{
			name:      "ConflictFieldDeletedChanged",
			base:      "---\ntitle: A\nstatus: draft\n---\n",
			ours:      "---\ntitle: A\n---\n",
			theirs:    "---\ntitle: A\nstatus: final\n---\n",
			conflicts: []cairn.Conflict{field("status", "draft", "", "final")},
		},
		{
			name:   "ReformatYieldsToChange",
			base:   "---\ntitle: A\n---\n",
			ours:   "---\ntitle: \"A\" # quoted\n---\n",
			theirs: "---\ntitle: B\n---\n",
			want:   "---\ntitle: B\n---\n",
		},
		{
			name:   "SameValueTwoWays",
			base:   "---\ntitle: A\n---\n",
			ours:   "---\ntitle: \"B\"\n---\n",
			theirs: "---\ntitle: 'B'\n---\n",
			want:   "---\ntitle: \"B\"\n---\n",
		},
		{
			name:   "KeysAddedAfterSameKey",
			base:   "---\ntitle: A\nz: 0\n---\n",
			ours:   "---\ntitle: A\ny: 2\nz: 0\n---\n",
			theirs: "---\ntitle: A\nx: 1\nw: 3\nz: 0\n---\n",
			want:   "---\ntitle: A\nx: 1\nw: 3\ny: 2\nz: 0\n---\n",
		},
		{
			name:   "KeysAddedFirst",
			base:   "---\ntitle: A\n---\n",
			ours:   "---\nid: 1\ntitle: A\n---\n",
			theirs: "---\ntitle: A\nend: 2\n---\n",
			want:   "---\nid: 1\ntitle: A\nend: 2\n---\n",
		},
		{
			name:   "CommentsKept",
			base:   "---\n# the title\ntitle: A\n\n# the tags\ntags: [a] # inline\n---\n",
			ours:   "---\n# the title\ntitle: B\n\n# the tags\ntags: [a] # inline\n---\n",
			theirs: "---\n# the title\ntitle: A\n\n# the tags\ntags: [a] # inline\n# added\nnew: 1\n---\n",
			want:   "---\n# the title\ntitle: B\n\n# the tags\ntags: [a] # inline\n# added\nnew: 1\n---\n",
		},
		{
			name:   "NestedValue",
			base:   "---\nmeta:\n  a: 1\n  b: 2\nx: 1\n---\n",
			ours:   "---\nmeta:\n  a: 1\n  b: 3\nx: 1\n---\n",
			theirs: "---\nmeta:\n  a: 1\n  b: 2\nx: 2\n---\n",
			want:   "---\nmeta:\n  a: 1\n  b: 3\nx: 2\n---\n",
		},
		{
			name:      "ConflictNestedValue",
			base:      "---\nmeta:\n  a: 1\n  b: 2\n---\n",
			ours:      "---\nmeta:\n  a: 5\n  b: 2\n---\n",
			theirs:    "---\nmeta:\n  a: 1\n  b: 3\n---\n",
			conflicts: []cairn.Conflict{field("meta", "a: 1\nb: 2", "a: 5\nb: 2", "a: 1\nb: 3")},
		},
		{
			name:   "FrontmatterAndBody",
			base:   "---\ntitle: A\n---\n# A\n\n## Links\n- [[x]]\n",
			ours:   "---\ntitle: A\nupdated: 2026-11-29\n---\n# A\n\n## Links\n- [[x]]\n- [[y]]\n",
			theirs: "---\ntitle: A\nsources: [s1]\n---\n# A\n\n## Links\n- [[x]]\n- [[z]]\n",
			want:   "---\ntitle: A\nsources: [s1]\nupdated: 2026-11-29\n---\n# A\n\n## Links\n- [[x]]\n- [[y]]\n- [[z]]\n",
		},
		{
			name:   "FrontmatterCRLF",
			base:   "---\r\ntitle: A\r\ntags: [a]\r\n---\r\nbody\r\n",
			ours:   "---\r\ntitle: B\r\ntags: [a, b]\r\n---\r\nbody\r\n",
			theirs: "---\r\ntitle: A\r\ntags: [a, c]\r\n---\r\nbody\r\n",
			want:   "---\r\ntitle: B\r\ntags: [a, b, c]\r\n---\r\nbody\r\n",
		},
		{
			name:   "FrontmatterBOM",
			base:   "\ufeff---\ntitle: A\n---\nbody\n",
			ours:   "\ufeff---\ntitle: B\n---\nbody\n",
			theirs: "\ufeff---\ntitle: A\nx: 1\n---\nbody\n",
			want:   "\ufeff---\ntitle: B\nx: 1\n---\nbody\n",
		},
		{
			name:   "FrontmatterAdded",
			base:   "body\n\nmore\n",
			ours:   "---\ntitle: A\n---\nbody\n\nmore\n",
			theirs: "body\n\nmore 2\n",
			want:   "---\ntitle: A\n---\nbody\n\nmore 2\n",
		},
		{
			name: "FrontmatterAddAdd", nilBase: true,
			ours:   "---\ntitle: A\n---\n# A\n",
			theirs: "---\ntags: [x]\n---\n# A\n",
			want:   "---\ntags: [x]\ntitle: A\n---\n# A\n",
		},
		{
			name:   "FrontmatterRemovedWhileChanged",
			base:   "---\ntitle: A\n---\nbody\n",
			ours:   "body\n",
			theirs: "---\ntitle: A\nx: 1\n---\nbody\n",
			conflicts: []cairn.Conflict{
				content("---\ntitle: A\n---\n", "", "---\ntitle: A\nx: 1\n---\n", 1, 3, 1, 0, 1, 4),
			},
		},
		{
			name:   "MalformedFallsBackToLines",
			base:   "---\ntitle: [A\n---\n- a\n",
			ours:   "---\ntitle: [A\n---\n- a\n- b\n",
			theirs: "---\ntitle: [B\n---\n- a\n- c\n",
			want:   "---\ntitle: [B\n---\n- a\n- b\n- c\n",
		},
		{
			name:   "AnchorsFallBackToLines",
			base:   "---\na: &x 1\nb: *x\n---\n",
			ours:   "---\na: &x 2\nb: *x\n---\n",
			theirs: "---\na: &x 1\nb: *x\nc: 3\n---\n",
			want:   "---\na: &x 2\nb: *x\nc: 3\n---\n",
		},
		{
			name:   "DuplicateKeysFallBackToLines",
			base:   "---\na: 1\na: 1\nb: 1\nc: 1\n---\n",
			ours:   "---\na: 2\na: 1\nb: 1\nc: 1\n---\n",
			theirs: "---\na: 1\na: 1\nb: 1\nc: 2\n---\n",
			want:   "---\na: 2\na: 1\nb: 1\nc: 2\n---\n",
		},
		{
			name:   "FlowMappingFallsBackToLines",
			base:   "---\n{a: 1, b: 2}\n---\nbody\n",
			ours:   "---\n{a: 3, b: 2}\n---\nbody\n",
			theirs: "---\n{a: 1, b: 2}\n---\nbody 2\n",
			want:   "---\n{a: 3, b: 2}\n---\nbody 2\n",
		},
		{
			name:      "ConflictPreamble",
			base:      "---\n# c\n\ntitle: A\n---\n",
			ours:      "---\n# c1\n\ntitle: A\n---\n",
			theirs:    "---\n# c2\n\ntitle: B\n---\n",
			conflicts: []cairn.Conflict{content("# c\n", "# c1\n", "# c2\n", 2, 1, 2, 1, 2, 1)},
		},
		{
			name:      "ConflictFieldAndBody",
			base:      "---\ntitle: A\n---\none\n",
			ours:      "---\ntitle: B\n---\ntwo\n",
			theirs:    "---\ntitle: C\n---\nthree\n",
			conflicts: []cairn.Conflict{field("title", "A", "B", "C"), content("one\n", "two\n", "three\n", 4, 1, 4, 1, 4, 1)},
		},
	})
}

func TestMarkdown_Markers(t *testing.T) {
	base := "---\ntitle: A\ntype: note\n---\none\n"
	ours := "---\ntitle: B\ntype: note\n---\ntwo\n"
	theirs := "---\ntitle: C\ntype: note\n---\nthree\n"
	got := merge.Markdown([]byte(base), []byte(ours), []byte(theirs), &merge.Options{Markers: true})
	want := "---\n" +
		"<<<<<<< ours\ntitle: B\n||||||| base\ntitle: A\n=======\ntitle: C\n>>>>>>> theirs\n" +
		"type: note\n---\n" +
		"<<<<<<< ours\ntwo\n||||||| base\none\n=======\nthree\n>>>>>>> theirs\n"
	if string(got.Data) != want {
		t.Errorf("Markdown(..., Markers) = %q, want %q", got.Data, want)
	}
	wantConflicts := []cairn.Conflict{field("title", "A", "B", "C"), content("one\n", "two\n", "three\n", 5, 1, 5, 1, 5, 1)}
	if diff := cmp.Diff(wantConflicts, got.Conflicts); diff != "" {
		t.Errorf("Markdown(..., Markers) conflicts mismatch (-want +got):\n%s", diff)
	}
}

func TestMarkdown_LargeFrontmatter(t *testing.T) {
	// Past MaxFrontmatter the page is merged by lines: still correct.
	filler := "filler: \"" + strings.Repeat("x", merge.MaxFrontmatter) + "\"\n"
	base := "---\ntitle: A\n" + filler + "z: 1\n---\nbody\n"
	ours := "---\ntitle: B\n" + filler + "z: 1\n---\nbody\n"
	theirs := "---\ntitle: A\n" + filler + "z: 2\n---\nbody\n"
	want := "---\ntitle: B\n" + filler + "z: 2\n---\nbody\n"
	got := merge.Markdown([]byte(base), []byte(ours), []byte(theirs), nil)
	if len(got.Conflicts) > 0 || string(got.Data) != want {
		t.Errorf("Markdown(large frontmatter) = %d bytes, %+v; want %d bytes, clean", len(got.Data), got.Conflicts, len(want))
	}
}

func TestMarkdown_AliasBomb(t *testing.T) {
	// A billion-laughs frontmatter must not blow up; it is merged as lines.
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	for i, c := range "bcdefghi" {
		prev := string(rune('a' + i))
		bomb += string(c) + ": &" + string(c) + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
	}
	base := "---\n" + bomb + "---\nbody\n"
	ours := "---\n" + bomb + "---\nbody 2\n"
	theirs := "---\n" + bomb + "z: 1\n---\nbody\n"
	want := "---\n" + bomb + "z: 1\n---\nbody 2\n"
	got := merge.Markdown([]byte(base), []byte(ours), []byte(theirs), nil)
	if len(got.Conflicts) > 0 || string(got.Data) != want {
		t.Errorf("Markdown(alias bomb) = %q, %+v; want %q", got.Data, got.Conflicts, want)
	}
}
