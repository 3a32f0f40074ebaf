package capture

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/chunked"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/limits"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/strcache"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Physical bounds across records. A trace that breaks one was not recorded
// by a run on real hardware: it holds a record twice, joins two traces, or
// was edited, and no verdict may rest on it.
// A copy's and a memset's rates are bounded by package limits: the GPU's
// host link, and its memory, as the capture names them.
const (
	// clockSkewNs is how far an event on the GPU's clock may seem to
	// precede the host event that caused it, or to outlast the host wait
	// that covered it, once nsys has put both on one clock: 1 µs. Real
	// H200 exports keep 0.9 µs or more to spare; the damage such checks
	// find is larger.
	clockSkewNs = 1000
	// returnSlackNs is how far after a blocking copy call returns its copy
	// may seem to end, where the call returns only once the copy is done
	// (device-to-host, and host-to-device from pinned memory; a pageable
	// host-to-device copy returns once staged): 25 µs. The shipped H200
	// captures' end at most 1.1 µs after; a copy that ends later was
	// moved, or its call's times were edited.
	returnSlackNs = 25000
	// recordsPerCheck is how many records pass between looks at the
	// context: the consumers' work per record is then cancelled too.
	recordsPerCheck = 1024
)

// crossCheck checks a stream of records against each other, as they pass
// and once the reader is done (finish):
//
//   - one API call per correlation id in a process, and one call at a
//     time on a thread;
//   - a GPU operation no earlier than the call that issued it; one copy
//     per copy call (but a batch call's), none of a call that failed;
//   - one copy at a time on a stream (not for CUDA graph nodes, which may
//     run side by side): a record given twice, or two traces joined,
//     overlaps itself; one kernel per launch; no copy beside a kernel of
//     its stream (kernels alone may overlap each other there);
//   - a copy that started on a stream before a synchronisation of that
//     stream (or its whole device) began ends before the wait ends, a
//     kernel too where the call waited (not a query), and one a blocking
//     call waited for (returnsWhenDone) before it returned; the copies and
//     kernels an event synchronisation waited for (the work of the
//     recording's stream begun before its recording call) end within it;
//     one synchronisation record per synchronising call, within its call;
//   - one recording per event recording call, one record per graph launch,
//     and, traced whole, a record for each graph launch call that succeeded;
//   - copies and memsets no faster than any link or memory;
//   - a thread's NVTX push/pop ranges (in one domain) nested.
//
// Its errors are *inputerr.Error without a Path: the reader, or Read
// after it, names the file and table the records came from. It keeps the
// start and end of each call and copy in a compact log per thread and
// stream (spans: a few bytes a record where they come in start order), the
// start of each copy call where the reader does not join them, each NVTX
// range, and a bit per correlation id of calls, kernels and copies (a
// sorted list once they are sparse).
type crossCheck struct {
	ctx    context.Context
	format Format
	// gpu, pcieGen and pcieWidth are what the capture says of its GPU
	// (records.Meta): they set the bounds of a copy's rate.
	gpu                string
	pcieGen, pcieWidth int
	// deviceBound and hostBound are the bounds of the GPU and link above,
	// worked out once for every operation (boundsSet) rather than per
	// operation; meta clears boundsSet.
	deviceBound, hostBound limits.Bound
	boundsSet              bool
	seen                   int
	err                    error

	calls     corrSet                 // the calls' correlation ids
	kernels   corrSet                 // the kernels'
	copies    corrSet                 // those of the copies of copy calls (one each, but for a batch call's)
	syncs     corrSet                 // the synchronisations' calls' (one record each)
	ranges    map[rangeKey][][2]int64 // NVTX push/pop ranges by thread and domain: start, end (open: never)
	threads   map[[2]int64]*spans
	copyCalls callList  // the copy calls read, for copies that come without theirs
	names     callNames // the names of the calls kept
	// launchCalls are the calls read that launch kernels (nsysdb.IsLaunchAPI), for
	// the kernels, which come without theirs.
	launchCalls callList
	// launchPID is the one process of the launch calls, -1 once they are
	// of more than one: a report's kernels that name no process (a CSV
	// cuda_gpu_trace) are then that process's.
	launchPID int64
	// joined: the reader joins each copy to its copy call (JoinCalls), so
	// copyCalls is not kept: a copy without a call has none among the calls.
	joined  bool
	streams map[streamKey]*spans
	// kernelStreams are the kernels' spans by stream (graph nodes too),
	// for the synchronisations that waited for them; kernels may overlap
	// on a stream, so they are not checked against each other.
	kernelStreams map[streamKey]*spans
	// lastThread, lastStream and lastKernels are the spans last added to,
	// with their keys: records come in runs of one thread and one stream.
	lastThread lastSpans[[2]int64]
	// kinds is what each API name is, as call asks (kindsOf).
	kinds       strcache.Cache[callKinds]
	lastStream  lastSpans[streamKey]
	lastKernels lastSpans[streamKey]
	// syncCalls and recordCalls are the synchronising calls and the event
	// recording calls read: a synchronisation record lies within its
	// call, and an event recording stands for the work its stream began
	// before its call.
	syncCalls, recordCalls callList
	events, graphs         corrSet // the event recordings' calls', the graph launches'
	// graphTrace is nsys's --cuda-graph-trace level (records.Tracing);
	// graphLaunches counts the graph launch calls that succeeded and
	// graphRead says the graph launch records are read: traced whole, each
	// has its record (finish).
	graphTrace    string
	graphLaunches int
	graphRead     bool
	// recordings are the event recordings by process and event, which the
	// reader hands on before the synchronisations, in order of their calls
	// once sortedRec (recordingBefore); graphStreams the graph launches'
	// spans by stream.
	recordings   map[[2]int64][]recordingAt
	sortedRec    bool
	graphStreams map[streamKey]*spans
	// waits are the cross-stream waits (cudaStreamWaitEvent) by the
	// stream made to wait, each with the recording it waited for, in the
	// order they come, which is the order of their times in an export as
	// nsys writes it: the work a stream began before a recording includes
	// what its waits held it for (waitedThrough). Once a wait comes out of
	// order (disordered), the synchronisations still to check against them
	// are kept (deferred) and checked by finish, the waits sorted once.
	waits      map[streamKey][]streamWait
	disordered bool
	deferred   []deferredSync
}

