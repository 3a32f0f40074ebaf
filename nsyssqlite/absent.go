package nsyssqlite

import (
	"fmt"

	"github.com/nsyscheck/nsyscheck/records"
)

// absentReason says why the export has no table of the records of one
// family (CUDA's copies or kernels, NVTX's ranges): nsys recorded none of
// them, and, as far as its metadata says what it traced, whether it was
// asked to. A family it traced may still have had its events lost, which
// nsys's own diagnostics say: an absent table is no proof that the run
// made none.
// what names one record ("memory copy"); option is the -t value that
// traces the family (cuda, nvtx).
func (r *reader) absentReason(table, what, family, option string, traced func(records.Tracing) bool) string {
	t := r.tracing()
	switch {
	case t.Known && !traced(t):
		return fmt.Sprintf("the export has no %s table: nsys did not trace %s (nsys profile -t without %s)", table, family, option)
	case t.Known:
		return fmt.Sprintf("the export has no %s table: nsys recorded no %s, though it traced %s (nsys profile -t %s): the run made none, or nsys did not keep them (its diagnostics say whether it lost events)",
			table, what, family, option)
	}
	return fmt.Sprintf("the export has no %s table: nsys recorded no %s: the run made none, was not profiled with %s tracing (nsys profile -t %s), or nsys did not keep them",
		table, what, family, option)
}

// tracing is what nsys was asked to trace, read once from the metadata.
func (r *reader) tracing() records.Tracing {
	if !r.tracingRead {
		r.readTracing()
		r.tracingRead = true
	}
	return r.meta.Tracing
}
