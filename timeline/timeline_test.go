package timeline_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
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

func build(t *testing.T, c *timelinetest.Capture, opts timeline.Options) *timeline.Timeline {
	t.Helper()
	tl, err := c.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// callOf finds the call with correlation id corr.
func callOf(t *testing.T, tl *timeline.Timeline, corr int64) int32 {
	t.Helper()
	for i, c := range tl.Calls.Corr {
		if c == corr {
			return int32(i)
		}
	}
	t.Fatalf("no call with correlation id %d", corr)
	return timeline.None
}

// opOf finds the op launched by the call with correlation id corr.
func opOf(t *testing.T, tl *timeline.Timeline, corr int64) int32 {
	t.Helper()
	for j, c := range tl.Ops.Corr {
		if c == corr {
			return int32(j)
		}
	}
	t.Fatalf("no op with correlation id %d", corr)
	return timeline.None
}

func waitOf(tl *timeline.Timeline, call int32) *timeline.Wait {
	for i := range tl.Waits {
		if tl.Waits[i].Call == call {
			return &tl.Waits[i]
		}
	}
	return nil
}

func TestRoles(t *testing.T) {
	for api, want := range map[string]timeline.Role{
		"cudaMemcpy": timeline.RoleCopyBlocking, "cudaMemcpy2D": timeline.RoleCopyBlocking, "cuMemcpyHtoD": timeline.RoleCopyBlocking,
		"cuMemcpyDtoH": timeline.RoleCopyBlocking, "cudaMemcpyAsync": timeline.RoleCopyAsync, "cuMemcpyHtoDAsync": timeline.RoleCopyAsync,
		"cudaMemcpyAsync_ptsz": timeline.RoleCopyAsync, "cudaStreamSynchronize": timeline.RoleStreamSync,
		"cuStreamSynchronize": timeline.RoleStreamSync, "cudaDeviceSynchronize": timeline.RoleDeviceSync,
		"cuCtxSynchronize": timeline.RoleDeviceSync, "cudaEventSynchronize": timeline.RoleEventSync,
		"cudaEventQuery": timeline.RoleEventQuery, "cudaEventRecord": timeline.RoleEventRecord,
		"cudaEventRecordWithFlags": timeline.RoleEventRecord, "cudaStreamWaitEvent": timeline.RoleStreamWait,
		"cudaHostAlloc": timeline.RoleHostAlloc, "cuMemHostAlloc": timeline.RoleHostAlloc, "cudaMallocHost": timeline.RoleHostAlloc,
		"cudaLaunchKernel": timeline.RoleOther, "cudaMemsetAsync": timeline.RoleOther, "cudaMalloc": timeline.RoleOther,
	} {
		if got := timeline.RoleOf(api); got != want {
			t.Errorf("RoleOf(%s) = %s, want %s", api, got, want)
		}
	}
}

func TestCallsAndOpsSortedAndJoined(t *testing.T) {
	var c timelinetest.Capture
	// Given out of order, on two threads and two streams.
	b := c.Call(2, "cudaLaunchKernel", 500, 510)
	a := c.Call(1, "cudaLaunchKernel", 300, 310)
	z := c.Call(1, "cudaLaunchKernel", 100, 110)
	c.Kernel(a, 9, 320, 400)
	c.Kernel(z, 9, 120, 200)
	c.Kernel(b, 3, 520, 600)
	c.Kernel(99, 3, 700, 800) // no such call
	tl := build(t, &c, timeline.Options{})
	if got := tl.Calls.Corr; !slices.Equal(got, []int64{z, a, b}) {
		t.Errorf("calls in order %v, want %v (thread 1 by start, then thread 2)", got, []int64{z, a, b})
	}
	if th := tl.Threads[0]; th.TID != 1 || th.First != 0 || th.Last != 2 {
		t.Errorf("thread 0 = %+v, want tid 1 calls [0,2)", th)
	}
	if s := tl.Streams[0]; s.ID != 3 || s.First != 0 || s.Last != 2 {
		t.Errorf("stream 0 = %+v, want stream 3 ops [0,2)", s)
	}
	for _, corr := range []int64{z, a, b} {
		j, i := opOf(t, tl, corr), callOf(t, tl, corr)
		if tl.Ops.Call[j] != i || !slices.Equal(tl.OpsOf(i), []int32{j}) {
			t.Errorf("op of call %d: Call %d, OpsOf %v; want %d and [%d]", corr, tl.Ops.Call[j], tl.OpsOf(i), i, j)
		}
	}
	if j := opOf(t, tl, 99); tl.Ops.Call[j] != timeline.None {
		t.Errorf("op with no call joined to call %d", tl.Ops.Call[j])
	}
	want := timeline.Assumption{Kind: timeline.AssumeOpWithoutCall, PID: 1, API: "kernel", Event: -1, Stream: 3, Count: 1, Corr: 99}
	if !slices.Contains(tl.Assumptions, want) {
		t.Errorf("assumptions %+v lack %+v", tl.Assumptions, want)
	}
	if len(tl.ByStart) != 3 || tl.Calls.Start[tl.ByStart[0]] != 100 || tl.Calls.Start[tl.ByStart[2]] != 500 {
		t.Errorf("ByStart %v not in start order", tl.ByStart)
	}
}

func TestCopyWaits(t *testing.T) {
	var c timelinetest.Capture
	blocking := c.Call(1, "cudaMemcpy", 0, 1000)
	c.Copy(blocking, 7, htod, pageable, device, 1<<20, 100, 900)
	held := c.Call(1, "cudaMemcpyAsync", 1100, 2000)
	c.Copy(held, 7, htod, pageable, device, 1<<20, 1300, 2010)
	staged := c.Call(1, "cudaMemcpyAsync", 2100, 2110) // returned before its copy began
	c.Copy(staged, 7, htod, pageable, device, 512, 2120, 2130)
	pin := c.Call(1, "cudaMemcpyAsync", 2200, 2210)
	c.Copy(pin, 7, htod, pinned, device, 1<<20, 2205, 2300)
	tl := build(t, &c, timeline.Options{})
	if w := waitOf(tl, callOf(t, tl, blocking)); w == nil || w.Kind != timeline.WaitCopy || !slices.Equal(w.On, []int32{opOf(t, tl, blocking)}) {
		t.Errorf("blocking copy's wait = %+v, want blocking-copy on its copy", w)
	}
	if w := waitOf(tl, callOf(t, tl, held)); w == nil || w.Kind != timeline.WaitHeld || !slices.Equal(w.On, []int32{opOf(t, tl, held)}) {
		t.Errorf("held pageable copy's wait = %+v, want held-copy on its copy", w)
	}
	for _, corr := range []int64{staged, pin} {
		if w := waitOf(tl, callOf(t, tl, corr)); w != nil {
			t.Errorf("async copy %d waits: %+v", corr, w)
		}
	}
	if !tl.Ops.Pageable(opOf(t, tl, held)) || tl.Ops.Pageable(opOf(t, tl, pin)) {
		t.Errorf("Pageable wrong on the held or the pinned copy")
	}
}

func TestSyncWaits(t *testing.T) {
	var c timelinetest.Capture
	k1 := c.Launch(1, 0, 10, 7, 20, 500)
	c.Launch(1, 20, 30, 8, 40, 300)
	ss := c.Call(1, "cudaStreamSynchronize", 40, 510)
	c.Sync(records.SyncStream, ss, 7, records.NoID, 41, 505)
	// Without its record: the stream whose work ended last before the
	// call returned (stream 7's kernel ended at 500, stream 8's at 300;
	// both before 600).
	k3 := c.Launch(1, 520, 530, 8, 540, 590)
	bare := c.Call(1, "cudaStreamSynchronize", 535, 600)
	dev := c.Call(1, "cudaDeviceSynchronize", 610, 620)
	tl := build(t, &c, timeline.Options{})
	if w := waitOf(tl, callOf(t, tl, ss)); w == nil || w.Kind != timeline.WaitStream || !slices.Equal(w.On, []int32{opOf(t, tl, k1)}) {
		t.Errorf("stream sync's wait = %+v, want stream-sync on stream 7's kernel", w)
	}
	if w := waitOf(tl, callOf(t, tl, bare)); w == nil || !slices.Equal(w.On, []int32{opOf(t, tl, k3)}) {
		t.Errorf("record-less stream sync's wait = %+v, want stream 8's last kernel (ended 590)", w)
	}
	want := timeline.Assumption{Kind: timeline.AssumeSyncStreamUnknown, PID: 1, API: "cudaStreamSynchronize", Event: -1, Stream: 8, Count: 1, Corr: bare}
	if !slices.Contains(tl.Assumptions, want) {
		t.Errorf("assumptions %+v lack %+v", tl.Assumptions, want)
	}
	w := waitOf(tl, callOf(t, tl, dev))
	if w == nil || w.Kind != timeline.WaitDevice {
		t.Fatalf("device sync's wait = %+v", w)
	}
	got := slices.Sorted(slices.Values(w.On))
	if exp := slices.Sorted(slices.Values([]int32{opOf(t, tl, k1), opOf(t, tl, k3)})); !slices.Equal(got, exp) {
		t.Errorf("device sync waits for %v, want every stream's last op %v", got, exp)
	}
	if !slices.ContainsFunc(tl.Assumptions, func(a timeline.Assumption) bool { return a.Kind == timeline.AssumeSyncDeviceAllStreams }) {
		t.Errorf("no device-sync assumption in %+v", tl.Assumptions)
	}
}

func TestEventWaits(t *testing.T) {
	var c timelinetest.Capture
	k1 := c.Launch(1, 0, 10, 7, 20, 520)
	rec := c.Call(1, "cudaEventRecord", 20, 25)
	c.Record(rec, 7, 5)
	wait := c.Call(1, "cudaStreamWaitEvent", 30, 35)
	c.Sync(records.SyncStreamWait, wait, 8, 5, 30, 35)
	k2 := c.Launch(1, 40, 50, 8, 525, 625)
	// Polling: three not-ready queries, then one that finds it done.
	q1 := c.CallResult(1, "cudaEventQuery", 100, 105, timeline.NotReady)
	c.CallResult(1, "cudaEventQuery", 300, 305, timeline.NotReady)
	c.CallResult(1, "cudaEventQuery", 500, 505, timeline.NotReady)
	ok := c.Call(1, "cudaEventQuery", 600, 605)
	c.Sync(records.SyncEvent, ok, records.NoID, 5, 600, 605)
	// A query that found its event done at once is no wait.
	once := c.Call(1, "cudaEventQuery", 700, 705)
	c.Sync(records.SyncEvent, once, records.NoID, 5, 700, 705)
	// An event never recorded in the trace.
	lost := c.Call(1, "cudaEventSynchronize", 800, 900)
	c.Sync(records.SyncEvent, lost, records.NoID, 77, 800, 900)
	// An event synchronisation without its record (as CSV reports hold
	// none): taken to wait for every stream's last work that ended before
	// it returned; stream 9's kernel, still running when it returned, is
	// not among it.
	k3 := c.Launch(1, 925, 928, 9, 930, 2000)
	bare := c.Call(1, "cudaEventSynchronize", 950, 960)
	tl := build(t, &c, timeline.Options{})
	if want := []timeline.StreamWait{{Op: opOf(t, tl, k2), On: opOf(t, tl, k1)}}; !slices.Equal(tl.StreamWaits, want) {
		t.Errorf("stream waits %+v, want %+v", tl.StreamWaits, want)
	}
	w := waitOf(tl, callOf(t, tl, ok))
	if w == nil || w.Kind != timeline.WaitPoll || w.PollFirst != callOf(t, tl, q1) || !slices.Equal(w.On, []int32{opOf(t, tl, k1)}) {
		t.Errorf("poll's wait = %+v, want event-poll from the first query on stream 7's kernel", w)
	}
	for _, corr := range []int64{once, lost} {
		if w := waitOf(tl, callOf(t, tl, corr)); w != nil {
			t.Errorf("call %d waits: %+v", corr, w)
		}
	}
	w = waitOf(tl, callOf(t, tl, bare))
	if want := slices.Sorted(slices.Values([]int32{opOf(t, tl, k1), opOf(t, tl, k2)})); w == nil || w.Kind != timeline.WaitEvent ||
		!slices.Equal(slices.Sorted(slices.Values(w.On)), want) || slices.Contains(w.On, opOf(t, tl, k3)) {
		t.Errorf("the bare event sync's wait = %+v, want an event-sync on %v", w, want)
	}
	for _, want := range []timeline.Assumption{
		{Kind: timeline.AssumeEventUnrecorded, PID: 1, API: "cudaEventSynchronize", Event: 77, Stream: -1, Count: 1, Corr: lost},
		{Kind: timeline.AssumeEventGuessed, PID: 1, API: "cudaEventSynchronize", Event: -1, Stream: -1, Count: 1, Corr: bare},
	} {
		if !slices.Contains(tl.Assumptions, want) {
			t.Errorf("assumptions %+v lack %+v", tl.Assumptions, want)
		}
	}
}

// A stream made to wait for another's event and then recorded, with no op
// between: the event recorded stands for both streams' work (a pipeline's
// end of pass), and so does a synchronisation of the waiting stream. A
// wait followed by nothing at all binds nothing, and says so.
func TestWaitThenRecordStandsForBothStreams(t *testing.T) {
	var c timelinetest.Capture
	k7 := c.Launch(1, 0, 10, 7, 20, 520)
	k8 := c.Launch(1, 15, 25, 8, 30, 900)
	last := c.Call(1, "cudaEventRecord", 30, 35)
	c.Record(last, 8, 1)
	wait := c.Call(1, "cudaStreamWaitEvent", 40, 45)
	c.Sync(records.SyncStreamWait, wait, 7, 1, 40, 45)
	done := c.Call(1, "cudaEventRecord", 50, 55)
	c.Record(done, 7, 2)
	sy := c.Call(1, "cudaEventSynchronize", 60, 905)
	c.Sync(records.SyncEvent, sy, records.NoID, 2, 60, 905)
	ss := c.Call(1, "cudaStreamSynchronize", 910, 915)
	c.Sync(records.SyncStream, ss, 7, records.NoID, 910, 915)
	// Stream 8 waits for stream 7's kernel, and nothing of stream 8
	// follows.
	rec := c.Call(1, "cudaEventRecord", 920, 925)
	c.Record(rec, 7, 3)
	idle := c.Call(1, "cudaStreamWaitEvent", 930, 935)
	c.Sync(records.SyncStreamWait, idle, 8, 3, 930, 935)
	tl := build(t, &c, timeline.Options{})
	both := []int32{opOf(t, tl, k7), opOf(t, tl, k8)}
	for _, corr := range []int64{sy, ss} {
		w := waitOf(tl, callOf(t, tl, corr))
		if w == nil || !slices.Equal(w.On, both) {
			t.Errorf("call %d waits %+v, want both kernels %v", corr, w, both)
		}
	}
	if len(tl.StreamWaits) != 0 {
		t.Errorf("stream waits %+v, want none (no op follows either wait)", tl.StreamWaits)
	}
	want := timeline.Assumption{Kind: timeline.AssumeStreamWaitNoWork, PID: 1, API: "cudaStreamWaitEvent", Event: 3, Stream: 8, Count: 1, Corr: idle}
	if !slices.Contains(tl.Assumptions, want) {
		t.Errorf("assumptions %+v lack %+v", tl.Assumptions, want)
	}
	for _, a := range tl.Assumptions {
		if a.Kind == timeline.AssumeStreamWaitNoWork && a.Corr == wait {
			t.Errorf("the wait a recording took in is noted as binding nothing: %+v", a)
		}
	}
}

func TestEngineCapacity(t *testing.T) {
	for _, c := range []struct {
		name   string
		second int64 // the second copy's start; the first runs [20, 1020]
		want   int
	}{{"back to back", 1020, 1}, {"overlapping", 500, 2}} {
		var cp timelinetest.Capture
		a := cp.Call(1, "cudaMemcpyAsync", 0, 10)
		cp.Copy(a, 1, htod, pinned, device, 1<<20, 20, 1020)
		b := cp.Call(1, "cudaMemcpyAsync", 20, 30)
		cp.Copy(b, 2, htod, pinned, device, 1<<20, c.second, c.second+500)
		d := cp.Call(1, "cudaMemcpyAsync", 40, 50)
		cp.Copy(d, 2, vocab.CopyDtoH, device, pinned, 1<<20, 2000, 2500)
		tl := build(t, &cp, timeline.Options{})
		want := []timeline.Engine{{Device: 0, Dir: timeline.DirHtoD, Capacity: c.want}, {Device: 0, Dir: timeline.DirDtoH, Capacity: 1}}
		if !slices.Equal(tl.Engines, want) {
			t.Errorf("%s: engines %+v, want %+v", c.name, tl.Engines, want)
		}
		if e := tl.EngineOf(opOf(t, tl, a)); e != 0 {
			t.Errorf("%s: the first copy uses engine %d, want 0", c.name, e)
		}
	}
}

func TestHandoffs(t *testing.T) {
	var c timelinetest.Capture
	c.Call(1, "cudaLaunchKernel", 0, 10_000)
	b := c.Call(1, "cudaLaunchKernel", 190_000, 200_000)
	c.Call(2, "cudaLaunchKernel", 10_000, 20_000)
	// Idle 230 µs, resuming 50 µs after thread 1's call ended: woken by it.
	d := c.Call(2, "cudaLaunchKernel", 250_000, 260_000)
	// Idle 20 µs: its own work.
	c.Call(2, "cudaLaunchKernel", 280_000, 290_000)
	// Idle 200 µs, but resuming 110 µs after thread 2's last call, more
	// than half its idle time: not taken as woken.
	c.Call(1, "cudaLaunchKernel", 400_000, 410_000)
	tl := build(t, &c, timeline.Options{})
	want := []timeline.Handoff{{Call: callOf(t, tl, d), From: callOf(t, tl, b)}}
	if !slices.Equal(tl.Handoffs, want) {
		t.Errorf("hand-offs %+v, want %+v", tl.Handoffs, want)
	}
	if tl := build(t, &c, timeline.Options{NoHandoffs: true}); len(tl.Handoffs) != 0 {
		t.Errorf("NoHandoffs still infers %+v", tl.Handoffs)
	}
}

func TestRangeAnchors(t *testing.T) {
	var c timelinetest.Capture
	first := c.Call(1, "cudaLaunchKernel", 100, 110)
	second := c.Call(1, "cudaLaunchKernel", 200, 210)
	c.Range(1, "step", 50, 150)  // before the first call, after it
	c.Range(1, "step", 205, 300) // inside the second call, after it
	c.Range(3, "idle", 10, 20)   // a thread with no calls
	c.Ranges = append(c.Ranges, records.Range{Name: "open", Start: 400, Open: true, PID: 1, TID: 1})
	tl := build(t, &c, timeline.Options{})
	f, s := callOf(t, tl, first), callOf(t, tl, second)
	if len(tl.Ranges) != 3 {
		t.Fatalf("%d ranges, want 3 (the open one left out)", len(tl.Ranges))
	}
	got := [][2]timeline.Anchor{}
	for _, r := range tl.Ranges {
		got = append(got, [2]timeline.Anchor{r.StartAt, r.EndAt})
	}
	want := [][2]timeline.Anchor{
		{{Call: timeline.None}, {Call: timeline.None}},
		{{Call: f}, {Call: f, After: true}},
		{{Call: s}, {Call: s, After: true}},
	}
	if !slices.Equal(got, want) {
		t.Errorf("anchors %+v, want %+v", got, want)
	}
	if !slices.ContainsFunc(tl.Assumptions, func(a timeline.Assumption) bool { return a.Kind == timeline.AssumeOpenRange && a.API == "open" }) {
		t.Errorf("no open-range assumption in %+v", tl.Assumptions)
	}
}

func TestBuilderStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := timeline.NewBuilder(ctx, timeline.Options{})
	err := timelinetest.Generate(b.Handler(), timelinetest.ShapeOf(3*timeline.CheckEvery))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate into a cancelled builder: %v, want context.Canceled", err)
	}
	if _, err := b.Finish(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Finish after cancel: %v, want context.Canceled", err)
	}
}

