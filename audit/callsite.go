package audit

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// CallSites are the copies from pageable host memory grouped by where the
// program made them, from the call stacks nsys took of their calls
// (nsys profile --cudabacktrace with CPU sampling on).
type CallSites struct {
	// Stacks says whether the capture holds call stacks of CUDA calls;
	// Lacks is why not (the reader's words) where it holds none.
	Stacks bool
	Lacks  string
	// Sites are the call sites, by host time held, longest first.
	Sites []CallSite
	// Pageable sums every copy from or to pageable host memory; Unsited
	// those among them whose call has no stack (nsys takes one only of a
	// call longer than its threshold, 80 µs unless set).
	Pageable SiteTotals
	Unsited  SiteTotals
}

// SiteTotals sums copies: how many, their bytes and the host time their
// calls held (a batch call counted once).
type SiteTotals struct {
	Copies int64
	Bytes  int64
	HostNs int64
}

// Frame is one frame of a call stack as the audit names a site by it.
type Frame struct {
	// Symbol is the function, "" where nsys resolved none (Unresolved).
	Symbol     string
	Module     string
	Unresolved bool
}

// Name is the frame's function and the base name of its module.
func (f Frame) Name() string { return f.Symbol + " (" + path.Base(f.Module) + ")" }

// CallSite is one place in the program that made copies from or to
// pageable host memory, in one direction.
type CallSite struct {
	// Frame is the first frame of the call's stack outside CUDA's libraries
	// (the driver, the runtime and its API function), the profiler, the
	// C and C++ runtime and a Python interpreter: the program's own
	// function, or for a Python framework the framework's function that
	// issued the copy (at::native::copy_kernel_cuda).
	Frame Frame
	// Entry is, for a program that runs in Python, the frame Python called
	// into on the way to Frame (torch::autograd::THPVariable_to), nil
	// where it is Frame itself or the stack has no Python interpreter.
	Entry *Frame
	// Method is the Python method Entry (or Frame) implements where the
	// audit knows it (Tensor.to), "" otherwise.
	Method    string
	Direction vocab.CopyKind
	SiteTotals
	// Share is the site's host time over that of every pageable copy.
	Share float64
	// Longest is the correlation id of the site's call that held the host
	// longest: the one to look up in Nsight Systems.
	Longest int64
	longest int64
}

// siteKey sets a CallSite apart.
type siteKey struct {
	frame, entry Frame
	dir          vocab.CopyKind
}

// siteAccumulator sums the pageable copies by call site.
type siteAccumulator struct {
	lacks    string
	sites    map[siteKey]*CallSite
	pageable SiteTotals
	unsited  SiteTotals
}

// lack notes why the capture holds no call stacks.
func (s *siteAccumulator) lack(reason string) {
	if s.lacks == "" {
		s.lacks = reason
	}
}

// add sums a copy from or to pageable host memory under the site its
// call's stack names.
func (s *siteAccumulator) add(call *records.Call, c *copyCall) {
	if c.host() != Pageable {
		return
	}
	s.pageable.add(c)
	if call == nil || call.Stack == nil {
		s.unsited.add(c)
		return
	}
	frame, entry, ok := SiteOf(call.Stack, call.Name)
	if !ok {
		s.unsited.add(c)
		return
	}
	k := siteKey{frame: frame, dir: c.Kind}
	if entry != nil {
		k.entry = *entry
	}
	if s.sites == nil {
		s.sites = map[siteKey]*CallSite{}
	}
	site := s.sites[k]
	if site == nil {
		site = &CallSite{Frame: frame, Entry: entry, Method: methodOf(frame, entry), Direction: c.Kind}
		s.sites[k] = site
	}
	site.add(c)
	if d := c.HostDuration(); site.Copies == 1 || d > site.longest {
		site.Longest, site.longest = c.CorrelationID, d
	}
}

func (t *SiteTotals) add(c *copyCall) {
	t.Copies++
	t.Bytes += c.Bytes
	t.HostNs += c.HostNs
}

// finish is the sites, by host time held, longest first.
func (s *siteAccumulator) finish() *CallSites {
	cs := &CallSites{Stacks: s.lacks == "", Lacks: s.lacks, Sites: []CallSite{}, Pageable: s.pageable, Unsited: s.unsited}
	for _, site := range s.sites {
		if s.pageable.HostNs > 0 {
			site.Share = float64(site.HostNs) / float64(s.pageable.HostNs)
		}
		cs.Sites = append(cs.Sites, *site)
	}
	sort.Slice(cs.Sites, func(i, j int) bool {
		a, b := &cs.Sites[i], &cs.Sites[j]
		if a.HostNs != b.HostNs {
			return a.HostNs > b.HostNs
		}
		if a.Frame.Symbol != b.Frame.Symbol {
			return a.Frame.Symbol < b.Frame.Symbol
		}
		return a.Direction < b.Direction
	})
	return cs
}

