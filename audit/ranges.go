package audit

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/records"
)

// rangeIndex finds the innermost push/pop range of a thread that encloses a
// span. Push/pop ranges nest on their thread, so each range's parent is the
// closest earlier range that still encloses its start.
type rangeIndex struct {
	byThread map[[2]int64]*threadRanges
}

type threadRanges struct {
	start  []int64
	end    []int64 // math.MaxInt64 for a range never popped
	name   []string
	parent []int32 // index of the enclosing range, -1 for none
	depth  []int32 // ranges enclosing it, 0 for none
	// up[k][i] is the 2^(k+1)-th ancestor of range i (-1 past the outermost)
	// and late[k][i] the latest end among i and its 2^(k+1)-1 nearest
	// ancestors: built where ranges nest deeper than linearDepth, so that a
	// span's innermost enclosing range is found in O(log depth) steps up
	// the chain rather than one step per level.
	up   [][]int32
	late [][]int64
}

// linearDepth is the nesting up to which innermost walks the chain of
// enclosing ranges one step at a time.
const linearDepth = 16

func newRangeIndex(rs []records.Range) *rangeIndex {
	ix := &rangeIndex{byThread: map[[2]int64]*threadRanges{}}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Start != rs[j].Start {
			return rs[i].Start < rs[j].Start
		}
		return rs[i].End > rs[j].End // the outer of two ranges pushed at once first
	})
	stacks := map[[2]int64][]int32{}
	for _, rg := range rs {
		k := [2]int64{rg.PID, rg.TID}
		t := ix.byThread[k]
		if t == nil {
			t = &threadRanges{}
			ix.byThread[k] = t
		}
		end := rg.End
		if rg.Open {
			end = 1<<63 - 1
		}
		st := stacks[k]
		for len(st) > 0 && t.end[st[len(st)-1]] < rg.Start {
			st = st[:len(st)-1]
		}
		p, d := int32(-1), int32(0)
		if len(st) > 0 {
			p = st[len(st)-1]
			d = t.depth[p] + 1
		}
		t.start = append(t.start, rg.Start)
		t.end = append(t.end, end)
		t.name = append(t.name, rg.Name)
		t.parent = append(t.parent, p)
		t.depth = append(t.depth, d)
		stacks[k] = append(st, int32(len(t.start)-1))
	}
	for _, t := range ix.byThread {
		t.lift()
	}
	return ix
}

// lift builds the jumps up the chain of enclosing ranges, where it is
// deeper than linearDepth.
func (t *threadRanges) lift() {
	deepest := int32(0)
	for _, d := range t.depth {
		deepest = max(deepest, d)
	}
	if deepest <= linearDepth {
		return
	}
	n := len(t.start)
	prevUp, prevLate := t.parent, t.end // one step: the parent, and i's own end
	for span := int32(1); span <= deepest; span *= 2 {
		up, late := make([]int32, n), make([]int64, n)
		for i := range n {
			late[i] = prevLate[i]
			if a := prevUp[i]; a >= 0 {
				up[i] = prevUp[a]
				late[i] = max(late[i], prevLate[a])
			} else {
				up[i] = -1
			}
		}
		t.up, t.late = append(t.up, up), append(t.late, late)
		prevUp, prevLate = up, late
	}
}

// innermost returns the name of the innermost range of thread (pid, tid)
// that encloses [start, end], or "".
func (ix *rangeIndex) innermost(pid, tid, start, end int64) string {
	t := ix.byThread[[2]int64{pid, tid}]
	if t == nil {
		return ""
	}
	// The last range pushed at or before start, then those enclosing it:
	// each starts no later, so the first that ends no earlier than end
	// encloses the span.
	i := int32(sort.Search(len(t.start), func(i int) bool { return t.start[i] > start }) - 1)
	for k := len(t.up) - 1; k >= 0 && i >= 0; k-- {
		if t.late[k][i] < end {
			i = t.up[k][i] // none of the 2^(k+1) ranges from i ends late enough
		}
	}
	for i >= 0 {
		if t.start[i] <= start && t.end[i] >= end {
			return t.name[i]
		}
		i = t.parent[i]
	}
	return ""
}
