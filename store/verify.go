package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"cairn"
)

// VerifyReport is the result of [Store.Verify].
type VerifyReport struct {
	Commits  int      `json:"commits"`
	Nodes    int      `json:"nodes"`
	Blobs    int      `json:"blobs"`
	Purged   int      `json:"purged"`
	Problems []string `json:"problems"`
}

// OK reports whether no problem was found.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

func isPurged(err error) bool { return errors.Is(err, cairn.ErrPurged) }

// Verify reads every object that a ref or a pin reaches,
// straight from the backend, and checks it: its hash matches its content;
// commits and tree nodes are in canonical encoding; tree nodes are chunked
// as the format requires (levels, counts, key order, boundaries and the
// size bound, keys that are the case folds of clean paths); every blob a
// tree names exists with the recorded size. Purged blobs are counted, not reported. The error
// is for failures to read; what is wrong with the data is in Problems.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	v := &verifier{s: s, rep: &VerifyReport{}, nodes: map[cairn.Hash]int{}, seen: map[cairn.Hash]bool{}}
	roots, err := s.roots(ctx, false, time.Time{})
	if err != nil {
		return nil, err
	}
	for _, h := range roots {
		if err := v.object(ctx, h); err != nil {
			return nil, err
		}
	}
	return v.rep, nil
}

type verifier struct {
	s     *Store
	rep   *VerifyReport
	seen  map[cairn.Hash]bool // commits and blobs checked
	nodes map[cairn.Hash]int  // tree nodes checked: 1 as rightmost, 2 as inner
}

func (v *verifier) problem(format string, args ...any) {
	v.rep.Problems = append(v.rep.Problems, fmt.Sprintf(format, args...))
}

// object checks a root: a commit and its history, or a tree.
func (v *verifier) object(ctx context.Context, h cairn.Hash) error {
	stack := []cairn.Hash{h}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v.seen[h] || v.nodes[h] > 0 {
			continue
		}
		obj, ok, err := v.load(ctx, h)
		if err != nil || !ok {
			return err
		}
		switch obj.Kind {
		case cairn.KindCommit:
			v.seen[h] = true
			v.rep.Commits++
			c, err := decodeCommit(h, obj.Data)
			if err != nil {
				v.problem("%v", err)
				continue
			}
			if !bytes.Equal(encodeCommit(c), obj.Data) {
				v.problem("commit %s is not in canonical encoding", h.Short())
			}
			if err := c.Principal.Validate(); err != nil {
				v.problem("commit %s: %v", h.Short(), err)
			}
			if err := v.tree(ctx, c.Tree, -1, true, h); err != nil {
				return err
			}
			stack = append(stack, c.Parents...)
		case cairn.KindNode:
			if err := v.tree(ctx, h, -1, true, cairn.Hash{}); err != nil {
				return err
			}
		case cairn.KindBlob:
			v.seen[h] = true
			v.rep.Blobs++
		}
	}
	return nil
}

// load reads an object from the backend and checks its hash. A missing
// object is a problem; a purged one is counted.
func (v *verifier) load(ctx context.Context, h cairn.Hash) (cairn.Object, bool, error) {
	obj, err := v.s.b.GetObject(ctx, h)
	if err != nil {
		switch {
		case isPurged(err):
			v.rep.Purged++
			v.seen[h] = true
			return obj, false, nil
		case cairn.ErrorCode(err) == cairn.ENOTFOUND:
			v.problem("object %s is missing", h)
			v.seen[h] = true
			return obj, false, nil
		}
		return obj, false, err
	}
	if got := objectHash(obj.Kind, obj.Data); got != h {
		v.problem("object %s: content hashes to %s", h, got)
		return obj, false, nil
	}
	return obj, true, nil
}

