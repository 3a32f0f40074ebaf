package replay_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
	"github.com/nsyscheck/nsyscheck/vocab"
)

const (
	htod     = vocab.CopyHtoD
	pageable = vocab.MemPageable
	pinned   = vocab.MemPinned
	device   = vocab.MemDevice
)

// fixed costs every pinned copy the same: call ns of host time, gpu ns on
// the GPU (all three bounds alike).
type fixed struct{ call, gpu float64 }

func (f fixed) Pinned(vocab.CopyKind, int64, bool) (replay.Cost, bool) {
	return replay.Cost{CallNs: replay.Bound{Low: f.call, Mid: f.call, High: f.call},
		GPUNs: replay.Bound{Low: f.gpu, Mid: f.gpu, High: f.gpu}, CallSource: "test", GPUSource: "test"}, true
}

// times are a call's or an op's replayed start and end.
type times [2]int64

type synthetic struct {
	t  *testing.T
	tl *timeline.Timeline
}

func newSynthetic(t *testing.T, c *timelinetest.Capture, opts timeline.Options) *synthetic {
	t.Helper()
	tl, err := c.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return &synthetic{t, tl}
}

func (s *synthetic) call(corr int64) int32 {
	for i, c := range s.tl.Calls.Corr {
		if c == corr {
			return int32(i)
		}
	}
	s.t.Fatalf("no call %d", corr)
	return -1
}

func (s *synthetic) op(corr int64) int32 {
	for j, c := range s.tl.Ops.Corr {
		if c == corr {
			return int32(j)
		}
	}
	s.t.Fatalf("no op of call %d", corr)
	return -1
}

// asCaptured checks that the replay as captured reproduces every call and
// op exactly: in these small captures each class of delay has one sample,
// so its typical delay is that sample's own.
func (s *synthetic) asCaptured() {
	s.t.Helper()
	sc, err := replay.Simulate(context.Background(), s.tl)
	if err != nil {
		s.t.Fatal(err)
	}
	m := replay.Measured(s.tl)
	if !slices.Equal(sc.CallStart, m.CallStart) || !slices.Equal(sc.CallEnd, m.CallEnd) ||
		!slices.Equal(sc.OpStart, m.OpStart) || !slices.Equal(sc.OpEnd, m.OpEnd) {
		s.t.Errorf("replay as captured differs:\ncalls %v %v\nwant  %v %v\nops   %v %v\nwant  %v %v",
			sc.CallStart, sc.CallEnd, m.CallStart, m.CallEnd, sc.OpStart, sc.OpEnd, m.OpStart, m.OpEnd)
	}
}

// pinned replays with every pageable copy at cost f and checks the calls
// and ops named in want (by correlation id: calls, then ops).
func (s *synthetic) pinned(f replay.Coster, calls, ops map[int64]times) *replay.Schedule {
	s.t.Helper()
	sc, err := replay.SimulatePinned(context.Background(), s.tl, f)
	if err != nil {
		s.t.Fatal(err)
	}
	for corr, want := range calls {
		i := s.call(corr)
		if got := (times{sc.CallStart[i], sc.CallEnd[i]}); got != want {
			s.t.Errorf("call %d (%s): replayed %v, want %v", corr, s.tl.Name(s.tl.Calls.Name[i]), got, want)
		}
	}
	for corr, want := range ops {
		j := s.op(corr)
		if got := (times{sc.OpStart[j], sc.OpEnd[j]}); got != want {
			s.t.Errorf("op of call %d: replayed %v, want %v", corr, got, want)
		}
	}
	return sc
}