// SiteOf finds the call site in a stack of a call to api (innermost frame
// first): the first frame outside CUDA's libraries and the API's own
// function, the profiler, the C and C++ runtime and a Python interpreter;
// and, where the stack passes through a Python interpreter, the frame the
// interpreter called (entry, nil where that is the site itself). ok is
// false for a stack with no such frame.
func SiteOf(s *records.Stack, api string) (site Frame, entry *Frame, ok bool) {
	first, last, python := -1, -1, false
	for i := range s.Frames {
		f := &s.Frames[i]
		if isPython(f.Module) {
			python = true
			break
		}
		if skipped(f, api) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 {
		return Frame{}, nil, false
	}
	if python && last != first {
		e := frameOf(&s.Frames[last])
		entry = &e
	}
	return frameOf(&s.Frames[first]), entry, true
}

// frameOf is a stack's frame as a site names it: an unresolved one by its
// module alone, since each call in a function without a symbol returns to
// an address of its own, so that a module's calls without symbols make one
// site.
func frameOf(f *records.Frame) Frame {
	if f.Unresolved {
		return Frame{Module: f.Module, Unresolved: true}
	}
	return Frame{Symbol: f.Symbol, Module: f.Module}
}

// runtimeModules are the base-name prefixes of the libraries no call site
// is in: CUDA's driver and runtime, the profiler's (CUPTI, nsys's
// injection), the C and C++ runtime and the dynamic loader.
var runtimeModules = []string{
	"libcupti", "libcuda.so", "libcudart", "libnvidia-", "libToolsInjection", "libnvtx",
	"libc.so", "libc-", "libstdc++", "libgcc_s", "libpthread", "libm.so", "libdl", "ld-linux",
}

// runtimeSymbols are the prefixes of the functions of a statically linked
// CUDA runtime.
var runtimeSymbols = []string{"cudart::", "__cudart", "cudaApi"}

// skipped reports whether a frame is one no call site is in: a library
// of runtimeModules, a function of a statically linked runtime, or the
// API's own function (cudaMemcpyAsync linked into the program).
func skipped(f *records.Frame, api string) bool {
	base := path.Base(f.Module)
	for _, p := range runtimeModules {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	for _, p := range runtimeSymbols {
		if strings.HasPrefix(f.Symbol, p) {
			return true
		}
	}
	return api != "" && (f.Symbol == api || strings.HasPrefix(f.Symbol, api+"_v") || strings.HasPrefix(f.Symbol, api+"("))
}

// isPython reports whether a module is a Python interpreter (python3.12,
// libpython3.12.so).
func isPython(module string) bool {
	base := path.Base(module)
	return strings.HasPrefix(base, "python") || strings.HasPrefix(base, "libpython")
}

// torchMethods are the Python methods of torch.Tensor behind the
// functions of libtorch_python Python calls to copy a tensor.
var torchMethods = map[string]string{
	"torch::autograd::THPVariable_to(":         "Tensor.to",
	"torch::autograd::THPVariable_cuda(":       "Tensor.cuda",
	"torch::autograd::THPVariable_cpu(":        "Tensor.cpu",
	"torch::autograd::THPVariable_copy_(":      "Tensor.copy_",
	"torch::autograd::THPVariable_pin_memory(": "Tensor.pin_memory",
}

// methodOf is the Python method a site's entry (or frame) implements, ""
// where the audit does not know it.
func methodOf(frame Frame, entry *Frame) string {
	f := frame
	if entry != nil {
		f = *entry
	}
	for prefix, m := range torchMethods {
		if strings.HasPrefix(f.Symbol, prefix) {
			return m
		}
	}
	return ""
}

// SiteExpectation is what an expected-audit file expects of one call
// site: its function and, for a program in Python, the function Python
// called (each as the symbol nsys gives, whole), its direction and copies.
type SiteExpectation struct {
	Frame     string
	Entry     string
	Direction vocab.CopyKind
	Copies    int64
}

// compareSites lists how the audit's call sites differ from those
// expected.
func (e *Expectation) compareSites(au *Audit) []ExpectDifference {
	if e.CallSites == nil {
		return nil
	}
	var got []SiteExpectation
	if au.CallSites != nil {
		for _, s := range au.CallSites.Sites {
			g := SiteExpectation{Frame: s.Frame.Symbol, Direction: s.Direction, Copies: s.Copies}
			if s.Entry != nil {
				g.Entry = s.Entry.Symbol
			}
			got = append(got, g)
		}
	}
	want := *e.CallSites
	if len(got) != len(want) {
		return []ExpectDifference{{Key: "callSites", Want: want, Got: got}}
	}
	var diffs []ExpectDifference
	for i := range want {
		if got[i] != want[i] {
			diffs = append(diffs, ExpectDifference{Key: "callSites", ID: strconv.Itoa(i), Want: want[i], Got: got[i]})
		}
	}
	return diffs
}
