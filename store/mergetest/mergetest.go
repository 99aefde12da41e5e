// Package mergetest generates random three-way merges of whole trees and
// says what a correct merge of them must contain, for property tests of the
// store's tree merge and of the commands built on it (cairn merge, cairn
// revert).
//
// A [Case] is a base tree and the trees two sides made from it by random
// edits: adding, changing, deleting and renaming files in nested folders,
// changing the case of a name or the executable bit; some edits are made by
// both sides alike, and with few paths the sides often touch the same files.
// [Case.Check] judges a merge's result and conflicts from the edits alone,
// without a tree, a diff or a merge of the store's:
//
//   - a change that only one side made is in the result exactly;
//   - a change that both sides made alike is in the result once;
//   - where both sides changed a file differently, the result holds both
//     changes combined, or a conflict names the file — never one side's
//     change alone; where they cannot be combined (a deletion against a
//     change, two renames, two changes of the same line, two new files at
//     one path), a conflict is required;
//   - a conflict names only files that both sides changed.
//
// Content is made of lines that are unique to a file and version, separated
// by fixed lines, so that changes to different lines of a file combine line
// by line, and no two files ever share content. A file counts as renamed
// the way the store detects it: a side removed the path and put the same
// content at a path new to the tree; a rename that also changes the content,
// or that moves onto a path the base has, counts as a deletion and an
// addition.
package mergetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cairn"
)

// File is a file of a tree.
type File struct {
	Path string
	Data string
	Mode cairn.Mode
}

func (f File) String() string {
	x := ""
	if f.Mode == cairn.ModeExecutable {
		x = " (executable)"
	}
	return fmt.Sprintf("%s %q%s", f.Path, f.Data, x)
}

// Tree is a tree of files by identity: an edit that renames a file keeps its
// identity.
type Tree map[int]File

