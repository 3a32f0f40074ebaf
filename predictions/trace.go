package predictions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"

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
		diags.add(CodeOtherThreadsIgnored, Info, fmt.Sprintf(
			"read thread %s (%s, %d calls); ignored CUDA calls on %d other thread(s): %s",
			me, how, top.Calls, len(threads)-1, strings.Join(others, ", ")))
	}

	t := &traceCtx{c: c, pid: me.pid, tid: me.tid, diags: diags,
		memcpy: map[int64]*capture.Memcpy{}, launch: map[int64]*capture.APICall{},
		openSeen: map[string]bool{}}
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

// refs describes a group of calls: CSV rows or correlation ids.
func (t *traceCtx) refs(calls []capture.APICall) string {
	if len(calls) == 0 {
		return "no calls"
	}
	if calls[0].Row > 0 {
		return fmt.Sprintf("%s data rows %d..%d", t.apiTab, calls[0].Row, calls[len(calls)-1].Row)
	}
	ids := make([]int64, len(calls))
	for i, a := range calls {
		ids[i] = a.CorrelationID
	}
	return corrSpan(ids)
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
		t.diags.add(CodeOpenRange, Warning, fmt.Sprintf(
			"NVTX range %q (start %d ns) was never closed: the capture ended inside it, so it is taken to run to the end; its counts decide whether it is usable", name, r.Start))
	}
	return r, ""
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

// checkHostKind checks that a copy's host side is of the group's kind; it
// reports a pinned group copying pageable memory as an error diagnostic.
func (t *traceCtx) checkHostKind(group string, src vocab.MemKind, m *capture.Memcpy, dir vocab.Direction) string {
	if !t.c.Has(capture.FactMemoryKinds) {
		return ""
	}
	hk := hostKind(m)
	if hk == src {
		return ""
	}
	if src == vocab.MemPinned && hk == capture.MemPageable {
		t.diags.add(CodePinnedSourcePageable, Error, fmt.Sprintf(
			"the %s group's copies have a pageable host %s (%s, corr %d): the pinned buffer probably is not pinned; check that it came from cudaMallocHost and that the return value was checked",
			group, hostSide(dir), t.cpyTab, m.CorrelationID))
		return fmt.Sprintf("the %s group's copy (corr %d) has a pageable host %s, not pinned memory", group, m.CorrelationID, hostSide(dir))
	}
	return fmt.Sprintf("the %s group's copy (corr %d) has host %s kind %q, expected %q", group, m.CorrelationID, hostSide(dir), hk, src)
}

type callCopy struct {
	call capture.APICall
	cp   *capture.Memcpy
}

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

func (t *traceCtx) part1NVTX(dir vocab.Direction) (*sweepData, string) {
	sd := &sweepData{dir: dir, pageable: map[int64]timing{}, pinned: map[int64]timing{}}
	var hows []string
	for _, src := range sources {
		name := string(dir) + "-" + string(src)
		r, why := t.rangeNamed(name)
		if why != "" {
			return nil, why
		}
		calls := t.inRange(apiMemcpy, r)
		bySize := map[int64][]callCopy{}
		for _, a := range calls {
			m := t.memcpy[a.CorrelationID]
			if m == nil {
				return nil, fmt.Sprintf("cudaMemcpy %s in NVTX range %q has no copy record in %s", t.ref(a), name, t.cpyTab)
			}
			if m.Kind != copyKindOf(dir) {
				return nil, fmt.Sprintf("NVTX range %q holds a %s copy (corr %d); expected only %s", name, m.Kind, a.CorrelationID, copyKindOf(dir))
			}
			if why := t.checkHostKind(name, src, m, dir); why != "" {
				return nil, why
			}
			bySize[m.Bytes] = append(bySize[m.Bytes], callCopy{a, m})
		}
		if why := checkSizes(name, bySize, len(calls)); why != "" {
			return nil, why
		}
		for _, b := range sweepSizes {
			group := bySize[b]
			tm := t.timed(group[warmups:])
			if src == vocab.MemPageable {
				sd.pageable[b] = tm
			} else {
				sd.pinned[b] = tm
			}
		}
		hows = append(hows, fmt.Sprintf("NVTX range %s %s", name, rangeSpan(r)))
	}
	sd.sizes = append([]int64(nil), sweepSizes...)
	sd.how = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s in %s; size and direction from %s by correlation id; %d per size (%d warm-up + %d timed), the last %d averaged",
		t.apiTab, t.thread(), strings.Join(hows, " and "), t.cpyTab, perSize, warmups, timedRuns, timedRuns)
	return sd, ""
}

