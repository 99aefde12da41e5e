package merge

// This file holds a small hand-written Myers diff over lines. The libraries
// at hand do not fit a merge:
//
//   - github.com/aymanbagabas/go-udiff/lcs (a copy of
//     golang.org/x/tools/internal/diff/lcs) gives line-level scripts, but
//     stops searching at a fixed, unexported depth of about 100 edits and
//     then returns a non-minimal script; in a merge that widens hunks and
//     turns unrelated edits into spurious conflicts. It also panics on
//     internal inconsistencies.
//   - github.com/sergi/go-diff bounds its work by a wall-clock deadline, so
//     a merge result would depend on machine load, and its line mode encodes
//     lines as runes, with a cap near 1.1 million distinct lines and open
//     correctness bugs (sergi/go-diff#140).
//
// A merge needs a minimal, deterministic script whose work bound depends
// only on the input, which is what this one provides: the linear-space
// bisection of Myers' "An O(ND) Difference Algorithm" (1986), after
// stripping the common prefix and suffix, with a budget on the steps taken.

import "bytes"

// maxDiffCost bounds the steps (diagonals visited plus lines compared) one
// diff may take. Past it, each region still to be compared is reported as
// replaced wholesale. 1<<24 steps take a few hundred milliseconds at most:
// enough for a minimal script of thousands of edits in a page. Lines new on
// one side cost nothing (see matchLines), so even a 10 MB file with many
// edits rarely comes near the budget.
const maxDiffCost = 1 << 24

// matchLines diffs a against b and returns, for each line of a, the index of
// the line of b it is kept as, or -1 when the edit script deletes it. The
// kept lines form a longest common subsequence unless the work budget ran
// out. Lines are compared byte for byte, line endings included.
func matchLines(a, b [][]byte) []int {
	match := make([]int, len(a))
	p := 0
	for p < len(a) && p < len(b) && bytes.Equal(a[p], b[p]) {
		match[p] = p
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && bytes.Equal(a[len(a)-1-s], b[len(b)-1-s]) {
		match[len(a)-1-s] = len(b) - 1 - s
		s++
	}
	midA, midB := a[p:len(a)-s], b[p:len(b)-s]
	for i := range midA {
		match[p+i] = -1
	}
	if len(midA) == 0 || len(midB) == 0 {
		return match
	}

	// Compare small integers instead of lines, and leave out the lines that
	// occur on one side only: they cannot be kept, so the script is as short
	// without them, and unrelated texts cost no search at all.
	ids := make(map[string]int32) // no size hint: lines often repeat
	idsA := make([]int32, len(midA))
	for i, l := range midA {
		id, ok := ids[string(l)]
		if !ok {
			id = int32(len(ids))
			ids[string(l)] = id
		}
		idsA[i] = id
	}
	inB := make([]bool, len(ids))
	d := &differ{
		a:      make([]int32, 0, len(midA)),
		b:      make([]int32, 0, len(midB)),
		indexA: make([]int, 0, len(midA)),
		indexB: make([]int, 0, len(midB)),
		match:  match,
		offset: p,
		cost:   maxDiffCost,
	}
	for j, l := range midB {
		if id, ok := ids[string(l)]; ok {
			inB[id] = true
			d.b = append(d.b, id)
			d.indexB = append(d.indexB, j)
		}
	}
	for i, id := range idsA {
		if inB[id] {
			d.a = append(d.a, id)
			d.indexA = append(d.indexA, i)
		}
	}
	d.compare(0, len(d.a), 0, len(d.b))
	return match
}

// differ holds the state of one diff.
type differ struct {
	a, b           []int32 // the lines to compare, as interned ids
	indexA, indexB []int   // the index of each of those lines in the middle of a or b
	match          []int   // the result
	offset         int     // the length of the common prefix, before the middle
	cost           int     // steps left in the budget
	v1, v2         []int   // scratch for bisect
}

func (d *differ) keep(x, y int) {
	d.match[d.offset+d.indexA[x]] = d.offset + d.indexB[y]
}

// compare records a minimal script for a[a0:a1] against b[b0:b1].
func (d *differ) compare(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		d.keep(a0, b0)
		a0, b0 = a0+1, b0+1
	}
	for a0 < a1 && b0 < b1 && d.a[a1-1] == d.b[b1-1] {
		d.keep(a1-1, b1-1)
		a1, b1 = a1-1, b1-1
	}
	d.cost -= (a1 - a0) + (b1 - b0)
	if a0 == a1 || b0 == b1 || d.cost < 0 {
		return
	}
	x, y, ok := d.bisect(a0, a1, b0, b1)
	if !ok || x == a0 && y == b0 || x == a1 && y == b1 {
		return // no common line found within budget: one replaced region
	}
	d.compare(a0, x, b0, y)
	d.compare(x, a1, y, b1)
}

// bisect finds the middle snake of a[a0:a1] against b[b0:b1] by running
// Myers' greedy search forward from the top-left corner and backward from the
// bottom-right corner until they overlap, and returns the point where the
// sequences can be split into two independent halves. It reports false when
// the budget runs out first.
func (d *differ) bisect(a0, a1, b0, b1 int) (x, y int, ok bool) {
	a, b := d.a[a0:a1], d.b[b0:b1]
	n, m := len(a), len(b)
	maxD := (n + m + 1) / 2
	// Each round d costs at least 2d+2 steps, so the budget caps d.
	for limit := 1; limit < maxD; limit *= 2 {
		if limit*limit > d.cost {
			maxD = limit
			break
		}
	}
	off := maxD + 1
	size := 2*maxD + 3
	if cap(d.v1) < size {
		d.v1 = make([]int, size)
		d.v2 = make([]int, size)
	}
	v1, v2 := d.v1[:size], d.v2[:size]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0 // the forward path is the one to meet the reverse
	var k1start, k1end, k2start, k2end int
	for D := 0; D < maxD; D++ {
		d.cost -= 2*D + 2
		if d.cost < 0 {
			return 0, 0, false
		}
		for k1 := -D + k1start; k1 <= D-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -D || k1 != D && v1[i-1] < v1[i+1] {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			start := x1
			for x1 < n && y1 < m && a[x1] == b[y1] {
				x1, y1 = x1+1, y1+1
			}
			d.cost -= x1 - start
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2 // ran off the right
			case y1 > m:
				k1start += 2 // ran off the bottom
			case front:
				j := off + delta - k1
				if j >= 0 && j < size && v2[j] != -1 && x1 >= n-v2[j] {
					return a0 + x1, b0 + y1, true
				}
			}
		}
		for k2 := -D + k2start; k2 <= D-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -D || k2 != D && v2[i-1] < v2[i+1] {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			start := x2
			for x2 < n && y2 < m && a[n-1-x2] == b[m-1-y2] {
				x2, y2 = x2+1, y2+1
			}
			d.cost -= x2 - start
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2 // ran off the left
			case y2 > m:
				k2start += 2 // ran off the top
			case !front:
				j := off + delta - k2
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := v1[j]
					y1 := x1 - (j - off)
					if x1 >= n-x2 {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}
