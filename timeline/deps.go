package timeline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/nsyscheck/nsyscheck/internal/cursor"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// NotReady is the return value of an event query that found its event not
// yet complete (cudaErrorNotReady, CUDA_ERROR_NOT_READY).
const NotReady = 600

// Hand-off inference: a thread that sat idle at least HandoffMinIdleNs
// between two calls, and resumed within HandoffMaxWakeShare of that idle
// time after another thread of its process ended a call, is taken to have
// been woken by that thread.
const (
	HandoffMinIdleNs    = 50_000
	HandoffMaxWakeShare = 0.5
)

// resolver ties the records to one another once the builder has sorted
// them: ops to calls, syncs to calls, waits, events, hand-offs, ranges,
// copy engines.
type resolver struct {
	t *Timeline
	b *Builder
	// opsBuf holds the ops of the wait waitOf is making, copied out by
	// its add.
	opsBuf []int32
	// fault is the first refusal found (a MismatchError, EventLinkError or
	// DuplicateSyncError: records that contradict one another); run stops
	// on it.
	fault error
	// byCorr lists calls in (pid, correlation id) order, corrKeys their
	// correlation ids in that order (searched without a look-up per
	// step); corrOf holds the last process looked up and its run there,
	// and where in it the last id was found (at, -1 before one was).
	byCorr   []int32
	corrKeys []int64
	corrOf   struct {
		pid      int64
		calls    []int32
		corrKeys []int64
		at       int
	}
	// launchMax is, per op, the latest launch time (its call's start, or
	// its own start without a call) of its stream up to it.
	launchMax []int64
	// streamOf finds a stream by (pid, device, id); pidStreams holds the
	// streams of each process as [lo, hi) into Streams.
	streamOf   map[[3]int64]int32
	pidStreams map[int64][2]int32
	// syncOf is the synchronisation record of each call that has one.
	syncOf map[int32]*records.Sync
	// recordsOf lists the event recordings each call made.
	recordsOf map[int32][]*records.EventRecord
	// recorded lists, per (pid, event), its recordings in time order.
	recorded map[[2]int64][]recording
	// bySeq finds a recording by (pid, eventSyncId), for the waits that
	// name the one they waited for.
	bySeq map[[2]int64]seqRecording
	// pending lists, per stream, the cross-stream waits made on it, for the
	// work recorded or synchronised on it before its next op.
	pending map[int32][]pendingWait
	// nullOf is, per stream, the NULL stream of its context where it is a
	// blocking stream beside one (legacyOrder), None otherwise; nil where
	// no context has both.
	nullOf []int32
}

type recording struct {
	at  int64   // the recording call's start
	seq int64   // its eventSyncId, 0 unknown
	ops []int32 // the work it stands for: its stream's last op before it and the stream's pending waits
}

// seqRecording is what a wait naming a recording by its eventSyncId is
// held against: the event recorded, its call and that call's start.
type seqRecording struct {
	event int64
	call  int32
	at    int64
}

// pendingWait is a cudaStreamWaitEvent made at time at on a stream whose
// next op was launched at until (math.MaxInt64 for none): until then,
// work recorded or synchronised on the stream includes the awaited ops.
type pendingWait struct {
	at, until int64
	ops       []int32
	// call made the wait on event; used says whether a recording or
	// synchronisation of its stream took it in.
	call  int32
	event int64
	used  bool
}

func newResolver(t *Timeline, b *Builder) *resolver {
	return &resolver{t: t, b: b}
}

func (r *resolver) run(ctx context.Context) error {
	steps := []func(){r.joinOps, r.index, r.legacyOrder, r.tieSyncs, r.tieEvents, r.streamWaits}
	for _, step := range steps {
		step()
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("building the timeline: %w", err)
		}
		if r.fault != nil {
			return r.fault
		}
	}
	if err := r.waits(ctx); err != nil {
		return err
	}
	if r.fault != nil {
		return r.fault
	}
	r.ranges()
	r.engines()
	r.copyThreads()
	return nil
}

// copyThreads notes the host-device copies each process made from a
// thread other than its main one: the thread of its NVTX ranges (the one
// with most, if several), else the thread whose first call came first.
func (r *resolver) copyThreads() {
	t := r.t
	ranges := make([]int, len(t.Threads))
	for _, rg := range t.Ranges {
		ranges[rg.Thread]++
	}
	firstCall := func(th int32) int64 {
		if thr := t.Threads[th]; thr.Last > thr.First {
			return t.Calls.Start[thr.First]
		}
		return math.MaxInt64
	}
	main := map[int64]int32{}
	for th := range t.Threads {
		th := int32(th)
		m, ok := main[t.Threads[th].PID]
		if !ok || cmp.Or(cmp.Compare(ranges[th], ranges[m]), cmp.Compare(firstCall(m), firstCall(th))) > 0 {
			main[t.Threads[th].PID] = th
		}
	}
	o := &t.Ops
	for j := range o.Kind {
		c := o.Call[j]
		if c == None || o.Kind[j] != OpCopy || !o.Dir[j].HostDevice() {
			continue
		}
		th := t.Calls.Thread[c]
		if thr := t.Threads[th]; main[thr.PID] != th {
			r.b.assumed.addThread(AssumeCopyThread, thr.PID, thr.TID, t.Name(t.Calls.Name[c]), records.NoID, records.NoID, t.Calls.Corr[c])
		}
	}
}

