package timeline

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInOrder compares inOrder with one sort of all records by (owner,
// start, end, index) on records in order, nearly in order, in a few runs
// each in order (as a stream's copies, then its kernels), whose times tie
// across runs, and shuffled, with ties.
func TestInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 400 {
		n := rng.IntN(200)
		owners := 1 + rng.IntN(6)
		owner := make([]int32, n)
		start := make([]int64, n)
		end := make([]int64, n)
		for i := range n {
			owner[i] = int32(rng.IntN(owners))
			switch trial % 4 {
			case 0: // in order within each owner
				start[i] = int64(i)
			case 1: // nearly: a few out of place
				start[i] = int64(i)
				if rng.IntN(20) == 0 {
					start[i] -= int64(rng.IntN(10))
				}
			case 2: // runs in order, of one table after another
				start[i] = int64(i % (1 + n/(1+trial%7)))
			default: // shuffled, with ties
				start[i] = int64(rng.IntN(20))
			}
			end[i] = start[i] + int64(rng.IntN(3))
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortFunc(want, func(x, y int32) int {
			return cmp.Or(cmp.Compare(owner[x], owner[y]), cmp.Compare(start[x], start[y]), cmp.Compare(end[x], end[y]), cmp.Compare(x, y))
		})
		if got := inOrder(owner, start, end); !slices.Equal(got, want) {
			t.Fatalf("trial %d: inOrder %v, want %v", trial, got, want)
		}
	}
}

// TestSortedPerProcess compares sortedPerProcess with one sort of all
// calls by (pid, key, call) where the processes are in runs of calls and
// every key fits in 32 bits (correlation ids, repeated), where keys do not
// (times past 2^32, negative ones), and where the processes are not in
// runs.
func TestSortedPerProcess(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + rng.IntN(300)
		tl := &Timeline{}
		pids := 1 + rng.IntN(4)
		for p := range pids {
			tl.Threads = append(tl.Threads, Thread{PID: int64(10 + p)})
		}
		if trial%3 == 2 && pids > 1 { // processes out of order
			tl.Threads[0].PID = 99
		}
		key := make([]int64, n)
		for i := range n {
			tl.Calls.Thread = append(tl.Calls.Thread, int32(i*pids/n))
			key[i] = int64(rng.IntN(n))
			if trial%3 == 1 {
				key[i] = key[i]<<33 - 1<<40
			}
		}
		want := identity(n)
		slices.SortFunc(want, func(x, y int32) int {
			return cmp.Or(cmp.Compare(tl.PID(x), tl.PID(y)), cmp.Compare(key[x], key[y]), cmp.Compare(x, y))
		})
		if got := sortedPerProcess(tl, key); !slices.Equal(got, want) {
			t.Fatalf("trial %d: sortedPerProcess %v, want %v", trial, got, want)
		}
	}
}
