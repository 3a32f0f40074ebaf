package audit

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"

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

func TestHistQuantile(t *testing.T) {
	var h hist
	for i := 1; i <= 1000; i++ {
		h.add(float64(i))
	}
	for _, q := range []float64{0.1, 0.5, 0.9} {
		got, want := h.quantile(q), 1000*q
		if math.Abs(got-want)/want > 0.03 {
			t.Errorf("quantile(%g) = %g, want about %g", q, got, want)
		}
	}
	var empty hist
	if empty.quantile(0.5) != 0 {
		t.Error("an empty histogram has a median")
	}
}

func TestClassesFindingsAndCaptureRate(t *testing.T) {
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

	au := a.Finish(scanOf(18), nil)
	if au.SpanNs != 10_000_000 {
		t.Fatalf("audit header = %+v", au)
	}
	top := au.Classes[0]
	if top.API != "cudaMemcpyAsync" || top.HostMemory != Pageable || top.Count != 10 || top.HostNs != 10_000_000 ||
		top.Range != "step" || top.SecretlySync != 10 || top.Bytes != 10*mb4 || math.Abs(top.HostShare-1) > 1e-9 {
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
	// The prediction comes from the 5 pinned calls of the same size: 10 µs each.
	p := au.Prediction
	if len(p.Sources) != 1 || p.Sources[0] != SourceCapture || len(p.Groups) != 1 {
		t.Fatalf("prediction = %+v", p)
	}
	if g := p.Groups[0]; math.Abs(float64(g.AfterNs)-100_000) > 3_000 || g.Count != 10 || g.BeforeNs != 10_000_000 {
		t.Errorf("group = %+v", g)
	}
	if p.SavedNs < 9_890_000 || p.SavedNs > 9_910_000 || p.SavedLowNs > p.SavedNs || p.SavedHighNs < p.SavedNs {
		t.Errorf("saved %d (%d-%d)", p.SavedNs, p.SavedLowNs, p.SavedHighNs)
	}
	// HtoD after = predicted pageable part + the pinned calls as they are.
	if want := p.HtoD.AfterNs - (p.HtoD.BeforeNs - p.HtoD.PageableBeforeNs); math.Abs(float64(want-p.Groups[0].AfterNs)) > 0 {
		t.Errorf("HtoD after = %+v", p.HtoD)
	}
	if !strings.Contains(p.Statement, "10 pageable copies") || !strings.Contains(p.Statement, "capture's own pinned") {
		t.Errorf("statement = %q", p.Statement)
	}
}

func TestPredictionSources(t *testing.T) {
	blocking := func() *Accumulator {
		a := NewAccumulator()
		for i := int64(0); i < 4; i++ {
			s := i * 10_000_000
			a.add(cp("cudaMemcpy", vocab.CopyHtoD, pg, dev, 64<<20, s, s+8_000_000, s+100_000, s+7_900_000))
		}
		return a
	}
	// No pinned copies, a run folder: its pinned rate at the nearest size.
	rates := &Rates{Source: "run", Copies: []RatePoint{{vocab.CopyHtoD, 16 << 20, 50}, {vocab.CopyHtoD, 64 << 20, 55},
		{vocab.CopyHtoD, 256 << 20, 56}, {vocab.CopyDtoH, 64 << 20, 10}}, AsyncCallNs: 8000, LinkGBps: 63, LinkSource: "test"}
	p := blocking().Finish(scanOf(4), rates).Prediction
	g := p.Groups[0]
	if g.Source != SourceRun || g.AfterNs != round(float64(4*(64<<20))/55) || g.AfterLowNs != round(float64(4*(64<<20))/56) ||
		g.AfterHighNs != round(float64(4*(64<<20))/50) {
		t.Errorf("run prediction = %+v", g)
	}
	// Only the link: a blocking copy at the link rate, bound at half of it.
	p = blocking().Finish(scanOf(4), &Rates{LinkGBps: 50, LinkSource: "test"}).Prediction
	g = p.Groups[0]
	if g.Source != SourceLink || g.AfterNs != round(float64(4*(64<<20))/50) || g.AfterHighNs != round(float64(4*(64<<20))/25) {
		t.Errorf("link prediction = %+v", g)
	}
	// Nothing at all: no saving predicted, and said so.
	p = blocking().Finish(scanOf(4), nil).Prediction
	if p.Groups[0].Source != SourceNone || p.SavedNs != 0 {
		t.Errorf("no-source prediction = %+v", p.Groups[0])
	}
	// An async pageable group with only the run's async call time.
	a := NewAccumulator()
	a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, 64<<20, 0, 8_000_000, 100, 7_900_000))
	p = a.Finish(scanOf(1), rates).Prediction
	if g := p.Groups[0]; g.Source != SourceRun || g.AfterNs != 8000 || g.AfterLowNs != 4000 || g.AfterHighNs != 16000 {
		t.Errorf("async run prediction = %+v", g)
	}
	// No pageable copies: nothing to save.
	if p := NewAccumulator().Finish(scanOf(0), nil).Prediction; p.Count != 0 || !strings.Contains(p.Statement, "nothing") {
		t.Errorf("empty prediction = %+v", p)
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
	// Pinned async calls of another kind give the capture's per-call time.
	for i := int64(0); i < 5; i++ {
		s := 900_000_000 + i*1000
		a.add(cp("cudaMemcpyAsync", vocab.CopyDtoH, dev, pin, 4, s, s+20_000, s+5_000, s+6_000))
	}
	return a.Finish(scanOf(n), nil)
}

