package predictions

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestFloorAtBound(t *testing.T) {
	for _, tc := range []struct {
		ratios []float64
		want   bool
	}{
		{[]float64{2, 2, 1.3}, true},                   // exactly 1.3x at 256 MiB
		{[]float64{2, 2, 13.0 / 10.0}, true},           // 1.3 as a computed ratio
		{[]float64{2, 2, 1.2999}, false},               // just under
		{[]float64{2, 2, 1.3001}, true},                // just over
		{[]float64{0.99, 2, 3}, false},                 // pinned slower at one size
		{[]float64{1, 2, 3}, false},                    // a tie is not "beats"
		{[]float64{3.08, 2.58, 2.5, 2.69, 2.72}, true}, // the lesson
	} {
		if got := FloorHolds(tc.ratios); got != tc.want {
			t.Errorf("FloorHolds(%v) = %v, want %v", tc.ratios, got, tc.want)
		}
	}
}

var fiveSizes = []int64{1 * mib, 4 * mib, 16 * mib, 64 * mib, 256 * mib}

func TestGrowthLessonDies(t *testing.T) {
	tau, held := GrowthHolds(fiveSizes, []float64{3.08, 2.58, 2.50, 2.69, 2.72})
	if held {
		t.Fatalf("the lesson's ratios held growth (tau %v)", tau)
	}
	if math.Abs(tau) > 1e-12 {
		t.Errorf("tau = %v, want 0 (5 concordant, 5 discordant pairs)", tau)
	}
}

func TestGrowthAtBound(t *testing.T) {
	for _, tc := range []struct {
		ratios  []float64
		wantTau float64
		want    bool
	}{
		{[]float64{1, 2, 3, 4, 5}, 1, true},
		{[]float64{2, 1, 3, 5, 4}, 0.6, true},    // two discordant pairs: exactly 0.6
		{[]float64{2, 1, 4, 3, 1.5}, 0.0, false}, // below
		{[]float64{3, 1, 2, 5, 4}, 0.4, false},   // three discordant pairs: 0.4
	} {
		tau, held := GrowthHolds(fiveSizes, tc.ratios)
		if math.Abs(tau-tc.wantTau) > 1e-12 || held != tc.want {
			t.Errorf("GrowthHolds(%v) = %v, %v; want %v, %v", tc.ratios, tau, held, tc.wantTau, tc.want)
		}
	}
}

// With many sizes tau can pass 0.6 while the largest size's ratio is below
// the smallest's; the second condition then decides.
func TestGrowthLargestBelowSmallest(t *testing.T) {
	var sizes []int64
	var ratios []float64
	for i := 0; i < 20; i++ {
		sizes = append(sizes, int64(i+1)*mib)
	}
	ratios = append(ratios, 1.5)
	for i := 2; i <= 19; i++ {
		ratios = append(ratios, float64(i))
	}
	ratios = append(ratios, 1.0)
	tau, held := GrowthHolds(sizes, ratios)
	if !(tau >= 0.6) {
		t.Fatalf("tau = %v, want >= 0.6 for this construction", tau)
	}
	if held {
		t.Errorf("held with largest ratio %v below smallest %v", ratios[19], ratios[0])
	}
	ratios[19] = 1.6
	if _, held := GrowthHolds(sizes, ratios); !held {
		t.Errorf("did not hold with largest ratio above smallest")
	}
}

func TestSharesAtBound(t *testing.T) {
	cases := []struct {
		share          float64
		pageable, pinn bool
	}{
		{0.80, true, false},
		{8.0 / 10.0, true, false},
		{0.7999, false, false},
		{0.8001, true, false},
		{0.10, false, false}, // exactly 0.10 is not under 10%
		{1.0 / 10.0, false, false},
		{0.0999, false, true},
		{0.1001, false, false},
		{0.001, false, true},
	}
	for _, tc := range cases {
		if got := PageableShareHolds(tc.share); got != tc.pageable {
			t.Errorf("PageableShareHolds(%v) = %v", tc.share, got)
		}
		if got := PinnedShareHolds(tc.share); got != tc.pinn {
			t.Errorf("PinnedShareHolds(%v) = %v", tc.share, got)
		}
	}
}