// deferredSync is what waitedThrough needs of a synchronisation whose check
// waits for finish.
type deferredSync struct {
	stream streamKey
	at     int64
	end    int64
	corr   int64
	kind   records.SyncKind
}

// streamWait is one cross-stream wait: when it began, and the recording
// of the event it waited for.
type streamWait struct {
	at  int64
	rec recordingAt
}

// recordingAt is one recording of an event: when its call began, and the
// stream whose work it stands for.
type recordingAt struct {
	at     int64
	stream streamKey
}

// lastSpans is the spans of one key of a map of spans, the one looked up
// last.
type lastSpans[K comparable] struct {
	key K
	s   *spans
}

// of returns the spans of key k in m, made there when it has none.
func (l *lastSpans[K]) of(m map[K]*spans, k K) *spans {
	if l.s != nil && l.key == k {
		return l.s
	}
	s := m[k]
	if s == nil {
		s = &spans{}
		m[k] = s
	}
	l.key, l.s = k, s
	return s
}

// rangeKey names an NVTX push/pop stack: a thread's, in one domain.
type rangeKey struct {
	pid, tid int64
	domain   string
}

// streamKey names a stream: its process, device and id.
type streamKey struct{ pid, device, stream int64 }

// callStart is one copy call's start, by process and correlation id.
type callStart struct {
	pid, corr, start, end, result int64
	// name is the call's name in callNames: no pointer, so that the lists
	// of hundreds of thousands of calls grow and sort without the
	// collector's work.
	name uint32
}

// callNames interns the names of the calls a crossCheck keeps: a trace
// makes its calls under a few dozen names.
type callNames struct {
	ids    map[string]uint32
	names  []string
	recent strcache.Cache[uint32] // names looked up lately, found without hashing
}

// id is name's index, added where new.
func (n *callNames) id(name string) uint32 {
	if i, ok := n.recent.Get(name); ok {
		return i
	}
	i, ok := n.ids[name]
	if !ok {
		if n.ids == nil {
			n.ids = map[string]uint32{}
		}
		i = uint32(len(n.names))
		n.ids[name], n.names = i, append(n.names, name)
	}
	n.recent.Put(name, i)
	return i
}

// of is the name of index i.
func (n *callNames) of(i uint32) string { return n.names[i] }

// corrSet is a set of (process, correlation id) pairs that finds one
// added twice: a bit for each in pages of 256 ids while they are dense
// (correlation ids count up from 1 in each process, so a trace of n calls
// takes about n/8 bytes), a list sorted at the end (16 bytes an id) once
// they are so sparse that pages would take more.
type corrSet struct {
	pages map[[2]int64]*[4]uint64
	n     int        // ids added
	list  [][2]int64 // every id, once sparse
	// lastKey and last are the page added to last: ids come in runs
	// of one page.
	lastKey [2]int64
	last    *[4]uint64
}

// add adds (pid, corr) and reports whether it was there already; once the
// set is sparse it cannot tell until dup.
func (s *corrSet) add(pid, corr int64) (dup bool) {
	s.n++
	if s.list != nil {
		s.list = append(s.list, [2]int64{pid, corr})
		return false
	}
	if s.pages == nil {
		s.pages = map[[2]int64]*[4]uint64{}
	}
	k := [2]int64{pid, corr >> 8}
	p := s.last
	if p == nil || k != s.lastKey {
		p = s.pages[k]
	}
	if p == nil {
		if len(s.pages) >= sparsePages && len(s.pages)*sparseIDs > s.n {
			s.sparse()
			s.list = append(s.list, [2]int64{pid, corr})
			return false
		}
		p = new([4]uint64)
		s.pages[k] = p
	}
	s.lastKey, s.last = k, p
	bit := uint64(1) << (uint(corr) & 63)
	w := &p[(corr>>6)&3]
	dup = *w&bit != 0
	*w |= bit
	return dup
}

