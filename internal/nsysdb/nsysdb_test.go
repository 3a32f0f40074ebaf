package nsysdb

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/vocab"
)

func TestResolveTables(t *testing.T) {
	got := ResolveTables([]string{"A", "A_V2", "A_V10", "A_V9", "A_VX", "AB_V3", "B_V2", "A_V+4"}, "A", "B", "C")
	if got["A"] != "A_V10" || got["B"] != "B_V2" || got["C"] != "" {
		t.Errorf("ResolveTables = %v", got)
	}
}

func TestResolve(t *testing.T) {
	objs := []SchemaObject{{"A", "table", "CREATE TABLE A (x)"}, {"A_V2", "table", "CREATE TABLE A_V2 (x)"},
		{"B", "table", "CREATE TABLE B (x)"}, {"B_V3", "table", "CREATE TABLE B_V3 (x)"}, {"ix", "index", ""}}
	rows := map[string]bool{"A": true, "B": true, "B_V3": false}
	has := func(t string) (bool, error) { return rows[t], nil }
	got, err := Resolve(objs, has, "A", "B", "C")
	if err != nil || got["A"] != "A" || got["B"] != "B" || got["C"] != "" {
		t.Errorf("Resolve = %v, %v; want the versions that hold rows", got, err)
	}
	rows["A_V2"] = true
	if _, err := Resolve(objs, has, "A"); err == nil || !strings.Contains(err.Error(), "both A_V2 and A hold rows") {
		t.Errorf("two versions with rows: %v", err)
	}
	rows["A_V2"], rows["A"] = false, false
	if got, err := Resolve(objs, has, "A"); err != nil || got["A"] != "A_V2" {
		t.Errorf("no version with rows: %v %v, want the highest", got, err)
	}
	for _, o := range []SchemaObject{{"A_V9", "view", "CREATE VIEW A_V9 AS SELECT 1"},
		{"A_V9", "table", "CREATE  virtual TABLE A_V9 USING fts5(x)"}} {
		_, err := Resolve(append(objs, o), func(string) (bool, error) { t.Fatal("probed a view"); return false, nil }, "A")
		var te *TableError
		if !errors.As(err, &te) || te.Table != "A_V9" {
			t.Errorf("%s %q: %v, want it refused", o.Type, o.SQL, err)
		}
	}
}

func TestSplitGlobalID(t *testing.T) {
	if pid, tid := SplitGlobalID(281475345809430); pid != 22 || tid != 22 {
		t.Errorf("SplitGlobalID = %d %d, want 22 22", pid, tid)
	}
	if got := PIDExpr("g"); got != "((g >> 24) & 16777215)" {
		t.Errorf("PIDExpr = %q", got)
	}
	// The host's ids above the pid, as HostExprs decodes them in SQL.
	for _, c := range []struct{ g, hw, vm int64 }{{281475345809430, 0, 1}, {3<<56 | 5<<48 | 22<<24 | 22, 3, 5}} {
		if hw, vm := HostIDs(c.g); hw != c.hw || vm != c.vm {
			t.Errorf("HostIDs(%d) = %d %d, want %d %d", c.g, hw, vm, c.hw, c.vm)
		}
	}
	if hw, vm := HostExprs("g"); hw != "((g >> 56) & 255)" || vm != "((g >> 48) & 255)" {
		t.Errorf("HostExprs = %q %q", hw, vm)
	}
}

func TestMatchReport(t *testing.T) {
	for _, c := range []struct{ file, key, base string }{
		{"ref_cuda_api_trace.csv", ReportAPITrace, "ref"},
		{"ref_cudaapitrace.csv", ReportAPITrace, "ref"},
		{"x_y_gpumemsizesum.csv", ReportMemSizeSum, "x_y"},
		{"nvtx_sum.csv", ReportNVTXSum, ""},
	} {
		key, base, ok := MatchReport(c.file)
		if !ok || key != c.key || base != c.base {
			t.Errorf("MatchReport(%q) = %q %q %v, want %q %q", c.file, key, base, ok, c.key, c.base)
		}
	}
	if _, _, ok := MatchReport("ref_cuda_kern_sum.csv"); ok {
		t.Error("MatchReport accepted a report nsyscheck does not read")
	}
}