func TestFactorAtBound(t *testing.T) {
	p := 19.9
	for _, tc := range []struct {
		measured float64
		want     bool
	}{
		{p / 2, true},
		{p * 2, true},
		{p/2 - 0.01, false},
		{p*2 + 0.01, false},
		{p, true},
		{9.92, false},          // the lesson: just outside
		{5.431 / 0.548, false}, // the lesson's table
	} {
		if got := FactorHolds(tc.measured, p); got != tc.want {
			t.Errorf("FactorHolds(%v, %v) = %v, want %v", tc.measured, p, got, tc.want)
		}
	}
	pl := 245.1 / 12.3
	if !FactorHolds(pl/2, pl) || !FactorHolds(pl*2, pl) || FactorHolds(9.92, pl) {
		t.Errorf("lesson bounds misjudged: predicted %v", pl)
	}
}

func TestCallTimeAtBound(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		want  bool
	}{{5, true}, {0.5 / 0.1, true}, {4.999, false}, {5.001, true}, {146.556 / 0.085, true}} {
		if got := CallTimeHolds(tc.ratio); got != tc.want {
			t.Errorf("CallTimeHolds(%v) = %v, want %v", tc.ratio, got, tc.want)
		}
	}
}

func TestDirectionAnswer(t *testing.T) {
	for _, tc := range []struct {
		h2d, d2h float64
		want     Gain
	}{
		{2.0, 2.2, "about the same"}, // exactly 10% above
		{2.2, 2.0, "about the same"},
		{2.0, 2.21, "device-to-host"},
		{2.21, 2.0, "host-to-device"},
		{6.46, 3.54, "host-to-device"},
		{3, 3, "about the same"},
	} {
		if got := DirectionAnswer(tc.h2d, tc.d2h); got != tc.want {
			t.Errorf("DirectionAnswer(%v, %v) = %q, want %q", tc.h2d, tc.d2h, got, tc.want)
		}
	}
}

func TestCombine(t *testing.T) {
	for _, tc := range []struct {
		in   []Verdict
		want Verdict
	}{
		{[]Verdict{Held, Held}, Held},
		{[]Verdict{Held, Died}, Died},
		{[]Verdict{Unavailable, Died}, Died},
		{[]Verdict{Held, Unavailable}, Unavailable},
		{nil, Unavailable},
	} {
		if got := combine(tc.in); got != tc.want {
			t.Errorf("combine(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// GrowthTauOf counts inversions where sizes ascend; it gives what
// stat.Kendall gives, ties in sizes or ratios included.
func TestGrowthTauMatchesKendall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 2; n < 60; n++ {
		sizes := make([]int64, n)
		ratios := make([]float64, n)
		x := make([]float64, n)
		for i := range sizes {
			if i > 0 {
				sizes[i] = sizes[i-1] + int64(rng.IntN(2)) // ties now and then
			}
			ratios[i] = float64(rng.IntN(5)) / 2 // ties often
			x[i] = float64(sizes[i])
		}
		if got, want := GrowthTauOf(sizes, ratios), stat.Kendall(x, ratios, nil); got != want {
			t.Fatalf("n %d: tau %v, stat.Kendall %v (sizes %v ratios %v)", n, got, want, sizes, ratios)
		}
	}
}

func BenchmarkGrowthTau(b *testing.B) {
	const n = 100000
	sizes := make([]int64, n)
	ratios := make([]float64, n)
	for i := range sizes {
		sizes[i] = int64(i) << 12
		ratios[i] = float64(i%1000) / 100
	}
	for b.Loop() {
		GrowthTauOf(sizes, ratios)
	}
}
