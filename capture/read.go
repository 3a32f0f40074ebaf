package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nsyscheck/nsyscheck/internal/chunked"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/nsyscsv"
	"github.com/nsyscheck/nsyscheck/nsyssqlite"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

// ReadInfo is what the reader said beside its records.
type ReadInfo struct {
	// Files are the files read: an export (a report and its export), or
	// the CSV reports in the order of nsysdb's report list.
	Files []string
	// Sources names the table or report each kind of record came from.
	Sources Sources
	// OtherThreads counts the calls records.Selection.ProgramThread left out.
	OtherThreads []records.ThreadCount
	// Collected is an SQLite export's count of the CUDA events nsys
	// collected beside the records it holds of them (Miscounted).
	Collected nsyssqlite.Collected
	// CallPIDs are the pids of the threads of every row of an SQLite
	// export's runtime table (Sources.API), where the read saw them all
	// (nsyssqlite.Info.CallPIDs); nil where it did not.
	CallPIDs []int64
}

// Miscounted refuses an export whose records are not the CUDA events nsys
// says it collected: fewer were lost or deleted after the capture (a
// kernel missing from its stream moves the replay and the zero-copy
// verdict, and its launch does not say it lacks it), more were added. The
// readers call it last, once nothing more particular was found wrong, so
// that a record the checks can name is named instead.
func (info *ReadInfo) Miscounted(src *source.Source) error {
	c := info.Collected
	if !c.Known || c.Held() == c.Nsys {
		return nil
	}
	what := fmt.Sprintf("%d fewer than nsys collected", c.Nsys-c.Held())
	if c.Held() > c.Nsys {
		what = fmt.Sprintf("%d more than nsys collected", c.Held()-c.Nsys)
	}
	return &inputerr.Error{Path: src.Path, Where: "table " + c.Table,
		Problem: fmt.Sprintf("nsys says it collected %d CUDA events, and the export holds %d records of them (%d API calls, %d kernels, %d memory copies, %d memsets): %s, so this is not the trace nsys recorded and what it lacks or adds is unknown",
			c.Nsys, c.Held(), c.Calls, c.Kernels, c.Copies, c.Memsets, what),
		Hint: "records were lost, deleted or added after the capture; " + exportAgain(src.Kind)}
}

// Read streams the trace records of an opened source to h through the
// reader of its format — nsyssqlite for an SQLite export (a report's
// included), nsyscsv for a folder of CSV reports — each record checked for
// plausibility first (validating): a record no run on real hardware can
// have stops the read with an error naming it. The verify model (FromSource)
// and the audit both read through Read. The program's own files hold no
// trace, and are refused.
func Read(ctx context.Context, src *source.Source, opts records.Selection, h records.Handler) (*ReadInfo, error) {
	info, _, err := read(ctx, src, opts, h, false)
	return info, err
}

// Checked waits for the checks of a whole input that a read left running
// (nsyssqlite.StreamThenCheck) and returns their error, nil where the input
// passed them; until then nothing the read handed on counts.
type Checked = nsyssqlite.Checked

// passed is the Checked of a read whose checks have ended.
func passed() error { return nil }

