package replay

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/nsyscheck/nsyscheck/timeline"
)

// CaptureRegion names the region of the whole capture: from the first
// host-device copy call to the end of the last GPU operation.
const CaptureRegion = "(capture)"

// RangeNamedCapture names the region of the NVTX ranges a program named
// CaptureRegion itself, so that neither region's rows, JSON object or check
// is taken for the other's.
const RangeNamedCapture = CaptureRegion + " (NVTX range)"

// RegionOfRange is the region name of the NVTX ranges named name.
func RegionOfRange(name string) string {
	if name == CaptureRegion {
		return RangeNamedCapture
	}
	return name
}

// Region is one NVTX range name (or CaptureRegion) measured, replayed as
// captured, and predicted after pinning. A region instance's time runs from
// its start to the end of the last GPU operation launched by a call of its
// process inside it, or to the range's end if later. Times are in
// milliseconds.
type Region struct {
	Name      string
	Instances int
	// MedianMs is the median instance's time; SpanMs runs from the first
	// instance's start to the last one's completion.
	MedianMs float64
	SpanMs   float64
	// The same replayed as captured.
	ReplayMedianMs float64
	ReplaySpanMs   float64
	// The same predicted after pinning, with the bound of the low and high
	// costs; zero, and absent from the JSON, where nothing was predicted
	// (the audit's Region.NotPredicted).
	PredictedMedianMs     float64
	PredictedMedianLowMs  float64
	PredictedMedianHighMs float64
	PredictedSpanMs       float64
	PredictedSpanLowMs    float64
	PredictedSpanHighMs   float64
	// TotalMs is the instances' times summed, as measured: the whole of
	// the time the shares of the region's host time are taken against.
	TotalMs float64
	// Period is the median time from one instance's start to the next's
	// on the same thread (steps of a loop), zero with fewer than two.
	Period Period
	// Overlap is the share of the region's copy GPU time with a kernel
	// running on another stream of its device.
	Overlap Share
	// HostShare is the host time held by the region's host-device copy
	// calls in an instance as a share of that instance's time, the median
	// over the instances: an instance far longer than the others (a first
	// step that waits for a loader's start) does not dilute it, and it is
	// at most 1 where one thread makes the calls.
	HostShare Share
	// Queued is the share of instances that completed after the next
	// instance on their thread began: the GPU ran behind the host, so an
	// instance's time holds the backlog of the ones before it, and the
	// span (the loop's throughput) measures the region better than the
	// median instance.
	Queued Share
	// Fit is the replay against the measurement: replayed over measured,
	// less one, for the median and the span.
	Fit Fit
	// CopyCallMs is the host time the region's host-device copy calls
	// held their threads, summed over its instances, as measured;
	// PageableCallMs the part of it held by calls of copies from pageable
	// memory.
	CopyCallMs     float64
	PageableCallMs float64
	// Outside is the host time the region's thread spent outside CUDA
	// calls, as measured: the program's own work, which every replay
	// keeps as it was.
	Outside Outside
	// MedianCI is the confidence interval of the median instance's time
	// by order statistics, as measured; zero with fewer than CIInstances.
	MedianCI CI
}

// Outside is the host time a region's thread spent outside CUDA calls: in
// its median instance (the median over instances), and in all of them.
// For CaptureRegion it is the thread of the first host-device copy call,
// from that call to its thread's last call.
type Outside struct {
	MedianMs float64
	TotalMs  float64
}

// CI is an interval of a median by order statistics: the k-th smallest
// and the k-th largest of n instances hold the median with probability
// Coverage, 1 - 2 P(B <= k-1) for B binomial of n trials of one half.
type CI struct {
	LowMs    float64
	HighMs   float64
	Coverage float64
}

// CIInstances is the fewest instances whose median has a confidence
// interval of at least CICoverage: with 5, the smallest and the largest
// hold it with probability 15/16.
const CIInstances = 5

// CICoverage is the least coverage of a median's confidence interval;
// the interval taken is the narrowest of order statistics that reaches it.
const CICoverage = 0.90

// Period is the median start-to-start time of a region's instances.
type Period struct {
	Ms              float64
	ReplayMs        float64
	PredictedMs     float64
	PredictedLowMs  float64
	PredictedHighMs float64
}

// Share is a share measured and predicted after pinning.
type Share struct {
	Measured  float64
	Predicted float64
}

