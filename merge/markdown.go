package merge

import (
	"cairn/markdown"
)

// Markdown merges three versions of a Markdown page by its structure, as cut
// by [markdown.Split]:
//
//   - The frontmatter is merged field by field (top-level keys of the YAML
//     mapping). A field changed on one side takes that side's text verbatim;
//     a change that keeps the decoded value (requoting, a comment) yields to
//     one that changes it; a field deleted on one side and unchanged on the
//     other is deleted. When both sides changed a field's value differently
//     the result is a [cairn.ConflictField] conflict naming the key, with the
//     three values as YAML (empty for an absent field) — unless all three
//     are lists of scalars (an absent base counting as empty) and both sides
//     only added items: then base's items are kept in order, followed by the
//     items both added. Fields keep base order; a field a side added goes
//     after the field before it on that side.
//   - The opening and closing delimiter lines (with any byte order mark)
//     take the side that changed them.
//   - The body is merged like [Text], except that where both sides inserted
//     only list items ("- ", "* ", "+ ", "1. ", with the lines indented
//     under them) at the same place, around base lines both kept, the items
//     of both are kept, and an item both inserted appears once.
//
// Conflict line numbers count from the top of the file. A page whose
// frontmatter cannot be merged field by field (malformed YAML, not a
// mapping, over [MaxFrontmatter], anchors or aliases, or text outside the
// fields changed on both sides) is merged line by line as a whole, still
// with list union.
func Markdown(base, ours, theirs []byte, opts *Options) Result {
	if r, ok := trivial(base, ours, theirs); ok {
		return r
	}
	s := resolve(opts)
	if r, ok := s.markdown(base, ours, theirs); ok {
		return r
	}
	m := newMerger(s, splitLines(base), splitLines(ours), splitLines(theirs))
	m.lists = true
	m.merge()
	return m.result()
}

// markdown merges the frontmatter by fields and the body by lines. It
// reports false when the frontmatter cannot be merged that way.
func (s settings) markdown(base, ours, theirs []byte) (Result, bool) {
	pb, po, pt := markdown.Split(base), markdown.Split(ours), markdown.Split(theirs)
	head, ok1 := threeWay(pb.Head, po.Head, pt.Head)
	tail, ok2 := threeWay(pb.Tail, po.Tail, pt.Tail)
	if !ok1 || !ok2 {
		return Result{}, false
	}
	fb, ok1 := parseFrontmatter(pb.YAML)
	fo, ok2 := parseFrontmatter(po.YAML)
	ft, ok3 := parseFrontmatter(pt.YAML)
	if !ok1 || !ok2 || !ok3 {
		return Result{}, false
	}
	eol := detectEOL(base, ours, theirs)
	front, conflicts, ok := s.mergeFrontmatter(fb, fo, ft, eol)
	// One side removed the frontmatter block while the other changed it.
	if !ok || (len(head) == 0) != (len(tail) == 0) || len(head) == 0 && len(front) > 0 {
		return Result{}, false
	}

	m := newMerger(s, splitLines(pb.Body), splitLines(po.Body), splitLines(pt.Body))
	m.lists = true
	m.eol = eol
	m.lineOffset = [3]int{frontLines(pb), frontLines(po), frontLines(pt)}
	m.out = make([]byte, 0, len(head)+len(front)+len(tail)+max(len(po.Body), len(pt.Body)))
	m.out = append(append(append(m.out, head...), front...), tail...)
	m.conflicts = conflicts
	m.merge()
	return m.result(), true
}

// frontLines counts the lines before the body.
func frontLines(p markdown.Parts) int {
	return len(splitLines(p.Head)) + len(splitLines(p.YAML)) + len(splitLines(p.Tail))
}
