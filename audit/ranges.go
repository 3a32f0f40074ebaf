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
}

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
		p := int32(-1)
		if len(st) > 0 {
			p = st[len(st)-1]
		}
		t.start = append(t.start, rg.Start)
		t.end = append(t.end, end)
		t.name = append(t.name, rg.Name)
		t.parent = append(t.parent, p)
		stacks[k] = append(st, int32(len(t.start)-1))
	}
	return ix
}

// innermost returns the name of the innermost range of thread (pid, tid)
// that encloses [start, end], or "".
func (ix *rangeIndex) innermost(pid, tid, start, end int64) string {
	t := ix.byThread[[2]int64{pid, tid}]
	if t == nil {
		return ""
	}
	i := int32(sort.Search(len(t.start), func(i int) bool { return t.start[i] > start }) - 1)
	for i >= 0 {
		if t.start[i] <= start && t.end[i] >= end {
			return t.name[i]
		}
		i = t.parent[i]
	}
	return ""
}
