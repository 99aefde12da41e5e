package merge

import (
	"bytes"
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cairn"
)

// frontmatter is one version's YAML frontmatter cut into its top-level
// fields. Concatenating the preamble and the fields' texts in order gives
// back the source.
type frontmatter struct {
	preamble []byte   // lines before the first field: comments, blank lines
	fields   []*field // in source order
	byKey    map[string]*field
}

// field is one top-level key and its value.
type field struct {
	key string
	// text holds the field's lines verbatim: the comment lines directly
	// above the key, the key and its value, and whatever follows up to the
	// next field (blank lines, comments).
	text  []byte
	lead  []byte     // the comment lines above the key, a prefix of text
	node  *yaml.Node // the value
	value any        // the value decoded
}

// parseFrontmatter parses src, which must be empty or a block mapping with
// plain scalar keys at the start of their lines, no duplicate keys, and no
// anchors, aliases or merge keys: fields that refer to each other cannot be
// merged one by one. It reports false for anything else, and for src larger
// than [MaxFrontmatter].
func parseFrontmatter(src []byte) (fm *frontmatter, ok bool) {
	if len(src) > MaxFrontmatter {
		return nil, false
	}
	defer func() {
		// The YAML parser has panicked on malformed input before
		// (CVE-2022-28948); whatever makes it panic is malformed, not fatal.
		if recover() != nil {
			fm, ok = nil, false
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, false
	}
	fm = &frontmatter{byKey: make(map[string]*field)}
	if doc.Kind == 0 { // empty, or only comments
		fm.preamble = src
		return fm, true
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 || !selfContained(root) {
		return nil, false
	}

	lines := splitLines(src)
	starts := make([]int, 0, len(root.Content)/2) // first line of each field
	prevKey := -1
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line - 1
		if k.Kind != yaml.ScalarNode || k.Column != 1 || line <= prevKey || line >= len(lines) || fm.byKey[k.Value] != nil {
			return nil, false
		}
		f := &field{key: k.Value, node: v}
		if err := v.Decode(&f.value); err != nil {
			return nil, false
		}
		start := line
		for start-1 > prevKey && bytes.HasPrefix(lines[start-1], []byte("#")) {
			start--
		}
		f.lead = joinBytes(lines[start:line])
		fm.byKey[f.key] = f
		fm.fields = append(fm.fields, f)
		starts = append(starts, start)
		prevKey = line
	}
	if len(fm.fields) == 0 {
		fm.preamble = src
		return fm, true
	}
	fm.preamble = joinBytes(lines[:starts[0]])
	for i, f := range fm.fields {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		f.text = joinBytes(lines[starts[i]:end])
	}
	return fm, true
}

// selfContained reports whether n and its descendants use no anchors,
// aliases or merge keys.
func selfContained(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode || n.Tag == "!!merge" {
		return false
	}
	for _, c := range n.Content {
		if !selfContained(c) {
			return false
		}
	}
	return true
}

func joinBytes(lines [][]byte) []byte { return bytes.Join(lines, nil) }

// mergeFrontmatter merges three versions of a frontmatter field by field and
// returns the merged YAML text and the fields that conflict. It reports
// false when the frontmatter cannot be merged field by field: the text
// before the first field changed on both sides, or the merged text does not
// parse back to the merged fields.
func (s settings) mergeFrontmatter(b, o, t *frontmatter, eol []byte) ([]byte, []cairn.Conflict, bool) {
	out, ok := threeWay(b.preamble, o.preamble, t.preamble)
	if !ok {
		return nil, nil, false
	}
	out = slices.Clip(out)
	var (
		conflicts []cairn.Conflict
		merged    []*field
	)
	for _, key := range orderKeys(b, o, t) {
		fb, fo, ft := b.byKey[key], o.byKey[key], t.byKey[key]
		f, c := mergeField(key, fb, fo, ft, eol)
		switch {
		case c != nil:
			conflicts = append(conflicts, *c)
			if s.markers {
				out = s.appendMarkers(out, eol, string(textOf(fb)), string(textOf(fo)), string(textOf(ft)))
			}
		case f != nil:
			out = append(out, f.text...)
			merged = append(merged, f)
		}
	}
	if len(conflicts) == 0 && !parsesTo(out, merged) {
		return nil, nil, false
	}
	return out, conflicts, true
}

func textOf(f *field) []byte {
	if f == nil {
		return nil
	}
	return f.text
}

// mergeField merges one field, absent (nil) in some versions. It returns
// the merged field, nil for a deleted one, or a conflict.
//
// A side changed the field if its text differs from base; a change of the
// text that keeps the decoded value (quoting, a comment) yields to a change
// of the value. A field deleted on one side and unchanged on the other is
// deleted. When both sides changed the value differently, lists of scalars
// to which both only added items are united; anything else conflicts.
func mergeField(key string, b, o, t *field, eol []byte) (*field, *cairn.Conflict) {
	switch {
	case sameText(o, t), sameText(b, t):
		return o, nil
	case sameText(b, o):
		return t, nil
	}
	oChanged, tChanged := !sameValue(b, o), !sameValue(b, t)
	switch {
	case !oChanged && !tChanged, sameValue(o, t):
		// The same value written two ways: either will do, and the
		// smaller text keeps the merge symmetric.
		if bytes.Compare(t.text, o.text) < 0 {
			return t, nil
		}
		return o, nil
	case !oChanged:
		return t, nil
	case !tChanged:
		return o, nil
	}
	if u, ok := unionField(key, b, o, t, eol); ok {
		return u, nil
	}
	return nil, &cairn.Conflict{
		Kind:   cairn.ConflictField,
		Field:  key,
		Base:   valueText(b),
		Ours:   valueText(o),
		Theirs: valueText(t),
	}
}

func sameText(x, y *field) bool {
	if x == nil || y == nil {
		return x == y
	}
	return bytes.Equal(x.text, y.text)
}

func sameValue(x, y *field) bool {
	if x == nil || y == nil {
		return x == y
	}
	return equalValues(x.value, y.value)
}

// equalValues compares decoded YAML values. Unlike reflect.DeepEqual it
// holds times equal when they are the same instant and NaN equal to NaN.
func equalValues(a, b any) bool {
	switch a := a.(type) {
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equalValues)
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !equalValues(v, w) {
				return false
			}
		}
		return true
	case map[any]any:
		b, ok := b.(map[any]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !equalValues(v, w) {
				return false
			}
		}
		return true
	case time.Time:
		b, ok := b.(time.Time)
		return ok && a.Equal(b)
	case float64:
		b, ok := b.(float64)
		return ok && (a == b || a != a && b != b)
	}
	return reflect.DeepEqual(a, b)
}