// A blocking copy from pageable memory, then a kernel: pinned, the copy
// runs 200 ns from 30 ns after its call starts (the pinned call's 30 ns),
// the call still waits for it, and the kernel follows 50 ns of host work
// and its measured 20 ns launch delay.
func TestBlockingPageableCopyThenKernel(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpy", 0, 1000)
	c.Copy(cp, 7, htod, pageable, device, 1<<20, 100, 900)
	k := c.Launch(1, 1050, 1060, 7, 1070, 1170)
	c.Range(1, "step", 0, 1200)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	s.pinned(fixed{call: 30, gpu: 200},
		map[int64]times{cp: {0, 230}, k: {280, 290}},
		map[int64]times{cp: {30, 230}, k: {300, 400}})
	res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: fixed{call: 30, gpu: 200}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]float64{ // measured, replayed, predicted (ms)
		replay.CaptureRegion: {1170e-6, 1170e-6, 400e-6},
		// The range ends 140 ns after the launch call: 290 + 140.
		"step": {1200e-6, 1200e-6, 430e-6},
	}
	if len(res.Regions) != 2 {
		t.Fatalf("regions %+v, want (capture) and step", res.Regions)
	}
	for _, r := range res.Regions {
		w := want[r.Name]
		got := [3]float64{r.MedianMs, r.ReplayMedianMs, r.PredictedMedianMs}
		for i := range got {
			if math.Abs(got[i]-w[i]) > 1e-12 {
				t.Errorf("%s: measured, replayed, predicted %v ms, want %v", r.Name, got, w)
				break
			}
		}
		if r.PredictedMedianLowMs != r.PredictedMedianMs || r.PredictedMedianHighMs != r.PredictedMedianMs {
			t.Errorf("%s: bound %g-%g around %g with one cost", r.Name, r.PredictedMedianLowMs, r.PredictedMedianHighMs, r.PredictedMedianMs)
		}
	}
	step := res.Regions[1]
	if math.Abs(step.HostShare.Measured-1000.0/1200) > 1e-12 || math.Abs(step.HostShare.Predicted-230.0/430) > 1e-12 {
		t.Errorf("step host share %+v, want 1000/1200 and 230/430", step.HostShare)
	}
	if res.Recosted != 1 || res.Uncosted != 0 || len(res.Costs) != 1 || res.Costs[0].Async ||
		res.Costs[0].PinnedGPUNs.Mid != 200 || res.Costs[0].GPUNs != 800 || res.Costs[0].CallNs != 1000 {
		t.Errorf("costs %+v (recosted %d, uncosted %d), want one blocking copy 1000/800 ns measured, 200 ns GPU pinned",
			res.Costs, res.Recosted, res.Uncosted)
	}
}

// Two streams with an event wait: the kernel on stream 2 waits for the copy
// on stream 1 through cudaEventRecord and cudaStreamWaitEvent, so when the
// copy ends at 105 the kernel starts 5 ns later (its measured delay after
// the event), not at its own launch.
func TestEventWaitAcrossStreams(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpyAsync", 0, 10)
	c.Copy(cp, 1, htod, pageable, device, 1<<20, 20, 520)
	rec := c.Call(1, "cudaEventRecord", 20, 25)
	c.Record(rec, 1, 5)
	w := c.Call(1, "cudaStreamWaitEvent", 30, 35)
	c.Sync(records.SyncStreamWait, w, 2, 5, 30, 35)
	k := c.Launch(1, 40, 50, 2, 525, 625)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	// The kernel's own launch delay is unknown (it was queued): it takes
	// the copy's 20 ns, 35 + 20 = 55, before the event at 105 + 5.
	s.pinned(fixed{call: 5, gpu: 100},
		map[int64]times{cp: {0, 5}, rec: {15, 20}, w: {25, 30}, k: {35, 45}},
		map[int64]times{cp: {5, 105}, k: {110, 210}})
}

// A pageable async copy whose call held the host until 10 ns before its
// copy ended: pinned, the call takes its 20 ns and no longer waits, and
// the next call follows 100 ns of host work.
func TestHeldPageableCopy(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpyAsync", 0, 1000)
	c.Copy(cp, 7, htod, pageable, device, 1<<20, 300, 1010)
	k := c.Launch(1, 1100, 1110, 7, 1120, 1220)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	s.pinned(fixed{call: 20, gpu: 100},
		map[int64]times{cp: {0, 20}, k: {120, 130}},
		map[int64]times{cp: {20, 120}, k: {140, 240}})
}

