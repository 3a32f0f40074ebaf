// Package records holds the typed records every capture reader emits and
// every consumer reads: API calls, GPU operations (copies, kernels,
// memsets) tied to the calls that launched them, NVTX ranges,
// synchronisation records, event records, CUDA graph launches, what nsys
// says about its own capture, and the facts an input cannot provide.
//
// A reader of one format (nsys SQLite, nsys CSV reports, the lesson
// program's own files) hands its records to a Handler, one kind after
// another, and never sorts them globally: a consumer that needs time order
// sorts what it keeps. Each Handler field is optional; a reader skips the
// queries of the kinds nobody asked for.
package records

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// Fact names one kind of information an input may or may not hold.
type Fact string

// The facts consumers need. A reader reports every fact its input cannot
// provide through Handler.Gap.
const (
	FactAPITrace     Fact = "api-trace"       // per-call CUDA runtime API records
	FactAPISummary   Fact = "api-summary"     // per-name totals (cuda_api_sum)
	FactMemcpy       Fact = "memcpy-trace"    // per-copy GPU memcpy activity records
	FactMemcpyBytes  Fact = "memcpy-bytes"    // bytes per copy or per operation
	FactMemoryKinds  Fact = "memory-kinds"    // source/destination memory kind of each copy
	FactCorrelation  Fact = "correlation"     // API call <-> GPU activity correlation ids
	FactKernels      Fact = "kernel-trace"    // per-launch kernel activity records
	FactNVTX         Fact = "nvtx-ranges"     // per-instance NVTX push/pop ranges with times
	FactNVTXSummary  Fact = "nvtx-summary"    // per-name NVTX totals (nvtx_sum)
	FactProgram      Fact = "program-numbers" // the program's own timings (transcript, results JSON)
	FactProcessScope Fact = "process-scope"   // process and thread ids of API calls
	FactSync         Fact = "sync-trace"      // CUPTI synchronisation records (stream, event, context syncs)
	FactEvents       Fact = "event-trace"     // CUDA event records (which stream recorded each event)
	FactMemSummary   Fact = "mem-summary"     // per-copy-kind totals (cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum)
	FactStacks       Fact = "call-stacks"     // call stacks of CUDA calls (nsys profile --cudabacktrace)
	FactGPU          Fact = "gpu"             // the GPU each copy and kernel ran on (TARGET_INFO_GPU)
	FactSchema       Fact = "schema"          // an export schema whose columns mean what nsyscheck reads them as
)

// Gap records a fact an input cannot provide and why.
type Gap struct {
	Fact   Fact   `json:"fact"`
	Reason string `json:"reason"`
}

// Call is one CUDA runtime or driver API call. Times are nanoseconds on the
// capture's clock.
type Call struct {
	Name   string // without the _vNNNN suffix
	Start  int64
	End    int64
	Result int64 // the call's return value (0 success)
	Corr   int64 // correlation id, unique within a process
	PID    int64
	TID    int64
	Thread string // the thread's name, "" when the input has none
	Row    int    // 1-based data row in the source file (CSV), 0 otherwise
	// Stack is the call stack nsys took of the call, where the selection
	// asked for it (Selection.Stacks) and the input holds one; nil
	// otherwise. It is shared, never to be changed.
	Stack *Stack
}

// Duration is the call's duration in nanoseconds.
func (c *Call) Duration() int64 { return c.End - c.Start }

// OpKind says what a GPU operation does.
type OpKind uint8

// GPU operation kinds.
const (
	OpCopy OpKind = iota + 1
	OpKernel
	OpMemset
)

// String names the kind.
func (k OpKind) String() string {
	switch k {
	case OpCopy:
		return "copy"
	case OpKernel:
		return "kernel"
	case OpMemset:
		return "memset"
	}
	return "unknown"
}

