package replay

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/nsyscheck/nsyscheck/timeline"
)

// Schedule is one replay's times, in nanoseconds on the capture's clock,
// indexed like the timeline's calls and ops.
type Schedule struct {
	CallStart, CallEnd []int64
	OpStart, OpEnd     []int64
	// Forced counts the dependencies the simulation had to take at their
	// measured time to go on (a cycle in what the capture recorded).
	Forced int
	// park is the simulation's mark of the nodes cursors are parked on, a
	// bit per call and op, cleared and used again by each run into this
	// schedule (nil for Measured's).
	park []uint64
}

// Measured is the schedule the capture itself records.
func Measured(tl *timeline.Timeline) *Schedule {
	return &Schedule{CallStart: tl.Calls.Start, CallEnd: tl.Calls.End, OpStart: tl.Ops.Start, OpEnd: tl.Ops.End}
}

const unknown = math.MinInt64

// node kinds a cursor can wait for.
const (
	nodeCallStart uint64 = iota
	nodeCallEnd
	nodeOpStart
)

func node(kind uint64, i int32) uint64 { return kind<<32 | uint64(uint32(i)) }

// sim is one run of the discrete-event simulation. Host threads and
// streams are cursors that advance through their calls and ops as the
// dependencies of the next one become known; a cursor that must wait
// parks on the node it needs. Copies queue for their engine in the order
// they become ready (a heap by time), so engine contention is first come,
// first served.
type sim struct {
	m  *model
	p  *params
	tl *timeline.Timeline
	s  *Schedule

	nThreads int32
	tcur     []int32 // per thread, its next call
	scur     []int32 // per stream, its next op
	// tEnd is, per thread, the latest replayed end of its calls so far.
	tEnd []int64
	// hcur is, per thread, where handoffOf last looked in tl.Handoffs.
	hcur []int32
	// parkedOn is what each cursor waits for (^0 none). The cursors
	// waiting for a call's end or an op's start are a list per node:
	// parkBits marks the nodes with one (by slot), lists holds each such
	// node's latest cursor (as many as there are cursors at most, so
	// looked through), parkNext each cursor's next; woken holds a list
	// while its cursors are pushed.
	parkedOn []uint64
	parkBits []uint64
	lists    []parkList
	parkNext []int32
	woken    []int32
	queued   []bool // cursor already in work
	work     []int32
	ready    readyHeap
	inHeap   []bool // per op, waiting in the heap for an engine
	free     [][]int64
	// steps counts the calls and ops placed; the context is looked at
	// again at nextCheck.
	steps, nextCheck int
}

// newSchedule returns a schedule for tl to simulate into.
func newSchedule(tl *timeline.Timeline) *Schedule {
	nc, no := tl.Calls.Len(), tl.Ops.Len()
	return &Schedule{CallStart: make([]int64, nc), CallEnd: make([]int64, nc), OpStart: make([]int64, no), OpEnd: make([]int64, no),
		park: make([]uint64, (nc+no+63)/64)}
}

// simulate replays tl under params p into sc, which it overwrites. It
// writes nothing of the model's: runs into schedules of their own may run
// at once.
func (m *model) simulate(ctx context.Context, p *params, sc *Schedule) error {
	tl := m.tl
	for _, v := range [][]int64{sc.CallStart, sc.CallEnd, sc.OpStart, sc.OpEnd} {
		for i := range v {
			v[i] = unknown
		}
	}
	sc.Forced = 0
	no := tl.Ops.Len()
	s := &sim{m: m, p: p, tl: tl, nThreads: int32(len(tl.Threads)), s: sc,
		tcur: make([]int32, len(tl.Threads)), scur: make([]int32, len(tl.Streams)), tEnd: make([]int64, len(tl.Threads)),
		inHeap: make([]bool, no)}
	ncur := len(tl.Threads) + len(tl.Streams)
	s.parkedOn = make([]uint64, ncur)
	s.parkNext = make([]int32, ncur)
	clear(sc.park)
	s.parkBits = sc.park
	s.queued = make([]bool, ncur)
	s.hcur = make([]int32, len(tl.Threads))
	for i := range tl.Threads {
		s.tcur[i] = tl.Threads[i].First
		s.hcur[i] = int32(sort.Search(len(tl.Handoffs), func(n int) bool { return tl.Handoffs[n].Call >= tl.Threads[i].First }))
	}
	for i := range tl.Streams {
		s.scur[i] = tl.Streams[i].First
	}
	for c := range ncur {
		s.parkedOn[c] = ^uint64(0)
		s.push(int32(c))
	}
	for _, n := range m.slots {
		s.free = append(s.free, make([]int64, n))
	}
	for e := range s.free {
		for k := range s.free[e] {
			s.free[e][k] = math.MinInt64
		}
	}
	for {
		for len(s.work) > 0 {
			c := s.work[len(s.work)-1]
			s.work = s.work[:len(s.work)-1]
			s.queued[c] = false
			if c < s.nThreads {
				s.stepThread(c)
			} else {
				s.stepStream(c - s.nThreads)
			}
			if s.steps >= s.nextCheck {
				s.nextCheck = s.steps + timeline.CheckEvery
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("stopped after %d calls and ops: %w", s.steps, err)
				}
			}
		}
		if len(s.ready) > 0 {
			s.startCopy(s.ready.pop())
			continue
		}
		if !s.unstick() {
			break
		}
	}
	return nil
}

