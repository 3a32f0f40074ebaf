package replay

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Bound is a value with its low and high bound: Low the most favourable
// (the fastest), High the least.
type Bound struct {
	Low  float64 `json:"low"`
	Mid  float64 `json:"mid"`
	High float64 `json:"high"`
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

func (b Bound) add(c Bound) Bound { return Bound{b.Low + c.Low, b.Mid + c.Mid, b.High + c.High} }

// Cost is what one copy costs once its host memory is pinned. A coster
// may know only one of its two parts: a part with no source is unknown.
type Cost struct {
	// CallNs is the host time its call holds the thread beside the copy:
	// the whole call for an async copy, the call's time outside the copy
	// for a blocking one.
	CallNs Bound `json:"callNs"`
	// GPUNs is the copy's GPU duration.
	GPUNs Bound `json:"gpuNs"`
	// CallSource and GPUSource say where each part comes from
	// (SourceCapture, or a rate's own source), "" when unknown.
	CallSource string `json:"callSource"`
	GPUSource  string `json:"gpuSource"`
	// Samples is how many measured pinned copies the GPU part comes from,
	// 0 for a rate.
	Samples int `json:"samples"`
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
			out.CallNs, out.CallSource = cost.CallNs, cost.CallSource
		}
		if out.GPUSource == "" && cost.GPUSource != "" {
			out.GPUNs, out.GPUSource, out.Samples = cost.GPUNs, cost.GPUSource, cost.Samples
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

func quantilesOf(v []float64) (quantiles, bool) {
	if len(v) < MinSamples {
		return quantiles{}, false
	}
	slices.Sort(v)
	return quantiles{Bound{stat.Quantile(0.1, stat.Empirical, v, nil), stat.Quantile(0.5, stat.Empirical, v, nil),
		stat.Quantile(0.9, stat.Empirical, v, nil)}, len(v)}, true
}

// NewCaptureCoster gathers the pinned host-device copies of tl by
// direction and size class.
func NewCaptureCoster(tl *timeline.Timeline, sizes Sizes) *CaptureCoster {
	gpu := map[gpuKey][]float64{}
	call := map[callKey][]float64{}
	o := &tl.Ops
	for j := range o.Kind {
		op := int32(j)
		if o.HostMem(op) != timeline.MemPinned || o.Bytes[j] <= 0 {
			continue
		}
		dir, class := o.Dir[j], sizes.Of(o.Bytes[j])
		gpu[gpuKey{dir, class}] = append(gpu[gpuKey{dir, class}], float64(o.Duration(op))/float64(o.Bytes[j]))
		c := o.Call[j]
		if c == timeline.None {
			continue
		}
		host := float64(tl.Calls.Duration(c))
		var async bool
		switch timeline.RoleOf(tl.Name(tl.Calls.Name[c])) {
		case timeline.RoleCopyAsync:
			async = true
		case timeline.RoleCopyBlocking:
			host = max(host-float64(o.Duration(op)), 0)
		default:
			continue
		}
		for _, k := range []callKey{{dir, async, class}, {dir, async, -1}, {timeline.DirNone, async, -1}} {
			call[k] = append(call[k], host)
		}
	}
	cc := &CaptureCoster{sizes: sizes, gpu: map[gpuKey]quantiles{}, call: map[callKey]quantiles{}, anyCall: map[callKey]quantiles{}}
	for k, v := range gpu {
		if q, ok := quantilesOf(v); ok {
			cc.gpu[k] = q
		}
	}
	for k, v := range call {
		if q, ok := quantilesOf(v); ok {
			if k.class < 0 {
				cc.anyCall[k] = q
			} else {
				cc.call[k] = q
			}
		}
	}
	return cc
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
		out.CallNs, out.CallSource = c.q, SourceCapture
	}
	return out, out.CallSource != "" || out.GPUSource != ""
}

// RatePoint is a pinned rate measured at one copy size, in GB/s (1e9
// bytes/s): Low the slowest rate, High the fastest.
type RatePoint struct {
	Bytes int64
	GBps  Bound
}

// RateCoster costs pinned copies by rates measured outside the capture (a
// run of the lesson's program on the same machine, or the link): a copy
// takes the rate of the point nearest its size (by ratio).
type RateCoster struct {
	// Rates holds the points of each direction; a direction missing has no
	// GPU part.
	Rates map[vocab.CopyKind][]RatePoint
	// AsyncCallNs and BlockingCallNs are the host time of a pinned async
	// call and of a blocking call beside its copy; nil: no call part.
	AsyncCallNs, BlockingCallNs *Bound
	// Source names where the rates come from.
	Source string
}

// Pinned implements Coster.
func (rc *RateCoster) Pinned(dir vocab.CopyKind, bytes int64, async bool) (Cost, bool) {
	var out Cost
	best := math.Inf(1)
	for _, p := range rc.Rates[dir] {
		if p.GBps.Low <= 0 || p.GBps.Mid <= 0 || p.GBps.High <= 0 || p.Bytes <= 0 {
			continue
		}
		if d := math.Abs(math.Log(float64(p.Bytes) / float64(max(bytes, 1)))); d < best {
			best = d
			b := float64(bytes)
			// The fastest rate gives the lowest time.
			out.GPUNs, out.GPUSource = Bound{Low: b / p.GBps.High, Mid: b / p.GBps.Mid, High: b / p.GBps.Low}, rc.Source
		}
	}
	call := rc.BlockingCallNs
	if async {
		call = rc.AsyncCallNs
	}
	if call != nil {
		out.CallNs, out.CallSource = *call, rc.Source
	}
	return out, out.CallSource != "" || out.GPUSource != ""
}