// valueText is a field's value as YAML, for a conflict: "" for an absent
// field.
func valueText(f *field) string {
	if f == nil {
		return ""
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if enc.Encode(withoutComments(f.node)) != nil || enc.Close() != nil {
		return string(f.text)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// withoutComments returns a copy of n and its descendants with the comments
// removed.
func withoutComments(n *yaml.Node) *yaml.Node {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = withoutComments(x)
	}
	return &c
}

// parsesTo reports whether src parses to exactly the given fields, in order
// and with their values: the check that gluing fields from different
// versions produced what was meant.
func parsesTo(src []byte, want []*field) bool {
	fm, ok := parseFrontmatter(src)
	if !ok || len(fm.fields) != len(want) {
		return false
	}
	for i, f := range fm.fields {
		if f.key != want[i].key || !equalValues(f.value, want[i].value) {
			return false
		}
	}
	return true
}

// orderKeys returns every key of the three versions in merged order: base
// order, with each key a side added placed after the key before it on that
// side. Where both sides added keys after the same base key, the side whose
// added fields' text is bytewise smaller goes first.
func orderKeys(b, o, t *frontmatter) []string {
	baseIndex := make(map[string]int, len(b.fields))
	for i, f := range b.fields {
		baseIndex[f.key] = i
	}
	// added[side][a] lists the keys a side added after base key a, in
	// side order; a = 0 is the start, a = i+1 is after base field i.
	added := func(fm *frontmatter) [][]*field {
		groups := make([][]*field, len(b.fields)+1)
		anchor := 0
		for _, f := range fm.fields {
			if i, ok := baseIndex[f.key]; ok {
				anchor = i + 1
				continue
			}
			groups[anchor] = append(groups[anchor], f)
		}
		return groups
	}
	og, tg := added(o), added(t)
	keys := make([]string, 0, len(b.fields)+len(o.fields)+len(t.fields))
	seen := make(map[string]bool)
	emit := func(fields []*field) {
		for _, f := range fields {
			if !seen[f.key] {
				seen[f.key] = true
				keys = append(keys, f.key)
			}
		}
	}
	for a := range og {
		if a > 0 {
			emit(b.fields[a-1 : a])
		}
		first, second := og[a], tg[a]
		if bytes.Compare(fieldsText(second), fieldsText(first)) < 0 {
			first, second = second, first
		}
		emit(first)
		emit(second)
	}
	return keys
}

func fieldsText(fields []*field) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f.text...)
	}
	return b
}

