// Package coverage says what a capture can and cannot show of the run it
// records: what nsys traced, what nsys wrote about its own capture (its
// errors and warnings, the events it did not collect, the raw events it
// failed to import), the CUDA graph launches traced whole, whose copies and
// kernels the trace does not break down, the graph copies traced node by
// node and the unified-memory migrations; and, as the audit tells it, the
// host-to-device copies a framework stages through pinned buffers of its
// own (Staging).
//
// A Watcher reads the record stream beside any other consumer
// (records.Tee) and keeps counts only; its Coverage holds what it found
// (typed, in the audit's JSON) and names each limit as a typed diagnostic
// (CaptureDiagnostics, CopyDiagnostics). HidesCopies and HidesSaving say
// which of them forbid a "none": no command says that a run made no
// copies, launched no kernels or broke no rule, nor that pinning has
// nothing to save, where the capture could not have shown it. The package
// has no words of its own: report says them.
package coverage

import (
	"cmp"
	"slices"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Coverage is what a Watcher found: the capture's tracing, nsys's own
// account of it, and the copies no copy call of the program made. Its JSON
// is part of the audit's (auditjson.Coverage).
type Coverage struct {
	// Tracing is what nsys was asked to trace (Known false where the input
	// does not say: CSV reports).
	Tracing Tracing
	// Messages are nsys's messages about its capture at warning level and
	// above, by severity, worst first.
	Messages []Messages
	// NotAll and None are the event families ("CUDA", "NVTX") nsys says it
	// might not have collected whole, or collected none of; Collected what
	// it says it kept of each.
	NotAll    []string
	None      []string
	Collected []FamilyCount
	// ImportError is what nsys's first error processing the capture's raw
	// events says ("" none); Dropped the first message that says records
	// were lost or dropped.
	ImportError string
	Dropped     string

	// GraphLaunches counts the CUDA graph launches traced whole, Graphs the
	// graphs they launched (by id), GraphGPUNs their time on the GPU.
	GraphLaunches int64
	Graphs        int
	GraphGPUNs    int64
	// NodeLaunches, NodeCopies and NodeBytes are the graph launches traced
	// node by node and the copies they ran as nodes.
	NodeLaunches int64
	NodeCopies   int64
	NodeBytes    int64
	// Migrations are the unified-memory migrations by direction and cause.
	Migrations []Migration
	// ZeroKernels counts the kernels the trace gives no time (their end
	// at their start); FirstZeroKernel is the first of them read.
	ZeroKernels     int64
	FirstZeroKernel OpRef
	// ZeroCopyCalls counts the copies whose call the trace gives no time
	// (its end at its start); FirstZeroCopyCall is the first such call
	// read (Name its API).
	ZeroCopyCalls     int64
	FirstZeroCopyCall OpRef
}

// OpRef names one GPU operation of the trace: its kernel name, its
// correlation id, and its data row in a CSV report (0 otherwise).
type OpRef struct {
	Name string
	Corr int64
	Row  int
}

// Tracing is what nsys was asked to trace, as the export's metadata says.
type Tracing struct {
	Known      bool
	CUDA       bool
	NVTX       bool
	OSRT       bool
	GraphTrace string // "graph", "node", "" unknown
	Backtraces bool
	PageFaults bool
}

// Messages are nsys's messages of one severity: how many, and the first.
type Messages struct {
	Severity string // "error" or "warning"
	Count    int
	// First is the first message's headline, FirstDetail the message nsys
	// gives inside it ("" where none).
	First       string
	FirstDetail string
}

// FamilyCount is how many events of one family nsys says it collected.
type FamilyCount struct {
	Family string
	Events int64
}

// Migration sums the unified-memory migrations of one direction and cause.
type Migration struct {
	Direction vocab.CopyKind
	Cause     string
	Count     int64
	Bytes     int64
	GPUNs     int64
}

// Watcher gathers a capture's Coverage from its records.
type Watcher struct {
	cov      Coverage
	messages map[records.Severity]*Messages
	notAll   map[string]bool
	none     map[string]bool
	graphs   map[int64]bool
	launches map[[2]int64]bool // graph launches with a node traced, by process and correlation id
	migr     map[migrationKey]*Migration
}

type migrationKey struct {
	dir   vocab.CopyKind
	cause string
}

// NewWatcher returns an empty Watcher.
func NewWatcher() *Watcher {
	return &Watcher{messages: map[records.Severity]*Messages{}, notAll: map[string]bool{}, none: map[string]bool{},
		graphs: map[int64]bool{}, launches: map[[2]int64]bool{}, migr: map[migrationKey]*Migration{}}
}

// Handler returns the records.Handler that feeds the watcher: the
// capture's metadata, nsys's diagnostics, the whole graph launches and the
// copies (with their calls, where the reader joins them).
func (w *Watcher) Handler() records.Handler {
	return records.Handler{
		Meta: func(m *records.Meta) error {
			t := m.Tracing
			w.cov.Tracing = Tracing{Known: t.Known, CUDA: t.CUDA, NVTX: t.NVTX, OSRT: t.OSRT, GraphTrace: t.GraphTrace,
				Backtraces: t.Backtraces, PageFaults: t.PageFaults}
			return nil
		},
		Diag: w.diag,
		Op: func(o *records.Op) error {
			w.op(o)
			return nil
		},
		Graph: func(g *records.GraphLaunch) error {
			w.cov.GraphLaunches++
			w.cov.GraphGPUNs += g.End - g.Start
			if g.Graph != 0 {
				w.graphs[g.Graph] = true
			}
			return nil
		},
	}
}

// diag keeps what nsys wrote about its capture.
func (w *Watcher) diag(d *records.NsysDiag) error {
	kind, family, n := nsysdb.DiagOf(d.Text)
	switch kind {
	case nsysdb.DiagNotAll:
		w.notAll[family] = true
	case nsysdb.DiagNone:
		w.none[family] = true
	case nsysdb.DiagCollected:
		if n < 0 {
			break // not a count: the reader refuses it
		}
		w.cov.Collected = append(w.cov.Collected, FamilyCount{Family: family, Events: n})
	case nsysdb.DiagProcessing:
		if w.cov.ImportError == "" {
			w.cov.ImportError = messageOf(d.Text)
		}
	case nsysdb.DiagDropped:
		if w.cov.Dropped == "" {
			head, _ := nsysdb.DiagMessage(d.Text)
			w.cov.Dropped = head
		}
	}
	if d.Severity != records.SeverityError && d.Severity != records.SeverityWarning {
		return nil
	}
	m := w.messages[d.Severity]
	if m == nil {
		m = &Messages{Severity: severityName(d.Severity)}
		m.First, m.FirstDetail = nsysdb.DiagMessage(d.Text)
		w.messages[d.Severity] = m
	}
	m.Count++
	return nil
}

// messageOf is what a message of nsys says: the message inside it, else
// its headline.
func messageOf(text string) string {
	head, detail := nsysdb.DiagMessage(text)
	if detail != "" {
		return detail
	}
	return head
}

func severityName(s records.Severity) string {
	if s == records.SeverityError {
		return "error"
	}
	return "warning"
}

// op counts a copy a graph launch ran as a node, or a migration, a
// kernel of no time and a copy whose call took none.
func (w *Watcher) op(o *records.Op) {
	if o.Kind == records.OpKernel && o.Duration() == 0 {
		if w.cov.ZeroKernels == 0 {
			w.cov.FirstZeroKernel = OpRef{Name: o.Name, Corr: o.Corr, Row: o.Row}
		}
		w.cov.ZeroKernels++
	}
	if o.Kind != records.OpCopy {
		return
	}
	if c := o.Call; c != nil && c.End == c.Start {
		if w.cov.ZeroCopyCalls == 0 {
			w.cov.FirstZeroCopyCall = OpRef{Name: c.Name, Corr: c.Corr, Row: c.Row}
		}
		w.cov.ZeroCopyCalls++
	}
	switch {
	case o.Migration != "":
		k := migrationKey{o.Copy, o.Migration}
		m := w.migr[k]
		if m == nil {
			m = &Migration{Direction: o.Copy, Cause: o.Migration}
			w.migr[k] = m
		}
		m.Count++
		m.Bytes += o.Bytes
		m.GPUNs += o.Duration()
	case o.Call != nil && nsysdb.IsGraphLaunch(o.Call.Name):
		w.cov.NodeCopies++
		w.cov.NodeBytes += o.Bytes
		w.launches[[2]int64{o.PID, o.Corr}] = true
	}
}

// Coverage returns what the watcher found.
func (w *Watcher) Coverage() *Coverage {
	c := w.cov
	c.Graphs = len(w.graphs)
	c.NodeLaunches = int64(len(w.launches))
	c.NotAll, c.None = sortedKeys(w.notAll), sortedKeys(w.none)
	c.Messages = []Messages{}
	for _, s := range []records.Severity{records.SeverityError, records.SeverityWarning} {
		if m := w.messages[s]; m != nil {
			c.Messages = append(c.Messages, *m)
		}
	}
	c.Migrations = []Migration{}
	for _, m := range w.migr {
		c.Migrations = append(c.Migrations, *m)
	}
	slices.SortFunc(c.Migrations, func(a, b Migration) int {
		return cmp.Or(cmp.Compare(a.Direction, b.Direction), cmp.Compare(a.Cause, b.Cause))
	})
	if c.Collected == nil {
		c.Collected = []FamilyCount{}
	}
	return &c
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
