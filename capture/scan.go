package capture

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/chunked"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
	"github.com/nsyscheck/nsyscheck/vocab"
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

	// Uncopied are the successful calls of copy APIs (nsysdb.IsCopyAPI)
	// that no copy record joins, by API, when they are few enough
	// (UncopiedShare) for the audit to go on beside a warning; more refuse.
	Uncopied []APICount
	// CopyCalls counts the successful calls of copy APIs.
	CopyCalls int64

	// Missing lists what the input cannot tell (memory kinds, NVTX, ...).
	Missing []records.Gap
	// Notes say when another file was read than the one named: the SQLite
	// export beside a .nsys-rep, as Capture.Notes do for the model.
	Notes []string
	// CallPIDs are the processes of every call of an SQLite export's
	// runtime table (ReadInfo.CallPIDs), for the exposure scan to take
	// rather than find again; APITable names that table.
	CallPIDs []int64
	APITable string
}

// The sources of CopyScan.Span.
const (
	SpanTrace    = "trace duration"
	SpanAPICalls = "first to last API call"
)

// Lack records that the input cannot tell a fact; the first reason for a
// fact is kept.
func (s *CopyScan) Lack(f records.Fact, reason string) {
	for _, g := range s.Missing {
		if g.Fact == f {
			return
		}
	}
	s.Missing = append(s.Missing, records.Gap{Fact: f, Reason: reason})
}

// streamCapture holds what a trace says of stream capture: a copy call a
// thread makes between its cudaStreamBeginCapture and cudaStreamEndCapture
// is recorded into a graph, not run, and has no copy record of its own.
// Calls arrive in no set order, so the copy calls are kept until the end.
type streamCapture struct {
	begins, ends []threadTime
	copies       chunked.List[copyCallTime] // in chunks: a large capture makes 100,000s
	apis         []string
}

type threadTime struct{ pid, tid, ns int64 }

// copyCallTime is a copy call's thread and start, and its API (an index
// into streamCapture.apis).
type copyCallTime struct {
	threadTime
	api uint16
}

func (s *streamCapture) add(c *records.Call) {
	t := threadTime{c.PID, c.TID, c.Start}
	switch {
	case strings.HasPrefix(c.Name, "cudaStreamBeginCapture") || strings.HasPrefix(c.Name, "cuStreamBeginCapture"):
		s.begins = append(s.begins, t)
	case strings.HasPrefix(c.Name, "cudaStreamEndCapture") || strings.HasPrefix(c.Name, "cuStreamEndCapture"):
		t.ns = c.End
		s.ends = append(s.ends, t)
	case c.Result == 0 && nsysdb.IsCopyAPI(c.Name):
		i := slices.Index(s.apis, c.Name)
		if i < 0 {
			i = len(s.apis)
			s.apis = append(s.apis, c.Name)
		}
		s.copies.Add(copyCallTime{t, uint16(i)})
	}
}

// captured counts, by API, the copy calls made inside a stream capture of
// their thread: from a begin to the first end after it.
func (s *streamCapture) captured() map[string]int64 {
	if len(s.begins) == 0 {
		return nil
	}
	byTime := func(a, b threadTime) int { return cmp.Compare(a.ns, b.ns) }
	slices.SortFunc(s.ends, byTime)
	type span struct{ from, to int64 }
	spans := map[[2]int64][]span{}
	for _, b := range s.begins {
		to := int64(math.MaxInt64) // never ended: to the trace's end
		if i, _ := slices.BinarySearchFunc(s.ends, b, byTime); i < len(s.ends) {
			for _, e := range s.ends[i:] {
				if e.pid == b.pid && e.tid == b.tid {
					to = e.ns
					break
				}
			}
		}
		spans[[2]int64{b.pid, b.tid}] = append(spans[[2]int64{b.pid, b.tid}], span{b.ns, to})
	}
	out := map[string]int64{}
	for _, chunk := range s.copies.Chunks() {
		for _, c := range chunk {
			for _, sp := range spans[[2]int64{c.pid, c.tid}] {
				if sp.from <= c.ns && c.ns <= sp.to {
					out[s.apis[c.api]]++
					break
				}
			}
		}
	}
	return out
}

// APICount is a number of calls of one API.
type APICount struct {
	API   string
	Calls int64
}

// UncopiedShare is the largest share of a trace's copy calls that may lack
// their copy record for the audit to go on, with a warning: nsys loses a
// few records of a long capture. Past it, what the calls moved and how long
// they held the host is unknown, and a check after a fix could hold on it:
// the audit is unavailable.
const UncopiedShare = 0.01