// Copy-engine contention: two host-to-device copies on two streams were
// never seen running at once (one engine). Pinned, the first ends at 105
// and the second, ready at 35, waits for the engine until then.
func TestCopyEngineContention(t *testing.T) {
	var c timelinetest.Capture
	a := c.Call(1, "cudaMemcpyAsync", 0, 10)
	c.Copy(a, 1, htod, pageable, device, 1<<20, 20, 1020)
	b := c.Call(1, "cudaMemcpyAsync", 20, 30)
	c.Copy(b, 2, htod, pinned, device, 1<<20, 1020, 1520)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	s.pinned(fixed{call: 5, gpu: 100},
		map[int64]times{a: {0, 5}, b: {15, 25}},
		map[int64]times{a: {5, 105}, b: {105, 605}})
}

// Event-query polling: four not-ready queries and a successful one wait for
// a copy. Pinned, the copy ends at 105 and the last query starts its
// measured 80 ns later, at 185; the queries in between shrink to nothing.
func TestEventQueryPolling(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpyAsync", 0, 10)
	c.Copy(cp, 1, htod, pageable, device, 1<<20, 20, 1020)
	rec := c.Call(1, "cudaEventRecord", 15, 18)
	c.Record(rec, 1, 9)
	q1 := c.CallResult(1, "cudaEventQuery", 100, 105, timeline.NotReady)
	q2 := c.CallResult(1, "cudaEventQuery", 300, 305, timeline.NotReady)
	c.CallResult(1, "cudaEventQuery", 600, 605, timeline.NotReady)
	c.CallResult(1, "cudaEventQuery", 900, 905, timeline.NotReady)
	ok := c.Call(1, "cudaEventQuery", 1100, 1105)
	c.Sync(records.SyncEvent, ok, records.NoID, 9, 1100, 1105)
	k := c.Launch(1, 1200, 1210, 1, 1220, 1320)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	s.pinned(fixed{call: 5, gpu: 100},
		map[int64]times{cp: {0, 5}, rec: {10, 13}, q1: {95, 100}, q2: {185, 185}, ok: {185, 190}, k: {285, 295}},
		map[int64]times{cp: {5, 105}, k: {305, 405}})
}

// An event never recorded in the trace: its synchronisation keeps its
// measured 1000 ns whatever the copy does, and the result says so.
func TestUnresolvedEvent(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpyAsync", 0, 10)
	c.Copy(cp, 1, htod, pageable, device, 1<<20, 20, 1020)
	sy := c.Call(1, "cudaEventSynchronize", 30, 1030)
	c.Sync(records.SyncEvent, sy, records.NoID, 77, 30, 1030)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	s.pinned(fixed{call: 5, gpu: 100}, map[int64]times{sy: {25, 1025}}, map[int64]times{cp: {5, 105}})
	res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: fixed{call: 5, gpu: 100}})
	if err != nil {
		t.Fatal(err)
	}
	want := timeline.Assumption{Kind: timeline.AssumeEventUnrecorded, PID: 1, API: "cudaEventSynchronize", Event: 77, Stream: -1, Count: 1, Corr: sy}
	if !slices.Contains(res.Assumptions, want) {
		t.Errorf("assumptions %+v lack %+v", res.Assumptions, want)
	}
	// Recorded, the same synchronisation follows the copy: 105 + its
	// measured 10 ns after the copy's end.
	var r timelinetest.Capture
	cp = r.Call(1, "cudaMemcpyAsync", 0, 10)
	r.Copy(cp, 1, htod, pageable, device, 1<<20, 20, 1020)
	rec := r.Call(1, "cudaEventRecord", 12, 15)
	r.Record(rec, 1, 77)
	sy = r.Call(1, "cudaEventSynchronize", 30, 1030)
	r.Sync(records.SyncEvent, sy, records.NoID, 77, 30, 1030)
	s = newSynthetic(t, &r, timeline.Options{})
	s.asCaptured()
	s.pinned(fixed{call: 5, gpu: 100}, map[int64]times{sy: {25, 115}}, nil)
}

