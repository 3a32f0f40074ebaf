package timeline

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInOrder compares inOrder with one sort of all records by (owner,
// start, end, index) on records in order, nearly in order and shuffled,
// with ties.
func TestInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := rng.IntN(200)
		owners := 1 + rng.IntN(6)
		owner := make([]int32, n)
		start := make([]int64, n)
		end := make([]int64, n)
		for i := range n {
			owner[i] = int32(rng.IntN(owners))
			switch trial % 3 {
			case 0: // in order within each owner
				start[i] = int64(i)
			case 1: // nearly: a few out of place
				start[i] = int64(i)
				if rng.IntN(20) == 0 {
					start[i] -= int64(rng.IntN(10))
				}
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

// TestSortByCorr compares sortByCorr with one sort of all calls by (pid,
// correlation id, call) on processes in runs of calls, with repeated ids;
// and it declines, leaving the calls as they were, where the processes
// are not in runs or an id does not fit in 32 bits.
func TestSortByCorr(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		tl := &Timeline{}
		pids := 1 + rng.IntN(4)
		for p := range pids {
			tl.Threads = append(tl.Threads, Thread{PID: int64(10 + p)})
		}
		for i := range n {
			tl.Calls.Thread = append(tl.Calls.Thread, int32(i*pids/n))
			tl.Calls.Corr = append(tl.Calls.Corr, int64(rng.IntN(n)))
		}
		want := identity(n)
		slices.SortFunc(want, func(x, y int32) int {
			return cmp.Or(cmp.Compare(tl.PID(x), tl.PID(y)), cmp.Compare(tl.Calls.Corr[x], tl.Calls.Corr[y]), cmp.Compare(x, y))
		})
		got := identity(n)
		if !sortByCorr(tl, got) || !slices.Equal(got, want) {
			t.Fatalf("trial %d: sortByCorr %v, want %v", trial, got, want)
		}
	}
	tl := &Timeline{Threads: []Thread{{PID: 2}, {PID: 1}}}
	tl.Calls.Thread, tl.Calls.Corr = []int32{0, 1}, []int64{5, 6}
	if got := identity(2); sortByCorr(tl, got) || !slices.Equal(got, identity(2)) {
		t.Errorf("processes out of order: sorted %v", got)
	}
	tl = &Timeline{Threads: []Thread{{PID: 1}}}
	tl.Calls.Thread, tl.Calls.Corr = []int32{0, 0}, []int64{1 << 32, 6}
	if got := identity(2); sortByCorr(tl, got) {
		t.Errorf("a 33-bit id: sorted %v", got)
	}
}
