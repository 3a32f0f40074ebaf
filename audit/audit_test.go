package audit

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// cp builds a copy: API, direction, source and destination memory, bytes,
// call [cs, ce] and GPU [gs, ge].
func cp(api string, dir vocab.CopyKind, src, dst vocab.MemKind, bytes, cs, ce, gs, ge int64) *copyCall {
	return &copyCall{API: api, CallStart: cs, CallEnd: ce, HostNs: ce - cs, Kind: dir, Src: src, Dst: dst,
		Bytes: bytes, Start: gs, End: ge, PID: 1, TID: 1, Stream: 7, CorrelationID: cs}
}

const (
	mb4 = 4 << 20
	pg  = vocab.MemPageable
	pin = vocab.MemPinned
	dev = vocab.MemDevice
)

func scanOf(copies int64) *capture.CopyScan {
	return &capture.CopyScan{Path: "x", Format: capture.FormatSQLite, APICalls: 100, Span: 10_000_000, SpanFrom: capture.SpanTrace, Copies: copies}
}

func TestKindsAndBuckets(t *testing.T) {
	for api, want := range map[string]APIKind{"cudaMemcpyAsync": Async, "cudaMemcpy2DAsync": Async, "cudaMemcpyBatchAsync": Async,
		"cudaMemcpy": Blocking, "cudaMemcpyPeer": Blocking, "cudaMemcpy3D": Blocking, "": UnknownAPI} {
		if got := KindOf(api); got != want {
			t.Errorf("KindOf(%q) = %s, want %s", api, got, want)
		}
	}
	cases := []struct {
		dir      vocab.CopyKind
		src, dst vocab.MemKind
		want     HostMemory
	}{
		{vocab.CopyHtoD, pg, dev, Pageable}, {vocab.CopyDtoH, dev, pin, Pinned}, {vocab.CopyHtoD, vocab.MemManaged, dev, Managed},
		{vocab.CopyDtoD, dev, dev, NoHost}, {vocab.CopyPtoP, dev, dev, NoHost}, {vocab.CopyHtoD, vocab.MemUnknown, dev, UnknownHost},
		{vocab.CopyHtoH, pin, pg, Pageable},
	}
	for _, c := range cases {
		if got := HostMemoryOf(c.dir, c.src, c.dst); got != c.want {
			t.Errorf("HostMemoryOf(%s %s->%s) = %s, want %s", c.dir, c.src, c.dst, got, c.want)
		}
	}
	for b, want := range map[int64]string{0: "<4KiB", 4095: "<4KiB", 4096: "4KiB-64KiB", 1 << 20: "1MiB-16MiB", 300 << 20: ">=256MiB"} {
		if got := Buckets[BucketOf(b)].Name; got != want {
			t.Errorf("BucketOf(%d) = %s, want %s", b, got, want)
		}
	}
}

