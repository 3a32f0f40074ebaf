package nsyscsv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/csvheader"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The per-record CSV reports: cuda_api_trace (one row per API call),
// cuda_gpu_trace (one row per GPU copy, memset or kernel, with the API
// call's CorrId) and nvtx_pushpop_trace (one row per push/pop range
// instance); nsys 2022 names them cudaapitrace, gputrace and nvtxpptrace.
// Every one is read through recordFile, on csvScanner, with the layout of
// its report (apiTraceLayout, gpuTraceLayout, nvtxTraceLayout).

// gpuTraceRecord is one row of a cuda_gpu_trace report: a copy, a memset or
// a kernel, with the correlation id of the API call that issued it.
type gpuTraceRecord struct {
	Start, End   int64
	Corr         int64
	Copy, Memset bool           // neither: a kernel
	Kind         vocab.CopyKind // a copy's direction
	Src, Dst     vocab.MemKind  // a copy's memory kinds; vocab.MemUnknown without the columns
	Bytes        int64          // a copy's size, where the report has a Bytes column (see csvBytes)
	Device       int64
	Stream       int64
	PID          int64  // where the report has a Pid column
	Name         string // a kernel's name as written; "" for copies and memsets
	Migration    bool   // a copy that is a unified-memory migration
}

// gpuTraceHeader says which optional columns a cuda_gpu_trace report has.
type gpuTraceHeader struct {
	hasBytes bool // a Bytes column
	hasKinds bool // both SrcMemKd and DstMemKd
	hasPID   bool // a Pid column
}

// recordFile is one per-record report being read: csvScanner, which splits
// records as encoding/csv does without a string per cell, and the report's
// header resolved against the columns its reader needs (nil for a file
// with no header at all: nsys writes an empty file when it has nothing to
// report).
type recordFile struct {
	path, report string
	cols         []nsysdb.ReportColumn
	f            *os.File // nil when reading a plain reader
	sc           *csvScanner
	head         *csvheader.Header
	headCells    [][]byte // the header's cells as isHeader compares them
}

// openRecords opens a per-record report (a regular file only) and reads its
// header.
func openRecords(path, report string, cols []nsysdb.ReportColumn) (*recordFile, error) {
	f, _, err := inputerr.Open(path)
	if err != nil {
		return nil, err
	}
	rf := &recordFile{path: path, report: report, cols: cols, f: f}
	if err := rf.start(f); err != nil {
		f.Close()
		return nil, err
	}
	return rf, nil
}

// start reads the header from r.
func (rf *recordFile) start(r io.Reader) error {
	rf.sc, rf.head = newCSVScanner(r), nil
	first, err := rf.sc.next()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return csvScanError(rf.path, "header", err)
	}
	names := make([]string, len(first))
	rf.headCells = make([][]byte, len(first))
	for i, c := range first {
		names[i] = string(c)
		rf.headCells[i] = headerCell([]byte(names[i]))
	}
	rf.head, err = csvheader.Resolve(rf.path, rf.report, names, rf.cols)
	return err
}

// empty reports whether the file has no header at all.
func (rf *recordFile) empty() bool { return rf.head == nil }

// rows hands each data row (its cells valid until the next row) and the
// row's number to fn, which may stop the read with an error. Every
// rowsPerCheck rows it stops when ctx is cancelled.
func (rf *recordFile) rows(ctx context.Context, fn func(n int, rec [][]byte) error) error {
	if rf.head == nil {
		return nil
	}
	width := len(rf.head.Names)
	for n := 1; ; n++ {
		if n%rowsPerCheck == 0 && ctx.Err() != nil {
			return &inputerr.Error{Path: rf.path, Where: fmt.Sprintf("data row %d", n), Problem: "interrupted while reading the report", Err: context.Cause(ctx)}
		}
		rec, err := rf.sc.next()
		if err == io.EOF && rf.sc.unended {
			// Its rows were handed on: the error refuses them all.
			where := "line 1 (the header)"
			if n > 1 {
				where = fmt.Sprintf("data row %d (the last)", n-1)
			}
			return &inputerr.Error{Path: rf.path, Where: where,
				Problem: "the last line ends without its newline, where nsys ends every line: the file is cut short, maybe inside that row, whose values then cannot be trusted",
				Hint:    "copy the report again, or make it again with nsys stats --format csv"}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvScanError(rf.path, fmt.Sprintf("data row %d", n), err)
		}
		if len(rec) != width {
			return &inputerr.Error{Path: rf.path, Where: fmt.Sprintf("data row %d", n),
				Problem: fmt.Sprintf("malformed CSV: %d cells where the header has %d", len(rec), width),
				Hint:    "the file may be cut short or not be an nsys stats --format csv report"}
		}
		if rf.isHeader(rec) {
			return &inputerr.Error{Path: rf.path, Where: fmt.Sprintf("data row %d", n),
				Problem: "the header again, inside the report: two reports were joined into one file, so its rows may come from two captures",
				Hint:    "make the report again with nsys stats --format csv, one report per file"}
		}
		if err := fn(n, rec); err != nil {
			return inputerr.Attribute(err, rf.path, "")
		}
	}
}

