package capture

import (
	"context"

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
func CopiesOf(ctx context.Context, src *source.Source, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	return scanOf(ctx, src, records.Selection{JoinCalls: true, Ops: []records.OpKind{records.OpCopy}}, feed)
}

// TraceOf reads every record of an opened source's trace in one pass, each
// copy joined to the API call that issued it as CopiesOf joins it, and
// every call, GPU operation, synchronisation and event beside: the audit's
// accumulator and the timeline a replay needs read one stream
// (records.Tee).
func TraceOf(ctx context.Context, src *source.Source, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	return scanOf(ctx, src, records.Selection{JoinCalls: true}, feed)
}

// scanOf reads src with sel into the handler feed returns for the scan.
func scanOf(ctx context.Context, src *source.Source, sel records.Selection, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	scan := &CopyScan{Path: src.Path, Format: formatOf(src.Kind), Notes: src.Notes}
	info, err := Read(ctx, src, sel, feed(scan))
	if err != nil {
		return nil, err
	}
	scan.Files = info.Files
	if src.Kind == nsysdb.KindCSV {
		// The report prints sizes in MB to a few digits. The reader recovers
		// the size of a page-granular buffer, as the lesson's program copies
		// (so the model has per-copy bytes), but an application's sizes in
		// general it can only round.
		scan.Lack(FactMemcpyBytes, nsysdb.ReportGPUTrace+" gives bytes in MB rounded to its printed digits, so per-copy bytes are approximate")
	}
	return scan, nil
}
