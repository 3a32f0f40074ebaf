package capture

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
)

// This file is the one place that reads an application's memory copies for
// `nsyscheck audit`: which Nsight Systems tables, columns and CSV reports
// hold them. Everything is streamed: a copy is handed to the caller as soon
// as it is read, and only NVTX ranges and per-batch-call bookkeeping stay in
// memory.

// CopyCall is one GPU memory copy together with the API call that issued it.
// Times are nanoseconds on the capture's clock.
type CopyCall struct {
	API       string // runtime API name without _vNNNN, "" when no call was found
	CallStart int64  // the call's start (0 when API is "")
	CallEnd   int64
	// HostNs is the call's duration, counted on the first copy of a call
	// only: a batch call that made several copies holds the host once.
	HostNs int64

	Kind     CopyKind
	Src, Dst MemKind
	Bytes    int64
	Start    int64 // the copy on the GPU
	End      int64

	CorrelationID int64
	PID, TID      int64
	Thread        string
	Stream        int64
	Device        int64
	// Range is the innermost NVTX push/pop range of the calling thread that
	// encloses the call, "" when none does (or the capture has no NVTX).
	Range string
}

// HostDuration is the call's whole duration (CallEnd - CallStart), whether
// or not HostNs counts it.
func (c CopyCall) HostDuration() int64 { return c.CallEnd - c.CallStart }

// GPUDuration is the copy's duration on the GPU.
func (c CopyCall) GPUDuration() int64 { return c.End - c.Start }

// CopyScan is what StreamCopies learnt about the capture beside its copies.
type CopyScan struct {
	Path   string   // the input given
	Format Format   // how it was read
	Files  []string // the files read
	Meta   Metadata

	// APICalls is the number of CUDA runtime API calls in the trace.
	APICalls int64
	// Span is the host time the capture covers, in nanoseconds: the trace's
	// duration where the export records it (ANALYSIS_DETAILS), else from
	// the first API call's start to the last one's end. SpanFrom says which.
	Span     int64
	SpanFrom string

	Copies    int64 // copies handed to the caller
	Unmatched int64 // copies whose API call is not in the trace
	Memsets   int64 // memsets, kept apart from the copies

	// Missing lists what the input cannot tell (memory kinds, NVTX, ...).
	Missing []Gap
	// Notes say when another file was read than the one named: the SQLite
	// export beside a .nsys-rep, as Capture.Notes do for the loader.
	Notes []string
}

// The sources of CopyScan.Span.
const (
	SpanTrace    = "trace duration"
	SpanAPICalls = "first to last API call"
)

func (s *CopyScan) lack(f Fact, reason string) {
	for _, g := range s.Missing {
		if g.Fact == f {
			return
		}
	}
	s.Missing = append(s.Missing, Gap{Fact: f, Reason: reason})
}

// StreamCopies reads every memory copy of a capture — an SQLite export, a
// .nsys-rep (exported to SQLite as Load does), or a folder of `nsys stats`
// CSV reports (cuda_api_trace and cuda_gpu_trace, optionally
// nvtx_pushpop_trace) — and hands each to fn with its API call, thread,
// stream and innermost NVTX range. A folder is read as Load reads one: an
// SQLite export first, then a .nsys-rep, then CSV reports.
func StreamCopies(path string, opts Options, fn func(*CopyCall)) (*CopyScan, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &inputerr.Error{Path: path, Problem: "cannot read the input", Err: err,
			Hint: "give a .nsys-rep, a .sqlite export or a folder of nsys stats CSV reports"}
	}
	if st.IsDir() {
		return streamCopiesDir(path, opts, fn)
	}
	if err := inputerr.Regular(path, st); err != nil {
		return nil, err
	}
	kind, err := nsysdb.Detect(path)
	if err != nil {
		kind = nsysdb.Sniff(path, nil)
	}
	switch kind {
	case nsysdb.KindNsysRep:
		return streamCopiesNsysRep(path, opts, fn)
	case nsysdb.KindSQLite:
		return streamCopiesSQLite(path, fn)
	case nsysdb.KindCSV:
		return streamCopiesCSV(filepath.Dir(path), fn)
	}
	return nil, &inputerr.Error{Path: path, Problem: "not a capture that holds memory copies",
		Hint: "give a .nsys-rep, a .sqlite export, or a folder with *_" + nsysdb.ReportAPITrace + ".csv and *_" + nsysdb.ReportGPUTrace + ".csv"}
}