// A thread woken by another: thread 2 resumed 40 µs after thread 1's call
// ended. Pinned, thread 1 gets there 90 µs sooner and so does thread 2;
// without hand-offs thread 2 keeps its measured time.
func TestHandoffFollowsTheWakingThread(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpyAsync", 0, 100_000)
	c.Copy(cp, 7, htod, pageable, device, 1<<20, 10_000, 101_000)
	k := c.Call(1, "cudaLaunchKernel", 150_000, 160_000)
	c.Call(2, "cudaLaunchKernel", 0, 1_000)
	w := c.Call(2, "cudaLaunchKernel", 200_000, 210_000)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	s.pinned(fixed{call: 10_000, gpu: 20_000},
		map[int64]times{cp: {0, 10_000}, k: {60_000, 70_000}, w: {110_000, 120_000}},
		map[int64]times{cp: {10_000, 30_000}})
	s = newSynthetic(t, &c, timeline.Options{NoHandoffs: true})
	s.pinned(fixed{call: 10_000, gpu: 20_000}, map[int64]times{w: {200_000, 210_000}}, nil)
}

// A cycle through a polling run and a hand-off (thread 1's launch is
// taken as woken by a not-ready query of thread 2, whose run waits for
// that launch's kernel) is broken at its earliest measured node, counted,
// and the replay as captured still reproduces the capture.
func TestCycleIsBroken(t *testing.T) {
	var c timelinetest.Capture
	c.Call(1, "cudaLaunchKernel", 0, 10_000)
	c.Launch(1, 300_000, 310_000, 7, 320_000, 400_000)
	rec := c.Call(1, "cudaEventRecord", 315_000, 318_000)
	c.Record(rec, 7, 3)
	c.Call(2, "cudaLaunchKernel", 0, 1_000)
	c.CallResult(2, "cudaEventQuery", 250_000, 255_000, timeline.NotReady)
	ok := c.Call(2, "cudaEventQuery", 500_000, 505_000)
	c.Sync(records.SyncEvent, ok, records.NoID, 3, 500_000, 505_000)
	s := newSynthetic(t, &c, timeline.Options{})
	if len(s.tl.Handoffs) != 1 {
		t.Fatalf("hand-offs %+v, want the launch woken by the not-ready query", s.tl.Handoffs)
	}
	s.asCaptured()
	sc, err := replay.Simulate(context.Background(), s.tl)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Forced != 1 {
		t.Errorf("forced %d dependencies, want 1", sc.Forced)
	}
}