// TraceOf reads every record of an opened source's trace in one pass, each
// copy joined to the API call that issued it (records.Selection.JoinCalls),
// and every call, GPU operation, synchronisation and event beside: the
// audit's accumulator and the timeline a replay needs read one stream
// (records.Tee). feed returns the Handler that takes them for the CopyScan
// it fills.
//
// A trace without copies, or whose copies lack the calls that issued them,
// holds no answer: what it lacks is not zero. TraceOf refuses, with an
// *inputerr.Error that says the audit is unavailable and why, a trace with
// no copy record (the copy table or report absent or empty) and one with a
// copy that joins no call (none in the trace with its correlation id in its
// process), unless the copy ran as a graph's node or as a unified memory
// migration, which have no copy call of their own. Its host time would
// otherwise count as 0, and a check after a fix could hold on it.
func TraceOf(ctx context.Context, src *source.Source, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	scan, _, err := scanOf(ctx, src, records.Selection{JoinCalls: true, Stacks: true}, feed, false)
	return scan, err
}

// TraceThenCheck is TraceOf, but an SQLite export's checks of the whole
// file (SQLite's integrity check, the checks over whole tables) start once
// its records have streamed and run on beside what the caller does next:
// nothing read counts until checked returns nil, and its error, where the
// file fails them, is the audit's. A refusal TraceOf would give waits for
// them, and theirs comes first.
func TraceThenCheck(ctx context.Context, src *source.Source, feed func(*CopyScan) records.Handler) (*CopyScan, Checked, error) {
	return scanOf(ctx, src, records.Selection{JoinCalls: true, Stacks: true}, feed, true)
}

// CopiesOf reads the copies alone of an opened source's trace, each joined
// to its call as TraceOf joins it, and refused where TraceOf refuses: the
// audit's second read of its copies, where NVIDIA's rule and the audit
// disagree on which copies come from pageable memory.
func CopiesOf(ctx context.Context, src *source.Source, feed func(*CopyScan) records.Handler) (*CopyScan, error) {
	scan, _, err := scanOf(ctx, src, records.Selection{JoinCalls: true, Ops: []records.OpKind{records.OpCopy}}, feed, false)
	return scan, err
}

