// Package nsyscsv reads a folder of `nsys stats --format csv` reports into
// records: the per-record reports (cuda_api_trace, cuda_gpu_trace,
// nvtx_pushpop_trace) row by row through one scanner, the small summaries
// (cuda_api_sum, cuda_gpu_mem_time_sum and _size_sum, nvtx_sum) through
// gocsv, under their current and their 2022-era names, with the facts the
// folder cannot give. Report names and header spellings come from
// internal/nsysdb.
package nsyscsv

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Sources names the report file each kind of record came from, where the
// folder had one: the API calls, the copies and kernels, the NVTX ranges.
type Sources struct {
	API, Memcpy, Kernel, NVTX string
}

// Info is what a read learnt beside its records.
type Info struct {
	// Files are the reports read, in the order of nsysdb's report list.
	Files   []string
	Sources Sources
	// OtherThreads counts, per thread, the calls ProgramThread left out, in
	// the order of records.ThreadCount.Before.
	OtherThreads []records.ThreadCount
}

// Read streams the records of the reports in dir (by report key, as
// source.Open lists them) to h: only the reports the kinds h wants come
// from are read, and of them what opts selects, in the order the records
// package gives. With opts.ProgramThread, cuda_api_trace is read twice
// (the calls counted per thread, then the program's thread's kept; the GPU
// operations are all read, as the report cannot tie them to a thread); with
// opts.JoinCalls, the copy calls are kept (records.CallIndex, about 48
// bytes a copy call) and each copy comes with its call, in the report's
// order. A folder none of whose reports read holds a data row is an error.
func Read(ctx context.Context, dir string, reports map[string]string, opts records.Selection, h records.Handler) (*Info, error) {
	rd := &reader{ctx: ctx, dir: dir, reports: reports, opts: opts, h: h,
		info: &Info{Sources: Sources{API: nsysdb.ReportAPITrace, NVTX: nsysdb.ReportNVTXSum}}}
	defer rd.close()
	if err := rd.open(); err != nil {
		return nil, err
	}
	rd.rangeTallies()
	steps := []func() error{rd.emitMeta, rd.emitGaps, rd.emitRanges, rd.emitCalls, rd.emitOps, rd.emitSums, rd.emitCounts}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := rd.checkRangeUnits(); err != nil {
		return nil, err
	}
	// After the units' check, which tells a unit edited in the header.
	if err := rd.checkRangeSum(); err != nil {
		return nil, err
	}
	if rd.held == 0 {
		return nil, &inputerr.Error{Path: dir, Problem: "the reports " + strings.Join(rd.info.Files, ", ") + " hold no data rows",
			Hint: "the capture may have traced nothing; profile with nsys profile -t cuda,nvtx"}
	}
	return rd.info, nil
}

// reader holds the state of one Read.
type reader struct {
	ctx     context.Context
	dir     string
	reports map[string]string
	opts    records.Selection
	h       records.Handler
	info    *Info
	gaps    []records.Gap
	held    int // reports read that held at least one data row
	// gpuName names the GPU(s) of the GPU trace's rows (readGPUNames).
	gpuName string

	// The span of the NVTX ranges read and of the calls and GPU
	// operations, for checkRangeUnits.
	rangeSpan, traceSpan timeSpan

	api, gpu, nvtx *recordFile
	apiSum         []records.APISum
	copySum        []records.CopySum
	// The rows of cuda_gpu_mem_time_sum and _size_sum read, apart, for
	// checkSums.
	timeSum, sizeSum []records.CopySum
	rangeSum         []records.RangeSum
	// Of nvtx_sum's rows, the push/pop ranges' (its Style), for checkSums;
	// and what nvtx_pushpop_trace held of each range name (domain:name).
	rangeSumPushPop []bool
	rangesSeen      map[[2]string]*rangeTally // the summary's push/pop names alone
	unlisted        int64                     // ranges of the trace of a name the summary has no push/pop row of
	firstUnlisted   string
	counts          records.Counts
	// With records.Selection.JoinCalls: the copy calls read, which the
	// copies read after them are joined to, and the graph launches, whose
	// copies are the graphs' nodes.
	joining bool
	index   records.CallIndex
	// onePID is the one process of the API trace's calls (0 where it
	// holds none, or several: manyPIDs).
	onePID   int64
	manyPIDs bool
	graphs   records.CallIndex

	// The summaries read only for checkSums, not handed on; and what the
	// per-record reports held, counted as they were read.
	apiSumRead, copySumRead, rangeSumRead bool
	callsSeen                             map[string]int64           // calls of cuda_api_trace by name
	callNsSeen                            map[string]int64           // their durations' total by name, where callTimes
	callTimes                             bool                       // every call's times were read
	twins                                 *twinRows                  // nsys's backtrace rows of cuda_api_trace, left out
	copiesSeen                            map[vocab.CopyKind]int64   // copies of cuda_gpu_trace by kind
	copyNsSeen                            map[vocab.CopyKind]int64   // their durations' total by kind
	copyMBSeen                            map[vocab.CopyKind]float64 // their sizes' total by kind, in MB
	copySizes                             bool                       // cuda_gpu_trace gives sizes (Bytes)
}