// The pages a corrSet keeps before it looks at how sparse they are, and
// the ids a page must hold on average for the pages to be kept.
const (
	sparsePages = 1024
	sparseIDs   = 8
)

// sparse turns the pages into the list.
func (s *corrSet) sparse() {
	s.list = make([][2]int64, 0, s.n)
	for k, p := range s.pages {
		for w, bits := range p {
			for b := 0; b < 64; b++ {
				if bits&(1<<b) != 0 {
					s.list = append(s.list, [2]int64{k[0], k[1]<<8 | int64(w)<<6 | int64(b)})
				}
			}
		}
	}
	s.pages, s.last = nil, nil
}

// dup returns a (pid, corr) added twice once the set went sparse, ok false
// when none was.
func (s *corrSet) dup() (pc [2]int64, ok bool) {
	sort.Slice(s.list, func(i, j int) bool {
		a, b := s.list[i], s.list[j]
		return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
	})
	for i := 1; i < len(s.list); i++ {
		if s.list[i] == s.list[i-1] {
			return s.list[i], true
		}
	}
	return pc, false
}

func newCrossCheck(ctx context.Context, format Format) *crossCheck {
	return &crossCheck{ctx: ctx, format: format, ranges: map[rangeKey][][2]int64{}, threads: map[[2]int64]*spans{}, streams: map[streamKey]*spans{},
		kernelStreams: map[streamKey]*spans{}, recordings: map[[2]int64][]recordingAt{}, graphStreams: map[streamKey]*spans{},
		waits: map[streamKey][]streamWait{}}
}

// meta takes the capture's GPU and link.
func (x *crossCheck) meta(m *records.Meta) {
	x.gpu, x.pcieGen, x.pcieWidth = m.GPU, m.PCIeGen, m.PCIeWidth
	x.graphTrace = m.Tracing.GraphTrace
	x.boundsSet = false
}

// bounds returns the bound of a copy within the GPU's memory (or a memset)
// and of a copy over the host link.
func (x *crossCheck) bounds() (device, host limits.Bound) {
	if !x.boundsSet {
		x.deviceBound, x.hostBound = limits.DeviceMemory(x.gpu), limits.HostLink(x.gpu, x.pcieGen, x.pcieWidth)
		x.boundsSet = true
	}
	return x.deviceBound, x.hostBound
}

// fail keeps the first problem found.
func (x *crossCheck) fail(where, problem string) {
	if x.err != nil {
		return
	}
	x.err = &inputerr.Error{Where: where, Problem: problem, Hint: damageHint(x.format)}
}

// tick counts a record and stops the read once the context is cancelled.
func (x *crossCheck) tick() error {
	x.seen++
	if x.seen%recordsPerCheck == 0 && x.ctx.Err() != nil {
		return context.Cause(x.ctx)
	}
	return x.err
}

// call checks one API call against the calls before it.
func (x *crossCheck) call(c *records.Call) {
	if c.Corr != 0 && x.calls.add(c.PID, c.Corr) {
		x.fail(callWhere(c.Row, c.Name, c.Corr), fmt.Sprintf("another API call of process %d has the same correlation id, where each call has its own: the trace holds a call twice, or two traces were joined", c.PID))
	}
	x.lastThread.of(x.threads, [2]int64{c.PID, c.TID}).add(c.Start, c.End)
	k := x.kindsOf(c.Name)
	if !x.joined && k.copy {
		x.copyCalls.add(callStart{pid: c.PID, corr: c.Corr, start: c.Start, end: c.End, result: c.Result, name: x.names.id(c.Name)})
	}
	if c.Corr != 0 {
		name := c.Name // the readers strip its _vNNNN suffix
		if k.sync {
			x.syncCalls.add(callStart{pid: c.PID, corr: c.Corr, start: c.Start, end: c.End, name: x.names.id(name)})
		}
		if k.record {
			x.recordCalls.add(callStart{pid: c.PID, corr: c.Corr, start: c.Start, end: c.End, name: x.names.id(name)})
		}
	}
	if c.Result == 0 && k.graph {
		x.graphLaunches++
	}
	if c.Corr != 0 && k.launch {
		switch {
		case x.launchCalls.len() == 0:
			x.launchPID = c.PID
		case x.launchPID != c.PID:
			x.launchPID = -1
		}
		x.launchCalls.add(callStart{pid: c.PID, corr: c.Corr, start: c.Start, end: c.End, result: c.Result, name: x.names.id(c.Name)})
	}
}

// callKinds is what one API name is, among the kinds crossCheck.call
// tells apart.
type callKinds struct {
	copy, sync, record, graph, launch bool
}

