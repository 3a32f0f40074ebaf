package capture

import (
	"context"
	"fmt"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

// CopyScan is what the audit's output says of its input beside the copies
// themselves: the input, what its reader said of it and the trace's
// counts. The audit's Accumulator fills it from the records it consumes
// (audit.Accumulator.Handler).
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

	Copies    int64 // copies read
	Unmatched int64 // copies whose API call is not in the trace
	Memsets   int64 // memsets, kept apart from the copies

	// Missing lists what the input cannot tell (memory kinds, NVTX, ...).
	Missing []Gap
	// Notes say when another file was read than the one named: the SQLite
	// export beside a .nsys-rep, as Capture.Notes do for the model.
	Notes []string
}

// The sources of CopyScan.Span.
const (
	SpanTrace    = "trace duration"
	SpanAPICalls = "first to last API call"
)

// Lack records that the input cannot tell a fact; the first reason for a
// fact is kept.
func (s *CopyScan) Lack(f Fact, reason string) {
	for _, g := range s.Missing {
		if g.Fact == f {
			return
		}
	}
	s.Missing = append(s.Missing, Gap{Fact: f, Reason: reason})
}

// StreamCopies reads the copies of the capture at path for the audit, each
// with the API call that issued it (the join of records.Selection.JoinCalls),
// after the NVTX ranges its calls are placed in and before the trace's
// counts: feed returns the Handler that takes them
// (audit.Accumulator.Handler) for the CopyScan it fills.
func StreamCopies(path string, opts Options, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	src, err := source.Open(opts.context(), path, opts.sourceOptions(nsysdb.KindUnknown))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return CopiesOf(opts.context(), src, feed)
}

// CopiesOf is StreamCopies on an opened source.
//
// A trace without copies, or whose copies lack the calls that issued them,
// holds no answer: what it lacks is not zero. CopiesOf (and TraceOf)
// refuse, with an *inputerr.Error that says the audit is unavailable and
// why, a trace with no copy record (the copy table or report absent or
// empty) and one with a copy that joins no call (none in the trace with
// its correlation id in its process), unless the copy ran as a graph's
// node or as a unified memory migration, which have no copy call of their
// own. Its host time would otherwise count as 0, and a check after a fix
// could hold on it.
func CopiesOf(ctx context.Context, src *source.Source, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	return scanOf(ctx, src, records.Selection{JoinCalls: true, Ops: []records.OpKind{records.OpCopy}}, feed)
}

// TraceOf reads every record of an opened source's trace in one pass, each
// copy joined to the API call that issued it as CopiesOf joins it, and
// every call, GPU operation, synchronisation and event beside: the audit's
// accumulator and the timeline a replay needs read one stream
// (records.Tee).
func TraceOf(ctx context.Context, src *source.Source, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	return scanOf(ctx, src, records.Selection{JoinCalls: true, Stacks: true}, feed)
}

// scanOf reads src with sel into the handler feed returns for the scan.
func scanOf(ctx context.Context, src *source.Source, sel records.Selection, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	scan := &CopyScan{Path: src.Path, Format: formatOf(src.Kind), Notes: src.Notes}
	h := feed(scan)
	var (
		copies   int64
		uncalled []records.Op // the first uncalled copy, and how many
		n        int64
	)
	noCopies := "" // why the trace has no copy records, as its reader says
	nextGap := h.Gap
	h.Gap = func(g records.Gap) error {
		if g.Fact == FactMemcpy && noCopies == "" {
			noCopies = g.Reason
		}
		if nextGap == nil {
			return nil
		}
		return nextGap(g)
	}
	next := h.Op
	h.Op = func(o *records.Op) error {
		if o.Kind == records.OpCopy {
			copies++
			if o.Call == nil && o.GraphNode == 0 && o.Migration == "" {
				if n++; n == 1 {
					uncalled = append(uncalled, *o)
				}
			}
		}
		if next == nil {
			return nil
		}
		return next(o)
	}
	info, err := Read(ctx, src, sel, h)
	if err != nil {
		return nil, err
	}
	scan.Files = info.Files
	from := ""
	if t := info.Sources.Memcpy; t != "" {
		from = "table " + t
		if src.Kind == nsysdb.KindCSV {
			from = "report " + t
		}
	}
	switch {
	case copies == 0:
		why := orDefault(noCopies, orDefault(from, "the trace")+" holds no copy")
		return nil, &inputerr.Error{Path: src.Path, Problem: ProblemNoCopies + " (" + why + "), so nothing says whether its copies were pinned",
			Hint: "profile the program with nsys profile -t cuda and give that capture; " + exportAgain(src.Kind)}
	case n > 0:
		o := uncalled[0]
		return nil, &inputerr.Error{Path: src.Path, Where: from,
			Problem: fmt.Sprintf("the audit is unavailable: %d of the %d copies join no API call (none in %s has their correlation id in their process; the first: correlation id %d, process %d, %d bytes %s), so the host time they held is unknown, not 0",
				n, copies, orDefault(info.Sources.API, "the API trace"), o.Corr, o.PID, o.Bytes, o.Copy),
			Hint: "the capture is damaged or was edited (a NULL or wrong globalPid, calls deleted); " + exportAgain(src.Kind)}
	}
	if src.Kind == nsysdb.KindCSV {
		// The report prints sizes in MB to a few digits. The reader recovers
		// the size of a page-granular buffer, as the lesson's program copies
		// (so the model has per-copy bytes), but an application's sizes in
		// general it can only round.
		scan.Lack(FactMemcpyBytes, nsysdb.ReportGPUTrace+" gives bytes in MB rounded to its printed digits, so per-copy bytes are approximate")
	}
	return scan, nil
}

// ProblemNoCopies starts the Problem of the refusal of a trace with no copy
// record (CopiesOf), which the pipeline tells by it to say what the capture
// says it could not show.
const ProblemNoCopies = "the audit is unavailable: the capture holds no memory copy records"

// exportAgain says how to make the input of the kind again.
func exportAgain(k nsysdb.Kind) string {
	if k == nsysdb.KindCSV {
		return "make the reports again with nsys stats --format csv"
	}
	return nsysdb.ExportHint
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