func TestStatsNames(t *testing.T) {
	names, missing := StatsNames(map[string]bool{"cuda_api_sum": true, "cudaapitrace": true, "gpumemtimesum": true, "cuda_gpu_mem_size_sum": true})
	if want := []string{"cuda_api_sum", "cudaapitrace", "gpumemtimesum", "cuda_gpu_mem_size_sum"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if !reflect.DeepEqual(missing, []string{ReportNVTXSum}) {
		t.Errorf("missing = %v", missing)
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       Kind
	}{
		{"a.nsys-rep", SQLiteMagic, KindNsysRep},
		{"a.QDREP", "", KindNsysRep},
		{"a.bin", SQLiteMagic + "rest", KindSQLite},
		{"a.sqlite", "garbage", KindSQLite},
		{"a.txt", NsysRepMagic, KindNsysRep},
		{"a.json", "{", KindJSON},
		{"a_cuda_api_sum.csv", "Time", KindCSV},
		{"a.transcript.txt", "size", KindUnknown},
		{"a.transcript.txt", "device: NVIDIA H200 (sm_90, 132 SMs)\n", KindTranscript},
		{"out.log", "Collecting data...\nWARNING: x\n  gate h2d-pageable copy-back ok\n", KindTranscript},
		{"a.txt", "[1/8] [====    ] 50%\rPart 1: blocking H2D\n", KindTranscript},
		{"notes.txt", "Part 2 of my notes\ndevice:no space\n", KindUnknown},
		{"a.bin", "\x00\x01\x02", KindUnknown},
	} {
		if got := Sniff(c.name, []byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q, %q) = %v, want %v", c.name, c.head, got, c.want)
		}
	}
	if Magic([]byte("SQLite format 3")) != KindUnknown {
		t.Error("Magic accepted a header without its NUL")
	}
}

func TestURI(t *testing.T) {
	got := URI(`/a b/"q" 'x'?y#z%2F.sqlite`, "mode=ro")
	want := `file:/a%20b/%22q%22%20%27x%27%3Fy%23z%252F.sqlite?mode=ro`
	if got != want {
		t.Errorf("URI = %s, want %s", got, want)
	}
	if QuoteIdent(`a"b`) != `"a""b"` {
		t.Errorf("QuoteIdent = %s", QuoteIdent(`a"b`))
	}
}

func TestGPUTraceRowKinds(t *testing.T) {
	for _, c := range []struct {
		name             string
		kind             vocab.CopyKind
		isCopy, isMemset bool
	}{
		{"[CUDA memcpy Host-to-Device]", vocab.CopyHtoD, true, false},
		{"[CUDA memcpy DtoH]", vocab.CopyDtoH, true, false},
		{"[CUDA memcpy Unified Host-to-Device]", vocab.CopyHtoD, true, false},
		{"[CUDA memcpy Array-to-Array]", vocab.CopyOther, true, false},
		{"[CUDA memset]", "", false, true},
		{"void add<float>(float *)", "", false, false},
	} {
		isCopy, isMemset := ReportRowKind(c.name)
		var kind vocab.CopyKind
		if isCopy {
			kind, _ = ReportCopyKindOf(c.name)
		}
		if kind != c.kind || isCopy != c.isCopy || isMemset != c.isMemset {
			t.Errorf("ReportRowKind/ReportCopyKindOf(%q) = %q %v %v, want %q %v %v", c.name, kind, isCopy, isMemset, c.kind, c.isCopy, c.isMemset)
		}
	}
}

