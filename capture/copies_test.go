package capture

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// copyGroup is what the cross-check compares: copies by API, direction and
// memory kinds.
type copyGroup struct {
	api      string
	kind     CopyKind
	src, dst MemKind
}

type copySums struct{ n, bytes, host, gpu int64 }

// sqlCopySums sums the copies of an SQLite export with one plain query,
// independent of StreamCopies: the copy table joined to the runtime table.
func sqlCopySums(t *testing.T, path string) map[copyGroup]copySums {
	t.Helper()
	db, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`
		SELECT s.value, o.name, ifnull(sk.name, ''), ifnull(dk.name, ''), count(*), sum(m.bytes),
		       sum(r."end" - r.start), sum(m."end" - m.start)
		FROM CUPTI_ACTIVITY_KIND_MEMCPY m
		JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId
		JOIN StringIds s ON s.id = r.nameId
		JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = m.copyKind
		LEFT JOIN ENUM_CUDA_MEM_KIND sk ON sk.id = m.srcKind
		LEFT JOIN ENUM_CUDA_MEM_KIND dk ON dk.id = m.dstKind
		GROUP BY 1, 2, 3, 4`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[copyGroup]copySums{}
	for rows.Next() {
		var api, op, sk, dk string
		var s copySums
		if err := rows.Scan(&api, &op, &sk, &dk, &s.n, &s.bytes, &s.host, &s.gpu); err != nil {
			t.Fatal(err)
		}
		g := copyGroup{stripAPIVersion(api), copyKindByName(op), memKindByName(sk), memKindByName(dk)}
		if sk == "" {
			g.src = MemUnknown
		}
		if dk == "" {
			g.dst = MemUnknown
		}
		o := out[g]
		o.n, o.bytes, o.host, o.gpu = o.n+s.n, o.bytes+s.bytes, o.host+s.host, o.gpu+s.gpu
		out[g] = o
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// streamSums sums what StreamCopies hands out the same way.
func streamSums(t *testing.T, path string) (map[copyGroup]copySums, *CopyScan, []CopyCall) {
	t.Helper()
	out := map[copyGroup]copySums{}
	var all []CopyCall
	scan, err := StreamCopies(path, Options{}, func(c *CopyCall) {
		all = append(all, *c)
		if c.API == "" {
			return
		}
		g := copyGroup{c.API, c.Kind, c.Src, c.Dst}
		o := out[g]
		o.n++
		o.bytes += c.Bytes
		o.host += c.HostNs
		o.gpu += c.GPUDuration()
		out[g] = o
	})
	if err != nil {
		t.Fatalf("StreamCopies(%s): %v", path, err)
	}
	return out, scan, all
}

// CrossCheckCopies compares StreamCopies with the plain query.
func crossCheckCopies(t *testing.T, path string) *CopyScan {
	t.Helper()
	want := sqlCopySums(t, path)
	got, scan, _ := streamSums(t, path)
	if len(want) == 0 {
		t.Fatalf("%s: the plain query found no copies", path)
	}
	for g, w := range want {
		if got[g] != w {
			t.Errorf("%s %+v: stream %+v, plain SQL %+v", path, g, got[g], w)
		}
	}
	for g := range got {
		if _, ok := want[g]; !ok {
			t.Errorf("%s %+v: only the stream has it: %+v", path, g, got[g])
		}
	}
	return scan
}

func TestStreamCopiesCrossCheck(t *testing.T) {
	for _, p := range []string{refSQLite, filepath.Join("..", "testdata", "captures", "h200-pinned", "pinned.sqlite")} {
		scan := crossCheckCopies(t, p)
		if scan.Copies == 0 || scan.APICalls == 0 || scan.Span <= 0 || scan.SpanFrom != SpanTrace || scan.Unmatched != 0 {
			t.Errorf("%s: scan %+v", p, scan)
		}
	}
	for _, dir := range []string{"train-pageable", "train-pinned"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", "captures", dir, "*.sqlite"))
		for _, p := range m {
			crossCheckCopies(t, p)
		}
	}
}

// gtid builds an nsys global thread id; gpid a global process id.
func gtid(pid, tid int64) int64 { return 1<<48 | pid<<24 | tid }
func gpid(pid int64) int64      { return 1<<48 | pid<<24 }

func TestStreamCopiesThreadsRangesBatches(t *testing.T) {
	ins := func(table string, cols string, vals ...any) string {
		parts := make([]string, len(vals))
		for i, v := range vals {
			if s, ok := v.(string); ok {
				parts[i] = "'" + s + "'"
			} else {
				parts[i] = fmt.Sprint(v)
			}
		}
		return "INSERT INTO " + table + " (" + cols + ") VALUES (" + strings.Join(parts, ", ") + ")"
	}
	const rt = "CUPTI_ACTIVITY_KIND_RUNTIME"
	const mc = "CUPTI_ACTIVITY_KIND_MEMCPY"
	rcols := "start, \"end\", eventClass, globalTid, correlationId, nameId, returnValue"
	mcols := "start, \"end\", deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind"
	const push = 59 // NvtxPushPopRange in the reference export
	p := sqFixture(t,
		`INSERT INTO StringIds (id, value) VALUES (9001, 'cudaMemcpyBatchAsync_v12080'), (9002, 'outer'), (9003, 'inner')`,
		// pid 99, thread 100: a pageable async copy inside two nested ranges, with the
		// correlation id 1 that pid 22 uses too (ids are per process).
		ins(rt, rcols, 1000, 1900, 1, gtid(99, 100), 1, 58, 0),
		ins(mc, mcols, 1100, 1950, 0, 1, 21, 1, gpid(99), 4096, 1, 0, 2),
		// thread 101: a batch call with two copies to pinned memory on stream 22.
		ins(rt, rcols, 3000, 3100, 1, gtid(99, 101), 2, 9001, 0),
		ins(mc, mcols, 3200, 3300, 0, 1, 22, 2, gpid(99), 1000, 2, 2, 1),
		ins(mc, mcols, 3300, 3400, 0, 1, 22, 2, gpid(99), 3000, 2, 2, 1),
		// a copy whose call is not in the runtime table (a driver call).
		ins(mc, mcols, 5000, 5100, 0, 1, 21, 77777, gpid(99), 8, 1, 0, 2),
		// a copy node of a graph: its call is not a copy API's, so not joined.
		`INSERT INTO StringIds (id, value) VALUES (9004, 'cudaGraphLaunch_v10000')`,
		ins(rt, rcols, 6000, 6050, 1, gtid(99, 100), 88888, 9004, 0),
		ins(mc, mcols, 6100, 6200, 0, 1, 21, 88888, gpid(99), 16, 1, 0, 2),
		// ranges on thread 100: outer [900, 2000] holds inner [950, 1950];
		// a later range on the same thread encloses nothing.
		ins("NVTX_EVENTS", "start, \"end\", eventType, textId, globalTid", 900, 2000, push, 9002, gtid(99, 100)),
		ins("NVTX_EVENTS", "start, \"end\", eventType, textId, globalTid", 950, 1950, push, 9003, gtid(99, 100)),
		ins("NVTX_EVENTS", "start, \"end\", eventType, text, globalTid", 2500, 2600, push, "later", gtid(99, 100)),
		// a range on another thread around the batch call is not its.
		ins("NVTX_EVENTS", "start, \"end\", eventType, text, globalTid", 2900, 3200, push, "elsewhere", gtid(99, 100)),
	)
	_, scan, all := streamSums(t, p)
	var mine []CopyCall
	for _, c := range all {
		if c.PID == 99 {
			mine = append(mine, c)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Start < mine[j].Start })
	if len(mine) != 5 {
		t.Fatalf("%d copies of pid 99, want 5: %+v", len(mine), mine)
	}
	a := mine[0]
	if a.API != "cudaMemcpyAsync" || a.TID != 100 || a.CallStart != 1000 || a.HostNs != 900 || a.Kind != CopyHtoD ||
		a.Src != MemPageable || a.Dst != MemDevice || a.Stream != 21 || a.Range != "inner" || a.Bytes != 4096 {
		t.Errorf("async copy = %+v", a)
	}
	b1, b2 := mine[1], mine[2]
	if b1.API != "cudaMemcpyBatchAsync" || b2.API != "cudaMemcpyBatchAsync" || b1.HostNs+b2.HostNs != 100 ||
		(b1.HostNs != 0) == (b2.HostNs != 0) {
		t.Errorf("batch copies: the call's 100 ns must count once: %+v %+v", b1, b2)
	}
	if b1.Range != "" || b1.Kind != CopyDtoH || b1.Dst != MemPinned || b1.TID != 101 {
		t.Errorf("batch copy = %+v", b1)
	}
	if u := mine[3]; u.API != "" || u.HostNs != 0 || u.CorrelationID != 77777 {
		t.Errorf("copy without a call = %+v", u)
	}
	if g := mine[4]; g.API != "" || g.CorrelationID != 88888 {
		t.Errorf("graph copy = %+v", g)
	}
	if scan.Unmatched != 2 {
		t.Errorf("unmatched = %d, want 2", scan.Unmatched)
	}
	// pid 22's copy with correlation id 1 keeps pid 22's call.
	for _, c := range all {
		if c.PID == 22 && c.CorrelationID == 1 && c.CallStart == 1000 {
			t.Errorf("pid 22's copy joined pid 99's call: %+v", c)
		}
	}
}

func TestStreamCopiesVersionedAndMissing(t *testing.T) {
	p := sqFixture(t,
		`ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY RENAME TO CUPTI_ACTIVITY_KIND_MEMCPY_V2`,
		`DROP TABLE NVTX_EVENTS`)
	want := sqlCopySums(t, refSQLite)
	got, scan, _ := streamSums(t, p)
	if len(got) != len(want) {
		t.Errorf("versioned copy table: %d groups, want %d", len(got), len(want))
	}
	found := false
	for _, g := range scan.Missing {
		found = found || g.Fact == FactNVTX
	}
	if !found {
		t.Errorf("no NVTX table but nothing said missing: %+v", scan.Missing)
	}

	p = sqFixture(t, `DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME`)
	if _, err := StreamCopies(p, Options{}, func(*CopyCall) {}); err == nil || !strings.Contains(err.Error(), "no CUDA API trace") {
		t.Errorf("no runtime table: err = %v", err)
	}
	if _, err := StreamCopies(filepath.Join(t.TempDir(), "none.sqlite"), Options{}, func(*CopyCall) {}); err == nil {
		t.Error("a missing file read without error")
	}
}

func TestRangeIndex(t *testing.T) {
	ix := newRangeIndex([]Range{
		{Name: "a", Start: 0, End: 100, PID: 1, TID: 1},
		{Name: "b", Start: 10, End: 50, PID: 1, TID: 1},
		{Name: "c", Start: 20, End: 30, PID: 1, TID: 1},
		{Name: "d", Start: 60, End: 70, PID: 1, TID: 1},
		{Name: "open", Start: 200, Open: true, PID: 1, TID: 1},
		{Name: "x", Start: 0, End: 100, PID: 1, TID: 2},
	})
	cases := []struct {
		tid, s, e int64
		want      string
	}{
		{1, 21, 29, "c"}, {1, 21, 35, "b"}, {1, 40, 55, "a"}, {1, 61, 62, "d"}, {1, 65, 80, "a"},
		{1, 150, 160, ""}, {1, 300, 400, "open"}, {2, 5, 6, "x"}, {3, 5, 6, ""},
	}
	for _, c := range cases {
		if got := ix.innermost(1, c.tid, c.s, c.e); got != c.want {
			t.Errorf("innermost(tid %d, %d, %d) = %q, want %q", c.tid, c.s, c.e, got, c.want)
		}
	}
}

// writeCSVs writes report files into a new folder.
func writeCSVs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	csvAPIHeader  = "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n"
	csvGPUHeader  = "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
	csvNVTXHeader = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n"
)

func TestStreamCopiesCSV(t *testing.T) {
	dir := writeCSVs(t, map[string]string{
		"app_cuda_api_trace.csv": csvAPIHeader +
			"100,50,cudaMalloc_v3020,0,1,7,7,0,python\n" +
			"200,900,cudaMemcpyAsync_v3020,0,2,7,7,0,python\n" +
			"1200,30,cudaMemcpyAsync_v3020,0,3,7,8,0,worker\n" +
			"1300,40,cudaMemsetAsync_v3020,0,4,7,7,0,python\n",
		"app_cuda_gpu_trace.csv": csvGPUHeader +
			"250,800,2,,,,,,,,,,4.194,5242.5,Pageable,Device,0,1,,7,[CUDA memcpy Host-to-Device]\n" +
			"1210,10,3,,,,,,,,,,0.001,100,Device,Pinned,0,1,,13,[CUDA memcpy Device-to-Host]\n" +
			"1310,5,4,,,,,,,,,,0.001,100,Device,,0,1,,7,[CUDA memset]\n" +
			"1400,20,9,1,1,1,32,1,1,16,0,0,,,,,0,1,,7,my_kernel\n",
		"app_nvtx_pushpop_trace.csv": csvNVTXHeader +
			"150,1500,1350,0,1350,:step,7,7,0,1,1,,1,:step\n" +
			"180,1400,1220,0,1220,batch,7,7,1,0,2,1,1:2,:step/batch\n",
	})
	var got []CopyCall
	scan, err := StreamCopies(dir, Options{}, func(c *CopyCall) { got = append(got, *c) })
	if err != nil {
		t.Fatal(err)
	}
	if scan.APICalls != 4 || scan.Span != 1340-100 || scan.SpanFrom != SpanAPICalls || scan.Memsets != 1 {
		t.Errorf("scan = %+v", scan)
	}
	if len(got) != 2 {
		t.Fatalf("%d copies, want 2: %+v", len(got), got)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Start < got[j].Start })
	a := got[0]
	// 4.194 MB, printed to three decimals, holds one multiple of 4 KiB: 4 MiB
	// (csvBytes); 0.001 MB holds none, so it is taken as printed.
	if a.API != "cudaMemcpyAsync" || a.HostNs != 900 || a.Bytes != 4194304 || a.Src != MemPageable || a.Dst != MemDevice ||
		a.Kind != CopyHtoD || a.Stream != 7 || a.Range != "batch" || a.TID != 7 || a.Thread != "python" || a.End != 1050 {
		t.Errorf("HtoD copy = %+v", a)
	}
	b := got[1]
	if b.Kind != CopyDtoH || b.Dst != MemPinned || b.TID != 8 || b.Range != "" || b.Bytes != 1000 {
		t.Errorf("DtoH copy = %+v", b)
	}

	// Without the GPU trace the folder cannot be audited.
	dir = writeCSVs(t, map[string]string{"app_cuda_api_trace.csv": csvAPIHeader})
	if _, err := StreamCopies(filepath.Join(dir, "app_cuda_api_trace.csv"), Options{}, func(*CopyCall) {}); err == nil ||
		!strings.Contains(err.Error(), "cuda_gpu_trace") {
		t.Errorf("no GPU trace: err = %v", err)
	}
	// A damaged row names its file and row.
	dir = writeCSVs(t, map[string]string{
		"app_cuda_api_trace.csv": csvAPIHeader,
		"app_cuda_gpu_trace.csv": csvGPUHeader + "x,800,2,,,,,,,,,,4.194,5242.5,Pageable,Device,0,1,,7,[CUDA memcpy Host-to-Device]\n",
	})
	if _, err := StreamCopies(dir, Options{}, func(*CopyCall) {}); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("damaged row: err = %v", err)
	}
}

