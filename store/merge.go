package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cairn"
	"cairn/merge"
)

// MergeFunc merges one file changed on both sides. A nil base means both
// sides added the file. With markers, unresolved hunks are written into data
// with conflict markers; conflicts are returned either way.
type MergeFunc func(path string, base, ours, theirs []byte, markers bool) (data []byte, conflicts []cairn.Conflict)

func defaultMergeFile(path string, base, ours, theirs []byte, markers bool) ([]byte, []cairn.Conflict) {
	r := merge.File(path, base, ours, theirs, &merge.Options{Markers: markers})
	return r.Data, r.Conflicts
}

// MergeOptions adjust a three-way merge. The zero value writes no conflict
// markers and merges every path.
type MergeOptions struct {
	// Markers writes files that have content conflicts with conflict
	// markers into the result tree; the conflicts are still returned.
	Markers bool
	// Keep lists paths that stay as ours has them: theirs' changes to them
	// are left out, so they never conflict. A revert keeps main's log.md
	// this way. Default: none.
	Keep []string
}

// MergeResult is the outcome of a three-way merge of trees.
type MergeResult struct {
	// Tree is the merged tree: zero when there are conflicts, unless
	// Markers was set.
	Tree cairn.Hash
	// Conflicts lists what could not be merged, sorted by path.
	Conflicts []cairn.Conflict
}

// sideChange is one side's change at a key: the base item and the side's
// item (a zero hash means absent).
type sideChange struct {
	base, it item
}

