package audit

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/vocab"
)

func frames(fs ...string) *records.Stack {
	s := &records.Stack{ID: 1}
	for i := 0; i+1 < len(fs); i += 2 {
		s.Frames = append(s.Frames, records.Frame{Symbol: fs[i], Module: fs[i+1]})
	}
	return s
}

// TestSiteOf finds the site in stacks built in Go: past the profiler, the
// driver, the runtime (as a library and linked into the program) and the
// C runtime; and for Python, the frame the interpreter called.
func TestSiteOf(t *testing.T) {
	cases := []struct {
		name        string
		stack       *records.Stack
		site, entry string // "" entry: none
		ok          bool
	}{
		{"static runtime", frames("0x1", "/opt/nvidia/libcupti.so.13.0", "0x2", "/usr/lib/libcuda.so.580", "cudaMemcpyAsync", "/tmp/app",
			"Pipeline::pass(float*)", "/tmp/app", "main", "/tmp/app", "__libc_start_main", "/lib/libc.so.6"), "Pipeline::pass(float*)", "", true},
		{"shared runtime, static internals", frames("cudart::cudaApiMemcpy(void*)", "/tmp/app", "cudaMemcpy_v3020", "/usr/lib/libcudart.so.13",
			"copy_rows(int)", "/tmp/app"), "copy_rows(int)", "", true},
		{"python framework", frames("cudaMemcpyAsync", "/venv/libcudart.so.13", "at::native::copy_kernel_cuda(at::TensorIterator&, bool)", "/venv/libtorch_cuda.so",
			"at::native::copy_(at::Tensor&)", "/venv/libtorch_cpu.so", "torch::autograd::THPVariable_to(_object*, _object*, _object*)", "/venv/libtorch_python.so",
			"0x551418", "/usr/bin/python3.12", "main", "/tmp/app"), "at::native::copy_kernel_cuda(at::TensorIterator&, bool)", "torch::autograd::THPVariable_to(_object*, _object*, _object*)", true},
		{"python calls the site itself", frames("cudaMemcpy", "/venv/libcudart.so.13", "binding_copy", "/venv/_ext.so", "PyObject_Call", "/usr/lib/libpython3.12.so"),
			"binding_copy", "", true},
		{"only libraries", frames("0x1", "/opt/libcupti.so", "cudaMemcpyAsync", "/lib/libcudart.so.13", "__libc_start_main", "/lib/libc.so.6"), "", "", false},
	}
	for _, c := range cases {
		site, entry, ok := SiteOf(c.stack, "cudaMemcpyAsync")
		if c.name == "shared runtime, static internals" {
			site, entry, ok = SiteOf(c.stack, "cudaMemcpy")
		}
		if ok != c.ok || site.Symbol != c.site {
			t.Errorf("%s: site %q (ok %v), want %q (ok %v)", c.name, site.Symbol, ok, c.site, c.ok)
		}
		got := ""
		if entry != nil {
			got = entry.Symbol
		}
		if got != c.entry {
			t.Errorf("%s: entry %q, want %q", c.name, got, c.entry)
		}
	}
}

// TestSitesSum sums copies built in Go: a pageable copy with a stack under
// its site, one without under withoutStack, a pinned one nowhere; a batch
// call's second copy adds no host time.
func TestSitesSum(t *testing.T) {
	a := NewAccumulator()
	st := frames("cudaMemcpyAsync", "/tmp/app", "load_batch(int)", "/tmp/app")
	call := func(corr, start, end int64, s *records.Stack) *records.Call {
		return &records.Call{Name: "cudaMemcpyAsync", Start: start, End: end, Corr: corr, PID: 1, TID: 1, Stack: s}
	}
	op := func(corr int64, src vocab.MemKind, c *records.Call) *records.Op {
		return &records.Op{Kind: records.OpCopy, Start: c.Start, End: c.End + 10, Corr: corr, PID: 1, Bytes: 1000,
			Copy: vocab.CopyHtoD, Src: src, Dst: vocab.MemDevice, Call: c}
	}
	a.Add(op(1, vocab.MemPageable, call(1, 0, 100, st)))
	a.Add(op(2, vocab.MemPageable, call(2, 200, 500, st)))
	a.Add(op(3, vocab.MemPageable, call(3, 600, 650, nil)))
	a.Add(op(4, vocab.MemPinned, call(4, 700, 710, st)))
	cs := a.sites.finish()
	if !cs.Stacks || len(cs.Sites) != 1 {
		t.Fatalf("%+v, want one site", cs)
	}
	s := cs.Sites[0]
	if s.Frame.Symbol != "load_batch(int)" || s.Copies != 2 || s.Bytes != 2000 || s.HostNs != 400 || s.Longest != 2 || s.Direction != vocab.CopyHtoD {
		t.Errorf("site %+v", s)
	}
	if cs.Pageable != (SiteTotals{3, 3000, 450}) || cs.Unsited != (SiteTotals{1, 1000, 50}) {
		t.Errorf("pageable %+v, without stack %+v", cs.Pageable, cs.Unsited)
	}
	if want := 400.0 / 450; s.Share != want {
		t.Errorf("share %v, want %v", s.Share, want)
	}
	a.sites.lack("no stacks here")
	if cs := a.sites.finish(); cs.Stacks || cs.Lacks != "no stacks here" {
		t.Errorf("after a gap: %+v", cs)
	}
}

