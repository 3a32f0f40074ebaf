package records

import (
	"math/rand/v2"
	"testing"
)

// TestCallIndex: each copy finds the call of its process and correlation
// id, whatever order the calls came in and the copies ask in; a call added
// twice is found as the first; a call never added is not found.
func TestCallIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, order := range []string{"in order", "shuffled"} {
		var x CallIndex
		var want []Call
		for pid := int64(1); pid <= 3; pid++ {
			for corr := int64(1); corr <= 2000; corr += 1 + corr%3 {
				want = append(want, Call{Name: []string{"cudaMemcpyAsync", "cudaMemcpy"}[corr%2], Start: corr * 10, End: corr*10 + pid,
					Result: corr % 5, Corr: corr, PID: pid, TID: pid*100 + corr%2, Thread: []string{"", "worker"}[corr%2]})
			}
		}
		calls := append([]Call(nil), want...)
		if order == "shuffled" {
			rng.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
		}
		for i := range calls {
			x.Add(&calls[i])
		}
		dup := want[10]
		dup.Start = -1
		x.Add(&dup)
		for pass, asks := range [][]Call{want, shuffledCopy(rng, want)} {
			for _, w := range asks {
				got := x.Lookup(w.PID, w.Corr)
				if got == nil || *got != w {
					t.Fatalf("%s, pass %d: Lookup(%d, %d) = %+v, want %+v", order, pass, w.PID, w.Corr, got, w)
				}
			}
		}
		if c := x.Lookup(1, 2); c != nil {
			t.Errorf("%s: found a call never added: %+v", order, c)
		}
		if c := x.Lookup(4, 1); c != nil {
			t.Errorf("%s: found a call of a process never added: %+v", order, c)
		}
		var got []int64
		n, err := x.Each(want[10].PID, want[10].Corr, false, func(c *Call) error { got = append(got, c.Start); return nil })
		if err != nil || n != 2 || len(got) != 2 || got[0] != want[10].Start || got[1] != -1 {
			t.Errorf("%s: Each of a call added twice gave %d: %v", order, n, got)
		}
		if n, _ := x.Each(0, 4, true, func(*Call) error { return nil }); n != 3 {
			t.Errorf("%s: Each of correlation id 4 in any process gave %d calls, want one of each of 3 processes", order, n)
		}
		if c := x.First(4); c == nil || c.PID != firstPID(calls, 4) {
			t.Errorf("%s: First(4) = %+v, want the call of process %d added first", order, c, firstPID(calls, 4))
		}
		if x.Len() != len(want)+1 {
			t.Errorf("%s: %d calls, want %d", order, x.Len(), len(want)+1)
		}
	}
	var empty CallIndex
	if empty.Lookup(1, 1) != nil {
		t.Error("an empty index found a call")
	}
}

func shuffledCopy(rng *rand.Rand, cs []Call) []Call {
	out := append([]Call(nil), cs...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// firstPID is the process of the first call with correlation id corr.
func firstPID(cs []Call, corr int64) int64 {
	for _, c := range cs {
		if c.Corr == corr {
			return c.PID
		}
	}
	return -1
}

// TestCallIndexInPlace adds more calls than a chunk holds, in order, so
// that they are found where they were added; then more calls after the
// lookups, out of order, so that all are moved and sorted: every call is
// found, with the first added of a pair, either way.
func TestCallIndexInPlace(t *testing.T) {
	var x CallIndex
	var want []Call
	for corr := int64(1); corr <= 40_000; corr += 2 {
		want = append(want, Call{Name: "cudaMemcpyAsync", Start: corr, End: corr + 1, Corr: corr, PID: 5, TID: 6})
	}
	for i := range want {
		x.Add(&want[i])
	}
	ask := func(stage string) {
		t.Helper()
		for _, w := range want {
			if got := x.Lookup(w.PID, w.Corr); got == nil || *got != w {
				t.Fatalf("%s: Lookup(%d, %d) = %+v, want %+v", stage, w.PID, w.Corr, got, w)
			}
		}
		if c := x.Lookup(5, 2); c != nil {
			t.Errorf("%s: found a call never added: %+v", stage, c)
		}
	}
	ask("in place")
	if !x.inChunks() || len(x.calls) != 0 {
		t.Errorf("calls in order were moved: %d in the slice", len(x.calls))
	}
	more := []Call{{Name: "cudaMemcpy", Start: 7, End: 9, Corr: 4, PID: 5, TID: 6}, {Name: "cudaMemcpy", Start: -1, End: 3, Corr: 3, PID: 5, TID: 6}}
	for i := range more {
		x.Add(&more[i])
	}
	want = append(want, more[0])
	ask("moved")
	if x.inChunks() || x.Len() != len(want)+1 {
		t.Errorf("after more calls: in chunks %v, %d calls, want %d", x.inChunks(), x.Len(), len(want)+1)
	}
	if c := x.First(3); c == nil || c.Start != 3 {
		t.Errorf("First(3) = %+v, want the call added first (start 3)", c)
	}
}