// MergeTrees merges the changes from base to theirs into ours. Changes to
// different files combine, deletions included. A file changed on both sides
// is merged by the store's MergeFunc (structural for Markdown, diff3 for
// text), its mode three-way. A file renamed on one side (same content, new
// path) and changed in place on the other is renamed and changed; a change
// in place that also changes the case of the name is a second rename, and a
// conflict. Everything else that both sides changed differently is a
// conflict: nothing is decided silently. Paths in opts.Keep stay as ours has
// them. The result's new objects are in the batch.
func (b *Batch) MergeTrees(ctx context.Context, base, ours, theirs cairn.Hash, opts *MergeOptions) (MergeResult, error) {
	if opts == nil {
		opts = &MergeOptions{}
	}
	keep := make(map[string]bool, len(opts.Keep))
	for _, p := range opts.Keep {
		cp, err := cairn.CleanPath(p)
		if err != nil {
			return MergeResult{}, fmt.Errorf("merge: path to keep: %w", err)
		}
		keep[cairn.FoldPath(cp)] = true
	}
	if ours == theirs || base == theirs {
		return MergeResult{Tree: ours}, nil
	}
	if base == ours && len(keep) == 0 {
		return MergeResult{Tree: theirs}, nil
	}
	ourSide, err := sideChanges(ctx, b, base, ours)
	if err != nil {
		return MergeResult{}, err
	}
	theirSide, err := sideChanges(ctx, b, base, theirs)
	if err != nil {
		return MergeResult{}, err
	}
	for k := range keep {
		delete(theirSide, k)
	}
	ourRen, theirRen := renames(ourSide), renames(theirSide)

	var conflicts []cairn.Conflict
	var changes []FileChange
	put := func(it item) {
		changes = append(changes, FileChange{Path: it.filePath(), Blob: it.hash, Size: int64(it.size), Mode: it.mode})
	}
	del := func(path string) { changes = append(changes, FileChange{Path: path, Delete: true}) }
	handled := map[string]bool{}

	keys := make([]string, 0, len(ourSide)+len(theirSide))
	for k := range ourSide {
		keys = append(keys, k)
	}
	for k := range theirSide {
		if _, ok := ourSide[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	// Rename sources go first, so that a rename's target is settled before
	// the loop reaches it.
	slices.SortStableFunc(keys, func(a, b string) int {
		ra := ourRen[a] != "" || theirRen[a] != ""
		rb := ourRen[b] != "" || theirRen[b] != ""
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	for _, k := range keys {
		if handled[k] {
			continue
		}
		o, oc := ourSide[k]
		t, tc := theirSide[k]
		// Renames against deletions and other renames of the same file.
		if ot, tt := ourRen[k], theirRen[k]; ot != "" || tt != "" {
			base := o.base
			if !oc {
				base = t.base
			}
			switch {
			case ot != "" && tt != "" && ourSide[ot].it.filePath() != theirSide[tt].it.filePath():
				conflicts = append(conflicts, cairn.Conflict{Path: base.filePath(), Kind: cairn.ConflictRename,
					Base: base.filePath(), Ours: ourSide[ot].it.filePath(), Theirs: theirSide[tt].it.filePath()})
				handled[ot], handled[tt] = true, true
				continue
			case ot != "" && tc && t.it.hash.IsZero() && tt == "":
				conflicts = append(conflicts, cairn.Conflict{Path: base.filePath(), Kind: cairn.ConflictModifyDelete,
					Ours: "renamed to " + ourSide[ot].it.filePath(), Theirs: "(deleted)"})
				handled[ot] = true
				continue
			case tt != "" && oc && o.it.hash.IsZero() && ot == "":
				conflicts = append(conflicts, cairn.Conflict{Path: base.filePath(), Kind: cairn.ConflictModifyDelete,
					Ours: "(deleted)", Theirs: "renamed to " + theirSide[tt].it.filePath()})
				handled[tt] = true
				continue
			case tt != "" && oc && !o.it.hash.IsZero():
				// Theirs renamed the file; ours changed it in place: the change
				// moves to the new path, unless ours touched that path too.
				if _, clash := ourSide[tt]; !clash {
					handled[tt] = true
					moved, c := renamedAndChanged(base, theirSide[tt].it, o.it, false)
					if c != nil {
						conflicts = append(conflicts, *c)
						continue
					}
					del(o.it.filePath())
					put(moved)
					continue
				}
			case ot != "" && tc && !t.it.hash.IsZero():
				if _, clash := theirSide[ot]; !clash {
					handled[ot] = true
					moved, c := renamedAndChanged(base, ourSide[ot].it, t.it, true)
					if c != nil {
						conflicts = append(conflicts, *c)
						continue
					}
					put(moved)
					continue
				}
			}
		}
		switch {
		case !tc || oc && o.it == t.it:
			// Only ours changed it, or both the same way: ours has it
			// already. (When ours did not change it, o is the zero change,
			// whose item equals the zero item of a deletion by theirs.)
		case !oc:
			if t.it.hash.IsZero() {
				del(t.base.filePath())
				continue
			}
			if !t.base.hash.IsZero() && t.base.filePath() != t.it.filePath() {
				del(t.base.filePath())
			}
			put(t.it)
		default:
			c, merged, err := b.mergeFile(ctx, o.base, o.it, t.it, opts.Markers)
			if err != nil {
				return MergeResult{}, err
			}
			conflicts = append(conflicts, c...)
			if merged != nil {
				put(*merged)
			}
		}
	}
	var tree cairn.Hash
	if len(conflicts) == 0 || opts.Markers {
		tree, err = b.Edit(ctx, ours, changes)
		var ce *clashError
		if errors.As(err, &ce) {
			conflicts = append(conflicts, cairn.Conflict{Path: ce.path, Kind: cairn.ConflictCase, Theirs: ce.other, Base: ce.msg})
			tree, err = cairn.Hash{}, nil
		}
		if err != nil {
			return MergeResult{}, err
		}
	}
	slices.SortStableFunc(conflicts, func(x, y cairn.Conflict) int { return strings.Compare(x.Path, y.Path) })
	if len(conflicts) > 0 && !opts.Markers {
		tree = cairn.Hash{}
	}
	return MergeResult{Tree: tree, Conflicts: conflicts}, nil
}

// renamedAndChanged combines a file that one side renamed (renamed: the
// item at its new key) with the other side's change of it in place
// (changed), both from base. The result has the new path, the changed
// content and the mode as a three-way merge gives it. Ours tells which side
// renamed. When the change in place also changed the path (the letter case
// of its name), the two renames are a conflict, as is a mode that both
// sides changed.
func renamedAndChanged(base, renamed, changed item, ours bool) (item, *cairn.Conflict) {
	side := func(x, y string) (string, string) {
		if ours {
			return x, y
		}
		return y, x
	}
	if changed.filePath() != base.filePath() {
		o, t := side(renamed.filePath(), changed.filePath())
		return item{}, &cairn.Conflict{Path: base.filePath(), Kind: cairn.ConflictRename, Base: base.filePath(), Ours: o, Theirs: t}
	}
	mode, ok := mergeModes(base, renamed, changed)
	if !ok {
		o, t := side(modeName(renamed.mode), modeName(changed.mode))
		return item{}, &cairn.Conflict{Path: base.filePath(), Kind: cairn.ConflictContent, Field: "mode", Base: modeName(base.mode), Ours: o, Theirs: t}
	}
	moved := renamed
	moved.hash, moved.size, moved.mode = changed.hash, changed.size, mode
	return moved, nil
}

// mergeModes merges the modes of two sides' versions of a file three-way;
// with no base (both added the file) they must agree.
func mergeModes(base, ours, theirs item) (cairn.Mode, bool) {
	switch {
	case ours.mode == theirs.mode:
		return ours.mode, true
	case base.hash.IsZero():
		return 0, false
	case ours.mode == base.mode:
		return theirs.mode, true
	case theirs.mode == base.mode:
		return ours.mode, true
	}
	return 0, false
}

// sideChanges returns the changes from base to tree, by key.
func sideChanges(ctx context.Context, src nodeSource, base, tree cairn.Hash) (map[string]sideChange, error) {
	m := map[string]sideChange{}
	err := diffKeys(ctx, src, base, tree, func(kc keyChange) error {
		m[kc.key] = sideChange{base: kc.old, it: kc.new}
		return nil
	})
	return m, err
}

// renames finds exact renames on one side: a key deleted whose non-empty
// content appears under exactly one key the side added. It maps old key to
// new key.
func renames(changes map[string]sideChange) map[string]string {
	added := map[cairn.Hash][]string{}
	for k, c := range changes {
		if c.base.hash.IsZero() && !c.it.hash.IsZero() && c.it.size > 0 {
			added[c.it.hash] = append(added[c.it.hash], k)
		}
	}
	out := map[string]string{}
	for k, c := range changes {
		if c.it.hash.IsZero() && !c.base.hash.IsZero() {
			if to := added[c.base.hash]; len(to) == 1 {
				out[k] = to[0]
			}
		}
	}
	return out
}

// mergeFile merges one key changed differently on both sides. It returns
// the conflicts and the resulting item (nil when unresolved without
// markers).
func (b *Batch) mergeFile(ctx context.Context, base, ours, theirs item, markers bool) ([]cairn.Conflict, *item, error) {
	path := ours.filePath()
	if ours.hash.IsZero() {
		path = theirs.filePath()
	}
	switch {
	case ours.hash.IsZero() || theirs.hash.IsZero():
		c := cairn.Conflict{Path: path, Kind: cairn.ConflictModifyDelete, Ours: "(modified)", Theirs: "(deleted)"}
		kept := ours
		if ours.hash.IsZero() {
			c.Ours, c.Theirs, kept = "(deleted)", "(modified)", theirs
		}
		if markers {
			return []cairn.Conflict{c}, &kept, nil
		}
		return []cairn.Conflict{c}, nil, nil
	case ours.filePath() != theirs.filePath():
		kind := cairn.ConflictRename
		if base.hash.IsZero() {
			kind = cairn.ConflictCase
		}
		c := cairn.Conflict{Path: path, Kind: kind, Base: base.filePath(), Ours: ours.filePath(), Theirs: theirs.filePath()}
		return []cairn.Conflict{c}, nil, nil
	}
	mode, ok := mergeModes(base, ours, theirs)
	if !ok {
		c := cairn.Conflict{Path: path, Kind: cairn.ConflictContent, Field: "mode", Ours: modeName(ours.mode), Theirs: modeName(theirs.mode)}
		return []cairn.Conflict{c}, nil, nil
	}
	if ours.hash == theirs.hash {
		it := ours
		it.mode = mode
		return nil, &it, nil
	}
	var baseData []byte
	if !base.hash.IsZero() {
		var err error
		if baseData, err = b.ReadBlob(ctx, base.hash); err != nil {
			return nil, nil, err
		}
	}
	od, err := b.ReadBlob(ctx, ours.hash)
	if err != nil {
		return nil, nil, err
	}
	td, err := b.ReadBlob(ctx, theirs.hash)
	if err != nil {
		return nil, nil, err
	}
	data, conflicts := b.s.merge(path, baseData, od, td, markers)
	for i := range conflicts {
		conflicts[i].Path = path
	}
	if len(conflicts) > 0 && !markers {
		return conflicts, nil, nil
	}
	it := ours
	it.mode = mode
	it.hash = b.PutBlob(data)
	it.size = uint64(len(data))
	return conflicts, &it, nil
}

func modeName(m cairn.Mode) string {
	if m == cairn.ModeExecutable {
		return "executable"
	}
	return "file"
}
