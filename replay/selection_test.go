package replay

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestSelection: selectRank leaves the k smallest values first, and
// quantileOf, quantilesOf and trimmedMean (by its heaps, and by selection
// where the values' sum could round) give what sorting gives, on values
// with many ties, sorted, reversed and random, and negated.
func TestSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 17, 100, 1000, 20_000} {
		for kind := range 4 {
			v := make([]int64, n)
			for i := range v {
				switch kind {
				case 0:
					v[i] = rng.Int64N(1 << 40)
				case 1:
					v[i] = rng.Int64N(3)
				case 2:
					v[i] = int64(i)
				default:
					v[i] = int64(n - i)
				}
			}
			sorted := slices.Sorted(slices.Values(v))
			for _, k := range []int{0, 1, n / 3, n / 2, n - 1, n} {
				w := slices.Clone(v)
				selectRank(w, k)
				if k > 0 && k < n && (slices.Max(w[:k]) > slices.Min(w[k:]) || slices.Max(w[:k]) != sorted[k-1]) {
					t.Errorf("n %d, kind %d: rank %d not selected", n, kind, k)
				}
			}
			f := make([]float64, n)
			for i := range v {
				f[i] = float64(v[i])
			}
			fs := slices.Sorted(slices.Values(f))
			for _, p := range []float64{0.1, 0.5, 0.9, 0.333} {
				if got, want := quantileOf(slices.Clone(f), p), stat.Quantile(p, stat.Empirical, fs, nil); got != want {
					t.Errorf("n %d, kind %d: quantile %g = %g, want %g", n, kind, p, got, want)
				}
			}
			if n >= MinSamples {
				q, _ := quantilesOf(slices.Clone(f))
				want := Bound{stat.Quantile(0.1, stat.Empirical, fs, nil), stat.Quantile(0.5, stat.Empirical, fs, nil), stat.Quantile(0.9, stat.Empirical, fs, nil)}
				if q.q != want || q.n != n {
					t.Errorf("n %d, kind %d: quantiles %+v of %d, want %+v", n, kind, q.q, q.n, want)
				}
			}
			if got, want := trimmedMean(slices.Clone(v)), sortedTrimmedMean(sorted); got != want {
				t.Errorf("n %d, kind %d: trimmed mean %d, want %d", n, kind, got, want)
			}
			if got, want := selectedMean(slices.Clone(v), int(float64(n)*TrimShare)), sortedTrimmedMean(sorted); got != want {
				t.Errorf("n %d, kind %d: trimmed mean by selection %d, want %d", n, kind, got, want)
			}
			neg := make([]int64, n)
			for i := range v {
				neg[i] = -v[i]
			}
			if got, want := trimmedMean(neg), sortedTrimmedMean(slices.Sorted(slices.Values(neg))); got != want {
				t.Errorf("n %d, kind %d: trimmed mean of the negated values %d, want %d", n, kind, got, want)
			}
		}
	}
}

// sortedTrimmedMean is the trimmed mean taken on sorted values.
func sortedTrimmedMean(v []int64) int64 {
	cut := int(float64(len(v)) * TrimShare)
	var sum float64
	for _, x := range v[cut : len(v)-cut] {
		sum += float64(x)
	}
	return int64(math.Round(sum / float64(len(v)-2*cut)))
}