// Op is one GPU operation: a memory copy, a kernel or a memset, with the
// call that launched it where the reader could join it.
type Op struct {
	Kind   OpKind
	Start  int64
	End    int64
	Corr   int64
	PID    int64
	Device int64
	Stream int64

	// Copies and memsets.
	Bytes int64
	// Copies only: direction and the memory kind of each side.
	Copy     vocab.CopyKind
	Src, Dst vocab.MemKind
	// Migration is the unified-memory migration cause ("" for an ordinary
	// copy): "prefetch", "fault", "eviction", ... as the reader names it,
	// "unknown" for a migration whose cause the input does not give.
	Migration string

	// Kernels only: the short (base) name.
	Name string

	// GraphNode is the CUDA graph node id the operation ran as, 0 when it
	// was launched on its own, UnknownNode for a node of a graph launch
	// whose id the input does not give.
	GraphNode int64

	// Call is the API call that launched the operation (joined by
	// correlation id within the process), nil when the trace holds none.
	Call *Call
	// Row is the 1-based data row in the source file (CSV), 0 otherwise.
	Row int
}

// UnknownNode is Op.GraphNode for an operation a graph launch ran whose
// node the input does not name (a CSV report).
const UnknownNode int64 = -1

// Duration is the operation's GPU duration in nanoseconds.
func (o *Op) Duration() int64 { return o.End - o.Start }

// Range is one NVTX push/pop range instance.
type Range struct {
	Name   string
	Domain string
	Start  int64
	End    int64 // 0 when Open
	Open   bool  // never popped before the capture ended
	PID    int64
	TID    int64
}

// Contains reports whether the span [start, end] lies inside the range. An
// open range extends to the end of the capture.
func (r *Range) Contains(start, end int64) bool {
	return start >= r.Start && (r.Open || end <= r.End)
}

// SyncKind says what a synchronisation record waited for.
type SyncKind uint8

// Synchronisation kinds (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION).
const (
	SyncUnknown    SyncKind = iota
	SyncEvent               // cudaEventSynchronize, or a cudaEventQuery that found the event done
	SyncStreamWait          // cudaStreamWaitEvent: a stream waits for an event
	SyncStream              // cudaStreamSynchronize
	SyncContext             // cudaDeviceSynchronize, cuCtxSynchronize
)

// String names the kind.
func (k SyncKind) String() string {
	switch k {
	case SyncEvent:
		return "event"
	case SyncStreamWait:
		return "stream-wait-event"
	case SyncStream:
		return "stream"
	case SyncContext:
		return "context"
	}
	return "unknown"
}

// NoID marks an absent stream or event id.
const NoID int64 = -1

// Sync is one synchronisation record: the host (or, for SyncStreamWait, a
// stream) waited from Start to End.
type Sync struct {
	Kind   SyncKind
	Start  int64
	End    int64
	Corr   int64 // the call that synchronised
	PID    int64
	Device int64
	Stream int64 // the stream synchronised or made to wait, NoID for none
	Event  int64 // the event waited for, NoID for none
	// Seq names the recording of Event waited for (eventSyncId, the
	// recording's EventRecord.Seq), 0 unknown.
	Seq int64
}

// EventRecord is one recording of a CUDA event on a stream
// (CUPTI_ACTIVITY_KIND_CUDA_EVENT): the event completes when the work
// launched on Stream before the recording call has finished.
type EventRecord struct {
	Corr   int64 // the cudaEventRecord call
	PID    int64
	Device int64
	Stream int64
	Event  int64
	// Seq tells recordings of one event apart (eventSyncId), 0 unknown.
	Seq int64
}

// GraphLaunch is one CUDA graph launch traced whole
// (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): its copies and kernels are not in the
// trace one by one.
type GraphLaunch struct {
	Start  int64
	End    int64
	Corr   int64
	PID    int64
	Device int64
	Stream int64
	Graph  int64 // the graph's id, 0 unknown
}

// StreamKind says how a stream was made, which decides how it is ordered
// against its context's legacy default (NULL) stream.
type StreamKind uint8

// Stream kinds (CUPTI's stream creation flags).
const (
	// StreamKindUnknown: the input does not say.
	StreamKindUnknown StreamKind = iota
	// StreamBlocking: made without cudaStreamNonBlocking. Its work waits
	// for the NULL stream's work launched before it, and the NULL stream's
	// work waits for its work launched before that.
	StreamBlocking
	// StreamNonBlocking: made with cudaStreamNonBlocking; not ordered
	// against the NULL stream.
	StreamNonBlocking
	// StreamNull: the legacy default stream of its context.
	StreamNull
)

