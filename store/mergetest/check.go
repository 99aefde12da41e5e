package mergetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cairn"
)

// fate is what one side did to a file of the base.
type fate struct {
	kind string // "", "changed", "renamed" or "deleted"
	key  string // where the side has the file: its key, or the rename's target
	f    File
}

func (x fate) String() string {
	switch x.kind {
	case "":
		return "left it"
	case "deleted":
		return "deleted it"
	case "renamed":
		return "renamed it to " + x.f.String()
	}
	return "changed it to " + x.f.String()
}

// side is what one side did, seen from the base, by key.
type side struct {
	fates map[string]fate // by base key
	added map[string]File // by key: new files that are not renames
}

func sideOf(base map[string]keyed, t Tree) side {
	s := side{fates: map[string]fate{}, added: map[string]File{}}
	byKey := t.byKey()
	targets := map[string]bool{}
	for k, b := range base {
		if got, ok := byKey[k]; ok {
			if got.f == b.f {
				s.fates[k] = fate{key: k, f: b.f}
			} else {
				s.fates[k] = fate{kind: "changed", key: k, f: got.f}
			}
			continue
		}
		// Gone from its path: renamed if the same content is at a new path.
		if f, ok := t[b.id]; ok && f.Data == b.f.Data {
			if _, inBase := base[cairn.FoldPath(f.Path)]; !inBase {
				s.fates[k] = fate{kind: "renamed", key: cairn.FoldPath(f.Path), f: f}
				targets[cairn.FoldPath(f.Path)] = true
				continue
			}
		}
		s.fates[k] = fate{kind: "deleted"}
	}
	for k, got := range byKey {
		if _, inBase := base[k]; !inBase && !targets[k] {
			s.added[k] = got.f
		}
	}
	return s
}

// fact is part of what the edits require: files at keys, and whether a
// conflict is allowed or required among the keys.
type fact struct {
	keys     []string
	put      map[string]File // the expected files, when merged
	twoSided bool            // both sides changed it differently: a conflict is allowed
	conflict bool            // the changes cannot combine: a conflict is required
	desc     string
}

// group is a set of keys tied by facts (a rename ties its source and
// target; two files put at one key tie their facts).
type group struct {
	facts      []*fact
	twoSided   bool
	conflict   bool
	conflicted bool
}

type expectation struct {
	parent map[string]string
	groups map[string]*group
	put    map[string][]File // by key: the files the facts put there
}

func (e *expectation) find(k string) string {
	for e.parent[k] != k {
		e.parent[k] = e.parent[e.parent[k]]
		k = e.parent[k]
	}
	return k
}

func (e *expectation) union(a, b string) {
	if _, ok := e.parent[a]; !ok {
		e.parent[a] = a
	}
	if _, ok := e.parent[b]; !ok {
		e.parent[b] = b
	}
	e.parent[e.find(a)] = e.find(b)
}