// joinOps ties each op to its launching call by (pid, correlation id) and
// builds the call → ops lists.
func (r *resolver) joinOps() {
	t := r.t
	cs := &t.Calls
	n := cs.Len()
	r.byCorr = sortedPerProcess(t, cs.Corr)
	r.corrKeys = make([]int64, n)
	for k, c := range r.byCorr {
		r.corrKeys[k] = cs.Corr[c]
	}
	o := &t.Ops
	o.Call = make([]int32, o.Len())
	counts := make([]int32, n+1)
	for j := range o.Call {
		s := t.Streams[o.Stream[j]]
		c := r.callByCorr(s.PID, o.Corr[j])
		o.Call[j] = c
		if c != None && o.Kind[j] == OpKernel && nsysdb.IsCopyAPI(t.Name(cs.Name[c])) {
			r.mismatched(fmt.Sprintf("the kernel %q", t.Name(o.Name[j])), s.PID, o.Corr[j], t.Name(cs.Name[c]), "and that call launches no kernel")
		}
		if c == None {
			kind := AssumeOpWithoutCall
			if o.Kind[j] == OpCopy && o.Dir[j] == DirOther {
				kind = AssumeMigration
			}
			r.b.assumed.add(kind, s.PID, o.Kind[j].String(), records.NoID, s.ID, o.Corr[j])
			continue
		}
		counts[c+1]++
	}
	for i := 1; i <= n; i++ {
		counts[i] += counts[i-1]
	}
	t.CallOpStart = counts
	t.CallOpList = make([]int32, counts[n])
	fill := slices.Clone(counts[:n])
	for j, c := range o.Call {
		if c != None {
			t.CallOpList[fill[c]] = int32(j)
			fill[c]++
		}
	}
}

// kernelLaunch says whether an API launches a kernel alone
// (cudaLaunchKernel, cuLaunchKernel and their forms): not a graph launch,
// whose nodes may record events and wait.
func kernelLaunch(api string) bool {
	return nsysdb.IsLaunchAPI(api) && !nsysdb.IsGraphLaunch(api)
}

// MismatchError says that a record's correlation id ties it to a call of
// a kind that makes no such record: a kernel to a copy call, a
// synchronisation or an event recording to a kernel launch. The records
// of two calls share one id, as in a damaged or edited export; the
// replay would follow dependencies that are not the program's.
type MismatchError struct {
	What string // the record, e.g. "kernel scaleCopy"
	PID  int64
	Corr int64
	// API is the call the id names; Why what that call cannot make.
	API, Why string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s of process %d has correlation id %d, the id of a %s call, %s: records of two calls share one id "+
		"(a damaged or edited export; export the report again)", e.What, e.PID, e.Corr, e.API, e.Why)
}

// DuplicateSyncError is a synchronisation record written twice: two
// records of one process alike in kind, device, stream, event, start and
// end, which nsys never writes (each wait is one record).
type DuplicateSyncError struct {
	Sync      records.Sync // the second record
	FirstCorr int64        // the first one's correlation id
}

func (e *DuplicateSyncError) Error() string {
	s := e.Sync
	return fmt.Sprintf("the synchronisation records of process %d by correlation ids %d and %d are one record twice "+
		"(kind %s, device %d, stream %d, event %d, from %d to %d ns): a record written twice "+
		"(a damaged or edited export; export the report again)", s.PID, e.FirstCorr, s.Corr, s.Kind, s.Device, s.Stream, s.Event, s.Start, s.End)
}

// EventLinkError is a recording, or a wait on one, whose eventSyncId
// contradicts the trace: two recordings sharing one, or a wait naming a
// recording of another event or one made after the wait returned.
type EventLinkError struct {
	PID, Corr  int64 // the record's process and its call's correlation id
	API        string
	Event, Seq int64 // the event and the eventSyncId named
	Wait       bool  // a wait (else a recording)
	Why        string
}

func (e *EventLinkError) Error() string {
	what := fmt.Sprintf("the recording of event %d of process %d by correlation id %d has eventSyncId %d", e.Event, e.PID, e.Corr, e.Seq)
	if e.Wait {
		what = fmt.Sprintf("the %s of process %d (correlation id %d) waits on event %d by eventSyncId %d", e.API, e.PID, e.Corr, e.Event, e.Seq)
	}
	return what + ", " + e.Why + " (a damaged or edited export; export the report again)"
}

// refuse keeps err, where it is the first refusal found; run stops on
// it.
func (r *resolver) refuse(err error) {
	if r.fault == nil {
		r.fault = err
	}
}

// mismatched refuses the timeline with a MismatchError.
func (r *resolver) mismatched(what string, pid, corr int64, api, why string) {
	r.refuse(&MismatchError{What: what, PID: pid, Corr: corr, API: api, Why: why})
}

// sortedPerProcess returns the calls in (pid, key, call) order, key
// indexed like the calls (their correlation ids, starts or ends). The
// calls of one process are one run of indices (threads are in (pid, tid)
// order and calls in thread order), and in each thread the keys mostly
// rise already, so each process is sorted alone by a merge of its rising
// runs, without a comparison that looks up each call's process. Where the
// processes are not in runs it sorts with that comparison.
func sortedPerProcess(t *Timeline, key []int64) []int32 {
	calls := identity(len(key))
	if !inProcessRuns(t) {
		slices.SortFunc(calls, func(x, y int32) int {
			return cmp.Or(cmp.Compare(t.PID(x), t.PID(y)), cmp.Compare(key[x], key[y]), cmp.Compare(x, y))
		})
		return calls
	}
	buf := make([]int32, len(calls))
	for lo := 0; lo < len(calls); {
		hi := lo + 1
		for hi < len(calls) && t.PID(int32(hi)) == t.PID(int32(lo)) {
			hi++
		}
		mergeRuns(calls[lo:hi], buf[lo:hi], key)
		lo = hi
	}
	return calls
}