func streamCopiesDir(dir string, opts Options, fn func(*CopyCall)) (*CopyScan, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &inputerr.Error{Path: dir, Problem: "cannot list the folder", Err: err}
	}
	f := classifyDir(entries)
	plain, own, reps := f.plainSQLite, f.ownSQLite, f.reps
	csvs := false
	for _, e := range entries {
		key, _, ok := nsysdb.MatchReport(e.Name())
		csvs = csvs || (!e.IsDir() && ok && key == nsysdb.ReportGPUTrace)
	}
	one := func(kind string, names []string) (string, error) { return pickOne(dir, kind, names) }
	switch {
	case len(plain) > 0:
		p, err := one("SQLite export", plain)
		if err != nil {
			return nil, err
		}
		return streamCopiesSQLite(p, fn)
	case len(own) > 0:
		p, err := one("SQLite export", own)
		if err != nil {
			return nil, err
		}
		return streamCopiesSQLite(p, fn)
	case len(reps) > 0:
		p, err := one(".nsys-rep report", reps)
		if err != nil {
			return nil, err
		}
		return streamCopiesNsysRep(p, opts, fn)
	case csvs:
		return streamCopiesCSV(dir, fn)
	}
	return nil, &inputerr.Error{Path: dir, Problem: "no capture with memory copies found in " + dir,
		Hint: "looked for *.sqlite, *.nsys-rep and *_" + nsysdb.ReportGPUTrace + ".csv (with *_" + nsysdb.ReportAPITrace + ".csv); make the CSV reports with " + nsysdb.TraceReportsCommand}
}

// ReportSQLite returns the SQLite export of a .nsys-rep report, found or
// made as LoadNsysRep does (reportExport): the export beside the report,
// nsyscheck's content-keyed export, or a new one made with nsys. An SQLite
// file named like a report is returned as it is. note says when the export
// beside the report stands in for it, as the loader's note does.
func ReportSQLite(path string, opts Options) (db, note string, err error) {
	f, info, err := inputerr.Open(path)
	if err != nil {
		return "", "", err
	}
	f.Close()
	head, err := readHead(path, 64)
	if err != nil {
		return "", "", &inputerr.Error{Path: path, Problem: "cannot read the report", Err: err}
	}
	if nsysdb.Magic(head) == nsysdb.KindSQLite {
		return path, "", nil
	}
	return reportExport(path, info, head, opts, sqlitefile.CheckPath)
}

func streamCopiesNsysRep(path string, opts Options, fn func(*CopyCall)) (*CopyScan, error) {
	db, note, err := ReportSQLite(path, opts)
	if err != nil {
		return nil, err
	}
	s, err := streamCopiesSQLite(db, fn)
	if err != nil {
		return nil, err
	}
	if note != "" {
		s.Notes = append(s.Notes, note)
	}
	s.Path, s.Format = path, FormatNsysRep
	if db != path {
		s.Files = []string{path, db}
	}
	return s, nil
}

// ---------------------------------------------------------------------------
// SQLite

