package audit

import (
	"fmt"
	"math"
	"sort"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// Rates are pinned-copy rates measured outside the capture: a run of the
// lesson's program on the same machine (`nsyscheck run`), and the link.
type Rates struct {
	// Source says where they come from, e.g. the run folder.
	Source string `json:"source"`
	// Copies are pinned copies timed by the program, by direction and size.
	Copies []RatePoint `json:"copies,omitempty"`
	// AsyncCallNs is the time a pinned cudaMemcpyAsync call held the host,
	// 0 when not measured.
	AsyncCallNs float64 `json:"asyncCallNs,omitempty"`
	// LinkGBps is the host-device link's rate in GB/s (1e9 bytes/s);
	// LinkSource says where it comes from.
	LinkGBps   float64 `json:"linkGBps,omitempty"`
	LinkSource string  `json:"linkSource,omitempty"`
}

// RatePoint is one timed pinned copy size.
type RatePoint struct {
	Direction vocab.CopyKind `json:"direction"`
	Bytes     int64          `json:"bytes"`
	GBps      float64        `json:"gbps"`
}

// Rate sources, best first.
const (
	SourceCapture = "capture" // the capture's own pinned copies of similar size
	SourceRun     = "run"     // a run of the lesson's program on the same machine
	SourceLink    = "link"    // the link rate
	SourceNone    = "none"    // nothing to predict from
)

// MinSamples is how many pinned copies of one direction, API kind and size
// bucket the capture must hold for its own rate to be used.
const MinSamples = 3

// LinkShare is the lowest share of the link rate a pinned copy is assumed to
// reach when only the link rate is known.
const LinkShare = 0.5

// Prediction is what pinning the pageable copies would save in host time.
type Prediction struct {
	// Groups predict each pageable direction, API kind and size bucket.
	Groups []GroupPrediction `json:"groups"`
	// Sources lists the rate sources the groups used.
	Sources []string `json:"sources"`
	// Pageable copies now and their host time; the host time predicted
	// after pinning (with a low and high bound) and the saving.
	Count       int64 `json:"count"`
	Bytes       int64 `json:"bytes"`
	BeforeNs    int64 `json:"beforeNs"`
	AfterNs     int64 `json:"afterNs"`
	AfterLowNs  int64 `json:"afterLowNs"`
	AfterHighNs int64 `json:"afterHighNs"`
	SavedNs     int64 `json:"savedNs"`
	SavedLowNs  int64 `json:"savedLowNs"`
	SavedHighNs int64 `json:"savedHighNs"`
	// HtoD is the same for host-to-device copies alone, the part `audit
	// BEFORE AFTER` checks: all HtoD copy calls now, and predicted after.
	HtoD HtoDPrediction `json:"htod"`
	// Statement is the prediction in one sentence.
	Statement string `json:"statement"`
}

// HtoDPrediction is the host-to-device part of a Prediction.
type HtoDPrediction struct {
	BeforeNs         int64 `json:"beforeNs"` // every HtoD copy call
	PageableBeforeNs int64 `json:"pageableBeforeNs"`
	AfterNs          int64 `json:"afterNs"`
	AfterLowNs       int64 `json:"afterLowNs"`
	AfterHighNs      int64 `json:"afterHighNs"`
	Bytes            int64 `json:"bytes"`
}

// GroupPrediction is the prediction for the pageable copies of one
// direction, API kind and size bucket.
type GroupPrediction struct {
	Direction   vocab.CopyKind `json:"direction"`
	APIKind     APIKind        `json:"apiKind"`
	SizeBucket  string         `json:"sizeBucket"`
	Count       int64          `json:"count"`
	Bytes       int64          `json:"bytes"`
	BeforeNs    int64          `json:"beforeNs"`
	AfterNs     int64          `json:"afterNs"`
	AfterLowNs  int64          `json:"afterLowNs"`
	AfterHighNs int64          `json:"afterHighNs"`
	Source      string         `json:"source"`
	// Basis says which measured number the after-times come from.
	Basis string `json:"basis"`
}

func (a *Accumulator) predict(au *Audit, rates *Rates) *Prediction {
	p := &Prediction{Groups: []GroupPrediction{}, Sources: []string{}}
	keys := make([]groupKey, 0, len(a.pageable))
	for k := range a.pageable {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		x, y := keys[i], keys[j]
		if x.dir != y.dir {
			return x.dir > y.dir // HtoD first
		}
		if x.kind != y.kind {
			return x.kind < y.kind
		}
		return x.bucket < y.bucket
	})
	sources := map[string]bool{}
	for _, k := range keys {
		g := a.pageable[k]
		gp := GroupPrediction{Direction: g.dir, APIKind: g.kind, SizeBucket: Buckets[g.bucket].Name,
			Count: g.count, Bytes: g.bytes, BeforeNs: g.hostNs}
		a.predictGroup(&gp, g, rates)
		sources[gp.Source] = true
		p.Groups = append(p.Groups, gp)
		p.Count += gp.Count
		p.Bytes += gp.Bytes
		p.BeforeNs += gp.BeforeNs
		p.AfterNs += gp.AfterNs
		p.AfterLowNs += gp.AfterLowNs
		p.AfterHighNs += gp.AfterHighNs
		if g.dir == vocab.CopyHtoD {
			p.HtoD.PageableBeforeNs += gp.BeforeNs
			p.HtoD.AfterNs += gp.AfterNs
			p.HtoD.AfterLowNs += gp.AfterLowNs
			p.HtoD.AfterHighNs += gp.AfterHighNs
		}
	}
	for _, s := range []string{SourceCapture, SourceRun, SourceLink, SourceNone} {
		if sources[s] {
			p.Sources = append(p.Sources, s)
		}
	}
	p.SavedNs = p.BeforeNs - p.AfterNs
	p.SavedLowNs = p.BeforeNs - p.AfterHighNs
	p.SavedHighNs = p.BeforeNs - p.AfterLowNs
	all := au.Sum(vocab.CopyHtoD, "", "")
	p.HtoD.BeforeNs, p.HtoD.Bytes = all.HostNs, all.Bytes
	// The HtoD copies that are not pageable stay as they are.
	rest := all.HostNs - p.HtoD.PageableBeforeNs
	p.HtoD.AfterNs += rest
	p.HtoD.AfterLowNs += rest
	p.HtoD.AfterHighNs += rest
	p.Statement = p.statement(rates)
	return p
}

