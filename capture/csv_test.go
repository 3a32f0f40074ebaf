package capture

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

const (
	refCSV2025 = "../testdata/reference/h200-ref"
	refCSV2022 = "../testdata/reference/h200-ref-nsys2022-csv"
)

func TestGoldenCSV(t *testing.T) {
	for _, tc := range []struct{ dir, golden string }{
		{refCSV2025, "csv-ref-nsys2025.txt"},
		{refCSV2022, "csv-ref-nsys2022.txt"},
		{"../testdata/captures/h200-pinned", "csv-h200-pinned.txt"},
		{"../testdata/captures/h200-pinned-nonvtx", "csv-h200-pinned-nonvtx.txt"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			c, err := LoadCSVDir(tc.dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, goldenSummary(c))
		})
	}
}

func TestCSVGenerationsAgree(t *testing.T) {
	a, err := LoadCSVDir(refCSV2025, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadCSVDir(refCSV2022, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Calls) != 444 {
		t.Errorf("got %d calls, want the 444 rows of ref_cuda_api_trace.csv", len(a.Calls))
	}
	if !reflect.DeepEqual(a.Calls, b.Calls) {
		t.Error("2025.3 and 2022.4 reports give different calls")
	}
	if !reflect.DeepEqual(a.APISummary, b.APISummary) || !reflect.DeepEqual(a.MemSummary, b.MemSummary) ||
		!reflect.DeepEqual(a.RangeSummary, b.RangeSummary) {
		t.Errorf("summaries differ:\n%+v\n%+v", a.RangeSummary, b.RangeSummary)
	}
	if !reflect.DeepEqual(a.Missing, b.Missing) {
		t.Errorf("missing facts differ:\n%v\n%v", a.Missing, b.Missing)
	}
}

func TestCSVContent(t *testing.T) {
	c, err := LoadCSVDir(refCSV2025, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != FormatCSV || len(c.Files) != 5 {
		t.Errorf("format %s files %v", c.Format, c.Files)
	}
	first := c.Calls[0]
	want := APICall{Name: "cuModuleGetLoadingMode", Start: 385321151, End: 385321151 + 1245, CorrelationID: 1,
		PID: 22, TID: 22, Thread: "ref", Row: 1}
	if first != want {
		t.Errorf("first call %+v, want %+v", first, want)
	}
	n := 0
	for _, call := range c.Calls {
		if call.Name == "cudaMemcpyAsync" {
			n++
		}
	}
	if n != 22 {
		t.Errorf("%d cudaMemcpyAsync calls, want 22", n)
	}
	for _, f := range []records.Fact{records.FactMemcpy, records.FactMemcpyBytes, records.FactMemoryKinds, records.FactCorrelation, records.FactKernels, records.FactNVTX} {
		if c.Has(f) {
			t.Errorf("CSV capture claims %s", f)
		}
	}
	for _, f := range []records.Fact{records.FactAPITrace, records.FactAPISummary, records.FactNVTXSummary, records.FactMemSummary, records.FactProcessScope} {
		if !c.Has(f) {
			t.Errorf("CSV capture lacks %s: %s", f, c.Why(f))
		}
	}
	if !strings.Contains(c.Why(records.FactMemcpyBytes), "cuda_gpu_trace") {
		t.Errorf("memcpy-bytes reason: %q", c.Why(records.FactMemcpyBytes))
	}
	if len(c.MemSummary) != 2 || c.MemSummary[0].Kind != vocab.CopyHtoD || c.MemSummary[0].Count != 155 ||
		c.MemSummary[0].TotalNs != 783402530 || c.MemSummary[0].TotalMB != 11377.050 {
		t.Errorf("mem summary %+v", c.MemSummary)
	}
	if c.RangeSummary[0].Name != "h2d-pageable" || c.RangeSummary[0].Domain != "" {
		t.Errorf("range summary %+v", c.RangeSummary[0])
	}

	only, err := LoadCSVDir(refCSV2025, Options{APINames: []string{"cudaMemcpyAsync"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Calls) != 22 {
		t.Errorf("APINames filter kept %d calls, want 22", len(only.Calls))
	}
}

// writeDir makes a folder holding the given files.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const traceHeader = "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n"

func TestCSVQuirks(t *testing.T) {
	body := "\uFEFF" + strings.ReplaceAll(traceHeader, "\n", "\r\n") +
		"100,5,cudaMemcpy_v3020,0,7,22,23,20,\"worker, 2\"\r\n" +
		"50,1,cuLaunchKernel,0,6,22,23,20,main\r\n"
	dir := writeDir(t, map[string]string{"x_cuda_api_trace.csv": body})
	c, err := LoadCSVDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Calls) != 2 {
		t.Fatalf("got %d calls", len(c.Calls))
	}
	got := c.Calls[1] // sorted by start
	want := APICall{Name: "cudaMemcpy", Start: 100, End: 105, CorrelationID: 7, PID: 22, TID: 23, Thread: "worker, 2", Row: 1}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if c.Calls[0].Name != "cuLaunchKernel" {
		t.Errorf("driver call not kept: %+v", c.Calls[0])
	}
	if c.Has(records.FactAPISummary) || !strings.Contains(c.Why(records.FactAPISummary), "nsys stats --report cuda_api_sum") {
		t.Errorf("api-summary: %q", c.Why(records.FactAPISummary))
	}

	// --timeunit usec exports decimals in microseconds.
	dir = writeDir(t, map[string]string{"x_cuda_api_trace.csv": "Start (us),Duration (us),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n1.5,0.25,cudaFree,0,1,2,3,20,t\n"})
	c, err = LoadCSVDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Calls[0].Start != 1500 || c.Calls[0].End != 1750 {
		t.Errorf("usec columns: %+v", c.Calls[0])
	}
}

// wantInputError checks err is an *inputerr.Error whose text holds every part.
func wantInputError(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	if !inputerr.Is(err) {
		t.Fatalf("error %T is not an *inputerr.Error: %v", err, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func TestCSVErrors(t *testing.T) {
	apiSum := "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n1.0,10,1,10,10,10,10,0,cudaFree\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		parts []string
	}{
		{"negative duration", map[string]string{"a_cuda_api_trace.csv": traceHeader + "1,2,cudaFree,0,1,2,3,20,t\n5,-3,cudaFree,0,1,2,3,20,t\n"},
			[]string{"a_cuda_api_trace.csv", "data row 2", `"Duration (ns)"`, `"-3"`, "non-negative"}},
		{"negative start", map[string]string{"a_cuda_api_trace.csv": traceHeader + "-1,2,cudaFree,0,1,2,3,20,t\n"},
			[]string{"a_cuda_api_trace.csv", "data row 1", `"Start (ns)"`}},
		{"non-numeric duration", map[string]string{"a_cuda_api_trace.csv": traceHeader + "1,abc,cudaFree,0,1,2,3,20,t\n"},
			[]string{"a_cuda_api_trace.csv", "data row 1", `"Duration (ns)"`, `"abc"`}},
		{"non-numeric pid", map[string]string{"a_cuda_api_trace.csv": traceHeader + "1,2,cudaFree,0,1,x,3,20,t\n"},
			[]string{"a_cuda_api_trace.csv", "data row 1", `"Pid"`}},
		{"missing column", map[string]string{"a_cuda_api_trace.csv": "Start (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n1,cudaFree,0,1,2,3,20,t\n"},
			[]string{"a_cuda_api_trace.csv", `"Duration (ns)"`, "columns found", `"Start (ns)"`, `"Thread Name"`}},
		{"renamed column", map[string]string{"a_cuda_api_sum.csv": strings.Replace(apiSum, "Total Time (ns)", "Sum (ns)", 1)},
			[]string{"a_cuda_api_sum.csv", `"Total Time (ns)"`, `"Sum (ns)"`}},
		{"bad summary value", map[string]string{"a_cuda_api_sum.csv": strings.Replace(apiSum, ",1,10,", ",one,10,", 1)},
			[]string{"a_cuda_api_sum.csv", "data row 1", `"Num Calls"`}},
		{"negative summary time", map[string]string{"a_nvtx_sum.csv": "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n1,-5,1,1,1,1,1,0,PushPop,:x\n"},
			[]string{"a_nvtx_sum.csv", "data row 1", `"Total Time (ns)"`}},
		{"wrong field count", map[string]string{"a_cuda_api_trace.csv": traceHeader + "1,2,cudaFree\n"},
			[]string{"a_cuda_api_trace.csv", "data row 1", "malformed CSV"}},
		{"unknown csv", map[string]string{"kernels.csv": "a,b\n1,2\n", "notes.csv": "x\n"},
			[]string{"kernels.csv", "notes.csv", "_cuda_api_trace.csv", "_cudaapitrace.csv"}},
		{"empty folder", map[string]string{}, []string{"no CSV files", "_cuda_api_trace.csv"}},
		{"ambiguous base names", map[string]string{"a_cuda_api_trace.csv": traceHeader, "b_cuda_api_trace.csv": traceHeader},
			[]string{"a_cuda_api_trace.csv", "b_cuda_api_trace.csv", "several captures"}},
		{"two generations", map[string]string{"a_cuda_api_sum.csv": apiSum, "a_cudaapisum.csv": apiSum},
			[]string{"a_cuda_api_sum.csv", "a_cudaapisum.csv"}},
		{"no rows anywhere", map[string]string{"a_cuda_api_trace.csv": traceHeader, "a_nvtx_sum.csv": ""},
			[]string{"hold no data rows"}},
		{"unknown time unit", map[string]string{"a_cuda_api_trace.csv": strings.Replace(traceHeader, "Start (ns)", "Start (fortnights)", 1)},
			[]string{"a_cuda_api_trace.csv", "fortnights"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, tc.files)
			_, err := LoadCSVDir(dir, Options{})
			wantInputError(t, err, tc.parts...)
		})
	}
	_, err := LoadCSVDir(filepath.Join(t.TempDir(), "nope"), Options{})
	wantInputError(t, err, "nope", "check the path")
}

func TestCSVEmptyReportIsMissing(t *testing.T) {
	c, err := LoadCSVDir("../testdata/captures/h200-pinned-nonvtx", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Has(records.FactNVTXSummary) || !strings.Contains(c.Why(records.FactNVTXSummary), "is empty") {
		t.Errorf("nvtx-summary: %q", c.Why(records.FactNVTXSummary))
	}
}