// checkSizes checks a part 1 group: exactly the program's sizes, 13 copies each.
func checkSizes(group string, bySize map[int64][]callCopy, total int) string {
	var found []string
	var sizes []int64
	for b := range bySize {
		sizes = append(sizes, b)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	ok := len(sizes) == len(sweepSizes)
	for i, b := range sizes {
		found = append(found, fmt.Sprintf("%d x %s", len(bySize[b]), sizeName(b)))
		if ok && (b != sweepSizes[i] || len(bySize[b]) != perSize) {
			ok = false
		}
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("%s holds %d cudaMemcpy calls (%s); expected %d of each of %s (%d warm-up + %d timed)",
		group, total, strings.Join(found, ", "), perSize, sizeList(sweepSizes), warmups, timedRuns)
}

// timed summarises the timed calls of a group by their API durations.
func (t *traceCtx) timed(group []callCopy) timing {
	tm := timing{runs: len(group)}
	calls := make([]capture.APICall, len(group))
	for i, g := range group {
		tm.durMs = append(tm.durMs, float64(g.call.Duration())/1e6)
		tm.corr = append(tm.corr, g.call.CorrelationID)
		calls[i] = g.call
	}
	tm.ms = mean(tm.durMs)
	tm.refs = t.refs(calls)
	return tm
}

type runKey struct {
	kind  capture.CopyKind
	host  capture.MemKind
	bytes int64
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
		seq = append(seq, callCopy{a, m})
	}
	runs := map[runKey][][]callCopy{}
	for i := 0; i < len(seq); {
		j := i + 1
		k := runKey{seq[i].cp.Kind, hostKind(seq[i].cp), seq[i].cp.Bytes}
		for j < len(seq) && (runKey{seq[j].cp.Kind, hostKind(seq[j].cp), seq[j].cp.Bytes}) == k {
			j++
		}
		if j-i >= perSize {
			runs[k] = append(runs[k], seq[i:j])
		}
		i = j
	}
	kind := copyKindOf(dir)
	// A "pinned" sweep whose copies are pageable shows as two pageable runs
	// per size and no pinned run.
	twice := true
	for _, b := range sweepSizes {
		if len(runs[runKey{kind, capture.MemPinned, b}]) != 0 || len(runs[runKey{kind, capture.MemPageable, b}]) != 2 {
			twice = false
		}
	}
	if twice {
		t.diags.add(CodePinnedSourcePageable, Error, fmt.Sprintf(
			"the %s sweep has two runs of pageable copies per size and no pinned ones: the pinned buffer probably is not pinned; check that it came from cudaMallocHost and that the return value was checked", dir))
		return nil, fmt.Sprintf("the %s sweep's copies are all pageable (two runs of %d per size, none pinned)", dir, perSize)
	}
	sd := &sweepData{dir: dir, pageable: map[int64]timing{}, pinned: map[int64]timing{}}
	var notes []string
	for _, src := range sources {
		for _, b := range sweepSizes {
			k := runKey{kind, capture.MemKind(src), b}
			rs := runs[k]
			if len(rs) != 1 {
				return nil, fmt.Sprintf("found %d runs of at least %d consecutive %s cudaMemcpy calls from %s memory of %s on thread %s; expected exactly 1",
					len(rs), perSize, kind, src, sizeName(b), t.thread())
			}
			run := rs[0]
			if len(run) != perSize {
				notes = append(notes, fmt.Sprintf("the %s %s %s run has %d calls; its last %d taken", dir, src, sizeName(b), len(run), perSize))
				run = run[len(run)-perSize:]
			}
			tm := t.timed(run[warmups:])
			if src == vocab.MemPageable {
				sd.pageable[b] = tm
			} else {
				sd.pinned[b] = tm
			}
		}
	}
	sd.sizes = append([]int64(nil), sweepSizes...)
	sd.how = fmt.Sprintf("cudaMemcpy API durations (%s) on thread %s, found without NVTX as runs of %d consecutive calls with the same direction, host memory kind and size (%s by correlation id); the last %d of each run averaged",
		t.apiTab, t.thread(), perSize, t.cpyTab, timedRuns)
	if len(notes) > 0 {
		sd.how += "; " + strings.Join(notes, "; ")
	}
	return sd, ""
}

// part2 finds the timed cudaMemcpyAsync calls of both sources.
func (t *traceCtx) part2() (*asyncData, string) {
	all := t.named(apiMemcpyAsync)
	groups, how, why := t.part2Groups(all)
	if why != "" {
		return nil, why
	}
	syncs := t.named(apiStreamSync)
	if len(syncs) == 0 {
		return nil, fmt.Sprintf("no cudaStreamSynchronize calls on thread %s, so no copy's completion is known", t.thread())
	}
	withCopies := t.c.Has(capture.FactMemcpy) && t.c.Has(capture.FactCorrelation)
	ad := &asyncData{side: map[vocab.MemKind]*asyncSide{}}
	for _, src := range sources {
		g := groups[src]
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
				if why := t.checkHostKind("async-"+string(src), src, m, vocab.H2D); why != "" {
					return nil, why
				}
				if s.bytes != 0 && m.Bytes != s.bytes {
					return nil, fmt.Sprintf("the %s group's copies differ in size (%d and %d bytes, corr %d)", src, s.bytes, m.Bytes, m.CorrelationID)
				}
				s.bytes = m.Bytes
				s.totalBytes += m.Bytes
			}
		}
		s.callMs = mean(s.callDurMs)
		s.completionMs = mean(comp)
		s.refs = t.refs(g)
		ad.side[src] = s
	}
	how += fmt.Sprintf(" (%s); call = the call's duration, completion = end of the next cudaStreamSynchronize on the thread minus the call's start", t.apiTab)
	if withCopies {
		how += fmt.Sprintf("; direction, host memory kind and bytes from %s by correlation id", t.cpyTab)
	} else {
		how += "; no copy records, so memory kinds are not confirmed"
	}
	ad.how = how
	return ad, ""
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
		how: fmt.Sprintf("%s durations of the timed cudaMemcpyAsync calls: pageable %s, pinned %s; groups: %s", t.apiTab, p.refs, q.refs, ad.how)}
	if p.totalBytes > 0 && q.totalBytes > 0 {
		return ct, &byteTotals{pageable: p.totalBytes, pinned: q.totalBytes,
			how: fmt.Sprintf("%s bytes of the copies correlated with the timed calls: pageable %d x %d B (%s), pinned %d x %d B (%s); groups: %s",
				t.cpyTab, p.runs, p.bytes, p.refs, q.runs, q.bytes, q.refs, ad.how)}, ""
	}
	return ct, nil, t.bytesFromSummary()
}

