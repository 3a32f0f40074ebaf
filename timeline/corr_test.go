package timeline

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCallByCorrAsSearch holds callByCorr, which looks a few ids past the
// last one found before it searches, to the search's answer: the first call
// of the process with the id, None where none has it. The ids come in
// order with gaps and repeats (two calls of one id), the questions in
// order, with steps past the probes, repeated, backwards, missing and at
// random, across two processes.
func TestCallByCorrAsSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		tl := &Timeline{Threads: []Thread{{PID: 1}, {PID: 2}}}
		var byCorr []int32
		var keys []int64
		for pid := range int32(2) {
			n := rng.IntN(60)
			id := int64(rng.IntN(3))
			for range n {
				id += int64(rng.IntN(4)) // 0: the id again
				tl.Calls.Thread = append(tl.Calls.Thread, pid)
				byCorr = append(byCorr, int32(len(tl.Calls.Thread)-1))
				keys = append(keys, id)
			}
		}
		r := &resolver{t: tl, byCorr: byCorr, corrKeys: keys}
		want := func(pid, corr int64) int32 {
			lo, hi := runOfPID(tl, byCorr, pid)
			if i, ok := slices.BinarySearch(keys[lo:hi], corr); ok {
				return byCorr[lo+i]
			}
			return None
		}
		corr := int64(0)
		for q := range 200 {
			pid := int64(1 + q/100)
			switch rng.IntN(6) {
			case 0:
				corr = int64(rng.IntN(250))
			case 1:
				corr -= int64(rng.IntN(5))
			case 2:
				corr += int64(5 + rng.IntN(10))
			default:
				corr += int64(rng.IntN(3))
			}
			if got, w := r.callByCorr(pid, corr), want(pid, corr); got != w {
				t.Fatalf("trial %d: process %d id %d: call %d, the search finds %d (ids %v)", trial, pid, corr, got, w, keys)
			}
		}
	}
}
