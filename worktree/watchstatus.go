package worktree

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cairn"
)

// lastStatus is what a whole-tree status found, with the point of the
// tree's watch journal it was made at: the next status, when the journal
// is of the same epoch, takes it and looks again only at the paths the
// journal names since, at those the base or the overrides changed since,
// and at the files it found modified within the racy window.
type lastStatus struct {
	Epoch  string     `json:"epoch"`
	Offset int64      `json:"offset"`
	Folder cairn.Hash `json:"folder"` // folderKey of the tree
	Base   cairn.Hash `json:"base"`
	Over   cairn.Hash `json:"over"` // overridesKey of the overrides it applied
	// OverPaths are the paths of those overrides.
	OverPaths []string `json:"over_paths,omitempty"`
	Changes   []Change `json:"changes,omitempty"`
	Skipped   []Skip   `json:"skipped,omitempty"`
	// Racy are the files it read that were modified within racyWindow of
	// being read: they are read again, as git does, whatever the journal
	// says.
	Racy []string `json:"racy,omitempty"`
}

func (m *Manager) lastPath(t *Tree) string {
	return filepath.Join(m.lockDir, fmt.Sprintf("status-%d.last", t.ID))
}

// readLast reads t's last status; nil when there is none to trust.
func (m *Manager) readLast(t *Tree) *lastStatus {
	data, err := os.ReadFile(m.lastPath(t))
	if err != nil {
		return nil
	}
	var l lastStatus
	if json.Unmarshal(data, &l) != nil || l.Folder != folderKey(t) || l.Epoch == "" {
		return nil
	}
	return &l
}

// lastLag is how much of the journal, cookies only, a status reads again
// rather than record itself as the last: writing the record (a file and
// a rename) costs about as much as reading 64 KiB of cookies, and the
// reads add up until a status writes.
const lastLag = 16 << 10

// writeLast records st as t's last status, made at the journal point sync,
// against base with the overrides over; racy are the files it read that
// were modified within the racy window. Best effort: a status that cannot
// be recorded makes the next one walk.
func (m *Manager) writeLast(t *Tree, sync *touched, base cairn.Hash, over map[string]cairn.Entry, st *Status, racy []string) {
	if sync == nil {
		return
	}
	l := lastStatus{Epoch: sync.epoch, Offset: sync.end, Folder: folderKey(t), Base: base,
		Over: overridesKey(over), OverPaths: pathsOf(over), Changes: st.Changes, Skipped: st.Skipped, Racy: racy}
	data, err := json.Marshal(&l)
	if err != nil {
		return
	}
	path := m.lastPath(t)
	f, err := os.CreateTemp(filepath.Dir(path), cacheTemp+"last-")
	if err != nil {
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err != nil || cerr != nil {
		os.Remove(f.Name())
		return
	}
	if os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}

// racyOf returns the paths of the files a status read that were modified
// within the racy window of now.
func racyOf(files []*onDisk, now int64) []string {
	var out []string
	for _, d := range files {
		if d.fresh && d.Mtime >= now-racyWindow {
			out = append(out, d.Path)
		}
	}
	slices.Sort(out)
	return out
}

// watchedStatus is the whole-tree status of t from its last status and
// the watch journal since, without a walk; ok is false when they cannot be
// trusted for it (no watcher, another epoch, a change of the root, too
// many paths), and sync is then the journal point a walk's status is made
// at (nil when no watcher answered).
func (m *Manager) watchedStatus(ctx context.Context, t *Tree) (st *Status, sync *touched, ok bool, err error) {
	last := m.readLast(t)
	var epoch string
	var from int64
	if last != nil {
		epoch, from = last.Epoch, last.Offset
	}
	sync, answered := m.watchSync(t, epoch, from)
	if !answered {
		return nil, nil, false, nil
	}
	if last == nil || sync.epoch != last.Epoch {
		return nil, sync, false, nil
	}
	over, err := m.loadOverrides(ctx, t)
	if err != nil {
		return nil, nil, false, err
	}
	// What to look at again: what the journal names, what the base and
	// the overrides changed, and the racy files.
	paths := append(append(append([]string(nil), sync.files...), sync.dirs...), last.Racy...)
	moved, err := m.basesDiffer(ctx, last.Base, t.Base)
	if err != nil {
		return nil, nil, false, err
	}
	paths = append(paths, moved...)
	if last.Over != overridesKey(over) {
		paths = append(append(paths, last.OverPaths...), pathsOf(over)...)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	if len(paths) > targetedMax || whole(paths) && len(paths) > 0 {
		return nil, sync, false, nil
	}
	st = &Status{Tree: t}
	var racy []string
	if len(paths) > 0 {
		snap, err := m.scanSelected(ctx, t, paths, nil)
		if err != nil {
			return nil, nil, false, err
		}
		st.Changes, st.Skipped = snap.changes(), snap.skips
		files := slices.Collect(maps.Values(snap.disk))
		racy = racyOf(files, m.Now().UnixNano())
		m.remember(ctx, t, files)
	}
	again := make(map[string]bool, len(paths))
	for _, p := range paths {
		again[p] = true
	}
	for _, c := range last.Changes {
		if !under(c.Path, again) {
			st.Changes = append(st.Changes, c)
		}
	}
	for _, s := range last.Skipped {
		if !under(s.Path, again) {
			st.Skipped = append(st.Skipped, s)
		}
	}
	for k := range st.Changes {
		_, st.Changes[k].Incoming = over[st.Changes[k].Path]
	}
	slices.SortFunc(st.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(st.Skipped, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	// What the journal holds since the last status is only the cookies
	// of statuses when nothing was looked at again: that status stays
	// the last, read with them next time, until they are lastLag long.
	if len(paths) > 0 || sync.end-last.Offset > lastLag {
		m.writeLast(t, sync, t.Base, over, st, racy)
	}
	m.watched.Add(1)
	return st, sync, true, nil
}

// under reports whether p, or a folder it is in, is one of paths.
func under(p string, paths map[string]bool) bool {
	for {
		if paths[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}
