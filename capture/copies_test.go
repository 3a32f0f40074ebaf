package capture

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The audit's read of a capture (TraceOf: every record, copies joined to
// their calls) against plain SQL and hand-made exports and reports. What the
// audit makes of the copies (classes, ranges, batch calls) is tested in
// package audit.

// copyGroup is what the cross-check compares: copies by API, direction and
// memory kinds.
type copyGroup struct {
	api      string
	kind     vocab.CopyKind
	src, dst vocab.MemKind
}

type copySums struct{ n, bytes, host, gpu int64 }

// sqlCopySums sums the copies of an SQLite export with one plain query,
// independent of the reader: the copy table joined to the runtime table.
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
		g := copyGroup{nsysdb.StripAPIVersion(api), nsysdb.CopyKindOf(op), nsysdb.MemKindOf(sk), nsysdb.MemKindOf(dk)}
		if sk == "" {
			g.src = vocab.MemUnknown
		}
		if dk == "" {
			g.dst = vocab.MemUnknown
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

// copiesRead is what TraceOf handed out of the copies: each copy (with a copy of
// its call), the gaps and the trace's counts.
type copiesRead struct {
	ops    []records.Op
	gaps   []records.Gap
	counts records.Counts
	ranges int
}

// streamCopies opens path and reads it as the audit does (TraceOf), keeping
// the copies it handed out, the gaps, the ranges and the trace's counts.
func streamCopies(path string, opts Options) (*copiesRead, *CopyScan, error) {
	got := &copiesRead{}
	src, err := source.Open(opts.context(), path, opts.sourceOptions(nsysdb.KindUnknown))
	if err != nil {
		return got, nil, err
	}
	defer src.Close()
	scan, err := TraceOf(opts.context(), src, func(*CopyScan) records.Handler {
		return records.Handler{
			Gap:   func(g records.Gap) error { got.gaps = append(got.gaps, g); return nil },
			Range: func(*records.Range) error { got.ranges++; return nil },
			Op: func(o *records.Op) error {
				if o.Kind != records.OpCopy {
					return nil
				}
				op := *o
				if o.Call != nil {
					c := *o.Call
					op.Call = &c
				}
				got.ops = append(got.ops, op)
				return nil
			},
			Counts: func(c *records.Counts) error { got.counts = *c; return nil },
		}
	})
	return got, scan, err
}

// streamSums sums the copies TraceOf hands out the way sqlCopySums does.
func streamSums(t *testing.T, path string) (map[copyGroup]copySums, *copiesRead) {
	t.Helper()
	got, _, err := streamCopies(path, Options{})
	if err != nil {
		t.Fatalf("TraceOf(%s): %v", path, err)
	}
	out := map[copyGroup]copySums{}
	for _, o := range got.ops {
		if o.Call == nil {
			continue
		}
		g := copyGroup{o.Call.Name, o.Copy, o.Src, o.Dst}
		s := out[g]
		s.n++
		s.bytes += o.Bytes
		s.host += o.Call.Duration()
		s.gpu += o.Duration()
		out[g] = s
	}
	return out, got
}

// crossCheckCopies compares TraceOf's copies with the plain query.
func crossCheckCopies(t *testing.T, path string) *copiesRead {
	t.Helper()
	want := sqlCopySums(t, path)
	got, read := streamSums(t, path)
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
	return read
}

func TestTraceCopiesCrossCheck(t *testing.T) {
	for _, p := range []string{refSQLite, filepath.Join("..", "testdata", "captures", "h200-pinned", "pinned.sqlite")} {
		read := crossCheckCopies(t, p)
		unmatched := 0
		for _, o := range read.ops {
			if o.Call == nil {
				unmatched++
			}
		}
		if len(read.ops) == 0 || read.counts.Calls == 0 || unmatched != 0 {
			t.Errorf("%s: %d copies (%d without a call), counts %+v", p, len(read.ops), unmatched, read.counts)
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

// TestTraceCopiesJoin: each copy is joined to its own process's call, a
// batch call's copies both to it, a graph's copy node to its launch; a
// copy that no copy call or launch of the trace issued (none, or a kernel
// launch, has its correlation id) makes the audit unavailable.
func TestTraceCopiesJoin(t *testing.T) {
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
	stmts := []string{
		`INSERT INTO StringIds (id, value) VALUES (9001, 'cudaMemcpyBatchAsync_v12080')`,
		// process 99's streams, listed as nsys lists a program's streams.
		`INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (21, 0, 1, 99, 1, 0, 2), (22, 0, 1, 99, 1, 0, 2), (23, 0, 1, 99, 1, 0, 2)`,
		// and its context on device 0, as nsys lists each process's.
		`INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, vmId, processId, deviceId, contextId) VALUES (20, 0, 1, 99, 0, 1)`,
		// pid 99, thread 100: a pageable async copy, with the correlation id
		// 1 that pid 22 uses too (ids are per process).
		ins(rt, rcols, 1000, 1900, 1, gtid(99, 100), 1, 58, 0),
		ins(mc, mcols, 1100, 1950, 0, 1, 21, 1, gpid(99), 4096, 1, 0, 2),
		// thread 101: a batch call with two copies to pinned memory on stream 22.
		ins(rt, rcols, 3000, 3100, 1, gtid(99, 101), 2, 9001, 0),
		ins(mc, mcols, 3200, 3300, 0, 1, 22, 2, gpid(99), 1000, 2, 2, 1),
		ins(mc, mcols, 3300, 3400, 0, 1, 22, 2, gpid(99), 3000, 2, 2, 1),
		// a copy node of a graph, joined to the graph's launch.
		`INSERT INTO StringIds (id, value) VALUES (9004, 'cudaGraphLaunch_v10000')`,
		ins(rt, rcols, 6000, 6050, 1, gtid(99, 100), 88888, 9004, 0),
		`INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, "end", deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, graphNodeId)
			VALUES (6100, 6200, 0, 1, 21, 88888, ` + fmt.Sprint(gpid(99)) + `, 16, 1, 0, 2, 5)`,
	}
	p := fixture.SQLite(t, refSQLite, stmts...)
	_, read := streamSums(t, p)
	var mine []records.Op
	for _, o := range read.ops {
		if o.PID == 99 {
			mine = append(mine, o)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Start < mine[j].Start })
	if len(mine) != 4 {
		t.Fatalf("%d copies of pid 99, want 4: %+v", len(mine), mine)
	}
	a := mine[0]
	if a.Call == nil || a.Call.Name != "cudaMemcpyAsync" || a.Call.TID != 100 || a.Call.Start != 1000 || a.Call.Duration() != 900 ||
		a.Copy != vocab.CopyHtoD || a.Src != vocab.MemPageable || a.Dst != vocab.MemDevice || a.Stream != 21 || a.Bytes != 4096 {
		t.Errorf("async copy = %+v, call %+v", a, a.Call)
	}
	for _, b := range mine[1:3] {
		if b.Call == nil || b.Call.Name != "cudaMemcpyBatchAsync" || b.Call.TID != 101 || b.Copy != vocab.CopyDtoH || b.Dst != vocab.MemPinned {
			t.Errorf("batch copy = %+v, call %+v", b, b.Call)
		}
	}
	if g := mine[3]; g.Call == nil || g.Call.Name != "cudaGraphLaunch" || g.Call.TID != 100 || g.Corr != 88888 || g.GraphNode != 5 {
		t.Errorf("graph copy = %+v, call %+v", g, g.Call)
	}
	// pid 22's copy with correlation id 1 keeps pid 22's call.
	for _, o := range read.ops {
		if o.PID == 22 && o.Corr == 1 && o.Call != nil && o.Call.Start == 1000 {
			t.Errorf("pid 22's copy joined pid 99's call: %+v", o.Call)
		}
	}

	// A copy no call of the trace issued: its host time is unknown.
	uncalled := fixture.SQLite(t, refSQLite, append(stmts, ins(mc, mcols, 5000, 5100, 0, 1, 23, 77777, gpid(99), 8, 1, 0, 2))...)
	if _, _, err := streamCopies(uncalled, Options{}); err == nil || !strings.Contains(err.Error(), "the audit is unavailable: 1 of the 294 copies join no API call") ||
		!strings.Contains(err.Error(), "correlation id 77777, process 99") || !strings.Contains(err.Error(), "table CUPTI_ACTIVITY_KIND_MEMCPY") {
		t.Errorf("a copy without its call: err = %v", err)
	}
	launched := fixture.SQLite(t, refSQLite, append(stmts, `INSERT INTO StringIds (id, value) VALUES (9005, 'cudaLaunchKernel_v7000')`,
		ins(rt, rcols, 7000, 7050, 1, gtid(99, 100), 99999, 9005, 0), ins(mc, mcols, 7100, 7200, 0, 1, 21, 99999, gpid(99), 32, 1, 0, 2))...)
	if _, _, err := streamCopies(launched, Options{}); err == nil || !strings.Contains(err.Error(), "correlation id 99999, process 99") {
		t.Errorf("a copy with a kernel launch's correlation id: err = %v", err)
	}
}

func TestTraceCopiesVersionedAndMissing(t *testing.T) {
	p := fixture.SQLite(t, refSQLite,
		`ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY RENAME TO CUPTI_ACTIVITY_KIND_MEMCPY_V2`,
		`DROP TABLE NVTX_EVENTS`)
	want := sqlCopySums(t, refSQLite)
	got, read := streamSums(t, p)
	if len(got) != len(want) {
		t.Errorf("versioned copy table: %d groups, want %d", len(got), len(want))
	}
	found := false
	for _, g := range read.gaps {
		found = found || g.Fact == records.FactNVTX
	}
	if !found {
		t.Errorf("no NVTX table but nothing said missing: %+v", read.gaps)
	}

	p = fixture.SQLite(t, refSQLite, `DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME`)
	if _, _, err := streamCopies(p, Options{}); err == nil || !strings.Contains(err.Error(), "no CUDA API trace") {
		t.Errorf("no runtime table: err = %v", err)
	}
	if _, _, err := streamCopies(filepath.Join(t.TempDir(), "none.sqlite"), Options{}); err == nil {
		t.Error("a missing file read without error")
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

// TestTraceCopiesCSV: the CSV reports' copies joined to their calls by
// correlation id, the memset counted apart, the ranges, and every call
// counted whatever its name.
func TestTraceCopiesCSV(t *testing.T) {
	dir := writeCSVs(t, map[string]string{
		"app_cuda_api_trace.csv": csvAPIHeader +
			"100,50,cudaMalloc_v3020,0,1,7,7,0,python\n" +
			"200,900,cudaMemcpyAsync_v3020,0,2,7,7,0,python\n" +
			"1200,30,cudaMemcpyAsync_v3020,0,3,7,8,0,worker\n" +
			"1300,40,cudaMemsetAsync_v3020,0,4,7,7,0,python\n",
		"app_cuda_gpu_trace.csv": csvGPUHeader +
			"250,800,2,,,,,,,,,,0.094,117.8,Pageable,Device,0,1,,7,[CUDA memcpy Host-to-Device]\n" +
			"1210,10,3,,,,,,,,,,0.001,100,Device,Pinned,0,1,,13,[CUDA memcpy Device-to-Host]\n" +
			"1310,5,4,,,,,,,,,,0.001,100,Device,,0,1,,7,[CUDA memset]\n" +
			"1400,20,9,1,1,1,32,1,1,16,0,0,,,,,0,1,,7,my_kernel\n",
		"app_nvtx_pushpop_trace.csv": csvNVTXHeader +
			"150,1500,1350,0,1350,:step,7,7,0,1,1,,1,:step\n" +
			"180,1400,1220,0,1220,batch,7,7,1,0,2,1,1:2,:step/batch\n",
	})
	read, scan, err := streamCopies(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := read.counts; c.Calls != 4 || c.FirstCall != 100 || c.LastCall != 1340 || c.Memsets != 1 || read.ranges != 2 {
		t.Errorf("counts %+v, %d ranges", c, read.ranges)
	}
	if scan.Format != FormatCSV || len(scan.Files) != 3 {
		t.Errorf("scan = %+v", scan)
	}
	if len(read.ops) != 2 {
		t.Fatalf("%d copies, want 2: %+v", len(read.ops), read.ops)
	}
	sort.Slice(read.ops, func(i, j int) bool { return read.ops[i].Start < read.ops[j].Start })
	a := read.ops[0]
	// 0.094 MB, printed to three decimals, holds one multiple of 4 KiB: 92
	// KiB (csvBytes); 0.001 MB holds none, so it is taken as printed.
	if a.Call == nil || a.Call.Name != "cudaMemcpyAsync" || a.Call.Duration() != 900 || a.Bytes != 94208 || a.Src != vocab.MemPageable ||
		a.Dst != vocab.MemDevice || a.Copy != vocab.CopyHtoD || a.Stream != 7 || a.Call.TID != 7 || a.Call.Thread != "python" || a.End != 1050 {
		t.Errorf("HtoD copy = %+v, call %+v", a, a.Call)
	}
	b := read.ops[1]
	if b.Copy != vocab.CopyDtoH || b.Dst != vocab.MemPinned || b.Call == nil || b.Call.TID != 8 || b.Bytes != 1000 {
		t.Errorf("DtoH copy = %+v", b)
	}

	// Without the GPU trace the folder has no copies: the audit is
	// unavailable, for the reason the model of the same folder gives.
	dir = writeCSVs(t, map[string]string{"app_cuda_api_trace.csv": csvAPIHeader + "100,50,cudaMalloc_v3020,0,1,7,7,0,python\n"})
	_, _, err = streamCopies(filepath.Join(dir, "app_cuda_api_trace.csv"), Options{})
	if err == nil || !strings.Contains(err.Error(), "the audit is unavailable: the capture holds no memory copy records (no *_cuda_gpu_trace.csv in the folder") {
		t.Errorf("no GPU trace: err = %v", err)
	}
	// A damaged row names its file and row.
	dir = writeCSVs(t, map[string]string{
		"app_cuda_api_trace.csv": csvAPIHeader,
		"app_cuda_gpu_trace.csv": csvGPUHeader + "x,800,2,,,,,,,,,,4.194,5242.5,Pageable,Device,0,1,,7,[CUDA memcpy Host-to-Device]\n",
	})
	if _, _, err := streamCopies(dir, Options{}); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("damaged row: err = %v", err)
	}
}

// TestTraceCopiesNsysRep: a report is read through its export, made once
// with nsys and then found by its content; the folder's export comes first.
func TestTraceCopiesNsysRep(t *testing.T) {
	dir := t.TempDir()
	rep := filepath.Join(dir, "app.nsys-rep")
	if err := os.WriteFile(rep, []byte("NVIDIA Tegra Profiler Report, not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No export yet, and no nsys to make one: an error that says so.
	if _, _, err := streamCopies(rep, Options{Nsys: filepath.Join(dir, "no-nsys")}); err == nil || !strings.Contains(err.Error(), "cannot export the report") {
		t.Errorf("no nsys: err = %v", err)
	}
	// An export beside it that records no report is not taken for this one.
	cached := filepath.Join(dir, "app.nsyscheck.sqlite")
	fixture.Copy(t, refSQLite, cached)
	if _, _, err := streamCopies(rep, Options{Nsys: filepath.Join(dir, "no-nsys")}); err == nil {
		t.Error("an export that records no report was read as this report's")
	}
	nsys, calls := fakeNsys(t, "copy")
	read, scan, err := streamCopies(rep, Options{Nsys: nsys})
	if err != nil {
		t.Fatal(err)
	}
	if scan.Format != FormatNsysRep || scan.Path != rep || len(scan.Files) != 2 || scan.Files[1] != cached || len(read.ops) == 0 || exportCalls(t, calls) != 1 {
		t.Errorf("scan = %+v, %d copies, %d exports", scan, len(read.ops), exportCalls(t, calls))
	}
	// Made once: read again without nsys.
	if _, _, err := streamCopies(rep, Options{Nsys: filepath.Join(dir, "no-nsys")}); err != nil {
		t.Errorf("the export made for this report was not found again: %v", err)
	}
	// The folder: its SQLite export comes first.
	if _, scan, err = streamCopies(dir, Options{}); err != nil || scan.Format != FormatSQLite {
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

// TestTraceCopiesIntegrity: the integrity check runs beside the audit's
// stream, and a damaged export is still refused with its error, whether the
// damaged page is one the stream reads (the copy table) or one it never
// reads (the kernel table).
func TestTraceCopiesIntegrity(t *testing.T) {
	for _, table := range []string{nsysdb.TableMemcpy, nsysdb.TableKernel} {
		p := fixture.SQLite(t, refSQLite)
		damageRoot(t, p, table)
		read, _, err := streamCopies(p, Options{})
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), "fails SQLite's integrity check") {
			t.Errorf("damaged %s: err = %v (after %d copies streamed)", table, err, len(read.ops))
		}
	}
	// The undamaged fixture streams as before.
	if _, _, err := streamCopies(fixture.SQLite(t, refSQLite), Options{}); err != nil {
		t.Errorf("undamaged: %v", err)
	}
}

// TestTraceThenCheckIntegrity: with the checks of the whole export after
// the stream, a damaged page the stream reads (the copy table) still fails
// the read with the integrity check's error, and one it never reads (an
// enum table no reader asks for) lets the read return, its checked then
// giving the error, every time it is asked.
func TestTraceThenCheckIntegrity(t *testing.T) {
	trace := func(path string) (Checked, error) {
		t.Helper()
		src, err := source.Open(context.Background(), path, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		_, checked, err := TraceThenCheck(context.Background(), src, func(*CopyScan) records.Handler {
			return records.Handler{Op: func(*records.Op) error { return nil }}
		})
		return checked, err
	}
	failsCheck := func(err error) bool {
		return err != nil && inputerr.Is(err) && strings.Contains(err.Error(), "fails SQLite's integrity check")
	}

	p := fixture.SQLite(t, refSQLite)
	damageRoot(t, p, nsysdb.TableMemcpy)
	if checked, err := trace(p); !failsCheck(err) || checked != nil {
		t.Errorf("damaged %s: err = %v, checked %v; want the integrity check's error", nsysdb.TableMemcpy, err, checked != nil)
	}

	p = fixture.SQLite(t, refSQLite)
	const unread = "ENUM_CUDA_FUNC_CACHE_CONFIG"
	damageRoot(t, p, unread)
	checked, err := trace(p)
	if err != nil {
		t.Fatalf("damaged %s, never read: the stream failed: %v", unread, err)
	}
	for range 2 {
		if err := checked(); !failsCheck(err) {
			t.Errorf("damaged %s: checked() = %v; want the integrity check's error", unread, err)
		}
	}

	checked, err = trace(fixture.SQLite(t, refSQLite))
	if err != nil || checked() != nil {
		t.Errorf("undamaged: err = %v, checked() = %v", err, checked())
	}
}
