package markdown

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Bounds on a frontmatter's shape, checked before it is decoded: the number
// of values it holds once YAML aliases are expanded, and how deeply they
// nest. Past either it is malformed. yaml.v3's own alias guard allows far
// larger expansions than any page needs, and yaml.v3 spends some hundreds
// of bytes per value, so these bounds also bound its memory.
const (
	maxYAMLNodes = 10_000
	maxYAMLDepth = 64
)

// frontmatter is what a frontmatter block yields.
type frontmatter struct {
	values map[string]any
	// plain holds the top-level keys whose value is an unquoted string,
	// the form in which aliases and sources are comma-separated lists.
	plain map[string]bool
	links []Link
	// err describes why the block is malformed ("" when it is not), at
	// errLine (1-based in the page; the opening "---" when unknown).
	err     string
	errLine int
}

// fmSource locates a frontmatter block in its page.
type fmSource struct {
	yaml   []byte
	line   int // the page line of the first YAML line
	offset int // the page offset of the first YAML byte
	path   string
}

// parseFrontmatter reads the YAML of a frontmatter block: the common
// subset by hand (fast), anything else with yaml.v3.
func parseFrontmatter(src fmSource) frontmatter {
	if fm, ok := fastFrontmatter(src); ok {
		return fm // flat and within the bounds
	}
	if msg := precheck(src.yaml); msg != "" {
		return frontmatter{err: msg, errLine: src.line - 1}
	}
	return slowFrontmatter(src)
}

// precheck rejects YAML that cannot be within the bounds, before yaml.v3
// spends memory on it: flow brackets nested too deep, or several times more
// structure characters than values allowed. Neither happens in frontmatter
// people write.
func precheck(y []byte) string {
	depth, deepest, marks := 0, 0, 0
	for _, c := range y {
		switch c {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
			marks++
		case ']', '}':
			depth = max(depth-1, 0)
		case ',', ':', '-', '\n', '&', '*':
			marks++
		}
	}
	switch {
	case deepest > maxYAMLDepth:
		return fmt.Sprintf("frontmatter nests more than %d levels deep", maxYAMLDepth)
	case marks > 4*maxYAMLNodes:
		return fmt.Sprintf("frontmatter holds more than %d values", maxYAMLNodes)
	}
	return ""
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// slowFrontmatter reads any YAML with yaml.v3.
func slowFrontmatter(src fmSource) (fm frontmatter) {
	// fail reports a problem at YAML line line, or at the opening "---"
	// when there is none.
	fail := func(msg string, line int) frontmatter {
		return frontmatter{err: msg, errLine: src.line + max(line, 0) - 1}
	}
	failErr := func(err error) frontmatter {
		// yaml.v3 counts lines from the first YAML line; say page lines.
		first := 0
		msg := yamlLine.ReplaceAllStringFunc(strings.TrimPrefix(err.Error(), "yaml: "), func(m string) string {
			n, _ := strconv.Atoi(m[len("line "):])
			if first == 0 {
				first = n
			}
			return "line " + strconv.Itoa(src.line+n-1)
		})
		return fail("frontmatter is not valid YAML: "+strings.Join(strings.Fields(msg), " "), first)
	}
	var doc yaml.Node
	if err := guard(func() error { return yaml.Unmarshal(src.yaml, &doc) }); err != nil {
		return failErr(err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return fm
	}
	root := doc.Content[0]
	switch {
	case root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null":
		return fm
	case root.Kind != yaml.MappingNode:
		return fail(fmt.Sprintf("frontmatter is a %s, not a mapping of properties", kindName(root)), root.Line)
	}
	m := measurer{memo: make(map[*yaml.Node]shape)}
	if sh := m.measure(root, 1); sh.nodes > maxYAMLNodes {
		return fail(fmt.Sprintf("frontmatter holds more than %d values once its aliases are expanded", maxYAMLNodes), 0)
	} else if sh.depth > maxYAMLDepth {
		return fail(fmt.Sprintf("frontmatter nests more than %d levels deep", maxYAMLDepth), 0)
	}
	var values map[string]any
	if err := guard(func() error { return root.Decode(&values) }); err != nil {
		return failErr(err)
	}
	for k, v := range values {
		values[k] = jsonSafe(v)
	}
	fm.values = values

	var lines []int // YAML line starts, computed when a link needs one
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		if val.Kind == yaml.ScalarNode && val.Style == 0 && val.ShortTag() == "!!str" {
			fm.setPlain(key)
		}
		walkStrings(val, 1, func(n *yaml.Node) {
			for _, l := range wikilinksIn(n.Value, src.path) {
				if lines == nil {
					lines = lineStarts(src.yaml)
				}
				at := 0
				if n.Line-1 < len(lines) {
					at = lines[n.Line-1]
				}
				fm.links = append(fm.links, src.link(l, key, n.Line-1, at))
			}
		})
	}
	return fm
}

// link places a frontmatter link found under key on YAML line index
// line (0-based) starting at YAML offset at.
func (src fmSource) link(l Link, key string, line, at int) Link {
	l.Property = key
	l.Line, l.Col, l.Offset = src.line+line, 1, src.offset+at
	return l
}

func (fm *frontmatter) setPlain(key string) {
	switch key {
	case "aliases", "alias", "sources":
		if fm.plain == nil {
			fm.plain = make(map[string]bool, 1)
		}
		fm.plain[key] = true
	}
}

// guard runs f, turning a panic into an error: yaml.v3 has panicked on
// hostile input before, and Parse must not.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return f()
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// shape is the size of a YAML value once aliases are expanded.
type shape struct{ nodes, depth int }

// measurer computes shapes, once per anchored node.
type measurer struct {
	memo map[*yaml.Node]shape
}

// inProgress marks an anchored node being measured: an alias reaching it
// is a cycle, as big as can be.
var inProgress = shape{nodes: -1}

func (m *measurer) measure(n *yaml.Node, depth int) shape {
	if depth > maxYAMLDepth {
		return shape{nodes: 1, depth: depth}
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return shape{nodes: 1, depth: depth}
		}
		n = n.Alias
		if sh, ok := m.memo[n]; ok {
			if sh == inProgress {
				return shape{nodes: maxYAMLNodes + 1, depth: depth}
			}
			return shape{nodes: sh.nodes, depth: depth - 1 + sh.depth}
		}
		m.memo[n] = inProgress
		sh := m.measure(n, 1)
		m.memo[n] = sh
		return shape{nodes: sh.nodes, depth: depth - 1 + sh.depth}
	}
	sh := shape{nodes: 1, depth: depth}
	for _, c := range n.Content {
		cs := m.measure(c, depth+1)
		sh.nodes = min(sh.nodes+cs.nodes, maxYAMLNodes+1)
		sh.depth = max(sh.depth, cs.depth)
		if sh.nodes > maxYAMLNodes || sh.depth > maxYAMLDepth {
			break
		}
	}
	return sh
}

