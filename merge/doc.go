// Package merge three-way merges the contents of one file: the version both
// sides started from (base) and the two versions they made of it (ours and
// theirs). The versioned store calls it when both sides of a merge changed
// the same path; the store decides everything about trees, renames and
// deletions, this package only about bytes.
//
// [File] picks a strategy by path:
//
//   - "log.md" at the vault root is Eva's append-only log, merged by [Log]:
//     when both sides only added entries, the entries of both are kept, in
//     date order.
//   - "*.md" and "*.markdown" pages are merged by [Markdown]: the YAML
//     frontmatter field by field, the body line by line, where two sides
//     adding list items at the same place keep the items of both. This is
//     what lets two ingests that each add a link to index.md under one
//     heading merge cleanly.
//   - Any other UTF-8 text is merged by [Text], a classic line-based diff3.
//   - Anything else is binary: unless two of the three versions are equal it
//     is one [cairn.ConflictBinary] conflict.
//
// All strategies start from the trivial cases, byte for byte: when ours and
// theirs are equal, or one of them equals base, the other wins unchanged.
//
// The merge is symmetric: swapping ours and theirs gives the same merged
// bytes when the merge is clean, and the same conflicts with their sides
// swapped otherwise. Wherever both sides insert at one place and both
// insertions are kept, they are ordered canonically (the bytewise smaller
// first), never "ours first". Nothing is decided silently: a place where the
// sides disagree and no rule above settles it is a conflict, and a line
// changed on only one side is never lost.
//
// The functions never fail and never panic: what they cannot merge they
// report as conflicts in [Result]. Work is bounded: the line diff gives up on
// a region after a fixed amount of work and treats the region as one change
// (which conflicts only if both sides changed it), and frontmatter over
// 256 KiB, or using YAML anchors and aliases, is merged as plain lines.
package merge
