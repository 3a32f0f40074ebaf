package predictions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// traceCtx reads the program's groups of operations out of a trace.
type traceCtx struct {
	c        *capture.Capture
	pid, tid int64
	calls    []capture.APICall          // the program's thread, by start
	memcpy   map[int64]*capture.Memcpy  // by correlation id, the thread's copies
	launch   map[int64]*capture.APICall // cudaLaunchKernel by correlation id
	ranges   []capture.Range            // the thread's NVTX ranges
	diags    *diagList
	apiTab   string // where API calls come from, for evidence
	cpyTab   string
	kernTab  string
	nvtxTab  string
	openSeen map[string]bool
	// syncs are the thread's cudaStreamSynchronize and
	// cudaDeviceSynchronize calls, by start.
	syncs      []capture.APICall
	kindWarned map[string]bool
}

type threadKey struct{ pid, tid int64 }

func (k threadKey) String() string { return fmt.Sprintf("%d/%d", k.pid, k.tid) }

// hasTrace reports whether the capture holds any trace records at all.
func hasTrace(c *capture.Capture) bool {
	switch c.Format {
	case capture.FormatSQLite, capture.FormatNsysRep, capture.FormatCSV:
		return true
	}
	return len(c.Calls) > 0 || len(c.Memcpys) > 0 || len(c.Kernels) > 0
}

// newTrace picks the program's thread and indexes its records. It returns
// nil and a reason when the capture has no API calls to read.
func newTrace(c *capture.Capture, diags *diagList) (*traceCtx, string) {
	if !c.Has(capture.FactAPITrace) {
		return nil, "no per-call API trace: " + c.Why(capture.FactAPITrace)
	}
	if len(c.Calls) == 0 {
		return nil, "the API trace holds no CUDA calls"
	}
	// The loaded calls' threads and, where the loader kept only the
	// program's thread, the counts of the threads it left out.
	threads := append(capture.CountThreads(c.Calls), c.OtherThreads...)
	sort.SliceStable(threads, func(i, j int) bool { return threads[i].Before(threads[j]) }) // the one rule
	top := threads[0]
	me := threadKey{top.PID, top.TID}
	how := top.Why()
	if len(threads) > 1 {
		var others []string
		for _, o := range threads[1:] {
			others = append(others, fmt.Sprintf("%s (%d calls)", threadKey{o.PID, o.TID}, o.Calls))
		}
		diags.add(CodeOtherThreadsIgnored, diag.Info, fmt.Sprintf(
			"read thread %s (%s, %d calls); ignored CUDA calls on %d other thread(s): %s",
			me, how, top.Calls, len(threads)-1, strings.Join(others, ", ")))
	}

	t := &traceCtx{c: c, pid: me.pid, tid: me.tid, diags: diags,
		memcpy: map[int64]*capture.Memcpy{}, launch: map[int64]*capture.APICall{},
		openSeen: map[string]bool{}, kindWarned: map[string]bool{}}
	t.apiTab, t.cpyTab, t.kernTab, t.nvtxTab = orNone(c.Sources.API), orNone(c.Sources.Memcpy), orNone(c.Sources.Kernel), orNone(c.Sources.NVTX)
	mine := map[int64]bool{}
	for _, a := range c.Calls {
		if a.PID == me.pid && a.TID == me.tid {
			t.calls = append(t.calls, a)
			mine[a.CorrelationID] = true
		}
	}
	sort.SliceStable(t.calls, func(i, j int) bool { return t.calls[i].Start < t.calls[j].Start })
	for i := range t.calls {
		if n := t.calls[i].Name; n == apiStreamSync || n == apiDeviceSync {
			t.syncs = append(t.syncs, t.calls[i])
		}
		if t.calls[i].Name == apiLaunchKernel {
			t.launch[t.calls[i].CorrelationID] = &t.calls[i]
		}
	}
	if c.Has(capture.FactCorrelation) {
		for i := range c.Memcpys {
			m := &c.Memcpys[i]
			if mine[m.CorrelationID] && (m.PID == 0 || me.pid == 0 || m.PID == me.pid) {
				t.memcpy[m.CorrelationID] = m
			}
		}
	}
	if c.Has(capture.FactNVTX) {
		for _, r := range c.Ranges {
			if (r.PID == me.pid && (r.TID == me.tid || r.TID == 0)) || (r.PID == 0 && r.TID == 0) {
				t.ranges = append(t.ranges, r)
			}
		}
	}
	return t, ""
}

func (t *traceCtx) thread() string { return threadKey{t.pid, t.tid}.String() }

// ref names one API call so that it can be found in the input: its CSV row
// where the input is a CSV report, else its correlation id.
func (t *traceCtx) ref(a capture.APICall) string {
	if a.Row > 0 {
		return fmt.Sprintf("%s data row %d", t.apiTab, a.Row)
	}
	return fmt.Sprintf("corr %d", a.CorrelationID)
}

// records names a group of calls: their CSV data rows where the input is a
// CSV report, else their correlation ids.
func (t *traceCtx) records(group string, calls []capture.APICall) *Records {
	if len(calls) == 0 {
		return &Records{Group: group, Table: t.apiTab}
	}
	if calls[0].Row > 0 {
		return &Records{Group: group, Table: t.apiTab, Rows: &Span{First: int64(calls[0].Row), Last: int64(calls[len(calls)-1].Row)}, Count: len(calls)}
	}
	ids := make([]int64, len(calls))
	for i, a := range calls {
		ids[i] = a.CorrelationID
	}
	return corrRecords(group, t.apiTab, ids)
}

func (t *traceCtx) named(name string) []capture.APICall {
	var out []capture.APICall
	for _, a := range t.calls {
		if a.Name == name {
			out = append(out, a)
		}
	}
	return out
}