// Fit is the replay's relative error per measure.
type Fit struct {
	Median float64
	Span   float64
	Period float64
}

// regions finds the regions of a timeline once and measures them in any
// schedule.
type regions struct {
	tl *timeline.Timeline
	// names are the range names in order of first appearance; counts
	// their instances.
	names  []int32
	counts []int
	// kernels lists each stream's kernels in stream order; peers lists,
	// per stream, the other streams of its process and device that ran a
	// kernel (nil for none: its copies overlap no kernel).
	kernels [][]int32
	peers   [][]int32
	// copyCalls marks the calls that launched a host-device copy;
	// pageableCalls those that launched one from pageable memory.
	copyCalls, pageableCalls []bool
	// over holds, per host-device copy, the part of its GPU time a kernel
	// on another stream overlapped in the schedule being measured;
	// pieces is overlapped's scratch.
	over   spans
	pieces [][2]int64
	// runsIndexed says whether the instances' runs of calls are read
	// through an index (runindex.go); ix is the index of the last
	// schedule, its slices kept for the next.
	runsIndexed bool
	ix          *runIndex
}

// newRegions finds the regions of tl, their instances' runs of calls to be
// read as mode says.
func newRegions(tl *timeline.Timeline, mode indexMode) *regions {
	rg := &regions{tl: tl, kernels: make([][]int32, len(tl.Streams)), copyCalls: make([]bool, tl.Calls.Len()),
		pageableCalls: make([]bool, tl.Calls.Len()), over: newSpans(tl.Ops.Len())}
	seen := map[int32]int{}
	for _, r := range tl.Ranges {
		k, ok := seen[r.Name]
		if !ok {
			k = len(rg.names)
			seen[r.Name] = k
			rg.names = append(rg.names, r.Name)
			rg.counts = append(rg.counts, 0)
		}
		rg.counts[k]++
	}
	o := &tl.Ops
	for j := range o.Kind {
		switch {
		case o.Kind[j] == timeline.OpKernel:
			rg.kernels[o.Stream[j]] = append(rg.kernels[o.Stream[j]], int32(j))
		case o.Kind[j] == timeline.OpCopy && o.Dir[j].HostDevice() && o.Call[j] != timeline.None:
			rg.copyCalls[o.Call[j]] = true
			if o.Pageable(int32(j)) {
				rg.pageableCalls[o.Call[j]] = true
			}
		}
	}
	rg.peers = make([][]int32, len(tl.Streams))
	for i, st := range tl.Streams {
		for k, o := range tl.Streams {
			if k != i && len(rg.kernels[k]) > 0 && o.PID == st.PID && o.Device == st.Device {
				rg.peers[i] = append(rg.peers[i], int32(k))
			}
		}
	}
	rg.runsIndexed = runsIndexed(tl, mode)
	return rg
}

// measure is one region's numbers in one schedule, in nanoseconds.
type measure struct {
	instances               int
	median, span, period    float64
	total                   float64
	overlap, hostShare      float64
	queued                  float64
	copyNs, overlapNs, hold int64
	// pageable is the part of hold held by calls of pageable copies;
	// outside and outsideMedian the thread's host time outside calls, in
	// all instances and in the median one.
	pageable               int64
	outside, outsideMedian float64
	ci                     CI
}

