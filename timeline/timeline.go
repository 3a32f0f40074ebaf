// Package timeline builds a compact timeline of a capture from its typed
// records: the API calls of every host thread in order, the GPU operations
// of every stream in order, each tied to the call that launched it, and
// the dependencies the capture records between them — stream order, host
// waits (stream, device and event synchronisation, blocking copies, copies
// from pageable memory that held their thread), cross-stream event waits,
// event-query polling — with the copy engines as a shared resource. Where
// a dependency cannot be resolved the timeline says which and what it
// assumed (Assumptions).
//
// A Builder is a records.Handler consumer; Finish sorts what it kept into
// struct-of-arrays with interned names and int32 indexes, so a capture of a
// million records fits in a few tens of MiB. The replay package simulates
// the result.
package timeline

import (
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// None marks an absent index (a call, an op, a thread, a name).
const None int32 = -1

// Timeline is a capture's calls, GPU operations, NVTX ranges and the
// dependencies between them. Its slices are read-only once built.
type Timeline struct {
	// Names holds every interned string: API names, kernel names, thread
	// names, range names.
	Names []string
	// Roles holds the role of each of Names, as RoleOf tells it.
	Roles []Role
	// Threads are the host threads that made calls or pushed ranges, in
	// (pid, tid) order; each owns a contiguous run of Calls.
	Threads []Thread
	// Streams are the GPU streams that ran operations, in (pid, device,
	// stream) order; each owns a contiguous run of Ops.
	Streams []Stream
	// Calls are grouped by thread and in start order within a thread.
	Calls Calls
	// Ops are grouped by stream and in start order within a stream.
	Ops Ops
	// CallOps lists the ops each call launched: call i's ops are
	// CallOpList[CallOpStart[i]:CallOpStart[i+1]].
	CallOpStart []int32
	CallOpList  []int32
	// ByStart lists every call in (pid, start) order, for finding the
	// calls of a process inside a time window.
	ByStart []int32
	// Waits are the calls whose end waits for GPU work, in call order.
	Waits []Wait
	// Handoffs are calls whose start follows another thread's call, in
	// call order (inferred; see Options.Handoffs).
	Handoffs []Handoff
	// StreamWaits are ops that wait for another stream's work, through an
	// event or the legacy default stream's order, in op order.
	StreamWaits []StreamWait
	// Ranges are the NVTX ranges that were closed, in start order.
	Ranges []Range
	// Engines are the copy engines per device and direction.
	Engines []Engine
	// Assumptions say where a dependency could not be resolved and what
	// was assumed instead.
	Assumptions []Assumption
	// Gaps are the facts the input said it cannot provide.
	Gaps []records.Gap
	// Unresolved are the waits on an event no recording of which is in
	// the trace before them (AssumeEventUnrecorded), in call order: the
	// replay takes each to wait for no GPU work, which the capture does
	// not say, so what is replayed across one rests on a guess.
	Unresolved []int32
	// Unnamed are the waits on an event without the synchronisation
	// record that names the event (AssumeEventUnknown), in call order:
	// each is replayed as waiting for no GPU work. CSV reports hold no
	// such record at all; an SQLite export that lacks one lost it.
	Unnamed []int32
	// Unmatched are the waits whose synchronisation record names a
	// recording of their event (its eventSyncId) the trace does not hold
	// before them (AssumeEventRecordingUnmatched), in call order: each is
	// replayed as waiting for the event's last recording before it, a
	// guess where the trace lost the one named.
	Unmatched []int32
	// EventRecords counts the CUDA event recordings the input held
	// (CUPTI_ACTIVITY_KIND_CUDA_EVENT's rows): 0 where the export has no
	// such table, or an empty one.
	EventRecords int
	// SplitRanges are the NVTX range names opened on several threads, each
	// with its threads in the order of their first range of it: the ranges
	// of each thread are named apart (RangeOn), and Ranges holds those
	// names.
	SplitRanges map[string][]int32
}

// Thread is one host thread.
type Thread struct {
	PID, TID int64
	Name     int32 // into Names, None when the input names none
	// Calls of the thread are Calls[First:Last].
	First, Last int32
}

// Stream is one GPU stream.
type Stream struct {
	PID, Device, ID int64
	// Context and Kind are the stream's context and how it was made, where
	// the input lists its streams (records.Stream); Kind is
	// records.StreamKindUnknown otherwise.
	Context int64
	Kind    records.StreamKind
	// Ops of the stream are Ops[First:Last].
	First, Last int32
}

// Calls holds the API calls as struct-of-arrays.
type Calls struct {
	Start, End []int64
	Corr       []int64
	Name       []int32 // into Names
	Thread     []int32 // into Threads
	Result     []int32 // the call's return value (0 success)
}

// Len is the number of calls.
func (c *Calls) Len() int { return len(c.Start) }

// Duration is call i's measured duration in nanoseconds.
func (c *Calls) Duration(i int32) int64 { return c.End[i] - c.Start[i] }

// OpKind says what a GPU operation does.
type OpKind uint8

// GPU operation kinds: records' own, and OpGraph, a whole CUDA graph
// launch traced as one.
const (
	OpCopy   = OpKind(records.OpCopy)
	OpKernel = OpKind(records.OpKernel)
	OpMemset = OpKind(records.OpMemset)
	OpGraph  = OpMemset + 1
)

// String names the kind.
func (k OpKind) String() string {
	if k == OpGraph {
		return "graph"
	}
	return records.OpKind(k).String()
}

// Ops holds the GPU operations as struct-of-arrays.
type Ops struct {
	Kind       []OpKind
	Start, End []int64
	Bytes      []int64
	Corr       []int64
	Stream     []int32 // into Streams
	Call       []int32 // the launching call, None when the trace holds none
	Name       []int32 // a kernel's short name, None otherwise
	Dir        []Dir   // a copy's direction
	Src, Dst   []Mem   // a copy's memory kinds
}

// Len is the number of ops.
func (o *Ops) Len() int { return len(o.Start) }

// Duration is op j's measured GPU duration in nanoseconds.
func (o *Ops) Duration(j int32) int64 { return o.End[j] - o.Start[j] }

// HostMem is the memory kind of a copy's host side: the source of a
// host-to-device copy, the destination of a device-to-host one, MemNone
// for any other op.
func (o *Ops) HostMem(j int32) Mem {
	if o.Kind[j] != OpCopy {
		return MemNone
	}
	switch o.Dir[j] {
	case DirHtoD:
		return o.Src[j]
	case DirDtoH:
		return o.Dst[j]
	}
	return MemNone
}

// Pageable reports whether op j is a host-device copy whose host side is
// pageable memory: the copies pinning would change.
func (o *Ops) Pageable(j int32) bool { return o.HostMem(j) == MemPageable }

// Dir is a copy's direction in one byte.
type Dir uint8

// Directions, in vocab's words through Kind.
const (
	DirNone Dir = iota
	DirHtoD
	DirDtoH
	DirDtoD
	DirHtoH
	DirPtoP
	DirOther
)

var dirKinds = [...]vocab.CopyKind{DirNone: vocab.CopyUnknown, DirHtoD: vocab.CopyHtoD, DirDtoH: vocab.CopyDtoH,
	DirDtoD: vocab.CopyDtoD, DirHtoH: vocab.CopyHtoH, DirPtoP: vocab.CopyPtoP, DirOther: vocab.CopyOther}

// Kind is the direction in vocab's words.
func (d Dir) Kind() vocab.CopyKind { return wordOf(dirKinds[:], d, vocab.CopyUnknown) }

// DirOf returns the one-byte form of a copy kind.
func DirOf(k vocab.CopyKind) Dir { return codeOf(dirKinds[1:], k, DirNone, 1) }

// HostDevice reports whether the direction crosses the host-device link.
func (d Dir) HostDevice() bool { return d == DirHtoD || d == DirDtoH }

// Mem is a memory kind in one byte.
type Mem uint8

// Memory kinds, in vocab's words through Kind.
const (
	MemUnknown Mem = iota
	MemPageable
	MemPinned
	MemDevice
	MemArray
	MemManaged
	MemNone
)

var memKinds = [...]vocab.MemKind{MemUnknown: vocab.MemUnknown, MemPageable: vocab.MemPageable, MemPinned: vocab.MemPinned,
	MemDevice: vocab.MemDevice, MemArray: vocab.MemArray, MemManaged: vocab.MemManaged, MemNone: vocab.MemNone}

// Kind is the memory kind in vocab's words.
func (m Mem) Kind() vocab.MemKind { return wordOf(memKinds[:], m, vocab.MemUnknown) }

// MemOf returns the one-byte form of a memory kind.
func MemOf(k vocab.MemKind) Mem { return codeOf(memKinds[:], k, MemUnknown, 0) }

// wordOf is the word of a one-byte code in its table, or none.
func wordOf[W any, C ~uint8](table []W, c C, none W) W {
	if int(c) < len(table) {
		return table[c]
	}
	return none
}

// codeOf is the code of a word in its table (whose first entry has code
// first), or none.
func codeOf[W comparable, C ~uint8](table []W, w W, none C, first int) C {
	for i, v := range table {
		if v == w {
			return C(i + first)
		}
	}
	return none
}

// WaitKind says what a waiting call waited for.
type WaitKind uint8

// Wait kinds.
const (
	// WaitCopy: a blocking copy (cudaMemcpy, cuMemcpyHtoD, ...) holds its
	// thread until its copy ends.
	WaitCopy WaitKind = iota + 1
	// WaitHeld: an async copy from or to pageable memory held its thread
	// until near its copy's end.
	WaitHeld
	// WaitStream: cudaStreamSynchronize, cuStreamSynchronize.
	WaitStream
	// WaitDevice: cudaDeviceSynchronize, cuCtxSynchronize.
	WaitDevice
	// WaitEvent: cudaEventSynchronize, cuEventSynchronize.
	WaitEvent
	// WaitPoll: the successful cudaEventQuery ending a run of not-ready
	// queries of its thread, which began at PollFirst.
	WaitPoll
)

// String names the kind.
func (k WaitKind) String() string {
	switch k {
	case WaitCopy:
		return "blocking-copy"
	case WaitHeld:
		return "held-copy"
	case WaitStream:
		return "stream-sync"
	case WaitDevice:
		return "device-sync"
	case WaitEvent:
		return "event-sync"
	case WaitPoll:
		return "event-poll"
	}
	return "unknown"
}

// Wait is one call whose end (for WaitPoll: whose start) waits for GPU
// work: the latest end of the ops On.
type Wait struct {
	Call int32
	Kind WaitKind
	On   []int32
	// PollFirst is the first query of a WaitPoll run, None otherwise.
	PollFirst int32
}

// Handoff is a call whose start is taken to follow another thread's call
// in its process: the thread sat idle and resumed soon after From ended
// (CPU hand-offs are not in a CUDA trace; see Options.Handoffs).
type Handoff struct {
	Call, From int32
}

// StreamWait is an op that waits for an op On of another stream: through
// cudaStreamWaitEvent, for the work an event recorded there, or by the
// order of the legacy default (NULL) stream against the blocking streams
// of its context (Implicit).
type StreamWait struct {
	Op, On int32
	// Implicit marks an order no call asked for: the NULL stream's.
	Implicit bool
}

// Range is one closed NVTX range instance.
type Range struct {
	Name       int32 // into Names
	Thread     int32 // into Threads
	Start, End int64
	// StartAt and EndAt tie the range's push and pop to its thread's calls,
	// so that a replay moves them with the thread.
	StartAt, EndAt Anchor
}

// Anchor ties a host-side mark to a call of its thread: the mark lies a
// fixed time after the call's end (After) or before its start. A mark on a
// thread without calls has Call None and keeps its measured time.
type Anchor struct {
	Call  int32
	After bool
}

// Engine is the copy engines of one device and direction: at most Capacity
// copies of that direction run at once (the most seen overlapping in the
// capture, at least 1).
type Engine struct {
	Device   int64
	Dir      Dir
	Capacity int
}

// Name returns interned string i, "" for None.
func (t *Timeline) Name(i int32) string {
	if i < 0 || int(i) >= len(t.Names) {
		return ""
	}
	return t.Names[i]
}

// CallRole is call i's role as its name tells it (RoleOf).
func (t *Timeline) CallRole(i int32) Role {
	if n := t.Calls.Name[i]; n >= 0 && int(n) < len(t.Roles) {
		return t.Roles[n]
	}
	return RoleOf(t.Name(t.Calls.Name[i]))
}

// PID is the process of call i.
func (t *Timeline) PID(call int32) int64 { return t.Threads[t.Calls.Thread[call]].PID }

// OpsOf returns the ops call i launched.
func (t *Timeline) OpsOf(call int32) []int32 {
	return t.CallOpList[t.CallOpStart[call]:t.CallOpStart[call+1]]
}

// EngineOf returns the index in Engines of the copy engines op j uses, -1
// for an op that uses none (kernels, memsets, copies within a side).
func (t *Timeline) EngineOf(j int32) int {
	if t.Ops.Kind[j] != OpCopy || !t.Ops.Dir[j].HostDevice() {
		return -1
	}
	dev := t.Streams[t.Ops.Stream[j]].Device
	for e := range t.Engines {
		if t.Engines[e].Device == dev && t.Engines[e].Dir == t.Ops.Dir[j] {
			return e
		}
	}
	return -1
}