func (s *sim) push(c int32) {
	if !s.queued[c] {
		s.queued[c] = true
		s.work = append(s.work, c)
	}
}

// park makes cursor wait for node n. A cursor waits for one node at a
// time, and only wake (of that node) takes it off its list.
func (s *sim) park(cursor int32, n uint64) {
	s.parkedOn[cursor] = n
	if n>>32 != nodeCallStart {
		slot := s.slot(n)
		if !s.marked(slot) {
			s.parkBits[slot/64] |= 1 << (slot % 64)
			s.parkNext[cursor] = -1
			s.lists = append(s.lists, parkList{slot: slot, head: cursor})
			return
		}
		l := &s.lists[s.listOf(slot)]
		s.parkNext[cursor] = l.head
		l.head = cursor
	}
}

// parkList is the latest cursor parked on one node (by slot).
type parkList struct {
	slot, head int32
}

// marked reports whether a cursor is parked on the node of slot.
func (s *sim) marked(slot int32) bool { return s.parkBits[slot/64]&(1<<(slot%64)) != 0 }

// listOf is the place in lists of the marked node of slot.
func (s *sim) listOf(slot int32) int {
	for k := range s.lists {
		if s.lists[k].slot == slot {
			return k
		}
	}
	panic(fmt.Sprintf("replay: node %d marked parked on without a list", slot))
}

// slot is the index in parkBits of a call's end or an op's start.
func (s *sim) slot(n uint64) int32 {
	i := int32(uint32(n))
	if n>>32 == nodeOpStart {
		i += int32(s.tl.Calls.Len())
	}
	return i
}

// wake pushes the cursors waiting for node n, in the order they parked.
func (s *sim) wake(n uint64) {
	if len(s.lists) == 0 {
		return
	}
	slot := s.slot(n)
	if !s.marked(slot) {
		return
	}
	k := s.listOf(slot)
	s.woken = s.woken[:0]
	for c := s.lists[k].head; c >= 0; c = s.parkNext[c] {
		s.woken = append(s.woken, c)
	}
	s.parkBits[slot/64] &^= 1 << (slot % 64)
	last := len(s.lists) - 1
	s.lists[k] = s.lists[last]
	s.lists = s.lists[:last]
	for k := len(s.woken) - 1; k >= 0; k-- {
		c := s.woken[k]
		s.parkedOn[c] = ^uint64(0)
		s.push(c)
	}
}

// stepThread advances a thread through every call it can.
func (s *sim) stepThread(th int32) {
	thr := &s.tl.Threads[th]
	sc := s.s
	for s.tcur[th] < thr.Last {
		if s.steps >= s.nextCheck {
			s.push(th) // yield, so that the context is looked at
			return
		}
		k := s.tcur[th]
		if sc.CallStart[k] == unknown {
			at, ok := s.callStart(th, k)
			if !ok {
				return
			}
			sc.CallStart[k] = at
			// Streams waiting for this launch.
			for _, j := range s.tl.OpsOf(k) {
				c := s.nThreads + s.tl.Ops.Stream[j]
				if s.parkedOn[c] == node(nodeCallStart, k) {
					s.parkedOn[c] = ^uint64(0)
					s.push(c)
				}
			}
		}
		if sc.CallEnd[k] == unknown {
			at, ok := s.callEnd(th, k)
			if !ok {
				return
			}
			sc.CallEnd[k] = at
			s.wake(node(nodeCallEnd, k))
		}
		s.steps++
		if k == thr.First || sc.CallEnd[k] > s.tEnd[th] {
			s.tEnd[th] = sc.CallEnd[k]
		}
		s.tcur[th]++
	}
}