// tree checks the node h and its subtree. want is the expected level (-1 for
// a root), rightmost whether the node is the last at its level (its last key
// need not be a boundary).
func (v *verifier) tree(ctx context.Context, h cairn.Hash, want int, rightmost bool, commit cairn.Hash) error {
	if h == EmptyTree {
		return nil
	}
	state := 2
	if rightmost {
		state = 1
	}
	if v.nodes[h] >= state {
		return nil
	}
	first := v.nodes[h] == 0
	v.nodes[h] = state
	obj, ok, err := v.load(ctx, h)
	if err != nil || !ok {
		return err
	}
	if obj.Kind != cairn.KindNode {
		v.problem("object %s is a %s where a tree node belongs", h.Short(), obj.Kind)
		return nil
	}
	n, err := decodeNode(h, obj.Data)
	if err != nil {
		v.problem("%v", err)
		return nil
	}
	where := "tree node " + h.Short()
	if first {
		v.rep.Nodes++
		if !bytes.Equal(encodeNode(n.level, n.items), obj.Data) {
			v.problem("%s is not in canonical encoding", where)
		}
		if len(n.items) == 0 {
			v.problem("%s is empty", where)
		}
		if want < 0 && n.level > 0 && len(n.items) < 2 {
			v.problem("%s is a root with a single child", where)
		}
	}
	if want >= 0 && n.level != want {
		v.problem("%s has level %d; its parent expects %d", where, n.level, want)
		return nil
	}
	size := 0
	for i, it := range n.items {
		last := i == len(n.items)-1
		size += itemBytes(n.level, it)
		if cut := keyLevel(it.key) > n.level || size >= maxNodeBytes; !last && cut {
			v.problem("%s: key %q should end the node", where, it.key)
		} else if last && !rightmost && !cut {
			v.problem("%s: last key %q is not a boundary", where, it.key)
		}
		if !first {
			continue
		}
		if n.level > 0 {
			if err := v.child(ctx, it, n.level-1, rightmost && last, where, commit); err != nil {
				return err
			}
			continue
		}
		p := it.filePath()
		if clean, err := cairn.CleanPath(p); err != nil || clean != p {
			v.problem("%s: path %q is not clean", where, p)
		} else if cairn.FoldPath(p) != it.key || it.path == it.key {
			v.problem("%s: key %q does not match path %q", where, it.key, p)
		}
		if !v.seen[it.hash] {
			if err := v.blob(ctx, it); err != nil {
				return err
			}
		}
	}
	return nil
}

// child checks a child node against its parent's item.
func (v *verifier) child(ctx context.Context, it item, level int, rightmost bool, where string, commit cairn.Hash) error {
	if err := v.tree(ctx, it.hash, level, rightmost, commit); err != nil {
		return err
	}
	n, err := v.s.node(ctx, it.hash)
	if err != nil {
		if cairn.ErrorCode(err) == cairn.EINTERNAL || cairn.ErrorCode(err) == cairn.ENOTFOUND {
			return nil // reported by tree
		}
		return err
	}
	if len(n.items) > 0 && n.items[len(n.items)-1].key != it.key {
		v.problem("%s: child %s ends at %q, not %q", where, it.hash.Short(), n.items[len(n.items)-1].key, it.key)
	}
	if n.count() != it.size {
		v.problem("%s: child %s holds %d files, not %d", where, it.hash.Short(), n.count(), it.size)
	}
	return nil
}

func (v *verifier) blob(ctx context.Context, it item) error {
	obj, ok, err := v.load(ctx, it.hash)
	if err != nil || !ok {
		return err
	}
	v.seen[it.hash] = true
	v.rep.Blobs++
	switch {
	case obj.Kind != cairn.KindBlob:
		v.problem("%s names %s, a %s, as its content", it.filePath(), it.hash.Short(), obj.Kind)
	case uint64(len(obj.Data)) != it.size:
		v.problem("%s: content is %d bytes; the tree says %d", it.filePath(), len(obj.Data), it.size)
	}
	return nil
}