// kindsOf returns what name is, looked up once for each name the cache
// holds.
func (x *crossCheck) kindsOf(name string) callKinds {
	if k, ok := x.kinds.Get(name); ok {
		return k
	}
	_, sync := nsysdb.SyncKindOfCall(name)
	k := callKinds{copy: nsysdb.IsCopyAPI(name), sync: sync,
		record: nsysdb.IsEventRecordAPI(name), graph: nsysdb.IsGraphLaunch(name), launch: nsysdb.IsLaunchAPI(name)}
	x.kinds.Put(name, k)
	return k
}

// callOf finds the copy call read with the operation's process and
// correlation id, nil when none was read.
func (x *crossCheck) callOf(o *records.Op) *callStart {
	return x.copyCalls.find(o.PID, o.Corr)
}

// launchOf finds the launch call read with the kernel's process and
// correlation id, nil when none was read.
func (x *crossCheck) launchOf(o *records.Op) *callStart {
	if o.PID == 0 && x.launchPID > 0 {
		return x.launchCalls.find(x.launchPID, o.Corr)
	}
	return x.launchCalls.find(o.PID, o.Corr)
}

// callList is a list of calls kept to be found by process and
// correlation id, one list a process: each read into a chunked list, which
// never moves what it holds as it grows, and moved into one slice in
// correlation-id order when first searched (again once more came). A
// process's calls come in the order of their correlation ids, which count
// up in each process, so a list read in time order needs no sort, however
// the processes' calls were interleaved.
type callList struct {
	procs []procCalls
	at    map[int64]int // procs' index by process
	last  int           // the index of the process added to last
	n     int
}

// procCalls are one process's calls of a callList.
type procCalls struct {
	pid    int64
	read   chunked.List[callStart]
	calls  []callStart
	sorted bool
}

// add keeps c.
func (l *callList) add(c callStart) {
	if l.n == 0 || l.procs[l.last].pid != c.pid {
		k, ok := l.at[c.pid]
		if !ok {
			if l.at == nil {
				l.at = map[int64]int{}
			}
			k = len(l.procs)
			l.at[c.pid] = k
			l.procs = append(l.procs, procCalls{pid: c.pid})
		}
		l.last = k
	}
	p := &l.procs[l.last]
	p.read.Add(c)
	p.sorted = false
	l.n++
}

// len is how many calls the list holds.
func (l *callList) len() int { return l.n }

// find returns the call of process pid with correlation id corr, nil
// when none was kept (or corr is 0).
func (l *callList) find(pid, corr int64) *callStart {
	if corr == 0 || l.n == 0 {
		return nil
	}
	k, ok := l.at[pid]
	if !ok {
		return nil
	}
	p := &l.procs[k]
	if !p.sorted {
		p.calls = p.read.AppendTo(p.calls)
		if !slices.IsSortedFunc(p.calls, byCorr) {
			slices.SortFunc(p.calls, byCorr)
		}
		p.sorted = true
	}
	calls := p.calls
	i := sort.Search(len(calls), func(i int) bool { return calls[i].corr >= corr })
	if i < len(calls) && calls[i].corr == corr {
		return &calls[i]
	}
	return nil
}

// byCorr orders one process's calls by correlation id.
func byCorr(a, b callStart) int { return cmp.Compare(a.corr, b.corr) }

