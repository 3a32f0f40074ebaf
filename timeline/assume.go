package timeline

import (
	"cmp"
	"slices"
)

// AssumptionKind names one way a dependency could not be resolved, or one
// thing the timeline inferred rather than read.
type AssumptionKind string

// Assumption kinds. Each says what was assumed in its place.
const (
	// AssumeEventUnrecorded: a wait on an event no recording of which is in
	// the trace (no CUDA event records, or none before the wait). The wait
	// keeps its measured time and depends on no GPU work.
	AssumeEventUnrecorded AssumptionKind = "event-unrecorded"
	// AssumeEventRecordingUnmatched: a wait that names the recording it
	// waited for (its eventSyncId) where the trace holds no such recording
	// of the event before the wait (the recording is missing, or was made
	// while the wait ran). It is taken to wait for the event's last
	// recording before it.
	AssumeEventRecordingUnmatched AssumptionKind = "event-recording-unmatched"
	// AssumeSyncStreamUnknown: a stream synchronisation without its
	// synchronisation record, so without its stream. It is taken to wait
	// for the stream of its process whose work ended last before the call
	// did (Stream says which), or for nothing when none did.
	AssumeSyncStreamUnknown AssumptionKind = "sync-stream-unknown"
	// AssumeSyncDeviceAllStreams: a device or context synchronisation
	// without its record. It is taken to wait for every stream of its
	// process.
	AssumeSyncDeviceAllStreams AssumptionKind = "sync-device-all-streams"
	// AssumeEventGuessed: a host wait on an event (cudaEventSynchronize, a
	// polling run of cudaEventQuery) without its synchronisation record, so
	// without its event (CSV reports hold none): it is taken to wait, as a
	// device synchronisation does, for the last work launched before it on
	// each stream of its process that ended before it returned (work that
	// ended later it cannot have waited for).
	AssumeEventGuessed AssumptionKind = "event-guessed"
	// AssumeEventUnknown: an event synchronisation, query or stream wait
	// without its synchronisation record, so without its event. It keeps
	// its measured time and depends on no GPU work.
	AssumeEventUnknown AssumptionKind = "event-unknown"
	// AssumeStreamWaitNoWork: a stream made to wait for an event while no
	// later work of that stream, and no recording or synchronisation of it,
	// is in the trace: the wait binds nothing. (A wait followed by a
	// recording or synchronisation of its stream before the stream's next
	// op binds those: the event recorded stands for the awaited work too.)
	AssumeStreamWaitNoWork AssumptionKind = "stream-wait-no-later-work"
	// AssumeStreamKindsUnknown: a process with work on several streams
	// where the input does not say how some of them were made (no stream
	// list, as in CSV reports, or a stream of unknown kind): which is the
	// legacy default (NULL) stream, and which streams are ordered with it,
	// is unknown, and they are taken to be independent of one another
	// but for the events that join them. Count is how many of its streams
	// with work are of unknown kind.
	AssumeStreamKindsUnknown AssumptionKind = "stream-kinds-unknown"
	// AssumeOpWithoutCall: a GPU operation whose launching call is not in
	// the trace. It starts after its stream predecessor by its measured
	// delay, or at its measured time when first on its stream.
	AssumeOpWithoutCall AssumptionKind = "op-without-call"
	// AssumeMigration: a copy of no host-device kind without a call: a
	// unified-memory migration, which page faults start. It keeps its
	// measured start (after its stream predecessor by its measured delay)
	// and is no pinning candidate.
	AssumeMigration AssumptionKind = "unified-memory-migration"
	// AssumeCopyThread: host-device copies made by a thread other than the
	// process's main one (the thread of its NVTX ranges, else its first to
	// call CUDA): a framework's own thread, such as XLA's. What that thread
	// did outside CUDA calls — staging the data into pinned memory, say —
	// is not in the trace, so the replay cannot see what pinning at the
	// source saves there. One per thread (TID) and copy API.
	AssumeCopyThread AssumptionKind = "copy-off-main-thread"
	// AssumeEventRecordWithoutCall: an event recording whose call is not in
	// the trace, so whose time is unknown; it is left out, and waits on the
	// event look for another recording.
	AssumeEventRecordWithoutCall AssumptionKind = "event-record-without-call"
	// AssumeHandoff: a thread resumed soon after another thread of its
	// process made a call, after sitting idle; its start is taken to follow
	// that call (CPU hand-offs are not in a CUDA trace).
	AssumeHandoff AssumptionKind = "thread-handoff"
	// AssumeOverlappingCalls: a call that began before the previous call of
	// its thread ended (a nested call); it keeps its measured offset from
	// that call's start.
	AssumeOverlappingCalls AssumptionKind = "overlapping-calls"
	// AssumeOpenRange: an NVTX range never closed before the capture ended;
	// it is left out of the regions.
	AssumeOpenRange AssumptionKind = "open-range"
	// AssumeRangeThreads: an NVTX range name opened on several threads;
	// each thread's ranges are a region of their own, "NAME (thread K)",
	// K counting the threads from 1 in the order of their first range of
	// the name. API is the name, Count how many threads, PID the first
	// thread's process.
	AssumeRangeThreads AssumptionKind = "range-on-threads"
	// AssumeGraphWhole: a CUDA graph launch traced whole: it occupies its
	// stream for its measured time, and its copies are not re-costed.
	AssumeGraphWhole AssumptionKind = "graph-whole"
	// AssumeNoCost: a copy from pageable memory with no pinned cost for its
	// direction and size; it keeps its measured times (replay).
	AssumeNoCost AssumptionKind = "no-pinned-cost"
	// AssumeGraphCopy: a copy from pageable memory that a CUDA graph launch
	// made (a memcpy node, traced node by node): pinning its buffer changes
	// the graph, not a call the trace shows, so the what-if keeps it as
	// measured (replay).
	AssumeGraphCopy AssumptionKind = "graph-node-copy"
)