func TestClassesAndFindings(t *testing.T) {
	a := NewAccumulator()
	// 10 pageable async HtoD copies of 4 MiB: each call holds the host 1 ms
	// for a 0.9 ms copy — secretly synchronous.
	for i := int64(0); i < 10; i++ {
		s := i * 2_000_000
		c := cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, s, s+1_000_000, s+50_000, s+950_000)
		c.Range = "step"
		a.add(c)
	}
	// 5 pinned async HtoD copies of 4 MiB: 10 µs calls.
	for i := int64(0); i < 5; i++ {
		s := 30_000_000 + i*1_000_000
		a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pin, dev, mb4, s, s+10_000, s+5_000, s+100_000))
	}
	// A pinned async DtoH whose call outlasts a 50 µs copy: cannot overlap.
	a.add(cp("cudaMemcpyAsync", vocab.CopyDtoH, dev, pin, 1<<20, 40_000_000, 40_100_000, 40_010_000, 40_060_000))
	// A device-to-device copy and a copy with no call.
	a.add(cp("cudaMemcpy", vocab.CopyDtoD, dev, dev, 1<<20, 41_000_000, 41_020_000, 41_000_000, 41_010_000))
	a.add(&copyCall{Kind: vocab.CopyHtoD, Src: pg, Dst: dev, Bytes: 8, Start: 5, End: 6})

	au := a.Finish(scanOf(18), Replayed{})
	if au.SpanNs != 10_000_000 || au.Prediction != nil || len(au.Regions) != 0 {
		t.Fatalf("audit header = %+v", au)
	}
	top := au.Classes[0]
	if top.API != "cudaMemcpyAsync" || top.HostMemory != Pageable || top.Count != 10 || top.HostNs != 10_000_000 ||
		top.Range != "step" || top.SecretlySync != 10 || top.Bytes != 10*mb4 || top.HostShare != 0 {
		t.Errorf("top class = %+v", top)
	}
	if want := float64(10*mb4) / 9_000_000; math.Abs(top.GPUGBps-want) > 1e-9 {
		t.Errorf("GPU GB/s = %g, want %g", top.GPUGBps, want)
	}
	if len(au.TopOffenders) == 0 || au.TopOffenders[0] != top {
		t.Errorf("top offenders = %+v", au.TopOffenders)
	}
	sync := au.Finding(FindingSecretlySync)
	if sync.Count != 10 || sync.HostNs != 10_000_000 || len(sync.Evidence) != MaxEvidence || sync.Evidence[0].Held < 1.1 {
		t.Errorf("secretly synchronous = %+v", sync)
	}
	// The pageable copies' calls outlast their copies too; the pinned DtoH
	// call does as well; the pinned HtoD calls return before their copies end.
	if no := au.Finding(FindingNoOverlap); no.Count != 11 || no.Evidence[MaxEvidence-1].API != "cudaMemcpyAsync" {
		t.Errorf("cannot overlap = %+v", no)
	}
	if tot := au.Sum(vocab.CopyHtoD, Pageable, Async); tot.Count != 10 || tot.HostNs != 10_000_000 {
		t.Errorf("pageable async HtoD total = %+v", tot)
	}
	// A class takes its share of its region: 10 ms over 10 steps of 2 ms
	// is half; a class outside any range takes the whole capture's.
	au.Regions = []Region{region(replay.CaptureRegion, 1, 50, 50), region("step", 10, 2, 20)}
	au.shareByRegion()
	if au.Classes[0].HostShare != 0.5 {
		t.Errorf("step class share = %g, want 0.5", au.Classes[0].HostShare)
	}
	// A class within the time the region's host-device copy calls held
	// takes its part of their share of the median instance: with the
	// steps' calls holding 10 ms, 40% of a median step, the class's 10 ms
	// is all of it, and half of them a fifth.
	au.Regions[1].CopyCallMs, au.Regions[1].HostShare.Measured = 10, 0.4
	au.shareByRegion()
	if math.Abs(au.Classes[0].HostShare-0.4) > 1e-12 {
		t.Errorf("step class share = %g, want 0.4 (its region's share)", au.Classes[0].HostShare)
	}
	if g := au.Regions[1].ShareOf(5); math.Abs(g-0.2) > 1e-12 {
		t.Errorf("ShareOf(5 ms) = %g, want 0.2", g)
	}
	for _, c := range au.Classes[1:] {
		if c.Range == "" && math.Abs(c.HostShare-float64(c.HostNs)/50e6) > 1e-12 {
			t.Errorf("class %s share = %g of the whole capture's 50 ms", c.Label(), c.HostShare)
		}
	}
	// A class in a range that is no region (never closed, so left out of
	// the regions) takes the whole capture's share, not none.
	au.Regions = au.Regions[:1]
	au.shareByRegion()
	if want := float64(au.Classes[0].HostNs) / 50e6; au.Classes[0].Range != "step" || math.Abs(au.Classes[0].HostShare-want) > 1e-12 || want == 0 {
		t.Errorf("step class, step no region: share %g, want %g of the whole capture", au.Classes[0].HostShare, want)
	}
}

// region is a replayed region of n instances of a median of med ms and a
// span of span ms, its instances all of the median's time, predicted
// unchanged; an NVTX range's copy calls hold the host a tenth of its span.
func region(name string, n int, med, span float64) Region {
	r := replay.Region{Name: name, Instances: n, MedianMs: med, SpanMs: span, ReplayMedianMs: med, ReplaySpanMs: span,
		PredictedMedianMs: med, PredictedMedianLowMs: med, PredictedMedianHighMs: med,
		PredictedSpanMs: span, PredictedSpanLowMs: span, PredictedSpanHighMs: span, TotalMs: float64(n) * med}
	if name != replay.CaptureRegion {
		r.CopyCallMs = span / 10
		r.HostShare.Measured = r.CopyCallMs / r.TotalMs
	}
	return regionsOf([]replay.Region{r})[0]
}

