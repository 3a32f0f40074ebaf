package replay

import (
	"math"
	"testing"
)

// TestSpansExact sets values inside and beyond int32's range, and over
// each other, and reads every one back as set.
func TestSpansExact(t *testing.T) {
	values := []int64{0, 1, -1, math.MaxInt32, math.MaxInt32 + 1, math.MinInt32 + 1, math.MinInt32,
		math.MinInt32 - 1, 3_000_000_000, -5_000_000_000, math.MaxInt64, math.MinInt64}
	s := newSpans(len(values))
	want := make([]int64, len(values))
	for round := range 3 {
		for i := range values {
			v := values[(i+round*5)%len(values)]
			s.set(int32(i), v)
			want[i] = v
		}
		c := s.clone()
		for i := range want {
			if got := s.at(int32(i)); got != want[i] {
				t.Errorf("round %d: entry %d = %d, set %d", round, i, got, want[i])
			}
			if got := c.at(int32(i)); got != want[i] {
				t.Errorf("round %d: clone's entry %d = %d, set %d", round, i, got, want[i])
			}
		}
		c.set(0, 7_000_000_000)
		if s.at(0) == 7_000_000_000 && want[0] != 7_000_000_000 {
			t.Errorf("round %d: setting the clone changed the original", round)
		}
	}
	if len(s.big) == 0 {
		t.Error("no value was kept beside the int32s")
	}
}
