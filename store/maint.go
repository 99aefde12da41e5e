package store

import (
	"context"
	"fmt"
	"time"

	"cairn"
)

// GCOptions adjust garbage collection. The zero value keeps a grace period
// of one hour.
type GCOptions struct {
	// Grace spares unreachable objects written less than Grace ago, and
	// treats ref values logged less than Grace ago as still reachable, so a
	// running import or a reader of an old head is never cut short.
	// Default one hour; a negative value means no grace at all (safe only
	// when no other cairn process is writing).
	Grace time.Duration
	// DryRun counts what would be deleted and deletes nothing.
	DryRun bool
}

// GCStats reports a garbage collection.
type GCStats struct {
	Reachable int   `json:"reachable"`
	Deleted   int   `json:"deleted"`
	Bytes     int64 `json:"bytes"` // uncompressed bytes of the deleted objects
}

// GC deletes the objects that no branch, tag, pin or recent ref-log entry
// reaches. History is never collected: every ancestor of a ref is reachable.
func (s *Store) GC(ctx context.Context, opts *GCOptions) (GCStats, error) {
	if opts == nil {
		opts = &GCOptions{}
	}
	grace := opts.Grace
	if grace == 0 {
		grace = time.Hour
	}
	start := s.now()
	cutoff := start.Add(-grace)
	roots, err := s.roots(ctx, grace >= 0, cutoff)
	if err != nil {
		return GCStats{}, err
	}
	marked := make(map[cairn.Hash]bool)
	for _, r := range roots {
		if err := s.mark(ctx, r, marked); err != nil {
			return GCStats{}, err
		}
	}
	var stats GCStats
	stats.Reachable = len(marked)
	var doomed []cairn.Hash
	err = s.b.Objects(ctx, func(o cairn.ObjectInfo) error {
		if !marked[o.Hash] && (grace < 0 || o.Created.Before(cutoff)) {
			doomed = append(doomed, o.Hash)
			stats.Bytes += o.Size
		}
		return nil
	})
	if err != nil {
		return GCStats{}, err
	}
	stats.Deleted = len(doomed)
	s.point("gc:marked")
	if opts.DryRun || len(doomed) == 0 {
		return stats, nil
	}
	for i := 0; i < len(doomed); i += 1000 {
		if err := s.b.DeleteObjects(ctx, doomed[i:min(i+1000, len(doomed))]); err != nil {
			return stats, fmt.Errorf("gc: delete objects: %w", err)
		}
		s.point("gc:deleted-batch")
	}
	for _, h := range doomed {
		s.nodes.Remove(h)
		s.commits.Remove(h)
	}
	s.log.InfoContext(ctx, "garbage collected", "deleted", stats.Deleted, "reachable", stats.Reachable)
	return stats, nil
}

// roots returns the hashes garbage collection and verification start from:
// every ref, every pin, and, with withLog, both sides of the ref-log entries
// newer than since.
func (s *Store) roots(ctx context.Context, withLog bool, since time.Time) ([]cairn.Hash, error) {
	var roots []cairn.Hash
	refs, err := s.b.Refs(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		roots = append(roots, r.Hash)
	}
	pins, err := s.b.Pins(ctx, s.now())
	if err != nil {
		return nil, err
	}
	for _, p := range pins {
		roots = append(roots, p.Hash)
	}
	if !withLog {
		return roots, nil
	}
	log, err := s.b.RefLog(ctx, "", since)
	if err != nil {
		return nil, err
	}
	for _, e := range log {
		for _, h := range []cairn.Hash{e.Old, e.New} {
			if !h.IsZero() {
				roots = append(roots, h)
			}
		}
	}
	return roots, nil
}

// mark adds h and everything it reaches to marked. h may be a commit, a
// tree node or a blob. Parts already marked are not walked again.
func (s *Store) mark(ctx context.Context, h cairn.Hash, marked map[cairn.Hash]bool) error {
	stack := []cairn.Hash{h}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if marked[h] || h == EmptyTree {
			continue
		}
		obj, err := s.b.GetObject(ctx, h)
		if err != nil {
			if cairn.ErrorCode(err) == cairn.ENOTFOUND {
				// A purged blob is still stored (its hash stays).
				marked[h] = true
				continue
			}
			return err
		}
		marked[h] = true
		switch obj.Kind {
		case cairn.KindCommit:
			c, err := decodeCommit(h, obj.Data)
			if err != nil {
				return err
			}
			stack = append(stack, c.Tree)
			stack = append(stack, c.Parents...)
		case cairn.KindNode:
			n, err := decodeNode(h, obj.Data)
			if err != nil {
				return err
			}
			for _, it := range n.items {
				if n.level == 0 {
					marked[it.hash] = true
				} else {
					stack = append(stack, it.hash)
				}
			}
		}
	}
	return nil
}

// Purge removes the content of a blob from the database, as for a leaked
// secret or a takedown request, and records who did it and why. The hash
// stays in every tree that names it; reading the content afterwards gives an
// error wrapping cairn.ErrPurged. Only file contents can be purged.
func (s *Store) Purge(ctx context.Context, h cairn.Hash, p cairn.Principal, reason string) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if reason == "" {
		return cairn.Errorf(cairn.EINVALID, "a purge needs a reason").WithHint("Say why, e.g. --reason \"leaked API key\"")
	}
	obj, err := s.b.GetObject(ctx, h)
	switch {
	case err != nil && cairn.ErrorCode(err) == cairn.ENOTFOUND && isPurged(err):
		return nil
	case err != nil:
		return err
	case obj.Kind != cairn.KindBlob:
		return cairn.Errorf(cairn.EINVALID, "object %s is a %s; only file contents can be purged", h.Short(), obj.Kind)
	}
	s.point("purge:start")
	return s.b.Purge(ctx, cairn.Purge{Hash: h, Principal: p, Reason: reason, Time: s.now().UTC()})
}

// PurgePath purges the content that path has at a revision and returns the
// purged blob's hash.
func (s *Store) PurgePath(ctx context.Context, rev, path string, p cairn.Principal, reason string) (cairn.Hash, error) {
	c, err := s.Resolve(ctx, rev)
	if err != nil {
		return cairn.Hash{}, err
	}
	tree, err := s.treeOf(ctx, c)
	if err != nil {
		return cairn.Hash{}, err
	}
	e, err := s.Get(ctx, tree, path)
	if err != nil {
		return cairn.Hash{}, err
	}
	return e.Blob, s.Purge(ctx, e.Blob, p, reason)
}
