package coverage

import (
	"slices"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
)

// Codes of the diagnostics coverage makes.
const (
	// CodeNsys: nsys wrote errors or warnings about its capture.
	CodeNsys diag.Code = "nsys-diagnostics"
	// CodeIncomplete: nsys says it did not keep every event, kept none, or
	// failed to import the raw events.
	CodeIncomplete diag.Code = "capture-incomplete"
	// CodeNotTraced: nsys was not asked to trace CUDA.
	CodeNotTraced diag.Code = "cuda-not-traced"
	// CodeGraphsWhole: CUDA graph launches traced whole, whose copies and
	// kernels the trace does not break down.
	CodeGraphsWhole diag.Code = "cuda-graphs-whole"
	// CodeGraphNodes: copies a CUDA graph launch ran as nodes, counted
	// under their launch.
	CodeGraphNodes diag.Code = "cuda-graph-nodes"
	// CodeMigrations: unified-memory migrations, what they cost.
	CodeMigrations diag.Code = "unified-memory"
	// CodeStaging: a framework stages its host-to-device copies through
	// pinned buffers of its own, CPU work no CUDA call shows.
	CodeStaging diag.Code = "framework-staging"
	// CodeZeroKernels: kernels the trace gives no time.
	CodeZeroKernels diag.Code = "kernel-zero-time"
	// CodeZeroCopyCalls: copy calls the trace gives no time.
	CodeZeroCopyCalls diag.Code = "copy-call-zero-time"
)

// NsysMessages is what nsys wrote about its capture at warning level and
// above: by severity, the count and the first message.
type NsysMessages struct{ Messages []Messages }

// Incomplete says nsys did not keep every event of the capture: the
// families it might not have collected whole (NotAll) or collected none of
// (None), what it says it kept (Collected), the first error importing the
// raw events and the first message of records lost. NVTX says the capture
// traced NVTX beside CUDA, Framework the program's framework; Retry is the
// trace option to profile again with ("-t cuda"), "" where none is known;
// Claims are the verdicts the trace's records decided (verify's), which
// it touches.
type Incomplete struct {
	NotAll, None []string
	Collected    []FamilyCount
	ImportError  string
	Dropped      string
	NVTX         bool
	Framework    framework.Name
	Retry        string
	Claims       []string
}

// NotTraced says nsys was not asked to trace CUDA: the capture cannot show
// a copy, a kernel or a CUDA call.
type NotTraced struct{}

// GraphsWhole says CUDA graph launches ran whose copies and kernels the
// trace does not break down (nsys --cuda-graph-trace=graph, its default):
// how many launches, of how many graphs, and their time on the GPU.
type GraphsWhole struct {
	Launches int64
	Graphs   int
	GPUNs    int64
}

// GraphNodes says copies ran as nodes of CUDA graph launches traced node
// by node: the audit counts them under their launch (API kind graph).
type GraphNodes struct {
	Launches, Copies, Bytes int64
}

// Migrations are the capture's unified-memory migrations by direction and
// cause, and whether nsys traced the page faults behind them: not copies
// of a host buffer, so no pinning candidates.
type Migrations struct {
	Migrations []Migration
	PageFaults bool
}

// Staging says the program's framework stages its host-to-device copies
// through pinned buffers of its own (framework.StagesCopies): every large
// one the trace shows (Pinned of them) comes from pinned memory, and
// copying a pageable host array into the staging buffer is CPU work
// outside every CUDA call. Clue is what told the framework; OSRT says nsys
// traced the OS runtime. The audit tells it from its classes.
type Staging struct {
	Framework framework.Name
	Clue      framework.Clue
	Pinned    int64
	OSRT      bool
}

// ZeroKernels says the trace gives Count kernels no time (each ends when
// it starts; the first: First): no kernel runs in no time, so their
// records are damaged, and every number a kernel's time enters takes
// theirs as 0 ns. Claims are the verdicts of verify's that kernels' times
// decided, which they touch.
type ZeroKernels struct {
	Count  int64
	First  OpRef
	Claims []string
}

// ZeroCopyCalls says the trace gives the calls of Count copies no time
// (the first: First, its API in Name): no call returns in no time, so
// their records are damaged, and the host time a copy call holds, which
// the audit's shares, costs and replay rest on, takes theirs as 0 ns.
type ZeroCopyCalls struct {
	Count int64
	First OpRef
}

// Code is the detail's code.
func (ZeroCopyCalls) Code() diag.Code { return CodeZeroCopyCalls }
func (ZeroKernels) Code() diag.Code   { return CodeZeroKernels }
func (NsysMessages) Code() diag.Code  { return CodeNsys }
func (Incomplete) Code() diag.Code    { return CodeIncomplete }
func (NotTraced) Code() diag.Code     { return CodeNotTraced }
func (GraphsWhole) Code() diag.Code   { return CodeGraphsWhole }
func (GraphNodes) Code() diag.Code    { return CodeGraphNodes }
func (Migrations) Code() diag.Code    { return CodeMigrations }
func (Staging) Code() diag.Code       { return CodeStaging }

