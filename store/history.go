package store

import (
	"cmp"
	"container/heap"
	"context"
	"iter"
	"strconv"
	"strings"

	"cairn"
)

const revHint = "A revision is a branch (main), a tag (v1), a commit hash or a unique prefix of at least 4 hex digits, optionally followed by ~N (N-th first-parent ancestor) or ^N (N-th parent)."

// Resolve turns a revision into a commit hash: a branch name, a tag name, a
// full hash or a unique prefix of at least 4 hex digits, followed by any
// number of ~N (the N-th first-parent ancestor; ~ alone is ~1) and ^N (the
// N-th parent; ^ alone is ^1) suffixes. Errors: EINVALID for a malformed
// revision or an ambiguous prefix, ENOTFOUND for one that names nothing.
func (s *Store) Resolve(ctx context.Context, rev string) (cairn.Hash, error) {
	base, rest := rev, ""
	if i := strings.IndexAny(rev, "~^"); i >= 0 {
		base, rest = rev[:i], rev[i:]
	}
	if base == "" {
		return cairn.Hash{}, cairn.Errorf(cairn.EINVALID, "revision %q names no commit", rev).WithHint(revHint)
	}
	// The whole revision is read before any commit is: a malformed one is
	// EINVALID whatever the history holds.
	type step struct {
		op byte
		n  int
	}
	var steps []step
	for rest != "" {
		op := rest[0]
		if op != '~' && op != '^' {
			return cairn.Hash{}, cairn.Errorf(cairn.EINVALID, "revision %q: unexpected %q", rev, rest).WithHint(revHint)
		}
		rest = rest[1:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n := 1
		if j > 0 {
			var err error
			if n, err = strconv.Atoi(rest[:j]); err != nil || n > 1<<20 {
				return cairn.Hash{}, cairn.Errorf(cairn.EINVALID, "revision %q: bad number", rev).WithHint(revHint)
			}
		}
		rest = rest[j:]
		steps = append(steps, step{op, n})
	}
	h, err := s.resolveBase(ctx, base)
	if err != nil {
		return cairn.Hash{}, err
	}
	for _, st := range steps {
		if st.op == '^' {
			if st.n == 0 {
				continue
			}
			c, err := s.ReadCommit(ctx, h)
			if err != nil {
				return cairn.Hash{}, err
			}
			if st.n > len(c.Parents) {
				return cairn.Hash{}, cairn.Errorf(cairn.ENOTFOUND, "revision %q: commit %s has %d parents", rev, h.Short(), len(c.Parents))
			}
			h = c.Parents[st.n-1]
			continue
		}
		for range st.n {
			c, err := s.ReadCommit(ctx, h)
			if err != nil {
				return cairn.Hash{}, err
			}
			if len(c.Parents) == 0 {
				return cairn.Hash{}, cairn.Errorf(cairn.ENOTFOUND, "revision %q goes back past the first commit %s", rev, h.Short())
			}
			h = c.Parents[0]
		}
	}
	return h, nil
}

func (s *Store) resolveBase(ctx context.Context, base string) (cairn.Hash, error) {
	if r, err := s.b.Ref(ctx, branchPrefix+base); err == nil {
		return r.Hash, nil
	} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return cairn.Hash{}, err
	}
	if r, err := s.b.Ref(ctx, tagPrefix+base); err == nil {
		return r.Hash, nil
	} else if cairn.ErrorCode(err) != cairn.ENOTFOUND {
		return cairn.Hash{}, err
	}
	if !isHex(base) || len(base) < 4 || len(base) > 64 {
		return cairn.Hash{}, cairn.Errorf(cairn.ENOTFOUND, "no branch, tag or commit is named %q", base).WithHint("Try: cairn branch; cairn tag; cairn log")
	}
	hs, err := s.b.ObjectsByPrefix(ctx, cairn.KindCommit, strings.ToLower(base), 2)
	if err != nil {
		return cairn.Hash{}, err
	}
	switch len(hs) {
	case 0:
		return cairn.Hash{}, cairn.Errorf(cairn.ENOTFOUND, "no commit starts with %s", base).WithHint("Try: cairn log")
	case 1:
		return hs[0], nil
	}
	return cairn.Hash{}, cairn.Errorf(cairn.EINVALID, "%s is the start of more than one commit", base).WithHint("Give more hex digits.")
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// LogOptions filter [Store.Log].
type LogOptions struct {
	// FirstParent follows only first parents (the branch's own line).
	FirstParent bool
	// Path keeps only commits that changed this path relative to their
	// first parent (for a root commit: that added it).
	Path string
	// Limit stops after this many commits; 0 means no limit.
	Limit int
}

// Log returns the history reachable from a commit, newest first by commit
// time (ties broken by hash), each commit once.
func (s *Store) Log(ctx context.Context, from cairn.Hash, opts LogOptions) iter.Seq2[*cairn.Commit, error] {
	return func(yield func(*cairn.Commit, error) bool) {
		var path, key string
		if opts.Path != "" {
			p, err := cairn.CleanPath(opts.Path)
			if err != nil {
				yield(nil, err)
				return
			}
			path, key = p, cairn.FoldPath(p)
		}
		q := &commitQueue{}
		seen := map[cairn.Hash]bool{from: true}
		c, err := s.ReadCommit(ctx, from)
		if err != nil {
			yield(nil, err)
			return
		}
		heap.Push(q, c)
		n := 0
		for q.Len() > 0 {
			c := heap.Pop(q).(*cairn.Commit)
			parents := c.Parents
			if opts.FirstParent && len(parents) > 1 {
				parents = parents[:1]
			}
			for _, p := range parents {
				if seen[p] {
					continue
				}
				seen[p] = true
				pc, err := s.ReadCommit(ctx, p)
				if err != nil {
					yield(nil, err)
					return
				}
				heap.Push(q, pc)
			}
			if path != "" {
				changed, err := s.touches(ctx, c, key, path)
				if err != nil {
					yield(nil, err)
					return
				}
				if !changed {
					continue
				}
			}
			if !yield(c, nil) {
				return
			}
			if n++; opts.Limit > 0 && n >= opts.Limit {
				return
			}
		}
	}
}

// touches reports whether c changed the file at path relative to its first
// parent.
func (s *Store) touches(ctx context.Context, c *cairn.Commit, key, path string) (bool, error) {
	cur, ok, err := lookup(ctx, s, c.Tree, key)
	if err != nil {
		return false, err
	}
	if !ok || cur.filePath() != path {
		cur = item{}
	}
	if len(c.Parents) == 0 {
		return !cur.hash.IsZero(), nil
	}
	p, err := s.ReadCommit(ctx, c.Parents[0])
	if err != nil {
		return false, err
	}
	old, ok, err := lookup(ctx, s, p.Tree, key)
	if err != nil {
		return false, err
	}
	if !ok || old.filePath() != path {
		old = item{}
	}
	return old != cur, nil
}

// IsAncestor reports whether a is b or an ancestor of b.
func (s *Store) IsAncestor(ctx context.Context, a, b cairn.Hash) (bool, error) {
	base, err := s.MergeBase(ctx, a, b)
	if err != nil {
		return false, err
	}
	return base == a, nil
}

// MergeBase returns the best common ancestor of two commits: one that is
// not an ancestor of another common ancestor. With several (criss-cross
// histories) it returns the newest, ties broken by hash. No common ancestor
// gives the zero hash.
func (s *Store) MergeBase(ctx context.Context, a, b cairn.Hash) (cairn.Hash, error) {
	if a == b {
		return a, nil
	}
	const (
		fromA = 1 << iota
		fromB
		stale
	)
	flags := map[cairn.Hash]int{}
	q := &commitQueue{}
	for _, h := range []cairn.Hash{a, b} {
		c, err := s.ReadCommit(ctx, h)
		if err != nil {
			return cairn.Hash{}, err
		}
		heap.Push(q, c)
	}
	flags[a], flags[b] = fromA, fromB
	var candidates []*cairn.Commit
	// Paint ancestors of a and b; a commit reached from both is a common
	// ancestor, and its own ancestors are marked stale. Stop when only stale
	// commits remain queued.
	for q.Len() > 0 && !allStale(q, flags, stale) {
		c := heap.Pop(q).(*cairn.Commit)
		f := flags[c.Hash]
		if f&(fromA|fromB) == fromA|fromB && f&stale == 0 {
			candidates = append(candidates, c)
			f |= stale
			flags[c.Hash] = f
		}
		for _, p := range c.Parents {
			pf, seen := flags[p]
			nf := pf | f
			if seen && nf == pf {
				continue
			}
			flags[p] = nf
			pc, err := s.ReadCommit(ctx, p)
			if err != nil {
				return cairn.Hash{}, err
			}
			heap.Push(q, pc)
		}
	}
	// Drop candidates that are ancestors of other candidates.
	var best *cairn.Commit
	for _, c := range candidates {
		redundant := false
		for _, o := range candidates {
			if o == c {
				continue
			}
			anc, err := s.reaches(ctx, o.Hash, c.Hash)
			if err != nil {
				return cairn.Hash{}, err
			}
			if anc {
				redundant = true
				break
			}
		}
		if !redundant && (best == nil || newer(c, best)) {
			best = c
		}
	}
	if best == nil {
		return cairn.Hash{}, nil
	}
	return best.Hash, nil
}

func allStale(q *commitQueue, flags map[cairn.Hash]int, stale int) bool {
	for _, c := range *q {
		if flags[c.Hash]&stale == 0 {
			return false
		}
	}
	return true
}

// reaches reports whether target is an ancestor of from (or equal).
func (s *Store) reaches(ctx context.Context, from, target cairn.Hash) (bool, error) {
	seen := map[cairn.Hash]bool{from: true}
	stack := []cairn.Hash{from}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == target {
			return true, nil
		}
		c, err := s.ReadCommit(ctx, h)
		if err != nil {
			return false, err
		}
		for _, p := range c.Parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false, nil
}

func newer(a, b *cairn.Commit) bool {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c > 0
	}
	return strings.Compare(a.Hash.String(), b.Hash.String()) > 0
}

// commitQueue is a max-heap of commits by time, then hash.
type commitQueue []*cairn.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	if c := q[i].Time.Compare(q[j].Time); c != 0 {
		return c > 0
	}
	return cmp.Compare(q[i].Hash.String(), q[j].Hash.String()) > 0
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*cairn.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