// measureAll measures every region in schedule s: CaptureRegion first,
// then the range names in order of first appearance.
func (rg *regions) measureAll(s *Schedule) []measure {
	// The ops' part of the capture's measure is summed as the overlaps are
	// found: the latest end, the host-device copies' GPU time and overlap.
	o := &rg.tl.Ops
	var ops opSums
	ops.end = math.MinInt64
	for j := range o.Kind {
		ops.end = max(ops.end, s.OpEnd[j])
		if o.Kind[j] == timeline.OpCopy && o.Dir[j].HostDevice() {
			over := rg.overlapped(s, int32(j))
			rg.over.set(int32(j), over)
			ops.copyNs += s.OpEnd[j] - s.OpStart[j]
			ops.overlapNs += over
		}
	}
	out := make([]measure, 1, 1+len(rg.names))
	out[0] = rg.capture(s, ops)
	byName := make(map[int32]int, len(rg.names))
	for k, n := range rg.names {
		byName[n] = k
	}
	// Each region's instances as they are measured, in the timeline's
	// order: the values its medians need, its sums, and each thread's
	// instance before (its start and completion), for the periods and the
	// backlog. The values of every region lie in one array per kind, each
	// region's a run of it as long as its instances (counts), so that a
	// capture of as many regions as ranges holds a few numbers a range,
	// not a few slices and a map a region.
	type region struct {
		m                               measure
		times, shares, outside, periods []float64
		first, last                     int64
		queued                          int
	}
	acc := make([]region, len(rg.names))
	n := len(rg.tl.Ranges)
	allTimes, allShares, allOutside, allPeriods := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	at := 0
	for k, c := range rg.counts {
		acc[k] = region{times: allTimes[at : at : at+c], shares: allShares[at : at : at+c], outside: allOutside[at : at : at+c], periods: allPeriods[at : at : at+c]}
		at += c
	}
	// prev is each thread's last instance of a region, by (region, thread).
	prev := map[[2]int32][2]int64{}
	var ix *runIndex
	if rg.runsIndexed {
		rg.ix = rg.index(s, rg.ix)
		ix = rg.ix
	}
	for _, r := range rg.tl.Ranges {
		start, end, copyNs, over, hold, pageable, outside := rg.instance(s, r, ix)
		k := byName[r.Name]
		a := &acc[k]
		m := &a.m
		t := float64(end - start)
		if len(a.times) == 0 {
			a.first, a.last = start, end
		}
		a.times = append(a.times, t)
		m.total += t
		if t > 0 {
			a.shares = append(a.shares, float64(hold)/t)
		}
		a.outside = append(a.outside, float64(outside))
		a.first, a.last = min(a.first, start), max(a.last, end)
		m.copyNs += copyNs
		m.overlapNs += over
		m.hold += hold
		m.pageable += pageable
		m.outside += float64(outside)
		key := [2]int32{int32(k), r.Thread}
		if p, ok := prev[key]; ok {
			a.periods = append(a.periods, float64(start-p[0]))
			if p[1] > start {
				a.queued++
			}
		}
		prev[key] = [2]int64{start, end}
	}
	for k := range acc {
		a := &acc[k]
		m := a.m
		m.instances = len(a.times)
		m.median = median(a.times)
		m.ci = medianCI(a.times)
		m.outsideMedian = median(a.outside)
		m.span = float64(a.last - a.first)
		m.period = median(a.periods)
		m.queued = float64(a.queued) / float64(m.instances)
		if m.copyNs > 0 {
			m.overlap = float64(m.overlapNs) / float64(m.copyNs)
		}
		m.hostShare = median(a.shares)
		out = append(out, m)
		*a = region{}
	}
	return out
}

// instance measures one range instance in schedule s: its start and
// completion, its host-device copies' GPU time and the part of it a
// kernel on another stream overlapped, its copy calls' host time (and
// that of the calls of pageable copies among them), and the host time its
// thread spent outside calls between the range's push and pop.
func (rg *regions) instance(s *Schedule, r timeline.Range, ix *runIndex) (start, end, copyNs, over, hold, pageable, outside int64) {
	tl := rg.tl
	start = mark(s, tl, r.StartAt, r.Start)
	end = mark(s, tl, r.EndAt, r.End)
	pop := end
	lo, hi := runOf(tl, tl.Threads[r.Thread].PID, r.Start, r.End)
	if ix != nil {
		return ix.instance(r, lo, hi, start, end, pop)
	}
	busy := busyTime{from: start, to: pop}
	for _, c := range tl.ByStart[lo:hi] {
		latest, cn, ov, h, p := rg.callSums(s, c)
		end = max(end, latest)
		copyNs += cn
		over += ov
		hold += h
		pageable += p
		if tl.Calls.Thread[c] == r.Thread {
			busy.add(s.CallStart[c], s.CallEnd[c])
		}
	}
	return start, end, copyNs, over, hold, pageable, busy.outside()
}