// op checks one GPU operation: its rate, that it started after its call,
// a kernel's launch; it keeps a copy's span on its stream.
func (x *crossCheck) op(o *records.Op) {
	where := func() string { return opWhere(o.Row, opWhat(o), o.Corr) }
	if o.Kind != records.OpKernel && o.Bytes > 0 && o.Duration() == 0 {
		// Moving a byte takes time: a copy or memset of bytes in no time
		// is an infinite bandwidth, however few the bytes (a rate bound
		// alone passes a few bytes in 1 ns).
		x.fail(where(), fmt.Sprintf("%d bytes in 0 ns (it ends when it starts): an infinite bandwidth, which no %s has: the time or the size is wrong", o.Bytes, opNoun(o.Kind)))
	}
	if o.Kind != records.OpKernel && o.Bytes > 0 {
		device, host := x.bounds()
		bound, memory := device, true
		if o.Kind == records.OpCopy && hostDevice(o.Copy) {
			bound, memory = host, false
		}
		if why := bound.Exceeded(float64(o.Bytes)/float64(max(o.Duration(), 1)), memory); why != "" {
			x.fail(where(), fmt.Sprintf("%d bytes in %d ns: %s: the time or the size is wrong", o.Bytes, o.Duration(), why))
		}
	}
	callName, callStart, callEnd, result := "", int64(0), int64(0), int64(0)
	switch {
	case o.Call != nil:
		callName, callStart, callEnd, result = o.Call.Name, o.Call.Start, o.Call.End, o.Call.Result
	case o.Kind == records.OpCopy:
		if c := x.callOf(o); c != nil {
			callName, callStart, callEnd, result = x.names.of(c.name), c.start, c.end, c.result
		}
	case o.Kind == records.OpKernel:
		// Only its start and result are checked: a launch returns before
		// its kernel runs, and a launch that failed runs none.
		if c := x.launchOf(o); c != nil {
			callName, callStart, callEnd, result = x.names.of(c.name), c.start, c.end, c.result
		}
	}
	if o.Kind == records.OpCopy && deviceOnly(o.Copy) && (hostMemory(o.Src) || hostMemory(o.Dst)) {
		x.fail(where(), fmt.Sprintf("a %s copy, which moves device memory only, from %s to %s memory: its copy kind and its memory kinds contradict each other", o.Copy, o.Src, o.Dst))
	}
	switch {
	case callName == "":
	case o.Start < callStart-clockSkewNs:
		x.fail(where(), fmt.Sprintf("starts at %d ns, %d ns before the %s call that issued it starts (%d ns): an operation cannot run before it is asked for",
			o.Start, callStart-o.Start, callName, callStart))
	case returnsWhenDone(o, callName) && o.End > callEnd+returnSlackNs:
		x.fail(where(), fmt.Sprintf("ends at %d ns, %d ns after the blocking %s call that issued it returned (%d ns), where the call returns once its %s copy is done: a copy cannot outlast the call that waited for it",
			o.End, o.End-callEnd, callName, callEnd, o.Copy))
	case result != 0 && o.Kind == records.OpCopy:
		x.fail(where(), fmt.Sprintf("the %s call that issued it returned error %d, yet the copy ran: a failed call copies nothing", callName, result))
	case result != 0 && o.Kind == records.OpKernel:
		x.fail(where(), fmt.Sprintf("the %s call that launched it returned error %d, yet the kernel ran: a failed launch runs nothing", callName, result))
	case o.Kind == records.OpCopy && o.GraphNode == 0 && o.Migration == "" && !strings.Contains(callName, "Batch") && o.Corr != 0 && x.copies.add(o.PID, o.Corr):
		x.fail(where(), fmt.Sprintf("a second copy of the %s call with this correlation id, where a copy call makes one copy: the trace holds a copy twice", callName))
	}
	if o.Kind == records.OpKernel {
		x.lastKernels.of(x.kernelStreams, streamKey{o.PID, o.Device, o.Stream}).add(o.Start, o.End)
	}
	switch {
	case o.GraphNode != 0:
		return // a graph's nodes may run side by side on its stream
	case o.Kind == records.OpKernel:
		// Kernels may overlap on a stream (programmatic dependent launch:
		// JAX's on the H200 do, by up to 256 ns), but one launch runs one
		// kernel; a report cannot tell a graph's kernels apart, which share
		// their launch's correlation id, but a kernel whose call is a
		// launch of one kernel it can.
		oneLaunch := x.format != FormatCSV || callName != "" && !nsysdb.IsGraphLaunch(callName)
		if o.Corr != 0 && oneLaunch && x.kernels.add(o.PID, o.Corr) {
			x.fail(where(), fmt.Sprintf("another kernel of process %d has the same correlation id, where one launch runs one kernel: the trace holds a kernel twice, or two traces were joined", o.PID))
		}
		return
	case o.Kind != records.OpCopy:
		return
	}
	x.lastStream.of(x.streams, streamKey{o.PID, o.Device, o.Stream}).add(o.Start, o.End)
}

// sync checks a synchronisation record: that it lies within the call
// that made it, and that the copies and kernels it waited for ended within
// the wait: those that started on its stream (a stream sync) or on any
// stream of its device (a context sync) before the wait began. An event
// synchronisation is checked against the recording of its event it
// waited for (the last whose call began before the wait): the work its
// stream began before that call ends within the wait.
func (x *crossCheck) sync(s *records.Sync) {
	if s.Corr != 0 && x.syncs.add(s.PID, s.Corr) {
		x.fail(fmt.Sprintf("%s synchronisation, correlation id %d of process %d", s.Kind, s.Corr, s.PID),
			"a second synchronisation record of the call with this correlation id, where a call synchronises once: the trace holds a record twice, or two traces were joined")
		return
	}
	c := x.syncCalls.find(s.PID, s.Corr)
	if c != nil && (s.Start < c.start-clockSkewNs || s.End > c.end+clockSkewNs) {
		x.fail(fmt.Sprintf("%s synchronisation, correlation id %d of process %d", s.Kind, s.Corr, s.PID),
			fmt.Sprintf("the record runs [%d, %d ns], outside the %s call that made it [%d, %d ns]: a call's wait lies within the call", s.Start, s.End, x.names.of(c.name), c.start, c.end))
		return
	}
	if s.PID == 0 {
		return // no process to tie it to its streams
	}
	// waited: the record is of a call that waits until the work is done,
	// not of a query, which nsys records whether or not it found the work
	// done.
	waited := c != nil && !strings.Contains(x.names.of(c.name), "Query")
	var keys []streamKey
	switch {
	case s.Kind == records.SyncStream && s.Stream != records.NoID:
		keys = []streamKey{{s.PID, s.Device, s.Stream}}
	case s.Kind == records.SyncContext:
		seen := map[streamKey]bool{}
		for _, m := range []map[streamKey]*spans{x.streams, x.kernelStreams, x.graphStreams} {
			for k := range m {
				if k.pid == s.PID && k.device == s.Device && !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].stream < keys[j].stream })
	case s.Kind == records.SyncEvent && s.Event != records.NoID && waited:
		// The work of the stream that recorded the event, begun before the
		// last recording whose call began before the wait.
		if last := x.recordingBefore(s.PID, s.Event, s.Start); last != nil {
			if !x.outlasts(last.stream, last.at-clockSkewNs, s, true) {
				x.waitedThrough(last.stream, last.at, s)
			}
		}
		return
	case s.Kind == records.SyncStreamWait && s.Stream != records.NoID && s.Event != records.NoID:
		if last := x.recordingBefore(s.PID, s.Event, s.Start); last != nil {
			k := streamKey{s.PID, s.Device, s.Stream}
			ws := x.waits[k]
			if n := len(ws); n > 0 && ws[n-1].at > s.Start {
				x.disordered = true
			}
			x.waits[k] = append(ws, streamWait{at: s.Start, rec: *last})
		}
		return
	}
	for _, k := range keys {
		if x.outlasts(k, s.Start, s, waited) {
			return
		}
		if waited && s.Kind == records.SyncStream && x.waitedThrough(k, s.Start, s) {
			return
		}
	}
}

