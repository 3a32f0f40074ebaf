package replay

import (
	"math"
	"sort"

	"github.com/nsyscheck/nsyscheck/timeline"
)

// A region instance covers the calls of its process that start inside its
// range: one run of the timeline's ByStart order. Walking each instance's
// run costs the sum of the runs' lengths, which is the calls times the
// ranges where ranges nest around many calls (50,000 nested ranges around
// 600,000 calls: 3e10 steps a schedule). Past runWorkFactor steps a range,
// measureAll reads the runs through a runIndex instead: prefix sums and a
// tree of latest ends over ByStart, built once a schedule, so that an
// instance costs a few searches. Both ways give the same numbers: the
// sums are of integers, and each thread's busy time is worked out by the
// same rule (busyTime) wherever its calls overlap.

// runWorkFactor is the mean run length past which the runs are indexed.
const runWorkFactor = 64

// indexMode chooses how measureAll reads the runs: as the work asks, or
// one way always (for the tests that hold the two ways equal).
type indexMode int

const (
	indexAuto indexMode = iota
	indexNever
	indexAlways
)

// runOf returns the positions in ByStart of the calls of process pid that
// start within [start, end]: [lo, hi).
func runOf(tl *timeline.Timeline, pid, start, end int64) (lo, hi int) {
	bs := tl.ByStart
	lo = sort.Search(len(bs), func(k int) bool {
		c := bs[k]
		p := tl.PID(c)
		return p > pid || p == pid && tl.Calls.Start[c] >= start
	})
	hi = lo + sort.Search(len(bs)-lo, func(k int) bool {
		c := bs[lo+k]
		return tl.PID(c) != pid || tl.Calls.Start[c] > end
	})
	return lo, hi
}

// runsIndexed reports whether measureAll reads the runs of tl's range
// instances through a runIndex: as mode says, or, by itself, where the
// runs are longer than runWorkFactor calls on mean.
func runsIndexed(tl *timeline.Timeline, mode indexMode) bool {
	switch mode {
	case indexNever:
		return false
	case indexAlways:
		return true
	}
	limit := int64(runWorkFactor) * int64(len(tl.Ranges)+1)
	var work int64
	for _, r := range tl.Ranges {
		lo, hi := runOf(tl, tl.Threads[r.Thread].PID, r.Start, r.End)
		if work += int64(hi - lo); work > limit {
			return true
		}
	}
	return false
}

// runIndex answers an instance's sums over its run of calls in one
// schedule. Its slices are kept from one schedule to the next.
type runIndex struct {
	// copyNs, over, hold and pageable are prefix sums over ByStart: the
	// host-device copies' GPU time and the part a kernel overlapped, the
	// host-device copy calls' host time and the part of pageable ones.
	copyNs, over, hold, pageable []int64
	// latest is a tree of the latest op end of each call over ByStart.
	latest maxTree
	// threads holds, per thread that has ranges, its calls in ByStart
	// order (nil for a thread without).
	threads []*threadRun
}

// threadRun is one thread's calls in ByStart order: their positions there
// and, in the schedule indexed, their times. Where no call overlaps the one
// before it (disjoint), busy is the sum of the calls' times, prefix summed.
type threadRun struct {
	pos        []int32
	start, end []int64
	busy       []int64
	disjoint   bool
}