// mergeRuns sorts calls, increasing indices on entry, by (key, call): it
// merges the runs in which the keys do not fall, neighbours pairwise, until
// one is left. A merge takes the left run's call on equal keys, and the
// left run's calls are the lower indices, so ties stay in call order.
func mergeRuns(calls, buf []int32, key []int64) {
	var ends []int // where each run ends
	for i := 1; i <= len(calls); i++ {
		if i == len(calls) || key[calls[i]] < key[calls[i-1]] {
			ends = append(ends, i)
		}
	}
	src, dst := calls, buf
	for len(ends) > 1 {
		merged := ends[:0]
		lo := 0
		for r := 0; r < len(ends); r += 2 {
			if r+1 == len(ends) {
				copy(dst[lo:ends[r]], src[lo:ends[r]])
				merged = append(merged, ends[r])
				break
			}
			mid, hi := ends[r], ends[r+1]
			a, b, k := lo, mid, lo
			for a < mid && b < hi {
				if key[src[b]] < key[src[a]] {
					dst[k] = src[b]
					b++
				} else {
					dst[k] = src[a]
					a++
				}
				k++
			}
			k += copy(dst[k:], src[a:mid])
			copy(dst[k:], src[b:hi])
			merged = append(merged, hi)
			lo = hi
		}
		ends = merged
		src, dst = dst, src
	}
	if len(calls) > 0 && &src[0] != &calls[0] {
		copy(calls, src)
	}
}

// inProcessRuns says whether the calls of each process are one run of
// indices, the processes in increasing pid.
func inProcessRuns(t *Timeline) bool {
	for i := 1; i < len(t.Calls.Thread); i++ {
		if t.PID(int32(i)) < t.PID(int32(i-1)) {
			return false
		}
	}
	return true
}

// callByCorr finds the call of process pid with correlation id corr.
func (r *resolver) callByCorr(pid, corr int64) int32 {
	t := r.t
	if r.corrOf.calls == nil || r.corrOf.pid != pid {
		lo, hi := runOfPID(t, r.byCorr, pid)
		r.corrOf.pid, r.corrOf.calls, r.corrOf.corrKeys, r.corrOf.at = pid, r.byCorr[lo:hi], r.corrKeys[lo:hi], -1
	}
	// A stream's ops come in the order of their calls' ids, with a few
	// other calls between two: the first of the next few ids after the
	// last found that is corr, and follows a smaller one, is where the
	// search would find it.
	keys := r.corrOf.corrKeys
	if at := r.corrOf.at; at >= 0 {
		for i := at + 1; i < len(keys) && i <= at+corrProbes; i++ {
			if keys[i] == corr && keys[i-1] < corr {
				r.corrOf.at = i
				return r.corrOf.calls[i]
			}
		}
	}
	if i, ok := slices.BinarySearch(keys, corr); ok {
		r.corrOf.at = i
		return r.corrOf.calls[i]
	}
	return None
}

// corrProbes is how many ids after the last one found callByCorr looks at
// before it searches.
const corrProbes = 4

// index builds the roles, the calls in start order, the streams per
// process and the launch times per stream.
func (r *resolver) index() {
	t := r.t
	t.Roles = make([]Role, len(t.Names))
	for i, n := range t.Names {
		t.Roles[i] = RoleOf(n)
	}
	cs := &t.Calls
	t.ByStart = sortedPerProcess(t, cs.Start)
	r.streamOf = make(map[[3]int64]int32, len(t.Streams))
	r.pidStreams = map[int64][2]int32{}
	for i, s := range t.Streams {
		r.streamOf[[3]int64{s.PID, s.Device, s.ID}] = int32(i)
		span, ok := r.pidStreams[s.PID]
		if !ok {
			span[0] = int32(i)
		}
		span[1] = int32(i + 1)
		r.pidStreams[s.PID] = span
	}
	o := &t.Ops
	r.launchMax = make([]int64, o.Len())
	for _, s := range t.Streams {
		var m int64
		for j := s.First; j < s.Last; j++ {
			at := o.Start[j]
			if c := o.Call[j]; c != None {
				at = cs.Start[c]
			}
			if j == s.First || at > m {
				m = at
			}
			r.launchMax[j] = m
		}
	}
}

// lastLaunched returns the last op of stream s launched before time at,
// None when there is none.
func (r *resolver) lastLaunched(s int32, at int64) int32 {
	st := r.t.Streams[s]
	lm := r.launchMax[st.First:st.Last]
	k := sort.Search(len(lm), func(k int) bool { return lm[k] >= at })
	if k == 0 {
		return None
	}
	return st.First + int32(k) - 1
}

// launchOf is when op j was launched: its call's start, or its own start
// without a call.
func (r *resolver) launchOf(j int32) int64 {
	if c := r.t.Ops.Call[j]; c != None {
		return r.t.Calls.Start[c]
	}
	return r.t.Ops.Start[j]
}

