package audit

import (
	"github.com/nsyscheck/nsyscheck/replay"
)

// Measure names the time of a region the check compares: its median
// instance's, or its span's.
type Measure string

// Measures.
const (
	MeasureMedian Measure = "median"
	MeasureSpan   Measure = "span"
)

// QueuedShare is the share of a region's instances, predicted after
// pinning, that must complete after the next one begins for its span to
// be the measure: the GPU runs behind the host then, each instance's time
// holds the backlog of the ones before it, and the span measures the
// loop's throughput.
const QueuedShare = 0.5

// Region is one region of the capture as the replay measured it
// (replay.Region: measured, replayed as captured and predicted after
// pinning), with what the audit reads from it.
type Region struct {
	replay.Region
	// Measure is the time of the region the check compares (MeasureOf).
	Measure Measure
	// PageableShare is the part of the region's HostShare that calls of
	// copies from pageable memory held (ShareOf): what --fail-above
	// limits.
	PageableShare float64
	// NotPredicted is set, and the prediction's fields zero, when the
	// what-if re-costed no copy from pageable memory though it had some to
	// re-cost (a replay that changed nothing predicts nothing), or when
	// the region's thread makes no CUDA call in it while copy calls hold
	// host time in it.
	NotPredicted *NotPredicted
	// Loading is the host time calls that load device code (LoadsModule)
	// held inside the region, in its median instance and in all of them
	// (loadingOf), which a check weighs against the capture after's; nil,
	// and absent from the JSON, when none did.
	Loading *replay.Outside
	// Unresolved is set, and absent from the JSON when not, where the
	// region's replay rests on waits the capture cannot resolve: a check
	// cannot judge it (WhyUnresolved).
	Unresolved *Unresolved
}

// LoadingMs is the host time calls that load device code (LoadsModule)
// held inside the region, in its measure: the median instance's, or every
// instance's for the span.
func (r *Region) LoadingMs() float64 { return r.loadingIn(r.Measure) }

// NotPredicted says why a region has no prediction: the what-if re-costed
// no copy though it had some to re-cost (Uncosted), the replay saw no
// kernel of the trace's launch calls tied to it (Launches), or the
// region's thread makes no CUDA call in it (NoCalls).
type NotPredicted struct {
	// Uncosted counts the copies from pageable memory the what-if found
	// no pinned cost for: a copy needs both its call's and its GPU time.
	Uncosted int
	// Launches counts the kernel launch calls, none of them tied to the
	// kernel it ran (a folder of CSV reports ties no kernel to its
	// launch): a replay blind to when the compute beside the copies may
	// start predicts nothing.
	Launches int64
	// NoCalls says the region's NVTX range is on a thread that makes no
	// CUDA call inside it, while other threads' copy calls hold host time
	// in it: the replay keeps that thread's time as measured, and the
	// trace does not show whether it waits for those copies.
	NoCalls bool
}

// unpredictCallless takes the prediction off each NVTX range region whose
// thread spent all its time outside CUDA calls while copy calls held host
// time in it (NotPredicted.NoCalls).
func unpredictCallless(rs []Region) {
	for i := range rs {
		r := &rs[i]
		if r.Name == replay.CaptureRegion || r.NotPredicted != nil || r.MedianMs <= 0 {
			continue
		}
		if r.Outside.MedianMs >= r.MedianMs && r.HostShare.Measured > 0 {
			r.unpredict(&NotPredicted{NoCalls: true})
		}
	}
}

// unpredict takes the prediction off the region.
func (r *Region) unpredict(why *NotPredicted) {
	r.NotPredicted = why
	r.PredictedMedianMs, r.PredictedMedianLowMs, r.PredictedMedianHighMs = 0, 0, 0
	r.PredictedSpanMs, r.PredictedSpanLowMs, r.PredictedSpanHighMs = 0, 0, 0
	r.Period.PredictedMs, r.Period.PredictedLowMs, r.Period.PredictedHighMs = 0, 0, 0
	r.Overlap.Predicted, r.HostShare.Predicted, r.Queued.Predicted = 0, 0, 0
}

// ShareOf is host time held by copy calls, summed over the region's
// instances (ms), as a share of the region: for a part of the time its
// host-device copy calls held (replay.Region.CopyCallMs), that part of
// their share of the median instance (replay.Region.HostShare), so that
// the parts add up to it; else of the instances' times summed. 0 for a
// region without time.
func (r *Region) ShareOf(ms float64) float64 {
	if r.CopyCallMs > 0 && ms <= r.CopyCallMs {
		return r.HostShare.Measured * ms / r.CopyCallMs
	}
	if r.TotalMs <= 0 {
		return 0
	}
	return ms / r.TotalMs
}

