package predictions

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/limits"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// traceCtx reads the program's groups of operations out of a trace.
type traceCtx struct {
	c        *capture.Capture
	pid, tid int64
	calls    []capture.APICall          // the program's thread, by start
	memcpy   copyIndex                  // the thread's copies, by correlation id
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

// hasTrace reports whether the capture holds any trace records at all.
func hasTrace(c *capture.Capture) bool {
	switch c.Format {
	case capture.FormatSQLite, capture.FormatNsysRep, capture.FormatCSV:
		return true
	}
	return len(c.Calls) > 0 || c.Memcpys.Len() > 0 || len(c.Kernels) > 0
}

// newTrace picks the program's thread and indexes its records. It returns
// nil and a reason when the capture has no API calls to read.
func newTrace(c *capture.Capture, diags *diagList) (*traceCtx, Why) {
	if !c.Has(records.FactAPITrace) {
		return nil, NoAPITrace{Lacks: c.Why(records.FactAPITrace)}
	}
	if len(c.Calls) == 0 {
		return nil, NoCalls{}
	}
	// The loaded calls' threads and, where the loader kept only the
	// program's thread, the counts of the threads it left out.
	threads := append(capture.CountThreads(c.Calls), c.OtherThreads...)
	sort.SliceStable(threads, func(i, j int) bool { return threads[i].Before(threads[j]) }) // the one rule
	top := threads[0]
	if len(threads) > 1 {
		var others []ThreadCalls
		for _, o := range threads[1:] {
			others = append(others, ThreadCalls{Thread: vocab.Thread{PID: o.PID, TID: o.TID}, Calls: o.Calls})
		}
		diags.Add(diag.Info, OtherThreads{Read: top, Others: others})
	}
	me := vocab.Thread{PID: top.PID, TID: top.TID}

	t := &traceCtx{c: c, pid: me.PID, tid: me.TID, diags: diags,
		launch:   map[int64]*capture.APICall{},
		openSeen: map[string]bool{}, kindWarned: map[string]bool{}}
	t.apiTab, t.cpyTab, t.kernTab, t.nvtxTab = orNone(c.Sources.API), orNone(c.Sources.Memcpy), orNone(c.Sources.Kernel), orNone(c.Sources.NVTX)
	// Where the loader kept the program's thread alone, its calls are the
	// capture's, already in start order: they are not copied.
	if onThread(c.Calls, me) && sort.SliceIsSorted(c.Calls, func(i, j int) bool { return c.Calls[i].Start < c.Calls[j].Start }) {
		t.calls = c.Calls
	} else {
		for _, a := range c.Calls {
			if a.PID == me.PID && a.TID == me.TID {
				t.calls = append(t.calls, a)
			}
		}
		sort.SliceStable(t.calls, func(i, j int) bool { return t.calls[i].Start < t.calls[j].Start })
	}
	mine := make([]int64, len(t.calls))
	for i := range t.calls {
		mine[i] = t.calls[i].CorrelationID
	}
	slices.Sort(mine)
	for i := range t.calls {
		if n := t.calls[i].Name; n == apiStreamSync || n == apiDeviceSync {
			t.syncs = append(t.syncs, t.calls[i])
		}
		if t.calls[i].Name == apiLaunchKernel {
			t.launch[t.calls[i].CorrelationID] = &t.calls[i]
		}
	}
	if c.Has(records.FactCorrelation) {
		for i, m := range c.Memcpys.All() {
			if _, ok := slices.BinarySearch(mine, m.CorrelationID); ok && (m.PID == 0 || me.PID == 0 || m.PID == me.PID) {
				t.memcpy.add(&c.Memcpys, i)
			}
		}
		t.memcpy.index()
	}
	if c.Has(records.FactNVTX) {
		for _, r := range c.Ranges {
			if (r.PID == me.PID && (r.TID == me.TID || r.TID == 0)) || (r.PID == 0 && r.TID == 0) {
				t.ranges = append(t.ranges, r)
			}
		}
	}
	return t, nil
}

func (t *traceCtx) thread() vocab.Thread { return vocab.Thread{PID: t.pid, TID: t.tid} }

// onThread reports whether every call is of thread me.
func onThread(calls []capture.APICall, me vocab.Thread) bool {
	for i := range calls {
		if calls[i].PID != me.PID || calls[i].TID != me.TID {
			return false
		}
	}
	return true
}

// copyIndex finds the thread's copies by correlation id: their indexes
// into the capture's copies, sorted by it (4 bytes a copy), the last added
// of a correlation id winning, as a map's assignment would.
type copyIndex struct {
	all *capture.Memcpys
	at  []int32
}

func (x *copyIndex) add(all *capture.Memcpys, i int) {
	x.all = all
	x.at = append(x.at, int32(i))
}

// index sorts the copies by correlation id, the later of two with one id
// first, and keeps that one.
func (x *copyIndex) index() {
	slices.SortStableFunc(x.at, func(a, b int32) int {
		if c := cmp.Compare(x.all.CorrelationID(int(a)), x.all.CorrelationID(int(b))); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	x.at = slices.CompactFunc(x.at, func(a, b int32) bool { return x.all.CorrelationID(int(a)) == x.all.CorrelationID(int(b)) })
}

// of returns the copy of correlation id corr, nil for none: a copy of
// the record, for an operation to keep.
func (x *copyIndex) of(corr int64) *capture.Memcpy {
	m, ok := x.find(corr)
	if !ok {
		return nil
	}
	return &m
}

// find returns the copy of correlation id corr, ok false for none.
func (x *copyIndex) find(corr int64) (m capture.Memcpy, ok bool) {
	if x.all == nil {
		return m, false
	}
	k, ok := slices.BinarySearchFunc(x.at, corr, func(i int32, c int64) int { return cmp.Compare(x.all.CorrelationID(int(i)), c) })
	if !ok {
		return m, false
	}
	return x.all.At(int(x.at[k])), true
}

// ref names one API call so that it can be found in the input: its CSV row
// where the input is a CSV report, else its correlation id.
func (t *traceCtx) ref(a capture.APICall) CallRef {
	return CallRef{Name: a.Name, Table: t.apiTab, Row: a.Row, Corr: a.CorrelationID}
}

// records names a group of calls: their CSV data rows where the input is a
// CSV report, else their correlation ids.
func (t *traceCtx) records(group GroupKey, calls []capture.APICall) *Records {
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

// named returns the places in t.calls of the thread's calls with the given
// name, in start order: 4 bytes a call where a copy of each would take 88,
// for a thread that makes 100,000s of one call.
func (t *traceCtx) named(name string) []int32 {
	n := 0 // counted first, so that the list is made once at its size
	for i := range t.calls {
		if t.calls[i].Name == name {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]int32, 0, n)
	for i := range t.calls {
		if t.calls[i].Name == name {
			out = append(out, int32(i))
		}
	}
	return out
}

// callsAt copies the calls at the places of t.calls that at lists.
func (t *traceCtx) callsAt(at []int32) []capture.APICall {
	out := make([]capture.APICall, len(at))
	for i, k := range at {
		out[i] = t.calls[k]
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
func (t *traceCtx) rangeNamed(name string) (capture.Range, Why) {
	rs := t.rangesNamed(name)
	switch len(rs) {
	case 0:
		return capture.Range{}, NoRange{Range: name, Thread: t.thread()}
	case 1:
	default:
		return capture.Range{}, RangeCount{Range: name, N: len(rs), Thread: t.thread()}
	}
	r := rs[0]
	if r.Open && !t.openSeen[name] {
		t.openSeen[name] = true
		t.diags.Add(diag.Warning, OpenRange{Range: name, Start: r.Start})
	}
	for _, n := range lessonRanges {
		if n == name {
			continue
		}
		for _, o := range t.rangesNamed(n) {
			if overlap(r, o) {
				return capture.Range{}, RangesOverlap{A: rangeRef(r), B: rangeRef(o), Thread: t.thread()}
			}
		}
	}
	return r, nil
}

// orderNote names, as a lesson-structure diagnostic, a pinned range that
// comes before its pageable one: the lesson measures pageable first. The
// groups are found by name, so the order changes nothing else.
func (t *traceCtx) orderNote(pageable, pinned string) {
	p, q := t.rangesNamed(pageable), t.rangesNamed(pinned)
	if len(p) == 1 && len(q) == 1 && q[0].Start < p[0].Start {
		t.diags.Add(diag.Info, RangeOrder{Pinned: pinned, Pageable: pageable})
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

func copyKindOf(dir vocab.Direction) vocab.CopyKind {
	if dir == vocab.H2D {
		return vocab.CopyHtoD
	}
	return vocab.CopyDtoH
}

// hostKind is the memory kind of a copy's host side.
func hostKind(m *capture.Memcpy) vocab.MemKind {
	if m.Kind == vocab.CopyDtoH {
		return m.Dst
	}
	return m.Src
}

// checkHostKind checks that a copy's host side is of the group's kind. A
// mismatch is a diagnostic, once per group: a pinned group copying pageable
// memory is an error (its numbers still give the verdicts), any other
// mismatch a warning. It reports whether the kinds matched.
func (t *traceCtx) checkHostKind(group string, src vocab.MemKind, m *capture.Memcpy, dir vocab.Direction) bool {
	if !t.c.Has(records.FactMemoryKinds) {
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
	if src == vocab.MemPinned && hk == vocab.MemPageable {
		t.diags.Add(diag.Error, PinnedPageable{Group: group, Dir: dir, CopyTable: t.cpyTab, Corr: m.CorrelationID})
		return false
	}
	t.diags.Add(diag.Warning, MemoryKindMismatch{Group: group, Dir: dir, Host: hk, CopyTable: t.cpyTab, Corr: m.CorrelationID, Want: src})
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

// oneGPU returns why copies a part sets side by side cannot measure it
// when they ran on more than one GPU (the devices of their copy records,
// counted), nil when on one: one GPU's rate set against another's says
// nothing of pinning.
func (t *traceCtx) oneGPU(dir vocab.Direction, devices map[int64]int) Why {
	if len(devices) < 2 {
		return nil
	}
	return CopiesOnGPUs{Dir: dir, Devices: deviceCounts(devices), CopyTable: t.cpyTab}
}

// deviceCounts lists devices' counts in device order.
func deviceCounts(devices map[int64]int) []DeviceCount {
	var out []DeviceCount
	for d, n := range devices {
		out = append(out, DeviceCount{Device: d, N: n})
	}
	slices.SortFunc(out, func(a, b DeviceCount) int { return cmp.Compare(a.Device, b.Device) })
	return out
}

// countDevices adds the GPU of each copy of groups to devices.
func countDevices(devices map[int64]int, groups ...[]callCopy) {
	for _, g := range groups {
		for _, o := range g {
			devices[o.cp.Device]++
		}
	}
}

// part1 finds one direction's sweep in the trace.
func (t *traceCtx) part1(dir vocab.Direction) (*sweepData, Why) {
	if !t.c.Has(records.FactMemcpy) {
		return nil, NoCopyRecords{Lacks: t.c.Why(records.FactMemcpy)}
	}
	if !t.c.Has(records.FactCorrelation) {
		return nil, NoCorrelation{Lacks: t.c.Why(records.FactCorrelation)}
	}
	names := []string{"h2d-pageable", "h2d-pinned", "d2h-pageable", "d2h-pinned"}
	if t.hasAnyRange(names...) {
		return t.part1NVTX(dir)
	}
	sd, why := t.part1Runs(dir)
	if sd != nil && t.c.Has(records.FactNVTX) {
		m := sd.how.(SweepByRuns)
		m.NoRanges = dir
		sd.how = m
	}
	return sd, why
}

// copyOps returns the thread's copy operations inside r, in call order:
// blocking cudaMemcpy calls, and cudaMemcpyAsync calls each followed by a
// synchronize (how frameworks make a blocking copy). nAsync counts the
// latter.
func (t *traceCtx) copyOps(group string, r capture.Range) (ops []callCopy, nAsync int, why Why) {
	var calls []capture.APICall
	for _, a := range t.calls {
		if (a.Name == apiMemcpy || a.Name == apiMemcpyAsync) && r.Contains(a.Start, a.End) {
			calls = append(calls, a)
		}
	}
	for i, a := range calls {
		m := t.memcpy.of(a.CorrelationID)
		if m == nil {
			return nil, 0, CallWithoutCopy{Call: t.ref(a), Range: group, CopyTable: t.cpyTab}
		}
		op := callCopy{call: a, cp: m, end: a.End}
		if a.Name == apiMemcpyAsync {
			s := t.syncAfter(a)
			if s == nil || (i+1 < len(calls) && calls[i+1].Start < s.Start) {
				return nil, 0, AsyncWithoutSync{Call: t.ref(a), Range: group}
			}
			op.end = s.End
			nAsync++
		}
		ops = append(ops, op)
	}
	return ops, nAsync, nil
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

// countsOf counts a group's copies per size, by size.
func countsOf(bySize map[int64][]callCopy) []SizeCount {
	var out []SizeCount
	for b, g := range bySize {
		out = append(out, SizeCount{Bytes: b, N: len(g)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes < out[j].Bytes })
	return out
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

func (t *traceCtx) part1NVTX(dir vocab.Direction) (*sweepData, Why) {
	bySrc := map[vocab.MemKind]map[int64][]callCopy{}
	how := SweepByRanges{APITable: t.apiTab, CopyTable: t.cpyTab, Thread: t.thread()}
	anyAsync := 0
	for _, src := range sources {
		g, why := t.part1Range(dir, src)
		if why != nil {
			return nil, why
		}
		bySrc[src] = g.bySize
		how.Ranges = append(how.Ranges, g.rng)
		anyAsync += g.nAsync
		if g.nAsync > 0 {
			how.CopySync = append(how.CopySync, CopySync{Range: g.rng.Name, N: g.nAsync})
		}
	}
	t.orderNote(string(dir)+"-pageable", string(dir)+"-pinned")
	sd := &sweepData{dir: dir, pageable: map[int64]timing{}, pinned: map[int64]timing{}, table: t.apiTab}
	if sd.sizes = t.sharedSizes(dir, bySrc); len(sd.sizes) == 0 {
		return nil, NoSharedSize{Dir: dir}
	}
	devices := map[int64]int{}
	for _, src := range sources {
		for _, b := range sd.sizes {
			countDevices(devices, bySrc[src][b])
		}
	}
	if why := t.oneGPU(dir, devices); why != nil {
		return nil, why
	}
	how.Shaped = lessonShaped(bySrc[vocab.MemPageable]) && lessonShaped(bySrc[vocab.MemPinned]) && anyAsync == 0
	for _, src := range sources {
		for _, b := range sd.sizes {
			group := bySrc[src][b]
			warm, fp := warmupsOf(len(group), warmups, t.progCopyRuns(dir, src, b))
			how.FromProgram = how.FromProgram || fp
			tm := t.timed(GroupKey{Dir: dir, Bytes: b, Source: src}, group[warm:])
			if src == vocab.MemPageable {
				sd.pageable[b] = tm
			} else {
				sd.pinned[b] = tm
			}
			if !how.Shaped {
				how.Groups = append(how.Groups, GroupNote{Dir: dir, Source: src, Bytes: b, N: len(group), Timed: len(group) - warm})
			}
		}
	}
	sd.how = how
	return sd, nil
}

// rangeGroup is what one part 1 NVTX range holds: its copies of the
// range's direction by size, how many were cudaMemcpyAsync + synchronize,
// and the range.
type rangeGroup struct {
	bySize map[int64][]callCopy
	nAsync int
	rng    RangeRef
}

// part1Range reads one part 1 range: its copies of the direction by size,
// the others set aside; copies of one size from host memory of several
// kinds make the group ambiguous.
func (t *traceCtx) part1Range(dir vocab.Direction, src vocab.MemKind) (rangeGroup, Why) {
	kind := copyKindOf(dir)
	name := string(dir) + "-" + string(src)
	r, why := t.rangeNamed(name)
	if why != nil {
		return rangeGroup{}, why
	}
	ops, nAsync, why := t.copyOps(name, r)
	if why != nil {
		return rangeGroup{}, why
	}
	g := rangeGroup{bySize: map[int64][]callCopy{}, nAsync: nAsync, rng: rangeRef(r)}
	aside := map[vocab.CopyKind]int{}
	hosts := map[int64]map[vocab.MemKind]bool{}
	for _, o := range ops {
		if o.cp.Kind != kind {
			aside[o.cp.Kind]++
			continue
		}
		t.checkHostKind(name, src, o.cp, dir)
		g.bySize[o.cp.Bytes] = append(g.bySize[o.cp.Bytes], o)
		if hosts[o.cp.Bytes] == nil {
			hosts[o.cp.Bytes] = map[vocab.MemKind]bool{}
		}
		hosts[o.cp.Bytes][hostKind(o.cp)] = true
	}
	if t.c.Has(records.FactMemoryKinds) {
		for b, h := range hosts {
			if len(h) > 1 {
				return rangeGroup{}, MixedHosts{Range: name, Kind: kind, Bytes: b, Kinds: len(h)}
			}
		}
	}
	if len(aside) > 0 {
		t.diags.Add(diag.Info, RangeAlsoHolds{Range: name, Aside: kindCounts(aside), Kind: kind})
	}
	if len(g.bySize) == 0 {
		return rangeGroup{}, RangeHoldsNoCopies{Range: name, Kind: kind, Thread: t.thread()}
	}
	if nAsync > 0 {
		t.diags.Add(diag.Info, CopySyncRange{Range: name, N: nAsync})
	}
	if !lessonShaped(g.bySize) {
		t.diags.Add(diag.Info, RangeShape{Range: name, Counts: countsOf(g.bySize)})
	}
	return g, nil
}

// sharedSizes returns, ascending, the sizes both sources' groups have; the
// others are set aside with a diagnostic.
func (t *traceCtx) sharedSizes(dir vocab.Direction, bySrc map[vocab.MemKind]map[int64][]callCopy) []int64 {
	var sizes []int64
	var lone []SourceSize
	for b := range bySrc[vocab.MemPageable] {
		if _, ok := bySrc[vocab.MemPinned][b]; ok {
			sizes = append(sizes, b)
		} else {
			lone = append(lone, SourceSize{Source: vocab.MemPageable, Bytes: b})
		}
	}
	for b := range bySrc[vocab.MemPinned] {
		if _, ok := bySrc[vocab.MemPageable][b]; !ok {
			lone = append(lone, SourceSize{Source: vocab.MemPinned, Bytes: b})
		}
	}
	if len(lone) > 0 {
		sort.Slice(lone, func(i, j int) bool {
			if lone[i].Source != lone[j].Source {
				return lone[i].Source < lone[j].Source
			}
			return lone[i].Bytes < lone[j].Bytes
		})
		t.diags.Add(diag.Info, OneSourceSizes{Dir: dir, Lone: lone})
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	return sizes
}

// kindCounts lists copies by direction, by the direction's name.
func kindCounts(n map[vocab.CopyKind]int) []KindCount {
	var out []KindCount
	for k, c := range n {
		out = append(out, KindCount{Kind: k, N: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// timed summarises the timed calls of a group by their API durations.
func (t *traceCtx) timed(label GroupKey, group []callCopy) timing {
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
	kind  vocab.CopyKind
	host  vocab.MemKind
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
	var aside []RunAside
	sizes := map[int64]bool{}
	for k := range runs {
		if k.kind == kind {
			sizes[k.bytes] = true
		}
	}
	for b := range sizes {
		p, q := runs[runKey{kind, vocab.MemPageable, b}], runs[runKey{kind, vocab.MemPinned, b}]
		if len(p) == 1 && len(q) == 1 {
			out = append(out, b)
		} else {
			aside = append(aside, RunAside{Bytes: b, Pageable: len(p), Pinned: len(q)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if len(aside) > 0 {
		sort.Slice(aside, func(i, j int) bool { return aside[i].Bytes < aside[j].Bytes })
		t.diags.Add(diag.Info, RunSizesAside{Dir: dir, Sizes: aside})
	}
	return out
}

// part1Runs finds part 1 without NVTX: runs of consecutive cudaMemcpy calls
// on the thread whose copies share direction, host memory kind and size.
func (t *traceCtx) part1Runs(dir vocab.Direction) (*sweepData, Why) {
	if !t.c.Has(records.FactMemoryKinds) {
		return nil, NoMemoryKinds{Lacks: t.c.Why(records.FactMemoryKinds)}
	}
	var seq []callCopy
	for _, k := range t.named(apiMemcpy) {
		a := t.calls[k]
		m := t.memcpy.of(a.CorrelationID)
		if m == nil {
			return nil, MemcpyWithoutCopy{Call: t.ref(a), Thread: t.thread(), CopyTable: t.cpyTab}
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
		if k.host == vocab.MemPinned {
			pinnedRuns += len(rs)
		} else if k.host == vocab.MemPageable && len(rs) == 2 {
			twice++
		}
	}
	if pinnedRuns == 0 && twice > 0 {
		t.diags.Add(diag.Error, PinnedPageableRuns{Dir: dir})
		return nil, AllPageable{Dir: dir}
	}
	sd := &sweepData{dir: dir, pageable: map[int64]timing{}, pinned: map[int64]timing{}, table: t.apiTab}
	var notes []GroupNote
	shaped := true
	if sd.sizes = t.runSizes(dir, runs); len(sd.sizes) == 0 {
		return nil, NoRuns{Kind: kind, Thread: t.thread()}
	}
	devices := map[int64]int{}
	for _, src := range sources {
		for _, b := range sd.sizes {
			countDevices(devices, runs[runKey{kind, vocab.MemKind(src), b}][0])
		}
	}
	if why := t.oneGPU(dir, devices); why != nil {
		return nil, why
	}
	for _, src := range sources {
		for _, b := range sd.sizes {
			run := runs[runKey{kind, vocab.MemKind(src), b}][0]
			warm, _ := warmupsOf(len(run), warmups, t.progCopyRuns(dir, src, b))
			if len(run) != perSize {
				shaped = false
			}
			notes = append(notes, GroupNote{Dir: dir, Source: src, Bytes: b, N: len(run), Timed: len(run) - warm})
			tm := t.timed(GroupKey{Dir: dir, Bytes: b, Source: src}, run[warm:])
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
	how := SweepByRuns{APITable: t.apiTab, CopyTable: t.cpyTab, Thread: t.thread(), Shaped: shaped}
	if !shaped {
		t.diags.Add(diag.Info, RunsShape{Dir: dir, Runs: notes})
		how.Runs = notes
	}
	sd.how = how
	return sd, nil
}

// part2 finds the timed cudaMemcpyAsync calls of both sources: with NVTX,
// what ranges async-pageable and async-pinned hold; without NVTX, by their
// copy records (host-to-device, host memory kind, size) and order; without
// copy records either, by order alone when the thread makes exactly the
// lesson's calls.
func (t *traceCtx) part2() (*asyncData, Why) {
	all := t.named(apiMemcpyAsync)
	withCopies := t.c.Has(records.FactMemcpy) && t.c.Has(records.FactCorrelation)
	groups, how, why := t.part2Groups(all, withCopies)
	if why != nil {
		return nil, why
	}
	syncs := t.named(apiStreamSync)
	if len(syncs) == 0 {
		return nil, NoStreamSync{Thread: t.thread()}
	}
	ad := &asyncData{side: map[vocab.MemKind]*asyncSide{}}
	devices := map[int64]int{}
	for _, src := range sources {
		g := groups[src]
		mixed := false
		s := &asyncSide{runs: len(g)}
		var comp []float64
		for _, a := range g {
			sync := t.nextSync(syncs, a)
			if sync == nil {
				return nil, NoFollowingSync{Call: t.ref(a), Thread: t.thread()}
			}
			if n := t.nextAfter(all, a); n != nil && n.Start < sync.Start {
				return nil, AsyncBeforeSync{Call: t.ref(a), Next: t.ref(*n)}
			}
			s.callDurMs = append(s.callDurMs, float64(a.Duration())/1e6)
			comp = append(comp, float64(sync.End-a.Start)/1e6)
			s.corr = append(s.corr, a.CorrelationID)
			if withCopies {
				m, ok := t.memcpy.find(a.CorrelationID)
				if !ok {
					return nil, AsyncWithoutCopy{Call: t.ref(a), CopyTable: t.cpyTab}
				}
				if m.Kind != vocab.CopyHtoD {
					return nil, AsyncNotHtoD{Call: t.ref(a), Kind: m.Kind}
				}
				devices[m.Device]++
				t.checkHostKind("async-"+string(src), src, &m, vocab.H2D)
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
		s.at = t.records(GroupKey{Source: src}, g)
		ad.side[src] = s
	}
	if why := t.oneGPU("", devices); why != nil {
		return nil, why
	}
	ad.how = AsyncMethod{Groups: how, APITable: t.apiTab, CopyTable: t.cpyTab, WithCopies: withCopies}
	ad.table = t.apiTab
	return ad, nil
}

// part2Groups splits the thread's cudaMemcpyAsync calls (all) into the
// pageable and pinned groups' timed calls: by NVTX range where the capture
// has them, else by copy records, else by call order. how says which; why,
// when not empty, why the groups cannot be found.
func (t *traceCtx) part2Groups(all []int32, withCopies bool) (map[vocab.MemKind][]capture.APICall, Fact, Why) {
	switch {
	case t.hasAnyRange("async-pageable", "async-pinned"):
		return t.part2NVTX(all, withCopies)
	case withCopies && t.c.Has(records.FactMemoryKinds):
		groups := map[vocab.MemKind][]capture.APICall{}
		how, why := t.part2Copies(all, groups)
		if why != nil {
			return nil, nil, why
		}
		return groups, how, nil
	default:
		if len(all) != asyncTotal {
			return nil, nil, AsyncCount{N: len(all), Thread: t.thread()}
		}
		groups := map[vocab.MemKind][]capture.APICall{}
		groups[vocab.MemPageable] = t.callsAt(all[1:asyncPerSrc])
		groups[vocab.MemPinned] = t.callsAt(all[asyncPerSrc+1:])
		return groups, AsyncByOrder{Thread: t.thread()}, nil
	}
}

// part2NVTX finds part 2's groups as what NVTX ranges async-pageable and
// async-pinned hold: their host-to-device cudaMemcpyAsync calls, all timed.
func (t *traceCtx) part2NVTX(all []int32, withCopies bool) (map[vocab.MemKind][]capture.APICall, Fact, Why) {
	groups := map[vocab.MemKind][]capture.APICall{}
	how := AsyncByRanges{Shaped: true}
	in := 0
	for _, src := range sources {
		name := "async-" + string(src)
		r, why := t.rangeNamed(name)
		if why != nil {
			return nil, nil, why
		}
		g := t.inRange(apiMemcpyAsync, r)
		if withCopies {
			g = t.hostToDevice(name, g)
			if t.c.Has(records.FactMemoryKinds) {
				hosts := map[vocab.MemKind]bool{}
				for _, a := range g {
					if m, ok := t.memcpy.find(a.CorrelationID); ok {
						hosts[hostKind(&m)] = true
					}
				}
				if len(hosts) > 1 {
					return nil, nil, AsyncMixedHosts{Range: name, Kinds: len(hosts)}
				}
			}
		}
		if len(g) == 0 {
			return nil, nil, RangeHoldsNoAsync{Range: name, Thread: t.thread()}
		}
		if len(g) != timedRuns {
			how.Shaped = false
			t.diags.Add(diag.Info, AsyncRangeCount{Range: name, N: len(g), Thread: t.thread()})
		}
		in += len(g)
		groups[src] = g
		how.Ranges = append(how.Ranges, rangeRef(r))
	}
	t.orderNote("async-pageable", "async-pinned")
	if len(all) != asyncTotal {
		t.diags.Add(diag.Info, AsyncOutside{Thread: t.thread(), N: len(all), Outside: len(all) - in})
	}
	how.Pageable, how.Pinned = len(groups[vocab.MemPageable]), len(groups[vocab.MemPinned])
	return groups, how, nil
}

// hostToDevice keeps a range's calls whose copies are host-to-device and
// sets the others aside with a diagnostic.
func (t *traceCtx) hostToDevice(group string, calls []capture.APICall) []capture.APICall {
	var out []capture.APICall
	aside := map[vocab.CopyKind]int{}
	for _, a := range calls {
		if m, ok := t.memcpy.find(a.CorrelationID); ok && m.Kind != vocab.CopyHtoD {
			aside[m.Kind]++
			continue
		}
		out = append(out, a)
	}
	if len(aside) > 0 {
		t.diags.Add(diag.Info, AsyncRangeAlsoHolds{Range: group, Aside: kindCounts(aside)})
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
func (t *traceCtx) part2Copies(all []int32, groups map[vocab.MemKind][]capture.APICall) (Fact, Why) {
	type key struct {
		host  vocab.MemKind
		bytes int64
	}
	// Each call's key first (an index into keys, -1 for a call set aside),
	// so that each group is made once at its size.
	var keys []key
	counts := map[int32]int{}
	of := make([]int32, len(all))
	for i, at := range all {
		a := &t.calls[at]
		m, ok := t.memcpy.find(a.CorrelationID)
		if !ok {
			return nil, AsyncWithoutCopy{Call: t.ref(*a), CopyTable: t.cpyTab}
		}
		of[i] = -1
		if hk := hostKind(&m); m.Kind == vocab.CopyHtoD && (hk == vocab.MemPageable || hk == vocab.MemPinned) {
			k := slices.Index(keys, key{hk, m.Bytes})
			if k < 0 {
				k = len(keys)
				keys = append(keys, key{hk, m.Bytes})
			}
			of[i] = int32(k)
			counts[int32(k)]++
		}
	}
	by := make(map[key][]int32, len(keys))
	for k, n := range counts {
		by[keys[k]] = make([]int32, 0, n)
	}
	for i, at := range all {
		if k := of[i]; k >= 0 {
			by[keys[k]] = append(by[keys[k]], at)
		}
	}
	best, bestN := int64(-1), 0
	for k, p := range by {
		if k.host != vocab.MemPageable {
			continue
		}
		n := min(len(p), len(by[key{vocab.MemPinned, k.bytes}]))
		if n > 0 && (n > bestN || (n == bestN && k.bytes > best)) {
			best, bestN = k.bytes, n
		}
	}
	if best < 0 {
		return nil, NoAsyncPair{Thread: t.thread(), N: len(all)}
	}
	how := AsyncByCopies{Thread: t.thread(), Bytes: best, CopyTable: t.cpyTab}
	for _, src := range sources {
		g := by[key{vocab.MemKind(src), best}]
		warm, _ := warmupsOf(len(g), 1, t.progAsyncRuns(src))
		groups[src] = t.callsAt(g[warm:])
		if len(g) != asyncPerSrc {
			t.diags.Add(diag.Info, AsyncGroupShape{Thread: t.thread(), N: len(g), Bytes: best, Source: src})
		}
		how.Groups = append(how.Groups, AsyncGroup{N: len(g), Source: src, Warm: warm})
	}
	if aside := len(all) - len(by[key{vocab.MemPageable, best}]) - len(by[key{vocab.MemPinned, best}]); aside > 0 {
		t.diags.Add(diag.Info, AsyncAside{Thread: t.thread(), N: len(all), Aside: aside, Bytes: best})
	}
	return how, nil
}

// nextSync returns the first of the synchronisations at the places of
// t.calls that syncs lists (in start order) to start at or after a's end,
// nil when none does.
func (t *traceCtx) nextSync(syncs []int32, a capture.APICall) *capture.APICall {
	i := sort.Search(len(syncs), func(i int) bool { return t.calls[syncs[i]].Start >= a.End })
	if i == len(syncs) {
		return nil
	}
	return &t.calls[syncs[i]]
}

// nextAfter returns the first of the calls at the places of t.calls that
// calls lists (in start order) to start after a, nil when none does.
func (t *traceCtx) nextAfter(calls []int32, a capture.APICall) *capture.APICall {
	i := sort.Search(len(calls), func(i int) bool { return t.calls[calls[i]].Start > a.Start })
	if i == len(calls) {
		return nil
	}
	return &t.calls[calls[i]]
}

// part4 derives prediction 4 from part 2's groups.
func (t *traceCtx) part4(ad *asyncData) (*callTotals, *byteTotals, Why) {
	p, q := ad.side[vocab.MemPageable], ad.side[vocab.MemPinned]
	ct := &callTotals{pageableMs: sum(p.callDurMs), pinnedMs: sum(q.callDurMs), pageableN: p.runs, pinnedN: q.runs,
		perCall: &CallDurations{From: SourceTrace, PageableMs: p.callDurMs, PinnedMs: q.callDurMs,
			PageableCorrelationIDs: p.corr, PinnedCorrelationIDs: q.corr},
		how:   CallsMethod{APITable: t.apiTab, Pageable: p.at, Pinned: q.at, Groups: ad.how},
		table: t.apiTab, recs: recordsOf(p.at, q.at)}
	bytesHow := BytesMethod{CopyTable: t.cpyTab, PageableN: p.runs, PageableBytes: p.bytes, PinnedN: q.runs, PinnedBytes: q.bytes,
		Pageable: p.at, Pinned: q.at, Groups: ad.how}
	if p.totalBytes > 0 && q.totalBytes > 0 && p.runs != q.runs && p.bytes > 0 && q.bytes > 0 {
		bytesHow.PerCopy = true
		return ct, &byteTotals{pageable: p.bytes, pinned: q.bytes, perCopy: true,
			how: bytesHow, table: t.cpyTab, recs: recordsOf(p.at, q.at)}, nil
	}
	if p.totalBytes > 0 && q.totalBytes > 0 {
		return ct, &byteTotals{pageable: p.totalBytes, pinned: q.totalBytes,
			how: bytesHow, table: t.cpyTab, recs: recordsOf(p.at, q.at)}, nil
	}
	return ct, nil, t.bytesFromSummary()
}

// bytesFromSummary explains whether cuda_gpu_mem_size_sum alone can show
// that both groups moved the same bytes. It cannot in general: the report
// totals every host-to-device copy of the run, part 1's and part 3's too.
func (t *traceCtx) bytesFromSummary() Why {
	for _, s := range t.c.MemSummary {
		if s.Kind == vocab.CopyHtoD && s.TotalMB > 0 {
			return SummaryBytesOnly{Count: int64(s.Count), TotalMB: s.TotalMB}
		}
	}
	return NoBytes{}
}

// part3 finds the timed scaleCopy launches of both variants.
func (t *traceCtx) part3(prog *program.Measurements) (*kernelData, Why) {
	if !t.c.Has(records.FactKernels) {
		return nil, NoKernelRecords{Lacks: t.c.Why(records.FactKernels)}
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
	owner := LaunchOwner{ByCall: useLaunch, Thread: t.thread(), PID: t.pid}
	groups := map[vocab.Variant][]launch{}
	var how Fact
	if t.hasAnyRange("kernel-device-resident", "kernel-zero-copy") {
		var why Why
		if groups, how, why = t.part3NVTX(mine, owner); why != nil {
			return nil, why
		}
	} else {
		if len(all) != launchTotal {
			return nil, LaunchCount{N: len(all), Owner: owner}
		}
		groups[vocab.DeviceResident] = all[1+warmups : launchPerVar]
		groups[vocab.ZeroCopy] = all[launchPerVar+1+warmups:]
		how = KernelsByOrder{KernelTable: t.kernTab, Owner: owner}
	}
	devices := map[int64]int{}
	for _, v := range variants {
		for _, l := range groups[v] {
			devices[l.k.Device]++
		}
	}
	if len(devices) > 1 {
		return nil, KernelsOnGPUs{Devices: deviceCounts(devices), KernelTable: t.kernTab}
	}
	kd := &kernelData{ms: map[vocab.Variant]timing{}, how: how, table: t.kernTab}
	kd.bytes, kd.bytesFrom = kernelBytesOf(prog, t.diags)
	for _, v := range variants {
		// A kernel of no time is a damaged record, not a fast kernel: a
		// mean over it would be less than the kernels took.
		zero := ZeroKernelTime{Variant: v, KernelTable: t.kernTab}
		for _, l := range groups[v] {
			if l.k.Duration() == 0 {
				if zero.Count == 0 {
					zero.Corr = l.k.CorrelationID
				}
				zero.Count++
			}
		}
		if zero.Count > 0 {
			return nil, zero
		}
	}
	for _, v := range variants {
		tm := timing{runs: len(groups[v])}
		for _, l := range groups[v] {
			tm.durMs = append(tm.durMs, float64(l.k.Duration())/1e6)
			tm.corr = append(tm.corr, l.k.CorrelationID)
		}
		tm.ms = mean(tm.durMs)
		tm.at = corrRecords(GroupKey{Variant: v}, t.kernTab, tm.corr)
		kd.ms[v] = tm
	}
	// Nothing a trace's kernel does outruns the memory or link it reads.
	m := t.c.Meta
	for _, v := range variants {
		bound, memory := limits.Kernel(v, m.GPU, m.PCIeGen, m.PCIeWidth)
		if why := bound.Exceeded(kd.gbps(v), memory); why != "" && kd.ms[v].runs > 0 {
			return nil, ImpossibleKernelRate{Variant: v, KernelTable: t.kernTab, Bytes: kd.bytes, Ms: kd.ms[v].ms, Reason: why}
		}
	}
	return kd, nil
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
func (t *traceCtx) part3NVTX(mine []launch, owner LaunchOwner) (map[vocab.Variant][]launch, Fact, Why) {
	groups := map[vocab.Variant][]launch{}
	how := KernelsByRanges{KernelTable: t.kernTab, Owner: owner, Shaped: true}
	for _, v := range variants {
		name := "kernel-" + string(v)
		r, why := t.rangeNamed(name)
		if why != nil {
			return nil, nil, why
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
			return nil, nil, RangeHoldsNoLaunches{Range: name, Owner: owner}
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
			var aside []KernelCount
			for _, n := range order {
				if n != kn {
					aside = append(aside, KernelCount{Kernel: n, N: len(byName[n])})
				}
			}
			t.diags.Add(diag.Info, OtherKernels{Range: name, N: len(g), Kernel: kn, Aside: aside})
		}
		warm, _ := warmupsOf(len(g), warmups, t.progKernelRuns(v))
		if len(g) != launchPerVar-1 || kn != kernelName {
			how.Shaped = false
			t.diags.Add(diag.Info, KernelRangeShape{Range: name, N: len(g), Kernel: kn, Timed: len(g) - warm})
		}
		groups[v] = g[warm:]
		how.Groups = append(how.Groups, KernelGroup{Range: name, N: len(g), Kernel: kn, Timed: len(g) - warm})
		how.Ranges = append(how.Ranges, rangeRef(r))
	}
	if how.Shaped {
		how.Groups = nil
	}
	return groups, how, nil
}

// deviceCopy reads the device-to-device reference copy from the trace: the
// last 10 of 13 cudaMemcpy calls in NVTX range d2d-reference; nil where the
// trace has none.
func (t *traceCtx) deviceCopy() *DeviceCopy {
	if !t.c.Has(records.FactMemcpy) || !t.c.Has(records.FactCorrelation) || !t.hasAnyRange("d2d-reference") {
		return nil
	}
	r, why := t.rangeNamed("d2d-reference")
	if why != nil {
		return nil
	}
	calls := t.inRange(apiMemcpy, r)
	if len(calls) != perSize {
		return nil
	}
	var group []callCopy
	for _, a := range calls {
		m := t.memcpy.of(a.CorrelationID)
		if m == nil || m.Kind != vocab.CopyDtoD || (len(group) > 0 && m.Bytes != group[0].cp.Bytes) {
			return nil
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
	return &DeviceCopy{Bytes: b, Timed: timedRuns, Of: perSize, At: corrRecords(GroupKey{}, "", corr), Ms: ms, GBps: gbps(2*b, ms)}
}

// orNone names a source for evidence: "(none)" where the input has none.
func orNone(source string) string {
	if source == "" {
		return "(none)"
	}
	return source
}