// predictGroup fills the after-times of one pageable group from the best
// source there is.
func (a *Accumulator) predictGroup(gp *GroupPrediction, g *group, rates *Rates) {
	set := func(src, basis string, after, low, high float64) {
		gp.Source, gp.Basis = src, basis
		gp.AfterNs, gp.AfterLowNs, gp.AfterHighNs = round(after), round(low), round(high)
	}
	n, b := float64(g.count), float64(g.bytes)
	// 1. The capture's own pinned copies of the same direction, API kind
	// and size bucket.
	if pin := a.pinned[groupKey{g.dir, g.kind, g.bucket}]; pin != nil && pin.callNs.n >= MinSamples {
		if g.kind == Async {
			// A pinned async call holds the host for its launch only:
			// per call, whatever the size.
			q10, q50, q90 := pin.callNs.span()
			set(SourceCapture, fmt.Sprintf("%d pinned %s %s calls of %s in this capture held the host %s per call (median; 10th-90th percentile %s-%s)",
				pin.count, g.kind, g.dir, Buckets[g.bucket].Name, FormatNs(q50), FormatNs(q10), FormatNs(q90)), n*q50, n*q10, n*q90)
			return
		}
		q10, q50, q90 := pin.nsPerB.span()
		set(SourceCapture, fmt.Sprintf("%d pinned %s %s calls of %s in this capture moved %.1f GB/s as the host saw it (median; 10th-90th percentile %.1f-%.1f GB/s)",
			pin.count, g.kind, g.dir, Buckets[g.bucket].Name, 1/q50, 1/q90, 1/q10), b*q50, b*q10, b*q90)
		return
	}
	// 1b. A pinned async call holds the host for its launch only, whatever
	// its size or direction: any pinned async calls of the capture tell it.
	if g.kind == Async {
		var all hist
		var count int64
		for _, pin := range a.pinned {
			if pin.kind != Async {
				continue
			}
			count += pin.count
			for k, v := range pin.callNs.bins {
				if all.bins == nil {
					all.bins = map[int]int64{}
				}
				all.bins[k] += v
				all.n += v
			}
		}
		if all.n >= MinSamples {
			q10, q50, q90 := all.span()
			set(SourceCapture, fmt.Sprintf("%d pinned async calls of other sizes or directions in this capture held the host %s per call (median; 10th-90th percentile %s-%s), and a pinned async call's time does not grow with its size",
				count, FormatNs(q50), FormatNs(q10), FormatNs(q90)), n*q50, n*q10, n*q90)
			return
		}
	}
	// 2. A run of the lesson's program on the same machine.
	if rates != nil {
		if g.kind == Async && rates.AsyncCallNs > 0 {
			c := rates.AsyncCallNs
			set(SourceRun, fmt.Sprintf("a pinned cudaMemcpyAsync call held the host %s in %s (bound: half to twice that)", FormatNs(c), rates.Source),
				n*c, n*c/2, n*c*2)
			return
		}
		if g.kind == Blocking {
			if r, lo, hi, ok := rates.pinnedRate(g.dir, g.bytes/max(g.count, 1)); ok {
				set(SourceRun, fmt.Sprintf("pinned %s copies of about this size moved %.1f GB/s in %s (%.1f-%.1f GB/s at sizes within 4x)",
					g.dir, r, rates.Source, lo, hi), b/r, b/hi, b/lo)
				return
			}
		}
		if rates.LinkGBps > 0 {
			l := rates.LinkGBps
			if g.kind == Async {
				set(SourceLink, fmt.Sprintf("no measured pinned async call: a pinned async call returns before its copy ends, so at most the copy's time at %.1f%% of the %.1f GB/s link (%s)",
					LinkShare*100, l, rates.LinkSource), b/l, 0, b/(l*LinkShare))
			} else {
				set(SourceLink, fmt.Sprintf("no measured pinned rate: the %.1f GB/s link (%s), assuming a pinned copy reaches at least %.0f%% of it",
					l, rates.LinkSource, LinkShare*100), b/l, b/l, b/(l*LinkShare))
			}
			return
		}
	}
	set(SourceNone, "no pinned copies of this kind in the capture, no run folder and no link rate", float64(g.hostNs), float64(g.hostNs), float64(g.hostNs))
}