// waitedThrough fails where work that a wait on stream k, begun before
// at, held the stream for outlasts the synchronisation s: a stream that
// waited (cudaStreamWaitEvent) for another's recording ran nothing after
// the wait until the work that recording stood for was done, so a host
// wait for the first stream waited for that work too. It follows the last
// such wait of each stream back, for as many steps as there are streams
// that waited, and one: a chain of distinct streams is followed whole,
// however long (real pipelines chain two or three); one that comes back to
// a stream it passed (two streams waiting on each other every step) is cut
// after as many steps, not followed back to the capture's start.
func (x *crossCheck) waitedThrough(k streamKey, at int64, s *records.Sync) bool {
	if len(x.waits) == 0 {
		return false
	}
	if x.disordered {
		x.deferred = append(x.deferred, deferredSync{stream: k, at: at, end: s.End, corr: s.Corr, kind: s.Kind})
		return false
	}
	for range len(x.waits) + 1 {
		ws := x.waits[k]
		i := sort.Search(len(ws), func(i int) bool { return ws[i].at >= at }) - 1
		if i < 0 {
			return false
		}
		w := ws[i].rec
		if x.outlasts(w.stream, w.at-clockSkewNs, s, true) {
			return true
		}
		k, at = w.stream, w.at
	}
	return false
}

// outlasts fails where the copy of stream k that started before from and
// ended last, or with kernels its kernel, outlasts the synchronisation s
// that waited for it.
func (x *crossCheck) outlasts(k streamKey, from int64, s *records.Sync, kernels bool) bool {
	for _, w := range []struct {
		what string
		sp   *spans
	}{{"copy", x.streams[k]}, {"kernel", x.kernelStreams[k]}, {"graph launch", x.graphStreams[k]}} {
		if w.sp == nil || w.what != "copy" && !kernels {
			continue
		}
		if c, ok := w.sp.before(from); ok && c.end > s.End+clockSkewNs {
			x.fail(fmt.Sprintf("stream %d of process %d, device %d", k.stream, k.pid, k.device),
				fmt.Sprintf("the %s started at %d ns ends at %d ns, %d ns after the %s synchronisation (correlation id %d) that waited for it ended (%d ns): a %s cannot outlast the wait for it",
					w.what, c.start, c.end, c.end-s.End, s.Kind, s.Corr, s.End, w.what))
			return true
		}
	}
	return false
}

// recordingBefore is the last recording of event ev of process pid whose
// call began before at (the first kept of those that began at once), nil
// for none. The recordings are put in order of their calls once, when
// the synchronisations that look them up begin, so that a capture
// recording one event and waiting for it every step takes a search a
// wait, not a look at every recording.
func (x *crossCheck) recordingBefore(pid, ev, at int64) *recordingAt {
	if !x.sortedRec {
		for _, rs := range x.recordings {
			slices.SortStableFunc(rs, func(a, b recordingAt) int { return cmp.Compare(a.at, b.at) })
		}
		x.sortedRec = true
	}
	rs := x.recordings[[2]int64{pid, ev}]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].at >= at }) - 1
	if i < 0 {
		return nil
	}
	for i > 0 && rs[i-1].at == rs[i].at {
		i--
	}
	return &rs[i]
}

// event keeps an event recording, for the event synchronisations that
// waited for it: one recording per recording call.
func (x *crossCheck) event(e *records.EventRecord) {
	if e.Corr == 0 {
		return
	}
	if x.events.add(e.PID, e.Corr) {
		x.fail(fmt.Sprintf("recording of event %d, correlation id %d of process %d", e.Event, e.Corr, e.PID),
			"a second recording by the call with this correlation id, where a call records its event once: the trace holds a record twice, or two traces were joined")
		return
	}
	if c := x.recordCalls.find(e.PID, e.Corr); c != nil && e.Event != records.NoID {
		k := [2]int64{e.PID, e.Event}
		x.recordings[k] = append(x.recordings[k], recordingAt{at: c.start, stream: streamKey{e.PID, e.Device, e.Stream}})
		x.sortedRec = false
	}
}