// rangesNamed returns the thread's NVTX ranges with the given name.
func (t *traceCtx) rangesNamed(name string) []capture.Range {
	var out []capture.Range
	for _, r := range t.ranges {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

func (t *traceCtx) hasAnyRange(names ...string) bool {
	for _, n := range names {
		if len(t.rangesNamed(n)) > 0 {
			return true
		}
	}
	return false
}

// rangeNamed returns the single instance of a range, or why there is none.
func (t *traceCtx) rangeNamed(name string) (capture.Range, string) {
	rs := t.rangesNamed(name)
	switch len(rs) {
	case 0:
		return capture.Range{}, fmt.Sprintf("no NVTX range %q on thread %s", name, t.thread())
	case 1:
	default:
		return capture.Range{}, fmt.Sprintf("found %d instances of NVTX range %q on thread %s, expected 1", len(rs), name, t.thread())
	}
	r := rs[0]
	if r.Open && !t.openSeen[name] {
		t.openSeen[name] = true
		t.diags.add(CodeOpenRange, diag.Warning, fmt.Sprintf(
			"NVTX range %q (start %d ns) was never closed: the capture ended inside it, so it is taken to run to the end; its counts decide whether it is usable", name, r.Start))
	}
	for _, n := range lessonRanges {
		if n == name {
			continue
		}
		for _, o := range t.rangesNamed(n) {
			if overlap(r, o) {
				return capture.Range{}, fmt.Sprintf("NVTX ranges %q %s and %q %s overlap on thread %s, so which calls belong to which group is ambiguous",
					name, rangeSpan(r), n, rangeSpan(o), t.thread())
			}
		}
	}
	return r, ""
}

// orderNote names, as a lesson-structure diagnostic, a pinned range that
// comes before its pageable one: the lesson measures pageable first. The
// groups are found by name, so the order changes nothing else.
func (t *traceCtx) orderNote(pageable, pinned string) {
	p, q := t.rangesNamed(pageable), t.rangesNamed(pinned)
	if len(p) == 1 && len(q) == 1 && q[0].Start < p[0].Start {
		t.diags.add(CodeLessonShape, diag.Info, fmt.Sprintf("NVTX range %q comes before %q; the lesson measures pageable first", pinned, pageable))
	}
}

// lessonRanges are the NVTX ranges that delimit the lesson's groups.
var lessonRanges = []string{"h2d-pageable", "h2d-pinned", "d2h-pageable", "d2h-pinned",
	"async-pageable", "async-pinned", "kernel-device-resident", "kernel-zero-copy", "d2d-reference"}

// overlap reports whether two ranges share any instant; an open range runs
// to the end of the capture.
func overlap(a, b capture.Range) bool {
	return (b.Open || a.Start < b.End) && (a.Open || b.Start < a.End)
}

func rangeSpan(r capture.Range) string {
	if r.Open {
		return fmt.Sprintf("[%d ns, open]", r.Start)
	}
	return fmt.Sprintf("[%d, %d] ns", r.Start, r.End)
}

// inRange returns the thread's calls of a name that lie inside r.
func (t *traceCtx) inRange(name string, r capture.Range) []capture.APICall {
	var out []capture.APICall
	for _, a := range t.calls {
		if a.Name == name && r.Contains(a.Start, a.End) {
			out = append(out, a)
		}
	}
	return out
}

func copyKindOf(dir vocab.Direction) capture.CopyKind {
	if dir == vocab.H2D {
		return capture.CopyHtoD
	}
	return capture.CopyDtoH
}

// hostKind is the memory kind of a copy's host side.
func hostKind(m *capture.Memcpy) capture.MemKind {
	if m.Kind == capture.CopyDtoH {
		return m.Dst
	}
	return m.Src
}

func hostSide(dir vocab.Direction) string {
	if dir == vocab.H2D {
		return "source"
	}
	return "destination"
}

// checkHostKind checks that a copy's host side is of the group's kind. A
// mismatch is a diagnostic, once per group: a pinned group copying pageable
// memory is an error (its numbers still give the verdicts), any other
// mismatch a warning. It reports whether the kinds matched.
func (t *traceCtx) checkHostKind(group string, src vocab.MemKind, m *capture.Memcpy, dir vocab.Direction) bool {
	if !t.c.Has(capture.FactMemoryKinds) {
		return true
	}
	hk := hostKind(m)
	if hk == src {
		return true
	}
	if t.kindWarned[group] {
		return false
	}
	t.kindWarned[group] = true
	if src == vocab.MemPinned && hk == capture.MemPageable {
		t.diags.add(CodePinnedSourcePageable, diag.Error, fmt.Sprintf(
			"the %s group's copies have a pageable host %s (%s, corr %d): the pinned buffer probably is not pinned; check that it came from cudaMallocHost and that the return value was checked; the verdicts are what these copies measured",
			group, hostSide(dir), t.cpyTab, m.CorrelationID))
		return false
	}
	t.diags.add(CodeMemoryKind, diag.Warning, fmt.Sprintf("the %s group's copies have host %s kind %q (%s, corr %d), not %q",
		group, hostSide(dir), hk, t.cpyTab, m.CorrelationID, src))
	return false
}

// callCopy is one copy operation: its call, its GPU copy record and when
// the copy was done for the calling thread (the call's end for a blocking
// cudaMemcpy, the following synchronize's end for a cudaMemcpyAsync).
type callCopy struct {
	call capture.APICall
	cp   *capture.Memcpy
	end  int64
}

// ms is the operation's duration on the thread in milliseconds.
func (g callCopy) ms() float64 { return float64(g.end-g.call.Start) / 1e6 }

// part1 finds one direction's sweep in the trace.
func (t *traceCtx) part1(dir vocab.Direction) (*sweepData, string) {
	if !t.c.Has(capture.FactMemcpy) {
		return nil, "the trace has no per-copy records, so no copy's size or direction is known (" + t.c.Why(capture.FactMemcpy) + ")"
	}
	if !t.c.Has(capture.FactCorrelation) {
		return nil, "cudaMemcpy calls cannot be matched with their copies (" + t.c.Why(capture.FactCorrelation) + ")"
	}
	names := []string{"h2d-pageable", "h2d-pinned", "d2h-pageable", "d2h-pinned"}
	if t.hasAnyRange(names...) {
		return t.part1NVTX(dir)
	}
	sd, why := t.part1Runs(dir)
	if sd != nil && t.c.Has(capture.FactNVTX) {
		sd.how += fmt.Sprintf("; the trace has no NVTX ranges %s-pageable/%s-pinned", dir, dir)
	}
	return sd, why
}

// copyOps returns the thread's copy operations inside r, in call order:
// blocking cudaMemcpy calls, and cudaMemcpyAsync calls each followed by a
// synchronize (how frameworks make a blocking copy). nAsync counts the
// latter.
func (t *traceCtx) copyOps(group string, r capture.Range) (ops []callCopy, nAsync int, why string) {
	var calls []capture.APICall
	for _, a := range t.calls {
		if (a.Name == apiMemcpy || a.Name == apiMemcpyAsync) && r.Contains(a.Start, a.End) {
			calls = append(calls, a)
		}
	}
	for i, a := range calls {
		m := t.memcpy[a.CorrelationID]
		if m == nil {
			return nil, 0, fmt.Sprintf("%s %s in NVTX range %q has no copy record in %s", a.Name, t.ref(a), group, t.cpyTab)
		}
		op := callCopy{call: a, cp: m, end: a.End}
		if a.Name == apiMemcpyAsync {
			s := t.syncAfter(a)
			if s == nil || (i+1 < len(calls) && calls[i+1].Start < s.Start) {
				return nil, 0, fmt.Sprintf("cudaMemcpyAsync %s in NVTX range %q is not followed by a synchronize before the next copy, so when its copy was done is not known",
					t.ref(a), group)
			}
			op.end = s.End
			nAsync++
		}
		ops = append(ops, op)
	}
	return ops, nAsync, ""
}

// syncAfter returns the thread's first cudaStreamSynchronize or
// cudaDeviceSynchronize call that starts after a ends, or nil.
func (t *traceCtx) syncAfter(a capture.APICall) *capture.APICall {
	i := sort.Search(len(t.syncs), func(i int) bool { return t.syncs[i].Start >= a.End })
	if i == len(t.syncs) {
		return nil
	}
	return &t.syncs[i]
}

// warmupsOf says how many of a group's n operations are warm-ups: n minus
// the timed runs the program's own numbers report for the group when they
// give them, else the lesson's count, always leaving one timed operation.
func warmupsOf(n, lesson, progRuns int) (warm int, fromProgram bool) {
	if progRuns > 0 && progRuns <= n {
		return n - progRuns, true
	}
	w := lesson
	if w > n-1 {
		w = n - 1
	}
	if w < 0 {
		w = 0
	}
	return w, false
}

// progKernelRuns is the program's count of timed launches of a part 3
// variant, or 0.
func (t *traceCtx) progKernelRuns(variant vocab.Variant) int {
	if t.c.Program == nil {
		return 0
	}
	for _, k := range t.c.Program.Kernels {
		if strings.EqualFold(string(k.Variant), string(variant)) {
			return k.Runs
		}
	}
	return 0
}

// progCopyRuns is the program's count of timed runs of a part 1 row, or 0.
func (t *traceCtx) progCopyRuns(dir vocab.Direction, src vocab.MemKind, bytes int64) int {
	if t.c.Program == nil {
		return 0
	}
	for _, c := range t.c.Program.Copies {
		if strings.EqualFold(string(c.Direction), string(dir)) && strings.EqualFold(string(c.Source), string(src)) && c.Bytes == bytes {
			return c.Runs
		}
	}
	return 0
}

// countsText describes a group's copies per size: "13 x 1 MiB, 13 x 4 MiB".
func countsText(bySize map[int64][]callCopy) string {
	var sizes []int64
	for b := range bySize {
		sizes = append(sizes, b)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	parts := make([]string, len(sizes))
	for i, b := range sizes {
		parts[i] = fmt.Sprintf("%d x %s", len(bySize[b]), sizeName(b))
	}
	return strings.Join(parts, ", ")
}

// lessonShaped reports whether a part 1 group is exactly the lesson's: its
// sizes, 13 copies each.
func lessonShaped(bySize map[int64][]callCopy) bool {
	if len(bySize) != len(sweepSizes) {
		return false
	}
	for _, b := range sweepSizes {
		if len(bySize[b]) != perSize {
			return false
		}
	}
	return true
}

func (t *traceCtx) part1NVTX(dir vocab.Direction) (*sweepData, string) {
	bySrc := map[vocab.MemKind]map[int64][]callCopy{}
	var hows, notes []string
	anyAsync := 0
	for _, src := range sources {
		g, why := t.part1Range(dir, src)
		if why != "" {
			return nil, why
		}
		bySrc[src] = g.bySize
		hows = append(hows, g.how)
		anyAsync += g.nAsync
		if g.note != "" {
			notes = append(notes, g.note)
		}
	}
	t.orderNote(string(dir)+"-pageable", string(dir)+"-pinned")
	sd := &sweepData{dir: dir, pageable: map[int64]timing{}, pinned: map[int64]timing{}, table: t.apiTab}
	if sd.sizes = t.sharedSizes(dir, bySrc); len(sd.sizes) == 0 {
		return nil, fmt.Sprintf("NVTX ranges %s-pageable and %s-pinned share no copy size", dir, dir)
	}
	shaped := lessonShaped(bySrc[vocab.MemPageable]) && lessonShaped(bySrc[vocab.MemPinned]) && anyAsync == 0
	fromProg := false
	for _, src := range sources {
		for _, b := range sd.sizes {
			group := bySrc[src][b]
			warm, fp := warmupsOf(len(group), warmups, t.progCopyRuns(dir, src, b))
			fromProg = fromProg || fp
			tm := t.timed(fmt.Sprintf("%s %s %s", dir, sizeName(b), src), group[warm:])
			if src == vocab.MemPageable {
				sd.pageable[b] = tm
			} else {
				sd.pinned[b] = tm
			}
			if !shaped {
				notes = append(notes, fmt.Sprintf("%s %s %s: %d copies, the last %d timed", dir, src, sizeName(b), len(group), len(group)-warm))
			}
		}
	}
	if shaped {
		sd.how = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s in %s; size and direction from %s by correlation id; %d per size (%d warm-up + %d timed), the last %d averaged",
			t.apiTab, t.thread(), strings.Join(hows, " and "), t.cpyTab, perSize, warmups, timedRuns, timedRuns)
	} else {
		rule := fmt.Sprintf("the first %d of each size taken as warm-ups (the lesson's count), at least one timed", warmups)
		if fromProg {
			rule = "warm-ups = copies per size minus the timed runs the program's numbers report"
		}
		sd.how = fmt.Sprintf("copy durations (%s) on thread %s in %s; size and direction from %s by correlation id; %s",
			t.apiTab, t.thread(), strings.Join(hows, " and "), t.cpyTab, rule)
	}
	if len(notes) > 0 {
		sd.how += "; " + strings.Join(notes, "; ")
	}
	return sd, ""
}

// rangeGroup is what one part 1 NVTX range holds: its copies of the
// range's direction by size, how many were cudaMemcpyAsync + synchronize,
// and how it was read.
type rangeGroup struct {
	bySize map[int64][]callCopy
	nAsync int
	how    string // "NVTX range NAME [start, end] ns"
	note   string // the copy + synchronize note, if any
}

// part1Range reads one part 1 range: its copies of the direction by size,
// the others set aside; copies of one size from host memory of several
// kinds make the group ambiguous.
func (t *traceCtx) part1Range(dir vocab.Direction, src vocab.MemKind) (rangeGroup, string) {
	kind := copyKindOf(dir)
	name := string(dir) + "-" + string(src)
	r, why := t.rangeNamed(name)
	if why != "" {
		return rangeGroup{}, why
	}
	ops, nAsync, why := t.copyOps(name, r)
	if why != "" {
		return rangeGroup{}, why
	}
	g := rangeGroup{bySize: map[int64][]callCopy{}, nAsync: nAsync, how: fmt.Sprintf("NVTX range %s %s", name, rangeSpan(r))}
	aside := map[capture.CopyKind]int{}
	hosts := map[int64]map[capture.MemKind]bool{}
	for _, o := range ops {
		if o.cp.Kind != kind {
			aside[o.cp.Kind]++
			continue
		}
		t.checkHostKind(name, src, o.cp, dir)
		g.bySize[o.cp.Bytes] = append(g.bySize[o.cp.Bytes], o)
		if hosts[o.cp.Bytes] == nil {
			hosts[o.cp.Bytes] = map[capture.MemKind]bool{}
		}
		hosts[o.cp.Bytes][hostKind(o.cp)] = true
	}
	if t.c.Has(capture.FactMemoryKinds) {
		for b, h := range hosts {
			if len(h) > 1 {
				return rangeGroup{}, fmt.Sprintf("NVTX range %q holds %s copies of %s from host memory of %d kinds, so its group is ambiguous", name, kind, sizeName(b), len(h))
			}
		}
	}
	if len(aside) > 0 {
		t.diags.add(CodeSetAside, diag.Info, fmt.Sprintf("NVTX range %q also holds %s; set aside: the group is its %s copies", name, kindCounts(aside), kind))
	}
	if len(g.bySize) == 0 {
		return rangeGroup{}, fmt.Sprintf("NVTX range %q holds no %s cudaMemcpy or cudaMemcpyAsync copies on thread %s", name, kind, t.thread())
	}
	if nAsync > 0 {
		t.diags.add(CodeCopySync, diag.Info, fmt.Sprintf(
			"NVTX range %q holds %d cudaMemcpyAsync calls each followed by a synchronize, not blocking cudaMemcpy calls: each such copy is timed from the call's start to the end of the synchronize",
			name, nAsync))
		g.note = fmt.Sprintf("%s: %d copies made as cudaMemcpyAsync + synchronize, timed from the call's start to the synchronize's end", name, nAsync)
	}
	if !lessonShaped(g.bySize) {
		t.diags.add(CodeLessonShape, diag.Info, fmt.Sprintf("NVTX range %q holds %s; the lesson makes %d of each of %s (%d warm-up + %d timed)",
			name, countsText(g.bySize), perSize, sizeList(sweepSizes), warmups, timedRuns))
	}
	return g, ""
}

// sharedSizes returns, ascending, the sizes both sources' groups have; the
// others are set aside with a diagnostic.
func (t *traceCtx) sharedSizes(dir vocab.Direction, bySrc map[vocab.MemKind]map[int64][]callCopy) []int64 {
	var sizes []int64
	var lone []string
	for b := range bySrc[vocab.MemPageable] {
		if _, ok := bySrc[vocab.MemPinned][b]; ok {
			sizes = append(sizes, b)
		} else {
			lone = append(lone, "pageable "+sizeName(b))
		}
	}
	for b := range bySrc[vocab.MemPinned] {
		if _, ok := bySrc[vocab.MemPageable][b]; !ok {
			lone = append(lone, "pinned "+sizeName(b))
		}
	}
	if len(lone) > 0 {
		sort.Strings(lone)
		t.diags.add(CodeSetAside, diag.Info, fmt.Sprintf("the %s sweep has sizes with copies from one source only, set aside: %s", dir, strings.Join(lone, ", ")))
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	return sizes
}

// kindCounts describes copies by direction: "3 DtoH copies".
func kindCounts(n map[capture.CopyKind]int) string {
	var ks []string
	for k := range n {
		ks = append(ks, string(k))
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%d %s copies", n[capture.CopyKind(k)], k)
	}
	return strings.Join(parts, ", ")
}

// timed summarises the timed calls of a group by their API durations.
func (t *traceCtx) timed(label string, group []callCopy) timing {
	tm := timing{runs: len(group)}
	calls := make([]capture.APICall, len(group))
	for i, g := range group {
		tm.durMs = append(tm.durMs, g.ms())
		tm.corr = append(tm.corr, g.call.CorrelationID)
		calls[i] = g.call
	}
	tm.ms = mean(tm.durMs)
	tm.at = t.records(label, calls)
	return tm
}

type runKey struct {
	kind  capture.CopyKind
	host  capture.MemKind
	bytes int64
}

// copyRuns splits a thread's copies into runs of consecutive copies with
// the same direction, host memory kind and size, and keeps the runs longer
// than the lesson's warm-ups, by key.
func copyRuns(seq []callCopy) map[runKey][][]callCopy {
	runs := map[runKey][][]callCopy{}
	for i := 0; i < len(seq); {
		j := i + 1
		k := runKey{seq[i].cp.Kind, hostKind(seq[i].cp), seq[i].cp.Bytes}
		for j < len(seq) && (runKey{seq[j].cp.Kind, hostKind(seq[j].cp), seq[j].cp.Bytes}) == k {
			j++
		}
		if j-i > warmups {
			runs[k] = append(runs[k], seq[i:j])
		}
		i = j
	}
	return runs
}

// runSizes returns, ascending, the sizes of a direction with exactly one
// run of each source; the others are set aside with a diagnostic.
func (t *traceCtx) runSizes(dir vocab.Direction, runs map[runKey][][]callCopy) []int64 {
	kind := copyKindOf(dir)
	var out []int64
	var aside []string
	sizes := map[int64]bool{}
	for k := range runs {
		if k.kind == kind {
			sizes[k.bytes] = true
		}
	}
	for b := range sizes {
		p, q := runs[runKey{kind, capture.MemPageable, b}], runs[runKey{kind, capture.MemPinned, b}]
		switch {
		case len(p) == 1 && len(q) == 1:
			out = append(out, b)
		case len(p) > 1 || len(q) > 1:
			aside = append(aside, fmt.Sprintf("%s (%d pageable and %d pinned runs: ambiguous)", sizeName(b), len(p), len(q)))
		default:
			aside = append(aside, fmt.Sprintf("%s (%d pageable and %d pinned runs)", sizeName(b), len(p), len(q)))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if len(aside) > 0 {
		sort.Strings(aside)
		t.diags.add(CodeSetAside, diag.Info, fmt.Sprintf("without NVTX ranges, the %s sweep's sizes without exactly one run of each source are set aside: %s", dir, strings.Join(aside, ", ")))
	}
	return out
}

// part1Runs finds part 1 without NVTX: runs of consecutive cudaMemcpy calls
// on the thread whose copies share direction, host memory kind and size.
func (t *traceCtx) part1Runs(dir vocab.Direction) (*sweepData, string) {
	if !t.c.Has(capture.FactMemoryKinds) {
		return nil, "without NVTX ranges the pageable and pinned groups are told apart by the copies' memory kinds, which this trace lacks (" + t.c.Why(capture.FactMemoryKinds) + ")"
	}
	var seq []callCopy
	for _, a := range t.named(apiMemcpy) {
		m := t.memcpy[a.CorrelationID]
		if m == nil {
			return nil, fmt.Sprintf("cudaMemcpy %s on thread %s has no copy record in %s", t.ref(a), t.thread(), t.cpyTab)
		}
		seq = append(seq, callCopy{a, m, a.End})
	}
	runs := copyRuns(seq)
	kind := copyKindOf(dir)
	// A "pinned" sweep whose copies are pageable shows as two pageable runs
	// per size and no pinned run: the two cannot be told apart.
	pinnedRuns, twice := 0, 0
	for k, rs := range runs {
		if k.kind != kind {
			continue
		}
		if k.host == capture.MemPinned {
			pinnedRuns += len(rs)
		} else if k.host == capture.MemPageable && len(rs) == 2 {
			twice++
		}
	}
	if pinnedRuns == 0 && twice > 0 {
		t.diags.add(CodePinnedSourcePageable, diag.Error, fmt.Sprintf(
			"the %s sweep has two runs of pageable copies per size and no pinned ones: the pinned buffer probably is not pinned; check that it came from cudaMallocHost and that the return value was checked", dir))
		return nil, fmt.Sprintf("the %s sweep's copies are all pageable (two runs per size, none pinned), so without NVTX ranges its pageable and pinned groups cannot be told apart", dir)
	}
	sd := &sweepData{dir: dir, pageable: map[int64]timing{}, pinned: map[int64]timing{}, table: t.apiTab}
	var notes []string
	shaped := true
	if sd.sizes = t.runSizes(dir, runs); len(sd.sizes) == 0 {
		return nil, fmt.Sprintf("found no size with exactly one run of more than %d consecutive %s cudaMemcpy calls from pageable and one from pinned memory on thread %s",
			warmups, kind, t.thread())
	}
	for _, src := range sources {
		for _, b := range sd.sizes {
			run := runs[runKey{kind, capture.MemKind(src), b}][0]
			warm, _ := warmupsOf(len(run), warmups, t.progCopyRuns(dir, src, b))
			if len(run) != perSize {
				shaped = false
			}
			notes = append(notes, fmt.Sprintf("%s %s %s: %d calls, the last %d timed", dir, src, sizeName(b), len(run), len(run)-warm))
			tm := t.timed(fmt.Sprintf("%s %s %s", dir, sizeName(b), src), run[warm:])
			if src == vocab.MemPageable {
				sd.pageable[b] = tm
			} else {
				sd.pinned[b] = tm
			}
		}
	}
	if len(sd.sizes) != len(sweepSizes) {
		shaped = false
	}
	for i, b := range sd.sizes {
		if shaped && b != sweepSizes[i] {
			shaped = false
		}
	}
	if shaped {
		sd.how = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s, found without NVTX as runs of %d consecutive calls with the same direction, host memory kind and size (%s by correlation id); the last %d of each run averaged",
			t.apiTab, t.thread(), perSize, t.cpyTab, timedRuns)
		return sd, ""
	}
	t.diags.add(CodeLessonShape, diag.Info, fmt.Sprintf("without NVTX ranges, the %s sweep's runs of cudaMemcpy calls are: %s; the lesson makes %d of each of %s (%d warm-up + %d timed)",
		dir, strings.Join(notes, "; "), perSize, sizeList(sweepSizes), warmups, timedRuns))
	sd.how = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s, found without NVTX as runs of more than %d consecutive calls with the same direction, host memory kind and size (%s by correlation id); %s",
		t.apiTab, t.thread(), warmups, t.cpyTab, strings.Join(notes, "; "))
	return sd, ""
}

// part2 finds the timed cudaMemcpyAsync calls of both sources: with NVTX,
// what ranges async-pageable and async-pinned hold; without NVTX, by their
// copy records (host-to-device, host memory kind, size) and order; without
// copy records either, by order alone when the thread makes exactly the
// lesson's calls.
func (t *traceCtx) part2() (*asyncData, string) {
	all := t.named(apiMemcpyAsync)
	withCopies := t.c.Has(capture.FactMemcpy) && t.c.Has(capture.FactCorrelation)
	groups, how, why := t.part2Groups(all, withCopies)
	if why != "" {
		return nil, why
	}
	syncs := t.named(apiStreamSync)
	if len(syncs) == 0 {
		return nil, fmt.Sprintf("no cudaStreamSynchronize calls on thread %s, so no copy's completion is known", t.thread())
	}
	ad := &asyncData{side: map[vocab.MemKind]*asyncSide{}}
	for _, src := range sources {
		g := groups[src]
		mixed := false
		s := &asyncSide{runs: len(g)}
		var comp []float64
		for _, a := range g {
			sync := nextSync(syncs, a)
			if sync == nil {
				return nil, fmt.Sprintf("cudaMemcpyAsync %s has no following cudaStreamSynchronize on thread %s", t.ref(a), t.thread())
			}
			if n := nextAfter(all, a); n != nil && n.Start < sync.Start {
				return nil, fmt.Sprintf("cudaMemcpyAsync %s is followed by another cudaMemcpyAsync (%s) before its cudaStreamSynchronize", t.ref(a), t.ref(*n))
			}
			s.callDurMs = append(s.callDurMs, float64(a.Duration())/1e6)
			comp = append(comp, float64(sync.End-a.Start)/1e6)
			s.corr = append(s.corr, a.CorrelationID)
			if withCopies {
				m := t.memcpy[a.CorrelationID]
				if m == nil {
					return nil, fmt.Sprintf("cudaMemcpyAsync %s has no copy record in %s", t.ref(a), t.cpyTab)
				}
				if m.Kind != capture.CopyHtoD {
					return nil, fmt.Sprintf("cudaMemcpyAsync %s copies %s; the program's are host-to-device", t.ref(a), m.Kind)
				}
				t.checkHostKind("async-"+string(src), src, m, vocab.H2D)
				if s.totalBytes > 0 && m.Bytes != s.bytes {
					mixed = true
				}
				s.bytes = m.Bytes
				s.totalBytes += m.Bytes
			}
		}
		if mixed {
			s.bytes = 0
		}
		s.callMs = mean(s.callDurMs)
		s.completionMs = mean(comp)
		s.at = t.records(string(src), g)
		ad.side[src] = s
	}
	how += fmt.Sprintf(" (%s); call = the call's duration, completion = end of the next cudaStreamSynchronize on the thread minus the call's start", t.apiTab)
	if withCopies {
		how += fmt.Sprintf("; direction, host memory kind and bytes from %s by correlation id", t.cpyTab)
	} else {
		how += "; no copy records, so memory kinds are not confirmed"
	}
	ad.how, ad.table = how, t.apiTab
	return ad, ""
}

// part2Groups splits the thread's cudaMemcpyAsync calls (all) into the
// pageable and pinned groups' timed calls: by NVTX range where the capture
// has them, else by copy records, else by call order. how says which; why,
// when not empty, why the groups cannot be found.
func (t *traceCtx) part2Groups(all []capture.APICall, withCopies bool) (map[vocab.MemKind][]capture.APICall, string, string) {
	switch {
	case t.hasAnyRange("async-pageable", "async-pinned"):
		return t.part2NVTX(all, withCopies)
	case withCopies && t.c.Has(capture.FactMemoryKinds):
		groups := map[vocab.MemKind][]capture.APICall{}
		how, why := t.part2Copies(all, groups)
		if why != "" {
			return nil, "", why
		}
		return groups, how, ""
	default:
		if len(all) != asyncTotal {
			return nil, "", fmt.Sprintf("found %d cudaMemcpyAsync calls on thread %s and no NVTX ranges async-pageable/async-pinned; the program makes exactly %d (%d pageable, then %d pinned, each 1 warm-up + %d timed), so the groups cannot be told apart",
				len(all), t.thread(), asyncTotal, asyncPerSrc, asyncPerSrc, timedRuns)
		}
		groups := map[vocab.MemKind][]capture.APICall{}
		groups[vocab.MemPageable] = all[1:asyncPerSrc]
		groups[vocab.MemPinned] = all[asyncPerSrc+1:]
		how := fmt.Sprintf("no NVTX ranges: the %d cudaMemcpyAsync calls on thread %s in order, calls 2-%d pageable and %d-%d pinned (calls 1 and %d are warm-ups)",
			asyncTotal, t.thread(), asyncPerSrc, asyncPerSrc+2, asyncTotal, asyncPerSrc+1)
		return groups, how, ""
	}
}

// part2NVTX finds part 2's groups as what NVTX ranges async-pageable and
// async-pinned hold: their host-to-device cudaMemcpyAsync calls, all timed.
func (t *traceCtx) part2NVTX(all []capture.APICall, withCopies bool) (groups map[vocab.MemKind][]capture.APICall, how, why string) {
	groups = map[vocab.MemKind][]capture.APICall{}
	var hows []string
	in, shaped := 0, true
	for _, src := range sources {
		name := "async-" + string(src)
		r, why := t.rangeNamed(name)
		if why != "" {
			return nil, "", why
		}
		g := t.inRange(apiMemcpyAsync, r)
		if withCopies {
			g = t.hostToDevice(name, g)
			if t.c.Has(capture.FactMemoryKinds) {
				hosts := map[capture.MemKind]bool{}
				for _, a := range g {
					if m := t.memcpy[a.CorrelationID]; m != nil {
						hosts[hostKind(m)] = true
					}
				}
				if len(hosts) > 1 {
					return nil, "", fmt.Sprintf("NVTX range %q holds cudaMemcpyAsync copies from host memory of %d kinds, so its group is ambiguous", name, len(hosts))
				}
			}
		}
		if len(g) == 0 {
			return nil, "", fmt.Sprintf("NVTX range %q holds no host-to-device cudaMemcpyAsync calls on thread %s", name, t.thread())
		}
		if len(g) != timedRuns {
			shaped = false
			t.diags.add(CodeLessonShape, diag.Info, fmt.Sprintf("NVTX range %q holds %d cudaMemcpyAsync calls on thread %s; the lesson times %d; the group is the %d it holds",
				name, len(g), t.thread(), timedRuns, len(g)))
		}
		in += len(g)
		groups[src] = g
		hows = append(hows, fmt.Sprintf("NVTX range %s %s", name, rangeSpan(r)))
	}
	t.orderNote("async-pageable", "async-pinned")
	if len(all) != asyncTotal {
		t.diags.add(CodeAsyncPremise, diag.Info, fmt.Sprintf(
			"thread %s makes %d cudaMemcpyAsync calls, %d of them outside NVTX ranges async-pageable/async-pinned; the lesson takes part 2's %d (1 warm-up + %d timed per source) to be the program's only ones; the groups are what the ranges hold",
			t.thread(), len(all), len(all)-in, asyncTotal, timedRuns))
	}
	if shaped {
		how = fmt.Sprintf("the %d cudaMemcpyAsync calls in %s", timedRuns, strings.Join(hows, " and "))
	} else {
		how = fmt.Sprintf("the cudaMemcpyAsync calls in %s (%d and %d calls)", strings.Join(hows, " and "), len(groups[vocab.MemPageable]), len(groups[vocab.MemPinned]))
	}
	return groups, how, ""
}

// hostToDevice keeps a range's calls whose copies are host-to-device and
// sets the others aside with a diagnostic.
func (t *traceCtx) hostToDevice(group string, calls []capture.APICall) []capture.APICall {
	var out []capture.APICall
	aside := map[capture.CopyKind]int{}
	for _, a := range calls {
		if m := t.memcpy[a.CorrelationID]; m != nil && m.Kind != capture.CopyHtoD {
			aside[m.Kind]++
			continue
		}
		out = append(out, a)
	}
	if len(aside) > 0 {
		t.diags.add(CodeSetAside, diag.Info, fmt.Sprintf("NVTX range %q also holds %s; set aside: part 2's copies are host-to-device", group, kindCounts(aside)))
	}
	return out
}

// progAsyncRuns is the program's count of timed part 2 calls of a source, or 0.
func (t *traceCtx) progAsyncRuns(src vocab.MemKind) int {
	if t.c.Program == nil {
		return 0
	}
	for _, a := range t.c.Program.Async {
		if strings.EqualFold(string(a.Source), string(src)) {
			return a.Runs
		}
	}
	return 0
}

// part2Copies finds part 2's groups without NVTX: the thread's
// host-to-device cudaMemcpyAsync calls of the size that pageable and pinned
// copies share most, split by host memory kind, in order, the first of each
// taken as the warm-up. Other calls are set aside with a diagnostic.
func (t *traceCtx) part2Copies(all []capture.APICall, groups map[vocab.MemKind][]capture.APICall) (how, why string) {
	type key struct {
		host  capture.MemKind
		bytes int64
	}
	by := map[key][]capture.APICall{}
	for _, a := range all {
		m := t.memcpy[a.CorrelationID]
		if m == nil {
			return "", fmt.Sprintf("cudaMemcpyAsync %s has no copy record in %s", t.ref(a), t.cpyTab)
		}
		if hk := hostKind(m); m.Kind == capture.CopyHtoD && (hk == capture.MemPageable || hk == capture.MemPinned) {
			by[key{hk, m.Bytes}] = append(by[key{hk, m.Bytes}], a)
		}
	}
	best, bestN := int64(-1), 0
	for k, p := range by {
		if k.host != capture.MemPageable {
			continue
		}
		n := min(len(p), len(by[key{capture.MemPinned, k.bytes}]))
		if n > 0 && (n > bestN || (n == bestN && k.bytes > best)) {
			best, bestN = k.bytes, n
		}
	}
	if best < 0 {
		return "", fmt.Sprintf("no NVTX ranges async-pageable/async-pinned, and thread %s's %d cudaMemcpyAsync calls include no size copied host-to-device from both pageable and pinned memory, so the groups cannot be found",
			t.thread(), len(all))
	}
	var parts []string
	for _, src := range sources {
		g := by[key{capture.MemKind(src), best}]
		warm, _ := warmupsOf(len(g), 1, t.progAsyncRuns(src))
		groups[src] = g[warm:]
		if len(g) != asyncPerSrc {
			t.diags.add(CodeLessonShape, diag.Info, fmt.Sprintf("thread %s makes %d host-to-device cudaMemcpyAsync calls of %s from %s memory; the lesson makes %d (1 warm-up + %d timed)",
				t.thread(), len(g), sizeName(best), src, asyncPerSrc, timedRuns))
		}
		parts = append(parts, fmt.Sprintf("%d %s (%d warm-up)", len(g), src, warm))
	}
	if aside := len(all) - len(by[key{capture.MemPageable, best}]) - len(by[key{capture.MemPinned, best}]); aside > 0 {
		t.diags.add(CodeAsyncPremise, diag.Info, fmt.Sprintf(
			"thread %s makes %d cudaMemcpyAsync calls; %d of them are not host-to-device copies of %s from pageable or pinned memory and are set aside (the lesson takes part 2's copies to be the program's only ones)",
			t.thread(), len(all), aside, sizeName(best)))
	}
	how = fmt.Sprintf("no NVTX ranges: thread %s's host-to-device cudaMemcpyAsync calls of %s, split by their copies' host memory kind (%s by correlation id), in order: %s",
		t.thread(), sizeName(best), t.cpyTab, strings.Join(parts, ", "))
	return how, ""
}

func nextSync(syncs []capture.APICall, a capture.APICall) *capture.APICall {
	i := sort.Search(len(syncs), func(i int) bool { return syncs[i].Start >= a.End })
	if i == len(syncs) {
		return nil
	}
	return &syncs[i]
}

func nextAfter(calls []capture.APICall, a capture.APICall) *capture.APICall {
	for i := range calls {
		if calls[i].Start > a.Start {
			return &calls[i]
		}
	}
	return nil
}

// part4 derives prediction 4 from part 2's groups.
func (t *traceCtx) part4(ad *asyncData) (*callTotals, *byteTotals, string) {
	p, q := ad.side[vocab.MemPageable], ad.side[vocab.MemPinned]
	ct := &callTotals{pageableMs: sum(p.callDurMs), pinnedMs: sum(q.callDurMs), pageableN: p.runs, pinnedN: q.runs,
		perCall: &CallDurations{From: SourceTrace, PageableMs: p.callDurMs, PinnedMs: q.callDurMs,
			PageableCorrelationIDs: p.corr, PinnedCorrelationIDs: q.corr},
		how:   fmt.Sprintf("%s durations of the timed cudaMemcpyAsync calls: pageable %s, pinned %s; groups: %s", t.apiTab, p.at, q.at, ad.how),
		table: t.apiTab, recs: recordsOf(p.at, q.at)}
	if p.totalBytes > 0 && q.totalBytes > 0 && p.runs != q.runs && p.bytes > 0 && q.bytes > 0 {
		return ct, &byteTotals{pageable: p.bytes, pinned: q.bytes, perCopy: true,
			how: fmt.Sprintf("%s bytes of the copies correlated with the timed calls: pageable %d x %d B (%s), pinned %d x %d B (%s); the groups differ in size, so the bytes per copy are compared; groups: %s",
				t.cpyTab, p.runs, p.bytes, p.at, q.runs, q.bytes, q.at, ad.how), table: t.cpyTab, recs: recordsOf(p.at, q.at)}, ""
	}
	if p.totalBytes > 0 && q.totalBytes > 0 {
		return ct, &byteTotals{pageable: p.totalBytes, pinned: q.totalBytes,
			how: fmt.Sprintf("%s bytes of the copies correlated with the timed calls: pageable %d x %d B (%s), pinned %d x %d B (%s); groups: %s",
				t.cpyTab, p.runs, p.bytes, p.at, q.runs, q.bytes, q.at, ad.how), table: t.cpyTab, recs: recordsOf(p.at, q.at)}, ""
	}
	return ct, nil, t.bytesFromSummary()
}

// bytesFromSummary explains whether cuda_gpu_mem_size_sum alone can show
// that both groups moved the same bytes. It cannot in general: the report
// totals every host-to-device copy of the run, part 1's and part 3's too.
func (t *traceCtx) bytesFromSummary() string {
	for _, s := range t.c.MemSummary {
		if s.Kind == capture.CopyHtoD && s.TotalMB > 0 {
			return fmt.Sprintf("no per-copy records; cuda_gpu_mem_size_sum gives only totals per copy kind (host-to-device: %d copies, %.3f MB), which mix part 2's copies with part 1's and part 3's, so the two groups' bytes cannot be separated",
				s.Count, s.TotalMB)
		}
	}
	return "no per-copy records and no per-kind byte totals in the input"
}

// part3 finds the timed scaleCopy launches of both variants.
func (t *traceCtx) part3(prog *capture.Measurements) (*kernelData, string) {
	if !t.c.Has(capture.FactKernels) {
		return nil, "no per-launch kernel records (" + t.c.Why(capture.FactKernels) + ")"
	}
	useLaunch := len(t.launch) > 0
	var all, mine []launch // the thread's scaleCopy launches; all its launches
	for _, k := range t.c.Kernels {
		var l launch
		if useLaunch {
			a := t.launch[k.CorrelationID]
			if a == nil {
				continue
			}
			l = launch{k, a.Start, a.End}
		} else if k.PID == t.pid || k.PID == 0 || t.pid == 0 {
			l = launch{k, k.Start, k.End}
		} else {
			continue
		}
		mine = append(mine, l)
		if k.Name == kernelName {
			all = append(all, l)
		}
	}
	owner := "whose cudaLaunchKernel call is on thread " + t.thread()
	if !useLaunch {
		owner = fmt.Sprintf("of process %d (no cudaLaunchKernel calls in the input)", t.pid)
	}
	groups := map[vocab.Variant][]launch{}
	var how string
	if t.hasAnyRange("kernel-device-resident", "kernel-zero-copy") {
		var why string
		if groups, how, why = t.part3NVTX(mine, owner); why != "" {
			return nil, why
		}
	} else {
		if len(all) != launchTotal {
			return nil, fmt.Sprintf("found %d scaleCopy launches %s and no NVTX ranges kernel-device-resident/kernel-zero-copy; the program makes exactly %d (per variant: 1 gate, %d warm-up, %d timed)",
				len(all), owner, launchTotal, warmups, timedRuns)
		}
		groups[vocab.DeviceResident] = all[1+warmups : launchPerVar]
		groups[vocab.ZeroCopy] = all[launchPerVar+1+warmups:]
		how = fmt.Sprintf("no NVTX ranges: the %d scaleCopy launches (%s) %s in order, launches %d-%d device-resident and %d-%d zero-copy (each variant: 1 gate, %d warm-up, %d timed)",
			launchTotal, t.kernTab, owner, 2+warmups, launchPerVar, launchPerVar+2+warmups, launchTotal, warmups, timedRuns)
	}
	kd := &kernelData{ms: map[vocab.Variant]timing{}, how: how, table: t.kernTab}
	kd.bytes, kd.bytesFrom = kernelBytesOf(prog, t.diags)
	for _, v := range variants {
		tm := timing{runs: len(groups[v])}
		for _, l := range groups[v] {
			tm.durMs = append(tm.durMs, float64(l.k.Duration())/1e6)
			tm.corr = append(tm.corr, l.k.CorrelationID)
		}
		tm.ms = mean(tm.durMs)
		tm.at = corrRecords(string(v), t.kernTab, tm.corr)
		kd.ms[v] = tm
	}
	return kd, ""
}

// launch is one kernel launch: its GPU record and its call's (or, without
// calls, its own) start and end.
type launch struct {
	k     capture.Kernel
	start int64
	end   int64
}

// part3NVTX finds part 3's groups as the most launched kernel in NVTX ranges
// kernel-device-resident and kernel-zero-copy, whatever its name, the first
// launches of each taken as warm-ups.
func (t *traceCtx) part3NVTX(mine []launch, owner string) (map[vocab.Variant][]launch, string, string) {
	groups := map[vocab.Variant][]launch{}
	var hows, names []string
	shaped := true
	for _, v := range variants {
		name := "kernel-" + string(v)
		r, why := t.rangeNamed(name)
		if why != "" {
			return nil, "", why
		}
		byName := map[string][]launch{}
		var order []string
		for _, l := range mine {
			if r.Contains(l.start, l.end) {
				if byName[l.k.Name] == nil {
					order = append(order, l.k.Name)
				}
				byName[l.k.Name] = append(byName[l.k.Name], l)
			}
		}
		if len(order) == 0 {
			return nil, "", fmt.Sprintf("NVTX range %q holds no kernel launches %s", name, owner)
		}
		// The group is the range's most launched kernel.
		kn := order[0]
		for _, n := range order[1:] {
			if len(byName[n]) > len(byName[kn]) {
				kn = n
			}
		}
		g := byName[kn]
		if len(order) > 1 {
			var aside []string
			for _, n := range order {
				if n != kn {
					aside = append(aside, fmt.Sprintf("%d x %s", len(byName[n]), n))
				}
			}
			t.diags.add(CodeSetAside, diag.Info, fmt.Sprintf("NVTX range %q launches other kernels besides %d x %s, set aside: %s", name, len(g), kn, strings.Join(aside, ", ")))
		}
		warm, _ := warmupsOf(len(g), warmups, t.progKernelRuns(v))
		if len(g) != launchPerVar-1 || kn != kernelName {
			shaped = false
			t.diags.add(CodeLessonShape, diag.Info, fmt.Sprintf("NVTX range %q holds %d launches of kernel %s; the lesson makes %d of %s (%d warm-up + %d timed); the last %d are timed",
				name, len(g), kn, launchPerVar-1, kernelName, warmups, timedRuns, len(g)-warm))
		}
		groups[v] = g[warm:]
		names = append(names, fmt.Sprintf("%s: %d x %s, the last %d timed", name, len(g), kn, len(g)-warm))
		hows = append(hows, fmt.Sprintf("NVTX range %s %s", name, rangeSpan(r)))
	}
	if shaped {
		return groups, fmt.Sprintf("scaleCopy kernel durations (%s) %s in %s, %d each, the last %d averaged", t.kernTab, owner, strings.Join(hows, " and "), launchPerVar-1, timedRuns), ""
	}
	return groups, fmt.Sprintf("kernel durations (%s) %s in %s, the range's most launched kernel (%s)", t.kernTab, owner, strings.Join(hows, " and "), strings.Join(names, "; ")), ""
}

// deviceCopy reads the device-to-device reference copy from the trace: the
// last 10 of 13 cudaMemcpy calls in NVTX range d2d-reference.
func (t *traceCtx) deviceCopy() (float64, string) {
	if !t.c.Has(capture.FactMemcpy) || !t.c.Has(capture.FactCorrelation) || !t.hasAnyRange("d2d-reference") {
		return 0, ""
	}
	r, why := t.rangeNamed("d2d-reference")
	if why != "" {
		return 0, ""
	}
	calls := t.inRange(apiMemcpy, r)
	if len(calls) != perSize {
		return 0, ""
	}
	var group []callCopy
	for _, a := range calls {
		m := t.memcpy[a.CorrelationID]
		if m == nil || m.Kind != capture.CopyDtoD || (len(group) > 0 && m.Bytes != group[0].cp.Bytes) {
			return 0, ""
		}
		group = append(group, callCopy{a, m, a.End})
	}
	// A device-to-device cudaMemcpy returns before the copy ends, so the
	// API call's duration says nothing of the copy: time the GPU records.
	var durMs []float64
	var corr []int64
	for _, g := range group[warmups:] {
		durMs = append(durMs, float64(g.cp.Duration())/1e6)
		corr = append(corr, g.call.CorrelationID)
	}
	ms := mean(durMs)
	b := group[0].cp.Bytes
	return gbps(2*b, ms), fmt.Sprintf("trace: device-to-device memcpy records of the cudaMemcpy calls in NVTX range d2d-reference, %s, last %d of %d (%s), mean GPU time %.4f ms, 2 x bytes / time",
		sizeName(b), timedRuns, perSize, corrSpan(corr), ms)
}

// orNone names a source for evidence: "(none)" where the input has none.
func orNone(source string) string {
	if source == "" {
		return "(none)"
	}
	return source
}
