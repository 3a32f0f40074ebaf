package capture

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// The per-record CSV reports: cuda_gpu_trace (one row per GPU copy, memset
// or kernel, with the API call's CorrId) and nvtx_pushpop_trace (one row per
// push/pop range instance). nsys 2022 names them gputrace and nvtxpptrace.

type gpuTraceRow struct {
	Start    csvNum `csv:"start"`
	Duration csvNum `csv:"duration"`
	Corr     csvNum `csv:"corrid"`
	Bytes    string `csv:"bytes"`
	Src      string `csv:"srckind"`
	Dst      string `csv:"dstkind"`
	Device   string `csv:"device"`
	Stream   string `csv:"stream"`
	Name     string `csv:"name"`
}

// gpuTrace is what a cuda_gpu_trace report holds.
type gpuTrace struct {
	memcpys  []Memcpy
	kernels  []Kernel
	hasKinds bool // the report has memory-kind columns
	hasBytes bool // the report has a bytes column
}

// readGPUTrace reads a cuda_gpu_trace report: copies (with bytes and the
// memory kinds of both sides) and kernels, each with its correlation id.
// Memsets are skipped. Bytes are given in MB rounded to the report's
// decimals; see csvBytes.
func readGPUTrace(path string) (*gpuTrace, error) {
	var rows []gpuTraceRow
	rh, _, err := csvReadSummary(path, nsysdb.ReportGPUTrace, nsysdb.GPUTraceColumns, &rows)
	if err != nil {
		return nil, err
	}
	g := &gpuTrace{}
	_, g.hasKinds = rh.index["srckind"]
	if _, ok := rh.index["dstkind"]; !ok {
		g.hasKinds = false
	}
	var bytesScale float64
	if _, g.hasBytes = rh.index["bytes"]; g.hasBytes {
		var ok bool
		if bytesScale, ok = csvSizeScale(rh.unit["bytes"]); !ok {
			return nil, &InputError{Path: path, Where: "column " + strconv.Quote(rh.names[rh.index["bytes"]]),
				Problem: "unknown size unit " + strconv.Quote(rh.unit["bytes"]), Hint: "re-export with nsys stats --format csv"}
		}
	}
	for i, r := range rows {
		row := i + 1
		start, err := csvNsOf(path, rh, row, "start", r.Start)
		if err != nil {
			return nil, err
		}
		dur, err := csvNsOf(path, rh, row, "duration", r.Duration)
		if err != nil {
			return nil, err
		}
		corr, err := csvCountOf(path, rh, row, "corrid", r.Corr)
		if err != nil {
			return nil, err
		}
		dev, _ := strconv.ParseInt(deviceIndex(r.Device), 10, 64)
		strm, _ := strconv.ParseInt(strings.TrimSpace(r.Stream), 10, 64)
		name := strings.TrimSpace(r.Name)
		isCopy, isMemset := nsysdb.ReportRowKind(name)
		switch {
		case isMemset:
			continue
		case isCopy:
			kind, _ := nsysdb.ReportCopyKindOf(name)
			m := Memcpy{Kind: kind, Start: start, End: start + dur, CorrelationID: corr, Stream: strm, Device: dev,
				Src: memKindOf(r.Src), Dst: memKindOf(r.Dst)}
			if g.hasBytes {
				b, err := csvBytes(r.Bytes, bytesScale)
				if err != nil {
					return nil, csvRowError(path, row, rh.names[rh.index["bytes"]], r.Bytes, err.Error(), "re-export the report with nsys stats --format csv")
				}
				m.Bytes = b
			}
			g.memcpys = append(g.memcpys, m)
		default:
			g.kernels = append(g.kernels, Kernel{Name: baseKernelName(name), Start: start, End: start + dur,
				CorrelationID: corr, Stream: strm})
		}
	}
	return g, nil
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
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		return s[i+1 : len(s)-1]
	}
	return s
}

