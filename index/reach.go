package index

import (
	"container/heap"
	"context"
	"slices"
)

// Reachability: every file has a depth, the length of the shortest chain of
// links from the root index.md page (0 for index.md itself), or NULL when no
// chain exists. A change updates depths where its added and removed links
// make a difference, the way a dynamic breadth-first search does: nodes that
// lose every parent one level up are invalidated, then invalidated and
// newly linked nodes get their depths back in order of depth.

const unreachable = -1

// reach updates depths after the link changes of u. before and after are
// the vault facts on either side of the change.
func (u *update) reach(ctx context.Context, before, after vault) error {
	switch {
	case after.index == 0 && before.index == 0:
		return nil
	case after.index != before.index:
		// index.md came, went or was replaced: everything may change.
		return u.reachAll(ctx, after.index)
	}
	cur := map[int64]int{} // depths as they are being updated
	// The depths of the changed edges' ends, which the walk starts from,
	// in one read where the storage reads in batches.
	if b, ok := u.q.(BatchReader); ok {
		var ends []int64
		for _, e := range slices.Concat(u.removed, u.added) {
			ends = append(ends, e.src, e.dst)
		}
		slices.Sort(ends)
		ends = slices.Compact(ends)
		ds, err := b.Depths(ctx, ends)
		if err != nil {
			return err
		}
		for i, id := range ends {
			cur[id] = ds[i]
		}
	}
	get := func(id int64) (int, error) {
		if d, ok := cur[id]; ok {
			return d, nil
		}
		d, err := u.q.Depth(ctx, id)
		cur[id] = d
		return d, err
	}
	orig := map[int64]int{}
	remember := func(id int64) error {
		if _, ok := orig[id]; ok {
			return nil
		}
		d, err := get(id)
		orig[id] = d
		return err
	}
	// Invalidate nodes that lost their support.
	invalid := map[int64]bool{}
	cand := &depthQueue{}
	for _, e := range u.removed {
		du, err := get(e.src)
		if d, ok := u.gone[e.src]; ok {
			du = d // a deleted page's links count at the depth it had
		}
		if err != nil {
			return err
		}
		dv, err := get(e.dst)
		if err != nil {
			return err
		}
		if du != unreachable && dv == du+1 {
			heap.Push(cand, item{e.dst, dv})
		}
	}
	for cand.Len() > 0 {
		it := heap.Pop(cand).(item)
		v := it.id
		if invalid[v] || v == after.index {
			continue
		}
		dv, err := get(v)
		if err != nil {
			return err
		}
		if dv == unreachable {
			continue
		}
		parents, err := u.q.Parents(ctx, v)
		if err != nil {
			return err
		}
		supported := false
		for _, p := range parents {
			dp, err := get(p)
			if err != nil {
				return err
			}
			if !invalid[p] && dp != unreachable && dp == dv-1 {
				supported = true
				break
			}
		}
		if supported {
			continue
		}
		invalid[v] = true
		if err := remember(v); err != nil {
			return err
		}
		children, err := u.q.Children(ctx, v)
		if err != nil {
			return err
		}
		for _, w := range children {
			dw, err := get(w)
			if err != nil {
				return err
			}
			if dw == dv+1 {
				heap.Push(cand, item{w, dw})
			}
		}
	}
	// Give depths back, shortest first.
	settle := &depthQueue{}
	for v := range invalid {
		cur[v] = unreachable
	}
	for v := range invalid {
		parents, err := u.q.Parents(ctx, v)
		if err != nil {
			return err
		}
		for _, p := range parents {
			if dp, err := get(p); err != nil {
				return err
			} else if !invalid[p] && dp != unreachable {
				heap.Push(settle, item{v, dp + 1})
			}
		}
	}
	for _, e := range u.added {
		if du, err := get(e.src); err != nil {
			return err
		} else if du != unreachable && !invalid[e.src] {
			heap.Push(settle, item{e.dst, du + 1})
		}
	}
	for settle.Len() > 0 {
		it := heap.Pop(settle).(item)
		dv, err := get(it.id)
		if err != nil {
			return err
		}
		if dv != unreachable && dv <= it.depth {
			continue
		}
		if err := remember(it.id); err != nil {
			return err
		}
		cur[it.id] = it.depth
		children, err := u.q.Children(ctx, it.id)
		if err != nil {
			return err
		}
		for _, w := range children {
			if dw, err := get(w); err != nil {
				return err
			} else if dw == unreachable || dw > it.depth+1 {
				heap.Push(settle, item{w, it.depth + 1})
			}
		}
	}
	for id, was := range orig {
		now := cur[id]
		if now == was {
			continue
		}
		if err := u.setDepth(ctx, id, now); err != nil {
			return err
		}
		if (now == unreachable) != (was == unreachable) {
			u.dirtyFiles[id] = true
		}
	}
	return nil
}

func (u *update) setDepth(ctx context.Context, id int64, d int) error {
	return u.q.SetDepth(ctx, id, d)
}

// reachAll computes every depth again from index (0: no index.md).
func (u *update) reachAll(ctx context.Context, index int64) error {
	u.relintAll = true
	if err := u.q.ClearDepths(ctx); err != nil {
		return err
	}
	if index == 0 {
		return nil
	}
	edges, err := u.q.Edges(ctx)
	if err != nil {
		return err
	}
	for id, d := range bfs(index, edges) {
		if err := u.setDepth(ctx, id, d); err != nil {
			return err
		}
	}
	return nil
}

// bfs returns the depth of every node reachable from root.
func bfs(root int64, edges map[int64][]int64) map[int64]int {
	depth := map[int64]int{root: 0}
	queue := []int64{root}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range edges[v] {
			if _, seen := depth[w]; !seen {
				depth[w] = depth[v] + 1
				queue = append(queue, w)
			}
		}
	}
	return depth
}

type item struct {
	id    int64
	depth int
}

// depthQueue is a min-heap of items by depth, then id.
type depthQueue []item

func (q depthQueue) Len() int { return len(q) }
func (q depthQueue) Less(i, j int) bool {
	if q[i].depth != q[j].depth {
		return q[i].depth < q[j].depth
	}
	return q[i].id < q[j].id
}
func (q depthQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *depthQueue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *depthQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}
