package merge_test

import (
	"testing"

	"cairn"
	"cairn/merge"
)

func TestLog(t *testing.T) {
	const (
		header = "# Log\n\nWhat happened to this brain.\n\n"
		e28    = "## [2026-11-28] ingest | a\n- pages: [[a]]\n"
		e29x   = "## [2026-11-29] ingest | x\n- pages: [[x]]\n"
		e29y   = "## [2026-11-29] ingest | y\n"
		e30    = "## [2026-11-30] lint | z\n"
		e01    = "## [2026-11-01] ingest | old\n"
		und    = "## [undated] note | n\n"
		base   = header + e28
	)
	run(t, "Log", merge.Log, []test{
		{
			name: "BothAppend",
			base: base, ours: base + "\n" + e29x, theirs: base + "\n" + e29y,
			want: base + "\n" + e29x + "\n" + e29y,
		},
		{
			name: "DateOrder",
			base: base, ours: base + "\n" + e30, theirs: base + "\n" + e29y,
			want: base + "\n" + e29y + "\n" + e30,
		},
		{
			name: "SameEntryOnce",
			base: base, ours: base + "\n" + e29x + "\n" + e30, theirs: base + "\n" + e29x + "\n" + e29y,
			want: base + "\n" + e29x + "\n" + e29y + "\n" + e30,
		},
		{
			name: "BackdatedEntry",
			base: base, ours: header + e01 + "\n" + e28, theirs: base + "\n" + e30,
			want: header + e01 + "\n" + e28 + "\n" + e30,
		},
		{
			name: "UndatedLast",
			base: base, ours: base + "\n" + und, theirs: base + "\n" + e30,
			want: base + "\n" + e30 + "\n" + und,
		},
		{
			name: "BetweenBaseEntries",
			base: header + e28 + "\n" + e30, ours: header + e28 + "\n" + e30 + "\n" + e29x, theirs: header + e28 + "\n" + e29y + "\n" + e30,
			want: header + e28 + "\n" + e29x + "\n" + e29y + "\n" + e30,
		},
		{
			name: "HeaderChanged",
			base: base, ours: "# Activity log\n\nWhat happened to this brain.\n\n" + e28 + "\n" + e29x, theirs: base + "\n" + e29y,
			want: "# Activity log\n\nWhat happened to this brain.\n\n" + e28 + "\n" + e29x + "\n" + e29y,
		},
		{
			name: "NoFinalNewline",
			base: header + "## [2026-11-28] ingest | a",
			ours: header + "## [2026-11-28] ingest | a\n\n" + e29x, theirs: header + "## [2026-11-28] ingest | a\n\n" + e29y,
			want: header + "## [2026-11-28] ingest | a\n\n" + e29x + "\n" + e29y,
		},
		{
			name: "CRLF",
			base: "# Log\r\n\r\n## [2026-11-28] a\r\n", ours: "# Log\r\n\r\n## [2026-11-28] a\r\n\r\n## [2026-11-29] b\r\n",
			theirs: "# Log\r\n\r\n## [2026-11-28] a\r\n\r\n## [2026-11-29] c\r\n",
			want:   "# Log\r\n\r\n## [2026-11-28] a\r\n\r\n## [2026-11-29] b\r\n\r\n## [2026-11-29] c\r\n",
		},
		{
			name: "AddAdd", nilBase: true,
			ours: "# Log\n\n" + e29x, theirs: "# Log\n\n" + e29y,
			want: "# Log\n\n" + e29x + "\n" + e29y,
		},
		{
			name: "EditedEntryFallsBackToText",
			base: base, ours: header + "## [2026-11-28] ingest | A\n- pages: [[a]]\n", theirs: base + "\n" + e29y,
			want: header + "## [2026-11-28] ingest | A\n- pages: [[a]]\n\n" + e29y,
		},
		{
			name:   "ConflictEditedEntry",
			base:   base,
			ours:   header + "## [2026-11-28] ingest | a\n- pages: [[b]]\n",
			theirs: header + "## [2026-11-28] ingest | a\n- pages: [[c]]\n",
			conflicts: []cairn.Conflict{
				content("- pages: [[a]]\n", "- pages: [[b]]\n", "- pages: [[c]]\n", 6, 1, 6, 1, 6, 1),
			},
		},
	})
}