// legacyOrder adds the order of each context's legacy default (NULL)
// stream against its blocking streams (CUDA's legacy default stream): an
// op on the NULL stream waits for the work launched before it on every
// blocking stream of its context, and an op on a blocking stream waits
// for the NULL stream's work launched before it. Non-blocking streams are
// not ordered with it. A process with work on several streams some of
// whose kinds the input does not give, or a context listing two NULL
// streams, is noted (AssumeStreamKindsUnknown), and its streams are left
// independent.
func (r *resolver) legacyOrder() {
	t := r.t
	type context struct {
		null     int32
		blocking []int32
		// streams counts the context's streams with work, nulls those
		// listed as its NULL stream: a context has one, so two say
		// nothing of which it is.
		streams, nulls int
	}
	var (
		contexts []*context
		byKey    = map[[2]int64]*context{}
	)
	for lo := 0; lo < len(t.Streams); {
		pid := t.Streams[lo].PID
		hi, unknown := lo, 0
		for ; hi < len(t.Streams) && t.Streams[hi].PID == pid; hi++ {
			s := &t.Streams[hi]
			if s.Kind == records.StreamKindUnknown {
				// A stream a process's list leaves out carries no work of
				// its own (unified-memory migrations): not one to order.
				if _, listed := r.b.listed[[2]int64{pid, s.ID}]; listed || !r.b.listedPIDs[pid] {
					unknown++
				}
				continue
			}
			k := [2]int64{pid, s.Context}
			c := byKey[k]
			if c == nil {
				c = &context{null: None}
				byKey[k] = c
				contexts = append(contexts, c)
			}
			c.streams++
			switch s.Kind {
			case records.StreamNull:
				c.null = int32(hi)
				c.nulls++
			case records.StreamBlocking:
				c.blocking = append(c.blocking, int32(hi))
			}
		}
		for _, c := range contexts {
			if c.nulls > 1 && c.streams > 0 {
				unknown += c.streams
				c.streams = 0 // counted once, for this process
			}
		}
		if unknown > 0 && hi-lo > 1 {
			for range unknown {
				r.b.assumed.add(AssumeStreamKindsUnknown, pid, "", records.NoID, records.NoID, 0)
			}
		}
		lo = hi
	}
	for _, c := range contexts {
		if c.null == None || len(c.blocking) == 0 || c.nulls > 1 {
			continue
		}
		if r.nullOf == nil {
			r.nullOf = make([]int32, len(t.Streams))
			for s := range r.nullOf {
				r.nullOf[s] = None
			}
		}
		n := t.Streams[c.null]
		for _, b := range c.blocking {
			r.nullOf[b] = c.null
			bs := t.Streams[b]
			// The NULL stream's ops wait for b's work before them.
			last := None
			for j := n.First; j < n.Last; j++ {
				if p := r.lastLaunched(b, r.launchOf(j)); p != None && p != last {
					t.StreamWaits = append(t.StreamWaits, StreamWait{Op: j, On: p, Implicit: true})
					last = p
					r.heldToOrder(j, p)
				}
			}
			// b's ops wait for the NULL stream's work before them.
			last = None
			for j := bs.First; j < bs.Last; j++ {
				if p := r.lastLaunched(c.null, r.launchOf(j)); p != None && p != last {
					t.StreamWaits = append(t.StreamWaits, StreamWait{Op: j, On: p, Implicit: true})
					last = p
					r.heldToOrder(j, p)
				}
			}
		}
	}
}

// heldToOrder refuses the timeline where op j, which the legacy default
// stream's order makes wait for op p of another stream of its context,
// started before p ended (LegacyOrderError).
func (r *resolver) heldToOrder(j, p int32) {
	if r.contradicts(j, p) {
		r.refuse(&LegacyOrderError{Waiting: r.opRef(j), On: r.opRef(p)})
	}
}

// contradicts says op j, made to wait for op p, started before p ended
// where the order is certain from the calls: j's launching call started
// after p's returned (or, where p has no call, after p started), so that p
// was queued first whatever the threads did inside their calls.
func (r *resolver) contradicts(j, p int32) bool {
	t := r.t
	o := &t.Ops
	if o.Start[j] >= o.End[p] {
		return false
	}
	cj := o.Call[j]
	if cj == None {
		return false
	}
	queued := o.Start[p]
	if cp := o.Call[p]; cp != None {
		queued = t.Calls.End[cp]
	}
	return queued <= t.Calls.Start[cj]
}

// opRef describes op j for an error.
func (r *resolver) opRef(j int32) OpRef {
	t := r.t
	s := t.Streams[t.Ops.Stream[j]]
	return OpRef{Kind: t.Ops.Kind[j], Name: t.Name(t.Ops.Name[j]), PID: s.PID, Device: s.Device, Stream: s.ID, StreamKind: s.Kind,
		Corr: t.Ops.Corr[j], Start: t.Ops.Start[j], End: t.Ops.End[j]}
}

// OpRef names a GPU operation in an error: what it is, where it ran, the
// correlation id of its launching call and its span.
type OpRef struct {
	Kind       OpKind
	Name       string // a kernel's name, "" otherwise
	PID        int64
	Device     int64
	Stream     int64
	StreamKind records.StreamKind
	Corr       int64
	Start, End int64
}

func (o OpRef) String() string {
	what := "the " + o.Kind.String()
	if o.Name != "" {
		what += " " + o.Name
	}
	kind := o.StreamKind.String()
	if o.StreamKind == records.StreamNull {
		kind = "legacy default (NULL)"
	}
	return fmt.Sprintf("%s (correlation id %d) on %s stream %d of process %d, device %d, [%d, %d ns]", what, o.Corr, kind, o.Stream, o.PID, o.Device, o.Start, o.End)
}

// LegacyOrderError is an op that the legacy default (NULL) stream's order
// makes wait for an op of another stream of its context, launched before
// it, and that the capture shows running while that op ran: the capture
// contradicts the order the streams' kinds (TARGET_INFO_CUDA_STREAM)
// imply, so either the kinds or the times were edited, and the replay
// would rest on waits the GPU did not make.
type LegacyOrderError struct {
	Waiting, On OpRef
}

func (e *LegacyOrderError) Error() string {
	return fmt.Sprintf("%s started before %s ended, where the legacy default stream's order makes it wait for that op, queued first: "+
		"the ops' times contradict the order the streams' kinds imply (a damaged or edited export; export the report again)", e.Waiting, e.On)
}

// EventWaitError is an op that a cudaStreamWaitEvent makes wait for the
// work an event recorded on another stream, and that the capture shows
// running while that work ran: the capture contradicts the wait it
// records, so the times or the records that tie the wait to its event
// were edited, and the replay would rest on a wait the GPU did not make.
type EventWaitError struct {
	Waiting, On OpRef
	// Wait is the cudaStreamWaitEvent call's correlation id, Event the
	// event it waited on.
	Wait, Event int64
}

func (e *EventWaitError) Error() string {
	return fmt.Sprintf("%s started before %s ended, where the cudaStreamWaitEvent of correlation id %d makes it wait for that op, which event %d recorded: "+
		"the ops' times contradict the wait the trace records (a damaged or edited export; export the report again)", e.Waiting, e.On, e.Wait, e.Event)
}

