package capture

import (
	"encoding/binary"
	"iter"
	"slices"
	"sort"
)

// span is the [start, end] of one record, in nanoseconds.
type span struct{ start, end int64 }

// spans are the [start, end] of the records of one thread or stream, for
// the checks that one runs one record at a time (overlap) and that a wait
// covered what started before it (before).
//
// Records come in start order on a thread and a stream in the exports
// measured (the 600,000-copy one among them), so spans keep them as a log
// of varints (the start's step from the previous one, the duration: 4 to 6
// bytes a record of a real trace, against 16 as two int64) with an index
// every spanBlockLen records, and find the first overlap as they are
// added. The first record that starts before the one added before it turns
// the log into plain columns (spanColumns), sorted when a check needs them;
// both give the same answers.
type spans struct {
	n       int
	log     []byte      // per record: zigzag varint of start-prevStart, uvarint of end-start
	blocks  []spanBlock // one per spanBlockLen records
	prev    span        // the record added last
	latest  span        // among those added, the one that ends last (the later of two)
	clash   [2]span     // the first overlapping pair found, in start order
	clashed bool

	cols *spanColumns // set once a record came out of start order
}

// spanBlock indexes the log at every spanBlockLen-th record: where it starts,
// the start before it (the base of its first step), and the record before
// it that ends last.
type spanBlock struct {
	at        int
	first     int64 // the block's first start
	prevStart int64
	latest    span
}

// spanBlockLen is how many records one index entry covers.
const spanBlockLen = 128

func (s *spans) add(start, end int64) {
	if s.cols != nil {
		s.cols.add(start, end)
		return
	}
	cur := span{start, end}
	if s.n > 0 && start < s.prev.start {
		s.cols = s.columns()
		s.cols.add(start, end)
		s.log, s.blocks = nil, nil
		return
	}
	if s.n%spanBlockLen == 0 {
		s.blocks = append(s.blocks, spanBlock{at: len(s.log), first: start, prevStart: s.prev.start, latest: s.latest})
	}
	if cap(s.log)-len(s.log) < 2*binary.MaxVarintLen64 {
		// Doubled, where append grows a large slice by a quarter and
		// copies the log each time.
		s.log = slices.Grow(s.log, max(len(s.log), 256))
	}
	s.log = binary.AppendVarint(s.log, start-s.prev.start)
	s.log = binary.AppendUvarint(s.log, uint64(end-start))
	if s.n > 0 && !s.clashed {
		switch {
		case s.latest.end > start:
			s.clash, s.clashed = [2]span{s.latest, cur}, true
		case start == s.prev.start:
			s.clash, s.clashed = [2]span{s.prev, cur}, true
		}
	}
	if s.n == 0 || end >= s.latest.end {
		s.latest = cur
	}
	s.prev = cur
	s.n++
}

// columns decodes the log into columns, in the order the records came.
func (s *spans) columns() *spanColumns {
	c := &spanColumns{start: make([]int64, 0, s.n+1), end: make([]int64, 0, s.n+1)}
	s.each(0, func(sp span) bool {
		c.add(sp.start, sp.end)
		return true
	})
	return c
}

// each hands f the records of the log from block b on, in order, until f
// returns false.
func (s *spans) each(b int, f func(span) bool) {
	if b >= len(s.blocks) {
		return
	}
	at, start := s.blocks[b].at, s.blocks[b].prevStart
	for at < len(s.log) {
		d, n := binary.Varint(s.log[at:])
		at += n
		dur, m := binary.Uvarint(s.log[at:])
		at += m
		start += d
		if !f(span{start, start + int64(dur)}) {
			return
		}
	}
}

// overlap returns the first pair of spans, a before b in start order, that
// overlap or start together; ok is false when none do.
func (s *spans) overlap() (a, b span, ok bool) {
	if s.cols != nil {
		i, j := s.cols.overlap()
		if i < 0 {
			return a, b, false
		}
		return s.cols.at(i), s.cols.at(j), true
	}
	return s.clash[0], s.clash[1], s.clashed
}

