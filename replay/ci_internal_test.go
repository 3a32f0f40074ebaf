package replay

import (
	"math"
	"math/big"
	"testing"
)

// coverage is 1 - 2 P(B <= k-1) for B binomial(n, 1/2), in exact
// arithmetic.
func coverage(n, k int) float64 {
	tail := new(big.Int)
	for i := 0; i < k; i++ {
		tail.Add(tail, new(big.Int).Binomial(int64(n), int64(i)))
	}
	p := new(big.Rat).SetFrac(tail, new(big.Int).Lsh(big.NewInt(1), uint(n)))
	f, _ := p.Float64()
	return 1 - 2*f
}

// The median's interval is the narrowest pair of order statistics whose
// exact binomial coverage reaches CICoverage; below CIInstances there is
// none.
func TestMedianCI(t *testing.T) {
	for _, n := range []int{1, 4, 5, 6, 9, 20, 67, 400} {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i+1) * 1e6 // i+1 ms
		}
		got := medianCI(v)
		want := CI{}
		for k := 1; k <= n/2; k++ {
			if c := coverage(n, k); c >= CICoverage {
				want = CI{LowMs: float64(k), HighMs: float64(n - k + 1), Coverage: c}
			}
		}
		if n < CIInstances && got != (CI{}) {
			t.Errorf("n=%d: interval %+v, want none", n, got)
		}
		if got.LowMs != want.LowMs || got.HighMs != want.HighMs || math.Abs(got.Coverage-want.Coverage) > 1e-9 {
			t.Errorf("n=%d: %+v, want %+v", n, got, want)
		}
	}
	if c := medianCI([]float64{1, 2, 3, 4, 5}); c.LowMs != 1e-6 || c.HighMs != 5e-6 || c.Coverage != 1-2.0/32 {
		t.Errorf("five instances: %+v, want the smallest and largest, 15/16", c)
	}
}