// graph checks that each graph launch call has one launch record, and
// keeps its span on its stream for the synchronisations that waited for it.
func (x *crossCheck) graph(g *records.GraphLaunch) {
	if g.Corr != 0 && x.graphs.add(g.PID, g.Corr) {
		x.fail(fmt.Sprintf("graph launch, correlation id %d of process %d", g.Corr, g.PID),
			"a second record of the graph launch call with this correlation id, where a call launches its graph once: the trace holds a launch twice, or two traces were joined")
		return
	}
	k := streamKey{g.PID, g.Device, g.Stream}
	if x.graphStreams[k] == nil {
		x.graphStreams[k] = &spans{}
	}
	x.graphStreams[k].add(g.Start, g.End)
}

// Where the records a finish error is about came from.
const (
	fromCalls  = "calls"
	fromCopies = "copies"
	fromRanges = "ranges"
	fromSyncs  = "synchronisations"
)

// rangeEnd writes a range's end, "open" for one never popped.
func rangeEnd(end int64) string {
	if end == math.MaxInt64 {
		return "open"
	}
	return strconv.FormatInt(end, 10) + " ns"
}

// rng keeps an NVTX push/pop range for the check that they nest.
func (x *crossCheck) rng(r *records.Range) {
	end := r.End
	if r.Open {
		end = math.MaxInt64
	}
	k := rangeKey{r.PID, r.TID, r.Domain}
	x.ranges[k] = append(x.ranges[k], [2]int64{r.Start, end})
}

// nesting returns two ranges of one stack that overlap without one
// holding the other, ok false when every pair nests: a range is pushed
// inside the innermost open one and popped before it, so a pair that
// overlaps otherwise was moved or comes from another trace.
func nesting(rs [][2]int64) (a, b [2]int64, ok bool) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i][0] != rs[j][0] {
			return rs[i][0] < rs[j][0]
		}
		return rs[i][1] > rs[j][1] // the outer of two pushed at once first
	})
	var stack [][2]int64
	for _, r := range rs {
		for len(stack) > 0 && stack[len(stack)-1][1] <= r[0] {
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && r[1] > stack[n-1][1] {
			return stack[n-1], r, true
		}
		stack = append(stack, r)
	}
	return a, b, false
}

// finish makes the checks that need every record: one call at a time per
// thread, one copy at a time per stream. from says whether an error is
// about calls or copies (fromCalls, fromCopies).
func (x *crossCheck) finish() (from string, err error) {
	if x.err != nil {
		return "", x.err
	}
	if x.disordered {
		for _, ws := range x.waits {
			slices.SortStableFunc(ws, func(a, b streamWait) int { return cmp.Compare(a.at, b.at) })
		}
		x.disordered = false
		for i, d := range x.deferred {
			if i%recordsPerCheck == 0 && x.ctx.Err() != nil {
				return "", context.Cause(x.ctx)
			}
			if x.waitedThrough(d.stream, d.at, &records.Sync{Kind: d.kind, Corr: d.corr, End: d.end}) {
				return fromSyncs, x.err
			}
		}
		x.deferred = nil
	}
	// Traced whole, every graph launch that succeeded has its record
	// (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): fewer, and the work of the
	// others is in no table, while nsys's count of the CUDA events it
	// collected does not count them to tell.
	if x.graphRead && x.graphTrace == "graph" && x.graphs.n < x.graphLaunches {
		x.fail("graph launches", fmt.Sprintf("%d graph launch calls succeeded, traced whole (--cuda-graph-trace=graph), but the trace holds %d graph launch records, where each launch has one: records were lost or deleted, so what the graphs ran is unknown",
			x.graphLaunches, x.graphs.n))
		return fromCalls, x.err
	}
	for _, d := range []struct {
		set  *corrSet
		what string
		from string
	}{{&x.calls, "API calls", fromCalls}, {&x.copies, "copies of copy calls", fromCopies}} {
		if pc, dup := d.set.dup(); dup && d.set.list != nil {
			x.fail(fmt.Sprintf("correlation id %d of process %d", pc[1], pc[0]),
				fmt.Sprintf("it names two %s, where each has its own: the trace holds a record twice, or two traces were joined", d.what))
			return d.from, x.err
		}
	}
	for _, k := range sortedKeys(x.ranges, func(a, b rangeKey) bool {
		return a.pid < b.pid || a.pid == b.pid && (a.tid < b.tid || a.tid == b.tid && a.domain < b.domain)
	}) {
		if a, b, ok := nesting(x.ranges[k]); ok {
			x.fail(fmt.Sprintf("thread %d/%d", k.pid, k.tid), fmt.Sprintf("two NVTX push/pop ranges, [%d, %s] and [%d, %s], overlap without one holding the other, where a thread's ranges nest: a range was moved, or two traces were joined",
				a[0], rangeEnd(a[1]), b[0], rangeEnd(b[1])))
			return fromRanges, x.err
		}
	}
	for _, k := range sortedKeys(x.threads, func(a, b [2]int64) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }) {
		t := x.threads[k]
		if a, b, ok := t.overlap(); ok {
			x.fail(fmt.Sprintf("thread %d/%d", k[0], k[1]),
				fmt.Sprintf("two API calls, [%d, %d ns] and [%d, %d ns], overlap in time, where a thread makes one call at a time: the trace holds a call twice, or two traces were joined",
					a.start, a.end, b.start, b.end))
			return fromCalls, x.err
		}
	}
	for _, k := range sortedKeys(x.streams, func(a, b streamKey) bool {
		return a.pid < b.pid || a.pid == b.pid && (a.device < b.device || a.device == b.device && a.stream < b.stream)
	}) {
		s := x.streams[k]
		if a, b, ok := s.overlap(); ok {
			x.fail(fmt.Sprintf("stream %d of process %d, device %d", k.stream, k.pid, k.device),
				fmt.Sprintf("two copies, [%d, %d ns] and [%d, %d ns], overlap in time, where a stream runs one copy at a time: the trace holds a copy twice, or two traces were joined",
					a.start, a.end, b.start, b.end))
			return fromCopies, x.err
		}
		// A stream runs a copy after the kernels before it end and before
		// those after it begin (only kernels may overlap each other).
		if ks := x.kernelStreams[k]; ks != nil {
			if c, kn, ok := crossing(s, ks); ok {
				x.fail(fmt.Sprintf("stream %d of process %d, device %d", k.stream, k.pid, k.device),
					fmt.Sprintf("a copy [%d, %d ns] and a kernel [%d, %d ns] overlap in time, where a stream runs a copy only once the kernels before it ended, and a kernel only once the copies before it ended: a record was moved or lengthened, or two traces were joined",
						c.start, c.end, kn.start, kn.end))
				return fromCopies, x.err
			}
		}
	}
	return "", nil
}

