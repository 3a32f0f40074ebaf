package cursor

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// A cursor's answers are a binary search's, whether the values looked for
// come in order, go back, jump, or the sequence's length changes.
func TestSearchAsBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = r.Int64N(1000) // repeats too
		}
		slices.Sort(xs)
		var c Cursor
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
			m := n
			if q%7 == 0 {
				m = r.IntN(n + 1) // a shorter sequence
			}
			want := sort.Search(m, func(k int) bool { return xs[k] > v })
			if got := c.Search(m, func(k int) bool { return xs[k] > v }); got != want {
				t.Fatalf("n=%d of %d, query %d: Search for %d = %d, a binary search finds %d", m, n, q, v, got, want)
			}
		}
	}
}