// expect works out what the edits require.
func (c *Case) expect() *expectation {
	base := c.Base.byKey()
	ours, theirs := sideOf(base, c.Ours), sideOf(base, c.Theirs)
	var facts []*fact
	for _, k := range slices.Sorted(maps.Keys(base)) {
		facts = append(facts, merged(k, base[k].f, ours.fates[k], theirs.fates[k]))
	}
	added := map[string]bool{}
	for k := range ours.added {
		added[k] = true
	}
	for k := range theirs.added {
		added[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(added)) {
		o, inOurs := ours.added[k]
		t, inTheirs := theirs.added[k]
		fc := &fact{keys: []string{k}, put: map[string]File{}}
		switch {
		case inOurs && inTheirs && o == t:
			fc.put[k], fc.desc = o, "both added "+o.String()
		case inOurs && inTheirs:
			fc.twoSided, fc.conflict = true, true
			fc.desc = fmt.Sprintf("ours added %v, theirs added %v", o, t)
		case inOurs:
			fc.put[k], fc.desc = o, "ours added "+o.String()
		default:
			fc.put[k], fc.desc = t, "theirs added "+t.String()
		}
		facts = append(facts, fc)
	}

	e := &expectation{parent: map[string]string{}, groups: map[string]*group{}, put: map[string][]File{}}
	for _, fc := range facts {
		for _, k := range fc.keys {
			e.union(fc.keys[0], k)
		}
		for k, f := range fc.put {
			e.union(fc.keys[0], k)
			e.put[k] = append(e.put[k], f)
		}
	}
	for _, fc := range facts {
		r := e.find(fc.keys[0])
		g := e.groups[r]
		if g == nil {
			g = &group{}
			e.groups[r] = g
		}
		g.facts = append(g.facts, fc)
		g.twoSided = g.twoSided || fc.twoSided
		g.conflict = g.conflict || fc.conflict
	}
	// Two different files put at one key (a rename onto a path the other
	// side added, say): both sides changed that path.
	for k, fs := range e.put {
		if len(fs) > 1 {
			g := e.groups[e.find(k)]
			g.twoSided, g.conflict = true, true
		}
	}
	return e
}

// merged is the fact for base key k, given what each side did to it.
func merged(k string, b File, o, t fate) *fact {
	fc := &fact{keys: []string{k}, put: map[string]File{}}
	if o.key != "" && o.key != k {
		fc.keys = append(fc.keys, o.key)
	}
	if t.key != "" && t.key != k && t.key != o.key {
		fc.keys = append(fc.keys, t.key)
	}
	putFate := func(x fate) {
		if x.kind != "deleted" {
			fc.put[x.key] = x.f
		}
	}
	fc.desc = fmt.Sprintf("%v: ours %v, theirs %v", b, o, t)
	switch {
	case o == t, t.kind == "":
		putFate(o)
		return fc
	case o.kind == "":
		putFate(t)
		return fc
	}
	fc.twoSided = true
	fail := func() *fact {
		fc.conflict, fc.put = true, map[string]File{}
		return fc
	}
	if o.kind == "deleted" || t.kind == "deleted" {
		return fail()
	}
	// Both kept the file: combine path, content and mode.
	if o.key != t.key {
		if o.kind == "renamed" && t.kind == "renamed" || o.kind == "renamed" && t.f.Path != b.Path ||
			t.kind == "renamed" && o.f.Path != b.Path {
			return fail()
		}
	}
	key := o.key
	if t.kind == "renamed" {
		key = t.key
	}
	path, ok1 := merge3(b.Path, o.f.Path, t.f.Path)
	data, ok2 := mergeLines(b.Data, o.f.Data, t.f.Data)
	mode, ok3 := merge3(b.Mode, o.f.Mode, t.f.Mode)
	if !ok1 || !ok2 || !ok3 {
		return fail()
	}
	fc.put[key] = File{Path: path, Data: data, Mode: mode}
	return fc
}

func merge3[T comparable](b, o, t T) (T, bool) {
	switch {
	case o == t, t == b:
		return o, true
	case o == b:
		return t, true
	}
	return b, false
}

// mergeLines merges content line by line: each line may be changed by one
// side, or by both alike.
func mergeLines(b, o, t string) (string, bool) {
	bl, ol, tl := strings.SplitAfter(b, "\n"), strings.SplitAfter(o, "\n"), strings.SplitAfter(t, "\n")
	if len(bl) != len(ol) || len(bl) != len(tl) {
		return "", false
	}
	out := make([]string, len(bl))
	for i := range bl {
		var ok bool
		if out[i], ok = merge3(bl[i], ol[i], tl[i]); !ok {
			return "", false
		}
	}
	return strings.Join(out, ""), true
}

// Check judges a merge of the case: conflicts are the paths its conflicts
// name, result the merged tree's files, or nil when the merge gave no tree
// (a refused merge). With conflicts, the result may be a tree with
// conflict markers: the files of conflicted changes are then not judged,
// everything else is. It returns the problems found, each a sentence.
func (c *Case) Check(result []File, conflicts []string) []string {
	e := c.expect()
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, p := range conflicts {
		k := cairn.FoldPath(p)
		if _, ok := e.parent[k]; !ok {
			bad("a conflict names %s, which neither side changed", p)
			continue
		}
		g := e.groups[e.find(k)]
		g.conflicted = true
		if !g.twoSided {
			bad("a conflict names %s, but no two sides changed it differently: %s", p, describe(g))
		}
	}
	for _, r := range slices.Sorted(maps.Keys(e.groups)) {
		if g := e.groups[r]; g.conflict && !g.conflicted {
			bad("both sides changed %s in ways that cannot combine, but no conflict names it: %s", r, describe(g))
		}
	}
	if result == nil {
		return problems
	}
	got := map[string]File{}
	for _, f := range result {
		got[cairn.FoldPath(f.Path)] = f
	}
	for _, r := range slices.Sorted(maps.Keys(e.groups)) {
		g := e.groups[r]
		if g.conflicted {
			continue
		}
		for _, fc := range g.facts {
			for _, k := range slices.Sorted(maps.Keys(fc.put)) {
				if want := fc.put[k]; got[k] != want {
					bad("%s = %v, want %v (%s)", k, orAbsent(got, k), want, fc.desc)
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := e.put[k]; ok {
			continue
		}
		if _, ok := e.parent[k]; ok && e.groups[e.find(k)].conflicted {
			continue
		}
		bad("%s = %v, which no side put there", k, got[k])
	}
	return problems
}

func orAbsent(m map[string]File, k string) string {
	if f, ok := m[k]; ok {
		return f.String()
	}
	return "(absent)"
}

func describe(g *group) string {
	var ds []string
	for _, fc := range g.facts {
		ds = append(ds, fc.desc)
	}
	return strings.Join(ds, "; ")
}