// The host time the copy calls hold after pinning, from the replay's
// costs: an async call's pinned time, a blocking call's and its pinned
// copy's; a copy without a cost keeps its measured call; the sources the
// groups used, in order; the HtoD part holding the non-pageable HtoD
// calls as they are.
func TestPredictionFromCosts(t *testing.T) {
	au := auditOf(4, pg, mb4, 700_000) // 2.8 ms of pageable HtoD calls, and pinned DtoH ones
	b := func(lo, mid, hi float64) replay.Bound { return replay.Bound{Low: lo, Mid: mid, High: hi} }
	costs := []replay.CostUse{
		{Direction: vocab.CopyHtoD, SizeClass: "1MiB-16MiB", Async: true, Copies: 4, Bytes: 4 * mb4, CallNs: 2_800_000,
			PinnedCallNs: b(30_000, 40_000, 60_000), PinnedGPUNs: b(300_000, 320_000, 600_000), CallSource: SourceCapture,
			GPUSource: SourceLink, CallSamples: 5, PinCopyNs: 2_800_000},
		{Direction: vocab.CopyDtoH, SizeClass: "16MiB-256MiB", Async: false, Copies: 2, Bytes: 64 << 20, CallNs: 9_000_000,
			PinnedCallNs: b(10_000, 10_000, 10_000), PinnedGPUNs: b(1_000_000, 1_200_000, 2_000_000), CallSource: SourceRun,
			GPUSource: SourceRun, CallFrom: "run-dir", Samples: 0},
		{Direction: vocab.CopyHtoD, SizeClass: "<4KiB", Async: true, Copies: 3, Bytes: 300, CallNs: 90_000,
			Uncosted: 3, UncostedCallNs: 90_000},
		{Direction: vocab.CopyDtoD, SizeClass: "<4KiB", Async: true, Copies: 1, CallNs: 5_000}, // not host-device
	}
	p := predict(au, costs)
	if len(p.Groups) != 3 {
		t.Fatalf("groups = %+v", p.Groups)
	}
	// HtoD first, by bucket; DtoH last.
	small, big, dtoh := p.Groups[0], p.Groups[1], p.Groups[2]
	if big.SizeBucket != "1MiB-16MiB" || big.APIKind != Async || big.AfterNs != 40_000 || big.AfterLowNs != 30_000 ||
		big.AfterHighNs != 60_000 || big.Source != SourceCapture || big.Samples != 5 {
		t.Errorf("async group = %+v", big)
	}
	if dtoh.APIKind != Blocking || dtoh.AfterNs != 1_210_000 || dtoh.AfterLowNs != 1_010_000 || dtoh.AfterHighNs != 2_010_000 ||
		dtoh.Source != SourceRun || dtoh.From != "run-dir" {
		t.Errorf("blocking group = %+v", dtoh)
	}
	if small.Source != SourceNone || small.AfterNs != 90_000 || small.Uncosted != 3 {
		t.Errorf("uncosted group = %+v", small)
	}
	if want := []string{SourceCapture, SourceRun, SourceNone}; strings.Join(p.Sources, ",") != strings.Join(want, ",") {
		t.Errorf("sources = %v, want %v", p.Sources, want)
	}
	if p.Count != 9 || p.BeforeNs != 11_890_000 || p.AfterNs != 40_000+1_210_000+90_000 || p.PinCopyNs != 2_800_000 ||
		p.SavedNs != p.BeforeNs-p.AfterNs || p.SavedLowNs != p.BeforeNs-p.AfterHighNs {
		t.Errorf("prediction = %+v", p)
	}
	all := au.Sum(vocab.CopyHtoD, "", "")
	if p.HtoD.BeforeNs != all.HostNs || p.HtoD.PageableBeforeNs != 2_890_000 ||
		p.HtoD.AfterNs != 130_000+all.HostNs-2_890_000 {
		t.Errorf("HtoD part = %+v (all HtoD calls %d ns)", p.HtoD, all.HostNs)
	}
	if e := predict(au, nil); e.Count != 0 || len(e.Groups) != 0 || e.HtoD.AfterNs != all.HostNs {
		t.Errorf("no costs = %+v", e)
	}
}

// auditOf builds an audit of n HtoD copies of size bytes, pageable or not,
// each call lasting callNs, plus extra copies.
func auditOf(n int64, host vocab.MemKind, bytes, callNs int64, extra ...*copyCall) *Audit {
	a := NewAccumulator()
	for i := int64(0); i < n; i++ {
		s := i * 10_000_000
		c := cp("cudaMemcpyAsync", vocab.CopyHtoD, host, dev, bytes, s, s+callNs, s+1000, s+1000+callNs)
		c.Range = "step"
		a.add(c)
	}
	for _, c := range extra {
		a.add(c)
	}
	// Pinned async calls of another kind.
	for i := int64(0); i < 5; i++ {
		s := 900_000_000 + i*1000
		a.add(cp("cudaMemcpyAsync", vocab.CopyDtoH, dev, pin, 4, s, s+20_000, s+5_000, s+6_000))
	}
	return a.Finish(scanOf(n), Replayed{})
}

// withRegions gives an audit its regions and a prediction of no costs.
func withRegions(au *Audit, rs ...Region) *Audit {
	au.Regions = rs
	au.Prediction = predict(au, nil)
	return au
}

