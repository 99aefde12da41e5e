package merge_test

import (
	"fmt"

	"cairn/merge"
)

// Two ingests each added a link under the same heading of index.md.
func ExampleFile() {
	base := "# Index\n\n## Entities\n- [[alice]]\n"
	ours := base + "- [[bob]]\n"
	theirs := base + "- [[carol]]\n"

	r := merge.File("index.md", []byte(base), []byte(ours), []byte(theirs), nil)
	fmt.Printf("%d conflicts\n%s", len(r.Conflicts), r.Data)
	// Output:
	// 0 conflicts
	// # Index
	//
	// ## Entities
	// - [[alice]]
	// - [[bob]]
	// - [[carol]]
}

// One side changed the title, the other added tags.
func ExampleMarkdown() {
	base := "---\ntitle: Alice\n---\nAlice is a person.\n"
	ours := "---\ntitle: Alice Liddell\n---\nAlice is a person.\n"
	theirs := "---\ntitle: Alice\ntags: [person]\n---\nAlice is a person.\n"

	r := merge.Markdown([]byte(base), []byte(ours), []byte(theirs), nil)
	fmt.Printf("%d conflicts\n%s", len(r.Conflicts), r.Data)
	// Output:
	// 0 conflicts
	// ---
	// title: Alice Liddell
	// tags: [person]
	// ---
	// Alice is a person.
}

// Both sides changed the same line; with Markers the result holds the
// conflict between git-style markers.
func ExampleText_markers() {
	base := "red\ngreen\nblue\n"
	ours := "red\nlime\nblue\n"
	theirs := "red\nolive\nblue\n"

	r := merge.Text([]byte(base), []byte(ours), []byte(theirs), &merge.Options{Markers: true, TheirsLabel: "job-42"})
	c := r.Conflicts[0]
	fmt.Printf("conflict at line %d: %q vs %q\n%s", c.Lines.Base.Start, c.Ours, c.Theirs, r.Data)
	// Output:
	// conflict at line 2: "lime\n" vs "olive\n"
	// red
	// <<<<<<< ours
	// lime
	// ||||||| base
	// green
	// =======
	// olive
	// >>>>>>> job-42
	// blue
}

// Two sides each appended an entry to Eva's log.md.
func ExampleLog() {
	base := "# Log\n\n## [2026-11-28] ingest | alice.pdf\n"
	ours := base + "\n## [2026-11-30] ingest | bob.pdf\n"
	theirs := base + "\n## [2026-11-29] lint | weekly\n"

	r := merge.Log([]byte(base), []byte(ours), []byte(theirs), nil)
	fmt.Printf("%d conflicts\n%s", len(r.Conflicts), r.Data)
	// Output:
	// 0 conflicts
	// # Log
	//
	// ## [2026-11-28] ingest | alice.pdf
	//
	// ## [2026-11-29] lint | weekly
	//
	// ## [2026-11-30] ingest | bob.pdf
}