// String names the kind.
func (k StreamKind) String() string {
	switch k {
	case StreamBlocking:
		return "blocking"
	case StreamNonBlocking:
		return "non-blocking"
	case StreamNull:
		return "null"
	}
	return "unknown"
}

// Stream is one stream of the program as the trace lists it
// (TARGET_INFO_CUDA_STREAM), with its context and how it was made.
type Stream struct {
	PID     int64
	Context int64
	ID      int64
	Kind    StreamKind
}

// Severity is the level of a message nsys wrote about its own capture.
type Severity uint8

// Severities of nsys's diagnostics (ENUM_DIAGNOSTIC_SEVERITY_LEVEL).
const (
	SeverityUnknown Severity = iota
	SeverityInfo
	SeverityWarning
	SeverityError
	SeverityVerbose
)

// NsysDiag is one message nsys wrote about the capture it made or imported
// (DIAGNOSTIC_EVENT).
type NsysDiag struct {
	Severity  Severity
	Source    string
	Text      string
	Timestamp int64
}

// Tracing is what nsys was asked to trace, where the input records it.
type Tracing struct {
	Known bool // false: the input does not say (CSV reports, the program's files)
	CUDA  bool
	NVTX  bool
	OSRT  bool
	// GraphTrace is nsys's --cuda-graph-trace level: "graph", "node" or ""
	// when unknown.
	GraphTrace string
	// Backtraces says whether CUDA calls carry call stacks.
	Backtraces bool
	// PageFaults says whether nsys traced unified-memory page faults (on
	// the GPU or the CPU), which tell the migrations they cause.
	PageFaults bool
}

// Meta describes where and how a capture was made, as far as the input
// says.
type Meta struct {
	NsysVersion   string `json:"nsysVersion,omitempty"`
	SchemaVersion string `json:"schemaVersion,omitempty"`
	GPU           string `json:"gpu,omitempty"`
	Driver        string `json:"driver,omitempty"`
	CUDADriver    string `json:"cudaDriver,omitempty"` // e.g. "13000"
	OS            string `json:"os,omitempty"`
	// PCIe link of the GPU, where known (e.g. from the program's results).
	PCIeGen   int `json:"pcieGen,omitempty"`
	PCIeWidth int `json:"pcieWidth,omitempty"`
	// DurationNs is the trace's duration where the export records it, 0
	// otherwise.
	DurationNs int64 `json:"-"`
	// SessionStartNs is the wall-clock time the capture's session started
	// (ns since 1970, UTC) where the export records it, 0 otherwise: the
	// captures of one job's ranks started together.
	SessionStartNs int64 `json:"-"`
	// SessionStartFault says why the start the export records cannot be
	// a session's (0 ns, a NULL, two starts): "" where it records a real
	// one or none at all (SessionStartNs 0 then says the capture lacks it).
	SessionStartFault string `json:"-"`
	// Job names the job the capture's process ran in, where its
	// environment says (nsysdb.JobOf: a variable's name and a digest of
	// its value), "" otherwise.
	Job string `json:"-"`
	// Tracing is what nsys traced.
	Tracing Tracing `json:"-"`
	// Processes are the names of the processes the capture lists, one per
	// process (nsys records every process of the profiled tree, those that
	// made no CUDA call too), at most MaxProcessNames; nil where the format
	// lists none.
	Processes []string `json:"-"`
}

// MaxProcessNames bounds Meta.Processes: a capture of more processes lists
// the first names only.
const MaxProcessNames = 1024

// APISum is one row of a per-name API summary (cuda_api_sum): the calls of
// one API and their total, shortest and longest time in nanoseconds.
type APISum struct {
	Name    string // without the _vNNNN suffix
	Calls   int64
	TotalNs int64
	MinNs   int64 // 0 where the summary has no such column
	MaxNs   int64
	// Line is the report's line the row starts on, 0 where the input is
	// no report.
	Line int
}

