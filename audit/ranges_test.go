package audit

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
)

// stackInnermost is the innermost range by its definition, worked out
// again for every span: the thread's ranges pushed in start order (the
// one that ends later first of two pushed at once, one never popped
// last) onto a stack that each push first
// pops of the ranges ended before it, up to the last pushed at or before
// the span's start; then, from the top of the stack down, the first range
// that ends at or after the span's end.
func stackInnermost(rs []records.Range, pid, tid, start, end int64) string {
	var mine []records.Range
	for _, r := range rs {
		if r.PID == pid && r.TID == tid {
			mine = append(mine, r)
		}
	}
	endOf := func(r records.Range) int64 {
		if r.Open {
			return 1<<63 - 1
		}
		return r.End
	}
	slices.SortStableFunc(mine, func(a, b records.Range) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(b.End, a.End) // an open range's End is 0: last of those pushed at once
	})
	var stack []records.Range
	for _, r := range mine {
		if r.Start > start {
			break
		}
		for len(stack) > 0 && endOf(stack[len(stack)-1]) < r.Start {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, r)
	}
	for i := len(stack) - 1; i >= 0; i-- {
		if endOf(stack[i]) >= end {
			return stack[i].Name
		}
	}
	return ""
}

// randomRanges are n ranges on two threads of one process: nests of random
// depth and width one after another, siblings, ranges pushed at once,
// ranges never popped, and (with crossing) ranges that overlap without
// nesting, which no push/pop trace holds but a damaged one may.
func randomRanges(rng *rand.Rand, n int, crossing bool) (rs []records.Range, span int64) {
	at := int64(0)
	for len(rs) < n {
		tid := int64(1 + rng.IntN(2))
		depth := 1 + rng.IntN(200)
		lo, hi := at, at+int64(4*depth+10)
		for d := 0; d < depth && lo <= hi && len(rs) < n; d++ {
			r := records.Range{Name: fmt.Sprintf("r%d", rng.IntN(40)), Start: lo, End: hi, PID: 7, TID: tid}
			switch rng.IntN(20) {
			case 0:
				r.Open, r.End = true, 0
			case 1:
				if crossing {
					r.End = hi + int64(rng.IntN(30))
				}
			}
			rs = append(rs, r)
			if rng.IntN(4) == 0 { // a sibling inside the same parent
				continue
			}
			lo, hi = lo+int64(rng.IntN(3)), hi-int64(rng.IntN(3))
		}
		at += int64(4*depth + 10 + rng.IntN(20))
	}
	rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	return rs, at
}

// TestInnermostMatchesStack: on random nestings, crossing ranges among
// them, the index finds for every span the range the stack of open ranges
// finds.
func TestInnermostMatchesStack(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 99))
		n := []int{1, 7, 8, 9, 64, 65, 600, 3000}[seed%8]
		rs, span := randomRanges(rng, n, seed%2 == 1)
		ix := newRangeIndex()
		for i := range rs {
			ix.add(&rs[i])
		}
		for q := 0; q < 2000; q++ {
			tid := int64(1 + rng.IntN(3)) // thread 3 holds no range
			s := rng.Int64N(span+50) - 20
			e := s + rng.Int64N(60)
			if got, want := ix.innermost(7, tid, s, e), stackInnermost(rs, 7, tid, s, e); got != want {
				t.Fatalf("seed %d, %d ranges: innermost(tid %d, %d, %d) = %q, want %q", seed, n, tid, s, e, got, want)
			}
		}
	}
}

// TestInnermostDeep: in 20,000 ranges each holding the next, a span after
// all of them closed lies in none, one inside the deepest in it, and one
// inside the k-th but past the ends of those inside it in the k-th.
func TestInnermostDeep(t *testing.T) {
	const n = 20000
	ix := newRangeIndex()
	for j := int64(0); j < n; j++ {
		ix.add(&records.Range{Name: fmt.Sprint("d", j), Start: j, End: 3*n - j, PID: 1, TID: 1})
	}
	cases := []struct {
		start, end int64
		want       string
	}{
		{3*n + 5, 3*n + 6, ""},
		{n, n + 1, fmt.Sprint("d", n-1)},
		{n, 3*n - 100, "d100"},
		{0, 3 * n, "d0"},
		{-1, 0, ""},
	}
	for _, c := range cases {
		if got := ix.innermost(1, 1, c.start, c.end); got != c.want {
			t.Errorf("innermost(%d, %d) = %q, want %q", c.start, c.end, got, c.want)
		}
	}
}

// TestRangeNamesKeptOnce: a name shared by many ranges is held once.
func TestRangeNamesKeptOnce(t *testing.T) {
	ix := newRangeIndex()
	for j := int64(0); j < 1000; j++ {
		ix.add(&records.Range{Name: []string{"step", "fwd"}[j%2], Start: 10 * j, End: 10*j + 5, PID: 1, TID: 1})
	}
	if got := ix.names; !slices.Equal(got, []string{"step", "fwd"}) {
		t.Errorf("names = %q, want [step fwd]", got)
	}
	if got := ix.innermost(1, 1, 10*31+1, 10*31+2); got != "fwd" {
		t.Errorf("innermost in the 32nd range = %q, want fwd", got)
	}
}

// BenchmarkInnermostNested: a copy after 50,000 nested ranges that all
// closed before it, the case that took 19 s for 200,000 copies.
func BenchmarkInnermostNested(b *testing.B) {
	ix := newRangeIndex()
	for j := int64(0); j < 50000; j++ {
		ix.add(&records.Range{Name: "nest", Start: j, End: 200000 - j, PID: 1, TID: 1})
	}
	ix.innermost(1, 1, 0, 0)
	for b.Loop() {
		ix.innermost(1, 1, 300000, 300010)
	}
}

// BenchmarkRangeIndex: the index of 400,000 ranges nested, side by side
// (steps), and steps holding three levels, with the bytes it holds per
// range and the time of a search from a span in every step.
func BenchmarkRangeIndex(b *testing.B) {
	const n = 400000
	shapes := []struct {
		name string
		at   func(j int64) (start, end int64)
	}{
		{"nested", func(j int64) (int64, int64) { return j, 4*n - j }},
		{"flat", func(j int64) (int64, int64) { return 10 * j, 10*j + 9 }},
		{"mixed", func(j int64) (int64, int64) { return 100*(j/4) + j%4, 100*(j/4) + 99 - 10*(j%4) }},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			names := []string{"step", "fwd", "layer", "op"}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ix := newRangeIndex()
			for j := int64(0); j < n; j++ {
				s, e := sh.at(j)
				ix.add(&records.Range{Name: names[j%4], Start: s, End: e, PID: 1, TID: 1})
			}
			ix.innermost(1, 1, 0, 0)
			runtime.GC()
			runtime.ReadMemStats(&after)
			j := int64(0)
			for b.Loop() {
				s, e := sh.at(j % n)
				ix.innermost(1, 1, s+1, s+2+(e-s)/4)
				j += 997
			}
			// After the loop: its start resets what was reported before.
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/range")
			runtime.KeepAlive(ix)
		})
	}
}