// Assumption is one kind of assumption for one process and API (or event,
// or stream), with how many times it was made.
type Assumption struct {
	Kind AssumptionKind
	PID  int64
	// API is the call the assumption is about, "" when none.
	API string
	// Event is the event id, -1 when none.
	Event int64
	// Stream is the stream id, -1 when none.
	Stream int64
	// TID is the thread the assumption is about, 0 when none.
	TID int64
	// Count is how many calls, ops or ranges it was made for.
	Count int
	// Corr is the correlation id of the first call it was made for, 0 when
	// none.
	Corr int64
}

type assumeKey struct {
	kind               AssumptionKind
	pid                int64
	api                string
	event, stream, tid int64
}

// assumptions gathers assumptions by kind, process, API, event and stream.
type assumptions struct {
	at   map[assumeKey]int
	list []Assumption
	// recent holds the keys added last and their entries in list (set
	// with at): a run of calls mostly repeats one assumption, or a few in
	// turn (the threads of a hand-off).
	recent recentKeys[assumeKey]
}

func (a *assumptions) add(kind AssumptionKind, pid int64, api string, event, stream, corr int64) {
	a.addThread(kind, pid, 0, api, event, stream, corr)
}

func (a *assumptions) addThread(kind AssumptionKind, pid, tid int64, api string, event, stream, corr int64) {
	k := assumeKey{kind, pid, api, event, stream, tid}
	if i, ok := a.recent.find(k); ok {
		a.list[i].Count++
		return
	}
	if a.at == nil {
		a.at = map[assumeKey]int{}
	}
	i, ok := a.at[k]
	if ok {
		a.list[i].Count++
	} else {
		i = len(a.list)
		a.at[k] = i
		a.list = append(a.list, Assumption{Kind: kind, PID: pid, API: api, Event: event, Stream: stream, TID: tid, Count: 1, Corr: corr})
	}
	a.recent.add(k, i)
}

// merge adds the assumptions o holds to a, each counted as often as o
// counted it (its first correlation id kept where a had none of its key).
func (a *assumptions) merge(o *assumptions) {
	for _, x := range o.list {
		k := assumeKey{x.Kind, x.PID, x.API, x.Event, x.Stream, x.TID}
		if i, ok := a.at[k]; ok {
			a.list[i].Count += x.Count
			continue
		}
		if a.at == nil {
			a.at = map[assumeKey]int{}
		}
		a.at[k] = len(a.list)
		a.list = append(a.list, x)
	}
}

// recentKeys holds the last few keys found and their indexes, each new one
// in place of the oldest: looked through before a map.
type recentKeys[K comparable] struct {
	keys      [8]K
	at        [8]int
	next, set int // where the next goes; how many are set
}

// find returns the index kept with k, false when k is not among them.
func (r *recentKeys[K]) find(k K) (int, bool) {
	for n := range r.set {
		if r.keys[n] == k {
			return r.at[n], true
		}
	}
	return 0, false
}

// add keeps k with index at, in place of the oldest key.
func (r *recentKeys[K]) add(k K, at int) {
	r.keys[r.next], r.at[r.next] = k, at
	r.next = (r.next + 1) % len(r.keys)
	r.set = min(r.set+1, len(r.keys))
}

// sorted returns the assumptions by kind, process, API, event, stream,
// thread.
func (a *assumptions) sorted() []Assumption {
	out := slices.Clone(a.list)
	SortAssumptions(out)
	return out
}

// SortAssumptions orders assumptions by kind, process, API, event, stream
// and thread.
func SortAssumptions(as []Assumption) {
	slices.SortFunc(as, func(x, y Assumption) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.PID, y.PID), cmp.Compare(x.API, y.API),
			cmp.Compare(x.Event, y.Event), cmp.Compare(x.Stream, y.Stream), cmp.Compare(x.TID, y.TID))
	})
}