// predicted sets a region's prediction of its measure: mid with the bound
// lo-hi.
func predicted(r Region, mid, lo, hi float64) Region {
	r.PredictedMedianMs, r.PredictedMedianLowMs, r.PredictedMedianHighMs = mid, lo, hi
	r.PredictedSpanMs, r.PredictedSpanLowMs, r.PredictedSpanHighMs = mid*float64(r.Instances), lo*float64(r.Instances), hi*float64(r.Instances)
	return r
}

func TestCompareRegions(t *testing.T) {
	step := predicted(region("step", 10, 5, 50), 1, 0.9, 1.2) // 5 ms now, 1 ms pinned (0.9-1.2)
	before := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step)
	after := func(stepMs float64) *Audit {
		return withRegions(auditOf(10, pin, mb4, 20_000), region(replay.CaptureRegion, 1, 30, 30), region("step", 10, stepMs, 10*stepMs))
	}
	// In the bound widened by the model's error: 1.2 * 1.05 = 1.26.
	c := Compare(before, after(1.25), nil)
	if c.Verdict != Held || len(c.Regions) != 2 {
		t.Fatalf("check = %+v", c)
	}
	whole, s := c.Regions[0], c.Regions[1]
	if whole.Judged || whole.Why != WhyNotJudged || whole.Verdict != "" {
		t.Errorf("the whole capture beside NVTX ranges = %+v", whole)
	}
	if !s.Judged || s.Verdict != Held || s.Why != WhyInBound || !s.Faster || s.AfterMedianMs != 1.25 ||
		math.Abs(s.BoundLowMs-0.9*0.95) > 1e-12 || math.Abs(s.BoundHighMs-1.2*1.05) > 1e-12 || s.Tolerance.Model != ModelError {
		t.Errorf("step = %+v", s)
	}
	// Above and below the bound: died, saying which.
	if c := Compare(before, after(1.3), nil); c.Verdict != Died || c.Regions[1].Why != WhyAbove {
		t.Errorf("slower than predicted: %+v", c.Regions[1])
	}
	if c := Compare(before, after(0.8), nil); c.Verdict != Died || c.Regions[1].Why != WhyBelow {
		t.Errorf("faster than predicted: %+v", c.Regions[1])
	}
	// No faster than before though predicted faster: died, and not faster.
	if c := Compare(before, after(5), nil); c.Regions[1].Faster || c.Regions[1].Verdict != Died {
		t.Errorf("no gain: %+v", c.Regions[1])
	}
	// The replay's fit and the spread of the instances widen the bound.
	wide := step
	wide.Fit.Median = -0.02
	wide.MedianCI = replay.CI{LowMs: 4, HighMs: 5.5, Coverage: 0.9}
	c = Compare(withRegions(auditOf(10, pg, mb4, 700_000), wide), after(1.25), nil)
	tol := c.Regions[0].Tolerance
	if tol.Fit != 0.02 || tol.NoiseLow != 0.2 || math.Abs(tol.NoiseHigh-0.1) > 1e-12 ||
		math.Abs(c.Regions[0].BoundHighMs-1.2*(1+0.05+0.02+0.1)) > 1e-12 || math.Abs(c.Regions[0].BoundLowMs-0.9*(1-0.05-0.02-0.2)) > 1e-12 {
		t.Errorf("tolerance %+v, bound %g-%g", tol, c.Regions[0].BoundLowMs, c.Regions[0].BoundHighMs)
	}
	// A loop behind the host is judged by its span, which has no noise term.
	loop := step
	loop.Queued.Predicted = 0.9
	loop = regionsOf([]replay.Region{loop.Region})[0]
	c = Compare(withRegions(auditOf(10, pg, mb4, 700_000), loop), after(1.25), nil)
	if r := c.Regions[0]; r.Measure != MeasureSpan || r.AfterMs() != 12.5 || r.Verdict != Held || r.Tolerance.NoiseHigh != 0 {
		t.Errorf("span: %+v", r)
	}
	// A range without copies is not judged: pinning does not change it.
	compile := region("compile", 1, 40, 40)
	compile.CopyCallMs = 0
	withCompile := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step, compile)
	c = Compare(withCompile, withRegions(auditOf(10, pin, mb4, 20_000), region("step", 10, 1.25, 12.5), region("compile", 1, 80, 80)), nil)
	if c.Verdict != Held || c.Regions[2].Judged || c.Regions[2].Why != WhyNoCopies {
		t.Errorf("a range without copies: %+v", c.Regions[2])
	}
	// A region missing after is not judged; with nothing judged, unavailable.
	lone := withRegions(auditOf(10, pin, mb4, 20_000), region(replay.CaptureRegion, 1, 30, 30))
	if c := Compare(before, lone, nil); c.Verdict != Unavailable || c.Regions[1].Why != WhyMissing || c.Regions[1].Judged {
		t.Errorf("missing region: %+v", c)
	}
	// A region to judge missing after beside one held: unavailable, never
	// held on the rest; a region without copies missing after keeps its
	// reason.
	two := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step, predicted(region("epoch", 1, 50, 50), 10, 9, 12), compile)
	c = Compare(two, withRegions(auditOf(10, pin, mb4, 20_000), region("step", 10, 1.25, 12.5)), nil)
	if c.Verdict != Unavailable || !c.Regions[1].Judged || c.Regions[1].Verdict != Held || c.Regions[2].Why != WhyMissing || c.Regions[2].Judged ||
		c.Regions[3].Why != WhyNoCopies {
		t.Errorf("a judged region missing after: %+v", c)
	}
	// A match compares differently named regions, and judges those alone.
	halves := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step, region("pinned", 10, 1.1, 11))
	c = Compare(halves, halves, map[string]string{"step": "pinned"})
	if c.Verdict != Held || c.Regions[1].AfterName != "pinned" || c.Regions[1].AfterMedianMs != 1.1 || c.Regions[2].Why != WhyUnmatched {
		t.Errorf("matched halves: %+v", c.Regions)
	}
}