// streamCopiesSQLite streams an export's copies while SQLite's integrity
// check (sqliteIntegrity, as the loader runs it) reads the file on a second
// connection: on a big export the check costs as much as the stream, and
// beside it the two share the machine's cores instead of adding up. Nothing
// streamed counts until the check has passed: fn's sums are the caller's to
// drop on an error, a failing check stops the stream (its queries are
// interrupted) and its error is the one returned, whatever the stream met
// on the damaged pages.
func streamCopiesSQLite(path string, fn func(*CopyCall)) (*CopyScan, error) {
	cv := newCopyValidator(path, FormatSQLite)
	fn = cv.wrap(fn)
	r, done, err := openSQLiteReader(path, Options{})
	defer done()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	checked := make(chan error, 1)
	go func() {
		err := sqlitefile.Integrity(ctx, r.db, path)
		if err != nil {
			cancel()
		}
		checked <- err
	}()
	s, err := r.streamCopies(ctx, path, cv, fn)
	if cerr := <-checked; cerr != nil {
		return nil, cerr
	}
	return s, err
}

// streamCopies is the stream of streamCopiesSQLite: the tables, totals,
// NVTX ranges and thread names, then the copy join, interrupted when ctx
// is cancelled; cv checks the ranges and, through fn, every copy.
func (r *sqliteReader) streamCopies(ctx context.Context, path string, cv *copyValidator, fn func(*CopyCall)) (*CopyScan, error) {
	if err := r.readTables(); err != nil {
		return nil, err
	}
	// readTables resolves the loader's tables; the memset and analysis
	// tables are the audit's own.
	for l, t := range resolveTables(r.names, nsysdb.TableMemset, nsysdb.TableAnalysis) {
		r.tables[l] = t
	}
	c := &Capture{}
	r.readMeta(c)
	s := &CopyScan{Path: path, Format: FormatSQLite, Files: []string{path}, Meta: c.Meta}
	if r.tables[tabRuntime] == "" {
		return nil, &inputerr.Error{Path: path, Where: "table " + tabRuntime, Problem: "no CUDA API trace in this export",
			Hint: "profile with nsys profile -t cuda,nvtx and export again"}
	}
	if r.tables[tabStrings] == "" {
		return nil, &inputerr.Error{Path: path, Where: "table " + tabStrings,
			Problem: "no string table (" + tabStrings + ") in this export, so API names cannot be read", Hint: sqliteExportHint}
	}
	if _, err := r.columns(tabStrings, nsysdb.ColID, nsysdb.ColValue); err != nil {
		return nil, err
	}
	st, err := r.db.Prepare(`SELECT ` + quoteIdent(nsysdb.ColValue) + ` FROM ` + quoteIdent(r.tables[tabStrings]) + ` WHERE ` + quoteIdent(nsysdb.ColID) + ` = ?`)
	if err != nil {
		return nil, r.tableError(r.tables[tabStrings], err)
	}
	r.strStmt = st
	rcols, err := r.columns(tabRuntime, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColNameID)
	if err != nil {
		return nil, err
	}
	if err := r.copyAPITotals(s); err != nil {
		return nil, err
	}
	if t := r.tables[nsysdb.TableMemset]; t != "" {
		if err := r.db.QueryRow(`SELECT count(*) FROM ` + quoteIdent(t)).Scan(&s.Memsets); err != nil {
			return nil, r.tableError(t, err)
		}
	}
	if r.tables[tabMemcpy] == "" {
		s.lack(FactMemcpy, fmt.Sprintf("the export has no %s table: the run made no memory copies", tabMemcpy))
		return s, nil
	}
	// NVTX push/pop ranges, for the innermost range of each call.
	nv := &Capture{}
	if err := r.readNVTX(nv); err != nil {
		return nil, err
	}
	for _, g := range nv.Missing {
		if g.Fact == FactNVTX {
			s.lack(FactNVTX, g.Reason)
		}
	}
	if cv.ranges(nv.Ranges); cv.v.err != nil {
		return nil, cv.v.err
	}
	ranges := newRangeIndex(nv.Ranges)
	nv = nil
	threads, err := r.readThreadNames()
	if err != nil {
		return nil, err
	}
	if err := r.streamCopyJoin(ctx, s, rcols, ranges, threads, fn); err != nil {
		return nil, err
	}
	if cv.v.err != nil {
		return nil, cv.v.err
	}
	return s, nil
}

