package replay

import (
	"slices"
	"sort"

	"github.com/nsyscheck/nsyscheck/timeline"
)

// model holds what the simulation needs of each call and op, derived once
// from the measured timeline: how long each takes and by how much it
// follows each of its dependencies. A dependency that bound a node in the
// capture keeps its measured delay; one that did not gets the node's
// floor, so that it binds in a replay only when the others move away.
type model struct {
	tl *timeline.Timeline
	params
	// Per call: the delay after the thread's previous call (after its end,
	// or after its start for a nested call), and flags.
	gap   []int64
	flags []uint8
	// handoff holds the calls that follow another thread's call.
	handoff map[int32]handoff
	// pollLast maps each query of a polling run but its last to the last.
	pollLast map[int32]int32
	// Per op: the delays after its stream predecessor's end, and the copy
	// engine it uses (-1 none).
	latP   []int64
	engine []int32
	// swFirst is, per op, its first entry in tl.StreamWaits (-1 none);
	// swLat the delay after each entry's op.
	swFirst []int32
	swLat   []int64
	// slots is the capacity of each engine.
	slots []int
}

// params are the parts of the model the what-if changes.
type params struct {
	callDur  []int64 // a call's duration when it does not wait
	callWait []int32 // index into waits, -1 none
	waits    []simWait
	opDur    []int64
	latL     []int64 // an op's delay after its call's start
}

func (p *params) clone() params {
	return params{callDur: slices.Clone(p.callDur), callWait: slices.Clone(p.callWait), waits: slices.Clone(p.waits),
		opDur: slices.Clone(p.opDur), latL: slices.Clone(p.latL)}
}

// copyFrom overwrites p with q, reusing p's arrays.
func (p *params) copyFrom(q *params) {
	copy(p.callDur, q.callDur)
	copy(p.callWait, q.callWait)
	p.waits = append(p.waits[:0], q.waits...)
	copy(p.opDur, q.opDur)
	copy(p.latL, q.latL)
}

const (
	flagNested uint8 = 1 << iota // began before the thread's previous call ended
	flagFirst                    // the thread's first call: at its measured time
)

type handoff struct {
	from int32
	wake int64
}

// simWait is how a waiting call's end (or, for a poll, its start) follows
// the work it waits for: end = max(start + own, W + tail), W the latest
// end of the ops On; clampStart also keeps it after their latest start.
type simWait struct {
	on         []int32
	kind       timeline.WaitKind
	own, tail  int64
	clampStart bool
	// Polls: the run's first call, and the delay of the run's last query
	// after W (or after the first query's start when !waited).
	first  int32
	lag    int64
	waited bool
}

// newModel derives the model of tl's measured times.
func newModel(tl *timeline.Timeline) *model {
	m := &model{tl: tl, handoff: map[int32]handoff{}, pollLast: map[int32]int32{}}
	m.calls()
	m.ops()
	return m
}

func (m *model) calls() {
	tl := m.tl
	cs := &tl.Calls
	n := cs.Len()
	m.gap = make([]int64, n)
	m.flags = make([]uint8, n)
	m.callDur = make([]int64, n)
	m.callWait = make([]int32, n)
	for i := range m.callWait {
		m.callWait[i] = -1
		m.callDur[i] = cs.End[i] - cs.Start[i]
	}
	for _, th := range tl.Threads {
		var prevEnd int64
		for i := th.First; i < th.Last; i++ {
			switch {
			case i == th.First:
				m.flags[i] |= flagFirst
			case cs.Start[i] < prevEnd:
				m.flags[i] |= flagNested
				m.gap[i] = cs.Start[i] - cs.Start[i-1]
			default:
				m.gap[i] = cs.Start[i] - prevEnd
			}
			if i == th.First || cs.End[i] > prevEnd {
				prevEnd = cs.End[i]
			}
		}
	}
	for _, h := range tl.Handoffs {
		m.handoff[h.Call] = handoff{from: h.From, wake: cs.Start[h.Call] - cs.End[h.From]}
	}
	o := &tl.Ops
	for _, w := range tl.Waits {
		sw := simWait{on: w.On, kind: w.Kind, first: w.PollFirst}
		var wEnd, wStart int64
		for k, j := range w.On {
			if k == 0 || o.End[j] > wEnd {
				wEnd = o.End[j]
			}
			if k == 0 || o.Start[j] > wStart {
				wStart = o.Start[j]
			}
		}
		i := w.Call
		if w.Kind == timeline.WaitPoll {
			for q := w.PollFirst; q < i; q++ {
				m.pollLast[q] = i
			}
			sw.waited = wEnd > cs.Start[w.PollFirst]
			if sw.waited {
				sw.lag = cs.Start[i] - wEnd
			} else {
				sw.lag = cs.Start[i] - cs.Start[w.PollFirst]
			}
		} else if wEnd > cs.Start[i] {
			sw.tail = cs.End[i] - wEnd
			if cs.End[i] >= wStart {
				// The call was still running when the work began: it
				// ends with the work (before it by at most the tail).
				sw.own = max(sw.tail, 0)
				sw.clampStart = sw.tail < 0
			} else {
				// It returned before the work began (a staged copy): its
				// own time binds, the work only if it comes later.
				sw.own = cs.End[i] - cs.Start[i]
			}
		} else {
			sw.own = cs.End[i] - cs.Start[i]
		}
		m.callWait[i] = int32(len(m.waits))
		m.waits = append(m.waits, sw)
	}
}

