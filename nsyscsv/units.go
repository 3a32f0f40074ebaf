package nsyscsv

import (
	"fmt"
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/internal/csvheader"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// rangeUnitFactor is how far outside the traced calls' and GPU
// operations' span an NVTX range must reach, as a factor of their times,
// before a header unit that disagrees with the other reports' is taken
// for a unit edited without its values: one unit step is a factor of
// 1000, a CPU-only tail after the last CUDA call rarely ten times the
// run before it.
const rangeUnitFactor = 10

// timeSpan is the earliest start and the latest end of the records seen.
type timeSpan struct {
	first, last int64
	seen        bool
}

// add widens the span to [start, end].
func (s *timeSpan) add(start, end int64) {
	if !s.seen || start < s.first {
		s.first = start
	}
	if !s.seen || end > s.last {
		s.last = end
	}
	s.seen = true
}

// checkRangeUnits refuses an nvtx_pushpop_trace whose time unit differs
// from that of cuda_api_trace or cuda_gpu_trace and whose ranges, read in
// their own unit, lie outside the span of the traced calls and operations
// by more than rangeUnitFactor: one nsys stats run writes every report in
// one unit, so the header was edited or the reports come from runs whose
// units were mixed up. A differing unit whose ranges fall within the
// trace (a consistent conversion) is read as written.
func (rd *reader) checkRangeUnits() error {
	if rd.nvtx == nil || rd.nvtx.empty() || !rd.rangeSpan.seen || !rd.traceSpan.seen {
		return nil
	}
	unit := rd.nvtx.head.Unit["start"]
	scale, _ := csvheader.TimeScale(unit)
	var sibling, siblingUnit string
	for _, rf := range []*recordFile{rd.api, rd.gpu} {
		if rf == nil || rf.empty() {
			continue
		}
		u := rf.head.Unit["start"]
		if s, _ := csvheader.TimeScale(u); s != scale {
			sibling, siblingUnit = filepath.Base(rf.path), u
			break
		}
	}
	if sibling == "" {
		return nil
	}
	r, t := rd.rangeSpan, rd.traceSpan
	var where string
	switch {
	case r.last > t.last && r.last/rangeUnitFactor > t.last:
		where = fmt.Sprintf("its ranges run to %.4g s, more than %dx past the traced records' end at %.4g s",
			float64(r.last)/1e9, rangeUnitFactor, float64(t.last)/1e9)
	case r.last < t.first/rangeUnitFactor:
		where = fmt.Sprintf("its ranges all end by %.4g s, before a %dth of the first traced record's start at %.4g s",
			float64(r.last)/1e9, rangeUnitFactor, float64(t.first)/1e9)
	default:
		return nil
	}
	return &inputerr.Error{Path: rd.nvtx.path, Where: "header " + rd.nvtx.head.Names[rd.nvtx.head.Index["start"]],
		Problem: fmt.Sprintf("units: the header says %s, %s says %s, and read in %s %s: the unit was changed without the values",
			unit, sibling, siblingUnit, unit, where),
		Hint: "write every report in one nsys stats run: nsys stats --report nvtx_pushpop_trace,cuda_api_trace,cuda_gpu_trace --format csv -o PREFIX REPORT.nsys-rep"}
}