// tieSyncs ties each synchronisation record to its call.
func (r *resolver) tieSyncs() {
	r.syncOf = make(map[int32]*records.Sync, len(r.b.syncs))
	type syncKey struct {
		pid, device, stream, event, start, end int64
		kind                                   records.SyncKind
	}
	seen := make(map[syncKey]int64, len(r.b.syncs))
	for i := range r.b.syncs {
		s := &r.b.syncs[i]
		k := syncKey{s.PID, s.Device, s.Stream, s.Event, s.Start, s.End, s.Kind}
		if corr, dup := seen[k]; dup {
			r.refuse(&DuplicateSyncError{Sync: *s, FirstCorr: corr})
			continue
		}
		seen[k] = s.Corr
		c := r.callByCorr(s.PID, s.Corr)
		if c == None {
			continue
		}
		if api := r.t.Name(r.t.Calls.Name[c]); kernelLaunch(api) {
			r.mismatched("a synchronisation record", s.PID, s.Corr, api, "and that call waits for nothing")
		}
		if _, ok := r.syncOf[c]; !ok {
			r.syncOf[c] = s
		}
	}
}

// tieEvents indexes the event recordings by their calls; streamWaits
// binds each to the work it stands for, in time order with the stream
// waits.
func (r *resolver) tieEvents() {
	r.recorded = map[[2]int64][]recording{}
	r.recordsOf = map[int32][]*records.EventRecord{}
	r.bySeq = map[[2]int64]seqRecording{}
	for i := range r.b.events {
		e := &r.b.events[i]
		c := r.callByCorr(e.PID, e.Corr)
		if c == None {
			r.b.assumed.add(AssumeEventRecordWithoutCall, e.PID, "", e.Event, e.Stream, e.Corr)
			continue
		}
		if api := r.t.Name(r.t.Calls.Name[c]); kernelLaunch(api) {
			r.mismatched(fmt.Sprintf("a recording of event %d", e.Event), e.PID, e.Corr, api, "and that call records no event")
		}
		if e.Seq != 0 {
			k := [2]int64{e.PID, e.Seq}
			if was, dup := r.bySeq[k]; dup {
				r.refuse(&EventLinkError{PID: e.PID, Corr: e.Corr, Event: e.Event, Seq: e.Seq,
					Why: fmt.Sprintf("and so does the recording of event %d by correlation id %d, where nsys gives each recording its own: a recording written twice", was.event, r.t.Calls.Corr[was.call])})
			}
			r.bySeq[k] = seqRecording{event: e.Event, call: c, at: r.t.Calls.Start[c]}
		}
		r.recordsOf[c] = append(r.recordsOf[c], e)
	}
}

// streamWork is the work of stream s launched before time at: its last op
// then, the ops of the waits made on it that no op had followed by then,
// and for a blocking stream the last op launched by then on its context's
// NULL stream, which its later work waits for.
func (r *resolver) streamWork(s int32, at int64) []int32 {
	var ops []int32
	if j := r.lastLaunched(s, at); j != None {
		ops = append(ops, j)
	}
	if r.nullOf != nil && r.nullOf[s] != None {
		if j := r.lastLaunched(r.nullOf[s], at); j != None {
			ops = append(ops, j)
		}
	}
	ps := r.pending[s]
	for k := range ps {
		if ps[k].at < at && at <= ps[k].until {
			ops = append(ops, ps[k].ops...)
			ps[k].used = true
		}
	}
	return ops
}

// eventWork returns the work event ev of process pid stood for when call
// started: the recording the wait names by its eventSyncId (seq, 0 when
// it names none) where that recording was made before the call, else its
// last recording before then. ok is false when the trace holds no such
// recording; unmatched is true when the wait names a recording other
// than the one taken (one the trace lacks, or made while the wait ran).
func (r *resolver) eventWork(pid, ev, seq int64, call int32) (ops []int32, ok, unmatched bool) {
	rs := r.recorded[[2]int64{pid, ev}]
	at := r.t.Calls.Start[call]
	k := sort.Search(len(rs), func(k int) bool { return rs[k].at >= at })
	if seq != 0 {
		// The recording by its id (bySeq), then among the event's
		// recordings made at its call's start.
		if rec, ok := r.bySeq[[2]int64{pid, seq}]; ok && rec.event == ev && rec.at < at {
			for j := sort.Search(k, func(j int) bool { return rs[j].at >= rec.at }); j < k && rs[j].at == rec.at; j++ {
				if rs[j].seq == seq {
					return rs[j].ops, true, false
				}
			}
		}
		unmatched = true
	}
	if k == 0 {
		return nil, false, unmatched
	}
	return rs[k-1].ops, true, unmatched
}

// checkSeq holds a wait that names its recording by eventSyncId against
// that recording: of another event, or made after the waiting call
// returned, it is not what nsys writes, and the timeline is refused.
func (r *resolver) checkSeq(i int32, api string, sync *records.Sync) {
	if sync.Seq == 0 || r.fault != nil {
		return
	}
	rec, ok := r.bySeq[[2]int64{sync.PID, sync.Seq}]
	if !ok {
		return
	}
	cs := &r.t.Calls
	base := EventLinkError{PID: sync.PID, Corr: cs.Corr[i], API: api, Event: sync.Event, Seq: sync.Seq, Wait: true}
	switch {
	case rec.event != sync.Event:
		base.Why = fmt.Sprintf("the id of a recording of event %d (correlation id %d), not of event %d", rec.event, cs.Corr[rec.call], sync.Event)
	case rec.at > cs.End[i]:
		base.Why = fmt.Sprintf("a recording made by correlation id %d at %d ns, after the wait returned at %d ns", cs.Corr[rec.call], rec.at, cs.End[i])
	default:
		return
	}
	r.refuse(&base)
}

// roleOf is call i's role: by its name, else by its synchronisation
// record's kind.
func (r *resolver) roleOf(i int32) Role {
	role := r.t.CallRole(i)
	if role != RoleOther {
		return role
	}
	if s, ok := r.syncOf[i]; ok {
		switch s.Kind {
		case records.SyncStream:
			return RoleStreamSync
		case records.SyncContext:
			return RoleDeviceSync
		case records.SyncEvent:
			return RoleEventSync
		case records.SyncStreamWait:
			return RoleStreamWait
		}
	}
	return role
}