// bytesFromSummary explains whether cuda_gpu_mem_size_sum alone can show
// that both groups moved the same bytes. It cannot in general: the report
// totals every host-to-device copy of the run, part 1's and part 3's too.
func (t *traceCtx) bytesFromSummary() string {
	for _, s := range t.c.MemSummary {
		if s.Kind == capture.CopyHtoD {
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
	type launch struct {
		k     capture.Kernel
		start int64
		end   int64
	}
	var all []launch
	for _, k := range t.c.Kernels {
		if k.Name != kernelName {
			continue
		}
		if useLaunch {
			a := t.launch[k.CorrelationID]
			if a == nil {
				continue
			}
			all = append(all, launch{k, a.Start, a.End})
		} else if k.PID == t.pid || k.PID == 0 || t.pid == 0 {
			all = append(all, launch{k, k.Start, k.End})
		}
	}
	owner := "whose cudaLaunchKernel call is on thread " + t.thread()
	if !useLaunch {
		owner = fmt.Sprintf("of process %d (no cudaLaunchKernel calls in the input)", t.pid)
	}
	groups := map[vocab.Variant][]launch{}
	var how string
	if t.hasAnyRange("kernel-device-resident", "kernel-zero-copy") {
		var hows []string
		for _, v := range variants {
			name := "kernel-" + string(v)
			r, why := t.rangeNamed(name)
			if why != "" {
				return nil, why
			}
			var g []launch
			for _, l := range all {
				if r.Contains(l.start, l.end) {
					g = append(g, l)
				}
			}
			if len(g) != launchPerVar-1 {
				return nil, fmt.Sprintf("NVTX range %q holds %d scaleCopy launches; expected %d (%d warm-up + %d timed)", name, len(g), launchPerVar-1, warmups, timedRuns)
			}
			groups[v] = g[warmups:]
			hows = append(hows, fmt.Sprintf("NVTX range %s %s", name, rangeSpan(r)))
		}
		if len(all) != launchTotal {
			return nil, fmt.Sprintf("found %d scaleCopy launches %s; the program makes %d", len(all), owner, launchTotal)
		}
		how = fmt.Sprintf("scaleCopy kernel durations (%s) %s in %s, %d each, the last %d averaged", t.kernTab, owner, strings.Join(hows, " and "), launchPerVar-1, timedRuns)
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
	kd := &kernelData{ms: map[vocab.Variant]timing{}, how: how}
	kd.bytes, kd.bytesFrom = kernelBytesOf(prog, t.diags)
	for _, v := range variants {
		tm := timing{runs: len(groups[v])}
		for _, l := range groups[v] {
			tm.durMs = append(tm.durMs, float64(l.k.Duration())/1e6)
			tm.corr = append(tm.corr, l.k.CorrelationID)
		}
		tm.ms = mean(tm.durMs)
		tm.refs = corrSpan(tm.corr)
		kd.ms[v] = tm
	}
	return kd, ""
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
		group = append(group, callCopy{a, m})
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

// part2Groups splits the thread's cudaMemcpyAsync calls (all) into the
// pageable and pinned groups' timed calls: by NVTX range where the capture
// has them, else by call order. how says which; why, when not empty, why
// the groups cannot be found.
func (t *traceCtx) part2Groups(all []capture.APICall) (groups map[vocab.MemKind][]capture.APICall, how, why string) {
	groups = map[vocab.MemKind][]capture.APICall{}
	if t.hasAnyRange("async-pageable", "async-pinned") {
		var hows []string
		for _, src := range sources {
			name := "async-" + string(src)
			r, why := t.rangeNamed(name)
			if why != "" {
				return nil, "", why
			}
			g := t.inRange(apiMemcpyAsync, r)
			if len(g) != timedRuns {
				return nil, "", fmt.Sprintf("NVTX range %q holds %d cudaMemcpyAsync calls on thread %s; expected %d", name, len(g), t.thread(), timedRuns)
			}
			groups[src] = g
			hows = append(hows, fmt.Sprintf("NVTX range %s %s", name, rangeSpan(r)))
		}
		if len(all) != asyncTotal {
			return nil, "", fmt.Sprintf("found %d cudaMemcpyAsync calls on thread %s; the program makes %d (%d per source: 1 warm-up + %d timed)",
				len(all), t.thread(), asyncTotal, asyncPerSrc, timedRuns)
		}
		how = fmt.Sprintf("the %d cudaMemcpyAsync calls in %s", timedRuns, strings.Join(hows, " and "))
	} else {
		if len(all) != asyncTotal {
			return nil, "", fmt.Sprintf("found %d cudaMemcpyAsync calls on thread %s and no NVTX ranges async-pageable/async-pinned; the program makes exactly %d (%d pageable, then %d pinned, each 1 warm-up + %d timed), so the groups cannot be told apart",
				len(all), t.thread(), asyncTotal, asyncPerSrc, asyncPerSrc, timedRuns)
		}
		groups[vocab.MemPageable] = all[1:asyncPerSrc]
		groups[vocab.MemPinned] = all[asyncPerSrc+1:]
		how = fmt.Sprintf("no NVTX ranges: the %d cudaMemcpyAsync calls on thread %s in order, calls 2-%d pageable and %d-%d pinned (calls 1 and %d are warm-ups)",
			asyncTotal, t.thread(), asyncPerSrc, asyncPerSrc+2, asyncTotal, asyncPerSrc+1)
	}
	return groups, how, ""
}