// migrationUnknown is Op.Migration of a unified-memory migration whose
// cause the report does not give (nsysdb.MigrationOf's word for none).
const migrationUnknown = "unknown"

func (rd *reader) close() {
	rd.api.close()
	rd.gpu.close()
	rd.nvtx.close()
}

func (rd *reader) lack(f records.Fact, reason string) {
	rd.gaps = append(rd.gaps, records.Gap{Fact: f, Reason: reason})
}

// path is the report of the key, "" when the folder has none.
func (rd *reader) path(key string) string { return rd.reports[key] }

// opened notes a report read, for Info.Files.
func (rd *reader) opened(p string) { rd.info.Files = append(rd.info.Files, p) }

// open opens the reports the wanted records come from, in the order of
// nsysdb's report list: the per-record reports as far as their headers,
// the summaries whole; it records what each absent or empty one leaves
// unknown.
func (rd *reader) open() error {
	wantCalls := rd.h.Call != nil || rd.opts.JoinCalls || rd.h.Counts != nil
	wantOps := rd.h.Op != nil || rd.h.Counts != nil
	if rd.opts.Stacks && rd.opts.JoinCalls && rd.h.Op != nil {
		rd.lack(records.FactStacks, "no call stacks in CSV reports: nsys stats writes none; give the capture's .nsys-rep or SQLite export")
	}
	if wantCalls {
		if err := rd.openAPITrace(); err != nil {
			return err
		}
	}
	if rd.h.APISum != nil {
		if err := rd.readAPISum(); err != nil {
			return err
		}
	}
	if rd.h.CopySum != nil {
		if err := rd.readMemSums(); err != nil {
			return err
		}
	}
	if rd.h.RangeSum != nil {
		if err := rd.readNVTXSum(); err != nil {
			return err
		}
	}
	if wantOps {
		if err := rd.openGPUTrace(); err != nil {
			return err
		}
	}
	if rd.h.Range != nil {
		if err := rd.openNVTXTrace(); err != nil {
			return err
		}
	}
	return rd.readSumsToCheck()
}

// readSumsToCheck reads the summaries that tally a per-record report read
// (cuda_api_sum the calls, cuda_gpu_mem_time_sum and _size_sum the copies)
// where the folder has them and the consumer did not ask for them, so that
// checkSums compares them whatever the consumer reads.
func (rd *reader) readSumsToCheck() error {
	if p := rd.path(nsysdb.ReportAPISum); rd.h.APISum == nil && rd.api != nil && !rd.api.empty() && p != "" {
		rows, err := readAPISum(p)
		if err != nil && !errors.Is(err, errEmptyReport) {
			return err
		}
		rd.apiSum, rd.apiSumRead = rows, true
		rd.opened(p)
	}
	if p := rd.path(nsysdb.ReportMemTimeSum); rd.h.CopySum == nil && rd.gpu != nil && !rd.gpu.empty() && p != "" {
		rows, err := readMemSum(p, false)
		if err != nil && !errors.Is(err, errEmptyReport) {
			return err
		}
		rd.copySum, rd.copySumRead, rd.timeSum = rows, true, rows
		rd.opened(p)
	}
	if p := rd.path(nsysdb.ReportNVTXSum); rd.h.RangeSum == nil && rd.nvtx != nil && !rd.nvtx.empty() && p != "" {
		rows, pushPop, err := readNVTXSum(p, true)
		if err != nil && !errors.Is(err, errEmptyReport) {
			return err
		}
		rd.rangeSum, rd.rangeSumPushPop, rd.rangeSumRead = rows, pushPop, true
		rd.opened(p)
	}
	if p := rd.path(nsysdb.ReportMemSizeSum); rd.h.CopySum == nil && rd.gpu != nil && !rd.gpu.empty() && p != "" {
		rows, err := readMemSum(p, true)
		if err != nil && !errors.Is(err, errEmptyReport) {
			return err
		}
		rd.sizeSum = rows
		rd.opened(p)
	}
	return nil
}