// CopySum is one copy kind's totals (cuda_gpu_mem_time_sum and
// cuda_gpu_mem_size_sum, joined by kind).
type CopySum struct {
	Kind    vocab.CopyKind
	Count   int64
	TotalNs int64   // 0 where only the size summary was read
	TotalMB float64 // megabytes (1e6 bytes) as the summary rounds them; 0 if unknown
}

// RangeSum is one row of a per-name NVTX summary (nvtx_sum).
type RangeSum struct {
	Name      string // without the "domain:" prefix
	Domain    string
	Instances int64
	TotalNs   int64
}

// Counts is what a trace holds in number, beside its records: a reader
// counts them without decoding a record where the format allows.
type Counts struct {
	// Calls counts every CUDA API call of the trace, whatever the reader's
	// filters; FirstCall is the first one's start and LastCall the last
	// one's end: 0 without calls, and where Meta.DurationNs gives the
	// trace's duration instead (a reader need not look for them then).
	Calls               int64
	FirstCall, LastCall int64
	// Memsets counts the GPU memsets.
	Memsets int64
}

// ThreadCount is the number of API calls one thread made, and of the copy
// calls among them, by which a reader picks the program's thread.
type ThreadCount struct {
	PID         int64 `json:"pid"`
	TID         int64 `json:"tid"`
	Calls       int   `json:"calls"`       // all calls counted
	MemcpyAsync int   `json:"memcpyAsync"` // cudaMemcpyAsync calls among them
	Memcpy      int   `json:"memcpy"`      // cudaMemcpy calls among them
}

// Before reports whether thread a ranks before b as the program's thread:
// more cudaMemcpyAsync calls, then more cudaMemcpy calls, then more calls,
// then the lower process id, then the lower thread id.
func (a ThreadCount) Before(b ThreadCount) bool {
	if a.MemcpyAsync != b.MemcpyAsync {
		return a.MemcpyAsync > b.MemcpyAsync
	}
	if a.Memcpy != b.Memcpy {
		return a.Memcpy > b.Memcpy
	}
	if a.Calls != b.Calls {
		return a.Calls > b.Calls
	}
	if a.PID != b.PID {
		return a.PID < b.PID
	}
	return a.TID < b.TID
}

// Why says which step of the rule (Before) made t, the first of its
// capture's threads, the program's thread.
func (t ThreadCount) Why() string {
	switch {
	case t.MemcpyAsync > 0:
		return "the thread that issued the cudaMemcpyAsync calls"
	case t.Memcpy > 0:
		return "the thread with the most cudaMemcpy calls"
	}
	return "the thread with the most CUDA calls"
}

// Add counts n calls named name.
func (t *ThreadCount) Add(name string, n int) {
	t.Calls += n
	switch name {
	case "cudaMemcpyAsync":
		t.MemcpyAsync += n
	case "cudaMemcpy":
		t.Memcpy += n
	}
}

// SortThreads orders threads by Before: the first is the program's thread.
func SortThreads(ts []ThreadCount) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
}

// Selection says what a reader reads beside the kinds a Handler wants:
// which API calls, which kinds of GPU operation, and whether each copy comes
// with the call that issued it. Every reader takes one.
type Selection struct {
	// APINames, when not empty, limits the API calls read to these names
	// (without _vNNNN suffix). Empty reads every call.
	APINames []string
	// ProgramThread reads the API calls of the program's thread only: the
	// first by ThreadCount.Before, counting the calls APINames selects. GPU
	// operations are read where they belong to a call read (a reader that
	// cannot tell reads them all); the reader reports the calls it left out.
	ProgramThread bool
	// JoinCalls hands each copy the API call that issued it (Op.Call), by
	// correlation id within its process, and then needs no Call records.
	JoinCalls bool
	// Ops names the kinds of GPU operation to read; empty reads them all.
	Ops []OpKind
	// Stacks, with JoinCalls, hands the call of each copy from or to
	// pageable host memory its call stack (Call.Stack) where the input
	// holds one; an input that holds none says why through a FactStacks
	// gap. Only those calls' stacks are read, each stack once.
	Stacks bool
}

