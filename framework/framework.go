// Package framework tells which framework a capture's program ran on —
// PyTorch, CuPy, JAX/XLA, the CUDA runtime or the CUDA driver API — from
// what its trace holds: the names of the threads that made CUDA calls, the
// kernels' names, the API families of its copy calls and the NVTX domains
// of its ranges. A Detector consumes the record stream beside any other
// consumer (records.Tee); Detect names the framework and the clues it was
// told by, and whether the capture's CUDA calls carry call stacks.
//
// The package has no words of its own beyond names: what to change in each
// framework is said by the report.
package framework

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/strcache"
	"github.com/nsyscheck/nsyscheck/records"
)

// Name names a framework.
type Name string

// Frameworks, in the order a capture is tested for them.
const (
	JAX     Name = "jax"          // JAX on XLA
	PyTorch Name = "pytorch"      // PyTorch
	CuPy    Name = "cupy"         // CuPy
	Driver  Name = "cuda-driver"  // a program on the CUDA driver API (cuMemcpy*)
	Runtime Name = "cuda-runtime" // a program on the CUDA runtime (cudaMemcpy*)
	Unknown Name = "unknown"      // no copy call, no framework's mark
)

// ClueKind says what in the trace a clue is.
type ClueKind string

// Kinds of clue.
const (
	ClueThread ClueKind = "thread"      // a thread that made CUDA calls, by name
	ClueKernel ClueKind = "kernel"      // a kernel, by its short name
	ClueAPI    ClueKind = "api"         // the API family of copy calls
	ClueDomain ClueKind = "nvtx-domain" // an NVTX domain of the ranges
)

// Clue is one mark of a framework in the trace: its kind, the name as the
// trace spells it (the first seen, for a pattern many names match), and
// how many calls, launches or ranges bear it.
type Clue struct {
	Of    Name
	Kind  ClueKind
	Name  string
	Count int64
}

// Detection is what a Detector found.
type Detection struct {
	Framework Name
	// Python says the program ran in a Python interpreter (its main
	// thread is named python...).
	Python bool
	// Clues are the marks found, strongest first.
	Clues []Clue
	// Backtraces says whether the capture's CUDA calls carry call stacks
	// (nsys profile --cudabacktrace), which lead from a copy to its source
	// line.
	Backtraces bool
	// LoaderWorkers counts the capture's processes named as a PyTorch
	// DataLoader names its worker processes (LoaderWorkerName): batches
	// made by workers, which DataLoader(pin_memory=True) pins on a thread
	// of the main process.
	LoaderWorkers int
}

// LoaderWorkerName is the name PyTorch gives a DataLoader's worker
// processes (num_workers > 0).
const LoaderWorkerName = "pt_data_worker"

// mark is one pattern a framework's threads, kernels or domains bear.
type mark struct {
	of     Name
	kind   ClueKind
	prefix string // the name starts with it
	suffix string // or ends with it
	exact  string // or is it
	// strong marks decide alone; a weak one (a kernel name another
	// library could share) decides only for a program in Python with no
	// strong mark.
	strong bool
}

func (m mark) matches(s string) bool {
	switch {
	case m.exact != "":
		return s == m.exact
	case m.prefix != "":
		return strings.HasPrefix(s, m.prefix)
	}
	return m.suffix != "" && strings.HasSuffix(s, m.suffix)
}

// marks are the frameworks' marks: PyTorch names its threads pt_*
// (pt_autograd_0, pt_data_pin, pt_main_thread) and ATen's kernels are
// elementwise and reduce templates; XLA's runtime threads are tf_*, py_xla_*
// and XlaLauncher, its kernels fusions; CuPy's own kernels are cupy_*.
var marks = []mark{
	{of: JAX, kind: ClueThread, prefix: "tf_XLA", strong: true},
	{of: JAX, kind: ClueThread, prefix: "py_xla_", strong: true},
	{of: JAX, kind: ClueThread, prefix: "XlaLauncher", strong: true},
	{of: JAX, kind: ClueKernel, suffix: "_fusion"},
	{of: JAX, kind: ClueKernel, prefix: "input_reduce_fusion"},
	{of: JAX, kind: ClueKernel, prefix: "loop_"},
	{of: JAX, kind: ClueDomain, exact: "XLA", strong: true},
	{of: JAX, kind: ClueDomain, exact: "TSL", strong: true},
	{of: PyTorch, kind: ClueThread, prefix: "pt_", strong: true},
	{of: PyTorch, kind: ClueKernel, exact: "vectorized_elementwise_kernel"},
	{of: PyTorch, kind: ClueKernel, exact: "unrolled_elementwise_kernel"},
	{of: PyTorch, kind: ClueKernel, exact: "elementwise_kernel"},
	{of: PyTorch, kind: ClueKernel, exact: "reduce_kernel"},
	{of: PyTorch, kind: ClueDomain, exact: "PyTorch", strong: true},
	{of: CuPy, kind: ClueKernel, prefix: "cupy_", strong: true},
}

// runtimePrefix starts the CUDA runtime's API names (cudaMemcpyAsync);
// the driver API's start cu (cuMemcpyHtoDAsync).
const runtimePrefix = "cuda"

// order is the frameworks in the order they are tested for: JAX's runtime
// and PyTorch's both launch library kernels a CuPy program could too.
var order = []Name{JAX, PyTorch, CuPy}

