package coverage_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// export is the SQLite export of a shipped capture or run folder.
func export(t *testing.T, parts ...string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(append([]string{"..", "testdata"}, append(parts, "*.sqlite")...)...))
	if len(m) != 1 {
		t.Fatalf("%v: %d exports", parts, len(m))
	}
	return m[0]
}

// watch reads a capture as the audit does (every copy with its call, and
// the kernels) into a Watcher.
func watch(t *testing.T, path string) *coverage.Coverage {
	t.Helper()
	src, err := source.Open(context.Background(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := coverage.NewWatcher()
	sel := records.Selection{JoinCalls: true, Ops: []records.OpKind{records.OpCopy, records.OpKernel}}
	if _, err := capture.Read(context.Background(), src, sel, w.Handler()); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return w.Coverage()
}

// query runs one query of integers on an export, apart from the readers.
func query(t *testing.T, path, q string, dest ...any) {
	t.Helper()
	db, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(q).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// codes lists the diagnostics' levels and codes.
func codes(ds []diag.Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, string(d.Level)+" "+string(d.Code()))
	}
	return out
}

// TestJAXUnderNVTX: nsys 2025.3 imported the JAX loop traced with -t
// cuda,nvtx with an error processing its events, and says that not every
// CUDA and NVTX event might have been collected; it kept 445 CUDA events
// and 4 NVTX ones. The capture is incomplete, and says to leave NVTX out.
func TestJAXUnderNVTX(t *testing.T) {
	p := export(t, "captures", "jax-nvtx")
	c := watch(t, p)
	var warnings int
	query(t, p, `SELECT count(*) FROM DIAGNOSTIC_EVENT d JOIN ENUM_DIAGNOSTIC_SEVERITY_LEVEL s ON s.id = d.severity WHERE s.name = 'Warning'`, &warnings)
	want := []coverage.Messages{{Severity: "warning", Count: warnings, First: "Error when processing events", FirstDetail: "Cannot find string for an exterior index"}}
	if !reflect.DeepEqual(c.Messages, want) {
		t.Errorf("messages %+v, want %+v", c.Messages, want)
	}
	if !reflect.DeepEqual(c.NotAll, []string{"CUDA", "NVTX"}) || len(c.None) != 0 ||
		!reflect.DeepEqual(c.Collected, []coverage.FamilyCount{{"NVTX", 4}, {"CUDA", 445}}) {
		t.Errorf("not all %v, none %v, collected %v", c.NotAll, c.None, c.Collected)
	}
	if c.ImportError != "Cannot find string for an exterior index" {
		t.Errorf("import error %q", c.ImportError)
	}
	if tr := c.Tracing; !tr.Known || !tr.CUDA || !tr.NVTX || tr.GraphTrace != "graph" || tr.Backtraces || tr.OSRT {
		t.Errorf("tracing %+v", tr)
	}
	ds := c.CaptureDiagnostics(framework.JAX)
	if got := codes(ds); !reflect.DeepEqual(got, []string{"warning capture-incomplete", "warning nsys-diagnostics"}) {
		t.Fatalf("diagnostics %v", got)
	}
	inc := ds[0].Detail.(coverage.Incomplete)
	if inc.Retry != coverage.RetryCUDAOnly || !inc.NVTX || inc.Framework != framework.JAX {
		t.Errorf("incomplete %+v", inc)
	}
	if got := coverage.HidesCopies(ds); !reflect.DeepEqual(got, []diag.Code{coverage.CodeIncomplete}) {
		t.Errorf("hides copies: %v", got)
	}
	if len(c.CopyDiagnostics()) != 0 {
		t.Errorf("copy diagnostics %v", codes(c.CopyDiagnostics()))
	}
}

// TestJAXCUDA: traced with -t cuda alone, the same program imports
// cleanly: nothing to say of the capture, nor of copies no call made.
func TestJAXCUDA(t *testing.T) {
	c := watch(t, export(t, "captures", "jax-cuda"))
	if ds := append(c.CaptureDiagnostics(framework.JAX), c.CopyDiagnostics()...); len(ds) != 0 {
		t.Errorf("diagnostics %v", codes(ds))
	}
	if tr := c.Tracing; !tr.Known || !tr.CUDA || tr.NVTX {
		t.Errorf("tracing %+v", tr)
	}
}

// TestGraphs: traced whole, the graph program's 30 launches of one graph
// hide their copies and kernels; traced node by node, its 60 node copies
// come with their 30 launches.
func TestGraphs(t *testing.T) {
	whole := export(t, "captures", "graph-whole")
	var launches, graphs, gpu int64
	query(t, whole, `SELECT count(*), count(DISTINCT graphId), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE`, &launches, &graphs, &gpu)
	c := watch(t, whole)
	ds := c.CaptureDiagnostics(framework.Runtime)
	if got := codes(ds); !reflect.DeepEqual(got, []string{"warning cuda-graphs-whole"}) {
		t.Fatalf("graph-whole: %v", got)
	}
	if g := ds[0].Detail.(coverage.GraphsWhole); g != (coverage.GraphsWhole{Launches: launches, Graphs: int(graphs), GPUNs: gpu}) || launches != 30 {
		t.Errorf("graph-whole: %+v, want %d launches of %d graphs, %d ns", g, launches, graphs, gpu)
	}
	if len(c.CopyDiagnostics()) != 0 || c.Tracing.GraphTrace != "graph" {
		t.Errorf("graph-whole: copy diagnostics %v, graph trace %q", codes(c.CopyDiagnostics()), c.Tracing.GraphTrace)
	}

	node := export(t, "captures", "graph-node")
	var copies, bytes, nodeLaunches int64
	query(t, node, `SELECT count(*), sum(bytes), count(DISTINCT correlationId) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE graphNodeId IS NOT NULL`,
		&copies, &bytes, &nodeLaunches)
	c = watch(t, node)
	if ds := c.CaptureDiagnostics(framework.Runtime); len(ds) != 0 || c.Tracing.GraphTrace != "node" {
		t.Errorf("graph-node: %v, graph trace %q", codes(ds), c.Tracing.GraphTrace)
	}
	ds = c.CopyDiagnostics()
	if len(ds) != 1 || ds[0].Detail != (coverage.GraphNodes{Launches: nodeLaunches, Copies: copies, Bytes: bytes}) || copies != 60 {
		t.Errorf("graph-node: %v %+v, want %d copies of %d launches", codes(ds), ds, copies, nodeLaunches)
	}
}

// TestMigrations: the managed program's copies are all migrations, summed
// by direction and cause as plain SQL sums them.
func TestMigrations(t *testing.T) {
	p := export(t, "captures", "managed")
	c := watch(t, p)
	causes := map[int]string{1: "prefetch", 2: "fault", 3: "speculative"}
	dirs := map[int]vocab.CopyKind{11: vocab.CopyHtoD, 12: vocab.CopyDtoH}
	var want []coverage.Migration
	for _, dir := range []int{12, 11} { // DtoH sorts before HtoD
		for _, cause := range []int{2, 1, 3} { // fault, prefetch, speculative
			m := coverage.Migration{Direction: dirs[dir], Cause: causes[cause]}
			query(t, p, `SELECT count(*), ifnull(sum(bytes), 0), ifnull(sum("end" - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY
				WHERE copyKind = `+itoa(dir)+` AND migrationCause = `+itoa(cause), &m.Count, &m.Bytes, &m.GPUNs)
			want = append(want, m)
		}
	}
	if !reflect.DeepEqual(c.Migrations, want) {
		t.Errorf("migrations\n%+v, want\n%+v", c.Migrations, want)
	}
	ds := c.CopyDiagnostics()
	if len(ds) != 1 || !reflect.DeepEqual(ds[0].Detail, coverage.Migrations{Migrations: want, PageFaults: true}) {
		t.Errorf("copy diagnostics %+v", ds)
	}
	if len(c.CaptureDiagnostics(framework.Runtime)) != 0 {
		t.Errorf("capture diagnostics %v", codes(c.CaptureDiagnostics(framework.Runtime)))
	}
}

func itoa(v int) string { return string(rune('0'+v/10%10)) + string(rune('0'+v%10)) }

// TestCleanCaptures: the lesson's capture and the training loop's say
// nothing about themselves: nsys kept everything and traced no graph.
func TestCleanCaptures(t *testing.T) {
	for _, p := range []string{export(t, "captures", "h200-pinned"), export(t, "captures", "train-pageable"), export(t, "captures", "pipeline-pinned")} {
		c := watch(t, p)
		if ds := append(c.CaptureDiagnostics(framework.Runtime), c.CopyDiagnostics()...); len(ds) != 0 {
			t.Errorf("%s: %v", p, codes(ds))
		}
		if !c.Tracing.Known || !c.Tracing.CUDA || !c.Tracing.NVTX {
			t.Errorf("%s: tracing %+v", p, c.Tracing)
		}
	}
}

// TestTraceTaken: the run folder whose trace another profiler took says
// so in nsys's own words: not all CUDA and NVTX events collected. (The
// other, no-trace, has no API table at all, so no reader reads it: the
// pipeline's trace-lost diagnostic speaks for it.)
func TestTraceTaken(t *testing.T) {
	for dir, want := range map[string][2][]string{
		"empty-trace": {{"CUDA", "NVTX"}, nil},
	} {
		c := watch(t, export(t, "trace-lost", dir))
		ds := c.CaptureDiagnostics(framework.Runtime)
		if got := codes(ds); !reflect.DeepEqual(got, []string{"warning capture-incomplete", "warning nsys-diagnostics"}) {
			t.Fatalf("%s: %v", dir, got)
		}
		inc := ds[0].Detail.(coverage.Incomplete)
		if !reflect.DeepEqual(inc.NotAll, orEmpty(want[0])) || !reflect.DeepEqual(inc.None, orEmpty(want[1])) || inc.Retry != "" {
			t.Errorf("%s: %+v", dir, inc)
		}
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nsys's own words may name paths: output meant for sharing passes them
// through its rewriter, in the coverage and in its diagnostics.
func TestMapPaths(t *testing.T) {
	c := &coverage.Coverage{ImportError: "at /home/me/x", Dropped: "", Messages: []coverage.Messages{{Severity: "warning", Count: 1, First: "in /home/me/y"}}}
	f := func(s string) string { return strings.ReplaceAll(s, "/home/me", "~") }
	c.MapPaths(f)
	if c.ImportError != "at ~/x" || c.Messages[0].First != "in ~/y" {
		t.Errorf("coverage %+v", c)
	}
	ds := []diag.Diagnostic{{Detail: coverage.Incomplete{ImportError: "at /home/me/x"}}, {Detail: coverage.NsysMessages{Messages: []coverage.Messages{{First: "/home/me/z"}}}}}
	diag.MapPaths(ds, f)
	if ds[0].Detail.(coverage.Incomplete).ImportError != "at ~/x" || ds[1].Detail.(coverage.NsysMessages).Messages[0].First != "~/z" {
		t.Errorf("details %+v", ds)
	}
}