// callStart is call k's replayed start, false when the thread must park.
func (s *sim) callStart(th, k int32) (int64, bool) {
	m, sc := s.m, s.s
	cs := &s.tl.Calls
	if m.flags[k]&flagPolling != 0 {
		if last := m.pollLast[k]; k != s.p.waits[s.p.callWait[last]].first {
			// Inside a polling run: no later than the run's last query.
			end, ok := s.pollStart(th, last)
			if !ok {
				return 0, false
			}
			return min(s.tEnd[th]+m.gap.at(k), end), true
		}
	}
	if w := s.p.callWait[k]; w >= 0 && s.p.waits[w].kind == timeline.WaitPoll {
		return s.pollStart(th, k)
	}
	var at int64
	switch {
	case m.flags[k]&flagFirst != 0:
		at = cs.Start[k]
	case m.flags[k]&flagNested != 0:
		at = sc.CallStart[k-1] + m.gap.at(k)
	default:
		at = s.tEnd[th] + m.gap.at(k)
	}
	if m.flags[k]&flagHandoff != 0 {
		hFrom, wake := s.handoffOf(th, k)
		from := sc.CallEnd[hFrom]
		if from == unknown {
			s.park(th, node(nodeCallEnd, hFrom))
			return 0, false
		}
		// The idle time was waiting: the thread resumes after the call
		// that woke it, and not before its own previous call ended.
		at = max(s.tEnd[th], from+wake)
	}
	return at, true
}

// handoffOf is the call of another thread that call k of thread th
// follows (k has flagHandoff), and its wake-up delay after that call's
// end, as measured. A thread's calls are placed in order and its hand-offs
// are one run of tl.Handoffs (in call order), so a cursor per thread finds
// them: the last of k's entries.
func (s *sim) handoffOf(th, k int32) (from int32, wake int64) {
	hs := s.tl.Handoffs
	n := s.hcur[th]
	for hs[n].Call < k {
		n++
	}
	for int(n)+1 < len(hs) && hs[n+1].Call == k {
		n++
	}
	s.hcur[th] = n
	cs := &s.tl.Calls
	return hs[n].From, cs.Start[k] - cs.End[hs[n].From]
}

// pollStart is the start of the last query of a polling run: once the
// event's work is done, by the measured lag, and not before the run's
// first query.
func (s *sim) pollStart(th, last int32) (int64, bool) {
	w := &s.p.waits[s.p.callWait[last]]
	first := s.s.CallStart[w.first]
	if first == unknown {
		// The run's first query has not started: it is earlier in the
		// thread, so this is reached only from it or after it.
		panic(fmt.Sprintf("replay: polling run of call %d reached before its first query %d", last, w.first))
	}
	if !w.waited {
		return first + w.lag, true
	}
	wEnd, _, ok := s.awaited(th, w.on)
	if !ok {
		return 0, false
	}
	return max(first, wEnd+w.lag), true
}

// awaited is the latest end and latest start of ops on, false (parked)
// when one has not started yet.
func (s *sim) awaited(cursor int32, on []int32) (end, start int64, ok bool) {
	sc := s.s
	end, start = math.MinInt64, math.MinInt64
	for _, j := range on {
		if sc.OpStart[j] == unknown {
			s.park(cursor, node(nodeOpStart, j))
			return 0, 0, false
		}
		end, start = max(end, sc.OpEnd[j]), max(start, sc.OpStart[j])
	}
	return end, start, true
}

// callEnd is call k's replayed end, false when the thread must park.
func (s *sim) callEnd(th, k int32) (int64, bool) {
	sc := s.s
	start := sc.CallStart[k]
	if s.m.flags[k]&flagPolling != 0 {
		last := s.m.pollLast[k]
		// A not-ready query: cut short where the run's last query starts.
		end, ok := s.pollStart(th, last)
		if !ok {
			return 0, false
		}
		return min(start+s.p.callDur.at(k), end), true
	}
	wi := s.p.callWait[k]
	if wi < 0 || s.p.waits[wi].kind == timeline.WaitPoll {
		return start + s.p.callDur.at(k), true
	}
	w := &s.p.waits[wi]
	wEnd, wStart, ok := s.awaited(th, w.on)
	if !ok {
		return 0, false
	}
	end := max(start+w.own, wEnd+w.tail)
	if w.clampStart {
		end = max(end, wStart)
	}
	return end, true
}

// stepStream advances a stream through every op it can.
func (s *sim) stepStream(st int32) {
	str := &s.tl.Streams[st]
	sc := s.s
	cursor := s.nThreads + st
	for s.scur[st] < str.Last {
		if s.steps >= s.nextCheck {
			s.push(cursor)
			return
		}
		j := s.scur[st]
		if sc.OpStart[j] != unknown {
			s.scur[st]++
			continue
		}
		if s.inHeap[j] {
			return
		}
		at, ok := s.opReady(cursor, j)
		if !ok {
			return
		}
		if e := s.m.engineOf(j); e >= 0 {
			s.inHeap[j] = true
			s.ready.push(readyOp{at: at, op: j, engine: e})
			return
		}
		s.startOp(j, at)
	}
}

