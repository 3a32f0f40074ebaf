package audit

import (
	"fmt"
	"math"
	"sort"

	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Verdicts of a Check.
const (
	Held        = vocab.Held
	Died        = vocab.Died
	Unavailable = vocab.Unavailable
)

// ModelError is the what-if's own error, as a share of a region's time,
// that its bound widens by on each side: what the replay holds fixed or
// cannot see in a region it otherwise sees whole — pinned copies of both
// directions sharing the link (each ran 4-10% slower than alone on the
// H200), host code between calls that runs faster once the driver stops
// staging. It was set from the shipped pairs: with the H200 run folder's
// rates the predictions of their judged regions came within 0.6-6.7% of
// the captures after, the replays as captured within 0.6%
// (docs/audit.md).
const ModelError = 0.05

// MinGain is the share of a region's time the fix must save for the region
// to read as faster.
const MinGain = 0.01

// Check is the prediction of an audit checked against a capture made after
// the fix: each region's time after against its predicted bound.
type Check struct {
	Before string
	After  string

	// Verdict is held when every judged region's time after lies in its
	// bound, died when one does not, unavailable when no region could be
	// judged.
	Verdict vocab.Verdict
	// Regions are the regions of the capture before, each with the same
	// region after (or the one Match names).
	Regions []RegionCheck
	// Match maps a region before to the region after it is compared with,
	// when they are not namesakes (audit --match).
	Match map[string]string
	// Unseen says why the capture cannot show what the fix changes, nil
	// when it can.
	Unseen *Unseen
	// Fix is whether the capture after made the fix at all: its pageable
	// host-device copies against the capture before's.
	Fix Fix

	// Host time in host-to-device copy calls, and bytes moved that way.
	HtoDBeforeNs    int64
	HtoDAfterNs     int64
	HtoDBytesBefore int64
	HtoDBytesAfter  int64
	BytesChange     float64 // (after - before) / before

	// The host time HtoD copy calls were predicted to hold after the fix,
	// with its bounds, and the saving predicted against the one measured.
	PredictedAfterNs     int64
	PredictedAfterLowNs  int64
	PredictedAfterHighNs int64
	PredictedSavedNs     int64
	SavedNs              int64
	PredictionSources    []string

	// Pageable host-to-device copies before and after.
	PageableBefore Total
	PageableAfter  Total
	// PageableOtherAfter are pageable copies of other directions still
	// there after the fix.
	PageableOtherAfter Total

	// PinAllocsBefore and PinAllocsAfter are the calls that allocated or
	// registered pinned memory: what pinning cost.
	PinAllocsBefore PinAllocs
	PinAllocsAfter  PinAllocs

	// Classes say what became of each pageable host-to-device class.
	Classes []ClassChange

	// Pairs are the host time per kind of copy before and after.
	Pairs []Pair
}

// RegionCheck is one region before the fix, its prediction's bound, and
// the same region after.
type RegionCheck struct {
	// Region is the region before: measured, replayed and predicted.
	Region
	// AfterName names the region after it is compared with.
	AfterName string
	// Judged says whether the region counts in the verdict (Audit.Judged).
	Judged bool
	// The region after: instances, the median instance's time, the span,
	// its copy/compute overlap, its copy calls' host time (summed) and the
	// host time its thread spent outside CUDA calls; zero when missing.
	AfterInstances  int
	AfterMedianMs   float64
	AfterSpanMs     float64
	AfterOverlap    float64
	AfterCopyCallMs float64
	AfterOutside    replay.Outside
	// LoadingMs and AfterLoadingMs are the host time calls that load
	// device code held inside the region before and after, in its measure
	// (Region.LoadingMs); zero, and absent from the JSON, when none did.
	LoadingMs      float64
	AfterLoadingMs float64
	// BoundLowMs and BoundHighMs are the predicted bound of the region's
	// measure widened by Tolerance.
	BoundLowMs  float64
	BoundHighMs float64
	Tolerance   Tolerance
	// Faster says whether the region's time after lies below its time
	// before by more than MinGain.
	Faster  bool
	Verdict vocab.Verdict
	Why     Why
	// WideBy names, for WhyTooWide, what widened the bound over the
	// region's own time before (WideCost, WideModel, WideFit, WideNoise).
	WideBy string
}

// AfterMs is the region's time after in its measure.
func (r *RegionCheck) AfterMs() float64 { return r.pick(r.AfterMedianMs, r.AfterSpanMs) }

// AfterOutsideMs is the host time outside CUDA calls after, in the
// region's measure.
func (r *RegionCheck) AfterOutsideMs() float64 {
	return r.pick(r.AfterOutside.MedianMs, r.AfterOutside.TotalMs)
}

// Tolerance is how far a region's predicted bound is widened on each side,
// as shares of its ends: the model's own error (ModelError), the replay's
// error on the region as captured (|fit|), and the capture's noise — for
// the median of CIInstances or more instances, how far the ends of its
// confidence interval lie from it (replay.Region.MedianCI); none for the
// span, which sums its instances.
type Tolerance struct {
	Model     float64
	Fit       float64
	NoiseLow  float64
	NoiseHigh float64
}

// Low is the share the bound's low end moves down by.
func (t Tolerance) Low() float64 { return t.Model + t.Fit + t.NoiseLow }

// High is the share the bound's high end moves up by.
func (t Tolerance) High() float64 { return t.Model + t.Fit + t.NoiseHigh }

// Why says what decided a region's verdict.
type Why string

// What decides a region.
const (
	WhyInBound    Why = "in-bound"      // held: the time after lies in the bound
	WhyAbove      Why = "above-bound"   // died: slower than predicted
	WhyBelow      Why = "below-bound"   // died: faster than predicted
	WhyUnseen     Why = "unseen"        // unavailable: Check.Unseen
	WhyMissing    Why = "missing"       // not judged: a region to judge that the capture after lacks
	WhyNotJudged  Why = "not-judged"    // the whole capture beside NVTX ranges with copies
	WhyNoCopies   Why = "no-copies"     // not judged: a range with no copy call
	WhyUnmatched  Why = "unmatched"     // not judged: the match names other regions
	WhyNotFixed   Why = "not-fixed"     // unavailable: the capture after did not make the fix (Check.Fix)
	WhyTooWide    Why = "too-wide"      // unavailable: the bound holds the time before, so it allows no change
	WhyNoGain     Why = "no-gain"       // held: every cost predicted no gain, and the time after lies in the bound
	WhyNoPredict  Why = "not-predicted" // unavailable: the region has no prediction (Region.NotPredicted)
	WhyStartUp    Why = "start-up"      // unavailable: its device code's loading differs between the captures (StartUpDiffers)
	WhyInstances  Why = "instances"     // unavailable: the region ran another number of times after (not the same work)
	WhyUnresolved Why = "unresolved"    // unavailable: its replay rests on waits the capture before cannot resolve (Region.Unresolved)
)

// What can widen a region's bound over its own time before (WideBy).
const (
	// WideCost: the predicted costs themselves reach the time before (a
	// pin-by-copy's high cost pays the host copy at the pageable call's
	// measured time).
	WideCost = "cost"
	// WideModel, WideFit and WideNoise: the tolerance's part that moved
	// the bound's end furthest (Tolerance).
	WideModel = "model"
	WideFit   = "fit"
	WideNoise = "noise"
)

// Fix is what the capture after did to the pageable host-device copies
// of the capture before (in the regions the match names, with --match):
// the fix is made when both their count and their bytes fell to at most
// FixedShare of before's. A check of a capture that did not make the fix
// would test a prediction of nothing.
type Fix struct {
	Before Total
	After  Total
	Made   bool
}

// FixedShare is the most of the capture before's pageable host-device
// copies (by count and by bytes) the capture after may still make for the
// fix to count as made: a few start-up copies a framework makes from
// pageable memory whatever the program does are left.
const FixedShare = 0.10

// fixOf says whether after made the fix to before's pageable host-device
// copies: all of them, or with match those inside the ranges it names.
func fixOf(before, after *Audit, match map[string]string) Fix {
	in := func(au *Audit, ranges map[string]bool) Total {
		var t Total
		for _, c := range au.Classes {
			if c.HostMemory != Pageable || (c.Direction != vocab.CopyHtoD && c.Direction != vocab.CopyDtoH) {
				continue
			}
			if ranges != nil && !ranges[c.Range] {
				continue
			}
			addTotal(&t, c)
		}
		t.Direction, t.APIKind = "", ""
		return t
	}
	var rb, ra map[string]bool
	if match != nil {
		rb, ra = map[string]bool{}, map[string]bool{}
		for b, a := range match {
			rb[b], ra[a] = true, true
		}
	}
	f := Fix{Before: in(before, rb), After: in(after, ra)}
	f.Made = float64(f.After.Count) <= FixedShare*float64(f.Before.Count) &&
		float64(f.After.Bytes) <= FixedShare*float64(f.Before.Bytes)
	return f
}

// Unseen is a capture whose program stages its copies where a CUDA trace
// cannot see: every large host-to-device copy already comes from pinned
// memory, because the framework copies the data into a pinned buffer of
// its own on the host first (XLA's device_put of a NumPy array), so what
// pinning at the source saves is CPU work outside CUDA calls.
type Unseen struct {
	Framework framework.Name
	// PinnedHtoD counts the large (LargeCopy or more) host-to-device
	// copies from pinned memory, PageableHtoD those from pageable memory.
	PinnedHtoD   int64
	PageableHtoD int64
}

// LargeCopy is the size from which a host-to-device copy counts as large
// for Unseen: the 1MiB-16MiB bucket up.
const LargeCopy = 1 << 20

// stagesUnseen reports whether the program of au stages its copies where
// the trace cannot see (Unseen), nil when not: the audit's staging.
func stagesUnseen(au *Audit) *Unseen {
	s := au.staging()
	if s == nil {
		return nil
	}
	return &Unseen{Framework: s.Framework, PinnedHtoD: s.Pinned}
}

// Compare checks the prediction of before against after, region by
// region; match maps a region before to a differently named region after
// (nil: each to its namesake), and only the regions it names are judged
// then. Compare does not ask whether the two are one program: SameProgram
// does.
func Compare(before, after *Audit, match map[string]string) *Check {
	c := &Check{Before: before.Capture, After: after.Capture, Match: match, Regions: []RegionCheck{}, Pairs: []Pair{}}
	b, a := before.Sum(vocab.CopyHtoD, "", ""), after.Sum(vocab.CopyHtoD, "", "")
	c.HtoDBeforeNs, c.HtoDAfterNs = b.HostNs, a.HostNs
	c.HtoDBytesBefore, c.HtoDBytesAfter = b.Bytes, a.Bytes
	if b.Bytes > 0 {
		c.BytesChange = float64(a.Bytes-b.Bytes) / float64(b.Bytes)
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
	c.PinAllocsBefore, c.PinAllocsAfter = before.PinAllocs, after.PinAllocs
	c.Classes = classChanges(before, after)
	c.Pairs = pairs(before, after)
	c.Unseen = stagesUnseen(before)
	c.Fix = fixOf(before, after, match)

	judged := map[string]Why{}
	for _, r := range before.Regions {
		judged[r.Name] = WhyNotJudged
		if r.Name != replay.CaptureRegion {
			judged[r.Name] = WhyNoCopies
		}
	}
	for _, r := range before.Judged() {
		judged[r.Name] = ""
	}
	for _, r := range before.Regions {
		if match != nil && match[r.Name] == "" {
			judged[r.Name] = WhyUnmatched
		} else if match != nil {
			judged[r.Name] = ""
		}
	}
	var held, died, missing int
	afterRegions := after.RegionIndex()
	for _, r := range before.Regions {
		rc := judgeRegion(r, afterRegions, match, judged[r.Name], c.Unseen != nil)
		if rc.Judged && c.Unseen == nil && !c.Fix.Made {
			rc.Verdict, rc.Why, rc.WideBy = Unavailable, WhyNotFixed, ""
		}
		switch {
		case rc.Why == WhyMissing, rc.Why == WhyInstances:
			missing++
		case !rc.Judged:
		case rc.Verdict == Held:
			held++
		case rc.Verdict == Died:
			died++
		}
		c.Regions = append(c.Regions, rc)
	}
	// A region the check would judge that the capture after lacks (renamed,
	// or its ranges gone) is a fact the check is missing: never a pass.
	switch {
	case died > 0:
		c.Verdict = Died
	case held > 0 && missing == 0:
		c.Verdict = Held
	default:
		c.Verdict = Unavailable
	}
	return c
}

// judgeRegion compares region r of the capture before with its region in
// after: its time after against the predicted bound of its measure,
// widened by the tolerance; skip says why the region is not judged, ""
// when it is.
func judgeRegion(r Region, after RegionIndex, match map[string]string, skip Why, unseen bool) RegionCheck {
	rc := RegionCheck{Region: r, AfterName: r.Name, Judged: skip == ""}
	if n := match[r.Name]; n != "" {
		rc.AfterName = n
	}
	_, low, high := r.Predicted()
	rc.Tolerance = Tolerance{Model: ModelError, Fit: math.Abs(r.FitError())}
	if r.Measure == MeasureMedian && r.MedianCI.Coverage > 0 && r.MedianMs > 0 {
		rc.Tolerance.NoiseLow = max(r.MedianMs-r.MedianCI.LowMs, 0) / r.MedianMs
		rc.Tolerance.NoiseHigh = max(r.MedianCI.HighMs-r.MedianMs, 0) / r.MedianMs
	}
	rc.BoundLowMs = max(low*(1-rc.Tolerance.Low()), 0)
	rc.BoundHighMs = high * (1 + rc.Tolerance.High())
	a := after.Region(rc.AfterName)
	if a == nil {
		rc.Judged, rc.Why = false, skip
		if skip == "" {
			rc.Why = WhyMissing
		}
		return rc
	}
	rc.AfterInstances, rc.AfterMedianMs, rc.AfterSpanMs = a.Instances, a.MedianMs, a.SpanMs
	rc.AfterOverlap, rc.AfterCopyCallMs, rc.AfterOutside = a.Overlap.Measured, a.CopyCallMs, a.Outside
	rc.LoadingMs, rc.AfterLoadingMs = r.LoadingMs(), a.loadingIn(r.Measure)
	t := rc.AfterMs()
	rc.Faster = t < r.Time()*(1-MinGain)
	switch {
	case !rc.Judged:
		rc.Why = skip
	case unseen:
		rc.Verdict, rc.Why = Unavailable, WhyUnseen
	case a.Instances != r.Instances:
		// Ranges split, merged, lost or given twice: the median or span of
		// other instances measures other work, so the region after is not
		// the region predicted.
		rc.Verdict, rc.Why = Unavailable, WhyInstances
	case r.NotPredicted != nil:
		rc.Verdict, rc.Why = Unavailable, WhyNoPredict
	case r.Unresolved != nil:
		// A wait the capture cannot tie to the work it waited for is
		// replayed as waiting for none: the prediction across it is a
		// guess, and a time after in its bound would prove nothing.
		rc.Verdict, rc.Why = Unavailable, WhyUnresolved
	case rc.StartUpDiffers():
		rc.Verdict, rc.Why = Unavailable, WhyStartUp
	case t > rc.BoundHighMs:
		rc.Verdict, rc.Why = Died, WhyAbove
	case t < rc.BoundLowMs:
		rc.Verdict, rc.Why = Died, WhyBelow
	case rc.BoundLowMs <= r.Time() && r.Time() <= rc.BoundHighMs && r.PageableCallMs > 0 && NoGain(r.Time(), low):
		rc.Verdict, rc.Why = Held, WhyNoGain
	case rc.BoundLowMs <= r.Time() && r.Time() <= rc.BoundHighMs:
		rc.Verdict, rc.Why, rc.WideBy = Unavailable, WhyTooWide, wideBy(r.Time(), low, high, rc.Tolerance)
	default:
		rc.Verdict, rc.Why = Held, WhyInBound
	}
	return rc
}

// NoGain reports whether a region of time t before is predicted no faster
// at every cost: its lowest predicted cost low lies at most MinGain below
// t. For a region whose copies from pageable memory held the host, a bound
// that holds the time before is then the prediction itself (a pin
// thread's work that lands on the main thread gives the step back none of
// the time its copy calls save), not a failure to decide, and a time
// after below it refutes it.
func NoGain(t, low float64) bool { return low >= t*(1-MinGain) }

// StartUpDiffers reports whether the host time spent loading device code
// inside the region differs between the captures by more than ModelError
// of its time before. Loading is one-time start-up (a kernel's first
// launch), which a program pays at a different cost in each run (code
// compiled by the driver or found in its cache, libraries read from disk
// or from the page cache), and the host work around it that the trace
// does not show (a library's own loading) differs with it: the time after
// then says how the start-up went, not what pinning did, and the replay,
// which keeps the loading as measured, cannot tell it.
func (r *RegionCheck) StartUpDiffers() bool {
	return math.Abs(r.AfterLoadingMs-r.LoadingMs) > ModelError*r.Time()
}

// wideBy names what put the region's time before t inside its bound: the
// costs low-high themselves, else the tolerance's largest part on the side
// t lies.
func wideBy(t, low, high float64, tol Tolerance) string {
	if low <= t && t <= high {
		return WideCost
	}
	noise := tol.NoiseHigh
	if t < low {
		noise = tol.NoiseLow
	}
	switch {
	case noise >= tol.Model && noise >= tol.Fit:
		return WideNoise
	case tol.Fit >= tol.Model:
		return WideFit
	}
	return WideModel
}

// Pair is the host time of one kind of copy (direction, host memory, API
// kind) before and after.
type Pair struct {
	Label    string
	BeforeNs int64
	AfterNs  int64
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
	Class  string
	Before Total // the pageable copies before
	// AfterPageable and AfterPinned are the same class's copies after.
	AfterPageable Total
	AfterPinned   Total
	// Status is what became of the class.
	Status ClassStatus
}

// ClassStatus is what became of a pageable class after the fix.
type ClassStatus string

// The statuses of a ClassChange.
const (
	ClassPinned        ClassStatus = ClassStatus(vocab.MemPinned) // only pinned copies after
	ClassGone          ClassStatus = "gone"                       // no copy of it after
	ClassStillPageable ClassStatus = "still pageable"             // pageable copies after
)

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
			out[i].Status = ClassStillPageable
		case out[i].AfterPinned.Count > 0:
			out[i].Status = ClassPinned
		default:
			out[i].Status = ClassGone
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