// copyAPITotals counts the runtime calls (a count SQLite makes without
// decoding rows) and finds the capture's span: the trace's duration, else,
// in one more pass, the first and last API call.
func (r *sqliteReader) copyAPITotals(s *CopyScan) error {
	t := r.tables[tabRuntime]
	if err := r.db.QueryRow(`SELECT count(*) FROM ` + quoteIdent(t)).Scan(&s.APICalls); err != nil {
		return r.tableError(t, err)
	}
	if a := r.tables[nsysdb.TableAnalysis]; a != "" {
		if cols, err := r.columns(nsysdb.TableAnalysis); err == nil && cols[nsysdb.ColDuration] {
			var d sql.NullInt64
			if r.db.QueryRow(`SELECT max(`+quoteIdent(nsysdb.ColDuration)+`) FROM `+quoteIdent(a)).Scan(&d) == nil && d.Int64 > 0 {
				s.Span, s.SpanFrom = d.Int64, SpanTrace
				return nil
			}
		}
	}
	var first, last sql.NullInt64
	if err := r.db.QueryRow(`SELECT min(`+quoteIdent(nsysdb.ColStart)+`), max(`+quoteIdent(nsysdb.ColEnd)+`) FROM `+quoteIdent(t)).Scan(&first, &last); err != nil {
		return r.tableError(t, err)
	}
	if last.Int64 > first.Int64 {
		s.Span, s.SpanFrom = last.Int64-first.Int64, SpanAPICalls
	}
	return nil
}