func TestCompare(t *testing.T) {
	before := auditOf(100, pg, mb4, 700_000)
	// The fix: the same copies pinned, 20 µs per call.
	c := Compare(before, auditOf(100, pin, mb4, 20_000))
	if c.Verdict != Held || c.HtoDBeforeNs != 70_000_000 || c.HtoDAfterNs != 2_000_000 || c.BytesChange != 0 ||
		len(c.Warnings) != 0 || c.PageableAfter.Count != 0 || len(c.Classes) != 1 || c.Classes[0].Status != "pinned" {
		t.Errorf("held check = %+v", c)
	}
	if c.PredictedAfterHighNs < c.HtoDAfterNs || c.SavedNs != 68_000_000 || c.HtoDAfterNs < c.PredictedAfterLowNs {
		t.Errorf("prediction %d (bound %d), saved %d", c.PredictedAfterNs, c.PredictedAfterHighNs, c.SavedNs)
	}
	// Not pinned at all: died, twice over.
	c = Compare(before, auditOf(100, pg, mb4, 690_000))
	if c.Verdict != Died || len(c.Reasons) < 2 || c.Classes[0].Status != "still pageable" {
		t.Errorf("unfixed check = %+v", c)
	}
	// Pinned but the calls still slow (e.g. a sync in the call path): died on the prediction.
	c = Compare(before, auditOf(100, pin, mb4, 300_000))
	if c.Verdict != Died || !strings.Contains(strings.Join(c.Reasons, "\n"), "above the predicted") {
		t.Errorf("slow pinned check = %+v", c)
	}
	// A few small pageable copies left (model start-up): within ResidualShare, held.
	left := cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, 512, 1, 30_001, 2, 3)
	c = Compare(before, auditOf(100, pin, mb4, 20_000, left))
	if c.Verdict != Held || c.PageableAfter.Count != 1 {
		t.Errorf("residual check = %+v", c)
	}
	// Half the bytes: warned about, and the verdict still computed.
	c = Compare(before, auditOf(50, pin, mb4, 20_000))
	if len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "-50.00%") {
		t.Errorf("bytes warning = %v", c.Warnings)
	}
}

func TestCompareRule(t *testing.T) {
	a := NewAccumulator()
	a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, 0, 1000, 100, 900))
	a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pg, dev, mb4, 2000, 3000, 2100, 2900))
	a.add(cp("cudaMemcpyAsync", vocab.CopyHtoD, pin, dev, mb4, 4000, 4010, 4100, 4900))
	au := a.Finish(scanOf(3), nil)
	rc := au.CompareRule("cuda_memcpy_async", "test", []Flagged{{PID: 1, Start: 100}, {PID: 1, Start: 2100}})
	if !rc.Agree || rc.Both != 2 || !strings.Contains(rc.Summary(), "agrees") {
		t.Errorf("agreement = %+v", rc)
	}
	rc = au.CompareRule("cuda_memcpy_async", "test", []Flagged{{PID: 1, Start: 100}, {PID: 1, Start: 4100}})
	if rc.Agree || rc.Both != 1 || len(rc.OnlyRule) != 1 || rc.OnlyRule[0].Start != 4100 || len(rc.OnlyAudit) != 1 ||
		rc.OnlyAudit[0].GPUStart != 2100 || !strings.Contains(rc.Summary(), "disagrees") {
		t.Errorf("disagreement = %+v", rc)
	}
	au.RuleUnavailable("cuda_memcpy_async", "nsys is not installed")
	if au.NVIDIA.Available || !strings.Contains(au.NVIDIA.Summary(), "not installed") {
		t.Errorf("unavailable = %+v", au.NVIDIA)
	}
}

func TestJSONFieldNames(t *testing.T) {
	au := auditOf(3, pg, mb4, 700_000)
	data, err := json.Marshal(au)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"classes":`, `"topOffenders":`, `"findings":`,
		`"prediction":`, `"hostNs":`, `"gpuGBps":`, `"nvtxRange":"step"`, `"savedLowNs":`, `"htod":`} {
		if !bytes.Contains(data, []byte(f)) {
			t.Errorf("JSON lacks %s", f)
		}
	}
}
