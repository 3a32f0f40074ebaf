package audit

import (
	"math/rand/v2"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
)

// TestInnermostDeep: with ranges nested far deeper than linearDepth, the
// jumps up the chain find the innermost enclosing range a walk of the
// whole chain finds.
func TestInnermostDeep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var rs []records.Range
	// Nests of random depth and width on one thread, one after another.
	at := int64(0)
	for nest := 0; nest < 20; nest++ {
		depth := 1 + rng.IntN(300)
		lo, hi := at, at+int64(4*depth+10)
		for d := 0; d < depth; d++ {
			rs = append(rs, records.Range{Name: string(rune('a'+d%26)) + string(rune('0'+nest%10)), Start: lo, End: hi, PID: 1, TID: 1})
			lo, hi = lo+1+int64(rng.IntN(2)), hi-1-int64(rng.IntN(2))
			if lo >= hi {
				break
			}
		}
		at += int64(4*depth + 20)
	}
	ix := newRangeIndex(append([]records.Range(nil), rs...))
	walk := func(start, end int64) string {
		best, name := int64(-1), ""
		for _, r := range rs {
			if r.Start <= start && r.End >= end && r.Start > best {
				best, name = r.Start, r.Name
			}
		}
		return name
	}
	if len(ix.byThread[[2]int64{1, 1}].up) == 0 {
		t.Fatal("no jumps built for nests hundreds deep")
	}
	for q := 0; q < 5000; q++ {
		s := rng.Int64N(at)
		e := s + rng.Int64N(50)
		if got, want := ix.innermost(1, 1, s, e), walk(s, e); got != want {
			t.Fatalf("innermost(%d, %d) = %q, want %q", s, e, got, want)
		}
	}
}

// BenchmarkInnermostNested: a copy after 50,000 nested ranges that all
// closed before it, the case that took 19 s for 200,000 copies.
func BenchmarkInnermostNested(b *testing.B) {
	var rs []records.Range
	for j := int64(0); j < 50000; j++ {
		rs = append(rs, records.Range{Name: "nest", Start: j, End: 200000 - j, PID: 1, TID: 1})
	}
	ix := newRangeIndex(rs)
	for b.Loop() {
		ix.innermost(1, 1, 300000, 300010)
	}
}