// isHeader reports whether a data row repeats the header, cell for cell
// (a byte-order mark and spaces aside).
func (rf *recordFile) isHeader(rec [][]byte) bool {
	for i, name := range rf.headCells {
		if !bytes.Equal(headerCell(rec[i]), name) {
			return false
		}
	}
	return true
}

// headerCell is a header cell as compared: without a byte-order mark and
// surrounding spaces.
func headerCell(b []byte) []byte { return bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\ufeff"))) }

// rowsPerCheck is how many rows are read between looks at the context.
const rowsPerCheck = 1 << 16

// rewind starts the report again from its header, for a second pass.
func (rf *recordFile) rewind() error {
	if _, err := rf.f.Seek(0, io.SeekStart); err != nil {
		return &inputerr.Error{Path: rf.path, Problem: "cannot read the " + rf.report + " report", Err: err}
	}
	return rf.start(rf.f)
}

func (rf *recordFile) close() {
	if rf != nil && rf.f != nil {
		rf.f.Close()
	}
}

// readCSVRecords reads a per-record report from r as recordFile does: its
// resolved header to header, then each data row to row. A file with no
// header at all gives errEmptyReport.
func readCSVRecords(r io.Reader, path, report string, cols []nsysdb.ReportColumn, header func(*csvheader.Header) error,
	row func(n int, rec [][]byte) error) error {
	rf := &recordFile{path: path, report: report, cols: cols}
	if err := rf.start(r); err != nil {
		return err
	}
	if rf.empty() {
		return errEmptyReport
	}
	if err := header(rf.head); err != nil {
		return err
	}
	return rf.rows(context.Background(), row)
}

// csvScanError says where csvScanner stopped and why: a record past the
// bound (on its first line), a quote out of place, or a failed read.
func csvScanError(path, where string, err error) *inputerr.Error {
	if ee := csvEncodingError(path, err); ee != nil {
		return ee
	}
	var long *errCSVRecordTooLong
	if errors.As(err, &long) {
		return csvReadError(path, err)
	}
	if errors.Is(err, errCSVScan) {
		return &inputerr.Error{Path: path, Where: where, Problem: "malformed CSV: a quote inside an unquoted cell, text after a closing quote, or a quoted cell never closed",
			Hint: "the file may be cut short or not be an nsys stats --format csv report"}
	}
	return &inputerr.Error{Path: path, Where: where, Problem: "cannot read the CSV report", Err: err}
}

// streamAPITrace reads a cuda_api_trace CSV report from r row by row and
// hands each wanted call to emit; it returns the number of data rows read.
// scope, when not nil, learns whether the report has Pid and Tid columns.
//
// This report is read with recordFile and a header->index layout
// rather than gocsv: gocsv's streaming entry points (UnmarshalToCallback,
// UnmarshalDecoderToCallback) pass every row through reflection and an
// unbuffered channel to a second goroutine. On a synthetic 1M-row report,
// one core (GOMAXPROCS=1), BenchmarkCSVTraceStream measured about
// 0.6-0.66M rows/s through gocsv against 2-3M rows/s here (see
// docs/performance.md). The small summary reports go through gocsv.
func streamAPITrace(r io.Reader, path string, opts records.Selection, emit func(records.Call), scope func(bool)) (int, error) {
	var l *apiTraceLayout
	rows := 0
	err := readCSVRecords(r, path, nsysdb.ReportAPITrace, nsysdb.APITraceColumns,
		func(rh *csvheader.Header) error {
			l = newAPITraceLayout(path, rh)
			if scope != nil {
				scope(l.pid >= 0 && l.tid >= 0)
			}
			return nil
		},
		func(n int, rec [][]byte) error {
			rows = n
			call, ok, err := l.read(n, rec, opts)
			if ok {
				emit(call)
			}
			return err
		})
	return rows, err
}

// apiTraceLayout is where a cuda_api_trace report keeps each cell, and the
// strings its rows repeat (API and thread names), kept once.
type apiTraceLayout struct {
	path                     string
	names                    []string // the header as written, for errors
	start, dur, name, corr   int
	result, pid, tid, thread int // -1 where the report lacks the column
	sStart, sDur             float64
	intern                   map[string]string
}

func newAPITraceLayout(path string, rh *csvheader.Header) *apiTraceLayout {
	opt := func(f string) int {
		if i, ok := rh.Index[f]; ok {
			return i
		}
		return -1
	}
	return &apiTraceLayout{path: path, names: rh.Names,
		start: rh.Index["start"], dur: rh.Index["duration"], name: rh.Index["name"], corr: rh.Index["corrid"],
		result: opt("result"), pid: opt("pid"), tid: opt("tid"), thread: opt("thread"),
		sStart: rh.Scale["start"], sDur: rh.Scale["duration"], intern: map[string]string{}}
}

// internStr is b as a string, one copy per distinct value.
func (l *apiTraceLayout) internStr(b []byte) string {
	if v, ok := l.intern[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(l.intern) <= 1<<16 { // many distinct strings: stop growing the table
		l.intern[v] = v
	}
	return v
}

// num reads an integer cell; an absent column or an empty cell is 0.
func (l *apiTraceLayout) num(rec [][]byte, i, row int) (int64, error) {
	if i < 0 || len(rec[i]) == 0 {
		return 0, nil
	}
	v, err := csvParseInt(string(rec[i]))
	if err != nil {
		return 0, csvRowError(l.path, row, l.names[i], string(rec[i]), "not an integer", "re-export the report with nsys stats --format csv")
	}
	return v, nil
}

// read decodes one row; ok is false for a call opts does not want. Every
// row is decoded whole, wanted or not, so that a damaged row is an error
// whatever a reader selects: verify and audit read a report alike.
func (l *apiTraceLayout) read(row int, rec [][]byte, opts records.Selection) (call records.Call, ok bool, err error) {
	name := csvStripVersionBytes(rec[l.name])
	const hint = "times must be non-negative numbers; re-export with nsys stats --report cuda_api_trace --format csv"
	start, err := csvParseNs(string(rec[l.start]), l.sStart)
	if err != nil || start < 0 {
		return call, false, csvRowError(l.path, row, l.names[l.start], string(rec[l.start]), "start is not a non-negative number", hint)
	}
	dur, err := csvParseNs(string(rec[l.dur]), l.sDur)
	if err != nil || dur < 0 {
		return call, false, csvRowError(l.path, row, l.names[l.dur], string(rec[l.dur]), "duration is not a non-negative number", hint)
	}
	if start > math.MaxInt64-dur {
		return call, false, csvRowError(l.path, row, l.names[l.dur], string(rec[l.dur]), "start + duration overflows", hint)
	}
	call = records.Call{Name: l.internStr(name), Start: start, End: start + dur, Row: row}
	for _, c := range []struct {
		i   int
		dst *int64
	}{{l.corr, &call.Corr}, {l.result, &call.Result}, {l.pid, &call.PID}, {l.tid, &call.TID}} {
		if *c.dst, err = l.num(rec, c.i, row); err != nil {
			return call, false, err
		}
	}
	if l.thread >= 0 {
		call.Thread = l.internStr(rec[l.thread])
	}
	return call, opts.WantsAPI(call.Name), nil
}

// threadCounter counts calls per thread as written ("pid,tid"); rows come
// in runs of one thread, so the last thread's key is kept beside the map.
type threadCounter struct {
	name, pid, tid int // cells; -1 where the report lacks Pid or Tid
	at             map[string]int
	out            []records.ThreadCount
	key, last      []byte
	lastAt         int
}

func (tc *threadCounter) add(name []byte, rec [][]byte) error {
	tc.key = tc.key[:0]
	if tc.pid >= 0 {
		tc.key = append(tc.key, rec[tc.pid]...)
	}
	tc.key = append(tc.key, ',')
	if tc.tid >= 0 {
		tc.key = append(tc.key, rec[tc.tid]...)
	}
	i := tc.lastAt
	if i < 0 || !bytes.Equal(tc.key, tc.last) {
		var ok bool
		if i, ok = tc.at[string(tc.key)]; !ok {
			var t records.ThreadCount
			var err error
			if tc.pid >= 0 && len(rec[tc.pid]) > 0 {
				if t.PID, err = csvParseInt(string(rec[tc.pid])); err != nil {
					return err
				}
			}
			if tc.tid >= 0 && len(rec[tc.tid]) > 0 {
				if t.TID, err = csvParseInt(string(rec[tc.tid])); err != nil {
					return err
				}
			}
			i = len(tc.out)
			tc.at[string(tc.key)] = i
			tc.out = append(tc.out, t)
		}
		tc.last, tc.lastAt = append(tc.last[:0], tc.key...), i
	}
	tc.out[i].Calls++
	switch string(name) {
	case "cudaMemcpyAsync":
		tc.out[i].MemcpyAsync++
	case "cudaMemcpy":
		tc.out[i].Memcpy++
	}
	return nil
}

// threads is the count per thread, ids written two ways ("7" and "7.0")
// merged into one thread, in the order of records.ThreadCount.Before.
func (tc *threadCounter) threads() []records.ThreadCount {
	merged := tc.out[:0:0]
	seen := map[[2]int64]int{}
	for _, t := range tc.out {
		if j, ok := seen[[2]int64{t.PID, t.TID}]; ok {
			merged[j].Calls += t.Calls
			merged[j].MemcpyAsync += t.MemcpyAsync
			merged[j].Memcpy += t.Memcpy
			continue
		}
		seen[[2]int64{t.PID, t.TID}] = len(merged)
		merged = append(merged, t)
	}
	records.SortThreads(merged)
	return merged
}

// gpuTraceLayout is where a cuda_gpu_trace report keeps its cells, and the
// record of the row last read.
type gpuTraceLayout struct {
	gpuTraceHeader
	path                                  string
	rh                                    *csvheader.Header
	iStart, iDur, iCorr, iName            int
	iBytes, iSrc, iDst, iDev, iStrm, iPid int
	bytesScale                            float64 // MB per unit of the Bytes column
	rec                                   gpuTraceRecord
}

func newGPUTraceLayout(path string, rh *csvheader.Header) (*gpuTraceLayout, error) {
	col := func(field string) int {
		if i, ok := rh.Index[field]; ok {
			return i
		}
		return -1
	}
	l := &gpuTraceLayout{path: path, rh: rh}
	l.iStart, l.iDur, l.iCorr, l.iName = col("start"), col("duration"), col("corrid"), col("name")
	l.iBytes, l.iSrc, l.iDst, l.iDev, l.iStrm, l.iPid = col("bytes"), col("srckind"), col("dstkind"), col("device"), col("stream"), col("pid")
	l.hasKinds, l.hasBytes, l.hasPID = l.iSrc >= 0 && l.iDst >= 0, l.iBytes >= 0, l.iPid >= 0
	if l.hasBytes {
		var ok bool
		if l.bytesScale, ok = csvheader.SizeScale(rh.Unit["bytes"]); !ok {
			return nil, &inputerr.Error{Path: path, Where: "column " + strconv.Quote(rh.Names[l.iBytes]),
				Problem: "unknown size unit " + strconv.Quote(rh.Unit["bytes"]), Hint: "re-export with nsys stats --format csv"}
		}
	}
	return l, nil
}

// read decodes one data row into l.rec.
func (l *gpuTraceLayout) read(row int, rec [][]byte) error {
	const hint = "re-export the report with nsys stats --format csv"
	cell := func(i int) string {
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(string(rec[i]))
	}
	g := gpuTraceRecord{Src: vocab.MemUnknown, Dst: vocab.MemUnknown}
	var err error
	if g.Start, err = csvTimeCell(l.path, l.rh, row, "start", cell(l.iStart)); err != nil {
		return err
	}
	dur, err := csvTimeCell(l.path, l.rh, row, "duration", cell(l.iDur))
	if err != nil {
		return err
	}
	if g.Start > math.MaxInt64-dur {
		return csvRowError(l.path, row, l.rh.Names[l.iDur], cell(l.iDur), "start + duration overflows", hint)
	}
	g.End = g.Start + dur
	if g.Corr, err = csvParseInt(cell(l.iCorr)); err != nil || g.Corr < 0 {
		return csvRowError(l.path, row, l.rh.Names[l.iCorr], cell(l.iCorr), "count must be a whole non-negative number", hint)
	}
	for _, id := range []struct {
		i    int
		text string
		into *int64
	}{{l.iDev, deviceIndex(cell(l.iDev)), &g.Device}, {l.iStrm, cell(l.iStrm), &g.Stream}, {l.iPid, cell(l.iPid), &g.PID}} {
		if id.text == "" {
			continue // a column the report lacks, or a row without the id
		}
		if *id.into, err = csvParseInt(id.text); err != nil {
			return csvRowError(l.path, row, l.rh.Names[id.i], cell(id.i), "not an integer id", hint)
		}
	}
	name := cell(l.iName)
	g.Copy, g.Memset = nsysdb.ReportRowKind(name)
	switch {
	case g.Copy:
		g.Kind, _ = nsysdb.ReportCopyKindOf(name)
		g.Migration = nsysdb.ReportMigration(name)
		if l.hasKinds {
			var okSrc, okDst bool
			g.Src, okSrc = memKindOf(cell(l.iSrc))
			g.Dst, okDst = memKindOf(cell(l.iDst))
			for _, c := range []struct {
				i  int
				ok bool
			}{{l.iSrc, okSrc}, {l.iDst, okDst}} {
				if !c.ok {
					return csvRowError(l.path, row, l.rh.Names[c.i], cell(c.i), "not a memory kind nsys writes (Pageable, Pinned, Device, Managed, ...)", hint)
				}
			}
		}
		if l.hasBytes {
			if strings.TrimSpace(cell(l.iBytes)) == "" {
				return &inputerr.Error{Path: l.path, Where: fmt.Sprintf("data row %d, column %q", row, l.rh.Names[l.iBytes]),
					Problem: "blank, where nsys writes every copy's size: the copy's size is unknown, not 0", Hint: hint}
			}
			if g.Bytes, err = csvBytes(cell(l.iBytes), l.bytesScale); err != nil {
				return csvRowError(l.path, row, l.rh.Names[l.iBytes], cell(l.iBytes), err.Error(), hint)
			}
		}
	case !g.Memset:
		g.Name = name
	}
	l.rec = g
	return nil
}

// csvTimeCell reads a time cell of a streamed report as nanoseconds, checking
// its sign.
func csvTimeCell(path string, rh *csvheader.Header, row int, field, cell string) (int64, error) {
	v, err := csvParseNs(cell, rh.Scale[field])
	if err != nil || v < 0 {
		return 0, csvRowError(path, row, rh.Names[rh.Index[field]], cell, "time must be a non-negative number", "re-export the report with nsys stats --format csv")
	}
	return v, nil
}

// csvBytes turns a size cell (in the report's unit, scale megabytes per
// unit) into bytes. The report rounds to a few decimals (268.435 MB), so a
// cell stands for an interval of sizes; the size taken is the one multiple
// of 4 KiB in that interval when there is exactly one (every buffer size a
// page-granular program copies), else the rounded value.
func csvBytes(cell string, scale float64) (int64, error) {
	s := strings.TrimSpace(cell)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || strings.ContainsAny(s, "xXpP_") {
		return 0, fmt.Errorf("size must be a non-negative number")
	}
	decimals := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		decimals = len(s) - i - 1
	}
	b := v * scale * 1e6
	if b > float64(maxCopyBytes) {
		return 0, fmt.Errorf("size is impossible: more than %d GiB in one copy", maxCopyBytes>>30)
	}
	half := 0.5 * math.Pow(10, -float64(decimals)) * scale * 1e6
	const page = 4096
	lo, hi := math.Ceil((b-half)/page), math.Floor((b+half)/page)
	if lo == hi && lo > 0 {
		return int64(lo) * page, nil
	}
	return int64(math.Round(b)), nil
}

// deviceIndex extracts the device number from "NVIDIA H200 (0)".
func deviceIndex(s string) string {
	_, id := deviceCell(s)
	return id
}

// deviceCell splits a Device cell, "NVIDIA H200 (0)", into the GPU's name
// and its device id; a cell without the parenthesis is an id alone, of no
// name.
func deviceCell(s string) (name, id string) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		return strings.TrimSpace(s[:i]), s[i+1 : len(s)-1]
	}
	return "", s
}