// A JAX program whose large host-to-device copies all come from pinned
// memory stages them where the trace cannot see: the check is unavailable.
func TestCompareUnseenStaging(t *testing.T) {
	jax := func() *Audit {
		au := withRegions(auditOf(10, pin, mb4, 20_000), region(replay.CaptureRegion, 1, 100, 100))
		au.Framework.Framework = framework.JAX
		return au
	}
	c := Compare(jax(), jax(), nil)
	if c.Verdict != Unavailable || c.Unseen == nil || c.Unseen.PinnedHtoD != 10 || c.Regions[0].Why != WhyUnseen {
		t.Errorf("JAX staging: %+v", c)
	}
	// With a large pageable copy left, or on another framework, it is judged.
	au := jax()
	au.Framework.Framework = framework.Runtime
	// (Its prediction, no change, cannot be held: too wide to decide.)
	if c := Compare(au, jax(), nil); c.Unseen != nil || c.Regions[0].Why != WhyTooWide || !c.Regions[0].Judged {
		t.Errorf("CUDA runtime: %+v", c)
	}
}

// A capture after that still makes the pageable copies did not make the
// fix: no region can be held from it, whatever its times.
func TestCompareNotFixed(t *testing.T) {
	step := predicted(region("step", 10, 5, 50), 1, 0.9, 1.2)
	before := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step)
	// After: the same step times a fixed program would have, but every copy
	// still from pageable memory.
	unfixed := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 30, 30), region("step", 10, 1.1, 11))
	c := Compare(before, unfixed, nil)
	if c.Verdict != Unavailable || c.Fix.Made || c.Fix.Before.Count != 10 || c.Fix.After.Count != 10 || c.Fix.After.Bytes != 10*mb4 ||
		c.Regions[1].Why != WhyNotFixed || c.Regions[1].Verdict != Unavailable {
		t.Errorf("not fixed: %+v", c)
	}
	// One pageable copy left of ten is FixedShare: the fix is made.
	fixed := withRegions(auditOf(9, pin, mb4, 20_000, cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, 1, 700_001, 1001, 701_001)),
		region(replay.CaptureRegion, 1, 30, 30), region("step", 10, 1.1, 11))
	if c := Compare(before, fixed, nil); !c.Fix.Made || c.Fix.After.Count != 1 || c.Verdict != Held {
		t.Errorf("one left of ten: %+v", c.Fix)
	}
	// Two left of ten is more than FixedShare.
	two := withRegions(auditOf(8, pin, mb4, 20_000, cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, 1, 700_001, 1001, 701_001),
		cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, 2_000_000, 2_700_000, 2_001_000, 2_701_000)),
		region(replay.CaptureRegion, 1, 30, 30), region("step", 10, 1.1, 11))
	if c := Compare(before, two, nil); c.Fix.Made || c.Verdict != Unavailable {
		t.Errorf("two left of ten: %+v", c.Fix)
	}
	// With a match, the copies counted are those inside the ranges it names:
	// one capture's pageable half against its pinned half.
	halves := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step, region("pinned", 10, 1.1, 11))
	if c := Compare(halves, halves, map[string]string{"step": "pinned"}); !c.Fix.Made || c.Fix.Before.Count != 10 || c.Fix.After.Count != 0 {
		t.Errorf("matched halves: %+v", c.Fix)
	}
	if c := Compare(halves, halves, map[string]string{"step": "step"}); c.Fix.Made || c.Verdict != Unavailable {
		t.Errorf("a range against itself: %+v", c.Fix)
	}
}