// Files returns the tree's files in path order.
func (t Tree) Files() []File {
	out := slices.Collect(maps.Values(t))
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// byKey returns the tree's files by key (case-folded path), with their ids.
func (t Tree) byKey() map[string]keyed {
	m := make(map[string]keyed, len(t))
	for id, f := range t {
		m[cairn.FoldPath(f.Path)] = keyed{id, f}
	}
	return m
}

type keyed struct {
	id int
	f  File
}

// Change is one change that turns a tree into another: a file written with
// new content or mode, or a path deleted.
type Change struct {
	File
	Delete bool
}

// Changes returns the changes from tree a to tree b: deletions first, then
// writes, each in path order. A case-only rename is a deletion of the old
// path and a write of the new one.
func Changes(a, b Tree) []Change {
	ap, bp := map[string]File{}, map[string]File{}
	for _, f := range a {
		ap[f.Path] = f
	}
	for _, f := range b {
		bp[f.Path] = f
	}
	var out []Change
	for _, p := range slices.Sorted(maps.Keys(ap)) {
		if _, ok := bp[p]; !ok {
			out = append(out, Change{File: File{Path: p}, Delete: true})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(bp)) {
		if f, ok := ap[p]; !ok || f != bp[p] {
			out = append(out, Change{File: bp[p]})
		}
	}
	return out
}

// Chooser makes the generator's choices: a *math/rand/v2.Rand, or [Bytes].
type Chooser interface {
	IntN(n int) int
}

// Bytes returns a Chooser that takes its choices from data, one byte each
// (two for more than 256 options), and zeros once data runs out: a fuzzer's
// mutations of data become mutations of the edits.
func Bytes(data []byte) Chooser { return &byteChooser{data: data} }

type byteChooser struct {
	data []byte
	off  int
}

func (c *byteChooser) IntN(n int) int {
	if n <= 1 {
		return 0
	}
	v := c.byte()
	if n > 256 {
		v = v<<8 | c.byte()
	}
	return v % n
}

func (c *byteChooser) byte() int {
	if c.off >= len(c.data) {
		return 0
	}
	c.off++
	return int(c.data[c.off-1])
}

// Options adjust Generate. The zero value means the defaults.
type Options struct {
	// Root is the folder every generated path is under, such as "p/".
	// Default: the top of the tree.
	Root string
	// Files is the most files the base has (it has 0 to Files). Default 10.
	Files int
	// Edits is the most edits each side makes. Default 8.
	Edits int
	// Modes lets edits toggle the executable bit. Default false.
	Modes bool
}

// Case is a generated three-way merge.
type Case struct {
	Base, Ours, Theirs Tree
	// Log lists the edits, for failure messages.
	Log []string
}

func (c *Case) String() string {
	var sb strings.Builder
	sb.WriteString("base:\n")
	for _, f := range c.Base.Files() {
		fmt.Fprintf(&sb, "  %v\n", f)
	}
	for _, l := range c.Log {
		fmt.Fprintf(&sb, "%s\n", l)
	}
	return sb.String()
}

// The paths the generator picks from: few enough that the sides often meet.
// No file name is a folder name, so a file never stands where a folder is.
var (
	folders = []string{"", "a/", "a/b/", "c/", "c/d/e/"}
	names   = []string{"f0", "f1", "f2", "f3", "f4", "f5"}
	exts    = []string{".md", ".txt"}
)

// lines is the number of changeable lines in a file; a fixed line
// separates each from the next.
const lines = 3

type gen struct {
	ch     Chooser
	opts   Options
	tokens int
	ids    int
}

// Generate makes a random case.
func Generate(ch Chooser, opts *Options) *Case {
	g := &gen{ch: ch}
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Files == 0 {
		g.opts.Files = 10
	}
	if g.opts.Edits == 0 {
		g.opts.Edits = 8
	}
	c := &Case{Base: Tree{}}
	for range ch.IntN(g.opts.Files + 1) {
		if p, ok := g.freePath(c.Base); ok {
			g.ids++
			c.Base[g.ids] = File{Path: p, Data: g.data(), Mode: g.mode()}
		}
	}
	c.Ours, c.Theirs = maps.Clone(c.Base), maps.Clone(c.Base)
	// Edits both sides make alike come first, while the sides are equal.
	for range ch.IntN(g.opts.Edits/2 + 1) {
		if desc, id, f, ok := g.edit(c.Ours); ok {
			apply(c.Theirs, id, f)
			c.Log = append(c.Log, "both:   "+desc)
		}
	}
	for _, side := range []struct {
		name string
		t    Tree
	}{{"ours:   ", c.Ours}, {"theirs: ", c.Theirs}} {
		for range ch.IntN(g.opts.Edits + 1) {
			if desc, _, _, ok := g.edit(side.t); ok {
				c.Log = append(c.Log, side.name+desc)
			}
		}
	}
	return c
}

func apply(t Tree, id int, f *File) {
	if f == nil {
		delete(t, id)
	} else {
		t[id] = *f
	}
}

// edit makes one random edit to t and returns what it did: the id and the
// file's new state (nil: deleted).
func (g *gen) edit(t Tree) (desc string, id int, f *File, ok bool) {
	op := g.ch.IntN(6)
	if len(t) == 0 {
		op = 0
	}
	if op == 0 {
		p, ok := g.freePath(t)
		if !ok {
			return "", 0, nil, false
		}
		g.ids++
		nf := File{Path: p, Data: g.data(), Mode: g.mode()}
		t[g.ids] = nf
		return "add " + nf.String(), g.ids, &nf, true
	}
	ids := slices.Sorted(maps.Keys(t))
	id = ids[g.ch.IntN(len(ids))]
	old := t[id]
	nf := old
	switch op {
	case 1:
		ls := strings.SplitAfter(old.Data, "\n")
		for range 1 + g.ch.IntN(2) {
			ls[2*g.ch.IntN(lines)] = g.token()
		}
		nf.Data = strings.Join(ls, "")
		desc = fmt.Sprintf("change %s to %q", old.Path, nf.Data)
	case 2:
		delete(t, id)
		return "delete " + old.Path, id, nil, true
	case 3:
		p, ok := g.freePath(t)
		if !ok {
			return "", 0, nil, false
		}
		nf.Path = p
		desc = fmt.Sprintf("rename %s to %s", old.Path, p)
	case 4:
		dir, name := old.Path[:strings.LastIndexByte(old.Path, '/')+1], old.Path[strings.LastIndexByte(old.Path, '/')+1:]
		if name[0] == 'f' {
			name = "F" + name[1:]
		} else {
			name = "f" + name[1:]
		}
		nf.Path = dir + name
		desc = fmt.Sprintf("rename %s to %s (case)", old.Path, nf.Path)
	case 5:
		if !g.opts.Modes {
			return "", 0, nil, false
		}
		nf.Mode = 1 - old.Mode
		desc = fmt.Sprintf("chmod %s to %d", old.Path, nf.Mode)
	}
	t[id] = nf
	return desc, id, &nf, true
}

// freePath returns a random path whose key no file of t has.
func (g *gen) freePath(t Tree) (string, bool) {
	taken := t.byKey()
	for range 8 {
		name := names[g.ch.IntN(len(names))]
		if g.ch.IntN(4) == 0 {
			name = "F" + name[1:]
		}
		p := g.opts.Root + folders[g.ch.IntN(len(folders))] + name + exts[g.ch.IntN(len(exts))]
		if _, ok := taken[cairn.FoldPath(p)]; !ok {
			return p, true
		}
	}
	return "", false
}

func (g *gen) token() string {
	g.tokens++
	return fmt.Sprintf("line t%d\n", g.tokens)
}

// data returns new content: unique changeable lines between fixed ones.
func (g *gen) data() string {
	var sb strings.Builder
	for i := range lines {
		if i > 0 {
			fmt.Fprintf(&sb, "fixed %d\n", i)
		}
		sb.WriteString(g.token())
	}
	return sb.String()
}

func (g *gen) mode() cairn.Mode {
	if g.opts.Modes && g.ch.IntN(4) == 0 {
		return cairn.ModeExecutable
	}
	return cairn.ModeFile
}