func TestMatchReportRefusesOthers(t *testing.T) {
	for _, file := range []string{"train_cuda_gpu_trace.csv", "cuda_gpu_trace.csv"} {
		if key, _, ok := MatchReport(file); !ok || key != ReportGPUTrace {
			t.Errorf("MatchReport(%q) = %q, %v; want %s", file, key, ok, ReportGPUTrace)
		}
	}
	for _, file := range []string{"train_cuda_api_trace.csv", "xcuda_gpu_trace.csv"} {
		if key, _, ok := MatchReport(file); ok && key == ReportGPUTrace {
			t.Errorf("MatchReport(%q) took another file for %s", file, ReportGPUTrace)
		}
	}
	if got := TIDExpr("g"); got != "(g & 16777215)" {
		t.Errorf("TIDExpr = %q", got)
	}
}

func TestPerRecordReports(t *testing.T) {
	for file, want := range map[string]string{
		"x_cuda_gpu_trace.csv": ReportGPUTrace, "x_gputrace.csv": ReportGPUTrace,
		"x_nvtx_pushpop_trace.csv": ReportNVTXTrace, "x_nvtxpptrace.csv": ReportNVTXTrace,
	} {
		if key, base, ok := MatchReport(file); !ok || key != want || base != "x" {
			t.Errorf("MatchReport(%q) = %q, %q, %v", file, key, base, ok)
		}
	}
	for name, want := range map[string][2]bool{
		"[CUDA memcpy Host-to-Device]": {true, false}, "[CUDA memcpy HtoD]": {true, false},
		"[CUDA memset]": {false, true}, "<unnamed>::scaleCopy(float4 *, const float4 *, unsigned long, float)": {false, false},
	} {
		if c, m := ReportRowKind(name); c != want[0] || m != want[1] {
			t.Errorf("ReportRowKind(%q) = %v, %v; want %v", name, c, m, want)
		}
	}
	// The per-record reports are asked for where listed, never required.
	names, missing := StatsNames(map[string]bool{ReportAPISum: true, ReportAPITrace: true, ReportMemTimeSum: true, ReportMemSizeSum: true, ReportNVTXSum: true})
	if len(missing) != 0 || len(names) != 5 {
		t.Errorf("without the per-record reports: %v, missing %v", names, missing)
	}
}

func TestReadOnlyURI(t *testing.T) {
	got := ReadOnlyURI(`/a b/"q" 'x'?y#z%2F.sqlite`)
	want := `file:/a%20b/%22q%22%20%27x%27%3Fy%23z%252F.sqlite?mode=ro&immutable=1`
	if got != want {
		t.Errorf("dsn = %s, want %s", got, want)
	}
}