// A bound that holds the region's own time before allows no change: such a
// region cannot hold, though a time after outside even that bound dies.
func TestCompareTooWide(t *testing.T) {
	after := func(stepMs float64) *Audit {
		return withRegions(auditOf(10, pin, mb4, 20_000), region(replay.CaptureRegion, 1, 30, 30), region("step", 10, stepMs, 10*stepMs))
	}
	judge := func(step Region, afterMs float64) RegionCheck {
		return Compare(withRegions(auditOf(10, pg, mb4, 700_000), step), after(afterMs), nil).Regions[0]
	}
	// The high cost reaches the time before (5 ms): the cost widened it.
	if r := judge(predicted(region("step", 10, 5, 50), 1, 0.9, 5.2), 1); r.Verdict != Unavailable || r.Why != WhyTooWide || r.WideBy != WideCost {
		t.Errorf("high cost past the time before: %+v", r)
	}
	// The costs stop short of it (4.9 ms) and the model's 5% takes the bound
	// past it (5.145 ms).
	if r := judge(predicted(region("step", 10, 5, 50), 1, 0.9, 4.9), 1); r.Why != WhyTooWide || r.WideBy != WideModel {
		t.Errorf("the model's error past the time before: %+v", r)
	}
	// The median's interval takes it past: the noise.
	noisy := predicted(region("step", 10, 5, 50), 1, 0.9, 2)
	noisy.MedianCI = replay.CI{LowMs: 4.5, HighMs: 15, Coverage: 0.9}
	if r := judge(noisy, 1); r.Why != WhyTooWide || r.WideBy != WideNoise {
		t.Errorf("noise past the time before: %+v", r)
	}
	// After outside even that bound: died.
	if r := judge(predicted(region("step", 10, 5, 50), 1, 0.9, 5.2), 6); r.Verdict != Died || r.Why != WhyAbove {
		t.Errorf("slower than a wide bound: %+v", r)
	}
	// A check whose judged regions are all too wide is unavailable, not held;
	// one held region beside one too wide holds.
	wide := predicted(region("wide", 10, 5, 50), 1, 0.9, 5.2)
	narrow := predicted(region("step", 10, 5, 50), 1, 0.9, 1.2)
	if c := Compare(withRegions(auditOf(10, pg, mb4, 700_000), wide), withRegions(auditOf(10, pin, mb4, 20_000), region("wide", 10, 1, 10)), nil); c.Verdict != Unavailable {
		t.Errorf("every region too wide: %s", c.Verdict)
	}
	if c := Compare(withRegions(auditOf(10, pg, mb4, 700_000), wide, narrow),
		withRegions(auditOf(10, pin, mb4, 20_000), region("wide", 10, 1, 10), region("step", 10, 1, 10)), nil); c.Verdict != Held {
		t.Errorf("one held, one too wide: %s", c.Verdict)
	}
}