// memKindOf maps a report's memory kind ("Pageable", "Device Static") to
// vocab.MemKind, through the enum names nsysdb knows; ok is false for a
// name nsys does not write. An empty cell and "Unknown" are unknown.
func memKindOf(s string) (vocab.MemKind, bool) {
	name := strings.ReplaceAll(strings.TrimSpace(s), " ", "_")
	k := nsysdb.MemKindOf(name)
	return k, k != vocab.MemUnknown || name == "" || strings.EqualFold(name, "unknown")
}

// baseKernelName reduces a demangled kernel name to its base name, as the
// SQLite export's shortName: "void at::native::foo<(int)4, X>(int, T2)" ->
// "foo", "<unnamed>::scaleCopy(float4 *, ...)" -> "scaleCopy".
func baseKernelName(name string) string {
	var b strings.Builder
	depth := 0
	for _, r := range name {
		switch r {
		case '<', '(', '[':
			depth++
			continue
		case '>', ')', ']':
			if depth > 0 {
				depth--
			}
			continue
		}
		if depth == 0 {
			b.WriteRune(r)
		}
	}
	s := strings.TrimSpace(b.String())
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	if s == "" {
		return name
	}
	return s
}

// nvtxTraceLayout is where an nvtx_pushpop_trace (2022: nvtxpptrace)
// report keeps its cells. Without PID and TID columns (scoped false) no
// range can be placed on a thread.
type nvtxTraceLayout struct {
	path                            string
	rh                              *csvheader.Header
	iStart, iEnd, iName, iPid, iTid int
	hasPID, hasTID, scoped          bool
}