// checkSums compares each summary read with the per-record report it
// tallies: the calls of each API name, the copies of each kind. nsys makes
// both from one capture, so a count that differs means a report cut short
// at a row's end (a copy interrupted, a disk full) or reports of two
// captures in one folder.
func (rd *reader) checkSums() error {
	hint := "make the reports again from one capture with nsys stats --format csv"
	if rd.twins != nil {
		rd.apiSum = dropSumTwins(rd.apiSum, rd.callsSeen, rd.twins.twins, rd.twins.twinNs)
	}
	if err := rd.apiSumOnce(); err != nil {
		return err
	}
	if rd.callsSeen != nil {
		for _, s := range rd.apiSum {
			if n := rd.callsSeen[s.Name]; n != s.Calls {
				return &inputerr.Error{Path: rd.api.path, Problem: fmt.Sprintf("it holds %d %s calls where %s counts %d: one of the reports is cut short, or they come from two captures",
					n, s.Name, filepath.Base(rd.path(nsysdb.ReportAPISum)), s.Calls), Hint: hint}
			}
			if ns := rd.callNsSeen[s.Name]; rd.callTimes && ns != s.TotalNs {
				return &inputerr.Error{Path: rd.api.path, Problem: fmt.Sprintf("its %d %s calls last %d ns in all where %s totals %d ns: one of the reports was edited, or they come from two captures",
					rd.callsSeen[s.Name], s.Name, ns, filepath.Base(rd.path(nsysdb.ReportAPISum)), s.TotalNs), Hint: hint}
			}
		}
	}
	// A summary lists every name and kind of the trace it sums: one the
	// trace holds and the summary lacks is as cut short as a count that
	// differs.
	if rd.callsSeen != nil && len(rd.apiSum) > 0 {
		listed := map[string]bool{}
		for _, s := range rd.apiSum {
			listed[s.Name] = true
		}
		if name, n := unlisted(rd.callsSeen, listed); n > 0 {
			return &inputerr.Error{Path: rd.api.path, Problem: fmt.Sprintf("it holds %d %s calls where %s lists none: one of the reports is cut short, or they come from two captures",
				n, name, filepath.Base(rd.path(nsysdb.ReportAPISum))), Hint: hint}
		}
	}
	if rd.copiesSeen == nil {
		return nil
	}
	timeName, sizeName := filepath.Base(rd.path(nsysdb.ReportMemTimeSum)), filepath.Base(rd.path(nsysdb.ReportMemSizeSum))
	for _, sum := range []struct {
		rows []records.CopySum
		name string
	}{{rd.timeSum, timeName}, {rd.sizeSum, sizeName}} {
		if len(sum.rows) == 0 {
			continue
		}
		listed := map[vocab.CopyKind]bool{}
		for _, s := range sum.rows {
			listed[s.Kind] = true
		}
		if kind, n := unlisted(rd.copiesSeen, listed); n > 0 {
			return &inputerr.Error{Path: rd.gpu.path, Problem: fmt.Sprintf("it holds %d %s copies where %s lists none: one of the reports is cut short, or they come from two captures",
				n, kind, sum.name), Hint: hint}
		}
	}
	for _, s := range rd.timeSum {
		switch n, ns := rd.copiesSeen[s.Kind], rd.copyNsSeen[s.Kind]; {
		case s.TotalNs <= 0:
		case n != s.Count:
			return &inputerr.Error{Path: rd.gpu.path, Problem: fmt.Sprintf("it holds %d %s copies where %s counts %d: one of the reports is cut short, or they come from two captures",
				n, s.Kind, timeName, s.Count), Hint: hint}
		case ns != s.TotalNs:
			return &inputerr.Error{Path: rd.gpu.path, Problem: fmt.Sprintf("its %d %s copies last %d ns in all where %s totals %d ns: one of the reports was edited, or they come from two captures",
				n, s.Kind, ns, timeName, s.TotalNs), Hint: hint}
		}
	}
	for _, s := range rd.sizeSum {
		n, mb := rd.copiesSeen[s.Kind], rd.copyMBSeen[s.Kind]
		if n != s.Count {
			return &inputerr.Error{Path: rd.gpu.path, Problem: fmt.Sprintf("it holds %d %s copies where %s counts %d: one of the reports is cut short, or they come from two captures",
				n, s.Kind, sizeName, s.Count), Hint: hint}
		}
		// Each report rounds a size to its printed digits (a thousandth
		// of an MB): the totals may differ by that much a copy.
		// A trace without sizes has its refusal of its own.
		if rd.copySizes && math.Abs(mb-s.TotalMB) > sizeSlackMB*float64(n+1) {
			return &inputerr.Error{Path: rd.gpu.path, Problem: fmt.Sprintf("its %d %s copies move %.3f MB in all where %s totals %.3f MB: one of the reports was edited, or they come from two captures",
				n, s.Kind, mb, sizeName, s.TotalMB), Hint: hint}
		}
	}
	return nil
}

// apiSumOnce refuses cuda_api_sum where it lists an API on two rows that
// the trace's backtrace rows do not tell apart (dropSumTwins keeps one of
// the two where they do): nsys lists an API twice only in a capture with
// call stacks, once for the calls and once for their stacks' records, so
// two rows of one name are otherwise a row written twice, or two captures'
// rows, and which holds is unclear. The summary has a row per API name.
func (rd *reader) apiSumOnce() error {
	if len(rd.apiSum) < 2 {
		return nil
	}
	lines := make(map[string]int, len(rd.apiSum))
	for _, s := range rd.apiSum {
		first, dup := lines[s.Name]
		if !dup {
			lines[s.Name] = s.Line
			continue
		}
		why := "and cuda_api_trace's calls account for neither row alone"
		if rd.callsSeen == nil {
			why = "and no cuda_api_trace was read to tell the calls' row from their stacks' records'"
		}
		return &inputerr.Error{Path: rd.path(nsysdb.ReportAPISum), Where: fmt.Sprintf("lines %d and %d", first, s.Line),
			Problem: fmt.Sprintf("%s is listed twice, %s (nsys lists an API twice only in a capture with call stacks, once for the calls and once for the records of their stacks): which row holds is unclear",
				strconv.Quote(s.Name), why),
			Hint: "the report was edited, or two reports were joined; make the reports again from one capture with nsys stats --format csv"}
	}
	return nil
}