// walkStrings calls f for every string scalar under n, in source order,
// without following aliases. measure has bounded the depth.
func walkStrings(n *yaml.Node, depth int, f func(*yaml.Node)) {
	switch {
	case depth > maxYAMLDepth:
	case n.Kind == yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			f(n)
		}
	case n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			walkStrings(n.Content[i], depth+1, f)
		}
	case n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			walkStrings(c, depth+1, f)
		}
	}
}

func lineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// jsonSafe converts a decoded YAML value to one encoding/json accepts and
// round-trips: maps get string keys, times become RFC 3339 text (a bare
// date "2006-01-02"), NaN and infinities become YAML's spellings, strings
// become valid UTF-8.
func jsonSafe(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonSafe(x)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		won := make(map[string]any, len(v)) // the original key each text came from
		for k, x := range v {
			text := keyText(k)
			if prev, ok := won[text]; ok && !keyBeats(k, prev) {
				continue
			}
			won[text] = k
			m[text] = jsonSafe(x)
		}
		return m
	case []any:
		for i, x := range v {
			v[i] = jsonSafe(x)
		}
		return v
	case time.Time:
		return timeText(v)
	case float64:
		switch {
		case math.IsNaN(v):
			return ".nan"
		case math.IsInf(v, 1):
			return ".inf"
		case math.IsInf(v, -1):
			return "-.inf"
		}
		return v
	case string:
		if !utf8.ValidString(v) {
			return strings.ToValidUTF8(v, "\uFFFD")
		}
		return v
	}
	return v
}

// keyText is the JSON key for a YAML map key that is not a string.
func keyText(k any) string {
	switch k := k.(type) {
	case nil:
		return ""
	case string:
		return strings.ToValidUTF8(k, "\uFFFD")
	case time.Time:
		return timeText(k)
	}
	if s := scalarText(k); s != "" {
		return s
	}
	return fmt.Sprint(k)
}

// keyBeats decides which of two keys with the same text keeps its value,
// whatever the map's iteration order: a string key, else the smaller
// Go-syntax spelling.
func keyBeats(k, prev any) bool {
	_, ks := k.(string)
	_, ps := prev.(string)
	if ks != ps {
		return ks
	}
	return fmt.Sprintf("%#v", k) < fmt.Sprintf("%#v", prev)
}

func timeText(t time.Time) string {
	if t.Location() == time.UTC && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339Nano)
}