// waits finds, thread by thread, what each call waited for.
func (r *resolver) waits(ctx context.Context) error {
	t := r.t
	// on is the backing array of every Wait.On, ends each wait's end in it:
	// the waits are made in place, their On set once on stops growing.
	var on, ends []int32
	t.Waits = nil
	add := func(call int32, kind WaitKind, first int32, ops ...int32) {
		on = append(on, ops...)
		ends = append(ends, int32(len(on)))
		t.Waits = append(t.Waits, Wait{Call: call, Kind: kind, PollFirst: first})
	}
	for th := range t.Threads {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("building the timeline: %w", err)
		}
		for i := t.Threads[th].First; i < t.Threads[th].Last; i++ {
			r.waitOf(i, add)
		}
	}
	if t.Waits == nil {
		t.Waits = []Wait{}
	}
	from := int32(0)
	for k, to := range ends {
		t.Waits[k].On = on[from:to:to]
		from = to
	}
	r.unusedWaits()
	return nil
}

func (r *resolver) waitOf(i int32, add func(call int32, kind WaitKind, first int32, ops ...int32)) {
	t := r.t
	cs := &t.Calls
	role := r.roleOf(i)
	var (
		pid     int64
		api     string
		sync    *records.Sync
		hasSync bool
	)
	// A copy's wait reads neither its process, its name nor a
	// synchronisation record, and a call of another role waits for
	// nothing: those are looked up for the synchronisations alone.
	switch role {
	case RoleStreamSync, RoleDeviceSync, RoleEventSync, RoleEventQuery:
		pid = t.PID(i)
		api = t.Name(cs.Name[i])
		sync, hasSync = r.syncOf[i]
	}
	switch role {
	case RoleCopyBlocking:
		ops := r.opsBuf[:0]
		for _, j := range t.OpsOf(i) {
			if t.Ops.Kind[j] == OpCopy {
				ops = append(ops, j)
			}
		}
		r.opsBuf = ops
		if len(ops) > 0 {
			add(i, WaitCopy, None, ops...)
		}
	case RoleCopyAsync:
		ops := r.opsBuf[:0]
		for _, j := range t.OpsOf(i) {
			if t.Ops.Pageable(j) && cs.End[i] > t.Ops.Start[j] {
				ops = append(ops, j)
			}
		}
		r.opsBuf = ops
		if len(ops) > 0 {
			add(i, WaitHeld, None, ops...)
		}
	case RoleStreamSync:
		if hasSync {
			if s, ok := r.streamOf[[3]int64{pid, sync.Device, sync.Stream}]; ok {
				if ops := r.streamWork(s, cs.Start[i]); len(ops) > 0 {
					add(i, WaitStream, None, ops...)
				}
			}
			return
		}
		// No record: the stream whose last work before the call ended last
		// before the call returned.
		best, bestStream := None, records.NoID
		span := r.pidStreams[pid]
		for s := span[0]; s < span[1]; s++ {
			j := r.lastLaunched(s, cs.Start[i])
			if j != None && t.Ops.End[j] <= cs.End[i] && (best == None || t.Ops.End[j] > t.Ops.End[best]) {
				best, bestStream = j, t.Streams[s].ID
			}
		}
		r.b.assumed.add(AssumeSyncStreamUnknown, pid, api, records.NoID, bestStream, cs.Corr[i])
		if best != None {
			add(i, WaitStream, None, best)
		}
	case RoleDeviceSync:
		if !hasSync {
			r.b.assumed.add(AssumeSyncDeviceAllStreams, pid, api, records.NoID, records.NoID, cs.Corr[i])
		}
		ops := r.opsBuf[:0]
		span := r.pidStreams[pid]
		for s := span[0]; s < span[1]; s++ {
			if hasSync && sync.Device != t.Streams[s].Device {
				continue
			}
			if j := r.lastLaunched(s, cs.Start[i]); j != None {
				ops = append(ops, j)
			}
		}
		r.opsBuf = ops
		if len(ops) > 0 {
			add(i, WaitDevice, None, ops...)
		}
	case RoleEventSync:
		r.eventWait(i, cs.Start[i], WaitEvent, None, api, sync, hasSync, add)
	case RoleEventQuery:
		if cs.Result[i] != 0 {
			return // a not-ready query: part of a run its successful query ends
		}
		first := i
		th := t.Threads[cs.Thread[i]]
		for first > th.First && r.roleOf(first-1) == RoleEventQuery && cs.Result[first-1] == NotReady {
			first--
		}
		if first == i {
			return // found the event complete at once: no wait
		}
		r.eventWait(i, cs.Start[first], WaitPoll, first, api, sync, hasSync, add)
	}
}

// eventWait adds the wait of call i, a host wait of kind on an event that
// began at since (polled from call first, for WaitPoll), on the work the
// event stood for; where the trace names no event, on the work guessed
// (guessEvent), noted as an assumption.
func (r *resolver) eventWait(i int32, since int64, kind WaitKind, first int32, api string, sync *records.Sync, hasSync bool,
	add func(call int32, kind WaitKind, first int32, ops ...int32)) {
	if !hasSync || sync.Event == records.NoID {
		if ops := r.guessEvent(i, since); len(ops) > 0 {
			r.b.assumed.add(AssumeEventGuessed, r.t.PID(i), api, records.NoID, records.NoID, r.t.Calls.Corr[i])
			add(i, kind, first, ops...)
			return
		}
	}
	if ops, ok := r.eventOf(i, api, sync, hasSync); ok && len(ops) > 0 {
		add(i, kind, first, ops...)
	}
}

