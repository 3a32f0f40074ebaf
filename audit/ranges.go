package audit

import (
	"cmp"
	"slices"
	"sort"

	"github.com/nsyscheck/nsyscheck/records"
)

// rangeIndex finds the innermost push/pop range of a thread that encloses
// a span. It holds each range's start, end and name (an index into names,
// each name kept once) and, per thread, the latest end of each block of
// ranges, so that its memory is a few bytes over the ranges' own times
// however deep they nest.
//
// Ranges are added as they are read (add) and sorted on the first search.
// A thread's ranges sorted by start (of two pushed at once, the one that
// ends later first: pushedEnd) nest as a stack: a range's enclosing ones are those still open
// when it was pushed. A span [start, end] with start <= end lies in the
// ones started at or before its start that end at or after its end; any
// of those started earlier that a later push had closed ended before that
// push, so before start, and so is not among them. The innermost is the
// latest started of them: the last in sorted order whose end is at or
// after the span's end.
type rangeIndex struct {
	byThread map[[2]int64]*threadRanges
	names    []string
	ids      map[string]int32
	sorted   bool
	// lastKey and last are the thread innermost looked up last, and its
	// ranges (nil where it has none): copies come in runs of one thread.
	lastKey [2]int64
	last    *threadRanges
	hasLast bool
}

type threadRanges struct {
	rs []rangeSpan
	// late[0][b] is the latest end among rs[b*rangeFan:(b+1)*rangeFan],
	// late[k][b] the latest among late[k-1]'s block b: a level for each
	// factor rangeFan, up to one of at most rangeFan blocks.
	late [][]int64
}

// rangeSpan is one range of a thread: end is math.MaxInt64 for a range
// never popped, name an index into rangeIndex.names.
type rangeSpan struct {
	start, end int64
	name       int32
}

// pushedEnd orders ranges pushed at once: the one that ends later first,
// as the outer one; one never popped last, its end being unknown.
func (r rangeSpan) pushedEnd() int64 {
	if r.end == 1<<63-1 {
		return 0
	}
	return r.end
}

// rangeFan is how many ranges (or blocks) one block of late spans: the
// levels hold about 1/(rangeFan-1) of an end per range, and a search scans
// at most 2*rangeFan ends per level.
const rangeFan = 8

func newRangeIndex() *rangeIndex {
	return &rangeIndex{byThread: map[[2]int64]*threadRanges{}, ids: map[string]int32{}}
}

// add keeps range r, whose name is kept once for all ranges of that name.
func (ix *rangeIndex) add(r *records.Range) {
	k := [2]int64{r.PID, r.TID}
	t := ix.byThread[k]
	if t == nil {
		t = &threadRanges{}
		ix.byThread[k] = t
	}
	id, ok := ix.ids[r.Name]
	if !ok {
		id = int32(len(ix.names))
		ix.ids[r.Name] = id
		ix.names = append(ix.names, r.Name)
	}
	end := r.End
	if r.Open {
		end = 1<<63 - 1
	}
	t.rs = append(t.rs, rangeSpan{start: r.Start, end: end, name: id})
	ix.sorted, ix.hasLast = false, false
}

// sort orders every thread's ranges and builds their levels of late ends.
func (ix *rangeIndex) sort() {
	for _, t := range ix.byThread {
		slices.SortStableFunc(t.rs, func(a, b rangeSpan) int {
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			return cmp.Compare(b.pushedEnd(), a.pushedEnd())
		})
		t.late = t.late[:0]
		n := len(t.rs)
		for level := 0; n > rangeFan; level++ {
			blocks := make([]int64, (n+rangeFan-1)/rangeFan)
			for b := range blocks {
				lo, hi := b*rangeFan, min(b*rangeFan+rangeFan, n)
				late := t.endAt(level, lo)
				for i := lo + 1; i < hi; i++ {
					late = max(late, t.endAt(level, i))
				}
				blocks[b] = late
			}
			t.late = append(t.late, blocks)
			n = len(blocks)
		}
	}
	ix.sorted = true
}

// endAt is entry i of a level: a range's end at level 0, a block's latest
// end at level k+1 (late[k]).
func (t *threadRanges) endAt(level, i int) int64 {
	if level == 0 {
		return t.rs[i].end
	}
	return t.late[level-1][i]
}

// levelLen is the number of entries of a level.
func (t *threadRanges) levelLen(level int) int {
	if level == 0 {
		return len(t.rs)
	}
	return len(t.late[level-1])
}

// lastEnding is the last of the first n ranges that ends at or after end,
// -1 for none: up the levels while the blocks before hold none, then down
// into the last block that does.
func (t *threadRanges) lastEnding(n int, end int64) int {
	i, level := n-1, 0
	for {
		if i < 0 {
			return -1
		}
		from := i - i%rangeFan
		if level == len(t.late) {
			from = 0 // the top level: scan it whole
		}
		for ; i >= from; i-- {
			if t.endAt(level, i) >= end {
				break
			}
		}
		if i >= from {
			break
		}
		i, level = from/rangeFan-1, level+1
	}
	for ; level > 0; level-- {
		// Block i of this level holds an end late enough: the last entry
		// of it below that does.
		lo := i * rangeFan
		j := min(lo+rangeFan, t.levelLen(level-1)) - 1
		for t.endAt(level-1, j) < end {
			j--
		}
		i = j
	}
	return i
}

// innermost returns the name of the innermost range of thread (pid, tid)
// that encloses [start, end] (start <= end: the reader refuses a call that
// ends before it starts), or "".
func (ix *rangeIndex) innermost(pid, tid, start, end int64) string {
	if !ix.sorted {
		ix.sort()
	}
	k := [2]int64{pid, tid}
	if !ix.hasLast || ix.lastKey != k {
		ix.lastKey, ix.last, ix.hasLast = k, ix.byThread[k], true
	}
	t := ix.last
	if t == nil {
		return ""
	}
	n := sort.Search(len(t.rs), func(i int) bool { return t.rs[i].start > start })
	if i := t.lastEnding(n, end); i >= 0 {
		return ix.names[t.rs[i].name]
	}
	return ""
}