// Detector gathers a capture's clues from its records.
type Detector struct {
	clues map[int]*Clue    // by index into marks
	seen  map[seenKey]int8 // names already matched: index+1 into marks, -1 none
	// copy calls of the runtime (cudaMemcpy*) and of the driver API
	// (cuMemcpy*), and calls of each in all.
	runtime, driver           int64
	runtimeCalls, driverCalls int64
	python                    bool
	backtraces                bool
	loaderWorkers             int
	// recent is, per kind of clue (lastOf), the names noted lately and
	// their index into marks (as seen holds it), found without hashing.
	recent [4]strcache.Cache[int8]
	// apis is what each API name called is (apiOf).
	apis strcache.Cache[api]
}

// seenKey is a name of a kind, as Detector.seen holds it.
type seenKey struct {
	kind ClueKind
	name string
}

// api is what Detector.call counts of an API name: whether it is the
// runtime's or the driver's, and whether it copies.
type api struct{ runtime, copy bool }

// lastOf is the index of a kind of clue in Detector.recent.
func lastOf(kind ClueKind) int {
	switch kind {
	case ClueThread:
		return 0
	case ClueKernel:
		return 1
	case ClueDomain:
		return 2
	}
	return 3
}

// maxSeen bounds the names a Detector remembers having matched.
const maxSeen = 1 << 14

// NewDetector returns an empty Detector.
func NewDetector() *Detector {
	return &Detector{clues: map[int]*Clue{}, seen: map[seenKey]int8{}}
}

// Handler returns the records.Handler that feeds the detector: the
// capture's tracing options, its NVTX ranges, calls (their API and
// thread) and GPU operations (kernels' names; a copy's call where the
// reader joined it and hands no calls apart).
func (d *Detector) Handler() records.Handler {
	return records.Handler{
		Meta: func(m *records.Meta) error {
			d.backtraces = d.backtraces || m.Tracing.Backtraces
			for _, p := range m.Processes {
				if p == LoaderWorkerName {
					d.loaderWorkers++
				}
			}
			return nil
		},
		Range: func(r *records.Range) error {
			d.note(ClueDomain, r.Domain)
			return nil
		},
		Call: func(c *records.Call) error {
			d.call(c)
			return nil
		},
		Op: func(o *records.Op) error {
			if o.Kind == records.OpKernel {
				d.note(ClueKernel, o.Name)
			}
			return nil
		},
	}
}

func (d *Detector) call(c *records.Call) {
	d.note(ClueThread, c.Thread)
	if strings.HasPrefix(c.Thread, "python") {
		d.python = true
	}
	a := d.apiOf(c.Name)
	if a.runtime {
		d.runtimeCalls++
	} else {
		d.driverCalls++
	}
	if a.copy {
		if a.runtime {
			d.runtime++
		} else {
			d.driver++
		}
	}
}

// apiOf returns what an API name is, looked up once for each name the
// cache holds.
func (d *Detector) apiOf(name string) api {
	if a, ok := d.apis.Get(name); ok {
		return a
	}
	a := api{runtime: strings.HasPrefix(name, runtimePrefix), copy: nsysdb.IsCopyAPI(name)}
	d.apis.Put(name, a)
	return a
}

// note counts a name of a kind against the marks.
func (d *Detector) note(kind ClueKind, name string) {
	if name == "" {
		return
	}
	recent := &d.recent[lastOf(kind)]
	if i, ok := recent.Get(name); ok {
		d.count(i, name)
		return
	}
	key := seenKey{kind, name}
	i, ok := d.seen[key]
	if !ok {
		i = -1
		for k, m := range marks {
			if m.kind == kind && m.matches(name) {
				i = int8(k + 1)
				break
			}
		}
		if len(d.seen) >= maxSeen {
			clear(d.seen)
		}
		d.seen[key] = i
	}
	recent.Put(name, i)
	d.count(i, name)
}

// count counts a name that matched mark i-1 (none for i < 0).
func (d *Detector) count(i int8, name string) {
	if i < 0 {
		return
	}
	k := int(i - 1)
	c := d.clues[k]
	if c == nil {
		m := marks[k]
		c = &Clue{Of: m.of, Kind: m.kind, Name: name}
		d.clues[k] = c
	}
	c.Count++
}

// Detect names the framework: the first of JAX, PyTorch and CuPy with a
// strong mark, else, for a program in Python, the first with any mark,
// else the driver API when its copy calls outnumber the runtime's, else
// the runtime when the program made any runtime call, else the driver API
// when it made any call.
func (d *Detector) Detect() Detection {
	det := Detection{Framework: Unknown, Python: d.python, Backtraces: d.backtraces, LoaderWorkers: d.loaderWorkers, Clues: []Clue{}}
	strong := map[Name]bool{}
	any := map[Name]bool{}
	for k, c := range d.clues {
		det.Clues = append(det.Clues, *c)
		any[c.Of] = true
		if marks[k].strong {
			strong[c.Of] = true
		}
	}
	if d.runtime > 0 {
		det.Clues = append(det.Clues, Clue{Of: Runtime, Kind: ClueAPI, Name: runtimePrefix + "Memcpy*", Count: d.runtime})
	}
	if d.driver > 0 {
		det.Clues = append(det.Clues, Clue{Of: Driver, Kind: ClueAPI, Name: "cuMemcpy*", Count: d.driver})
	}
	rank := func(n Name) int {
		if i := slices.Index(order, n); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(det.Clues, func(a, b Clue) int {
		return cmp.Or(cmp.Compare(rank(a.Of), rank(b.Of)), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name))
	})
	sets := []map[Name]bool{strong}
	if d.python {
		sets = append(sets, any)
	}
	for _, set := range sets {
		for _, n := range order {
			if set[n] {
				det.Framework = n
				return det
			}
		}
	}
	switch {
	case d.driver > d.runtime:
		det.Framework = Driver
	case d.runtimeCalls > 0:
		det.Framework = Runtime
	case d.driverCalls > 0:
		det.Framework = Driver
	}
	return det
}