// callSums is what call c adds to a region instance in schedule s: the
// latest end of its ops (math.MinInt64 for none), its host-device copies'
// GPU time and the part of it a kernel on another stream overlapped, and
// its host time where it launched a host-device copy (and where one from
// pageable memory).
func (rg *regions) callSums(s *Schedule, c int32) (latest, copyNs, over, hold, pageable int64) {
	tl := rg.tl
	latest = math.MinInt64
	for _, j := range tl.OpsOf(c) {
		latest = max(latest, s.OpEnd[j])
		if tl.Ops.Kind[j] == timeline.OpCopy && tl.Ops.Dir[j].HostDevice() {
			copyNs += s.OpEnd[j] - s.OpStart[j]
			over += rg.over.at(j)
		}
	}
	if rg.copyCalls[c] {
		hold = s.CallEnd[c] - s.CallStart[c]
		if rg.pageableCalls[c] {
			pageable = hold
		}
	}
	return latest, copyNs, over, hold, pageable
}

// busyTime sums the time calls of one thread, in start order, covered
// within [from, to].
type busyTime struct {
	from, to, upTo, sum int64
}

func (b *busyTime) add(start, end int64) {
	s, e := max(start, b.from, b.upTo), min(end, b.to)
	if e > s {
		b.sum += e - s
		b.upTo = e
	}
}

// outside is the time within [from, to] no call covered.
func (b *busyTime) outside() int64 { return max(b.to-b.from-b.sum, 0) }

// opSums is what the ops of a schedule add to the capture's measure: the
// latest end (math.MinInt64 for none), the host-device copies' GPU time
// and the part of it a kernel on another stream overlapped.
type opSums struct {
	end, copyNs, overlapNs int64
}

// capture measures CaptureRegion: from the first host-device copy call
// (else the first call that launched anything) to the last op's end; ops
// are the ops' sums in s.
func (rg *regions) capture(s *Schedule, ops opSums) measure {
	tl := rg.tl
	var m measure
	start, anyStart := int64(0), int64(0)
	found, anyFound := false, false
	first := timeline.None
	for c := range tl.Calls.Start {
		if tl.CallOpStart[c+1] == tl.CallOpStart[c] {
			continue
		}
		if !anyFound || s.CallStart[c] < anyStart {
			anyStart, anyFound = s.CallStart[c], true
		}
		if rg.copyCalls[c] {
			if !found || s.CallStart[c] < start {
				start, found, first = s.CallStart[c], true, int32(c)
			}
			m.hold += s.CallEnd[c] - s.CallStart[c]
			if rg.pageableCalls[c] {
				m.pageable += s.CallEnd[c] - s.CallStart[c]
			}
		}
	}
	if first != timeline.None {
		th := tl.Threads[tl.Calls.Thread[first]]
		busy := busyTime{from: s.CallStart[first], to: s.CallEnd[th.Last-1]}
		for c := first; c < th.Last; c++ {
			busy.add(s.CallStart[c], s.CallEnd[c])
		}
		m.outside = float64(busy.outside())
		m.outsideMedian = m.outside
	}
	if !found {
		start = anyStart
	}
	if !anyFound {
		return m
	}
	end := max(start, ops.end)
	m.copyNs, m.overlapNs = ops.copyNs, ops.overlapNs
	m.instances = 1
	m.median = float64(end - start)
	m.span = m.median
	m.total = m.median
	if m.copyNs > 0 {
		m.overlap = float64(m.overlapNs) / float64(m.copyNs)
	}
	if m.median > 0 {
		m.hostShare = float64(m.hold) / m.median
	}
	return m
}

// overlapped is how much of copy j's GPU time in schedule s a kernel on
// another stream of the same process and device was running.
func (rg *regions) overlapped(s *Schedule, j int32) int64 {
	tl := rg.tl
	peers := rg.peers[tl.Ops.Stream[j]]
	cs, ce := s.OpStart[j], s.OpEnd[j]
	if ce <= cs || len(peers) == 0 {
		return 0
	}
	pieces := rg.pieces[:0]
	for _, k := range peers {
		ks := rg.kernels[k]
		// Kernels of a stream run in order: find the first that ends
		// after the copy starts.
		i := sort.Search(len(ks), func(i int) bool { return s.OpEnd[ks[i]] > cs })
		for ; i < len(ks) && s.OpStart[ks[i]] < ce; i++ {
			a, b := max(s.OpStart[ks[i]], cs), min(s.OpEnd[ks[i]], ce)
			if b > a {
				pieces = append(pieces, [2]int64{a, b})
			}
		}
	}
	rg.pieces = pieces
	if len(pieces) == 0 {
		return 0
	}
	slices.SortFunc(pieces, func(x, y [2]int64) int { return cmp.Compare(x[0], y[0]) })
	var sum int64
	cur := pieces[0]
	for _, p := range pieces[1:] {
		if p[0] <= cur[1] {
			cur[1] = max(cur[1], p[1])
			continue
		}
		sum += cur[1] - cur[0]
		cur = p
	}
	return sum + cur[1] - cur[0]
}

