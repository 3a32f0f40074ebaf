package replay

import (
	"math"

	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Bound is a value with its low and high bound: Low the most favourable
// (the fastest), High the least.
type Bound struct {
	Low  float64
	Mid  float64
	High float64
}

// at returns the bound's value at a level.
func (b Bound) at(l level) float64 {
	switch l {
	case levelLow:
		return b.Low
	case levelHigh:
		return b.High
	}
	return b.Mid
}

func (b Bound) scale(f float64) Bound { return Bound{b.Low * f, b.Mid * f, b.High * f} }

// Add is the sum of two bounds, level by level.
func (b Bound) Add(c Bound) Bound { return Bound{b.Low + c.Low, b.Mid + c.Mid, b.High + c.High} }

// Cost is what one copy costs once its host memory is pinned. A coster
// may know only one of its two parts: a part with no source is unknown.
type Cost struct {
	// CallNs is the host time its call holds the thread beside the copy:
	// the whole call for an async copy, the call's time outside the copy
	// for a blocking one.
	CallNs Bound
	// GPUNs is the copy's GPU duration.
	GPUNs Bound
	// CallSource and GPUSource say where each part comes from
	// (SourceCapture, SourceRun, SourceLink), "" when unknown; CallFrom and
	// GPUFrom name the run folder or the link's source for a rate.
	CallSource string
	GPUSource  string
	CallFrom   string
	GPUFrom    string
	// Samples and CallSamples are how many measured pinned copies and
	// calls the GPU and the call part come from, 0 for a rate.
	Samples     int
	CallSamples int
}

// complete reports whether both parts are known.
func (c Cost) complete() bool { return c.CallSource != "" && c.GPUSource != "" }

// Coster tells what a copy of a direction and size would cost from pinned
// memory; ok is false when it can tell neither part.
type Coster interface {
	Pinned(dir vocab.CopyKind, bytes int64, async bool) (c Cost, ok bool)
}

// Chain asks each coster in turn and takes each part of the cost from the
// first that knows it.
type Chain []Coster

// Pinned implements Coster.
func (ch Chain) Pinned(dir vocab.CopyKind, bytes int64, async bool) (Cost, bool) {
	var out Cost
	for _, c := range ch {
		if c == nil {
			continue
		}
		cost, ok := c.Pinned(dir, bytes, async)
		if !ok {
			continue
		}
		if out.CallSource == "" && cost.CallSource != "" {
			out.CallNs, out.CallSource, out.CallFrom, out.CallSamples = cost.CallNs, cost.CallSource, cost.CallFrom, cost.CallSamples
		}
		if out.GPUSource == "" && cost.GPUSource != "" {
			out.GPUNs, out.GPUSource, out.GPUFrom, out.Samples = cost.GPUNs, cost.GPUSource, cost.GPUFrom, cost.Samples
		}
		if out.complete() {
			break
		}
	}
	return out, out.CallSource != "" || out.GPUSource != ""
}

// Sizes sorts copies into the size classes costs are taken over: Of gives
// the class of a copy of that many bytes, Name its label. The audit's
// buckets fit: Sizes{Of: audit.BucketOf, Name: func(i int) string {
// return audit.Buckets[i].Name }}.
type Sizes struct {
	Of   func(bytes int64) int
	Name func(class int) string
}

// MinSamples is how many pinned copies of one direction, API kind and size
// class a capture must hold for their cost to stand for a pageable copy's
// (the audit asks as many).
const MinSamples = 3

// SourceCapture is the Source of costs taken from the capture's own
// pinned copies.
const SourceCapture = "capture"

// CaptureCoster costs pinned copies by the capture's own pinned copies of
// the same direction and size class: the medians and the 10th and 90th
// percentiles of their GPU time per byte and of their calls' host time.
type CaptureCoster struct {
	sizes Sizes
	// gpu holds GPU ns per byte per (direction, class); call the calls'
	// host time per (direction, async, class); anyCall the calls' host time
	// per (async) over every direction and class, and per (direction,
	// async) over every class.
	gpu     map[gpuKey]quantiles
	call    map[callKey]quantiles
	anyCall map[callKey]quantiles
}

type gpuKey struct {
	dir   timeline.Dir
	class int
}

type callKey struct {
	dir   timeline.Dir // DirNone: every direction
	async bool
	class int // -1: every class
}

type quantiles struct {
	q Bound
	n int
}

// quantilesOf is the 10th, 50th and 90th percentile of v as stat.Quantile
// with stat.Empirical gives them (each a value of v), found by selection:
// the median first, then each of the others among the values on its side
// of it; v is reordered.
func quantilesOf(v []float64) (quantiles, bool) {
	n := len(v)
	if n < MinSamples {
		return quantiles{}, false
	}
	lo, mid, hi := quantileRank(n, 0.1), quantileRank(n, 0.5), quantileRank(n, 0.9)
	selectAt(v, mid)
	q := Bound{Mid: v[mid]}
	selectAt(v[:mid+1], lo)
	q.Low = v[lo]
	selectAt(v[mid:], hi-mid)
	q.High = v[hi]
	return quantiles{q, n}, true
}

// NewCaptureCoster gathers the pinned host-device copies of tl by
// direction and size class.
func NewCaptureCoster(tl *timeline.Timeline, sizes Sizes) *CaptureCoster {
	gpu := map[gpuKey]*sizedList{}
	call := map[callKey]*sizedList{}
	// Consecutive copies are mostly of one direction, size class and API:
	// the lists of the last one's keys are kept at hand.
	var last struct {
		ok         bool
		dir        timeline.Dir
		class      int
		api        int32
		gpu        *sizedList
		calls      [3]*sizedList
		async, use bool
	}
	list := func(m map[callKey]*sizedList, k callKey) *sizedList {
		l := m[k]
		if l == nil {
			l = new(sizedList)
			m[k] = l
		}
		return l
	}
	o := &tl.Ops
	// The copies are gone through twice: counted into their lists, then
	// added to them, each list made as long as it will be.
	for pass := range 2 {
		counting := pass == 0
		if !counting {
			for _, l := range gpu {
				l.v = make([]float64, 0, l.n)
			}
			for _, l := range call {
				l.v = make([]float64, 0, l.n)
			}
		}
		last.ok = false
		for j := range o.Kind {
			op := int32(j)
			if o.HostMem(op) != timeline.MemPinned || o.Bytes[j] <= 0 {
				continue
			}
			dir, class := o.Dir[j], sizes.Of(o.Bytes[j])
			c := o.Call[j]
			api := timeline.None
			if c != timeline.None {
				api = tl.Calls.Name[c]
			}
			if !last.ok || last.dir != dir || last.class != class || last.api != api {
				last.ok, last.dir, last.class, last.api = true, dir, class, api
				k := gpuKey{dir, class}
				if last.gpu = gpu[k]; last.gpu == nil {
					last.gpu = new(sizedList)
					gpu[k] = last.gpu
				}
				last.use = false
				if api != timeline.None {
					switch timeline.RoleOf(tl.Name(api)) {
					case timeline.RoleCopyAsync:
						last.async, last.use = true, true
					case timeline.RoleCopyBlocking:
						last.async, last.use = false, true
					}
				}
				if last.use {
					for i, k := range []callKey{{dir, last.async, class}, {dir, last.async, -1}, {timeline.DirNone, last.async, -1}} {
						last.calls[i] = list(call, k)
					}
				}
			}
			usesCall := c != timeline.None && last.use
			if counting {
				last.gpu.n++
				if usesCall {
					for _, l := range last.calls {
						l.n++
					}
				}
				continue
			}
			last.gpu.v = append(last.gpu.v, float64(o.Duration(op))/float64(o.Bytes[j]))
			if !usesCall {
				continue
			}
			host := float64(tl.Calls.Duration(c))
			if !last.async {
				host = max(host-float64(o.Duration(op)), 0)
			}
			for _, l := range last.calls {
				l.v = append(l.v, host)
			}
		}
	}
	cc := &CaptureCoster{sizes: sizes, gpu: map[gpuKey]quantiles{}, call: map[callKey]quantiles{}, anyCall: map[callKey]quantiles{}}
	for k, v := range gpu {
		if q, ok := quantilesOf(v.v); ok {
			cc.gpu[k] = q
		}
	}
	// A coarser list of calls holds every value of its finer ones, so one
	// of the same length holds just one finer list's values (a capture's
	// pinned calls mostly of one direction and size class) and has its
	// quantiles: taken once, finest lists first.
	type taken struct {
		q  quantiles
		ok bool
	}
	byKey := make(map[callKey]taken, len(call))
	for _, coarse := range []int{0, 1, 2} { // class and direction; direction; neither
		for k, v := range call {
			if callCoarseness(k) != coarse {
				continue
			}
			t, found := taken{}, false
			for fk, ft := range byKey {
				if callCoarseness(fk) == coarse-1 && finerCall(fk, k) && len(call[fk].v) == len(v.v) {
					t, found = ft, true
					break
				}
			}
			if !found {
				t.q, t.ok = quantilesOf(v.v)
			}
			byKey[k] = t
			if !t.ok {
				continue
			}
			if k.class < 0 {
				cc.anyCall[k] = t.q
			} else {
				cc.call[k] = t.q
			}
		}
	}
	return cc
}

// sizedList is a list of values and, before they are added, how many
// there will be.
type sizedList struct {
	v []float64
	n int
}

// callCoarseness is 0 for a key of calls of one direction and size class,
// 1 for one direction of every class, 2 for every direction.
func callCoarseness(k callKey) int {
	switch {
	case k.class >= 0:
		return 0
	case k.dir != timeline.DirNone:
		return 1
	}
	return 2
}

// finerCall reports whether key f's calls are among key k's, f one step
// finer than k.
func finerCall(f, k callKey) bool {
	if f.async != k.async {
		return false
	}
	if callCoarseness(k) == 1 {
		return f.dir == k.dir
	}
	return true
}

// Pinned implements Coster: the GPU time needs pinned copies of the same
// direction and size class; the call's time is taken from the same
// direction, API kind and class, else the same direction and API kind of
// any size, else the same API kind (a pinned call's own cost hardly grows
// with its size).
func (cc *CaptureCoster) Pinned(dir vocab.CopyKind, bytes int64, async bool) (Cost, bool) {
	d, class := timeline.DirOf(dir), cc.sizes.Of(bytes)
	var out Cost
	if g, ok := cc.gpu[gpuKey{d, class}]; ok {
		out.GPUNs, out.GPUSource, out.Samples = g.q.scale(float64(bytes)), SourceCapture, g.n
	}
	c, ok := cc.call[callKey{d, async, class}]
	if !ok {
		c, ok = cc.anyCall[callKey{d, async, -1}]
	}
	if !ok {
		c, ok = cc.anyCall[callKey{timeline.DirNone, async, -1}]
	}
	if ok {
		out.CallNs, out.CallSource, out.CallSamples = c.q, SourceCapture, c.n
	}
	return out, out.CallSource != "" || out.GPUSource != ""
}

// SourceLaunch is the Source of a call's cost taken from the capture's own
// kernel launches (LaunchCoster).
const SourceLaunch = "launch"

// LaunchCoster costs the call part of a pinned copy by the capture's own
// calls that launched a kernel: a copy call from pinned memory only
// enqueues its copy, as a launch enqueues its kernel, and returns. Launches
// beside copies from pageable memory are slowed by the driver's staging
// (on the H200, 30-50 µs a launch where a pinned copy call took 2.5-16
// µs), so the fastest tenth of them stands for the call, bounded by
// nothing below and their median above. It is the last resort, for a
// capture without pinned copy calls and no run with a timed pinned call;
// it knows no GPU time.
type LaunchCoster struct {
	q  quantiles
	ok bool
}

// NewLaunchCoster gathers the host time of tl's calls that launched a
// kernel: their 10th percentile, with 0 and their median as its bound.
func NewLaunchCoster(tl *timeline.Timeline) *LaunchCoster {
	var v []float64
	for c := range tl.Calls.Start {
		for _, j := range tl.OpsOf(int32(c)) {
			if tl.Ops.Kind[j] == timeline.OpKernel {
				v = append(v, float64(tl.Calls.Duration(int32(c))))
				break
			}
		}
	}
	q, ok := quantilesOf(v)
	q.q = Bound{Low: 0, Mid: q.q.Low, High: q.q.Mid}
	return &LaunchCoster{q: q, ok: ok}
}

// Pinned implements Coster: the call part alone.
func (lc *LaunchCoster) Pinned(vocab.CopyKind, int64, bool) (Cost, bool) {
	if !lc.ok {
		return Cost{}, false
	}
	return Cost{CallNs: lc.q.q, CallSource: SourceLaunch, CallSamples: lc.q.n}, true
}

// Rate sources besides SourceCapture, named as the audit names them.
const (
	// SourceRun: pinned copies timed by a run of the lesson's program on
	// the same machine (the audit's --rates run folder).
	SourceRun = "run"
	// SourceLink: the host-device link's rate.
	SourceLink = "link"
)

// LinkShare is the lowest share of the link rate a pinned copy is taken to
// reach when only the link is known (the audit's LinkShare).
const LinkShare = 0.5

// RateWindow is how far from a copy's size, as a factor, the timed sizes
// bounding its rate may lie (the audit's rule).
const RateWindow = 4

// RatePoint is one pinned copy size timed outside the capture, in GB/s
// (1e9 bytes/s).
type RatePoint struct {
	Direction vocab.CopyKind
	Bytes     int64
	GBps      float64
}

// RateCoster costs pinned copies by rates measured outside the capture: a
// run of the lesson's program on the same machine, else the link.
type RateCoster struct {
	// Points are the timed pinned copies. A copy takes the rate of the
	// timed size of its direction nearest its own (by ratio), bounded by the
	// slowest and fastest timed rates of its direction at sizes within
	// RateWindow of its size: the audit's rule (its Rates.pinnedRate), which
	// the audit is to take from here.
	Points []RatePoint
	// PointsFrom says where the points come from (the run folder).
	PointsFrom string
	// LinkGBps is the link's rate, 0 unknown; LinkFrom says where it comes
	// from. A direction without points takes its copies' time at the link
	// rate, bounded by LinkShare of it.
	LinkGBps float64
	LinkFrom string
	// AsyncCallNs is the host time of a pinned async copy call, nil
	// unknown; BlockingCallNs that of a pinned blocking copy call beside
	// its copy, nil to take the async call's (a blocking call launches its
	// copy as an async one does, then waits). CallFrom says where they come
	// from.
	AsyncCallNs, BlockingCallNs *Bound
	CallFrom                    string
}

// NewRateCoster returns the coster of rates measured outside the capture,
// as the audit gathers them: the timed pinned copies of a run folder
// (points, from), the time a pinned async copy call held the host in that
// run (asyncCallNs, 0 unknown; bounded by half to twice that, as the audit
// bounds it), and the link (linkGBps, 0 unknown, and where its rate comes
// from).
func NewRateCoster(points []RatePoint, from string, asyncCallNs float64, linkGBps float64, linkFrom string) *RateCoster {
	rc := &RateCoster{Points: points, PointsFrom: from, LinkGBps: linkGBps, LinkFrom: linkFrom}
	if asyncCallNs > 0 {
		rc.AsyncCallNs = &Bound{Low: asyncCallNs / 2, Mid: asyncCallNs, High: 2 * asyncCallNs}
		rc.CallFrom = from
	}
	return rc
}

// PinnedRate returns the rate (GB/s) a pinned copy of dir and bytes takes
// from the points: the nearest timed size's, and the slowest and fastest at
// sizes within RateWindow of bytes. ok is false without points of dir.
func (rc *RateCoster) PinnedRate(dir vocab.CopyKind, bytes int64) (rate Bound, ok bool) {
	best := math.Inf(1)
	size := float64(max(bytes, 1))
	for _, p := range rc.Points {
		if p.Direction != dir || p.GBps <= 0 || p.Bytes <= 0 {
			continue
		}
		if d := math.Abs(math.Log(float64(p.Bytes) / size)); d < best {
			best, rate.Mid, ok = d, p.GBps, true
		}
	}
	if !ok {
		return Bound{}, false
	}
	rate.Low, rate.High = rate.Mid, rate.Mid
	for _, p := range rc.Points {
		if p.Direction != dir || p.GBps <= 0 || p.Bytes <= 0 {
			continue
		}
		if math.Abs(math.Log(float64(p.Bytes)/size)) <= math.Log(RateWindow) {
			rate.Low, rate.High = min(rate.Low, p.GBps), max(rate.High, p.GBps)
		}
	}
	return rate, true
}

// Pinned implements Coster.
func (rc *RateCoster) Pinned(dir vocab.CopyKind, bytes int64, async bool) (Cost, bool) {
	var out Cost
	b := float64(bytes)
	if r, ok := rc.PinnedRate(dir, bytes); ok {
		// The fastest rate gives the lowest time.
		out.GPUNs, out.GPUSource, out.GPUFrom = Bound{Low: b / r.High, Mid: b / r.Mid, High: b / r.Low}, SourceRun, rc.PointsFrom
	} else if d := timeline.DirOf(dir); rc.LinkGBps > 0 && d.HostDevice() {
		l := rc.LinkGBps
		out.GPUNs, out.GPUSource, out.GPUFrom = Bound{Low: b / l, Mid: b / l, High: b / (l * LinkShare)}, SourceLink, rc.LinkFrom
	}
	call := rc.BlockingCallNs
	if async || call == nil {
		call = rc.AsyncCallNs
	}
	if call != nil {
		out.CallNs, out.CallSource, out.CallFrom = *call, SourceRun, rc.CallFrom
	}
	return out, out.CallSource != "" || out.GPUSource != ""
}