// Copy/compute overlap: half of the copy's GPU time ran beside a kernel of
// another stream; the kernel on its own stream does not count.
func TestOverlap(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpyAsync", 0, 10)
	c.Copy(cp, 1, htod, pinned, device, 1<<20, 100, 300)
	c.Launch(1, 20, 30, 2, 200, 400)
	c.Launch(1, 40, 50, 1, 300, 350)
	s := newSynthetic(t, &c, timeline.Options{})
	res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: fixed{call: 5, gpu: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Regions[0].Overlap; got.Measured != 0.5 || got.Predicted != 0.5 {
		t.Errorf("overlap %+v, want 0.5 measured and predicted (nothing pageable)", got)
	}
	if res.Recosted != 0 || len(res.Costs) != 0 {
		t.Errorf("re-costed %d copies, costs %+v, with nothing pageable", res.Recosted, res.Costs)
	}
}

// Without a cost for a copy the what-if keeps it as measured and says so.
func TestNoCostKeepsTheCopy(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpyAsync", 0, 1000)
	c.Copy(cp, 7, htod, pageable, device, 1<<20, 300, 1010)
	s := newSynthetic(t, &c, timeline.Options{})
	res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: replay.Chain{}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Regions[0]
	if r.PredictedMedianMs != r.MedianMs || res.Uncosted != 1 || res.Recosted != 0 {
		t.Errorf("predicted %g ms against measured %g, uncosted %d: want unchanged, 1", r.PredictedMedianMs, r.MedianMs, res.Uncosted)
	}
	want := timeline.Assumption{Kind: timeline.AssumeNoCost, PID: 1, API: "cudaMemcpyAsync", Event: -1, Stream: 7, Count: 1, Corr: cp}
	if !slices.Contains(res.Assumptions, want) {
		t.Errorf("assumptions %+v lack %+v", res.Assumptions, want)
	}
}

func TestReplayStopsOnCancel(t *testing.T) {
	b := timeline.NewBuilder(context.Background(), timeline.Options{})
	if err := timelinetest.Generate(b.Handler(), timelinetest.ShapeOf(4*timeline.CheckEvery)); err != nil {
		t.Fatal(err)
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := replay.Replay(ctx, tl, replay.Options{Coster: fixed{call: 5, gpu: 100}}); err == nil {
		t.Fatal("a cancelled replay returned no error")
	}
}

// A two-stream pipeline from pageable memory: each chunk's copy in, kernel
// and copy back, on alternate streams, with every copy call holding the
// host, so no copy ever ran beside a kernel. Pinned, the host issues the
// next chunk while the last one computes: its copies overlap the other
// stream's kernels and the pipeline takes less than half the time.
func TestPinnedPipelineOverlaps(t *testing.T) {
	var c timelinetest.Capture
	var at int64
	for i := range int64(6) {
		s := 1 + i%2
		in := c.Call(1, "cudaMemcpyAsync", at, at+1000)
		c.Copy(in, s, htod, pageable, device, 1<<20, at+100, at+1010)
		c.Launch(1, at+1010, at+1020, s, at+1030, at+1530)
		out := c.Call(1, "cudaMemcpyAsync", at+1030, at+2540)
		c.Copy(out, s, vocab.CopyDtoH, device, pageable, 1<<20, at+1530, at+2530)
		at += 2550
	}
	c.Range(1, "pass", 0, at)
	s := newSynthetic(t, &c, timeline.Options{})
	s.asCaptured()
	res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: fixed{call: 10, gpu: 200}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Regions[0]
	t.Logf("pipeline: %.4f ms measured, %.4f predicted; overlap %.2f measured, %.2f predicted", r.MedianMs, r.PredictedMedianMs, r.Overlap.Measured, r.Overlap.Predicted)
	if r.Overlap.Measured != 0 || r.Overlap.Predicted < 0.3 {
		t.Errorf("overlap %+v, want none measured and at least 0.3 predicted", r.Overlap)
	}
	if r.PredictedMedianMs > r.MedianMs/2 || r.ReplayMedianMs != r.MedianMs {
		t.Errorf("pipeline %g ms, replayed %g, predicted %g: want replayed exact and predicted under half", r.MedianMs, r.ReplayMedianMs, r.PredictedMedianMs)
	}
	if res.Recosted != 12 {
		t.Errorf("re-costed %d copies, want 12", res.Recosted)
	}
}

// unrecordedWait is a loop whose kernel B on stream 2 waits, in the
// capture, for kernel A on stream 1; with recorded, the wait is in the
// trace (cudaEventRecord and cudaStreamWaitEvent), without it the trace
// does not say (as with the legacy default stream's implicit
// synchronisation). A takes 100 µs in three steps of four and 2 ms in the
// fourth.
func unrecordedWait(recorded bool) *timelinetest.Capture {
	var c timelinetest.Capture
	var t0 int64
	for i := range 8 {
		dA := int64(100_000)
		if i%4 == 3 {
			dA = 2_000_000
		}
		aEnd := t0 + 10_000 + dA
		c.Launch(1, t0, t0+5_000, 1, t0+10_000, aEnd)
		if recorded {
			rec := c.Call(1, "cudaEventRecord", t0+6_000, t0+8_000)
			c.Record(rec, 1, 1)
			w := c.Call(1, "cudaStreamWaitEvent", t0+9_000, t0+11_000)
			c.Sync(records.SyncStreamWait, w, 2, 1, t0+9_000, t0+11_000)
		}
		bEnd := aEnd + 2_000 + 50_000
		c.Launch(1, t0+12_000, t0+17_000, 2, aEnd+2_000, bEnd)
		sy := c.Call(1, "cudaStreamSynchronize", t0+20_000, bEnd+5_000)
		c.Sync(records.SyncStream, sy, 2, records.NoID, t0+20_000, bEnd+5_000)
		c.Range(1, "step", t0, bEnd+10_000)
		t0 = bEnd + 15_000
	}
	return &c
}

// bOf is the correlation id of the first kernel on stream 2.
func bOf(tl *timeline.Timeline) int64 {
	for _, st := range tl.Streams {
		if st.ID == 2 {
			return tl.Ops.Corr[st.First]
		}
	}
	return -1
}

// The as-captured replay takes every launch, queue, event and return
// delay as typical for its class, so that a dependency the trace lacks
// shows: without the event, kernel B's start follows no typical delay
// after its launch, the step's median replays far off and Misfits names
// B's launches; with the event in the trace the same loop replays to
// within a microsecond.
func TestUnmodelledDependencyFailsTheFit(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		s := newSynthetic(t, unrecordedWait(recorded), timeline.Options{})
		res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: replay.Chain{}})
		if err != nil {
			t.Fatal(err)
		}
		step := regionNamed(t, res, "step")
		t.Logf("recorded %v: step median %.4f ms replayed %.4f (%+.1f%%), span %.4f replayed %.4f (%+.1f%%)", recorded,
			step.MedianMs, step.ReplayMedianMs, 100*step.Fit.Median, step.SpanMs, step.ReplaySpanMs, 100*step.Fit.Span)
		misfits := replay.Misfits(s.tl)
		if recorded {
			if math.Abs(step.ReplayMedianMs-step.MedianMs) > 1e-3 || math.Abs(step.ReplaySpanMs-step.SpanMs) > 1e-3 {
				t.Errorf("with the event recorded the step replays %.4f ms (span %.4f), measured %.4f (%.4f)",
					step.ReplayMedianMs, step.ReplaySpanMs, step.MedianMs, step.SpanMs)
			}
			if len(misfits) > 0 && misfits[0].Late > 0 {
				t.Errorf("with the event recorded, misfits %+v", misfits[0])
			}
			continue
		}
		if math.Abs(step.Fit.Median) < 0.5 || math.Abs(step.Fit.Span) < 0.05 {
			t.Errorf("without the event the step replays %+.1f%% off (span %+.1f%%), want the fit to fail", 100*step.Fit.Median, 100*step.Fit.Span)
		}
		// Kernel launches take 288 µs as typical (A's 5 µs, B's 97 µs and
		// 1997 µs): B of the two long steps came later than that.
		if len(misfits) == 0 || misfits[0].What != "op" || misfits[0].API != "cudaLaunchKernel" || misfits[0].Late != 2 ||
			s.tl.Ops.Stream[s.op(misfits[0].WorstCorr)] != s.tl.Ops.Stream[s.op(bOf(s.tl))] {
			t.Errorf("misfits %+v, want kernel launches first, B late in the two long steps", misfits)
		}
	}
}