// mark is a range mark's time in schedule s: its measured distance from
// the call it is anchored to.
func mark(s *Schedule, tl *timeline.Timeline, a timeline.Anchor, at int64) int64 {
	switch {
	case a.Call == timeline.None:
		return at
	case a.After:
		return s.CallEnd[a.Call] + at - tl.Calls.End[a.Call]
	}
	return s.CallStart[a.Call] + at - tl.Calls.Start[a.Call]
}

// median is the middle value of v (the mean of the two middle ones for an
// even count), 0 for none. v is reordered.
func median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return 0
	}
	slices.Sort(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// compare measures every region measured, replayed and in the three
// what-if runs (low, middle and high costs).
func (rg *regions) compare(mm, rm []measure, pm [3][]measure) []Region {
	names := append([]string{CaptureRegion}, make([]string, len(rg.names))...)
	for k, n := range rg.names {
		names[k+1] = RegionOfRange(rg.tl.Name(n))
	}
	var out []Region
	for k, name := range names {
		m, r := mm[k], rm[k]
		if m.instances == 0 {
			continue
		}
		lo := func(f func(measure) float64) float64 { return min(f(pm[0][k]), f(pm[1][k]), f(pm[2][k])) }
		hi := func(f func(measure) float64) float64 { return max(f(pm[0][k]), f(pm[1][k]), f(pm[2][k])) }
		med := func(x measure) float64 { return x.median }
		span := func(x measure) float64 { return x.span }
		per := func(x measure) float64 { return x.period }
		p := pm[levelMid][k]
		out = append(out, Region{
			Name: name, Instances: m.instances,
			MedianMs: ms(m.median), SpanMs: ms(m.span),
			ReplayMedianMs: ms(r.median), ReplaySpanMs: ms(r.span),
			PredictedMedianMs: ms(p.median), PredictedMedianLowMs: ms(lo(med)), PredictedMedianHighMs: ms(hi(med)),
			PredictedSpanMs: ms(p.span), PredictedSpanLowMs: ms(lo(span)), PredictedSpanHighMs: ms(hi(span)),
			TotalMs: ms(m.total),
			Period: Period{Ms: ms(m.period), ReplayMs: ms(r.period), PredictedMs: ms(p.period),
				PredictedLowMs: ms(lo(per)), PredictedHighMs: ms(hi(per))},
			Overlap:    Share{Measured: m.overlap, Predicted: p.overlap},
			HostShare:  Share{Measured: m.hostShare, Predicted: p.hostShare},
			Queued:     Share{Measured: m.queued, Predicted: p.queued},
			Fit:        Fit{Median: relErr(r.median, m.median), Span: relErr(r.span, m.span), Period: relErr(r.period, m.period)},
			CopyCallMs: ms(float64(m.hold)), PageableCallMs: ms(float64(m.pageable)),
			Outside:  Outside{MedianMs: ms(m.outsideMedian), TotalMs: ms(m.outside)},
			MedianCI: m.ci,
		})
	}
	return out
}

func ms(ns float64) float64 { return ns / 1e6 }

// medianCI is the narrowest interval of order statistics of v (sorted)
// that holds its median with probability at least CICoverage, zero for
// fewer than CIInstances values. The k-th smallest and k-th largest of n
// miss the median when at most k-1 values lie on one side of it.
func medianCI(v []float64) CI {
	n := len(v)
	if n < CIInstances {
		return CI{}
	}
	// tail is P(B <= k-1) for B binomial(n, 1/2), summed term by term in
	// logs (n may be large).
	var tail, cover float64
	best := 0
	for k := 1; k <= n/2; k++ {
		lg := lchoose(n, k-1) - float64(n)*math.Ln2
		tail += math.Exp(lg)
		c := 1 - 2*tail
		if c < CICoverage {
			break
		}
		best, cover = k, c
	}
	if best == 0 {
		return CI{}
	}
	return CI{LowMs: ms(v[best-1]), HighMs: ms(v[n-best]), Coverage: cover}
}

// lchoose is the log of n choose k.
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return 0
	}
	return got/want - 1
}