// rangeTally is what nvtx_pushpop_trace held of one range name: how many
// ranges, their durations' total, and whether one was never closed (whose
// duration nvtx_sum may count otherwise).
type rangeTally struct {
	n, ns int64
	open  bool
}

// rangeTallies makes a tally for each push/pop row of nvtx_sum, where the
// folder has one and the trace is read: the memory is the summary's,
// whatever the trace holds.
func (rd *reader) rangeTallies() {
	if rd.nvtx == nil || rd.nvtx.empty() {
		return
	}
	for i, s := range rd.rangeSum {
		if i < len(rd.rangeSumPushPop) && rd.rangeSumPushPop[i] {
			if rd.rangesSeen == nil {
				rd.rangesSeen = map[[2]string]*rangeTally{}
			}
			rd.rangesSeen[[2]string{s.Domain, s.Name}] = &rangeTally{}
		}
	}
}

// tallyRange counts one range of nvtx_pushpop_trace under its name, for
// checkRangeSum: a name the summary lists, or one more unlisted.
func (rd *reader) tallyRange(r *records.Range) {
	if rd.rangesSeen == nil {
		return
	}
	t := rd.rangesSeen[[2]string{r.Domain, r.Name}]
	if t == nil {
		if rd.unlisted++; rd.unlisted == 1 {
			rd.firstUnlisted = r.Name
		}
		return
	}
	t.n++
	if r.Open {
		t.open = true
	} else {
		t.ns += r.End - r.Start
	}
}

// checkRangeSum compares each push/pop row of nvtx_sum with the ranges of
// its name in nvtx_pushpop_trace: their number and total time (a name with
// a range never closed is compared by number alone).
func (rd *reader) checkRangeSum() error {
	hint := "make the reports again from one capture with nsys stats --format csv"
	if rd.rangesSeen == nil {
		return nil
	}
	sumName := filepath.Base(rd.path(nsysdb.ReportNVTXSum))
	if rd.unlisted > 0 {
		return &inputerr.Error{Path: rd.nvtx.path, Problem: fmt.Sprintf("it holds %d NVTX ranges of names %s lists no push/pop range of (the first: %q): one of the reports is cut short, or they come from two captures",
			rd.unlisted, sumName, rd.firstUnlisted), Hint: hint}
	}
	for i, s := range rd.rangeSum {
		if i >= len(rd.rangeSumPushPop) || !rd.rangeSumPushPop[i] {
			continue
		}
		t := rd.rangesSeen[[2]string{s.Domain, s.Name}]
		switch {
		case t.n != s.Instances:
			return &inputerr.Error{Path: rd.nvtx.path, Problem: fmt.Sprintf("it holds %d NVTX ranges named %q where %s counts %d: one of the reports is cut short, or they come from two captures",
				t.n, s.Name, sumName, s.Instances), Hint: hint}
		case !t.open && t.ns != s.TotalNs:
			return &inputerr.Error{Path: rd.nvtx.path, Problem: fmt.Sprintf("its %d NVTX ranges named %q last %d ns in all where %s totals %d ns: one of the reports was edited, or they come from two captures",
				t.n, s.Name, t.ns, sumName, s.TotalNs), Hint: hint}
		}
	}
	return nil
}

// sizeSlackMB is how far a total of sizes printed in MB may drift from
// another report's, a copy: half of the thousandth each prints, twice.
const sizeSlackMB = 0.001

const makeHint = " --format csv --output BASE REPORT.nsys-rep"

func (rd *reader) openAPITrace() error {
	p := rd.path(nsysdb.ReportAPITrace)
	if p == "" {
		rd.lack(records.FactAPITrace, "no *_cuda_api_trace.csv in "+rd.dir+"; make it with nsys stats --report cuda_api_trace"+makeHint)
		rd.lack(records.FactProcessScope, "no *_cuda_api_trace.csv in "+rd.dir+", and only the trace gives process and thread ids")
		return nil
	}
	rf, err := openRecords(p, nsysdb.ReportAPITrace, nsysdb.APITraceColumns)
	if err != nil {
		return err
	}
	rd.api = rf
	rd.opened(p)
	rd.info.Sources.API = filepath.Base(p)
	switch {
	case rf.empty():
		rd.lack(records.FactAPITrace, p+" is empty: nsys found no CUDA API calls to report")
		rd.lack(records.FactProcessScope, p+" is empty")
	case !hasColumns(rf, "pid", "tid"):
		rd.lack(records.FactProcessScope, p+" has no Pid/Tid columns")
	}
	return nil
}

// hasColumns reports whether a report's header has every one of fields.
func hasColumns(rf *recordFile, fields ...string) bool {
	for _, f := range fields {
		if _, ok := rf.head.Index[f]; !ok {
			return false
		}
	}
	return true
}

// readSummary reads the summary report of the key with readFile, which
// returns how many data rows it held; empty notes what an empty report
// leaves unknown. It reports whether the folder has the report.
func (rd *reader) readSummary(key string, readFile func(p string) (int, error), empty func(p string)) (bool, error) {
	p := rd.path(key)
	if p == "" {
		return false, nil
	}
	n, err := readFile(p)
	if errors.Is(err, errEmptyReport) {
		empty(p)
	} else if err != nil {
		return true, err
	}
	rd.opened(p)
	if n > 0 {
		rd.held++
	}
	return true, nil
}