// MeasureOf chooses a region's measure: the span for a region of several
// instances most of which are predicted to complete after the next began
// (replay.Region.Queued), the median instance otherwise.
func MeasureOf(r replay.Region) Measure {
	if r.Instances > 1 && r.Queued.Predicted > QueuedShare {
		return MeasureSpan
	}
	return MeasureMedian
}

// regionsOf are the replay's regions as the audit holds them.
func regionsOf(rs []replay.Region) []Region {
	out := make([]Region, 0, len(rs))
	for _, r := range rs {
		g := Region{Region: r, Measure: MeasureOf(r)}
		g.PageableShare = g.ShareOf(r.PageableCallMs)
		out = append(out, g)
	}
	return out
}

// Time is the region's measured time in its measure, in ms.
func (r *Region) Time() float64 { return r.pick(r.MedianMs, r.SpanMs) }

// Replayed is the region's time replayed as captured, in its measure.
func (r *Region) Replayed() float64 { return r.pick(r.ReplayMedianMs, r.ReplaySpanMs) }

// Predicted is the region's time predicted after pinning, in its measure,
// with the bound of the low and high costs.
func (r *Region) Predicted() (mid, low, high float64) {
	if r.Measure == MeasureSpan {
		return r.PredictedSpanMs, r.PredictedSpanLowMs, r.PredictedSpanHighMs
	}
	return r.PredictedMedianMs, r.PredictedMedianLowMs, r.PredictedMedianHighMs
}

// FitError is the replay's relative error in the region's measure.
func (r *Region) FitError() float64 { return r.pick(r.Fit.Median, r.Fit.Span) }

// OutsideMs is the host time the region's thread spent outside CUDA calls
// in its measure: the median instance's, or every instance's for the span.
func (r *Region) OutsideMs() float64 { return r.pick(r.Outside.MedianMs, r.Outside.TotalMs) }

func (r *Region) pick(median, span float64) float64 {
	if r.Measure == MeasureSpan {
		return span
	}
	return median
}

// Judged are the regions a check and --fail-above consider: the NVTX
// ranges inside which host-device copy calls were made, when the capture
// has any, else the whole capture (replay.CaptureRegion), which holds
// start-up that differs from run to run. A range without copies is not what
// pinning changes (a compiler's passes, say), and its time after differs by
// noise alone.
func (au *Audit) Judged() []*Region {
	var out []*Region
	for i := range au.Regions {
		if r := &au.Regions[i]; r.Name != replay.CaptureRegion && r.CopyCallMs > 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		for i := range au.Regions {
			if au.Regions[i].Name == replay.CaptureRegion {
				out = append(out, &au.Regions[i])
			}
		}
	}
	return out
}

// Region returns the region of the given name, nil if none.
func (au *Audit) Region(name string) *Region {
	for i := range au.Regions {
		if au.Regions[i].Name == name {
			return &au.Regions[i]
		}
	}
	return nil
}

// RegionIndex finds an audit's regions by name as Region does (the first
// of a name), each in one look-up: for the look-ups of every class or
// region, which a scan each made quadratic in the regions (600,000 range
// names, as many regions and classes: minutes, where the audit reads the
// capture in seconds).
type RegionIndex map[string]*Region

// RegionIndex indexes the audit's regions by name; it holds pointers into
// au.Regions, and is stale once they are replaced.
func (au *Audit) RegionIndex() RegionIndex {
	x := make(RegionIndex, len(au.Regions))
	for i := range au.Regions {
		if _, ok := x[au.Regions[i].Name]; !ok {
			x[au.Regions[i].Name] = &au.Regions[i]
		}
	}
	return x
}

// Region returns the region of the given name, nil if none.
func (x RegionIndex) Region(name string) *Region { return x[name] }

// Gate is the one-capture gate of --fail-above: the judged regions whose
// pageable copy calls held the host for more than Limit of their median
// instance.
type Gate struct {
	// Limit is the share given (PERCENT / 100).
	Limit float64
	// Over names the regions above it, with their shares.
	Over []GateRegion
	// Worst is the judged region with the largest share ("" for none).
	Worst GateRegion
}

// GateRegion is one region's share against the gate.
type GateRegion struct {
	Name  string
	Share float64
}

// Passed reports whether no region is over the limit.
func (g *Gate) Passed() bool { return len(g.Over) == 0 }

// FailAbove sets the audit's gate at limit, a share of a region's median
// instance (Region.PageableShare).
func (au *Audit) FailAbove(limit float64) *Gate {
	g := &Gate{Limit: limit, Over: []GateRegion{}}
	for _, r := range au.Judged() {
		gr := GateRegion{Name: r.Name, Share: r.PageableShare}
		if g.Worst.Name == "" || gr.Share > g.Worst.Share {
			g.Worst = gr
		}
		if r.PageableShare > limit {
			g.Over = append(g.Over, gr)
		}
	}
	au.Gate = g
	return g
}