// WantsAPI reports whether calls named name are to be read.
func (s Selection) WantsAPI(name string) bool {
	if len(s.APINames) == 0 {
		return true
	}
	for _, n := range s.APINames {
		if n == name {
			return true
		}
	}
	return false
}

// WantsOp reports whether GPU operations of kind k are to be read.
func (s Selection) WantsOp(k OpKind) bool {
	if len(s.Ops) == 0 {
		return true
	}
	for _, w := range s.Ops {
		if w == k {
			return true
		}
	}
	return false
}

// Handler receives a reader's records. Every field is optional: a nil one
// means its kind is not wanted, and the reader need not read it. A non-nil
// error stops the reader, which returns it.
//
// Records arrive one kind after another in this order: Meta, Diag, Gap,
// Range, Call, Op, Sync, Event, Graph, Stream, APISum, CopySum, RangeSum,
// Counts.
// Within a kind they come in the
// input's own order; a consumer that needs time order sorts what it keeps.
// CallsAhead, where a reader calls it, comes once before the first Call.
// A record is the reader's to reuse once the function returns: keep a copy,
// not the pointer.
type Handler struct {
	Meta  func(*Meta) error
	Diag  func(*NsysDiag) error
	Gap   func(Gap) error
	Range func(*Range) error
	Call  func(*Call) error
	// CallsAhead is told how many calls the reader is about to hand on,
	// where it counted them before reading them (Selection.ProgramThread
	// picks the thread by counting its calls): a consumer that keeps every
	// call can make room for them once, instead of growing, or moving,
	// what it keeps. It is a hint of size: a consumer stays right when
	// more or fewer calls come.
	CallsAhead func(n int) error
	Op         func(*Op) error
	Sync       func(*Sync) error
	Event      func(*EventRecord) error
	Graph      func(*GraphLaunch) error
	// Stream lists the streams the input names with their kinds, where it
	// does (an export's TARGET_INFO_CUDA_STREAM).
	Stream func(*Stream) error

	APISum   func(*APISum) error
	CopySum  func(*CopySum) error
	RangeSum func(*RangeSum) error
	Counts   func(*Counts) error

	// Drain, where set, is called by a reader once it has handed on the
	// records of one table: a handler that handles them later than they
	// are given (Pipe) has handled every one when it returns, and returns
	// the first error it met, which the reader names as the table's.
	Drain func() error
}

// Tee returns a Handler that hands every record to each of hs in turn; a
// kind is wanted when any of them wants it.
func Tee(hs ...Handler) Handler {
	var t Handler
	for i := range hs {
		h := hs[i]
		t.Meta = chain(t.Meta, h.Meta)
		t.Diag = chain(t.Diag, h.Diag)
		t.Gap = chainValue(t.Gap, h.Gap)
		t.Range = chain(t.Range, h.Range)
		t.Call = chain(t.Call, h.Call)
		t.CallsAhead = chainValue(t.CallsAhead, h.CallsAhead)
		t.Op = chain(t.Op, h.Op)
		t.Sync = chain(t.Sync, h.Sync)
		t.Event = chain(t.Event, h.Event)
		t.Graph = chain(t.Graph, h.Graph)
		t.Stream = chain(t.Stream, h.Stream)
		t.APISum = chain(t.APISum, h.APISum)
		t.CopySum = chain(t.CopySum, h.CopySum)
		t.RangeSum = chain(t.RangeSum, h.RangeSum)
		t.Counts = chain(t.Counts, h.Counts)
		t.Drain = chainDrain(t.Drain, h.Drain)
	}
	return t
}

func chainDrain(a, b func() error) func() error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func() error {
		if err := a(); err != nil {
			return err
		}
		return b()
	}
}

func chain[T any](a, b func(*T) error) func(*T) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(v *T) error {
		if err := a(v); err != nil {
			return err
		}
		return b(v)
	}
}

func chainValue[T any](a, b func(T) error) func(T) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(v T) error {
		if err := a(v); err != nil {
			return err
		}
		return b(v)
	}
}