func newNVTXTraceLayout(path string, rh *csvheader.Header) *nvtxTraceLayout {
	l := &nvtxTraceLayout{path: path, rh: rh, iStart: rh.Index["start"], iEnd: rh.Index["end"], iName: rh.Index["name"]}
	l.iPid, l.hasPID = rh.Index["pid"]
	l.iTid, l.hasTID = rh.Index["tid"]
	l.scoped = l.hasPID && l.hasTID
	return l
}

// read decodes one row: the range's name with the "domain:" prefix split
// off, an empty end meaning a range never popped.
func (l *nvtxTraceLayout) read(row int, rec [][]byte) (records.Range, error) {
	const hint = "re-export the report with nsys stats --format csv"
	var rg records.Range
	var err error
	if rg.Start, err = csvTimeCell(l.path, l.rh, row, "start", strings.TrimSpace(string(rec[l.iStart]))); err != nil {
		return rg, err
	}
	rg.Domain, rg.Name = csvSplitRange(string(rec[l.iName]))
	if e := strings.TrimSpace(string(rec[l.iEnd])); e == "" {
		rg.Open = true
	} else if rg.End, err = csvParseNs(e, l.rh.Scale["end"]); err != nil || rg.End < rg.Start {
		return rg, csvRowError(l.path, row, l.rh.Names[l.iEnd], e, "end must be a time not before the start", hint)
	}
	for _, id := range []struct {
		i    int
		has  bool
		into *int64
	}{{l.iPid, l.hasPID, &rg.PID}, {l.iTid, l.hasTID, &rg.TID}} {
		if c := strings.TrimSpace(string(rec[id.i])); id.has && c != "" {
			v, err := csvParseInt(c)
			if err != nil {
				return rg, csvRowError(l.path, row, l.rh.Names[id.i], c, "not an integer id", hint)
			}
			*id.into = v
		}
	}
	return rg, nil
}

// maxCopyBytes bounds one copy's size: 1 TiB, far beyond any buffer a
// program copies at once.
const maxCopyBytes = int64(1) << 40
