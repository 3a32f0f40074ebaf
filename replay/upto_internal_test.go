package replay

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// upTo's count from where the last one ended is a binary search's count,
// whether the values asked come in order, go back, or jump.
func TestUpToCountsAsSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = r.Int64N(1000) // repeats too
		}
		slices.Sort(xs)
		u := upTo{xs: xs}
		var v int64 = -5
		for q := range 3000 {
			switch q % 3 {
			case 0:
				v += r.Int64N(4) // in order, mostly small steps
			case 1:
				v += r.Int64N(300) - 100 // back or far on
			default:
				v = r.Int64N(1100) - 50 // anywhere, past both ends
			}
			want := sort.Search(n, func(k int) bool { return xs[k] > v })
			if got := u.count(v); got != want {
				t.Fatalf("n=%d, query %d: count(%d) = %d, a binary search finds %d", n, q, v, got, want)
			}
		}
	}
}
