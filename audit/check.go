package audit

import (
	"fmt"
	"math"
	"sort"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// BytesTolerance is how far the bytes moved host-to-device may differ
// between the two captures before the check warns that they did not do the
// same work.
const BytesTolerance = 0.01

// ResidualShare is the share of the pageable host-to-device host time
// before the fix that pageable copies left after it may still take for the
// check to hold: copies the fix did not aim at (a model's parameters moved
// once at start-up) need not spoil it.
const ResidualShare = 0.05

// Verdicts of a Check.
const (
	Held = vocab.Held
	Died = vocab.Died
)

// Check is the prediction of an audit checked against a capture made after
// the fix.
type Check struct {
	Before string `json:"before"`
	After  string `json:"after"`

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

	// Classes say what became of each pageable host-to-device class.
	Classes []ClassChange `json:"classes"`

	// Pairs are the host time per kind of copy before and after, for plots.
	Pairs []Pair `json:"pairs"`

	Verdict  vocab.Verdict `json:"verdict"`
	Reasons  []string      `json:"reasons"`
	Warnings []string      `json:"warnings"`
}

// Pair is the host time of one kind of copy (direction, host memory, API
// kind) before and after.
type Pair struct {
	Label    string `json:"label"`
	BeforeNs int64  `json:"beforeNs"`
	AfterNs  int64  `json:"afterNs"`
}

// Compare checks the prediction of before against after. The verdict is
// held when the pageable host-to-device copies left after take at most
// ResidualShare of the host time they took before, and the host-to-device
// copy calls held the host no longer than the prediction's high bound (and
// less than before); it is died otherwise.
func Compare(before, after *Audit) *Check {
	c := &Check{Before: before.Capture, After: after.Capture,
		Reasons: []string{}, Warnings: []string{}, Pairs: []Pair{}}
	b, a := before.Sum(vocab.CopyHtoD, "", ""), after.Sum(vocab.CopyHtoD, "", "")
	c.HtoDBeforeNs, c.HtoDAfterNs = b.HostNs, a.HostNs
	c.HtoDBytesBefore, c.HtoDBytesAfter = b.Bytes, a.Bytes
	if b.Bytes > 0 {
		c.BytesChange = float64(a.Bytes-b.Bytes) / float64(b.Bytes)
	}
	if b.Bytes == 0 || math.Abs(c.BytesChange) > BytesTolerance {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the captures moved different amounts host-to-device: %s before, %s after (%+.2f%%, more than %.0f%%): they may not have done the same work, so the host times are not like for like",
			FormatMB(b.Bytes), FormatMB(a.Bytes), 100*c.BytesChange, 100*BytesTolerance))
	}
	p := before.Prediction
	c.PredictedAfterNs, c.PredictedAfterLowNs, c.PredictedAfterHighNs = p.HtoD.AfterNs, p.HtoD.AfterLowNs, p.HtoD.AfterHighNs
	c.PredictedSavedNs = p.HtoD.BeforeNs - p.HtoD.AfterNs
	c.SavedNs = c.HtoDBeforeNs - c.HtoDAfterNs
	c.PredictionSources = p.Sources
	c.PageableBefore = before.Sum(vocab.CopyHtoD, Pageable, "")
	c.PageableAfter = after.Sum(vocab.CopyHtoD, Pageable, "")
	all := after.Sum("", Pageable, "")
	c.PageableOtherAfter = Total{HostMemory: Pageable, Count: all.Count - c.PageableAfter.Count,
		Bytes: all.Bytes - c.PageableAfter.Bytes, HostNs: all.HostNs - c.PageableAfter.HostNs, GPUNs: all.GPUNs - c.PageableAfter.GPUNs}
	if c.PageableOtherAfter.Count > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d pageable copies of other directions remain after the fix (%s, %s of host time); the check is about host-to-device copies",
			c.PageableOtherAfter.Count, FormatMB(c.PageableOtherAfter.Bytes), FormatNs(float64(c.PageableOtherAfter.HostNs))))
	}
	if c.PageableBefore.Count == 0 {
		c.Warnings = append(c.Warnings, "the capture before the fix has no pageable host-to-device copies: there was nothing to pin")
	}
	c.Classes = classChanges(before, after)
	held := true
	residual := float64(c.PageableAfter.HostNs)
	limit := ResidualShare * float64(c.PageableBefore.HostNs)
	switch {
	case c.PageableAfter.Count == 0:
		c.Reasons = append(c.Reasons, fmt.Sprintf("no pageable host-to-device copies remain (%d before)", c.PageableBefore.Count))
	case residual <= limit:
		c.Reasons = append(c.Reasons, fmt.Sprintf("the pageable host-to-device copies are gone but for %d (%s, %s of host time, %.1f%% of the %s before, within %.0f%%)",
			c.PageableAfter.Count, FormatMB(c.PageableAfter.Bytes), FormatNs(residual), 100*residual/float64(c.PageableBefore.HostNs),
			FormatNs(float64(c.PageableBefore.HostNs)), 100*ResidualShare))
	default:
		held = false
		c.Reasons = append(c.Reasons, fmt.Sprintf("pageable host-to-device copies remain: %d (%s, %s of host time, more than %.0f%% of the %s before)",
			c.PageableAfter.Count, FormatMB(c.PageableAfter.Bytes), FormatNs(residual), 100*ResidualShare, FormatNs(float64(c.PageableBefore.HostNs))))
	}
	if c.HtoDAfterNs > c.PredictedAfterHighNs {
		held = false
		c.Reasons = append(c.Reasons, fmt.Sprintf("host-to-device copy calls held the host %s after, above the predicted %s (bound %s)",
			FormatNs(float64(c.HtoDAfterNs)), FormatNs(float64(c.PredictedAfterNs)), FormatNs(float64(c.PredictedAfterHighNs))))
	} else {
		c.Reasons = append(c.Reasons, fmt.Sprintf("host-to-device copy calls held the host %s after, within the predicted bound %s (predicted %s)",
			FormatNs(float64(c.HtoDAfterNs)), FormatNs(float64(c.PredictedAfterHighNs)), FormatNs(float64(c.PredictedAfterNs))))
		if c.HtoDAfterNs < c.PredictedAfterLowNs {
			c.Warnings = append(c.Warnings, fmt.Sprintf("the fix saved more than predicted: %s after is below the prediction's low end %s, so the rate it was predicted from was slower than the fixed copies' own",
				FormatNs(float64(c.HtoDAfterNs)), FormatNs(float64(c.PredictedAfterLowNs))))
		}
	}
	if c.HtoDAfterNs >= c.HtoDBeforeNs && c.HtoDBeforeNs > 0 {
		held = false
		c.Reasons = append(c.Reasons, fmt.Sprintf("host-to-device copy calls held the host no less after (%s) than before (%s)",
			FormatNs(float64(c.HtoDAfterNs)), FormatNs(float64(c.HtoDBeforeNs))))
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

// ClassChange is what became of one pageable host-to-device class of the
// capture before the fix. Classes are matched by API, size bucket, stream
// and NVTX range: process and thread ids differ from run to run.
type ClassChange struct {
	Class  string `json:"class"`
	Before Total  `json:"before"` // the pageable copies before
	// AfterPageable and AfterPinned are the same class's copies after.
	AfterPageable Total `json:"afterPageable"`
	AfterPinned   Total `json:"afterPinned"`
	// Status is "pinned" (only pinned copies after), "gone" (none),
	// or "still pageable".
	Status string `json:"status"`
}

type matchKey struct {
	api, bucket, rng string
	stream           int64
}

func matchOf(c *Class) matchKey { return matchKey{c.API, c.SizeBucket, c.Range, c.Stream} }

func classChanges(before, after *Audit) []ClassChange {
	at := map[matchKey]int{}
	out := []ClassChange{}
	for _, c := range before.Classes {
		if c.Direction != vocab.CopyHtoD || c.HostMemory != Pageable {
			continue
		}
		k := matchOf(c)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			label := fmt.Sprintf("%s HtoD %s stream %d", c.API, c.SizeBucket, c.Stream)
			if c.Range != "" {
				label += " [" + c.Range + "]"
			}
			out = append(out, ClassChange{Class: label})
		}
		addTotal(&out[i].Before, c)
	}
	for _, c := range after.Classes {
		if c.Direction != vocab.CopyHtoD {
			continue
		}
		i, ok := at[matchOf(c)]
		if !ok {
			continue
		}
		switch c.HostMemory {
		case Pageable:
			addTotal(&out[i].AfterPageable, c)
		case Pinned:
			addTotal(&out[i].AfterPinned, c)
		}
	}
	for i := range out {
		switch {
		case out[i].AfterPageable.Count > 0:
			out[i].Status = "still pageable"
		case out[i].AfterPinned.Count > 0:
			out[i].Status = string(vocab.MemPinned)
		default:
			out[i].Status = "gone"
		}
	}
	return out
}

func addTotal(t *Total, c *Class) {
	t.Direction, t.HostMemory, t.APIKind = c.Direction, c.HostMemory, c.APIKind
	t.Count += c.Count
	t.Bytes += c.Bytes
	t.HostNs += c.HostNs
	t.GPUNs += c.GPUNs
}