// unionField unites a list field both sides changed, when base, ours and
// theirs are all lists of scalars (base may be absent, as an empty list) and
// each side only added items: the result holds base's items in base order,
// then the added items, the side whose additions sort first leading, and an
// item both added appearing once. The list is written flow or block style,
// with the indentation, and the comment and blank lines around it, merged
// three-way from the versions; it reports false when the lines around it
// cannot be merged.
func unionField(key string, b, o, t *field, eol []byte) (*field, bool) {
	if o == nil || t == nil {
		return nil, false
	}
	bi, ok1 := scalarItems(b)
	oi, ok2 := scalarItems(o)
	ti, ok3 := scalarItems(t)
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	oAdd, ok1 := addedItems(bi, oi)
	tAdd, ok2 := addedItems(bi, ti)
	if !ok1 || !ok2 {
		return nil, false
	}
	if slices.CompareFunc(tAdd, oAdd, compareScalars) < 0 {
		oAdd, tAdd = tAdd, oAdd
	}
	items := slices.Concat(bi, oAdd, subtractItems(tAdd, oAdd))

	lead, ok1 := threeWay(leadOf(b), o.lead, t.lead)
	trail, ok2 := threeWay(trailOf(b), trailOf(o), trailOf(t))
	if !ok1 || !ok2 {
		return nil, false
	}
	lb, lo, lt := layoutOf(b), layoutOf(o), layoutOf(t)
	lay, ok := lo, lo == lt || lb == lt
	if !ok && lb == lo {
		lay, ok = lt, true
	}
	if !ok { // both changed the layout differently: pick one canonically
		lay = minLayout(lo, lt)
	}

	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if lay.flow {
		seq.Style = yaml.FlowStyle
	}
	value := make([]any, len(items))
	for i, it := range items {
		seq.Content = append(seq.Content, withoutComments(it.node))
		value[i] = it.value
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(max(lay.indent, 2))
	if lay.indent == 0 {
		enc.CompactSeqIndent()
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, seq}}
	if enc.Encode(doc) != nil || enc.Close() != nil {
		return nil, false
	}
	text := buf.Bytes()
	if string(eol) != "\n" {
		text = bytes.ReplaceAll(text, []byte("\n"), eol)
	}
	return &field{key: key, text: slices.Concat(lead, text, trail), lead: lead, node: seq, value: value}, true
}

// scalar is one item of a list field.
type scalar struct {
	node  *yaml.Node
	value any
	key   string // identifies the decoded value, for counting
}

// compareScalars orders items by value, then by how they are written, so
// that equal lists of additions are written the same whichever side is
// ours.
func compareScalars(x, y scalar) int {
	if c := strings.Compare(x.key, y.key); c != 0 {
		return c
	}
	return cmp.Or(
		cmp.Compare(x.node.Style, y.node.Style),
		strings.Compare(x.node.Tag, y.node.Tag),
		strings.Compare(x.node.Value, y.node.Value),
	)
}

// scalarItems returns the items of a list of scalars; an absent field is an
// empty list.
func scalarItems(f *field) ([]scalar, bool) {
	if f == nil {
		return nil, true
	}
	if f.node.Kind != yaml.SequenceNode {
		return nil, false
	}
	items := make([]scalar, len(f.node.Content))
	for i, n := range f.node.Content {
		if n.Kind != yaml.ScalarNode || n.Decode(&items[i].value) != nil {
			return nil, false
		}
		items[i].node = n
		items[i].key = fmt.Sprintf("%T:%v", items[i].value, items[i].value)
	}
	return items, true
}

// addedItems returns the items of side beyond those of base, counted as
// multisets, in side order. It reports false when side lacks some base
// item.
func addedItems(base, side []scalar) ([]scalar, bool) {
	need := make(map[string]int, len(base))
	for _, it := range base {
		need[it.key]++
	}
	var added []scalar
	for _, it := range side {
		if need[it.key] > 0 {
			need[it.key]--
			continue
		}
		added = append(added, it)
	}
	for _, n := range need {
		if n > 0 {
			return nil, false
		}
	}
	return added, true
}

// subtractItems returns the items of a not in b, counted as multisets.
func subtractItems(a, b []scalar) []scalar {
	have := make(map[string]int, len(b))
	for _, it := range b {
		have[it.key]++
	}
	var out []scalar
	for _, it := range a {
		if have[it.key] > 0 {
			have[it.key]--
			continue
		}
		out = append(out, it)
	}
	return out
}

func leadOf(f *field) []byte {
	if f == nil {
		return nil
	}
	return f.lead
}

// trailOf returns the blank and comment lines that end a field's text,
// after its value.
func trailOf(f *field) []byte {
	if f == nil {
		return nil
	}
	lines := splitLines(f.text[len(f.lead):])
	n := len(lines)
	for n > 1 && (isBlank(lines[n-1]) || lines[n-1][0] == '#') {
		n--
	}
	return joinBytes(lines[n:])
}

// layout is how a list field is written.
type layout struct {
	flow   bool // [a, b] rather than one "- a" line per item
	indent int  // spaces before "- " in block style
}

func layoutOf(f *field) layout {
	if f == nil {
		return layout{indent: 2}
	}
	if f.node.Style&yaml.FlowStyle != 0 {
		return layout{flow: true}
	}
	lines := splitLines(f.text[len(f.lead):])
	for _, l := range lines[min(1, len(lines)):] {
		if n := indentOf(l); bytes.HasPrefix(l[n:], []byte("-")) {
			return layout{indent: n}
		}
	}
	return layout{indent: 2}
}

// minLayout orders layouts canonically: block before flow, then by
// indentation.
func minLayout(a, b layout) layout {
	if a.flow {
		a, b = b, a
	}
	if a.flow != b.flow {
		return a
	}
	if b.indent < a.indent {
		return b
	}
	return a
}