func TestStripAPIVersion(t *testing.T) {
	for in, want := range map[string]string{
		"cudaMemcpy_v3020":       "cudaMemcpy",
		"cudaLaunchKernel_v7000": "cudaLaunchKernel",
		"cuKernelGetName":        "cuKernelGetName",
		"cudaMemcpy_ptds_v7000":  "cudaMemcpy_ptds",
		"cudaFoo_v":              "cudaFoo_v",
		"cudaFoo_vx1":            "cudaFoo_vx1",
		"_v12":                   "_v12",
		"cudaMemcpy":             "cudaMemcpy",
		"cuMemcpy_v2":            "cuMemcpy",
		"foo_v":                  "foo_v",
		"a_vx1":                  "a_vx1",
	} {
		if got := StripAPIVersion(in); got != want {
			t.Errorf("StripAPIVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// nsys 2025.3's own words about its capture, as DIAGNOSTIC_EVENT holds
// them in the shipped captures: what each says, and the part a person reads.
func TestDiagOf(t *testing.T) {
	processing := "Error when processing events: Source ID=\nType=ErrorInformation (18)\n Error information:\n ProcessEventsError (4005)\n" +
		"  Properties:\n   ErrorText (100)=/x/StringStorage.cpp(119): Throw in function ...\n" +
		"[QuadDCommon::tag_message*] = Cannot find string for an exterior index\n"
	for _, c := range []struct {
		text         string
		kind         DiagKind
		family       string
		n            int64
		head, detail string
	}{
		{"Not all CUDA events might have been collected.", DiagNotAll, "CUDA", 0, "Not all CUDA events might have been collected", ""},
		{"Not all NVTX events might have been collected.", DiagNotAll, "NVTX", 0, "Not all NVTX events might have been collected", ""},
		{"No CUDA events collected. Does the process use CUDA?", DiagNone, "CUDA", 0, "No CUDA events collected. Does the process use CUDA?", ""},
		{"Number of CUDA events collected: \t445.", DiagCollected, "CUDA", 445, "Number of CUDA events collected: \t445", ""},
		{"Number of CUDA events collected: \t99999999999999999999999.", DiagCollected, "CUDA", -1, "Number of CUDA events collected: \t99999999999999999999999", ""},
		{"Number of CUDA events collected: \t7,22.", DiagCollected, "CUDA", -1, "Number of CUDA events collected: \t7,22", ""},
		{"Number of CUDA events collected: \t-5.", DiagCollected, "CUDA", -1, "Number of CUDA events collected: \t-5", ""},
		{processing, DiagProcessing, "", 0, "Error when processing events", "Cannot find string for an exterior index"},
		{"12 CUPTI records were dropped", DiagDropped, "", 0, "12 CUPTI records were dropped", ""},
		{"Profiling has started.", DiagOther, "", 0, "Profiling has started", ""},
		{"Number of CUPTI events produced: \t4107, CUPTI buffers: 50.", DiagOther, "", 0, "Number of CUPTI events produced: \t4107, CUPTI buffers: 50", ""},
	} {
		kind, family, n := DiagOf(c.text)
		head, detail := DiagMessage(c.text)
		if kind != c.kind || family != c.family || n != c.n || head != c.head || detail != c.detail {
			t.Errorf("DiagOf(%q) = %v %q %d, %q %q; want %v %q %d, %q %q", c.text, kind, family, n, head, detail, c.kind, c.family, c.n, c.head, c.detail)
		}
	}
}

// A unified-memory migration's copy kind gives its direction and is told
// apart from a copy, in the export's enum and in the report's name.
func TestMigrationKinds(t *testing.T) {
	for name, want := range map[string]vocab.CopyKind{"CUDA_MEMCPY_KIND_UVM_HTOD": vocab.CopyHtoD, "CUDA_MEMCPY_KIND_UVM_DTOH": vocab.CopyDtoH,
		"CUDA_MEMCPY_KIND_UVM_DTOD": vocab.CopyDtoD} {
		if CopyKindOf(name) != want || !IsMigrationKind(name) {
			t.Errorf("%s: %s, migration %v", name, CopyKindOf(name), IsMigrationKind(name))
		}
	}
	if IsMigrationKind(CopyOperHtoD) || ReportMigration("[CUDA memcpy Host-to-Device]") || !ReportMigration("[CUDA memcpy Unified Device-to-Host]") {
		t.Error("a copy taken for a migration, or a migration for a copy")
	}
	if !IsGraphLaunch("cudaGraphLaunch") || !IsGraphLaunch("cuGraphLaunch_ptsz") || IsGraphLaunch("cudaGraphInstantiate") {
		t.Error("graph launches")
	}
}
func TestAffinity(t *testing.T) {
	for decl, want := range map[string]string{"INTEGER": AffinityInteger, "int": AffinityInteger, "BIGINT": AffinityInteger,
		"TEXT": AffinityText, "VARCHAR(10)": AffinityText, "": AffinityBlob, "BLOB": AffinityBlob, "REAL": AffinityReal,
		"DOUBLE": AffinityReal, "NUM": AffinityNumeric, "DECIMAL": AffinityNumeric} {
		if got := Affinity(decl); got != want {
			t.Errorf("Affinity(%q) = %s, want %s", decl, got, want)
		}
	}
}

func TestReadableSchema(t *testing.T) {
	for v, want := range map[string]bool{
		"3.20.3": true, "9.0.0": true, "3.99.0": true, "10.0.12": true,
		"": false, "abc": false, "3.20": false, "-1.0.0": false, "3.20.3.1": false, "3..3": false, " 3.20.3": false, "3.20.3\x1b]0;x\a": false,
	} {
		if got := ReadableSchema(v); got != want {
			t.Errorf("ReadableSchema(%q) = %v, want %v", v, got, want)
		}
	}
}