// A pageable copy a graph launch made is kept as measured and named; a
// program that pins by copying each buffer pays, in the high bound, a host
// copy as long as the pageable call's own time, before the call; one that
// pins on a pin thread of its interpreter pays it at every cost.
func TestGraphCopyKeptAndPinByCopy(t *testing.T) {
	var c timelinetest.Capture
	g := c.Call(1, "cudaGraphLaunch", 0, 10)
	c.Copy(g, 7, htod, pageable, device, 1<<20, 20, 520)
	cp := c.Call(1, "cudaMemcpyAsync", 600, 1600)
	c.Copy(cp, 7, htod, pageable, device, 1<<20, 700, 1610)
	c.Range(1, "step", 600, 1700)
	s := newSynthetic(t, &c, timeline.Options{})
	for _, pinBy := range []replay.PinBy{replay.PinInPlace, replay.PinByCopy, replay.PinByThread} {
		res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: fixed{call: 20, gpu: 100}, PinBy: pinBy})
		if err != nil {
			t.Fatal(err)
		}
		if res.Recosted != 1 || res.Kept != 1 || res.PinBy != pinBy {
			t.Errorf("re-costed %d, kept %d, pin by %d", res.Recosted, res.Kept, res.PinBy)
		}
		want := timeline.Assumption{Kind: timeline.AssumeGraphCopy, PID: 1, API: "cudaGraphLaunch", Event: -1, Stream: 7, Count: 1, Corr: g}
		if !slices.Contains(res.Assumptions, want) {
			t.Errorf("assumptions %+v lack %+v", res.Assumptions, want)
		}
		// The step: the call's 20 ns, and the copy's 100 ns as the range
		// ends 100 ns after the call; by copy, the high bound first pays
		// the pageable call's 1000 ns.
		step := regionNamed(t, res, "step")
		wantMid, wantHigh, wantCopy := 120e-6, 120e-6, int64(0)
		switch pinBy {
		case replay.PinByCopy:
			wantHigh, wantCopy = 1120e-6, 1000
		case replay.PinByThread:
			wantMid, wantHigh, wantCopy = 1120e-6, 1120e-6, 1000
		}
		if math.Abs(step.PredictedMedianMs-wantMid) > 1e-12 || math.Abs(step.PredictedMedianLowMs-wantMid) > 1e-12 ||
			math.Abs(step.PredictedMedianHighMs-wantHigh) > 1e-12 || res.Costs[0].PinCopyNs != wantCopy {
			t.Errorf("pin by %s: step predicted %g ms (low %g, high %g), pin copy %d ns; want %g (%g, %g), %d",
				pinBy, step.PredictedMedianMs, step.PredictedMedianLowMs, step.PredictedMedianHighMs, res.Costs[0].PinCopyNs,
				wantMid, wantMid, wantHigh, wantCopy)
		}
	}
}