func TestBuilderRefusesImpossibleRecords(t *testing.T) {
	b := timeline.NewBuilder(context.Background(), timeline.Options{})
	h := b.Handler()
	if err := h.Call(&records.Call{Name: "cudaMemcpy", Start: 10, End: 5, Corr: 3, PID: 1}); err == nil {
		t.Errorf("a call ending before it starts was taken")
	}
	if err := h.Op(&records.Op{Kind: records.OpKernel, Start: 10, End: 5, Corr: 3, PID: 1, Stream: 7}); err == nil {
		t.Errorf("an op ending before it starts was taken")
	}
	if err := h.Op(&records.Op{Kind: 9, Start: 1, End: 5}); err == nil {
		t.Errorf("an op of unknown kind was taken")
	}
}

func TestGeneratedShape(t *testing.T) {
	s := timelinetest.Shape{Steps: 16, Kernels: 4, SideEvery: 8}
	b := timeline.NewBuilder(context.Background(), timeline.Options{})
	if err := timelinetest.Generate(b.Handler(), s); err != nil {
		t.Fatal(err)
	}
	tl, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tl.Calls.Len(), 16*(1+4+1)+2*3; got != want {
		t.Errorf("%d calls, want %d", got, want)
	}
	if got, want := tl.Ops.Len(), 16*(1+4)+2; got != want {
		t.Errorf("%d ops, want %d", got, want)
	}
	// Each step's copy held the host and its sync waited; each side copy
	// waited for the main stream through the event.
	kinds := map[timeline.WaitKind]int{}
	for _, w := range tl.Waits {
		kinds[w.Kind]++
	}
	if kinds[timeline.WaitHeld] != 16 || kinds[timeline.WaitStream] != 16 || len(tl.StreamWaits) != 2 {
		t.Errorf("waits %v and %d stream waits, want 16 held, 16 stream and 2", kinds, len(tl.StreamWaits))
	}
	if len(tl.Assumptions) != 0 {
		t.Errorf("assumptions on a complete capture: %+v", tl.Assumptions)
	}
}