// memKindOf maps a report's memory kind ("Pageable", "Device Static") to
// MemKind, through the enum names nsysdb knows.
func memKindOf(s string) MemKind {
	return nsysdb.MemKindOf(strings.ReplaceAll(strings.TrimSpace(s), " ", "_"))
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

type nvtxTraceRow struct {
	Start csvNum `csv:"start"`
	End   string `csv:"end"`
	Name  string `csv:"name"`
	PID   string `csv:"pid"`
	TID   string `csv:"tid"`
}

// readNVTXTrace reads an nvtx_pushpop_trace report: one range per row, its
// name with the "domain:" prefix split off, an empty end meaning a range
// never popped.
func readNVTXTrace(path string) (ranges []Range, scoped bool, err error) {
	var rows []nvtxTraceRow
	rh, _, err := csvReadSummary(path, nsysdb.ReportNVTXTrace, nsysdb.NVTXTraceColumns, &rows)
	if err != nil {
		return nil, false, err
	}
	_, hasPID := rh.index["pid"]
	_, hasTID := rh.index["tid"]
	for i, r := range rows {
		row := i + 1
		start, err := csvNsOf(path, rh, row, "start", r.Start)
		if err != nil {
			return nil, false, err
		}
		rg := Range{Start: start}
		rg.Domain, rg.Name = csvSplitRange(r.Name)
		if e := strings.TrimSpace(r.End); e == "" {
			rg.Open = true
		} else if rg.End, err = csvParseNs(e, rh.scale["end"]); err != nil || rg.End < start {
			return nil, false, csvRowError(path, row, rh.names[rh.index["end"]], r.End, "end must be a time not before the start", "re-export the report with nsys stats --format csv")
		}
		for _, f := range []struct {
			cell string
			into *int64
			col  string
		}{{r.PID, &rg.PID, "pid"}, {r.TID, &rg.TID, "tid"}} {
			if c := strings.TrimSpace(f.cell); c != "" {
				v, err := csvParseInt(c)
				if err != nil {
					return nil, false, csvRowError(path, row, rh.names[rh.index[f.col]], f.cell, "not an integer id", "re-export the report with nsys stats --format csv")
				}
				*f.into = v
			}
		}
		ranges = append(ranges, rg)
	}
	return ranges, hasPID && hasTID, nil
}

// traceReports reads the folder's per-record reports (readTraceReports)
// and names them as the capture's copy, kernel and NVTX sources.
func (l *csvDirLoad) traceReports() error {
	if err := readTraceReports(l.c, l.dir, l.found, &l.read); err != nil {
		return err
	}
	if files, ok := l.found[nsysdb.ReportGPUTrace]; ok && l.c.Has(FactMemcpy) {
		l.c.Sources.Memcpy, l.c.Sources.Kernel = files[0], files[0]
	}
	if files, ok := l.found[nsysdb.ReportNVTXTrace]; ok && l.c.Has(FactNVTX) {
		l.c.Sources.NVTX = files[0]
	}
	return nil
}

// readTraceReports reads the folder's cuda_gpu_trace and nvtx_pushpop_trace
// reports into c, or records what their absence leaves unknown. read counts
// the reports that held data rows.
func readTraceReports(c *Capture, dir string, found map[string][]string, read *int) error {
	const gpuHint = "; make it with nsys stats --report cuda_gpu_trace --format csv --output BASE REPORT.nsys-rep"
	lackGPU := func(why string) {
		c.Lack(FactMemcpy, why)
		c.Lack(FactMemcpyBytes, why)
		c.Lack(FactMemoryKinds, why)
		c.Lack(FactCorrelation, why)
		c.Lack(FactKernels, why)
	}
	if files, ok := found[nsysdb.ReportGPUTrace]; ok {
		p := filepath.Join(dir, files[0])
		g, err := readGPUTrace(p)
		switch {
		case errors.Is(err, errEmptyReport):
			lackGPU(p + " is empty: nsys found no GPU activity to report")
		case err != nil:
			return err
		default:
			c.Memcpys, c.Kernels = g.memcpys, g.kernels
			if len(g.memcpys)+len(g.kernels) > 0 {
				*read++
			}
			if !g.hasBytes {
				c.Lack(FactMemcpyBytes, p+" has no Bytes column")
			}
			if !g.hasKinds {
				c.Lack(FactMemoryKinds, p+" has no SrcMemKd/DstMemKd columns")
			}
		}
		c.Files = append(c.Files, p)
	} else {
		lackGPU("no *_cuda_gpu_trace.csv in the folder, so no per-copy or per-kernel GPU records" + gpuHint)
	}
	if files, ok := found[nsysdb.ReportNVTXTrace]; ok {
		p := filepath.Join(dir, files[0])
		ranges, scoped, err := readNVTXTrace(p)
		switch {
		case errors.Is(err, errEmptyReport):
			c.Lack(FactNVTX, p+" is empty: the capture holds no NVTX ranges (traced without -t nvtx?)")
		case err != nil:
			return err
		default:
			c.Ranges = ranges
			if len(ranges) > 0 {
				*read++
			}
			if !scoped {
				c.Lack(FactNVTX, p+" has no PID/TID columns, so no range can be placed on a thread")
				c.Ranges = nil
			}
		}
		c.Files = append(c.Files, p)
	} else {
		c.Lack(FactNVTX, "no *_nvtx_pushpop_trace.csv in the folder; nvtx_sum has per-name totals, not range instances with start and end times"+
			"; make it with nsys stats --report nvtx_pushpop_trace --format csv --output BASE REPORT.nsys-rep")
	}
	return nil
}