// guessEvent is the work a host wait on an event, call i, whose event the
// trace does not name (no synchronisation record: CSV reports hold none)
// is taken to have waited for: of each stream of its process, the last op
// launched before since (the wait's start; a poll's first query) that
// ended before the call returned. An event stands for work launched
// before it was recorded, and the wait returns once that work ends: the
// wait cannot have waited for work that ended after it, and is taken to
// have waited for all the rest, on every stream, as a device
// synchronisation does. nil where no op of the process qualifies.
func (r *resolver) guessEvent(i int32, since int64) []int32 {
	t := r.t
	end := t.Calls.End[i]
	var ops []int32
	span := r.pidStreams[t.PID(i)]
	for s := span[0]; s < span[1]; s++ {
		last := r.lastLaunched(s, since)
		if last == None {
			continue
		}
		first := t.Streams[s].First
		// A stream's ops end in its order: the last that ended in time.
		k := sort.Search(int(last-first+1), func(k int) bool { return t.Ops.End[first+int32(k)] > end })
		if k > 0 {
			ops = append(ops, first+int32(k)-1)
		}
	}
	return ops
}

// eventOf resolves the event call i synchronised on to the work it stood
// for, noting an assumption where it cannot.
func (r *resolver) eventOf(i int32, api string, sync *records.Sync, hasSync bool) ([]int32, bool) {
	pid, corr := r.t.PID(i), r.t.Calls.Corr[i]
	if !hasSync || sync.Event == records.NoID {
		r.b.assumed.add(AssumeEventUnknown, pid, api, records.NoID, records.NoID, corr)
		r.t.Unnamed = append(r.t.Unnamed, i)
		return nil, false
	}
	r.checkSeq(i, api, sync)
	ops, ok, unmatched := r.eventWork(pid, sync.Event, sync.Seq, i)
	switch {
	case !ok:
		r.b.assumed.add(AssumeEventUnrecorded, pid, api, sync.Event, records.NoID, corr)
		r.t.Unresolved = append(r.t.Unresolved, i)
	case unmatched:
		r.b.assumed.add(AssumeEventRecordingUnmatched, pid, api, sync.Event, records.NoID, corr)
		r.t.Unmatched = append(r.t.Unmatched, i)
	}
	return ops, ok
}

// streamWaits binds, in each process's time order, every event
// recording to the work it stands for (streamWork) and every
// cudaStreamWaitEvent to the next op of the waiting stream, which waits
// for the event's work; a wait no op follows stays pending on its stream
// for the recordings and synchronisations made on it.
func (r *resolver) streamWaits() {
	t := r.t
	cs := &t.Calls
	r.pending = map[int32][]pendingWait{}
	for _, i := range t.ByStart {
		pid, at := t.PID(i), cs.Start[i]
		for _, e := range r.recordsOf[i] {
			var ops []int32
			if s, ok := r.streamOf[[3]int64{e.PID, e.Device, e.Stream}]; ok {
				ops = r.streamWork(s, at)
			}
			k := [2]int64{e.PID, e.Event}
			r.recorded[k] = append(r.recorded[k], recording{at: at, seq: e.Seq, ops: ops})
		}
		if r.roleOf(i) != RoleStreamWait {
			continue
		}
		api := t.Name(cs.Name[i])
		sync, hasSync := r.syncOf[i]
		ops, ok := r.eventOf(i, api, sync, hasSync)
		if !ok || len(ops) == 0 {
			continue
		}
		w, found := r.streamOf[[3]int64{pid, sync.Device, sync.Stream}]
		if !found {
			r.b.assumed.add(AssumeStreamWaitNoWork, pid, api, sync.Event, sync.Stream, cs.Corr[i])
			continue
		}
		next := r.lastLaunched(w, at) + 1
		if next == 0 {
			next = t.Streams[w].First
		}
		until := int64(math.MaxInt64)
		if next < t.Streams[w].Last {
			until = r.launchMax[next]
			for _, e := range ops {
				if t.Ops.Stream[e] != w {
					t.StreamWaits = append(t.StreamWaits, StreamWait{Op: next, On: e})
					if r.contradicts(next, e) {
						r.refuse(&EventWaitError{Waiting: r.opRef(next), On: r.opRef(e), Wait: cs.Corr[i], Event: sync.Event})
					}
				}
			}
		}
		r.pending[w] = append(r.pending[w], pendingWait{at: at, until: until, ops: ops, call: i, event: sync.Event})
	}
	slices.SortFunc(t.StreamWaits, func(x, y StreamWait) int {
		return cmp.Or(cmp.Compare(x.Op, y.Op), cmp.Compare(x.On, y.On), cmp.Compare(b2i(x.Implicit), b2i(y.Implicit)))
	})
	// An op made to wait for an event and ordered after the same op by
	// the NULL stream waits once, for the event.
	t.StreamWaits = slices.CompactFunc(t.StreamWaits, func(x, y StreamWait) bool { return x.Op == y.Op && x.On == y.On })
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unusedWaits notes the stream waits that bound nothing: no later op of
// their stream, and no recording or synchronisation of it, is in the
// trace.
func (r *resolver) unusedWaits() {
	t := r.t
	for s, ps := range r.pending {
		for _, p := range ps {
			if p.until == math.MaxInt64 && !p.used {
				r.b.assumed.add(AssumeStreamWaitNoWork, t.Streams[s].PID, t.Name(t.Calls.Name[p.call]), p.event,
					t.Streams[s].ID, t.Calls.Corr[p.call])
			}
		}
	}
}

// handoffs infers, for each call after an idle stretch of its thread, the
// call of another thread of its process it resumed after, in call order,
// and notes each in assumed. It reads t's calls and threads alone.
func handoffs(ctx context.Context, t *Timeline, assumed *assumptions) ([]Handoff, error) {
	cs := &t.Calls
	var found []Handoff
	// Calls in (pid, end) order.
	byEnd := sortedPerProcess(t, cs.End)
	var ofPID []int32 // byEnd's calls of the process of the thread at hand
	// A thread's calls start in order: the search for the calls that
	// ended before each goes on from the last.
	var at cursor.Cursor
	for th, thr := range t.Threads {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("building the timeline: %w", err)
		}
		if thr.Last-thr.First < 2 {
			continue
		}
		if ofPID == nil || t.PID(ofPID[0]) != thr.PID {
			ofPID, at = callsOfPID(t, byEnd, thr.PID), cursor.Cursor{}
		}
		prevEnd := cs.End[thr.First]
		for i := thr.First + 1; i < thr.Last; i++ {
			idle := cs.Start[i] - prevEnd
			if idle >= HandoffMinIdleNs {
				if from := wokenBy(cs, ofPID, &at, int32(th), prevEnd, cs.Start[i]); from != None {
					if wake := cs.Start[i] - cs.End[from]; float64(wake) <= HandoffMaxWakeShare*float64(idle) {
						found = append(found, Handoff{Call: i, From: from})
						assumed.add(AssumeHandoff, thr.PID, t.Name(cs.Name[i]), records.NoID, records.NoID, cs.Corr[i])
					}
				}
			}
			prevEnd = max(prevEnd, cs.End[i])
		}
	}
	return found, nil
}

