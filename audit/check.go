package audit

import (
	"fmt"
	"math"
	"sort"

	"github.com/nsyscheck/nsyscheck/capture"
)

// BytesTolerance is how far the bytes moved host-to-device may differ
// between the two captures before the check warns that they did not do the
// same work.
const BytesTolerance = 0.01

// Verdicts of a Check.
const (
	Held = "held"
	Died = "died"
)

// Check is the prediction of an audit checked against a capture made after
// the fix.
type Check struct {
	SchemaVersion string `json:"schemaVersion"`
	Before        string `json:"before"`
	After         string `json:"after"`

	// Host time in host-to-device copy calls, and bytes moved that way.
	HtoDBeforeNs    int64   `json:"htodBeforeNs"`
	HtoDAfterNs     int64   `json:"htodAfterNs"`
	HtoDBytesBefore int64   `json:"htodBytesBefore"`
	HtoDBytesAfter  int64   `json:"htodBytesAfter"`
	BytesChange     float64 `json:"bytesChange"` // (after - before) / before

	// The prediction made from BEFORE: HtoD host time after the fix, with
	// its bounds, and the saving predicted against the one measured.
	PredictedAfterNs     int64    `json:"predictedAfterNs"`
	PredictedAfterLowNs  int64    `json:"predictedAfterLowNs"`
	PredictedAfterHighNs int64    `json:"predictedAfterHighNs"`
	PredictedSavedNs     int64    `json:"predictedSavedNs"`
	SavedNs              int64    `json:"savedNs"`
	PredictionSources    []string `json:"predictionSources"`

	// Pageable host-to-device copies before and after.
	PageableBefore Total `json:"pageableHtodBefore"`
	PageableAfter  Total `json:"pageableHtodAfter"`
	// PageableOtherAfter are pageable copies of other directions still
	// there after the fix (not part of the verdict).
	PageableOtherAfter Total `json:"pageableOtherAfter"`

	// Pairs are the host time per kind of copy before and after, for plots.
	Pairs []Pair `json:"pairs"`

	Verdict  string   `json:"verdict"`
	Reasons  []string `json:"reasons"`
	Warnings []string `json:"warnings"`
}

// Pair is the host time of one kind of copy (direction, host memory, API
// kind) before and after.
type Pair struct {
	Label    string `json:"label"`
	BeforeNs int64  `json:"beforeNs"`
	AfterNs  int64  `json:"afterNs"`
}