// A region's host share is the median over its instances of the copy
// calls' host time in an instance over its time: a first step ten times
// longer than the others (held 100 of 1000 ns) neither dilutes the share
// of the typical step (50 of 100 ns) nor, as a mean over the median
// would, takes it past what the calls held.
func TestHostShareIsTheMedianInstances(t *testing.T) {
	var c timelinetest.Capture
	cp := c.Call(1, "cudaMemcpy", 0, 100)
	c.Copy(cp, 7, htod, pageable, device, 1<<20, 10, 90)
	c.Range(1, "step", 0, 1000)
	for k := int64(0); k < 4; k++ {
		at := 1010 + 110*k
		cp := c.Call(1, "cudaMemcpy", at, at+50)
		c.Copy(cp, 7, htod, pageable, device, 1<<20, at+5, at+45)
		c.Range(1, "step", at, at+100)
	}
	s := newSynthetic(t, &c, timeline.Options{})
	res, err := replay.Replay(context.Background(), s.tl, replay.Options{Coster: fixed{call: 5, gpu: 20}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Regions {
		if r.Name != "step" {
			continue
		}
		if r.Instances != 5 || math.Abs(r.TotalMs-1400e-6) > 1e-12 {
			t.Errorf("step: %d instances of %g ms in all, want 5 of 1400 ns", r.Instances, r.TotalMs)
		}
		if math.Abs(r.HostShare.Measured-0.5) > 1e-12 {
			t.Errorf("step host share %g, want 0.5 (the median step's 50 of 100 ns)", r.HostShare.Measured)
		}
		return
	}
	t.Fatalf("no step region in %+v", res.Regions)
}