// opReady is when op j's dependencies allow it to start, false (parked)
// when one is not known yet.
func (s *sim) opReady(cursor, j int32) (int64, bool) {
	m, sc, tl := s.m, s.s, s.tl
	o := &tl.Ops
	at, any := int64(math.MinInt64), false
	if c := o.Call[j]; c != timeline.None {
		if sc.CallStart[c] == unknown {
			s.park(cursor, node(nodeCallStart, c))
			return 0, false
		}
		at, any = sc.CallStart[c]+s.p.latL.at(j), true
		if s.p.fromEnd[j] {
			if sc.CallEnd[c] == unknown {
				s.park(cursor, node(nodeCallEnd, c))
				return 0, false
			}
			at = max(sc.CallEnd[c]+s.p.latL.at(j), sc.CallStart[c])
		}
	}
	if j > tl.Streams[o.Stream[j]].First {
		at, any = max(at, sc.OpEnd[j-1]+m.latP.at(j)), true
	}
	for k := m.streamWaitOf(j); k >= 0 && int(k) < len(tl.StreamWaits) && tl.StreamWaits[k].Op == j; k++ {
		e := tl.StreamWaits[k].On
		if sc.OpStart[e] == unknown {
			s.park(cursor, node(nodeOpStart, e))
			return 0, false
		}
		at, any = max(at, sc.OpEnd[e]+m.swLat[k]), true
	}
	if !any {
		at = o.Start[j] // no call, first on its stream: as measured
	}
	return at, true
}

func (s *sim) startOp(j int32, at int64) {
	sc := s.s
	s.steps++
	sc.OpStart[j] = at
	sc.OpEnd[j] = at + s.p.opDur.at(j)
	s.wake(node(nodeOpStart, j))
	s.scur[s.tl.Ops.Stream[j]]++
}

// startCopy gives a ready copy the engine that frees first.
func (s *sim) startCopy(r readyOp) {
	j := r.op
	s.inHeap[j] = false
	slots := s.free[r.engine]
	best := 0
	for k := range slots {
		if slots[k] < slots[best] {
			best = k
		}
	}
	at := max(r.at, slots[best])
	slots[best] = at + s.p.opDur.at(j)
	s.startOp(j, at)
	s.push(s.nThreads + s.tl.Ops.Stream[j])
}

// unstick lets the simulation go on when every cursor waits: the parked
// node with the earliest measured time is taken at its measured time.
// It reports false when nothing is parked (the simulation is done).
func (s *sim) unstick() bool {
	tl, sc := s.tl, s.s
	best, bestAt := uint64(0), int64(math.MaxInt64)
	found := false
	for _, n := range s.parkedOn {
		if n == ^uint64(0) {
			continue
		}
		i := int32(uint32(n))
		var at int64
		switch n >> 32 {
		case nodeCallStart:
			at = tl.Calls.Start[i]
		case nodeCallEnd:
			at = tl.Calls.End[i]
		case nodeOpStart:
			at = tl.Ops.Start[i]
		}
		if !found || at < bestAt {
			best, bestAt, found = n, at, true
		}
	}
	if !found {
		return false
	}
	i := int32(uint32(best))
	sc.Forced++
	switch best >> 32 {
	case nodeCallStart:
		sc.CallStart[i] = tl.Calls.Start[i]
		for _, j := range tl.OpsOf(i) {
			c := s.nThreads + tl.Ops.Stream[j]
			if s.parkedOn[c] == best {
				s.parkedOn[c] = ^uint64(0)
				s.push(c)
			}
		}
	case nodeCallEnd:
		sc.CallEnd[i] = tl.Calls.End[i]
		s.wake(best)
	case nodeOpStart:
		sc.OpStart[i], sc.OpEnd[i] = tl.Ops.Start[i], tl.Ops.End[i]
		s.wake(best)
	}
	return true
}

// readyOp is a copy waiting for its engine from time at.
type readyOp struct {
	at         int64
	op, engine int32
}

// readyHeap orders ready copies by time, then op: a binary heap kept by
// hand, so that pushing and popping allocate nothing.
type readyHeap []readyOp

func (h readyHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].op < h[j].op
}

func (h *readyHeap) push(r readyOp) {
	*h = append(*h, r)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *readyHeap) pop() readyOp {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}