func (rd *reader) readAPISum() error {
	found, err := rd.readSummary(nsysdb.ReportAPISum, func(p string) (n int, err error) {
		rd.apiSum, err = readAPISum(p)
		return len(rd.apiSum), err
	}, func(p string) {
		rd.lack(records.FactAPISummary, p+" is empty: nsys found no CUDA API calls to report")
	})
	if err == nil && !found {
		rd.lack(records.FactAPISummary, "no *_cuda_api_sum.csv in "+rd.dir+"; make it with nsys stats --report cuda_api_sum"+makeHint)
	}
	return err
}

func (rd *reader) readMemSums() error {
	var timeRows, sizeRows []records.CopySum
	empty := func(p string) {
		rd.lack(records.FactMemSummary, p+" is empty: nsys found no GPU memory operations to report")
	}
	haveTime, err := rd.readSummary(nsysdb.ReportMemTimeSum, func(p string) (n int, err error) {
		timeRows, err = readMemSum(p, false)
		return len(timeRows), err
	}, empty)
	if err != nil {
		return err
	}
	haveSize, err := rd.readSummary(nsysdb.ReportMemSizeSum, func(p string) (n int, err error) {
		sizeRows, err = readMemSum(p, true)
		return len(sizeRows), err
	}, empty)
	if err != nil {
		return err
	}
	rd.copySum = csvMergeMemSummary(timeRows, sizeRows)
	rd.timeSum, rd.sizeSum = timeRows, sizeRows
	switch {
	case !haveTime && !haveSize:
		rd.lack(records.FactMemSummary, "no *_cuda_gpu_mem_time_sum.csv or *_cuda_gpu_mem_size_sum.csv in "+rd.dir+
			"; make them with nsys stats --report cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum"+makeHint)
	case !haveTime:
		rd.lack(records.FactMemSummary, "no *_cuda_gpu_mem_time_sum.csv in "+rd.dir+
			", so the copy totals have bytes but no times; make it with nsys stats --report cuda_gpu_mem_time_sum --format csv")
	case !haveSize:
		rd.lack(records.FactMemSummary, "no *_cuda_gpu_mem_size_sum.csv in "+rd.dir+
			", so the copy totals have times but no bytes; make it with nsys stats --report cuda_gpu_mem_size_sum --format csv")
	}
	return nil
}

func (rd *reader) readNVTXSum() error {
	found, err := rd.readSummary(nsysdb.ReportNVTXSum, func(p string) (n int, err error) {
		rd.rangeSum, rd.rangeSumPushPop, err = readNVTXSum(p, false)
		return len(rd.rangeSum), err
	}, func(p string) {
		rd.lack(records.FactNVTXSummary, p+" is empty: the capture holds no NVTX ranges (traced without -t nvtx?)")
	})
	if err == nil && !found {
		rd.lack(records.FactNVTXSummary, "no *_nvtx_sum.csv in "+rd.dir+"; make it with nsys stats --report nvtx_sum"+makeHint)
	}
	return err
}

// lackGPU records what a folder without GPU records leaves unknown, for
// the kinds of operation wanted.
func (rd *reader) lackGPU(why string) {
	if rd.h.Op == nil {
		return
	}
	if rd.opts.WantsOp(records.OpCopy) {
		rd.lack(records.FactMemcpy, why)
		rd.lack(records.FactMemcpyBytes, why)
		rd.lack(records.FactMemoryKinds, why)
		rd.lack(records.FactCorrelation, why)
	}
	if rd.opts.WantsOp(records.OpKernel) {
		rd.lack(records.FactKernels, why)
	}
}

func (rd *reader) openGPUTrace() error {
	p := rd.path(nsysdb.ReportGPUTrace)
	if p == "" {
		rd.lackGPU("no *_cuda_gpu_trace.csv in the folder, so no per-copy or per-kernel GPU records; make it with nsys stats --report cuda_gpu_trace" + makeHint)
		return nil
	}
	rf, err := openRecords(p, nsysdb.ReportGPUTrace, nsysdb.GPUTraceColumns)
	if err != nil {
		return err
	}
	rd.gpu = rf
	rd.opened(p)
	if rf.empty() {
		rd.lackGPU(p + " is empty: nsys found no GPU activity to report")
		return nil
	}
	rd.info.Sources.Memcpy, rd.info.Sources.Kernel = filepath.Base(p), filepath.Base(p)
	if rd.h.Meta != nil || rd.h.Op != nil {
		if err := rd.readGPUNames(); err != nil {
			return err
		}
	}
	if rd.h.Op != nil && rd.opts.WantsOp(records.OpCopy) {
		if !hasColumns(rf, "bytes") {
			rd.lack(records.FactMemcpyBytes, p+" has no Bytes column")
		}
		if !hasColumns(rf, "srckind", "dstkind") {
			rd.lack(records.FactMemoryKinds, p+" has no SrcMemKd/DstMemKd columns")
		}
	}
	return nil
}