// before returns the span, among those that start before t, that ends
// last (the later of two); ok is false when none starts before t.
func (s *spans) before(t int64) (sp span, ok bool) {
	if s.cols != nil {
		i := s.cols.before(t)
		if i < 0 {
			return sp, false
		}
		return s.cols.at(i), true
	}
	// The last block whose first record starts before t.
	b := sort.Search(len(s.blocks), func(i int) bool { return s.blocks[i].first >= t }) - 1
	if b < 0 {
		return sp, false
	}
	latest := s.blocks[b].latest
	ok = b > 0
	s.each(b, func(c span) bool {
		if c.start >= t {
			return false
		}
		if !ok || c.end >= latest.end {
			latest, ok = c, true
		}
		return true
	})
	return latest, ok
}

// spanColumns are spans as two columns, sorted by start once a check needs
// it: the form of a thread's or stream's records that came out of order.
type spanColumns struct {
	start, end []int64
	sorted     bool
	maxEnd     []int64 // maxEnd[i]: the latest end among the first i+1, once sorted
}

func (s *spanColumns) add(start, end int64) {
	s.start = append(s.start, start)
	s.end = append(s.end, end)
	s.sorted = false
}

func (s *spanColumns) at(i int) span { return span{s.start[i], s.end[i]} }

func (s *spanColumns) Len() int           { return len(s.start) }
func (s *spanColumns) Less(i, j int) bool { return s.start[i] < s.start[j] }
func (s *spanColumns) Swap(i, j int) {
	s.start[i], s.start[j] = s.start[j], s.start[i]
	s.end[i], s.end[j] = s.end[j], s.end[i]
}

// sort orders the spans by start, stably (records in the input's order
// first) and fills maxEnd.
func (s *spanColumns) sort() {
	if s.sorted {
		return
	}
	sort.Stable(s)
	s.maxEnd = s.maxEnd[:0]
	var m int64
	for i, e := range s.end {
		if i == 0 || e > m {
			m = e
		}
		s.maxEnd = append(s.maxEnd, m)
	}
	s.sorted = true
}

// overlap returns the first pair of spans, i before j, that overlap or
// start together, or -1, -1.
func (s *spanColumns) overlap() (i, j int) {
	s.sort()
	for k := 1; k < len(s.start); k++ {
		switch {
		case s.maxEnd[k-1] > s.start[k]:
			return s.latest(k - 1), k
		case s.start[k] == s.start[k-1]:
			return k - 1, k
		}
	}
	return -1, -1
}

// before returns the span, among those that start before t, that ends
// last, or -1 when none does.
func (s *spanColumns) before(t int64) int {
	s.sort()
	n := sort.Search(len(s.start), func(i int) bool { return s.start[i] >= t })
	if n == 0 {
		return -1
	}
	return s.latest(n - 1)
}

// latest returns the span, among the first n+1 in start order, that ends
// last.
func (s *spanColumns) latest(n int) int {
	for q := n; q >= 0; q-- {
		if s.end[q] == s.maxEnd[n] {
			return q
		}
	}
	return n
}

// inOrder yields the spans in start order (the log's order, or the
// columns sorted).
func (s *spans) inOrder(yield func(span) bool) {
	if s.cols != nil {
		s.cols.sort()
		for i := range s.cols.start {
			if !yield(s.cols.at(i)) {
				return
			}
		}
		return
	}
	s.each(0, yield)
}

// crossing returns the first span of a that a span of b overlaps (starts
// before its end and ends after its start), with that span of b; ok is
// false when none does. The spans of a overlap none of each other (their
// overlap was checked first), so their ends rise with their starts and
// one pass over both, in start order, finds it.
func crossing(a, b *spans) (x, y span, ok bool) {
	next, stop := iter.Pull(b.inOrder)
	defer stop()
	var latest span // of b's spans begun before the current span of a ends, the one that ends last
	pending, more := next()
	seen := false
	a.inOrder(func(c span) bool {
		for more && pending.start < c.end {
			if !seen || pending.end > latest.end {
				latest, seen = pending, true
			}
			pending, more = next()
		}
		if seen && latest.end > c.start {
			x, y, ok = c, latest, true
			return false
		}
		return true
	})
	return x, y, ok
}