// Compare checks the prediction of before against after. The verdict is
// held when after has no pageable host-to-device copies left and its
// host-to-device copy calls held the host no longer than the prediction's
// high bound (and less than before); it is died otherwise.
func Compare(before, after *Audit) *Check {
	c := &Check{SchemaVersion: SchemaVersion, Before: before.Capture, After: after.Capture,
		Reasons: []string{}, Warnings: []string{}, Pairs: []Pair{}}
	b, a := before.Sum(capture.CopyHtoD, "", ""), after.Sum(capture.CopyHtoD, "", "")
	c.HtoDBeforeNs, c.HtoDAfterNs = b.HostNs, a.HostNs
	c.HtoDBytesBefore, c.HtoDBytesAfter = b.Bytes, a.Bytes
	if b.Bytes > 0 {
		c.BytesChange = float64(a.Bytes-b.Bytes) / float64(b.Bytes)
	}
	if b.Bytes == 0 || math.Abs(c.BytesChange) > BytesTolerance {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the captures moved different amounts host-to-device: %s before, %s after (%+.2f%%, more than %.0f%%): they may not have done the same work, so the host times are not like for like",
			mb(b.Bytes), mb(a.Bytes), 100*c.BytesChange, 100*BytesTolerance))
	}
	p := before.Prediction
	c.PredictedAfterNs, c.PredictedAfterLowNs, c.PredictedAfterHighNs = p.HtoD.AfterNs, p.HtoD.AfterLowNs, p.HtoD.AfterHighNs
	c.PredictedSavedNs = p.HtoD.BeforeNs - p.HtoD.AfterNs
	c.SavedNs = c.HtoDBeforeNs - c.HtoDAfterNs
	c.PredictionSources = p.Sources
	c.PageableBefore = before.Sum(capture.CopyHtoD, Pageable, "")
	c.PageableAfter = after.Sum(capture.CopyHtoD, Pageable, "")
	all := after.Sum("", Pageable, "")
	c.PageableOtherAfter = Total{HostMemory: Pageable, Count: all.Count - c.PageableAfter.Count,
		Bytes: all.Bytes - c.PageableAfter.Bytes, HostNs: all.HostNs - c.PageableAfter.HostNs, GPUNs: all.GPUNs - c.PageableAfter.GPUNs}
	if c.PageableOtherAfter.Count > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d pageable copies of other directions remain after the fix (%s, %s of host time); the check is about host-to-device copies",
			c.PageableOtherAfter.Count, mb(c.PageableOtherAfter.Bytes), ns(float64(c.PageableOtherAfter.HostNs))))
	}
	if c.PageableBefore.Count == 0 {
		c.Warnings = append(c.Warnings, "the capture before the fix has no pageable host-to-device copies: there was nothing to pin")
	}
	held := true
	if c.PageableAfter.Count > 0 {
		held = false
		c.Reasons = append(c.Reasons, fmt.Sprintf("pageable host-to-device copies remain: %d (%s, %s of host time), %d before",
			c.PageableAfter.Count, mb(c.PageableAfter.Bytes), ns(float64(c.PageableAfter.HostNs)), c.PageableBefore.Count))
	} else {
		c.Reasons = append(c.Reasons, fmt.Sprintf("no pageable host-to-device copies remain (%d before)", c.PageableBefore.Count))
	}
	if c.HtoDAfterNs > c.PredictedAfterHighNs {
		held = false
		c.Reasons = append(c.Reasons, fmt.Sprintf("host-to-device copy calls held the host %s after, above the predicted %s (bound %s)",
			ns(float64(c.HtoDAfterNs)), ns(float64(c.PredictedAfterNs)), ns(float64(c.PredictedAfterHighNs))))
	} else {
		c.Reasons = append(c.Reasons, fmt.Sprintf("host-to-device copy calls held the host %s after, within the predicted bound %s (predicted %s)",
			ns(float64(c.HtoDAfterNs)), ns(float64(c.PredictedAfterHighNs)), ns(float64(c.PredictedAfterNs))))
	}
	if c.HtoDAfterNs >= c.HtoDBeforeNs && c.HtoDBeforeNs > 0 {
		held = false
		c.Reasons = append(c.Reasons, fmt.Sprintf("host-to-device copy calls held the host no less after (%s) than before (%s)",
			ns(float64(c.HtoDAfterNs)), ns(float64(c.HtoDBeforeNs))))
	}
	c.Verdict = Died
	if held {
		c.Verdict = Held
	}
	c.Pairs = pairs(before, after)
	return c
}

// pairs lists host time per direction, host memory and API kind in both
// captures, the larger first.
func pairs(before, after *Audit) []Pair {
	at := map[totalKey]int{}
	var out []Pair
	add := func(ts []Total, isAfter bool) {
		for _, t := range ts {
			if t.HostNs == 0 {
				continue
			}
			k := totalKey{t.Direction, t.HostMemory, t.APIKind}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, Pair{Label: fmt.Sprintf("%s %s %s", t.Direction, t.HostMemory, t.APIKind)})
			}
			if isAfter {
				out[i].AfterNs += t.HostNs
			} else {
				out[i].BeforeNs += t.HostNs
			}
		}
	}
	add(before.Totals, false)
	add(after.Totals, true)
	sort.SliceStable(out, func(i, j int) bool {
		return max(out[i].BeforeNs, out[i].AfterNs) > max(out[j].BeforeNs, out[j].AfterNs)
	})
	if out == nil {
		out = []Pair{}
	}
	return out
}