// readGPUNames names the GPU each row of the GPU trace ran on from its
// Device cells ("NVIDIA H200 (0)": the GPU's name, then its device id), in
// a pass of its own before the records stream, so that each record is
// checked against the bounds of the GPUs the report names; the names of
// several GPUs are joined, in order, as an export's are. A device id
// named as two GPUs is refused; a report without the column, or that
// numbers its devices without naming them, leaves the GPU unknown (a
// FactGPU gap).
func (rd *reader) readGPUNames() error {
	rf := rd.gpu
	col, ok := rf.head.Index["device"]
	if !ok {
		rd.lack(records.FactGPU, fmt.Sprintf("%s has no Device column, so the GPU is unknown: %s", rf.path, nsysdb.UnknownGPUBounds))
		return nil
	}
	type named struct {
		name string
		row  int
	}
	byID := map[string]named{}
	var last []byte // the cell of the row before: most rows repeat it
	err := rf.rows(rd.ctx, func(row int, rec [][]byte) error {
		cell := bytes.TrimSpace(rec[col])
		if len(cell) == 0 || bytes.Equal(cell, last) {
			return nil
		}
		last = append(last[:0], cell...)
		name, id := deviceCell(string(cell))
		if first, ok := byID[id]; ok && first.name != name {
			return csvRowError(rf.path, row, rf.head.Names[col], string(cell),
				fmt.Sprintf("data row %d names device %s %q, this row another GPU", first.row, id, first.name),
				"the report was edited, or joins two captures' rows; make it again with nsys stats --format csv")
		} else if !ok {
			byID[id] = named{name, row}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := rf.rewind(); err != nil {
		return err
	}
	var names []string
	for _, n := range byID {
		if n.name == "" {
			rd.lack(records.FactGPU, fmt.Sprintf("%s numbers the devices without naming their GPUs, so the GPU is unknown: %s", rf.path, nsysdb.UnknownGPUBounds))
			return nil
		}
		if !slices.Contains(names, n.name) {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		rd.lack(records.FactGPU, fmt.Sprintf("%s names no device in its Device cells, so the GPU is unknown: %s", rf.path, nsysdb.UnknownGPUBounds))
		return nil
	}
	slices.Sort(names)
	rd.gpuName = strings.Join(names, ", ")
	return nil
}

// emitMeta hands on what the reports say of the capture: the GPU the GPU
// trace names (readGPUNames), before any record.
func (rd *reader) emitMeta() error {
	if rd.h.Meta == nil || rd.gpuName == "" {
		return nil
	}
	return rd.h.Meta(&records.Meta{GPU: rd.gpuName})
}

func (rd *reader) openNVTXTrace() error {
	p := rd.path(nsysdb.ReportNVTXTrace)
	if p == "" {
		rd.lack(records.FactNVTX, "no *_nvtx_pushpop_trace.csv in the folder; nvtx_sum has per-name totals, not range instances with start and end times"+
			"; make it with nsys stats --report nvtx_pushpop_trace"+makeHint)
		return nil
	}
	rf, err := openRecords(p, nsysdb.ReportNVTXTrace, nsysdb.NVTXTraceColumns)
	if err != nil {
		return err
	}
	rd.nvtx = rf
	rd.opened(p)
	switch {
	case rf.empty():
		rd.lack(records.FactNVTX, p+" is empty: the capture holds no NVTX ranges (traced without -t nvtx?)")
	case !hasColumns(rf, "pid", "tid"):
		rd.lack(records.FactNVTX, p+" has no PID/TID columns, so no range can be placed on a thread")
	default:
		rd.info.Sources.NVTX = filepath.Base(p)
	}
	return nil
}

// emitGaps hands on what the folder cannot give.
func (rd *reader) emitGaps() error {
	if rd.h.Gap == nil {
		return nil
	}
	for _, g := range rd.gaps {
		if err := rd.h.Gap(g); err != nil {
			return inputerr.Attribute(err, rd.dir, "")
		}
	}
	return nil
}

// sharedRangeNames are the names nvtx_sum lists push/pop ranges of in
// more than one NVTX domain; none where the folder has no nvtx_sum.
func (rd *reader) sharedRangeNames() map[string]bool {
	first := map[string]string{}
	shared := map[string]bool{}
	for i, s := range rd.rangeSum {
		if i >= len(rd.rangeSumPushPop) || !rd.rangeSumPushPop[i] {
			continue
		}
		if d, ok := first[s.Name]; !ok {
			first[s.Name] = s.Domain
		} else if d != s.Domain {
			shared[s.Name] = true
		}
	}
	return shared
}

// emitRanges hands on the NVTX ranges, where they can be placed on a
// thread.
func (rd *reader) emitRanges() error {
	rf := rd.nvtx
	if rf == nil || rf.empty() {
		return nil
	}
	l := newNVTXTraceLayout(rf.path, rf.head)
	shared := rd.sharedRangeNames()
	any := false
	var rg records.Range // one record, reused for every row
	err := rf.rows(rd.ctx, func(row int, rec [][]byte) error {
		var err error
		if rg, err = l.read(row, rec); err != nil {
			return err
		}
		any = true
		rd.tallyRange(&rg)
		if rg.Domain != "" && shared[rg.Name] {
			// Another domain's range of the name is another region, as
			// the SQLite export's reader names it.
			rg.Name += " (NVTX domain " + rg.Domain + ")"
		}
		if rg.Open {
			rd.rangeSpan.add(rg.Start, rg.Start)
		} else {
			rd.rangeSpan.add(rg.Start, rg.End)
		}
		if !l.scoped {
			return nil
		}
		return rd.h.Range(&rg)
	})
	if any {
		rd.held++
	}
	return err
}

// emitCalls hands on the API calls wanted, joins the kept copies to theirs
// and counts every call of the report.
func (rd *reader) emitCalls() error {
	rf := rd.api
	if rf == nil || rf.empty() {
		return nil
	}
	rd.joining = rd.opts.JoinCalls && rd.h.Op != nil && rd.opts.WantsOp(records.OpCopy)
	keep := func(*records.Call) bool { return true }
	if rd.opts.ProgramThread && rd.h.Call != nil {
		threads, err := countThreads(rd.ctx, rf, rd.opts)
		if err != nil {
			return err
		}
		if len(threads) > 1 {
			me := threads[0]
			rd.info.OtherThreads = threads[1:]
			keep = func(c *records.Call) bool { return c.PID == me.PID && c.TID == me.TID }
		}
		if len(threads) > 0 && rd.h.CallsAhead != nil {
			if err := rd.h.CallsAhead(threads[0].Calls); err != nil {
				return err
			}
		}
	}
	l := newAPITraceLayout(rf.path, rf.head)
	counting := rd.h.Counts != nil
	all := records.Selection{}
	rows := 0
	opts := rd.opts
	if counting || rd.opts.JoinCalls {
		opts = all // every call counts, and any may have issued a copy
	}
	rd.callsSeen, rd.callNsSeen, rd.callTimes = map[string]int64{}, map[string]int64{}, len(opts.APINames) == 0
	rd.twins = newTwinRows()
	hand := func(call *records.Call) error {
		rd.callsSeen[call.Name]++
		rd.callNsSeen[call.Name] += call.End - call.Start
		switch {
		case rd.onePID == 0 && !rd.manyPIDs:
			rd.onePID = call.PID
		case call.PID != rd.onePID:
			rd.onePID, rd.manyPIDs = 0, true
		}
		if !opts.WantsAPI(call.Name) {
			return nil
		}
		if counting {
			rd.count(call)
		}
		if rd.joining {
			switch {
			case nsysdb.IsCopyAPI(call.Name):
				rd.index.Add(call)
			case nsysdb.IsGraphLaunch(call.Name):
				rd.graphs.Add(call)
			}
		}
		if rd.h.Call != nil && keep(call) && rd.opts.WantsAPI(call.Name) {
			return rd.h.Call(call)
		}
		return nil
	}
	err := rf.rows(rd.ctx, func(n int, rec [][]byte) error {
		rows = n
		call, _, err := l.read(n, rec, opts)
		if err != nil {
			return err
		}
		rd.traceSpan.add(call.Start, call.End)
		if prev, ok := rd.twins.push(call); ok {
			return hand(&prev)
		}
		return nil
	})
	if err == nil {
		// The calls held back to tell nsys's backtrace rows, handed on
		// once the rows are read: an error is of this report too.
		for _, c := range rd.twins.flush() {
			if err = hand(&c); err != nil {
				err = inputerr.Attribute(err, rf.path, "")
				break
			}
		}
	}
	if rows > 0 {
		rd.held++
	}
	return err
}

// unlisted returns the first key, in order, that seen counts and listed
// lacks, and its count (0 for none).
func unlisted[K cmp.Ordered](seen map[K]int64, listed map[K]bool) (K, int64) {
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if seen[k] > 0 && !listed[k] {
			return k, seen[k]
		}
	}
	var none K
	return none, 0
}

// count adds a call to the trace's counts.
func (rd *reader) count(c *records.Call) {
	if rd.counts.Calls == 0 || c.Start < rd.counts.FirstCall {
		rd.counts.FirstCall = c.Start
	}
	rd.counts.LastCall = max(rd.counts.LastCall, c.End)
	rd.counts.Calls++
}

// countThreads counts the calls that opts selects per thread of a
// cuda_api_trace report, in the order of records.ThreadCount.Before,
// decoding only the name, Pid and Tid cells, and rewinds the report for
// the pass that reads the calls. A report this pass cannot read is read
// whole by that pass, for the error a plain read gives.
func countThreads(ctx context.Context, rf *recordFile, opts records.Selection) ([]records.ThreadCount, error) {
	tc := threadCounter{at: map[string]int{}, lastAt: -1, name: rf.head.Index["name"], pid: -1, tid: -1}
	if i, ok := rf.head.Index["pid"]; ok {
		tc.pid = i
	}
	if i, ok := rf.head.Index["tid"]; ok {
		tc.tid = i
	}
	err := rf.rows(ctx, func(_ int, rec [][]byte) error {
		name := csvStripVersionBytes(rec[tc.name])
		if !opts.WantsAPI(string(name)) {
			return nil
		}
		return tc.add(name, rec)
	})
	if rerr := rf.rewind(); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, nil
	}
	return tc.threads(), nil
}

// join gives a copy the copy call that issued it: the first call of the
// trace with its correlation id, of its process where both tell one; a
// graph's copy traced per node its graph's launch instead (the report does
// not number the graph's nodes: records.UnknownNode).
func (rd *reader) join(op *records.Op) {
	op.Call = callOf(&rd.index, op)
	if op.Call != nil || rd.graphs.Len() == 0 {
		return
	}
	if op.Call = callOf(&rd.graphs, op); op.Call != nil {
		op.GraphNode = records.UnknownNode
	}
}

// callOf returns the call of idx with the copy's correlation id, of the
// copy's process (or of any, where the copy tells none, or of a report
// without processes), or nil.
func callOf(idx *records.CallIndex, op *records.Op) *records.Call {
	if op.PID == 0 {
		return idx.First(op.Corr)
	}
	if c := idx.Lookup(op.PID, op.Corr); c != nil {
		return c
	}
	return idx.Lookup(0, op.Corr)
}

// gpuRows reads cuda_gpu_trace once, handing fn each operation wanted and
// counting the memsets and the rows of copies and kernels.
func (rd *reader) gpuRows(fn func(*records.Op) error) error {
	rf := rd.gpu
	if rf == nil || rf.empty() {
		return nil
	}
	l, err := newGPUTraceLayout(rf.path, rf.head)
	if err != nil {
		return err
	}
	any := false
	var op records.Op // one record, reused for every row
	rd.copiesSeen = map[vocab.CopyKind]int64{}
	rd.copyNsSeen, rd.copyMBSeen, rd.copySizes = map[vocab.CopyKind]int64{}, map[vocab.CopyKind]float64{}, l.hasBytes
	err = rf.rows(rd.ctx, func(row int, rec [][]byte) error {
		if err := l.read(row, rec); err != nil {
			return err
		}
		g := &l.rec
		rd.traceSpan.add(g.Start, g.End)
		op = records.Op{Start: g.Start, End: g.End, Corr: g.Corr, PID: g.PID, Device: g.Device, Stream: g.Stream, Row: row}
		if op.PID == 0 {
			op.PID = rd.onePID // the report names no process: the calls' one
		}
		switch {
		case g.Memset:
			rd.counts.Memsets++
			op.Kind = records.OpMemset
		case g.Copy:
			any = true
			rd.copiesSeen[g.Kind]++
			rd.copyNsSeen[g.Kind] += g.End - g.Start
			rd.copyMBSeen[g.Kind] += float64(g.Bytes) / 1e6
			op.Kind, op.Copy, op.Src, op.Dst, op.Bytes = records.OpCopy, g.Kind, g.Src, g.Dst, g.Bytes
			if g.Migration {
				op.Migration = migrationUnknown
			}
		default:
			any = true
			op.Kind, op.Name = records.OpKernel, baseKernelName(g.Name)
		}
		if rd.h.Op == nil || !rd.opts.WantsOp(op.Kind) {
			return nil
		}
		return fn(&op)
	})
	if any {
		rd.held++
	}
	return err
}

// emitOps hands on the GPU operations wanted in the report's order; with
// records.Selection.JoinCalls each copy with the copy call it joins
// (join), found among the calls read before.
func (rd *reader) emitOps() error {
	if !rd.joining {
		return rd.gpuRows(rd.h.Op)
	}
	return rd.gpuRows(func(op *records.Op) error {
		if op.Kind == records.OpCopy {
			rd.join(op)
		}
		return rd.h.Op(op)
	})
}

// emitSums hands on the summaries' rows.
func (rd *reader) emitSums() error {
	if err := rd.checkSums(); err != nil {
		return err
	}
	for i := range rd.apiSum {
		if rd.apiSumRead {
			break // read for checkSums only
		}
		if err := rd.h.APISum(&rd.apiSum[i]); err != nil {
			return inputerr.Attribute(err, rd.path(nsysdb.ReportAPISum), "")
		}
	}
	for i := range rd.copySum {
		if rd.copySumRead {
			break
		}
		if err := rd.h.CopySum(&rd.copySum[i]); err != nil {
			return inputerr.Attribute(err, rd.memSumPath(), "")
		}
	}
	for i := range rd.rangeSum {
		if rd.rangeSumRead {
			break
		}
		if err := rd.h.RangeSum(&rd.rangeSum[i]); err != nil {
			return inputerr.Attribute(err, rd.path(nsysdb.ReportNVTXSum), "")
		}
	}
	return nil
}

// memSumPath names the copy summaries a row of them came from: the time
// summary, else the size summary.
func (rd *reader) memSumPath() string {
	if p := rd.path(nsysdb.ReportMemTimeSum); p != "" {
		return p
	}
	return rd.path(nsysdb.ReportMemSizeSum)
}

// emitCounts hands on the trace's counts; the memsets are counted once
// cuda_gpu_trace was read.
func (rd *reader) emitCounts() error {
	if rd.h.Counts == nil {
		return nil
	}
	if rd.h.Op == nil {
		// Nothing read the GPU trace: read it for its memsets.
		if err := rd.gpuRows(func(*records.Op) error { return nil }); err != nil {
			return err
		}
	}
	c := rd.counts
	return inputerr.Attribute(rd.h.Counts(&c), rd.dir, "")
}
