package schema

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cairn/lint"
)

// A page's frontmatter is checked against its type by the type's own
// declarations — the keywords of the JSON Schema it exports (JSONSchema),
// with that schema's meaning and its validators' messages. The checks are
// cairn's: a JSON Schema library compiled every draft's meta-schemas when
// the program started (6 ms of every command, a third of a `cairn status`),
// to validate the few keywords a type can declare.

// validate adds the findings of a page's present fields against t:
// required fields missing (also those a condition requires), fields a
// closed type does not declare, and values that break their declaration.
func (t *Type) validate(doc map[string]any, add func(string, lint.Severity, string, string, ...any)) {
	required := func(fields []string, why string) {
		for _, f := range fields {
			if _, ok := doc[f]; !ok {
				add(lint.SchemaRequired, lint.Error, f, "a %s must have %s (%s)", t.Name, f, why)
			}
		}
	}
	required(t.Requires, fmt.Sprintf("required by %s", t.Path))
	for _, c := range t.When {
		if v, ok := doc[c.Field]; ok && (len(c.Is) == 0 || slices.ContainsFunc(c.Is, func(x any) bool { return jsonEqual(x, v) })) {
			required(c.Requires, fmt.Sprintf("required when %s is %s, by %s", c.Field, values(c.Is), t.Path))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc)) {
		f := t.Field(name)
		if f == nil {
			if t.Closed && !slices.Contains(CoreFields, name) {
				add(lint.SchemaClosed, lint.Error, name, "%s is not a field of %s, which is closed (%s); remove it or declare it", name, t.Name, t.Path)
			}
			continue
		}
		if problem, at := t.compiled.checkValue(doc[name], &f.Value, f.Items, name); problem != "" {
			add(lint.SchemaValue, lint.Error, name, "%s: %s (the %s declared by %s)", at, problem, describe(f), t.Path)
		}
	}
}

// checkValue returns the first problem of v against its declaration d (a
// list's items declared by items), and where in the frontmatter it is
// ("tags.2"); "" when there is none. at is v's place.
func (c *compiled) checkValue(v any, d *Value, items *Value, at string) (problem, where string) {
	kind := jsonType(v)
	if want := wantType(d.Type); want != "" && !typeIs(v, kind, want) {
		return fmt.Sprintf("got %s, want %s", kind, want), at
	}
	if len(d.Enum) > 0 && !slices.ContainsFunc(d.Enum, func(x any) bool { return jsonEqual(x, v) }) {
		return enumProblem(d.Enum), at
	}
	switch kind {
	case "string":
		s := v.(string)
		if format := cmp.Or(formats[d.Format], impliedFormat(d.Type)); format != "" {
			if err := checkFormat(format, s); err != nil {
				return fmt.Sprintf("%s is not valid %s: %v", quote(s), format, err), at
			}
		}
		pattern := d.Pattern
		if d.Type == Link && pattern == "" {
			pattern = linkPattern
		}
		if pattern != "" {
			// compile compiled every pattern of the type's fields.
			if re := c.patterns[pattern]; re != nil && !re.MatchString(s) {
				return fmt.Sprintf("%s does not match pattern %s", quote(s), quote(pattern)), at
			}
		}
		n := utf8.RuneCountInString(s)
		if d.MinLength != nil && n < *d.MinLength {
			return fmt.Sprintf("minLength: got %d, want %d", n, *d.MinLength), at
		}
		if d.MaxLength != nil && n > *d.MaxLength {
			return fmt.Sprintf("maxLength: got %d, want %d", n, *d.MaxLength), at
		}
	case "number":
		x, _ := numeric(v)
		if d.Min != nil && x < *d.Min {
			return fmt.Sprintf("minimum: got %v, want %v", x, *d.Min), at
		}
		if d.Max != nil && x > *d.Max {
			return fmt.Sprintf("maximum: got %v, want %v", x, *d.Max), at
		}
	case "array":
		list := v.([]any)
		if d.Type == List {
			if d.MinLength != nil && len(list) < *d.MinLength {
				return fmt.Sprintf("minItems: got %d, want %d", len(list), *d.MinLength), at
			}
			if d.MaxLength != nil && len(list) > *d.MaxLength {
				return fmt.Sprintf("maxItems: got %d, want %d", len(list), *d.MaxLength), at
			}
		}
		if d.Type == List && items != nil {
			for i, x := range list {
				if problem, where := c.checkValue(x, items, nil, at+"."+strconv.Itoa(i)); problem != "" {
					return problem, where
				}
			}
		}
	}
	return "", ""
}

// wantType is the JSON type a data type's values have; "" for any value.
func wantType(t string) string {
	switch t {
	case String, Date, DateTime, Link:
		return "string"
	case Number, Integer, Boolean:
		return t
	case List:
		return "array"
	}
	return ""
}

// impliedFormat is the format a data type implies.
func impliedFormat(t string) string {
	switch t {
	case Date:
		return "date"
	case DateTime:
		return "date-time"
	}
	return ""
}

// jsonType is the JSON type of a frontmatter value: null, boolean,
// string, number, array or object.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// typeIs reports whether v, of JSON type kind, is of type want: a number
// is an integer when it has no fraction.
func typeIs(v any, kind, want string) bool {
	switch {
	case kind == want:
		return true
	case want == "integer" && kind == "number":
		x, _ := numeric(v)
		return x == math.Trunc(x) && !math.IsInf(x, 0)
	}
	return false
}

// numeric returns a numeric value as a float64.
func numeric(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(r.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(r.Uint()), true
	}
	return 0, false
}

// jsonEqual compares two values as JSON does: numbers by value, lists and
// mappings element by element.
func jsonEqual(a, b any) bool {
	if x, ok := numeric(a); ok {
		y, ok := numeric(b)
		return ok && x == y
	}
	switch a := a.(type) {
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, jsonEqual)
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			if y, ok := b[k]; !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	}
	return a == b
}

func enumProblem(enum []any) string {
	want := make([]string, len(enum))
	for i, v := range enum {
		want[i] = display(v)
	}
	if len(want) == 1 {
		return "value must be " + want[0]
	}
	return "value must be one of " + strings.Join(want, ", ")
}

// display writes a value in a message: strings quoted.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	}
	return fmt.Sprint(v)
}

// quote writes s in single quotes, escaped as Go escapes it.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, `'`, `\'`) + "'"
}

// checkFormat checks a string against a JSON Schema format: date and
// date-time (RFC 3339), email, uri (absolute).
func checkFormat(format, s string) error {
	switch format {
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return err
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s)); err != nil {
			return fmt.Errorf("not an RFC 3339 date and time, such as 2024-01-02T15:04:05Z")
		}
	case "email":
		a, err := mail.ParseAddress(s)
		if err != nil || a.Name != "" || a.Address != s {
			return fmt.Errorf("not an address alone (name@example.org)")
		}
	case "uri":
		u, err := url.Parse(s)
		if err != nil {
			return err
		}
		if !u.IsAbs() {
			return fmt.Errorf("relative url")
		}
	}
	return nil
}
