package replay

import (
	"cmp"
	"math"
	"slices"
)

// selectRank reorders v so that its k smallest values come first, in any
// order, and the rest after them: v[i] <= v[j] for every i < k <= j. It
// takes linear time on average (quickselect with a median-of-three pivot
// and the pivot's equals kept together), and sorts a part that does not
// shrink quickly enough instead.
func selectRank[T cmp.Ordered](v []T, k int) {
	lo, hi := 0, len(v)
	for budget := 64; k > lo && k < hi; budget-- {
		if budget == 0 || hi-lo <= 16 {
			slices.Sort(v[lo:hi])
			return
		}
		lt, gt := partition3(v[lo:hi])
		lt, gt = lt+lo, gt+lo
		switch {
		case k < lt:
			hi = lt
		case k > gt:
			lo = gt
		default:
			return // v[lt:gt] holds the pivot's equals: k falls at or between them
		}
	}
}

// partition3 reorders v around a pivot (the median of its first, middle
// and last values): the smaller values in v[:lt], the pivot's equals in
// v[lt:gt], the greater ones in v[gt:].
func partition3[T cmp.Ordered](v []T) (lt, gt int) {
	n := len(v)
	a, b, c := v[0], v[n/2], v[n-1]
	pivot := max(min(a, b), min(max(a, b), c))
	lt, i, gt := 0, 0, n
	for i < gt {
		switch {
		case v[i] < pivot:
			v[lt], v[i] = v[i], v[lt]
			lt++
			i++
		case v[i] > pivot:
			gt--
			v[i], v[gt] = v[gt], v[i]
		default:
			i++
		}
	}
	return lt, gt
}

// quantileOf is the p-quantile of v as gonum's stat.Quantile with
// stat.Empirical gives it on v sorted (the value of the smallest rank r
// with r+1 >= p*n), found by selection; v is reordered. v must not be
// empty.
func quantileOf(v []float64, p float64) float64 {
	r := quantileRank(len(v), p)
	selectAt(v, r)
	return v[r]
}

// quantileRank is the rank of the p-quantile of n values as stat.Quantile
// with stat.Empirical takes it: the smallest rank r with r+1 >= p*n.
func quantileRank(n int, p float64) int {
	at := p * float64(n)
	r := min(max(int(math.Ceil(at))-1, 0), n-1)
	for r > 0 && float64(r) >= at {
		r--
	}
	for r < n-1 && float64(r+1) < at {
		r++
	}
	return r
}

// selectAt reorders v so that its value of rank r is at v[r], the smaller
// ones before it and the greater after.
func selectAt[T cmp.Ordered](v []T, r int) {
	selectRank(v, r)
	selectRank(v[r:], 1)
}