// streamCopyJoin joins every copy to its runtime call by correlation id
// within the same process, and hands each to fn.
func (r *sqliteReader) streamCopyJoin(ctx context.Context, s *CopyScan, rcols map[string]bool, ranges *rangeIndex,
	threads map[int64]string, fn func(*CopyCall)) error {
	table := r.tables[tabMemcpy]
	j, err := r.copyJoin(s, rcols)
	if err != nil {
		return err
	}
	rows, err := r.db.QueryContext(ctx, j.query)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	kinds, memKinds := j.kinds, j.memKinds
	names := map[int64]string{}
	batches := map[[2]int64]bool{} // (pid, correlation id) of multi-copy calls already counted
	var (
		cc                 CopyCall
		kind, sk, dk, gpid int64
		cs, ce, nameID     sql.NullInt64
		gt                 int64
	)
	for rows.Next() {
		cc = CopyCall{}
		if err := rows.Scan(&cc.Start, &cc.End, &cc.Bytes, &kind, &sk, &dk, &cc.CorrelationID, &cc.Stream, &cc.Device, &gpid,
			&cs, &ce, &nameID, &gt); err != nil {
			return r.tableError(table, err)
		}
		cc.Kind, cc.Src, cc.Dst = copyEnumsOf(kinds, memKinds, kind, sk, dk)
		if gpid != 0 {
			cc.PID, _ = splitGlobalID(gpid)
		}
		if nameID.Valid {
			name, ok := names[nameID.Int64]
			if !ok {
				v, err := r.str(nameID.Int64)
				if err != nil {
					return err
				}
				name = stripAPIVersion(v)
				names[nameID.Int64] = name
			}
			cc.API, cc.CallStart, cc.CallEnd = name, cs.Int64, ce.Int64
			cc.HostNs = cc.CallEnd - cc.CallStart
			if gt != 0 {
				cc.PID, cc.TID = splitGlobalID(gt)
				cc.Thread = threads[gt]
			}
			if isBatchAPI(name) {
				k := [2]int64{cc.PID, cc.CorrelationID}
				if batches[k] {
					cc.HostNs = 0
				}
				batches[k] = true
			}
			cc.Range = ranges.innermost(cc.PID, cc.TID, cc.CallStart, cc.CallEnd)
		} else {
			s.Unmatched++
		}
		s.Copies++
		fn(&cc)
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// copyJoinQuery is the one query that joins copies to their calls, and the
// enum maps that name its copy and memory kinds.
type copyJoinQuery struct {
	query    string
	kinds    map[int64]CopyKind
	memKinds map[int64]MemKind
}

// copyJoin builds the join of the copy table to the runtime table by
// correlation id within a process, from the columns the export has, and
// records in s what their absence leaves unknown.
func (r *sqliteReader) copyJoin(s *CopyScan, rcols map[string]bool) (*copyJoinQuery, error) {
	table := r.tables[tabMemcpy]
	mcols, err := r.columns(tabMemcpy, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColBytes, nsysdb.ColCopyKind)
	if err != nil {
		return nil, err
	}
	if r.tables[tabCopyOper] == "" {
		return nil, &inputerr.Error{Path: r.path, Where: "table " + tabCopyOper,
			Problem: "the export has memory copies but no " + tabCopyOper + " table to tell their directions", Hint: sqliteExportHint}
	}
	opers, err := r.readEnum(tabCopyOper)
	if err != nil {
		return nil, err
	}
	kinds := map[int64]CopyKind{}
	for id, n := range opers {
		kinds[id] = copyKindByName(n)
	}
	// m. is the copy table, r. the runtime table.
	m := func(col string) string { return "m." + quoteIdent(col) }
	rc := func(col string) string { return "r." + quoteIdent(col) }
	memKinds := map[int64]MemKind{}
	src, dst := "-1", "-1"
	switch {
	case !mcols[nsysdb.ColSrcKind] || !mcols[nsysdb.ColDstKind]:
		s.lack(FactMemoryKinds, fmt.Sprintf("table %s has no %s/%s columns; export with Nsight Systems 2025.3 or newer", table, nsysdb.ColSrcKind, nsysdb.ColDstKind))
	case r.tables[tabMemKind] == "":
		s.lack(FactMemoryKinds, fmt.Sprintf("the export has no %s table to name the memory kinds of copies", tabMemKind))
	default:
		mk, err := r.readEnum(tabMemKind)
		if err != nil {
			return nil, err
		}
		for id, n := range mk {
			memKinds[id] = memKindByName(n)
		}
		src, dst = `ifnull(`+m(nsysdb.ColSrcKind)+`, -1)`, `ifnull(`+m(nsysdb.ColDstKind)+`, -1)`
	}
	mcol := func(name string) string {
		if mcols[name] {
			return `ifnull(` + m(name) + `, 0)`
		}
		return "0"
	}
	copyAPIs, err := r.copyAPINameIDs()
	if err != nil {
		return nil, err
	}
	join := `0 = 1`
	if mcols[nsysdb.ColCorrelationID] && rcols[nsysdb.ColCorrelationID] && len(copyAPIs) > 0 {
		// Only the copy APIs' calls can have issued a copy: with that term
		// SQLite indexes just those calls (an automatic partial index)
		// rather than every call of the trace.
		join = rc(nsysdb.ColCorrelationID) + ` = ` + m(nsysdb.ColCorrelationID) + ` AND ` + rc(nsysdb.ColNameID) + ` IN (` + intList(copyAPIs) + `)`
		if mcols[nsysdb.ColGlobalPid] && rcols[nsysdb.ColGlobalTid] {
			join += ` AND ` + nsysdb.PIDExpr(rc(nsysdb.ColGlobalTid)) + ` = ` + nsysdb.PIDExpr(m(nsysdb.ColGlobalPid))
		}
	} else if len(copyAPIs) > 0 {
		s.lack(FactCorrelation, fmt.Sprintf("tables %s and %s cannot be joined: a %s column is missing", table, r.tables[tabRuntime], nsysdb.ColCorrelationID))
	}
	gtid := "0"
	if rcols[nsysdb.ColGlobalTid] {
		gtid = `ifnull(` + rc(nsysdb.ColGlobalTid) + `, 0)`
	} else {
		s.lack(FactProcessScope, fmt.Sprintf("table %s has no %s column", r.tables[tabRuntime], nsysdb.ColGlobalTid))
	}
	// One join, no ORDER BY: SQLite indexes the runtime table's correlation
	// ids on the fly and the rows come in the copy table's order.
	q := `SELECT ` + strings.Join([]string{m(nsysdb.ColStart), m(nsysdb.ColEnd), m(nsysdb.ColBytes), m(nsysdb.ColCopyKind), src, dst,
		mcol(nsysdb.ColCorrelationID), mcol(nsysdb.ColStreamID), mcol(nsysdb.ColDeviceID), mcol(nsysdb.ColGlobalPid),
		rc(nsysdb.ColStart), rc(nsysdb.ColEnd), rc(nsysdb.ColNameID), gtid}, ", ") +
		` FROM ` + quoteIdent(table) + ` AS m LEFT JOIN ` + quoteIdent(r.tables[tabRuntime]) + ` AS r ON ` + join
	return &copyJoinQuery{query: q, kinds: kinds, memKinds: memKinds}, nil
}

// copyAPIPrefixes name the API families that issue memory copies: the
// runtime's cudaMemcpy* and the driver's cuMemcpy*.
var copyAPIPrefixes = []string{"cudaMemcpy", "cuMemcpy"}

// copyAPINameIDs returns the StringIds ids of the copy APIs' names.
func (r *sqliteReader) copyAPINameIDs() ([]int64, error) {
	var conds []string
	var args []any
	for _, p := range copyAPIPrefixes {
		conds = append(conds, quoteIdent(nsysdb.ColValue)+` LIKE ? || '%' ESCAPE '\'`)
		args = append(args, likeEscape(p))
	}
	// LIKE ignores ASCII case: check exactly.
	return r.stringIDs(conds, args, func(_ int64, v string) bool { return isCopyAPI(v) })
}

// isCopyAPI reports whether an API name is one of copyAPIPrefixes' families.
func isCopyAPI(name string) bool {
	for _, p := range copyAPIPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isBatchAPI reports whether one call of this API may make several copies.
func isBatchAPI(name string) bool { return strings.Contains(name, "Batch") }

// ---------------------------------------------------------------------------
// NVTX: innermost enclosing push/pop range

// rangeIndex finds the innermost push/pop range of a thread that encloses a
// span. Push/pop ranges nest on their thread, so each range's parent is the
// closest earlier range that still encloses its start.
type rangeIndex struct {
	byThread map[[2]int64]*threadRanges
}

type threadRanges struct {
	start  []int64
	end    []int64 // math.MaxInt64 for a range never popped
	name   []string
	parent []int32 // index of the enclosing range, -1 for none
}

func newRangeIndex(rs []Range) *rangeIndex {
	ix := &rangeIndex{byThread: map[[2]int64]*threadRanges{}}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Start != rs[j].Start {
			return rs[i].Start < rs[j].Start
		}
		return rs[i].End > rs[j].End // the outer of two ranges pushed at once first
	})
	stacks := map[[2]int64][]int32{}
	for _, rg := range rs {
		k := [2]int64{rg.PID, rg.TID}
		t := ix.byThread[k]
		if t == nil {
			t = &threadRanges{}
			ix.byThread[k] = t
		}
		end := rg.End
		if rg.Open {
			end = 1<<63 - 1
		}
		st := stacks[k]
		for len(st) > 0 && t.end[st[len(st)-1]] < rg.Start {
			st = st[:len(st)-1]
		}
		p := int32(-1)
		if len(st) > 0 {
			p = st[len(st)-1]
		}
		t.start = append(t.start, rg.Start)
		t.end = append(t.end, end)
		t.name = append(t.name, rg.Name)
		t.parent = append(t.parent, p)
		stacks[k] = append(st, int32(len(t.start)-1))
	}
	return ix
}

// innermost returns the name of the innermost range of thread (pid, tid)
// that encloses [start, end], or "".
func (ix *rangeIndex) innermost(pid, tid, start, end int64) string {
	t := ix.byThread[[2]int64{pid, tid}]
	if t == nil {
		return ""
	}
	i := int32(sort.Search(len(t.start), func(i int) bool { return t.start[i] > start }) - 1)
	for i >= 0 {
		if t.start[i] <= start && t.end[i] >= end {
			return t.name[i]
		}
		i = t.parent[i]
	}
	return ""
}

// ---------------------------------------------------------------------------
// CSV reports: cuda_gpu_trace joined to cuda_api_trace

// gpuCopy is a copy row of cuda_gpu_trace kept until its API call is read.
type gpuCopy struct {
	start, end, bytes, stream, device, pid int64
	kind                                   CopyKind
	src, dst                               MemKind
	seen                                   bool
}

func streamCopiesCSV(dir string, fn func(*CopyCall)) (*CopyScan, error) {
	apiPath, gpuPath, nvtxPath, err := findTraceReports(dir)
	if err != nil {
		return nil, err
	}
	cv := newCopyValidator(dir, FormatCSV)
	fn = cv.wrap(fn)
	s := &CopyScan{Path: dir, Format: FormatCSV, Files: []string{apiPath, gpuPath}}
	s.lack(FactMemcpyBytes, nsysdb.ReportGPUTrace+" gives bytes in MB rounded to its printed digits, so per-copy bytes are approximate")
	copies, memsets, err := readGPUTraceCopies(gpuPath, s)
	if err != nil {
		return nil, err
	}
	s.Memsets = memsets
	ranges, err := readNVTXRanges(nvtxPath, s)
	if err != nil {
		return nil, err
	}
	f, _, err := inputerr.Open(apiPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	batches := map[int64]bool{}
	scoped := true
	var first, last int64
	_, err = streamAPITrace(f, apiPath, Options{}, func(a APICall) {
		s.APICalls++
		if s.APICalls == 1 || a.Start < first {
			first = a.Start
		}
		if a.End > last {
			last = a.End
		}
		cs, ok := copies[a.CorrelationID]
		if !ok || !isCopyAPI(a.Name) {
			return
		}
		for i := range cs {
			g := &cs[i]
			if g.seen || (g.pid != 0 && a.PID != 0 && g.pid != a.PID) {
				continue
			}
			g.seen = true
			cc := CopyCall{API: a.Name, CallStart: a.Start, CallEnd: a.End, HostNs: a.Duration(),
				Kind: g.kind, Src: g.src, Dst: g.dst, Bytes: g.bytes, Start: g.start, End: g.end,
				CorrelationID: a.CorrelationID, PID: a.PID, TID: a.TID, Thread: a.Thread, Stream: g.stream, Device: g.device}
			if len(cs) > 1 || isBatchAPI(a.Name) {
				if batches[a.CorrelationID] {
					cc.HostNs = 0
				}
				batches[a.CorrelationID] = true
			}
			cc.Range = ranges.innermost(cc.PID, cc.TID, cc.CallStart, cc.CallEnd)
			s.Copies++
			fn(&cc)
		}
	}, func(has bool) { scoped = has })
	if err != nil {
		return nil, err
	}
	if !scoped {
		s.lack(FactProcessScope, apiPath+" has no Pid/Tid columns")
	}
	if last > first {
		s.Span, s.SpanFrom = last-first, SpanAPICalls
	}
	emitUnmatched(s, copies, fn)
	if cv.v.err != nil {
		return nil, cv.v.err
	}
	return s, nil
}

// findTraceReports finds the trace reports the audit of a CSV folder reads,
// as LoadCSVDir finds a folder's reports (findCSVReports): cuda_api_trace
// and cuda_gpu_trace, which it needs, and nvtx_pushpop_trace ("" when
// absent).
func findTraceReports(dir string) (apiPath, gpuPath, nvtxPath string, err error) {
	found, err := findCSVReports(dir)
	if err != nil {
		return "", "", "", err
	}
	path := func(key string) string {
		if files := found[key]; len(files) > 0 {
			return filepath.Join(dir, files[0])
		}
		return ""
	}
	apiPath, gpuPath, nvtxPath = path(nsysdb.ReportAPITrace), path(nsysdb.ReportGPUTrace), path(nsysdb.ReportNVTXTrace)
	if gpuPath == "" || apiPath == "" {
		return "", "", "", &inputerr.Error{Path: dir, Problem: "the audit of a CSV folder needs both *_" + nsysdb.ReportAPITrace + ".csv and *_" + nsysdb.ReportGPUTrace + ".csv",
			Hint: "make them with " + nsysdb.TraceReportsCommand}
	}
	return apiPath, gpuPath, nvtxPath, nil
}

// readNVTXRanges indexes the ranges of the folder's nvtx_pushpop_trace
// report (path "" when there is none) by thread, through the one reader of
// the report (streamNVTXTrace), and records in s what is missing.
func readNVTXRanges(path string, s *CopyScan) (*rangeIndex, error) {
	if path == "" {
		s.lack(FactNVTX, "no *_"+nsysdb.ReportNVTXTrace+".csv in "+s.Path+", so copies have no NVTX range")
		return newRangeIndex(nil), nil
	}
	rs, scoped, err := readNVTXTrace(path)
	switch {
	case errors.Is(err, errEmptyReport):
		rs = nil
	case err != nil:
		return nil, err
	case !scoped:
		s.lack(FactNVTX, path+" has no PID/TID columns, so no range can be placed on a thread")
		rs = nil
	}
	s.Files = append(s.Files, path)
	return newRangeIndex(rs), nil
}

// emitUnmatched hands fn the copies no call of the API trace issued (the
// driver API's, or another process's), in correlation id order.
func emitUnmatched(s *CopyScan, copies map[int64][]gpuCopy, fn func(*CopyCall)) {
	var corrs []int64
	for corr := range copies {
		corrs = append(corrs, corr)
	}
	sort.Slice(corrs, func(i, j int) bool { return corrs[i] < corrs[j] })
	for _, corr := range corrs {
		for _, g := range copies[corr] {
			if g.seen {
				continue
			}
			cc := CopyCall{Kind: g.kind, Src: g.src, Dst: g.dst, Bytes: g.bytes, Start: g.start, End: g.end,
				CorrelationID: corr, PID: g.pid, Stream: g.stream, Device: g.device}
			s.Copies++
			s.Unmatched++
			fn(&cc)
		}
	}
}

// readGPUTraceCopies reads the copy rows of a cuda_gpu_trace report by
// correlation id (kernels skipped, memsets counted), through the one reader
// of the report (streamGPUTrace).
func readGPUTraceCopies(path string, s *CopyScan) (map[int64][]gpuCopy, int64, error) {
	out := map[int64][]gpuCopy{}
	var memsets int64
	h, err := streamGPUTrace(path, func(r *gpuTraceRecord) error {
		switch {
		case r.Memset:
			memsets++
		case r.Copy:
			out[r.CorrelationID] = append(out[r.CorrelationID], gpuCopy{start: r.Start, end: r.End, bytes: r.Bytes,
				stream: r.Stream, device: r.Device, pid: r.PID, kind: r.Kind, src: r.Src, dst: r.Dst})
		}
		return nil
	})
	if errors.Is(err, errEmptyReport) {
		return out, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if !h.hasKinds {
		s.lack(FactMemoryKinds, path+" has no "+gpuTraceDisplay("srckind")+"/"+gpuTraceDisplay("dstkind")+" columns; make it with nsys 2024.2 or newer")
	}
	if !h.hasBytes {
		s.lack(FactMemcpyBytes, path+" has no "+gpuTraceDisplay("bytes")+" column")
	}
	return out, memsets, nil
}

// gpuTraceDisplay is a cuda_gpu_trace column's header as nsys writes it.
func gpuTraceDisplay(field string) string {
	for _, c := range nsysdb.GPUTraceColumns {
		if c.Field == field {
			return c.Display
		}
	}
	return field
}