// opClass sorts ops for their launch-delay floors: kind, and for copies
// direction and host memory.
type opClass struct {
	kind timeline.OpKind
	dir  timeline.Dir
	mem  timeline.Mem
}

func (m *model) ops() {
	tl := m.tl
	o := &tl.Ops
	cs := &tl.Calls
	n := o.Len()
	m.opDur = make([]int64, n)
	m.latL = make([]int64, n)
	m.latP = make([]int64, n)
	m.engine = make([]int32, n)
	m.swFirst = make([]int32, n)
	for j := range m.swFirst {
		m.swFirst[j] = -1
		m.opDur[j] = o.End[j] - o.Start[j]
		m.engine[j] = int32(tl.EngineOf(int32(j)))
	}
	for k := len(tl.StreamWaits) - 1; k >= 0; k-- {
		m.swFirst[tl.StreamWaits[k].Op] = int32(k)
	}
	m.swLat = make([]int64, len(tl.StreamWaits))
	for _, e := range tl.Engines {
		m.slots = append(m.slots, e.Capacity)
	}
	engineFree := m.engineFree()
	// q is, per op, the latest GPU-side readiness in the capture (stream
	// predecessor, event, engine) and which one it was.
	q := make([]int64, n)
	qKind := make([]uint8, n) // 0 none, 1 predecessor, 2 event (entry in swBind), 3 engine
	swBind := make([]int32, n)
	for j := range o.Kind {
		s := tl.Streams[o.Stream[j]]
		if int32(j) > s.First {
			q[j], qKind[j] = o.End[j-1], 1
		}
		for k := m.swFirst[j]; k >= 0 && k < int32(len(tl.StreamWaits)) && tl.StreamWaits[k].Op == int32(j); k++ {
			if e := o.End[tl.StreamWaits[k].On]; qKind[j] == 0 || e > q[j] {
				q[j], qKind[j], swBind[j] = e, 2, k
			}
		}
		if f, ok := engineFree[int32(j)]; ok && (qKind[j] == 0 || f > q[j]) {
			q[j], qKind[j] = f, 3
		}
	}
	// The floor of each class: the median launch delay of the ops the
	// GPU was waiting for (launch-bound).
	bound := map[opClass][]int64{}
	classes := map[opClass]bool{}
	for j := range o.Kind {
		c := o.Call[j]
		if c == timeline.None {
			continue
		}
		k := opClass{o.Kind[j], o.Dir[j], o.HostMem(int32(j))}
		lat := o.Start[j] - cs.Start[c]
		if qKind[j] == 0 || q[j] <= cs.Start[c] {
			bound[k] = append(bound[k], lat)
		}
		classes[k] = true
	}
	// A class none of whose ops was launch-bound takes the median over
	// every launch-bound op (its own least delay may be all queueing).
	var all []int64
	for _, v := range bound {
		all = append(all, v...)
	}
	floor := map[opClass]int64{}
	for k := range classes {
		floor[k] = 0
		if len(all) > 0 {
			floor[k] = medianInt(all)
		}
	}
	for k, v := range bound {
		floor[k] = medianInt(v)
	}
	for j := range o.Kind {
		c := o.Call[j]
		launchBound := c != timeline.None && (qKind[j] == 0 || q[j] <= cs.Start[c])
		if c != timeline.None {
			lat := max(o.Start[j]-cs.Start[c], 0)
			if !launchBound {
				lat = min(lat, floor[opClass{o.Kind[j], o.Dir[j], o.HostMem(int32(j))}])
			}
			m.latL[j] = lat
		}
		if launchBound {
			continue
		}
		delay := max(o.Start[j]-q[j], 0)
		switch qKind[j] {
		case 1:
			m.latP[j] = delay
		case 2:
			m.swLat[swBind[j]] = delay
		case 3:
			// The engine binds by itself in the simulation.
		}
	}
}

// engineFree finds, for each copy that waited for a copy engine in the
// capture, when an engine became free for it: the latest end of a copy of
// the same engine between its launch and its start, at a moment when every
// engine was busy.
func (m *model) engineFree() map[int32]int64 {
	tl := m.tl
	o := &tl.Ops
	cs := &tl.Calls
	byEngine := make([][]int32, len(tl.Engines))
	for j := range o.Kind {
		if e := m.engine[j]; e >= 0 {
			byEngine[e] = append(byEngine[e], int32(j))
		}
	}
	free := map[int32]int64{}
	for e, ops := range byEngine {
		starts := make([]int64, len(ops))
		ends := make([]int64, len(ops))
		for k, j := range ops {
			starts[k], ends[k] = o.Start[j], o.End[j]
		}
		slices.Sort(starts)
		slices.Sort(ends)
		running := func(at int64) int { // copies with start <= at < end
			return sort.Search(len(starts), func(k int) bool { return starts[k] > at }) -
				sort.Search(len(ends), func(k int) bool { return ends[k] > at })
		}
		for _, j := range ops {
			c := o.Call[j]
			if c == timeline.None {
				continue
			}
			launch, start := cs.Start[c], o.Start[j]
			// The latest end in (launch, start].
			k := sort.Search(len(ends), func(k int) bool { return ends[k] > start }) - 1
			if k < 0 || ends[k] <= launch {
				continue
			}
			if running(ends[k]-1) >= m.slots[e] {
				free[j] = ends[k]
			}
		}
	}
	return free
}

// medianInt is the middle value of v (the upper one of two), at least 0.
// v is reordered.
func medianInt(v []int64) int64 {
	slices.Sort(v)
	return max(v[len(v)/2], 0)
}
