// Package timelinetest makes captures for testing the timeline and the
// replay: small ones written call by call (Capture), and a synthetic
// training loop of any size streamed straight into a records.Handler
// (Generate) for the benchmarks.
package timelinetest

import (
	"context"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// PID is the process every record of a Capture belongs to.
const PID = 1

// Capture is a small capture written record by record; every call gets the
// next correlation id.
type Capture struct {
	Ranges []records.Range
	Calls  []records.Call
	Ops    []records.Op
	Syncs  []records.Sync
	Events []records.EventRecord
	// Streams lists the streams with how they were made, where the test
	// says (StreamOf).
	Streams []records.Stream
	corr    int64
}

// StreamOf lists stream id as one of the given kind, in context 1.
func (c *Capture) StreamOf(id int64, kind records.StreamKind) {
	c.Streams = append(c.Streams, records.Stream{PID: PID, Context: 1, ID: id, Kind: kind})
}

// Call adds a successful API call on thread tid and returns its
// correlation id.
func (c *Capture) Call(tid int64, name string, start, end int64) int64 {
	return c.CallResult(tid, name, start, end, 0)
}

// CallResult adds an API call with a return value.
func (c *Capture) CallResult(tid int64, name string, start, end, result int64) int64 {
	c.corr++
	c.Calls = append(c.Calls, records.Call{Name: name, Start: start, End: end, Result: result, Corr: c.corr, PID: PID, TID: tid})
	return c.corr
}

// Kernel adds a kernel launched by call corr on stream.
func (c *Capture) Kernel(corr, stream, start, end int64) {
	c.Ops = append(c.Ops, records.Op{Kind: records.OpKernel, Start: start, End: end, Corr: corr, PID: PID, Stream: stream, Name: "k"})
}

// Launch adds a cudaLaunchKernel call on thread tid and the kernel it
// launched on stream, and returns the call's correlation id.
func (c *Capture) Launch(tid, start, end, stream, kernelStart, kernelEnd int64) int64 {
	corr := c.Call(tid, "cudaLaunchKernel", start, end)
	c.Kernel(corr, stream, kernelStart, kernelEnd)
	return corr
}

// Copy adds a copy launched by call corr on stream.
func (c *Capture) Copy(corr, stream int64, dir vocab.CopyKind, src, dst vocab.MemKind, bytes, start, end int64) {
	c.Ops = append(c.Ops, records.Op{Kind: records.OpCopy, Start: start, End: end, Corr: corr, PID: PID, Stream: stream,
		Bytes: bytes, Copy: dir, Src: src, Dst: dst})
}

// Sync adds the synchronisation record of call corr.
func (c *Capture) Sync(kind records.SyncKind, corr, stream, event, start, end int64) {
	c.Syncs = append(c.Syncs, records.Sync{Kind: kind, Start: start, End: end, Corr: corr, PID: PID, Stream: stream, Event: event})
}

// Record adds the recording of event on stream by call corr.
func (c *Capture) Record(corr, stream, event int64) {
	c.Events = append(c.Events, records.EventRecord{Corr: corr, PID: PID, Stream: stream, Event: event})
}

// Range adds a closed NVTX range on thread tid.
func (c *Capture) Range(tid int64, name string, start, end int64) {
	c.Ranges = append(c.Ranges, records.Range{Name: name, Start: start, End: end, PID: PID, TID: tid})
}

// Emit hands the capture to h in the order records.Handler documents.
func (c *Capture) Emit(h records.Handler) error {
	for i := range c.Ranges {
		if err := h.Range(&c.Ranges[i]); err != nil {
			return err
		}
	}
	for i := range c.Calls {
		if err := h.Call(&c.Calls[i]); err != nil {
			return err
		}
	}
	for i := range c.Ops {
		if err := h.Op(&c.Ops[i]); err != nil {
			return err
		}
	}
	for i := range c.Syncs {
		if err := h.Sync(&c.Syncs[i]); err != nil {
			return err
		}
	}
	for i := range c.Events {
		if err := h.Event(&c.Events[i]); err != nil {
			return err
		}
	}
	for i := range c.Streams {
		if err := h.Stream(&c.Streams[i]); err != nil {
			return err
		}
	}
	return nil
}

// Build builds the capture's timeline.
func (c *Capture) Build(ctx context.Context, opts timeline.Options) (*timeline.Timeline, error) {
	b := timeline.NewBuilder(ctx, opts)
	if err := c.Emit(b.Handler()); err != nil {
		return nil, err
	}
	return b.Finish()
}

// Shape is the synthetic training loop Generate writes, per step: a
// pageable host-to-device copy whose call holds the host, Kernels kernel
// launches on one stream, and a stream synchronisation, inside an NVTX
// "step" range; every SideEvery steps a second stream copies a result back
// after an event wait.
type Shape struct {
	Steps     int
	Kernels   int
	SideEvery int
}

// RecordsPerStep is how many records one step of the shape emits on
// average.
func (s Shape) RecordsPerStep() float64 {
	// range, copy call + op, kernels calls + ops, sync call + record;
	// side: record call + event, wait call + sync, copy call + op.
	n := 1 + 2 + 2*s.Kernels + 2
	if s.SideEvery > 0 {
		return float64(n) + 6/float64(s.SideEvery)
	}
	return float64(n)
}

// ShapeOf returns a shape of about n records with 10 kernels per step
// and a side copy every 8 steps.
func ShapeOf(n int) Shape {
	s := Shape{Kernels: 10, SideEvery: 8}
	s.Steps = int(float64(n) / s.RecordsPerStep())
	return s
}

// The loop's times (ns): a step every stepNs; the copy call holds the host
// copyCallNs while its copy runs copyGPUNs; a launch every launchNs; the
// kernels (kernelNs each) outrun their launches, so the step's stream
// synchronisation waits for them.
const (
	stepNs     = 200_000
	copyCallNs = 30_000
	copyGPUNs  = 25_000
	launchNs   = 5_000
	kernelNs   = 8_000
	mainStream = 7
	sideStream = 13
)

// step is one step's layout.
type step struct {
	t0, copyOpStart, syncStart, syncEnd, rangeEnd int64
	kernelStart                                   []int64
	side                                          bool
	sideAt, sideOpStart                           int64
}

func (s Shape) layout(i int, st *step) {
	st.t0 = int64(i) * stepNs
	st.copyOpStart = st.t0 + copyCallNs - copyGPUNs + 2_000
	end := st.copyOpStart + copyGPUNs
	st.kernelStart = st.kernelStart[:0]
	for k := range s.Kernels {
		at := max(st.t0+copyCallNs+int64(k)*launchNs+2_000, end)
		st.kernelStart = append(st.kernelStart, at)
		end = at + kernelNs
	}
	st.sideAt = st.t0 + copyCallNs + int64(s.Kernels)*launchNs
	st.side = s.SideEvery > 0 && i%s.SideEvery == s.SideEvery-1
	if st.side {
		st.sideOpStart = max(end, st.sideAt+8_000)
		end = st.sideOpStart + 2_000
	}
	st.syncStart = st.sideAt + 2*launchNs
	st.syncEnd = max(end, st.syncStart) + 1_000
	st.rangeEnd = st.syncEnd + 5_000
}

// Generate streams the shape's records into h, one kind after another as
// records.Handler documents, without holding them.
func Generate(h records.Handler, s Shape) error {
	var st step
	each := func(fn func(i int) error) error {
		for i := range s.Steps {
			s.layout(i, &st)
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	corr := func(i, k int) int64 { return int64(i)*int64(s.Kernels+8) + int64(k) + 1 }
	var r records.Range
	var c records.Call
	var o records.Op
	var y records.Sync
	var e records.EventRecord
	call := func(name string, id int64, start, end int64) error {
		c = records.Call{Name: name, Start: start, End: end, Corr: id, PID: PID, TID: 1}
		return h.Call(&c)
	}
	passes := []struct {
		want bool
		fn   func(i int) error
	}{
		{h.Range != nil, func(i int) error {
			r = records.Range{Name: "step", Start: st.t0, End: st.rangeEnd, PID: PID, TID: 1}
			return h.Range(&r)
		}},
		{h.Call != nil, func(i int) error {
			if err := call("cudaMemcpyAsync", corr(i, 0), st.t0, st.t0+copyCallNs); err != nil {
				return err
			}
			for k := range s.Kernels {
				at := st.t0 + copyCallNs + int64(k)*launchNs
				if err := call("cudaLaunchKernel", corr(i, 1+k), at, at+launchNs/2); err != nil {
					return err
				}
			}
			if st.side {
				if err := call("cudaEventRecord", corr(i, s.Kernels+1), st.sideAt, st.sideAt+1_000); err != nil {
					return err
				}
				if err := call("cudaStreamWaitEvent", corr(i, s.Kernels+2), st.sideAt+2_000, st.sideAt+3_000); err != nil {
					return err
				}
				if err := call("cudaMemcpyAsync", corr(i, s.Kernels+3), st.sideAt+4_000, st.sideAt+6_000); err != nil {
					return err
				}
			}
			return call("cudaStreamSynchronize", corr(i, s.Kernels+4), st.syncStart, st.syncEnd)
		}},
		{h.Op != nil, func(i int) error {
			o = records.Op{Kind: records.OpCopy, Start: st.copyOpStart, End: st.copyOpStart + copyGPUNs, Corr: corr(i, 0), PID: PID,
				Stream: mainStream, Bytes: 1 << 20, Copy: vocab.CopyHtoD, Src: vocab.MemPageable, Dst: vocab.MemDevice}
			if err := h.Op(&o); err != nil {
				return err
			}
			for k, at := range st.kernelStart {
				o = records.Op{Kind: records.OpKernel, Start: at, End: at + kernelNs, Corr: corr(i, 1+k), PID: PID,
					Stream: mainStream, Name: "step_kernel"}
				if err := h.Op(&o); err != nil {
					return err
				}
			}
			if !st.side {
				return nil
			}
			o = records.Op{Kind: records.OpCopy, Start: st.sideOpStart, End: st.sideOpStart + 2_000, Corr: corr(i, s.Kernels+3), PID: PID,
				Stream: sideStream, Bytes: 4 << 10, Copy: vocab.CopyDtoH, Src: vocab.MemDevice, Dst: vocab.MemPinned}
			return h.Op(&o)
		}},
		{h.Sync != nil, func(i int) error {
			if st.side {
				y = records.Sync{Kind: records.SyncStreamWait, Start: st.sideAt + 2_000, End: st.sideAt + 3_000,
					Corr: corr(i, s.Kernels+2), PID: PID, Stream: sideStream, Event: 1}
				if err := h.Sync(&y); err != nil {
					return err
				}
			}
			y = records.Sync{Kind: records.SyncStream, Start: st.syncStart, End: st.syncEnd, Corr: corr(i, s.Kernels+4), PID: PID,
				Stream: mainStream, Event: records.NoID}
			return h.Sync(&y)
		}},
		{h.Event != nil, func(i int) error {
			if !st.side {
				return nil
			}
			e = records.EventRecord{Corr: corr(i, s.Kernels+1), PID: PID, Stream: mainStream, Event: 1}
			return h.Event(&e)
		}},
	}
	for _, p := range passes {
		if p.want {
			if err := each(p.fn); err != nil {
				return err
			}
		}
	}
	if h.Stream == nil {
		return nil
	}
	// The loop's stream is the NULL stream, its side stream a non-blocking
	// one, as PyTorch makes them.
	for _, l := range []records.Stream{{PID: PID, Context: 1, ID: mainStream, Kind: records.StreamNull},
		{PID: PID, Context: 1, ID: sideStream, Kind: records.StreamNonBlocking}} {
		if err := h.Stream(&l); err != nil {
			return err
		}
	}
	return nil
}