// Two captures that moved different bytes or ran different kernels are not
// one program; within the tolerances they are.
func TestSameProgram(t *testing.T) {
	a, b := auditOf(100, pg, mb4, 700_000), auditOf(100, pin, mb4, 20_000)
	a.kernels, b.kernels = map[string]int64{"step": 1000}, map[string]int64{"step": 1000, "other": 10}
	if err := SameProgram(a, b); err != nil {
		t.Errorf("one program: %v", err)
	}
	b.kernels["other"] = 11
	err := SameProgram(a, b)
	var e *NotSameProgram
	if !errors.As(err, &e) || len(e.Differences) != 1 || e.Differences[0].What != DiffKernels || e.Differences[0].OnlyAfter[0] != "other" ||
		!strings.Contains(err.Error(), "only after: other") {
		t.Errorf("other kernels: %v", err)
	}
	// Half the launches of a kernel, its name kept, are another program's.
	b.kernels = map[string]int64{"step": 500}
	err = SameProgram(a, b)
	if !errors.As(err, &e) || len(e.Differences) != 1 || e.Differences[0].What != DiffKernels || e.Differences[0].Before != 500 ||
		e.Differences[0].After != 0 || e.Differences[0].NamesBefore != 0 || !strings.Contains(err.Error(), "kernels: 500 launches before and 0 after") {
		t.Errorf("half the launches, names kept: %v", err)
	}
	b.kernels = a.kernels
	half := auditOf(50, pin, mb4, 20_000)
	half.kernels = a.kernels
	err = SameProgram(a, half)
	if !errors.As(err, &e) || len(e.Differences) != 1 || e.Differences[0].Direction != vocab.CopyHtoD || e.Differences[0].Share != -0.5 ||
		!strings.Contains(err.Error(), "HtoD bytes: 419.4 MB before, 209.7 MB after (-50.0%; the 209.7 MB between them is 50.0% of the 419.4 MB moved between host and device, more than 1%)") {
		t.Errorf("half the bytes: %v", err)
	}
	// A direction that carries little may change by more than 1% of itself
	// (one rank of a data-parallel job sends the model's parameters to the
	// others once): 0.08 MB more of 3.2 MB device-to-host is +2.5% of the
	// direction, 0.02% of the 419.4 MB moved.
	dtoh := func(bytes int64) *copyCall {
		return cp("cudaMemcpyAsync", vocab.CopyDtoH, dev, pin, bytes, 950_000_000, 950_010_000, 950_001_000, 950_009_000)
	}
	r0, r1 := auditOf(100, pin, mb4, 20_000, dtoh(3_280_000)), auditOf(100, pin, mb4, 20_000, dtoh(3_200_000))
	r0.kernels, r1.kernels = a.kernels, a.kernels
	if err := SameProgram(r1, r0); err != nil {
		t.Errorf("a small direction's small change: %v", err)
	}
	// 4.4 MB more of it is 1.04% of all moved: another program.
	more := auditOf(100, pin, mb4, 20_000, dtoh(7_600_000))
	more.kernels = a.kernels
	err = SameProgram(r1, more)
	if !errors.As(err, &e) || len(e.Differences) != 1 || e.Differences[0].Direction != vocab.CopyDtoH || e.Differences[0].Moved != more.Sum(vocab.CopyHtoD, "", "").Bytes+7_600_020 ||
		!strings.Contains(err.Error(), "DtoH bytes: 3.2 MB before, 7.6 MB after (+137.5%; the 4.4 MB between them is 1.03% of the 427.0 MB moved between host and device, more than 1%)") {
		t.Errorf("a small direction's large change: %v", err)
	}
}

// --fail-above fails a capture whose pageable copy calls hold the host for
// more than the limit of some judged region's median instance.
func TestFailAbove(t *testing.T) {
	step := region("step", 10, 5, 50)
	step.PageableShare = 0.2
	au := withRegions(auditOf(10, pg, mb4, 700_000), region(replay.CaptureRegion, 1, 100, 100), step)
	au.Regions[0].PageableShare = 0.9 // the whole capture is not judged beside ranges
	if g := au.FailAbove(0.25); !g.Passed() || g.Worst.Name != "step" || g.Worst.Share != 0.2 {
		t.Errorf("25%%: %+v", g)
	}
	if g := au.FailAbove(0.05); g.Passed() || len(g.Over) != 1 || g.Over[0].Name != "step" {
		t.Errorf("5%%: %+v", g)
	}
	out := &Output{Before: au}
	if out.Passed() {
		t.Error("a gate over its limit passed")
	}
	au.FailAbove(0.5)
	if !out.Passed() {
		t.Error("a gate under its limit failed though copies break the rule")
	}
}

func TestCompareRule(t *testing.T) {
	copies := func(a *Accumulator) error {
		a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, 0, 1000, 100, 900))
		a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, 2000, 3000, 2100, 2900))
		a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pin, dev, mb4, 4000, 4010, 4100, 4900))
		return nil
	}
	a := NewAccumulator()
	copies(a)
	au := a.Finish(scanOf(3), Replayed{})
	compare := func(rows []Flagged, again func(*Accumulator) error) *RuleComparison {
		t.Helper()
		side, err := ReadRule(FlaggedRows(rows))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := au.CompareRule("cuda_memcpy_async", RuleSource{Kind: RuleSourceCSV, Path: "test"}, side, again)
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	reread := func(*Accumulator) error {
		t.Error("the copies were read again though the two sides agree")
		return nil
	}
	// The same copies in another order agree at once.
	rc := compare([]Flagged{{PID: 1, Start: 2100}, {PID: 1, Start: 100}}, reread)
	if !rc.Agree || rc.Both != 2 || rc.RuleCount != 2 || rc.AuditCount != 2 || !rc.Available {
		t.Errorf("agreement = %+v", rc)
	}
	rc = compare([]Flagged{{PID: 1, Start: 100}, {PID: 1, Start: 4100}}, copies)
	if rc.Agree || rc.Both != 1 || len(rc.OnlyRule) != 1 || rc.OnlyRule[0].Start != 4100 || len(rc.OnlyAudit) != 1 ||
		rc.OnlyAudit[0].GPUStart != 2100 || rc.RuleCount != 2 || rc.AuditCount != 2 {
		t.Errorf("disagreement = %+v", rc)
	}
	// A copy listed twice by the rule is matched once.
	rc = compare([]Flagged{{PID: 1, Start: 100}, {PID: 1, Start: 100}, {PID: 1, Start: 2100}}, copies)
	if rc.Agree || rc.Both != 2 || rc.RuleCount != 3 || len(rc.OnlyRule) != 1 || len(rc.OnlyAudit) != 0 {
		t.Errorf("a row twice = %+v", rc)
	}
	// Copies read again that are not those read first are an error.
	side, _ := ReadRule(FlaggedRows([]Flagged{{PID: 1, Start: 100}}))
	if _, err := au.CompareRule("cuda_memcpy_async", RuleSource{Kind: RuleSourceCSV, Path: "test"}, side, func(*Accumulator) error { return nil }); err == nil {
		t.Error("a second read that found no copies was taken")
	}
	au.RuleUnavailable("cuda_memcpy_async", "nsys is not installed")
	if au.NVIDIA.Available || au.NVIDIA.Note != "nsys is not installed" {
		t.Errorf("unavailable = %+v", au.NVIDIA)
	}
}