// Copies made off the process's main thread (the thread of its ranges) are
// named per thread and API; a copy without a call of no host-device kind is
// a unified-memory migration.
func TestCopiesOffTheMainThreadAndMigrations(t *testing.T) {
	var c timelinetest.Capture
	c.Range(1, "step", 0, 1000)
	mine := c.Call(1, "cudaMemcpyAsync", 10, 20)
	c.Copy(mine, 7, htod, pinned, device, 1<<20, 30, 130)
	var xla []int64
	for k := range int64(3) {
		x := c.Call(5, "cuMemcpyHtoDAsync", 200+100*k, 210+100*k)
		c.Copy(x, 8, htod, pinned, device, 1<<20, 220+100*k, 290+100*k)
		xla = append(xla, x)
	}
	c.Copy(0, 9, vocab.CopyOther, vocab.MemUnknown, vocab.MemUnknown, 4096, 500, 510)
	c.Copy(0, 9, vocab.CopyOther, vocab.MemUnknown, vocab.MemUnknown, 4096, 520, 530)
	tl := build(t, &c, timeline.Options{NoHandoffs: true})
	for _, want := range []timeline.Assumption{
		{Kind: timeline.AssumeCopyThread, PID: 1, API: "cuMemcpyHtoDAsync", Event: -1, Stream: -1, TID: 5, Count: 3, Corr: xla[0]},
		{Kind: timeline.AssumeMigration, PID: 1, API: "copy", Event: -1, Stream: 9, Count: 2},
	} {
		if !slices.Contains(tl.Assumptions, want) {
			t.Errorf("assumptions %+v lack %+v", tl.Assumptions, want)
		}
	}
	for _, a := range tl.Assumptions {
		if a.Kind == timeline.AssumeCopyThread && a.TID == 1 || a.Kind == timeline.AssumeOpWithoutCall {
			t.Errorf("assumption %+v", a)
		}
	}
}

