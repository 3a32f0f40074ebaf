// Package capture holds the lesson's model of one profiled run — the
// calls, copies, kernels and ranges of its trace, the summaries and the
// program's own numbers — that the predictions query, and builds it from
// any input: source.Open tells the input, the reader of its format
// (nsyssqlite, nsyscsv, program) streams its records, and a collector
// keeps them (Load). Read is the one way both the model and the audit read
// a trace, so the two cannot read one input differently.
//
// Every input says which facts it cannot provide (see Gap), so that a
// consumer never mistakes a missing fact for an empty one.
package capture

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Format names the kind of input a Capture was read from.
type Format string

// The input formats nsyscheck reads.
const (
	FormatNsysRep      Format = "nsys-rep"
	FormatSQLite       Format = "sqlite"
	FormatCSV          Format = "csv"
	FormatTranscript   Format = "transcript"
	FormatMeasurements Format = "measurements" // also the program's results JSON
)

// APICall is one CUDA runtime (or driver) API call from the trace. Times are
// nanoseconds on the capture's clock.
type APICall struct {
	Name          string `json:"name"` // without the _vNNNN suffix
	Start         int64  `json:"start"`
	End           int64  `json:"end"`
	Result        int64  `json:"result"`
	CorrelationID int64  `json:"correlationId"`
	PID           int64  `json:"pid"`
	TID           int64  `json:"tid"`
	Thread        string `json:"thread,omitempty"`
	Row           int    `json:"-"` // 1-based data row in the source file (CSV) or 0
}

// Duration is the call's duration in nanoseconds.
func (c APICall) Duration() int64 { return c.End - c.Start }

// Memcpy is one GPU memory-copy activity record.
type Memcpy struct {
	Kind          vocab.CopyKind `json:"kind"`
	Src           vocab.MemKind  `json:"src"`
	Dst           vocab.MemKind  `json:"dst"`
	Bytes         int64          `json:"bytes"`
	Start         int64          `json:"start"`
	End           int64          `json:"end"`
	CorrelationID int64          `json:"correlationId"`
	Stream        int64          `json:"stream"`
	Device        int64          `json:"device"`
	PID           int64          `json:"pid"`
}

// Duration is the copy's GPU duration in nanoseconds.
func (m Memcpy) Duration() int64 { return m.End - m.Start }

// Kernel is one kernel launch's GPU activity record.
type Kernel struct {
	Name          string `json:"name"` // short (base) name
	Start         int64  `json:"start"`
	End           int64  `json:"end"`
	CorrelationID int64  `json:"correlationId"`
	Stream        int64  `json:"stream"`
	Device        int64  `json:"device"`
	PID           int64  `json:"pid"`
}

// Duration is the kernel's GPU duration in nanoseconds.
func (k Kernel) Duration() int64 { return k.End - k.Start }

// Range is one NVTX push/pop range instance.
type Range struct {
	Name   string `json:"name"`
	Domain string `json:"domain,omitempty"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`  // 0 when Open
	Open   bool   `json:"open"` // never popped before the capture ended
	PID    int64  `json:"pid"`
	TID    int64  `json:"tid"`
}

// Contains reports whether the instant span [start, end] lies inside the range.
// An open range extends to the end of the capture.
func (r Range) Contains(start, end int64) bool {
	return start >= r.Start && (r.Open || end <= r.End)
}

// APISummary is one row of the cuda_api_sum report: totals per API name.
type APISummary struct {
	Name    string `json:"name"`
	Calls   int64  `json:"calls"`
	TotalNs int64  `json:"totalNs"`
	MinNs   int64  `json:"minNs"`
	MaxNs   int64  `json:"maxNs"`
}

// MemSummary is one copy kind's totals from cuda_gpu_mem_time_sum and
// cuda_gpu_mem_size_sum.
type MemSummary struct {
	Kind    vocab.CopyKind `json:"kind"`
	Count   int64          `json:"count"`
	TotalNs int64          `json:"totalNs"`
	TotalMB float64        `json:"totalMB"` // megabytes (1e6 bytes) as the report rounds them; 0 if unknown
}

// RangeSummary is one row of the nvtx_sum report.
type RangeSummary struct {
	Name      string `json:"name"` // without the ":" domain prefix
	Domain    string `json:"domain,omitempty"`
	Instances int64  `json:"instances"`
	TotalNs   int64  `json:"totalNs"`
}

// Metadata describes where and how a capture was made, as far as the input says.
type Metadata struct {
	NsysVersion   string `json:"nsysVersion,omitempty"`
	SchemaVersion string `json:"schemaVersion,omitempty"`
	GPU           string `json:"gpu,omitempty"`
	Driver        string `json:"driver,omitempty"`
	CUDADriver    string `json:"cudaDriver,omitempty"` // e.g. "13000"
	OS            string `json:"os,omitempty"`
	// PCIe link of the GPU, where known (e.g. from the program's results).
	PCIeGen   int `json:"pcieGen,omitempty"`
	PCIeWidth int `json:"pcieWidth,omitempty"`
}