// A prediction that found a pinned cost for none of a direction's pageable
// copies predicts nothing of it; one cost found, or no copy, and it does.
func TestPredictionUnpredicted(t *testing.T) {
	p := &Prediction{Groups: []GroupPrediction{
		{Direction: vocab.CopyHtoD, Count: 3, Uncosted: 3},
		{Direction: vocab.CopyHtoD, Count: 2, Uncosted: 2},
		{Direction: vocab.CopyDtoH, Count: 4, Uncosted: 1},
	}}
	for _, c := range []struct {
		dir  vocab.CopyKind
		want bool
	}{{vocab.CopyHtoD, true}, {vocab.CopyDtoH, false}, {"", false}, {vocab.CopyDtoD, false}} {
		if got := p.Unpredicted(c.dir); got != c.want {
			t.Errorf("Unpredicted(%q) = %v, want %v", c.dir, got, c.want)
		}
	}
	p.Groups[2].Uncosted = 4
	if !p.Unpredicted("") {
		t.Error("no copy costed: Unpredicted(\"\") = false")
	}
	if (*Prediction)(nil).Unpredicted("") {
		t.Error("no prediction: Unpredicted = true")
	}
}

// TestDifferenceWordsSmallBytes: bytes under 0.1 MB are written as bytes, so
// a difference between two small counts does not read as 0.0 MB against
// 0.0 MB.
func TestDifferenceWordsSmallBytes(t *testing.T) {
	got := DifferenceWords([]Difference{{What: DiffBytes, Direction: vocab.CopyDtoH, Before: 4, After: 268, Share: 66}}, "before", "after")
	if want := "DtoH bytes: 4 bytes before, 268 bytes after (+6600.0%, more than 1%)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = DifferenceWords([]Difference{{What: DiffBytes, Direction: vocab.CopyHtoD, Before: 6442450944, After: 1442840576, Share: -0.776}}, "before", "after")
	if want := "HtoD bytes: 6442.5 MB before, 1442.8 MB after (-77.6%, more than 1%)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The way to pin by the framework: a DataLoader with workers pins on a pin
// thread, other PyTorch programs by copy, every other framework in place.
func TestPinByOf(t *testing.T) {
	for _, c := range []struct {
		det  framework.Detection
		want replay.PinBy
	}{
		{framework.Detection{Framework: framework.PyTorch, LoaderWorkers: 2}, replay.PinByThread},
		{framework.Detection{Framework: framework.PyTorch}, replay.PinByCopy},
		{framework.Detection{Framework: framework.CuPy, LoaderWorkers: 2}, replay.PinInPlace},
		{framework.Detection{Framework: framework.Runtime}, replay.PinInPlace},
	} {
		if got := PinByOf(c.det); got != c.want {
			t.Errorf("PinByOf(%+v) = %s, want %s", c.det, got, c.want)
		}
	}
}

// A share past its tolerance never reads as the tolerance: 1.04% is
// written with the decimals that show it is more than 1%.
func TestPctPast(t *testing.T) {
	for _, c := range []struct {
		share, tol float64
		signed     bool
		want       string
	}{
		{0.0104, 0.01, false, "1.04%"}, {0.025, 0.01, false, "2.5%"}, {-0.854, 0.01, true, "-85.4%"},
		{0.01004, 0.01, true, "+1.004%"}, {0.0100001, 0.01, false, "1.0000%"},
	} {
		if got := pctPast(c.share, c.tol, c.signed); got != c.want {
			t.Errorf("pctPast(%g, %g) = %q, want %q", c.share, c.tol, got, c.want)
		}
	}
	if launches(1) != "1 launch" || launches(3) != "3 launches" {
		t.Errorf("launches: %q, %q", launches(1), launches(3))
	}
}