// read is Read; with later, an SQLite export's checks of the whole file
// start once its records have streamed and run on after read returns
// (checked waits for them). An error of the read's own that comes after
// the stream waits for them, and theirs comes first, as if they had run
// before.
func read(ctx context.Context, src *source.Source, opts records.Selection, h records.Handler, later bool) (*ReadInfo, Checked, error) {
	checked := Checked(passed)
	sqlite := src.Kind == nsysdb.KindSQLite || src.Kind == nsysdb.KindNsysRep
	var piped *records.Piped
	if later && sqlite {
		// The audit's pass over a large export: its consumers handle the
		// calls and copies on a goroutine of their own, beside the reader
		// and these checks (records.Pipe); the reader drains the pipe at
		// the end of each table, so an error is named as it was met.
		h, piped = records.Pipe(h)
		defer piped.Close()
	}
	h, x := validating(ctx, h, formatOf(src.Kind))
	// The reader hands each copy the copy call it joined it to, so the
	// check need not keep the copy calls to find them itself.
	x.joined = opts.JoinCalls
	var info *ReadInfo
	switch src.Kind {
	case nsysdb.KindSQLite, nsysdb.KindNsysRep:
		var si *nsyssqlite.Info
		var err error
		if later {
			si, checked, err = nsyssqlite.StreamThenCheck(ctx, src.Export.DB, src.Export.Path, opts, h)
		} else {
			si, err = nsyssqlite.Read(ctx, src.Export.DB, src.Export.Path, opts, h)
		}
		if piped != nil {
			if perr := piped.Close(); err == nil && perr != nil {
				err = inputerr.Attribute(perr, src.Export.Path, "")
			}
		}
		if err != nil {
			return nil, nil, interrupted(ctx, src.Path, err)
		}
		files := []string{src.Export.Path}
		if src.Report != nil {
			files = []string{src.Report.Path, src.Export.Path}
		}
		t := si.Tables
		info = &ReadInfo{Files: files, OtherThreads: si.OtherThreads, Collected: si.Collected, CallPIDs: si.CallPIDs,
			Sources: Sources{API: t[nsysdb.TableRuntime], Memcpy: t[nsysdb.TableMemcpy], Kernel: t[nsysdb.TableKernel], NVTX: t[nsysdb.TableNVTX]}}
		if from, err := x.finish(); err != nil {
			if cerr := checked(); cerr != nil {
				return nil, nil, cerr
			}
			table := map[string]string{fromCalls: info.Sources.API, fromCopies: info.Sources.Memcpy, fromRanges: info.Sources.NVTX, fromSyncs: t[nsysdb.TableSync]}[from]
			if table != "" {
				table = "table " + table
			}
			return nil, nil, inputerr.Attribute(err, src.Export.Path, table)
		}
	case nsysdb.KindCSV:
		ci, err := nsyscsv.Read(ctx, src.Dir, src.Reports, opts, h)
		if err != nil {
			return nil, nil, interrupted(ctx, src.Path, err)
		}
		info = &ReadInfo{Files: ci.Files, OtherThreads: ci.OtherThreads, Sources: Sources(ci.Sources)}
		if from, err := x.finish(); err != nil {
			report := map[string]string{fromCalls: src.Reports[nsysdb.ReportAPITrace], fromCopies: src.Reports[nsysdb.ReportGPUTrace],
				fromRanges: src.Reports[nsysdb.ReportNVTXTrace]}[from]
			if report == "" {
				report = src.Dir
			}
			return nil, nil, inputerr.Attribute(err, report, "")
		}
	default:
		problem := "holds the program's own numbers, not a trace of its calls and copies"
		if src.Kind == nsysdb.KindJSON {
			if what := notJSON(src.Path); what != "" {
				problem = what + ", neither the program's numbers nor an audit's output, and not a trace of its calls and copies"
			}
		}
		return nil, nil, &inputerr.Error{Path: src.Path, Problem: problem,
			Hint: "give the capture itself: a .nsys-rep, its SQLite export, or a folder of nsys stats CSV reports"}
	}
	return info, checked, nil
}

// interrupted says that a read stopped because ctx was cancelled, naming
// the input, where a consumer's look at ctx stopped it (context.Cause) and
// the reader had nothing to add.
func interrupted(ctx context.Context, path string, err error) error {
	if ctx.Err() != nil && !inputerr.Is(err) {
		return &inputerr.Error{Path: path, Problem: "interrupted while reading the capture", Err: err}
	}
	return err
}

