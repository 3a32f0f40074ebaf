package replay

import (
	"maps"
	"math"
)

// spans holds one duration or delay in nanoseconds per call or op in four
// bytes: the values beyond int32's range (past 2.1 s either way, as many
// as a thread or stream has such spans, so few) are kept whole in a map
// beside, and every value reads back exactly as it was set.
type spans struct {
	v   []int32
	big map[int32]int64
}

// spanBig marks a value kept in spans.big.
const spanBig = math.MinInt32

func newSpans(n int) spans { return spans{v: make([]int32, n)} }

// at is the value of entry i.
func (s *spans) at(i int32) int64 {
	if v := s.v[i]; v != spanBig {
		return int64(v)
	}
	return s.big[i]
}

// set makes entry i's value x.
func (s *spans) set(i int32, x int64) {
	if x > spanBig && x <= math.MaxInt32 {
		s.v[i] = int32(x)
		return
	}
	if s.big == nil {
		s.big = map[int32]int64{}
	}
	s.v[i], s.big[i] = spanBig, x
}

// clone returns a copy of s that shares nothing with it.
func (s *spans) clone() spans {
	return spans{v: append([]int32(nil), s.v...), big: maps.Clone(s.big)}
}
