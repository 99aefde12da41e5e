package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"cairn"
)

// maxItemBytes is the longest encoding of one item with an ASCII name: a
// key and a path of 1,024 bytes each, their lengths, the mode, a hash and a
// size.
const maxItemBytes = 2*(1024+2) + 1 + 32 + 10

// boundlessPaths returns n paths whose keys are never a node boundary at
// any level (keyLevel 0), so that only the size bound can cut nodes. Their
// names are long (segments of up to 255 bytes, paths of up to nameLen
// bytes), and every third file name is in mixed case, so its leaf item
// holds both key and path.
func boundlessPaths(rng *rand.Rand, n, nameLen int) []string {
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var sb strings.Builder
		want := 20 + rng.IntN(max(nameLen-30, 1))
		for sb.Len() < want {
			seg := fmt.Sprintf("%s%d", strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(min(200, want))), rng.IntN(1000))
			if sb.Len()+len(seg)+4 > nameLen {
				break
			}
			sb.WriteString(seg)
			sb.WriteByte('/')
		}
		name := "n"
		if rng.IntN(3) == 0 {
			name = "N" // the file name in mixed case, never a folder's
		}
		p := fmt.Sprintf("%s%s%d.md", sb.String(), name, rng.IntN(1_000_000))
		if len(p) > nameLen || seen[cairn.FoldPath(p)] || keyLevel(cairn.FoldPath(p)) != 0 {
			continue
		}
		if _, err := cairn.CleanPath(p); err != nil {
			continue
		}
		seen[cairn.FoldPath(p)] = true
		out = append(out, p)
	}
	return out
}

// TestTree_NodeSizeBound builds trees whose keys are never boundaries:
// without a bound they would be one leaf of megabytes. Every node must stay
// within maxNodeBytes and one item.
func TestTree_NodeSizeBound(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		files, nameLen int
	}{{6000, 200}, {2000, 1024}} {
		b := s.NewBatch()
		var changes []FileChange
		for _, p := range boundlessPaths(rng, tc.files, tc.nameLen) {
			changes = append(changes, FileChange{Path: p, Data: []byte(p)})
		}
		tree, err := b.BuildTree(ctx, changes)
		if err != nil {
			t.Fatal(err)
		}
		biggest := 0
		var walk func(h cairn.Hash)
		walk = func(h cairn.Hash) {
			n, err := b.node(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			biggest = max(biggest, len(n.enc))
			if n.level > 0 {
				for _, it := range n.items {
					walk(it.hash)
				}
			}
		}
		walk(tree)
		if limit := maxNodeBytes + maxItemBytes + 20; biggest > limit {
			t.Errorf("%d files with names of up to %d bytes: the biggest node is %d bytes, over the bound of %d", tc.files, tc.nameLen, biggest, limit)
		}
		checkCanonical(t, b, tree, true)
	}
}

// TestVerify_NodeOverBound: Verify reports a leaf that passes the size
// bound without a cut, as a tree made before the bound could have one, and
// finds nothing wrong with the tree of the same files cut by the bound.
func TestVerify_NodeOverBound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var items []item
	var changes []FileChange
	for _, p := range boundlessPaths(rand.New(rand.NewPCG(3, 3)), 3000, 200) {
		items = append(items, item{key: cairn.FoldPath(p), hash: BlobHash([]byte(p)), size: uint64(len(p))})
		if k := cairn.FoldPath(p); k != p {
			items[len(items)-1].path = p
		}
		changes = append(changes, FileChange{Path: p, Data: []byte(p)})
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.key, b.key) })
	for _, tc := range []struct {
		name     string
		tree     func(b *Batch) cairn.Hash
		problems bool
	}{
		{"OneLeaf", func(b *Batch) cairn.Hash {
			for _, ch := range changes {
				b.PutBlob(ch.Data)
			}
			n := newNode(0, items)
			b.putNode(n)
			return n.hash
		}, true},
		{"Cut", func(b *Batch) cairn.Hash {
			tree, err := b.BuildTree(ctx, changes)
			if err != nil {
				t.Fatal(err)
			}
			return tree
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			b := s.NewBatch()
			tree := tc.tree(b)
			if _, err := s.Commit(ctx, b, CommitRequest{Branch: "main", Tree: tree, Principal: cairn.PrincipalSystem, Message: "files"}); err != nil {
				t.Fatal(err)
			}
			rep, err := s.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rep.Problems) > 0; got != tc.problems {
				t.Errorf("Verify found problems %v, want %v: %v", got, tc.problems, rep.Problems)
			}
		})
	}
}

