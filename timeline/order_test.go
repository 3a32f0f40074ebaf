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