// pinnedRate returns the pinned rate (GB/s) of the timed size nearest to
// bytes in direction dir, and the lowest and highest rates at sizes within a
// factor of 4 of it.
func (r *Rates) pinnedRate(dir vocab.CopyKind, bytes int64) (rate, lo, hi float64, ok bool) {
	best := math.Inf(1)
	for _, p := range r.Copies {
		if p.Direction != dir || p.GBps <= 0 || p.Bytes <= 0 {
			continue
		}
		d := math.Abs(math.Log(float64(p.Bytes) / float64(max(bytes, 1))))
		if d < best {
			best, rate, ok = d, p.GBps, true
		}
	}
	if !ok {
		return 0, 0, 0, false
	}
	lo, hi = rate, rate
	for _, p := range r.Copies {
		if p.Direction != dir || p.GBps <= 0 || p.Bytes <= 0 {
			continue
		}
		if math.Abs(math.Log(float64(p.Bytes)/float64(max(bytes, 1)))) <= math.Log(4) {
			lo, hi = min(lo, p.GBps), max(hi, p.GBps)
		}
	}
	return rate, lo, hi, true
}

func (p *Prediction) statement(rates *Rates) string {
	if p.Count == 0 {
		return "the capture has no pageable host-device copies: there is nothing for pinning to save"
	}
	src := map[string]string{
		SourceCapture: "the capture's own pinned copies of similar size",
		SourceRun:     "the lesson's program run on the same machine",
		SourceLink:    "the link rate",
		SourceNone:    "nothing measured",
	}
	var from []string
	for _, s := range p.Sources {
		t := src[s]
		if s == SourceRun && rates != nil {
			t += " (" + rates.Source + ")"
		}
		from = append(from, t)
	}
	return fmt.Sprintf("pinning the %d pageable copies (%s, %s of host time) should save %s of host time, between %s and %s; rates from %s",
		p.Count, FormatMB(p.Bytes), FormatNs(float64(p.BeforeNs)), FormatNs(float64(p.SavedNs)), FormatNs(float64(p.SavedLowNs)), FormatNs(float64(p.SavedHighNs)), joinAnd(from))
}

func round(v float64) int64 { return int64(math.Round(v)) }