func TestStreamCopiesNsysRep(t *testing.T) {
	dir := t.TempDir()
	rep := filepath.Join(dir, "app.nsys-rep")
	if err := os.WriteFile(rep, []byte("NVIDIA Tegra Profiler Report, not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No export yet, and no nsys to make one: an error that says so.
	t.Setenv("NSYS", filepath.Join(dir, "no-nsys"))
	if _, err := StreamCopies(rep, Options{}, func(*CopyCall) {}); err == nil || !strings.Contains(err.Error(), "cannot export the report") {
		t.Errorf("no nsys: err = %v", err)
	}
	// An export beside it that records this report (as LoadNsysRep leaves
	// one) is read; one that records no report is not.
	cached := filepath.Join(dir, "app.nsyscheck.sqlite")
	sqCopy(t, refSQLite, cached)
	if _, err := StreamCopies(rep, Options{}, func(*CopyCall) {}); err == nil {
		t.Error("an export that records no report was read as this report's")
	}
	src, err := digestReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordSource(cached, src); err != nil {
		t.Fatal(err)
	}
	n := 0
	scan, err := StreamCopies(rep, Options{}, func(*CopyCall) { n++ })
	if err != nil {
		t.Fatal(err)
	}
	if scan.Format != FormatNsysRep || scan.Path != rep || len(scan.Files) != 2 || scan.Files[1] != cached || n == 0 {
		t.Errorf("scan = %+v, %d copies", scan, n)
	}
	// The folder: its SQLite export comes first.
	if scan, err = StreamCopies(dir, Options{}, func(*CopyCall) {}); err != nil || scan.Format != FormatSQLite {
		t.Errorf("folder: %+v, %v", scan, err)
	}
}

// damageRoot overwrites the page type of a table's root page (no such
// b-tree page type), so that SQLite's integrity check fails on it.
func damageRoot(t *testing.T, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&root); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	db.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[(root-1)*pageSize] = 0x7f
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamCopiesIntegrity: the integrity check runs beside the audit's
// stream, and a damaged export is still refused with its error, whether the
// damaged page is one the stream reads (the copy table) or one it never
// reads (the kernel table).
func TestStreamCopiesIntegrity(t *testing.T) {
	for _, table := range []string{nsysdb.TableMemcpy, nsysdb.TableKernel} {
		p := sqFixture(t)
		damageRoot(t, p, table)
		copies := 0
		_, err := StreamCopies(p, Options{}, func(*CopyCall) { copies++ })
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), "fails SQLite's integrity check") {
			t.Errorf("damaged %s: err = %v (after %d copies streamed)", table, err, copies)
		}
	}
	// The undamaged fixture streams as before.
	if _, err := StreamCopies(sqFixture(t), Options{}, func(*CopyCall) {}); err != nil {
		t.Errorf("undamaged: %v", err)
	}
}
