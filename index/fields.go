package index

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"cairn"
	"cairn/markdown"
)

// Bounds of what a page's fields put in the index: what is longer, or
// beyond the count, is not queryable by field (the page keeps it).
const (
	maxFieldValue = 256 // bytes of one value
	maxFieldRows  = 256 // rows of one page
)

// fieldRows returns the rows of a page's frontmatter fields: one for each
// scalar value, one for each scalar item of a list; maps are left out.
func fieldRows(id int64, p *markdown.Page) []FieldRow {
	var out []FieldRow
	add := func(name string, v any) {
		if len(out) >= maxFieldRows {
			return
		}
		r := FieldRow{File: id, Name: name}
		switch v := v.(type) {
		case string:
			r.Value = v
			if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && isNumber(v) {
				r.Num = &n
			}
		case bool:
			r.Value = strconv.FormatBool(v)
		case int:
			n := float64(v)
			r.Value, r.Num = strconv.Itoa(v), &n
		case int64:
			n := float64(v)
			r.Value, r.Num = strconv.FormatInt(v, 10), &n
		case float64:
			r.Value, r.Num = strconv.FormatFloat(v, 'g', -1, 64), &v
		default:
			return
		}
		if r.Value == "" || len(r.Value) > maxFieldValue {
			return
		}
		out = append(out, r)
	}
	for name, v := range p.Frontmatter {
		if len(name) > maxFieldValue {
			continue
		}
		if list, ok := v.([]any); ok {
			for _, x := range list {
				add(name, x)
			}
			continue
		}
		add(name, v)
	}
	return out
}

// isNumber reports whether a string value is written as a number (not a
// date, a version or a code with leading zeros).
func isNumber(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || strings.Count(s, ".") > 1 || len(s) > 1 && s[0] == '0' && s[1] != '.' {
		return false
	}
	return strings.Trim(s, "+-0123456789.eE") == ""
}

func compareFields(a, b FieldRow) int {
	return cmp.Or(cmp.Compare(a.File, b.File), strings.Compare(a.Name, b.Name), strings.Compare(a.Value, b.Value))
}

// Field query operators.
const (
	OpExists   = ""   // the page has the field
	OpEq       = "="  // a value (an item of a list) is Value; numbers compare as numbers
	OpNe       = "!=" // the page has the field, and no value of it is Value
	OpLt       = "<"  // numbers compare as numbers, everything else as text (ISO dates in order)
	OpLe       = "<="
	OpGt       = ">"
	OpGe       = ">="
	OpContains = "~" // a value holds Value, ignoring case
)

// FieldQuery is one condition on a frontmatter field, as `cairn list
// --where` writes it: "status = done", "year >= 2020", "tags ~ ink",
// "owner" (the field is there).
type FieldQuery struct {
	Name  string `json:"name"`
	Op    string `json:"op"`
	Value string `json:"value,omitempty"`
}

// Num returns the query's value as a number, when the comparison is of
// numbers.
func (q FieldQuery) Num() (float64, bool) {
	if !isNumber(q.Value) {
		return 0, false
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(q.Value), 64)
	return n, err == nil
}

func (q FieldQuery) String() string {
	if q.Op == OpExists {
		return q.Name
	}
	return q.Name + " " + q.Op + " " + q.Value
}

// ops are the operators, longest first, as ParseWhere looks for them.
var ops = []string{OpLe, OpGe, OpNe, OpEq, OpLt, OpGt, OpContains}

// ParseWhere reads a condition: "field op value", or "field" alone for a
// page that has the field. The value may be quoted ("…" or '…').
func ParseWhere(s string) (FieldQuery, error) {
	bad := func(format string, args ...any) error {
		return cairn.Errorf(cairn.EINVALID, "the condition %q: "+format, append([]any{s}, args...)...).
			WithHint("A condition is FIELD OP VALUE with OP one of = != < <= > >= ~ (contains), or FIELD alone, like 'status = done' or 'year >= 2020'.")
	}
	if !utf8.ValidString(s) || len(s) > 1024 {
		return FieldQuery{}, bad("not a condition")
	}
	at, op := -1, ""
	for _, o := range ops {
		if i := strings.Index(s, o); i >= 0 && (at < 0 || i < at || i == at && len(o) > len(op)) {
			at, op = i, o
		}
	}
	if at < 0 {
		name := strings.TrimSpace(s)
		if name == "" || strings.ContainsAny(name, " \t") {
			return FieldQuery{}, bad("name a field, and an operator and a value if you compare it")
		}
		return FieldQuery{Name: name, Op: OpExists}, nil
	}
	name, value := strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+len(op):])
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	switch {
	case name == "" || strings.ContainsAny(name, " \t"):
		return FieldQuery{}, bad("the field's name is missing or has a space")
	case value == "":
		return FieldQuery{}, bad("the value after %s is missing", op)
	}
	return FieldQuery{Name: name, Op: op, Value: value}, nil
}

// Groups returns the conditions in the groups a storage answers each with
// one selection of field rows: the comparisons (<, <=, >, >=) on one field
// together, so that a range ("updated >= 2025-03", "updated < 2025-04") is
// one scan of the field's index between its bounds, met by one value;
// every other condition alone (two equalities on a list field may be met
// by two of its items).
func Groups(where []FieldQuery) [][]FieldQuery {
	var out [][]FieldQuery
	ranges := map[string]int{} // field → its group of comparisons
	for _, q := range where {
		switch q.Op {
		case OpLt, OpLe, OpGt, OpGe:
			if i, ok := ranges[q.Name]; ok {
				out[i] = append(out[i], q)
				continue
			}
			ranges[q.Name] = len(out)
		}
		out = append(out, []FieldQuery{q})
	}
	return out
}

// checkWhere validates conditions that did not come through ParseWhere.
func checkWhere(where []FieldQuery) error {
	if len(where) > 8 {
		return cairn.Errorf(cairn.EINVALID, "at most 8 conditions, not %d", len(where))
	}
	for _, q := range where {
		switch {
		case q.Name == "":
			return cairn.Errorf(cairn.EINVALID, "a condition without a field")
		case q.Op == OpExists:
		case q.Value == "":
			return cairn.Errorf(cairn.EINVALID, "the condition on %s has no value", q.Name)
		default:
			found := false
			for _, o := range ops {
				found = found || o == q.Op
			}
			if !found {
				return cairn.Errorf(cairn.EINVALID, "%q is not an operator; use = != < <= > >= or ~", q.Op)
			}
		}
	}
	return nil
}

// Where returns the pages (of type typ, when set) whose frontmatter meets
// every condition, by path: a query of the index's field rows, not a scan
// of the pages.
func (r *Reader) Where(ctx context.Context, typ string, where []FieldQuery) ([]Title, error) {
	if err := checkWhere(where); err != nil {
		return nil, err
	}
	rows, err := r.q.PagesWhere(ctx, typ, where)
	if err != nil {
		return nil, fmt.Errorf("index: pages where %v: %w", where, err)
	}
	return titlesOf(rows)
}