// traceAudit audits a capture through the audit's one pass, as check does
// (copies joined to their calls with their stacks), without a replay.
func traceAudit(t *testing.T, path string) *Audit {
	t.Helper()
	src, err := source.Open(context.Background(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	a := NewAccumulator()
	scan, err := capture.TraceOf(context.Background(), src, a.Handler)
	if err != nil {
		t.Fatal(err)
	}
	return a.Finish(scan, Replayed{})
}

// TestRealCallSites: the pipeline's pageable copies come from
// Pipeline::pass, both directions; the PyTorch loop's from Tensor.to
// (THPVariable_to) through copy_kernel_cuda, all but the one call shorter
// than nsys's 10 µs threshold; a capture without stacks says why.
func TestRealCallSites(t *testing.T) {
	captures := filepath.Join("..", "testdata", "captures")
	pipe := traceAudit(t, filepath.Join(captures, "pipeline-backtrace")).CallSites
	if !pipe.Stacks || len(pipe.Sites) != 2 || pipe.Unsited.Copies != 0 || pipe.Pageable.Copies != 96 {
		t.Fatalf("pipeline: %+v", pipe)
	}
	for _, s := range pipe.Sites {
		if s.Frame.Symbol != "(anonymous namespace)::Pipeline::pass(float*, char const*)" || filepath.Base(s.Frame.Module) != "pipeline" ||
			s.Entry != nil || s.Copies != 48 || s.Bytes != 48<<26 {
			t.Errorf("pipeline site %+v", s)
		}
	}
	if pipe.Sites[0].Direction != vocab.CopyHtoD || pipe.Sites[1].Direction != vocab.CopyDtoH || pipe.Sites[0].Share+pipe.Sites[1].Share < 0.999999 {
		t.Errorf("pipeline sites %+v", pipe.Sites)
	}

	torch := traceAudit(t, filepath.Join(captures, "torch-prefetch-backtrace")).CallSites
	if !torch.Stacks || len(torch.Sites) != 1 || torch.Pageable.Copies != 136 || torch.Unsited.Copies != 1 {
		t.Fatalf("torch: %+v", torch)
	}
	s := torch.Sites[0]
	if s.Frame.Symbol != "at::native::copy_kernel_cuda(at::TensorIterator&, bool)" || filepath.Base(s.Frame.Module) != "libtorch_cuda.so" ||
		s.Entry == nil || s.Entry.Symbol != "torch::autograd::THPVariable_to(_object*, _object*, _object*)" || s.Method != "Tensor.to" ||
		s.Copies != 135 || s.Direction != vocab.CopyHtoD {
		t.Errorf("torch site %+v entry %+v", s, s.Entry)
	}
	if s.HostNs+torch.Unsited.HostNs != torch.Pageable.HostNs {
		t.Errorf("torch: site %d + without stack %d ns, pageable %d ns", s.HostNs, torch.Unsited.HostNs, torch.Pageable.HostNs)
	}

	none := traceAudit(t, filepath.Join(captures, "pipeline-pageable")).CallSites
	if none.Stacks || none.Lacks == "" || len(none.Sites) != 0 || none.Unsited != none.Pageable || none.Pageable.Copies != 192 {
		t.Errorf("pipeline-pageable: %+v", none)
	}
}

// TestExpectSites: an expected-audit file's callSites must match in full.
func TestExpectSites(t *testing.T) {
	au := &Audit{CallSites: &CallSites{Stacks: true, Sites: []CallSite{{Frame: Frame{Symbol: "f()"}, Direction: vocab.CopyHtoD, SiteTotals: SiteTotals{Copies: 3}}}}}
	for _, c := range []struct {
		want  []SiteExpectation
		diffs int
	}{
		{[]SiteExpectation{{Frame: "f()", Direction: vocab.CopyHtoD, Copies: 3}}, 0},
		{[]SiteExpectation{{Frame: "f()", Direction: vocab.CopyHtoD, Copies: 4}}, 1},
		{[]SiteExpectation{}, 1},
	} {
		e := &Expectation{CallSites: &c.want}
		if d := e.compareSites(au); len(d) != c.diffs {
			t.Errorf("%+v: %v, want %d differences", c.want, d, c.diffs)
		}
	}
}

// TestUnresolvedSite: calls from a module without symbols, each returning
// to an address of its own, make one site named by the module.
func TestUnresolvedSite(t *testing.T) {
	a := NewAccumulator()
	for i, ip := range []string{"0x401a2c", "0x401b80"} {
		st := frames("cudaMemcpy", "/lib/libcudart.so.13", ip, "/opt/app/bin/loader", "__libc_start_main", "/lib/libc.so.6")
		st.Frames[1].Unresolved = true
		c := &records.Call{Name: "cudaMemcpy", Start: int64(i) * 100, End: int64(i)*100 + 50, Corr: int64(i), PID: 1, TID: 1, Stack: st}
		a.Add(&records.Op{Kind: records.OpCopy, Start: c.Start, End: c.End, Corr: c.Corr, PID: 1, Bytes: 10, Copy: vocab.CopyDtoH,
			Src: vocab.MemDevice, Dst: vocab.MemPageable, Call: c})
	}
	cs := a.sites.finish()
	if len(cs.Sites) != 1 || cs.Sites[0].Copies != 2 || !cs.Sites[0].Frame.Unresolved || cs.Sites[0].Frame.Symbol != "" || cs.Sites[0].Frame.Module != "/opt/app/bin/loader" {
		t.Errorf("sites %+v", cs.Sites)
	}
}