// scanOf reads src with sel into the handler feed returns for the scan,
// the checks of the whole input after the stream where later says so
// (read).
func scanOf(ctx context.Context, src *source.Source, sel records.Selection, feed func(*CopyScan) records.Handler, later bool) (*CopyScan, Checked, error) {
	scan, checked, err := scanChecked(ctx, src, sel, feed, later)
	if err != nil && checked != nil {
		if cerr := checked(); cerr != nil {
			return nil, nil, cerr
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return scan, checked, nil
}

// scanChecked is scanOf, its refusals after the read returned beside the
// read's checks (checked, nil where the read itself failed), which scanOf
// waits for.
func scanChecked(ctx context.Context, src *source.Source, sel records.Selection, feed func(*CopyScan) records.Handler, later bool) (*CopyScan, Checked, error) {
	scan := &CopyScan{Path: src.Path, Format: formatOf(src.Kind), Notes: src.Notes}
	h := feed(scan)
	var (
		copies   int64
		uncalled []records.Op // the first uncalled copy, and how many
		n        int64
	)
	noCopies := "" // why the trace has no copy records, as its reader says
	noKinds := ""  // why the trace names no memory kinds at all
	noCalls := ""  // why the trace has no API calls, as its reader says
	noBytes := ""  // why its copies have no sizes
	var unclassed unclassified
	nextGap := h.Gap
	h.Gap = func(g records.Gap) error {
		if g.Fact == records.FactMemcpy && noCopies == "" {
			noCopies = g.Reason
		}
		if g.Fact == records.FactMemoryKinds && noKinds == "" {
			noKinds = g.Reason
		}
		if g.Fact == records.FactAPITrace && noCalls == "" {
			noCalls = g.Reason
		}
		if g.Fact == records.FactMemcpyBytes && noBytes == "" {
			noBytes = g.Reason
		}
		if nextGap == nil {
			return nil
		}
		return nextGap(g)
	}
	// Copy calls, and the copies that join one, by API: a call with no copy
	// record is missing data too. (Only where the consumer reads the calls,
	// as TraceOf's does: asking for them would read and check the API
	// table for a consumer of copies alone.)
	calls, joined := map[string]int64{}, map[string]int64{}
	// Calls come in runs of one name: each run's copy calls are counted
	// apart and added to calls as the name changes, and once read.
	callRun, joinRun := copyCount{into: calls}, copyCount{into: joined}
	var capt streamCapture
	if nextCall := h.Call; nextCall != nil {
		h.Call = func(c *records.Call) error {
			if c.Result == 0 {
				callRun.add(c.Name)
			}
			capt.add(c)
			return nextCall(c)
		}
	}
	next := h.Op
	h.Op = func(o *records.Op) error {
		if o.Kind == records.OpCopy {
			copies++
			if o.Call != nil {
				joinRun.add(o.Call.Name)
			}
			if o.Call == nil && o.GraphNode == 0 && o.Migration == "" {
				if n++; n == 1 {
					uncalled = append(uncalled, *o)
				}
			}
			unclassed.add(o)
		}
		if next == nil {
			return nil
		}
		return next(o)
	}
	info, checked, err := read(ctx, src, sel, h, later)
	if err != nil {
		return nil, nil, err
	}
	callRun.flush()
	joinRun.flush()
	scan.Files = info.Files
	scan.CallPIDs, scan.APITable = info.CallPIDs, info.Sources.API
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
		return nil, checked, &inputerr.Error{Path: src.Path, Problem: ProblemNoCopies + " (" + why + "), so nothing says whether its copies were pinned",
			Hint: "profile the program with nsys profile -t cuda and give that capture; " + exportAgain(src.Kind)}
	case noBytes != "":
		return nil, checked, &inputerr.Error{Path: src.Path, Where: from,
			Problem: fmt.Sprintf("the audit is unavailable: the %d copies have no size (%s), so what they moved and their size classes are unknown, not 0", copies, noBytes),
			Hint:    "give the capture with its copies' sizes; " + exportAgain(src.Kind)}
	case n > 0 && noCalls != "":
		return nil, checked, &inputerr.Error{Path: src.Path, Where: from,
			Problem: fmt.Sprintf("the audit is unavailable: the %d copies join no API call, since the capture holds none (%s), so the host time they held is unknown, not 0", copies, noCalls),
			Hint:    "the API trace is what times each copy's call; " + exportAgain(src.Kind)}
	case n > 0:
		o := uncalled[0]
		return nil, checked, &inputerr.Error{Path: src.Path, Where: from,
			Problem: fmt.Sprintf("the audit is unavailable: %d of the %d copies join no API call (no copy call in %s has their correlation id in their process; the first: correlation id %d, process %d, %d bytes %s), so the host time they held is unknown, not 0",
				n, copies, orDefault(info.Sources.API, "the API trace"), o.Corr, o.PID, o.Bytes, o.Copy),
			Hint: "the capture is damaged or was edited (a NULL or wrong globalPid, calls deleted); " + exportAgain(src.Kind)}
	}
	switch {
	case noKinds != "" && unclassed.hostDevice > 0:
		// Every host-device copy of unknown kind, not one not pageable.
		return nil, checked, &inputerr.Error{Path: src.Path, Where: orDefault(from, "the copy records"),
			Problem: fmt.Sprintf("the audit is unavailable: the trace names no memory kind of any copy (%s), so whether its %d host-device copies were pinned is unknown, not pinned",
				noKinds, unclassed.hostDevice),
			Hint: "give the capture with its copies' memory kinds; " + exportAgain(src.Kind)}
	case noKinds == "" && unclassed.n > 0:
		return nil, checked, unclassed.refusal(src, from)
	}
	for api, n := range capt.captured() {
		calls[api] -= n
	}
	if err := uncopiedCalls(scan, src, info.Sources.API, from, calls, joined); err != nil {
		return nil, checked, err
	}
	if err := info.Miscounted(src); err != nil {
		return nil, checked, err
	}
	if src.Kind == nsysdb.KindCSV {
		// The report prints sizes in MB to a few digits. The reader recovers
		// the size of a page-granular buffer, as the lesson's program copies
		// (so the model has per-copy bytes), but an application's sizes in
		// general it can only round.
		scan.Lack(records.FactMemcpyBytes, nsysdb.ReportGPUTrace+" gives bytes in MB rounded to its printed digits, so per-copy bytes are approximate")
	}
	return scan, checked, nil
}

// unclassified counts the host-device copies whose host memory kind the
// trace does not tell: a kind NULL or unknown, or sides that contradict the
// copy's direction (an HtoD copy from device memory). The audit cannot say
// whether they were pinned, so they refuse it: counted as pinned, the
// pageable copies among them would pass the rule unseen.
type unclassified struct {
	n, hostDevice int64
	first         records.Op
}

// hostSide and deviceSide are the memory kinds a host-device copy's host
// and device sides may have.
var (
	hostSide   = []vocab.MemKind{vocab.MemPageable, vocab.MemPinned, vocab.MemManaged}
	deviceSide = []vocab.MemKind{vocab.MemDevice, vocab.MemArray, vocab.MemManaged}
)

// add counts o when it is a host-device copy, and as unclassified when its
// sides are not a host and a device kind in its direction's order.
func (u *unclassified) add(o *records.Op) {
	var host, dev vocab.MemKind
	switch {
	case o.Migration != "":
		return // managed pages, which the export names no kind for
	case o.Copy == vocab.CopyHtoD:
		host, dev = o.Src, o.Dst
	case o.Copy == vocab.CopyDtoH:
		host, dev = o.Dst, o.Src
	default:
		return
	}
	u.hostDevice++
	if slices.Contains(hostSide, host) && slices.Contains(deviceSide, dev) {
		return
	}
	if u.n++; u.n == 1 {
		u.first = *o
	}
}

// refusal says the audit is unavailable for the unclassified copies, naming
// the columns that should have told their kind.
func (u *unclassified) refusal(src *source.Source, from string) error {
	cols := nsysdb.ColSrcKind + "/" + nsysdb.ColDstKind
	if src.Kind == nsysdb.KindCSV {
		cols = "SrcMemKd/DstMemKd"
	}
	o := u.first
	return &inputerr.Error{Path: src.Path, Where: orDefault(from, "the copy records"),
		Problem: fmt.Sprintf("the audit is unavailable: %d of the %d host-device copies have no host memory kind it can tell (%s NULL, unknown or contrary to the copy's direction; the first: correlation id %d, %s from %s to %s memory), so whether they were pinned is unknown, not pinned",
			u.n, u.hostDevice, cols, o.Corr, o.Copy, o.Src, o.Dst),
		Hint: "the capture is damaged or was edited in its " + cols + " columns; " + exportAgain(src.Kind)}
}

// uncopiedCalls counts the copy calls no copy record joins into scan, or
// refuses the trace when they are more than UncopiedShare of its copy
// calls. (A call that made several copy records counts them all, so the
// count errs towards fewer.)
func uncopiedCalls(scan *CopyScan, src *source.Source, apiFrom, copyFrom string, calls, joined map[string]int64) error {
	var missing []APICount
	var n int64
	for api, c := range calls {
		scan.CopyCalls += c
		if d := c - joined[api]; d > 0 {
			missing = append(missing, APICount{API: api, Calls: d})
			n += d
		}
	}
	if n == 0 {
		return nil
	}
	slices.SortFunc(missing, func(a, b APICount) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.API, b.API))
	})
	if float64(n) <= UncopiedShare*float64(scan.CopyCalls) {
		scan.Uncopied = missing
		return nil
	}
	return &inputerr.Error{Path: src.Path, Where: orDefault(copyFrom, "the copy records"),
		Problem: fmt.Sprintf("the audit is unavailable: %d of the %d copy calls in %s have no copy record (%s), so what they moved and how long they held the host is unknown, not 0",
			n, scan.CopyCalls, orDefault(apiFrom, "the API trace"), APICounts(missing)),
		Hint: "the copy records were lost or deleted: see nsys's diagnostics of the capture, profile the program again with nsys profile -t cuda and give that capture; " + exportAgain(src.Kind)}
}

// APICounts says calls by API: "140 cudaMemcpyAsync, 2 cudaMemcpy".
func APICounts(cs []APICount) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = fmt.Sprintf("%d %s", c.Calls, c.API)
	}
	return strings.Join(s, ", ")
}

// ProblemNoCopies starts the Problem of the refusal of a trace with no copy
// record (TraceOf), which the pipeline tells by it to say what the capture
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

// copyCount counts the copy calls of each API name into a map, a run of one
// name at a time: add looks a name up only where it is not the last one
// added, and flush adds the run's count.
type copyCount struct {
	into  map[string]int64
	name  string
	copy  bool // name is a copy API's
	n     int64
	began bool
}

// add counts one call of name, where it is a copy API's.
func (c *copyCount) add(name string) {
	if !c.began || name != c.name {
		c.flush()
		c.name, c.copy, c.began = name, nsysdb.IsCopyAPI(name), true
	}
	if c.copy {
		c.n++
	}
}

// flush adds the run's count to the map.
func (c *copyCount) flush() {
	if c.n > 0 {
		c.into[c.name] += c.n
		c.n = 0
	}
}