// CaptureDiagnostics is what the capture says of itself as a whole, which
// every command reports beside its verdicts: the events nsys did not keep,
// CUDA not traced, graph launches traced whole, then nsys's messages. fw
// is the program's framework, as far as the caller told it.
func (c *Coverage) CaptureDiagnostics(fw framework.Name) []diag.Diagnostic {
	var out []diag.Diagnostic
	if len(c.NotAll)+len(c.None) > 0 || c.ImportError != "" || c.Dropped != "" {
		d := Incomplete{NotAll: c.NotAll, None: c.None, Collected: c.Collected, ImportError: c.ImportError,
			Dropped: c.Dropped, NVTX: c.Tracing.NVTX, Framework: fw}
		if d.ImportError != "" && d.NVTX && (slices.Contains(d.NotAll, cudaFamily) || slices.Contains(d.None, cudaFamily)) {
			d.Retry = RetryCUDAOnly
		}
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: d})
	}
	if c.Tracing.Known && !c.Tracing.CUDA {
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: NotTraced{}})
	}
	if c.GraphLaunches > 0 {
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: GraphsWhole{Launches: c.GraphLaunches, Graphs: c.Graphs, GPUNs: c.GraphGPUNs}})
	}
	if len(c.Messages) > 0 {
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: NsysMessages{Messages: c.Messages}})
	}
	if c.ZeroKernels > 0 {
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: ZeroKernels{Count: c.ZeroKernels, First: c.FirstZeroKernel}})
	}
	if c.ZeroCopyCalls > 0 {
		out = append(out, diag.Diagnostic{Level: diag.Warning, Detail: ZeroCopyCalls{Count: c.ZeroCopyCalls, First: c.FirstZeroCopyCall}})
	}
	return out
}

// RetryCUDAOnly is the trace option that leaves NVTX out: nsys 2025.3 lost
// every kernel and copy of a JAX program it imported with errors under -t
// cuda,nvtx, and kept them all under -t cuda.
const RetryCUDAOnly = "-t cuda"

// cudaFamily is the event family of CUDA's records in nsys's messages.
const cudaFamily = "CUDA"

// CopyDiagnostics is what the capture says of the copies no copy call of
// the program made, which the audit reports beside its classes: graph node
// copies and unified-memory migrations.
func (c *Coverage) CopyDiagnostics() []diag.Diagnostic {
	var out []diag.Diagnostic
	if c.NodeCopies > 0 {
		out = append(out, diag.Diagnostic{Level: diag.Info, Detail: GraphNodes{Launches: c.NodeLaunches, Copies: c.NodeCopies, Bytes: c.NodeBytes}})
	}
	if len(c.Migrations) > 0 {
		out = append(out, diag.Diagnostic{Level: diag.Info, Detail: Migrations{Migrations: c.Migrations, PageFaults: c.Tracing.PageFaults}})
	}
	return out
}

// hideCopies are the codes of diagnostics that say the capture may lack
// copies, kernels or calls the run made.
var hideCopies = []diag.Code{CodeIncomplete, CodeNotTraced, CodeGraphsWhole}

// HidesCopies lists the codes among ds that say the capture may lack
// copies, kernels or calls the run made: where one is there, no command
// says the run made none, nor that no copy broke a rule.
func HidesCopies(ds []diag.Diagnostic) []diag.Code {
	return present(ds, hideCopies)
}

// HidesSaving lists the codes among ds that say what pinning would save may
// lie outside what the capture shows: those of HidesCopies and a
// framework's staging. Where one is there, no command says pinning has
// nothing to save.
func HidesSaving(ds []diag.Diagnostic) []diag.Code {
	return present(ds, append(append([]diag.Code(nil), hideCopies...), CodeStaging))
}

// IsCode reports whether a diagnostic's code is one of coverage's.
func IsCode(code diag.Code) bool {
	switch code {
	case CodeNsys, CodeIncomplete, CodeNotTraced, CodeGraphsWhole, CodeGraphNodes, CodeMigrations, CodeStaging, CodeZeroKernels, CodeZeroCopyCalls:
		return true
	}
	return false
}

// CodesIn lists, sorted and each once, the codes of coverage's among ds.
func CodesIn(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		if c := string(d.Code()); IsCode(d.Code()) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Hides reports whether a diagnostic's code says the capture may lack
// copies, kernels or calls the run made (those HidesCopies lists): every
// renderer shows such a diagnostic beside the verdicts.
func Hides(code diag.Code) bool { return slices.Contains(hideCopies, code) }

func present(ds []diag.Diagnostic, codes []diag.Code) []diag.Code {
	var out []diag.Code
	for _, c := range codes {
		if diag.Has(ds, c) {
			out = append(out, c)
		}
	}
	return out
}

// MapPaths passes nsys's own words, which may name paths, through f.
func (c *Coverage) MapPaths(f func(string) string) {
	c.ImportError, c.Dropped = f(c.ImportError), f(c.Dropped)
	for i := range c.Messages {
		c.Messages[i].First, c.Messages[i].FirstDetail = f(c.Messages[i].First), f(c.Messages[i].FirstDetail)
	}
}

// MapPaths passes nsys's messages through f.
func (d NsysMessages) MapPaths(f func(string) string) diag.Detail {
	ms := append([]Messages(nil), d.Messages...)
	for i := range ms {
		ms[i].First, ms[i].FirstDetail = f(ms[i].First), f(ms[i].FirstDetail)
	}
	d.Messages = ms
	return d
}

// MapPaths passes nsys's words through f.
func (d Incomplete) MapPaths(f func(string) string) diag.Detail {
	d.ImportError, d.Dropped = f(d.ImportError), f(d.Dropped)
	return d
}