// Capture is everything nsyscheck knows about one profiled run.
type Capture struct {
	Path   string   `json:"path"`
	Format Format   `json:"format"`
	Files  []string `json:"files,omitempty"` // the files actually read
	Meta   Metadata `json:"meta"`

	// Sources names, for evidence, the table or report file each kind of
	// record came from; empty where the input has none.
	Sources Sources `json:"-"`

	Calls   []APICall `json:"calls,omitempty"`   // sorted by Start
	Memcpys Memcpys   `json:"memcpys,omitzero"`  // sorted by Start
	Kernels []Kernel  `json:"kernels,omitempty"` // sorted by Start
	Ranges  []Range   `json:"ranges,omitempty"`  // sorted by Start

	APISummary   []APISummary   `json:"apiSummary,omitempty"`
	MemSummary   []MemSummary   `json:"memSummary,omitempty"`
	RangeSummary []RangeSummary `json:"rangeSummary,omitempty"`

	// Program holds the numbers the program itself reported (transcript,
	// results JSON) or a measurements file; nil when the input has none.
	Program *program.Measurements `json:"program,omitempty"`
	// ProgramFile is the file Program was read from (a results JSON or a
	// transcript, the input itself or beside its trace); "" when Program is
	// nil.
	ProgramFile string `json:"-"`

	// Missing lists the facts this input cannot provide.
	Missing []records.Gap `json:"missing,omitempty"`

	// Notes say what the loader chose on the user's behalf, e.g. reading
	// the SQLite export beside a report that nsys could not export.
	Notes []string `json:"notes,omitempty"`

	// OtherThreads counts, per thread, the API calls that were not loaded
	// because Options.ProgramThread kept only the program's thread; the
	// counts are of the calls Options.APINames selects. Sorted the way the
	// program's thread is chosen (ThreadCount.Before). Empty when every
	// thread was loaded.
	OtherThreads []records.ThreadCount `json:"otherThreads,omitempty"`

	// SetAside lists the files found beside the capture (a transcript or
	// results JSON of the same base name, or the only one in its folder)
	// that could not be read as the program's output. They are hints, not
	// part of the capture: the capture is read without them.
	SetAside []SetAside `json:"setAside,omitempty"`
}

// SetAside is a file beside a capture that was not used, and why.
type SetAside struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Sources names where a capture's records came from: an export's tables or
// the CSV report files, as nsysdb spells them.
type Sources struct {
	API, Memcpy, Kernel, NVTX string
}

// CountThreads counts the calls per thread (process and thread id) and
// returns the threads in the order of ThreadCount.Before: the first is the
// program's thread.
func CountThreads(calls []APICall) []records.ThreadCount {
	at := map[[2]int64]int{}
	var out []records.ThreadCount
	for _, a := range calls {
		k := [2]int64{a.PID, a.TID}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, records.ThreadCount{PID: a.PID, TID: a.TID})
		}
		out[i].Add(a.Name, 1)
	}
	records.SortThreads(out)
	return out
}

// Has reports whether the capture holds the given fact.
func (c *Capture) Has(f records.Fact) bool {
	for _, g := range c.Missing {
		if g.Fact == f {
			return false
		}
	}
	return true
}

// Why returns the reason a fact is missing, or "" when it is present.
func (c *Capture) Why(f records.Fact) string {
	for _, g := range c.Missing {
		if g.Fact == f {
			return g.Reason
		}
	}
	return ""
}

// Lack records that the capture cannot provide a fact. A fact already
// recorded as missing keeps its first reason.
func (c *Capture) Lack(f records.Fact, reason string) {
	if !c.Has(f) {
		return
	}
	c.Missing = append(c.Missing, records.Gap{Fact: f, Reason: reason})
}

// Sort orders every per-event list by start time (then by end, then by
// correlation id), since no export guarantees row order.
func (c *Capture) Sort() {
	sort.SliceStable(c.Calls, func(i, j int) bool {
		a, b := c.Calls[i], c.Calls[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End < b.End
		}
		return a.CorrelationID < b.CorrelationID
	})
	c.Memcpys.sort()
	sort.SliceStable(c.Kernels, func(i, j int) bool {
		a, b := c.Kernels[i], c.Kernels[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.CorrelationID < b.CorrelationID
	})
	sort.SliceStable(c.Ranges, func(i, j int) bool { return c.Ranges[i].Start < c.Ranges[j].Start })
}