// TestRangeNameOnThreads: an NVTX name opened on several threads is a
// region per thread, numbered by each thread's first range of it; a name
// on one thread keeps its name.
func TestRangeNameOnThreads(t *testing.T) {
	var c timelinetest.Capture
	c.Call(1, "cudaLaunchKernel", 100, 110)
	c.Call(2, "cudaLaunchKernel", 100, 110)
	c.Range(2, "step", 40, 90) // thread 2 opens step first
	c.Range(1, "step", 50, 150)
	c.Range(2, "step", 160, 170)
	c.Range(1, "epoch", 0, 400)
	tl := build(t, &c, timeline.Options{})
	var got []string
	for _, r := range tl.Ranges {
		got = append(got, tl.Name(r.Name)+"@"+string(rune('0'+tl.Threads[r.Thread].TID)))
	}
	want := []string{"epoch@1", "step (thread 1)@2", "step (thread 2)@1", "step (thread 1)@2"}
	if !slices.Equal(got, want) {
		t.Errorf("ranges %q, want %q", got, want)
	}
	for _, c := range []struct {
		name string
		tid  int64
		want string
	}{{"step", 2, "step (thread 1)"}, {"step", 1, "step (thread 2)"}, {"step", 3, "step"}, {"epoch", 1, "epoch"}} {
		if got := tl.RangeOn(c.name, timelinetest.PID, c.tid); got != c.want {
			t.Errorf("RangeOn(%q, tid %d) = %q, want %q", c.name, c.tid, got, c.want)
		}
	}
	i := slices.IndexFunc(tl.Assumptions, func(a timeline.Assumption) bool { return a.Kind == timeline.AssumeRangeThreads })
	if i < 0 || tl.Assumptions[i].API != "step" || tl.Assumptions[i].Count != 2 {
		t.Errorf("assumptions %+v: want one range-on-threads for step, of 2 threads", tl.Assumptions)
	}
}