// index builds (or rebuilds into ix) the index of schedule s.
func (rg *regions) index(s *Schedule, ix *runIndex) *runIndex {
	tl := rg.tl
	bs := tl.ByStart
	n := len(bs)
	if ix == nil {
		ix = &runIndex{copyNs: make([]int64, n+1), over: make([]int64, n+1), hold: make([]int64, n+1),
			pageable: make([]int64, n+1), latest: make(maxTree, 2*n), threads: make([]*threadRun, len(tl.Threads))}
		for _, r := range tl.Ranges {
			if ix.threads[r.Thread] == nil {
				ix.threads[r.Thread] = &threadRun{}
			}
		}
		for k, c := range bs {
			if t := ix.threads[tl.Calls.Thread[c]]; t != nil {
				t.pos = append(t.pos, int32(k))
			}
		}
		for _, t := range ix.threads {
			if t != nil {
				t.start, t.end, t.busy = make([]int64, len(t.pos)), make([]int64, len(t.pos)), make([]int64, len(t.pos)+1)
			}
		}
	}
	leaves := ix.latest[n:]
	for k, c := range bs {
		latest, copyNs, over, hold, pageable := rg.callSums(s, c)
		ix.copyNs[k+1] = ix.copyNs[k] + copyNs
		ix.over[k+1] = ix.over[k] + over
		ix.hold[k+1] = ix.hold[k] + hold
		ix.pageable[k+1] = ix.pageable[k] + pageable
		leaves[k] = latest
	}
	ix.latest.build()
	for _, t := range ix.threads {
		if t == nil {
			continue
		}
		t.disjoint = true
		for i, k := range t.pos {
			c := bs[k]
			t.start[i], t.end[i] = s.CallStart[c], s.CallEnd[c]
			if t.end[i] < t.start[i] || i > 0 && t.start[i] < t.end[i-1] {
				t.disjoint = false
			}
			t.busy[i+1] = t.busy[i] + t.end[i] - t.start[i]
		}
	}
	return ix
}

// instance is regions.instance of range r, whose calls are the run
// [lo, hi) of ByStart, read through the index: from its start and its
// end and pop marks, its completion, sums and the time its thread spent
// outside calls.
func (ix *runIndex) instance(r timeline.Range, lo, hi int, start, end, pop int64) (_, _, copyNs, over, hold, pageable, outside int64) {
	if hi > lo {
		end = max(end, ix.latest.max(lo, hi))
	}
	copyNs = ix.copyNs[hi] - ix.copyNs[lo]
	over = ix.over[hi] - ix.over[lo]
	hold = ix.hold[hi] - ix.hold[lo]
	pageable = ix.pageable[hi] - ix.pageable[lo]
	return start, end, copyNs, over, hold, pageable, ix.threads[r.Thread].outside(int32(lo), int32(hi), start, pop)
}

// outside is the time within [from, to] that the thread's calls at
// ByStart positions [lo, hi) did not cover, as busyTime counts it.
func (t *threadRun) outside(lo, hi int32, from, to int64) int64 {
	a := sort.Search(len(t.pos), func(i int) bool { return t.pos[i] >= lo })
	b := a + sort.Search(len(t.pos)-a, func(i int) bool { return t.pos[a+i] >= hi })
	if !t.disjoint {
		busy := busyTime{from: from, to: to}
		for i := a; i < b; i++ {
			busy.add(t.start[i], t.end[i])
		}
		return busy.outside()
	}
	// Disjoint calls in order: only the first that ends after from and
	// the last that starts before to can be cut; those between lie
	// inside [from, to] whole.
	first := a + sort.Search(b-a, func(i int) bool { return t.end[a+i] > from })
	last := a + sort.Search(b-a, func(i int) bool { return t.start[a+i] >= to }) - 1
	var sum int64
	if first <= last {
		cut := func(i int) int64 { return max(min(t.end[i], to)-max(t.start[i], from), 0) }
		sum = cut(first)
		if last > first {
			sum += cut(last) + t.busy[last] - t.busy[first+1]
		}
	}
	return max(to-from-sum, 0)
}

// maxTree is a tree of maxima over n values: the values at [n, 2n), each
// node i < n the larger of nodes 2i and 2i+1.
type maxTree []int64

// build sets the inner nodes from the values.
func (t maxTree) build() {
	for i := len(t)/2 - 1; i > 0; i-- {
		t[i] = max(t[2*i], t[2*i+1])
	}
}

// max returns the largest value at [lo, hi), math.MinInt64 for none.
func (t maxTree) max(lo, hi int) int64 {
	n := len(t) / 2
	m := int64(math.MinInt64)
	for l, r := lo+n, hi+n; l < r; l, r = l/2, r/2 {
		if l%2 == 1 {
			m = max(m, t[l])
			l++
		}
		if r%2 == 1 {
			r--
			m = max(m, t[r])
		}
	}
	return m
}