// sortedKeys lists a map's keys in the order less gives.
func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) bool) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// hostDevice reports whether a copy crosses the link between host and
// device.
func hostDevice(k vocab.CopyKind) bool { return k == vocab.CopyHtoD || k == vocab.CopyDtoH }

// deviceOnly reports whether a copy kind moves device memory alone: a
// device-to-device or a peer copy has no host side.
func deviceOnly(k vocab.CopyKind) bool { return k == vocab.CopyDtoD || k == vocab.CopyPtoP }

// hostMemory reports whether a memory kind is host memory, pageable or
// pinned (managed memory lives on either side).
func hostMemory(m vocab.MemKind) bool { return m == vocab.MemPageable || m == vocab.MemPinned }

// returnsWhenDone says whether the copy's call returns only once the copy
// is done: a blocking copy call (neither async nor a graph's launch, nor a
// batch) of a device-to-host copy, or of a host-to-device one from pinned
// memory.
func returnsWhenDone(o *records.Op, call string) bool {
	if o.Kind != records.OpCopy || o.GraphNode != 0 || o.Migration != "" ||
		strings.Contains(call, "Async") || strings.Contains(call, "Batch") || nsysdb.IsGraphLaunch(call) {
		return false
	}
	return o.Copy == vocab.CopyDtoH || o.Copy == vocab.CopyHtoD && o.Src == vocab.MemPinned
}

// opWhat names a GPU operation in a message.
func opWhat(o *records.Op) string {
	switch o.Kind {
	case records.OpCopy:
		return "memory copy " + string(o.Copy)
	case records.OpKernel:
		return "kernel " + o.Name
	}
	return "memset"
}

// callWhere names an API call: its data row in a CSV report, else its
// correlation id.
func callWhere(row int, name string, corr int64) string {
	return opWhere(row, "CUDA API call "+name, corr)
}

// opNoun names an operation of kind k.
func opNoun(k records.OpKind) string {
	if k == records.OpMemset {
		return "memset"
	}
	return "copy"
}

// opWhere names a record: its data row in a CSV report, else its
// correlation id.
func opWhere(row int, what string, corr int64) string {
	switch {
	case row > 0:
		return fmt.Sprintf("data row %d (%s)", row, what)
	case corr != 0:
		return fmt.Sprintf("%s, correlation id %d", what, corr)
	}
	return what
}

// damageHint says what to do about an input of the format that holds
// impossible data.
func damageHint(f Format) string {
	switch f {
	case FormatSQLite, FormatNsysRep:
		return "the export is damaged or was edited; " + nsysdb.ExportHint
	case FormatCSV:
		return "the report is damaged or was edited; make it again with nsys stats --format csv"
	case FormatTranscript:
		return "the transcript should be the unedited stdout of the pinned program"
	case FormatMeasurements:
		return "see docs/measurements.md for the format"
	}
	return "the file is damaged or was edited; make it again from the capture"
}
