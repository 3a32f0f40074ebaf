package predictions

import (
	"math"

	"gonum.org/v1/gonum/stat"
)

// The lesson's bounds.
const (
	FloorRatio       = 1.3  // 1.floor: pageable/pinned at 256 MiB at least this
	GrowthTau        = 0.6  // 1.growth: Kendall's tau of size vs ratio at least this
	PageableShareMin = 0.80 // 2.pageable: call share at least this
	PinnedShareMax   = 0.10 // 2.pinned: call share below this
	LossFactor       = 2.0  // 3.factor: measured loss within this factor of predicted
	CallTimeRatio    = 5.0  // 4.calltime: pageable/pinned total call time at least this
	SameAsTolerance  = 0.10 // exercise: ratios within 10% of each other are "about the same"
)

// Relation is how a claim's measured value must stand to its bound.
type Relation int

// Relations.
const (
	AtLeast Relation = iota + 1 // measured >= bound
	Below                       // measured < bound
	Equal                       // measured = bound
	Within                      // bound/factor <= measured <= bound*factor
)

// Comparison is a claim's test of its measured value: the relation, the
// bound (for Within, the predicted value the factor spans around) and the
// factor of Within.
type Comparison struct {
	Relation Relation
	Bound    float64
	Factor   float64
}

// Interval is the span of measured values a comparison holds for: Low and
// High are nil where the span is open, both where no source set the bound.
// Below's High is excluded; every other end is included.
type Interval struct {
	Low, High *float64
}

// Interval is the span of measured values that hold.
func (c Comparison) Interval() Interval {
	b := c.Bound
	switch c.Relation {
	case AtLeast:
		return Interval{Low: &b}
	case Below:
		return Interval{High: &b}
	case Equal:
		return Interval{Low: &b, High: ptr(b)}
	case Within:
		if b > 0 {
			return Interval{Low: ptr(b / c.Factor), High: ptr(b * c.Factor)}
		}
	}
	// A bound not yet set (Within before a source sets its predicted
	// value): no span.
	return Interval{}
}

// Holds reports whether measured passes the comparison, with the
// tolerance every criterion allows at its bound.
func (c Comparison) Holds(measured float64) bool {
	switch c.Relation {
	case AtLeast:
		return atLeast(measured, c.Bound)
	case Below:
		return below(measured, c.Bound)
	case Equal:
		return atLeast(measured, c.Bound) && atMost(measured, c.Bound)
	case Within:
		return c.Bound > 0 && atLeast(measured, c.Bound/c.Factor) && atMost(measured, c.Bound*c.Factor)
	}
	return false
}

// relTol is the relative distance from a bound within which a measured value
// counts as equal to it, so that a value printed as exactly the bound is not
// pushed across it by floating-point rounding.
const relTol = 1e-9

func atLeast(x, bound float64) bool { return x >= bound-relTol*math.Abs(bound) }
func atMost(x, bound float64) bool  { return x <= bound+relTol*math.Abs(bound) }

// below is strict: a value equal to the bound (within relTol) is not below it.
func below(x, bound float64) bool { return x < bound-relTol*math.Abs(bound) }

func verdictOf(ok bool) Verdict {
	if ok {
		return Held
	}
	return Died
}

// FloorHolds is 1.floor's criterion: pinned faster than pageable at every
// size (ratio pageable/pinned above 1) and the largest size's ratio at least
// FloorRatio. ratios are ordered by size.
func FloorHolds(ratios []float64) bool {
	if len(ratios) == 0 {
		return false
	}
	for _, r := range ratios {
		if !(r > 1) {
			return false
		}
	}
	return atLeast(ratios[len(ratios)-1], FloorRatio)
}

// GrowthTauOf returns Kendall's tau between sizes and ratios as gonum's
// stat.Kendall gives it (a tie counts as a concordant pair). When sizes
// ascend, as a sweep's do, a pair is discordant exactly when its later
// ratio is the smaller, so tau is counted from the inversions of ratios in
// O(n log n) (a measurements file of 200,000 rows took stat.Kendall's
// O(n²) 3 s); otherwise, or with a ratio that is not finite, through
// stat.Kendall.
func GrowthTauOf(sizes []int64, ratios []float64) float64 {
	ascending := len(sizes) == len(ratios)
	for i := range sizes {
		if i > 0 && sizes[i] < sizes[i-1] || math.IsNaN(ratios[i]) || math.IsInf(ratios[i], 0) {
			ascending = false
			break
		}
	}
	if !ascending || len(sizes) < 2 {
		x := make([]float64, len(sizes))
		for i, s := range sizes {
			x[i] = float64(s)
		}
		return stat.Kendall(x, ratios, nil)
	}
	n := len(ratios)
	pairs := n * (n - 1) / 2
	dc := inversions(append([]float64(nil), ratios...), make([]float64, n))
	return float64(pairs-2*dc) / float64(pairs)
}

// inversions counts the pairs i < j with v[j] < v[i], sorting v by merge
// sort with buf as scratch space of the same length.
func inversions(v, buf []float64) int {
	if len(v) < 2 {
		return 0
	}
	mid := len(v) / 2
	n := inversions(v[:mid], buf[:mid]) + inversions(v[mid:], buf[mid:])
	i, j, k := 0, mid, 0
	for i < mid && j < len(v) {
		if v[j] < v[i] {
			buf[k] = v[j]
			n += mid - i // v[j] is below every one left of the first half
			j++
		} else {
			buf[k] = v[i]
			i++
		}
		k++
	}
	k += copy(buf[k:], v[i:mid])
	copy(buf[k:], v[j:])
	copy(v, buf)
	return n
}

// GrowthHolds is 1.growth's criterion: tau at least GrowthTau and the
// largest size's ratio above the smallest's. sizes ascend; ratios follow.
func GrowthHolds(sizes []int64, ratios []float64) (tau float64, held bool) {
	if len(sizes) < 2 || len(sizes) != len(ratios) {
		return math.NaN(), false
	}
	tau = GrowthTauOf(sizes, ratios)
	return tau, atLeast(tau, GrowthTau) && ratios[len(ratios)-1] > ratios[0]
}

// PageableShareHolds is 2.pageable's criterion.
func PageableShareHolds(share float64) bool { return atLeast(share, PageableShareMin) }

// PinnedShareHolds is 2.pinned's criterion (strictly below the bound).
func PinnedShareHolds(share float64) bool { return below(share, PinnedShareMax) }

// FactorHolds is 3.factor's criterion: predicted/2 <= measured <= 2*predicted.
func FactorHolds(measured, predicted float64) bool {
	return predicted > 0 && atLeast(measured, predicted/LossFactor) && atMost(measured, predicted*LossFactor)
}

// CallTimeHolds is 4.calltime's criterion.
func CallTimeHolds(ratio float64) bool { return atLeast(ratio, CallTimeRatio) }

// Gain names where pinning buys more, the exercise's answer.
type Gain string

// The exercise's answers.
const (
	GainH2D  Gain = "host-to-device"
	GainD2H  Gain = "device-to-host"
	GainSame Gain = "about the same"
)

// DirectionAnswer names the direction where pinning buys more: the one with
// the larger pageable/pinned ratio, or GainSame when the larger ratio is at
// most 10% above the smaller.
func DirectionAnswer(h2d, d2h float64) Gain {
	lo, hi := math.Min(h2d, d2h), math.Max(h2d, d2h)
	if atMost(hi, lo*(1+SameAsTolerance)) {
		return GainSame
	}
	if h2d > d2h {
		return GainH2D
	}
	return GainD2H
}