// callsOfPID returns the run of calls of process pid in calls, which are
// in (pid, ...) order.
func callsOfPID(t *Timeline, calls []int32, pid int64) []int32 {
	lo, hi := runOfPID(t, calls, pid)
	return calls[lo:hi]
}

// runOfPID is where callsOfPID's run begins and ends in calls.
func runOfPID(t *Timeline, calls []int32, pid int64) (lo, hi int) {
	lo = sort.Search(len(calls), func(k int) bool { return t.PID(calls[k]) >= pid })
	hi = lo + sort.Search(len(calls)-lo, func(k int) bool { return t.PID(calls[lo+k]) > pid })
	return lo, hi
}

// wokenBy returns the call of another thread than th of th's process
// (ofPID, its calls in end order) that ended last in (after, at], None
// when there is none; c is where the last search of ofPID ended.
func wokenBy(cs *Calls, ofPID []int32, c *cursor.Cursor, th int32, after, at int64) int32 {
	k := c.Search(len(ofPID), func(k int) bool { return cs.End[ofPID[k]] > at })
	const maxLook = 64 // calls of the thread itself ending in the window (nested calls)
	for n := 0; k > 0 && n < maxLook; n++ {
		k--
		c := ofPID[k]
		if cs.End[c] <= after {
			return None
		}
		if cs.Thread[c] != th {
			return c
		}
	}
	return None
}

// ranges sorts the ranges by start and ties their marks to their threads'
// calls.
func (r *resolver) ranges() {
	t := r.t
	rs := r.b.ranges
	slices.SortFunc(rs, func(x, y rawRange) int {
		return cmp.Or(cmp.Compare(x.start, y.start), cmp.Compare(x.end, y.end), cmp.Compare(x.name, y.name))
	})
	t.Ranges = make([]Range, len(rs))
	for k, x := range rs {
		t.Ranges[k] = Range{Name: x.name, Thread: x.thread, Start: x.start, End: x.end,
			StartAt: r.anchor(x.thread, x.start), EndAt: r.anchor(x.thread, x.end)}
	}
}

// anchor ties a mark at time at on thread th to the thread's last call
// starting at or before it (its end, when the call had ended by then), or
// to its first call.
func (r *resolver) anchor(th int32, at int64) Anchor {
	t := r.t
	thr := t.Threads[th]
	if thr.Last == thr.First {
		return Anchor{Call: None}
	}
	starts := t.Calls.Start[thr.First:thr.Last]
	k := sort.Search(len(starts), func(k int) bool { return starts[k] > at })
	if k == 0 {
		return Anchor{Call: thr.First}
	}
	c := thr.First + int32(k) - 1
	return Anchor{Call: c, After: t.Calls.End[c] <= at}
}

// engines finds the copy engines' capacity per device and direction: the
// most copies of that direction seen running at once.
func (r *resolver) engines() {
	t := r.t
	o := &t.Ops
	type key struct {
		dev int64
		dir Dir
	}
	// Each copy's start and end as one sortable number: the time doubled,
	// plus one for a start, so that at equal times an end comes first and
	// back-to-back copies share an engine. Counted first, so that each
	// key's edges are allocated once. Consecutive copies are mostly of one
	// key: the last one's place is kept at hand.
	var (
		keys   []key
		counts []int
		places = map[key]int{}
		last   = -1
	)
	placeOf := func(k key) int {
		if last >= 0 && keys[last] == k {
			return last
		}
		n, ok := places[k]
		if !ok {
			n = len(keys)
			places[k] = n
			keys, counts = append(keys, k), append(counts, 0)
		}
		last = n
		return n
	}
	for j := range o.Kind {
		if o.Kind[j] == OpCopy && o.Dir[j].HostDevice() {
			counts[placeOf(key{t.Streams[o.Stream[j]].Device, o.Dir[j]})] += 2
		}
	}
	edges := make([][]int64, len(keys))
	for n := range edges {
		edges[n] = make([]int64, 0, counts[n])
	}
	for j := range o.Kind {
		if o.Kind[j] != OpCopy || !o.Dir[j].HostDevice() {
			continue
		}
		n := placeOf(key{t.Streams[o.Stream[j]].Device, o.Dir[j]})
		edges[n] = append(edges[n], o.Start[j]<<1|1, o.End[j]<<1)
	}
	for n, es := range edges {
		slices.Sort(es)
		most, now := 1, 0
		for _, e := range es {
			if e&1 == 1 {
				now++
			} else {
				now--
			}
			most = max(most, now)
		}
		t.Engines = append(t.Engines, Engine{Device: keys[n].dev, Dir: keys[n].dir, Capacity: most})
	}
	slices.SortFunc(t.Engines, func(x, y Engine) int { return cmp.Or(cmp.Compare(x.Device, y.Device), cmp.Compare(x.Dir, y.Dir)) })
}
