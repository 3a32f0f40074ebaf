package report

import (
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
)

// TestSiteWords names sites as the call-site table shows them: a C++
// symbol without its parameters, the module's base name, the Python method
// and the function Python called before the framework's.
func TestSiteWords(t *testing.T) {
	for sym, want := range map[string]string{
		"(anonymous namespace)::Pipeline::pass(float*, char const*)": "(anonymous namespace)::Pipeline::pass",
		"at::native::copy_kernel_cuda(at::TensorIterator&, bool)":    "at::native::copy_kernel_cuda",
		"ns::S::get() const":            "ns::S::get",
		"f(std::function<void (int)>)":  "f",
		"main":                          "main",
		"(anonymous namespace)::lambda": "(anonymous namespace)::lambda",
		"operator()(int)":               "operator()",
		"(broken":                       "(broken",
	} {
		if got := shortSymbol(sym); got != want {
			t.Errorf("shortSymbol(%q) = %q, want %q", sym, got, want)
		}
	}
	entry := audit.Frame{Symbol: "torch::autograd::THPVariable_to(_object*, _object*, _object*)", Module: "/venv/torch/lib/libtorch_python.so"}
	for _, c := range []struct {
		site audit.CallSite
		want string
	}{
		{audit.CallSite{Frame: audit.Frame{Symbol: "Pipeline::pass(float*)", Module: "/tmp/cap/src/pipeline"}}, "Pipeline::pass (pipeline)"},
		{audit.CallSite{Frame: audit.Frame{Symbol: "at::native::copy_kernel_cuda(at::TensorIterator&, bool)", Module: "/venv/libtorch_cuda.so"}, Entry: &entry, Method: "Tensor.to"},
			"Tensor.to: torch::autograd::THPVariable_to (libtorch_python.so) → at::native::copy_kernel_cuda (libtorch_cuda.so)"},
		{audit.CallSite{Frame: audit.Frame{Module: "/opt/app/loader", Unresolved: true}}, "a function without a symbol in loader (build it unstripped, with -g, to name it)"},
	} {
		if got := siteWords(c.site); got != c.want {
			t.Errorf("siteWords = %q, want %q", got, c.want)
		}
	}
}