// collect returns the Handler that keeps a trace's records in c, and the
// function that puts the calls in c.Calls once the read is done. Where the
// reader tells how many calls come (records.Handler.CallsAhead) they go
// straight into a slice made at that size; else they are gathered in a
// chunked.List meanwhile, so that 100,000s of calls are not copied each
// time a slice grows, the old slice held beside the new (moved into
// c.Calls at the end: the list and the slice are both held then, 88 bytes
// a call each).
func collect(c *Capture) (records.Handler, func()) {
	var (
		calls chunked.List[APICall]
		sized []APICall // made at the size the reader told
		told  bool
	)
	return records.Handler{
		Meta: func(m *records.Meta) error {
			c.Meta.NsysVersion, c.Meta.SchemaVersion, c.Meta.GPU = m.NsysVersion, m.SchemaVersion, m.GPU
			c.Meta.Driver, c.Meta.CUDADriver, c.Meta.OS = m.Driver, m.CUDADriver, m.OS
			return nil
		},
		Gap: func(g records.Gap) error {
			c.Lack(g.Fact, g.Reason)
			return nil
		},
		Range: func(r *records.Range) error {
			c.Ranges = append(c.Ranges, Range{Name: r.Name, Domain: r.Domain, Start: r.Start, End: r.End, Open: r.Open, PID: r.PID, TID: r.TID})
			return nil
		},
		CallsAhead: func(n int) error {
			if calls.Len() == 0 && len(sized) == 0 && n > 0 {
				sized, told = make([]APICall, 0, n), true
			}
			return nil
		},
		Call: func(a *records.Call) error {
			call := APICall{Name: a.Name, Start: a.Start, End: a.End, Result: a.Result, CorrelationID: a.Corr,
				PID: a.PID, TID: a.TID, Thread: a.Thread, Row: a.Row}
			if told && len(sized) < cap(sized) {
				sized = append(sized, call)
			} else {
				calls.Add(call)
			}
			return nil
		},
		Op: func(o *records.Op) error {
			switch o.Kind {
			case records.OpCopy:
				c.Memcpys.Append(Memcpy{Kind: o.Copy, Src: o.Src, Dst: o.Dst, Bytes: o.Bytes, Start: o.Start, End: o.End,
					CorrelationID: o.Corr, Stream: o.Stream, Device: o.Device, PID: o.PID})
			case records.OpKernel:
				c.Kernels = append(c.Kernels, Kernel{Name: o.Name, Start: o.Start, End: o.End, CorrelationID: o.Corr, Stream: o.Stream, Device: o.Device, PID: o.PID})
			}
			return nil
		},
		APISum: func(s *records.APISum) error {
			c.APISummary = append(c.APISummary, APISummary{Name: s.Name, Calls: s.Calls, TotalNs: s.TotalNs, MinNs: s.MinNs, MaxNs: s.MaxNs})
			return nil
		},
		CopySum: func(s *records.CopySum) error {
			c.MemSummary = append(c.MemSummary, MemSummary{Kind: s.Kind, Count: s.Count, TotalNs: s.TotalNs, TotalMB: s.TotalMB})
			return nil
		},
		RangeSum: func(s *records.RangeSum) error {
			c.RangeSummary = append(c.RangeSummary, RangeSummary{Name: s.Name, Domain: s.Domain, Instances: s.Instances, TotalNs: s.TotalNs})
			return nil
		},
	}, func() { c.Calls = calls.AppendTo(sized) }
}

// notJSON says why the file at path, named .json, is no JSON at all,
// judged by its start: empty, only zero bytes there, or a first character
// no JSON begins with; "" when it starts as JSON does.
func notJSON(path string) string {
	head, err := nsysdb.Head(path, 4096)
	if err != nil {
		return ""
	}
	if len(head) == 0 {
		return "the file is empty"
	}
	if len(bytes.Trim(head, "\x00")) == 0 {
		return "the file starts with only zero bytes (an interrupted copy or download?), so it is not JSON"
	}
	if _, err := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))).Token(); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Sprintf("not JSON (byte %d: %v)", se.Offset, se)
		}
	}
	return ""
}
