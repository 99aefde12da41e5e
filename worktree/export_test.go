package worktree

import (
	"context"
	"time"

	"cairn"
)

// OverridesOf returns tree t's overrides, for tests that work out a status
// on their own.
func (m *Manager) OverridesOf(ctx context.Context, t *Tree) (map[string]cairn.Entry, error) {
	return m.loadOverrides(ctx, t)
}

// WatchedStatuses is how many whole-tree statuses m made from a watch
// journal, without a walk.
func (m *Manager) WatchedStatuses() int64 { return m.watched.Load() }

// WalkOrder compares vault paths in the order Walk gives them.
func WalkOrder(a, b string) int { return walkOrder(a, b) }

// ReusedListings is how many folders m's statuses did not list again.
func (m *Manager) ReusedListings() int64 { return m.reusedLists.Load() }

// SetListingRacy sets how long before a status a folder must have changed
// for its listing to be kept (by default two seconds).
func (m *Manager) SetListingRacy(d time.Duration) { m.racyLists = d }

// StatRow returns tree t's stat row of path, and whether there is one.
func (m *Manager) StatRow(ctx context.Context, t *Tree, path string) (FileStat, bool) {
	r, err := m.st.Stat(ctx, t.ID, path)
	return r, err == nil
}

// LockPath is the file whose lock a change of tree t holds.
func (m *Manager) LockPath(t *Tree) string { return m.lockPath(t) }

// SetStatsPart sets how many stat rows a sync holds before it writes those
// it can (by default 16,384).
func (m *Manager) SetStatsPart(n int) { m.rowsPart = n }