// TestTree_HistoryIndependent edits trees of thousands of files, many of
// them with keys that are never boundaries and long names, in random
// orders of inserts, updates and deletes: the root must always be the root
// of the tree built at once from the same files, and canonical.
func TestTree_HistoryIndependent(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	rounds, files := 2, 3000
	if testing.Short() {
		rounds, files = 1, 1000
	}
	for seed := range uint64(rounds) {
		checkHistoryIndependent(t, s, seed, files, 32)
	}
}

// FuzzTreeLarge is TestTree_HistoryIndependent with the seed, the number
// of files and the largest batch taken from the fuzzer's input.
func FuzzTreeLarge(f *testing.F) {
	f.Add(uint64(0), uint16(1500), uint8(0))
	f.Add(uint64(1), uint16(3000), uint8(63))
	f.Add(uint64(2), uint16(6000), uint8(255))
	s := newTestStore(f)
	f.Fuzz(func(t *testing.T, seed uint64, files uint16, batch uint8) {
		// Up to 5,000 files; the fewer edits a batch may hold, the fewer
		// files, so that an input runs in seconds.
		n := int(files)%5000 + 1
		checkHistoryIndependent(t, s, seed, n, max(int(batch)+1, n/300))
	})
}

// checkHistoryIndependent inserts files in random batches (of up to batch
// edits), changes and deletes some, deletes and re-adds others, and
// compares the root with a tree built at once after each phase.
func checkHistoryIndependent(t *testing.T, s *Store, seed uint64, files, batch int) {
	t.Helper()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(seed, 7))
	paths := boundlessPaths(rng, files*2/3, 1024)
	for i := len(paths); i < files; i++ {
		paths = append(paths, fmt.Sprintf("notes/%c/page-%d.md", 'a'+rng.IntN(3), i))
	}
	rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	b := s.NewBatch()
	want := map[string]string{}
	tree := EmptyTree
	check := func(phase string) {
		t.Helper()
		var all []FileChange
		for _, p := range slices.Sorted(maps.Keys(want)) {
			all = append(all, FileChange{Path: p, Data: []byte(want[p])})
		}
		built, err := b.BuildTree(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		if tree != built {
			t.Fatalf("seed %d, %s: incremental root %s != built root %s for %d files", seed, phase, tree.Short(), built.Short(), len(want))
		}
		checkCanonical(t, b, tree, true)
	}
	apply := func(ops []FileChange) {
		t.Helper()
		for edits := 0; len(ops) > 0; edits++ {
			n := min(len(ops), 1+rng.IntN(batch))
			var err error
			if tree, err = b.Edit(ctx, tree, ops[:n]); err != nil {
				t.Fatalf("seed %d: Edit: %v", seed, err)
			}
			ops = ops[n:]
			if edits%16 == 15 {
				b = compact(b, tree)
			}
		}
	}
	var ops []FileChange
	for _, p := range paths {
		want[p] = p
		ops = append(ops, FileChange{Path: p, Data: []byte(p)})
	}
	apply(ops)
	check("inserts")
	// Changes (which change sizes, so the size bound moves) and deletions,
	// in a random order.
	ops = ops[:0]
	for _, p := range paths {
		switch rng.IntN(4) {
		case 0:
			delete(want, p)
			ops = append(ops, FileChange{Path: p, Delete: true})
		case 1:
			want[p] = strings.Repeat("changed ", 1+rng.IntN(300))
			ops = append(ops, FileChange{Path: p, Data: []byte(want[p])})
		}
	}
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	apply(dedupe(ops))
	check("changes and deletions")
	// Delete nearly everything in a random order, then add it all back.
	ops = ops[:0]
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if rng.IntN(10) > 0 {
			delete(want, p)
			ops = append(ops, FileChange{Path: p, Delete: true})
		}
	}
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	apply(ops)
	check("deletions")
	ops = ops[:0]
	for _, p := range paths {
		if _, ok := want[p]; !ok {
			want[p] = p
			ops = append(ops, FileChange{Path: p, Data: []byte(p)})
		}
	}
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	apply(ops)
	check("re-adds")
}

// compact returns a batch holding only what tree reaches of b: a test
// that edits one batch thousands of times would otherwise keep every node
// it ever made.
func compact(b *Batch, tree cairn.Hash) *Batch {
	nb := b.s.NewBatch()
	for _, o := range b.reachable(tree) {
		if o.Kind == cairn.KindNode {
			nb.putNode(b.nodes[o.Hash])
		} else {
			nb.blobs[o.Hash] = o.Data
		}
	}
	return nb
}

// dedupe keeps the last change of each path: a batch names a path once.
func dedupe(ops []FileChange) []FileChange {
	last := map[string]int{}
	for i, op := range ops {
		last[op.Path] = i
	}
	var out []FileChange
	for i, op := range ops {
		if last[op.Path] == i {
			out = append(out, op)
		}
	}
	return out
}
