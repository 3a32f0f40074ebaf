package replay

import (
	"math"
	"slices"

	"github.com/nsyscheck/nsyscheck/internal/cursor"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// model holds what the simulation needs of each call and op, derived once
// from the measured timeline: how long each takes and by how much it
// follows each of its dependencies. Host work (the time between a thread's
// calls, a call's own time when it waits for nothing) keeps its measured
// value; every delay behind a dependency — a launch, a stream predecessor,
// an event, the return of a waiting call — takes the typical value of its
// class (Typical), the same in the as-captured replay and in the what-if,
// so that a dependency the model lacks shows as a misfit.
type model struct {
	tl *timeline.Timeline
	params
	// Per call: the delay after the thread's previous call (after its end,
	// or after its start for a nested call), and flags.
	gap   spans
	flags []uint8
	// pollLast holds, by call, the last query of the polling run each
	// query but the last is in (flagPolling marks those; nil with none).
	pollLast []int32
	// Per op: the delay after its stream predecessor's end.
	latP spans
	// streamEngine is the copy engine of each stream's copies, by
	// direction (host to device, device to host; -1 none): see engineOf.
	streamEngine [][2]int32
	// swFirst is, per op, its first entry in tl.StreamWaits (-1 none; nil
	// when there are no entries: see streamWaitOf); swLat the delay after
	// each entry's op.
	swFirst []int32
	swLat   []int64
	// slots is the capacity of each engine; engineAt holds, per op, when an
	// engine became free for a copy that waited for one in the capture
	// (noEngineWait for the others), nil when none waited. Only the
	// model's sampling and misfits read it: Replay lets it go before the
	// simulations.
	slots    []int
	engineAt []int64
	// engines, when set, gives engineAt (engineFreeOf found beside the
	// model); nil finds it in the model.
	engines func() []int64
	// typ holds the modelled quantities' classes and their uses.
	typ   *typicals
	sizes Sizes
}

// params are the parts of the model the what-if changes.
type params struct {
	callDur  spans   // a call's duration when it does not wait
	callWait []int32 // index into waits, -1 none
	waits    []simWait
	opDur    spans
	// latL is an op's delay after its call's start, or after its call's
	// end where fromEnd (a call that does not wait for it).
	latL    spans
	fromEnd []bool
}

// clone copies p for another what-if. The waits p holds are shared, not
// copied: apply rewrites no wait it did not append itself, and the copy's
// first append moves its waits to an array of its own (their capacity cut
// to their length), so neither writes where the other reads.
func (p *params) clone() params {
	return params{callDur: p.callDur.clone(), callWait: slices.Clone(p.callWait), waits: slices.Clip(p.waits),
		opDur: p.opDur.clone(), latL: p.latL.clone(), fromEnd: slices.Clone(p.fromEnd)}
}

const (
	flagNested  uint8 = 1 << iota // began before the thread's previous call ended
	flagFirst                     // the thread's first call: at its measured time
	flagPolling                   // inside a polling run: pollLast holds the run's last query
	flagHandoff                   // follows another thread's call: sim.handoffOf finds it
)

// simWait is how a waiting call's end (or, for a poll, its start) follows
// the work it waits for: end = max(start + own, W + tail), W the latest
// end of the ops On; clampStart also keeps it after their latest start.
type simWait struct {
	on        []int32
	own, tail int64
	// Polls: the delay of the run's last query after W (or after the first
	// query's start when !waited), and the run's first call.
	lag   int64
	first int32
	kind  timeline.WaitKind
	// clampStart also keeps the end after the ops' latest start.
	clampStart bool
	waited     bool
}

// newModel derives the model of tl's measured times; sizes are the size
// classes of the copies' return delays.
func newModel(tl *timeline.Timeline, sizes Sizes) *model {
	return newModelOf(tl, sizes, nil)
}

// newModelOf is newModel, engines (nil for none) giving when an engine
// became free for each copy that waited for one, as engineFreeOf.
func newModelOf(tl *timeline.Timeline, sizes Sizes, engines func() []int64) *model {
	m := &model{tl: tl, typ: newTypicals(), sizes: sizes, engines: engines}
	m.calls()
	waits := m.sampleWaits()
	m.typ.finish(qReturn, qOwn, qPoll)
	m.modelWaits(waits)
	ops := m.sampleLaunches()
	m.typ.finish(qLaunch, qSubmit)
	m.sampleQueues(ops)
	m.typ.finish(qQueue, qEvent)
	m.modelOps(ops)
	return m
}

func (m *model) calls() {
	tl := m.tl
	cs := &tl.Calls
	n := cs.Len()
	m.gap = newSpans(n)
	m.flags = make([]uint8, n)
	m.callDur = newSpans(n)
	m.callWait = make([]int32, n)
	for i := range m.callWait {
		m.callWait[i] = -1
		m.callDur.set(int32(i), cs.End[i]-cs.Start[i])
	}
	for _, th := range tl.Threads {
		var prevEnd int64
		for i := th.First; i < th.Last; i++ {
			switch {
			case i == th.First:
				m.flags[i] |= flagFirst
			case cs.Start[i] < prevEnd:
				m.flags[i] |= flagNested
				m.gap.set(i, cs.Start[i]-cs.Start[i-1])
			default:
				m.gap.set(i, cs.Start[i]-prevEnd)
			}
			if i == th.First || cs.End[i] > prevEnd {
				prevEnd = cs.End[i]
			}
		}
	}
	for _, h := range tl.Handoffs {
		m.flags[h.Call] |= flagHandoff
	}
}

// How a waiting call met its work in the capture.
const (
	metWaited  uint8 = iota // it was running when the work began and ended with it
	metDone                 // the work was done before it began
	metStaged               // it returned before the work began (a staged copy)
	metPolled               // a polling run that waited for the work
	metPollNot              // a polling run whose work was done before its first query
)

// sampledWait is one of tl.Waits with what the capture shows of it.
type sampledWait struct {
	key          tkey
	met          uint8
	wEnd, wStart int64
}

// waitKey is the class of wait w: its call's API and wait kind, and for a
// copy's own wait the copy's direction, host memory and size class.
func (m *model) waitKey(w *timeline.Wait, q qcode) tkey {
	tl := m.tl
	k := tkey{q: q, api: tl.Calls.Name[w.Call], wait: w.Kind, size: anyClass}
	if (w.Kind == timeline.WaitCopy || w.Kind == timeline.WaitHeld) && len(w.On) > 0 {
		j := w.On[0]
		k.dir, k.mem, k.size = tl.Ops.Dir[j], tl.Ops.HostMem(j), int32(m.sizes.Of(tl.Ops.Bytes[j]))
	} else {
		k.dir, k.mem = timeline.DirNone, timeline.MemNone
	}
	return k
}

// sampleWaits sorts every wait by how it met its work and gathers the
// samples of the return, own and poll delays.
func (m *model) sampleWaits() []sampledWait {
	tl := m.tl
	cs := &tl.Calls
	o := &tl.Ops
	out := make([]sampledWait, len(tl.Waits))
	for n := range tl.Waits {
		w := &tl.Waits[n]
		sw := &out[n]
		for k, j := range w.On {
			if k == 0 || o.End[j] > sw.wEnd {
				sw.wEnd = o.End[j]
			}
			if k == 0 || o.Start[j] > sw.wStart {
				sw.wStart = o.Start[j]
			}
		}
		i := w.Call
		switch {
		case w.Kind == timeline.WaitPoll && sw.wEnd > cs.Start[w.PollFirst]:
			sw.met, sw.key = metPolled, m.waitKey(w, qPoll)
			m.typ.add(sw.key, cs.Start[i]-sw.wEnd)
		case w.Kind == timeline.WaitPoll:
			sw.met = metPollNot
		case sw.wEnd <= cs.Start[i]:
			sw.met, sw.key = metDone, m.waitKey(w, qOwn)
			m.typ.add(sw.key, cs.End[i]-cs.Start[i])
		case cs.End[i] < sw.wStart:
			sw.met = metStaged
		default:
			sw.met, sw.key = metWaited, m.waitKey(w, qReturn)
			m.typ.add(sw.key, cs.End[i]-sw.wEnd)
		}
	}
	return out
}

// modelWaits gives every wait its delays: typical ones where its class has
// samples, else its own measured ones. A staged copy's call does not wait
// for its copy: it keeps its own time.
func (m *model) modelWaits(sampled []sampledWait) {
	tl := m.tl
	cs := &tl.Calls
	m.waits = make([]simWait, 0, len(tl.Waits))
	for n := range tl.Waits {
		w, s := &tl.Waits[n], &sampled[n]
		i := w.Call
		sw := simWait{on: w.On, kind: w.Kind, first: w.PollFirst}
		returnKey := m.waitKey(w, qReturn)
		switch s.met {
		case metStaged:
			continue
		case metPolled, metPollNot:
			for q := w.PollFirst; q < i; q++ {
				if m.pollLast == nil {
					m.pollLast = make([]int32, len(m.flags))
				}
				m.pollLast[q] = i
				m.flags[q] |= flagPolling
			}
			sw.waited = s.met == metPolled
			if sw.waited {
				sw.lag = cs.Start[i] - s.wEnd
				if v, ok := m.typ.get(s.key); ok {
					sw.lag = v
				}
			} else {
				sw.lag = cs.Start[i] - cs.Start[w.PollFirst]
			}
		case metDone:
			// Its own time binds; the work binds if it comes later.
			sw.own = cs.End[i] - cs.Start[i]
			if v, ok := m.typ.get(returnKey); ok {
				sw.tail = v
			}
		case metWaited:
			sw.tail = cs.End[i] - s.wEnd
			if v, ok := m.typ.get(returnKey); ok {
				sw.tail = v
			}
			if v, ok := m.typ.get(m.waitKey(w, qOwn)); ok {
				sw.own = v
			}
			// A call that returns before its work ends still returns
			// after the work began.
			sw.clampStart = sw.tail < 0
		}
		m.callWait[i] = int32(len(m.waits))
		m.waits = append(m.waits, sw)
	}
}

// opKey is op j's class for a quantity: its kind, a copy's direction and
// host memory, and for launches its call's API.
func (m *model) opKey(j int32, q qcode) tkey {
	tl := m.tl
	o := &tl.Ops
	k := tkey{q: q, api: timeline.None, kind: o.Kind[j], dir: o.Dir[j], mem: o.HostMem(j), size: anyClass}
	if c := o.Call[j]; (q == qLaunch || q == qSubmit) && c != timeline.None {
		k.api = tl.Calls.Name[c]
	}
	return k
}

// launchKey is op j's class of launch delay: after its call's end when
// the call does not wait for it, else after its start.
func (m *model) launchKey(j int32) tkey {
	if m.fromEnd[j] {
		return m.opKey(j, qSubmit)
	}
	return m.opKey(j, qLaunch)
}

// launchKeyOf is launchKey(j) from k, op j's opKey for a quantity that
// is not a launch's (whose API is timeline.None): the same class but for
// the quantity and the API.
func (m *model) launchKeyOf(j int32, k tkey) tkey {
	k.q = qLaunch
	if m.fromEnd[j] {
		k.q = qSubmit
	}
	if c := m.tl.Ops.Call[j]; c != timeline.None {
		k.api = m.tl.Calls.Name[c]
	}
	return k
}

// streamWaitOf is op j's first entry in tl.StreamWaits, -1 for none.
func (m *model) streamWaitOf(j int32) int32 {
	if m.swFirst == nil {
		return -1
	}
	return m.swFirst[j]
}

// streamEngines finds the copy engine of each stream's copies in each
// direction: the engine of the stream's device and the direction.
func (m *model) streamEngines() {
	tl := m.tl
	m.streamEngine = make([][2]int32, len(tl.Streams))
	for s := range m.streamEngine {
		for d, dir := range [2]timeline.Dir{timeline.DirHtoD, timeline.DirDtoH} {
			m.streamEngine[s][d] = -1
			for e := range tl.Engines {
				if tl.Engines[e].Device == tl.Streams[s].Device && tl.Engines[e].Dir == dir {
					m.streamEngine[s][d] = int32(e)
					break
				}
			}
		}
	}
}

// engineOf is the copy engine op j uses, -1 none: a host-device copy's
// stream's, as tl.EngineOf finds it.
func (m *model) engineOf(j int32) int32 {
	o := &m.tl.Ops
	if o.Kind[j] != timeline.OpCopy {
		return -1
	}
	switch o.Dir[j] {
	case timeline.DirHtoD:
		return m.streamEngine[o.Stream[j]][0]
	case timeline.DirDtoH:
		return m.streamEngine[o.Stream[j]][1]
	}
	return -1
}

// waitsFor reports whether call c waits for op j.
func (m *model) waitsFor(c, j int32) bool {
	if w := m.callWait[c]; w >= 0 {
		return slices.Contains(m.waits[w].on, j)
	}
	return false
}

// How an op met its dependencies in the capture: what it started after.
const (
	boundNone   uint8 = iota // first on its stream, without a call
	boundLaunch              // its launch: every GPU-side dependency was done by then
	boundPred                // its stream predecessor
	boundEvent               // an event another stream recorded (the entry in StreamWaits)
	boundEngine              // a copy engine
	boundEither              // a GPU-side dependency done after its launch but before the typical launch delay ran out
)

// sampledOp is what held one op back in the capture.
type sampledOp struct {
	at    int64 // when the binding GPU-side dependency was done
	sw    int32 // the binding StreamWaits entry
	kind  uint8 // what it was bound by, before the launch is weighed
	bound uint8
}

// anchor is the measured time op j's launch delay runs from: its call's
// start or end.
func (m *model) anchor(j int32) int64 {
	c := m.tl.Ops.Call[j]
	if m.fromEnd[j] {
		return m.tl.Calls.End[c]
	}
	return m.tl.Calls.Start[c]
}

// sampleLaunches finds what held each op back on the GPU in the capture
// and gathers the samples of the launch delays: the ops whose GPU-side
// dependencies were all done when their launch delay began.
func (m *model) sampleLaunches() []sampledOp {
	tl := m.tl
	o := &tl.Ops
	n := o.Len()
	m.opDur = newSpans(n)
	m.latL = newSpans(n)
	m.fromEnd = make([]bool, n)
	m.latP = newSpans(n)
	if len(tl.StreamWaits) > 0 {
		m.swFirst = make([]int32, n)
		for j := range m.swFirst {
			m.swFirst[j] = -1
		}
	}
	for j := range n {
		m.opDur.set(int32(j), o.End[j]-o.Start[j])
		if c := o.Call[j]; c != timeline.None {
			m.fromEnd[j] = !m.waitsFor(c, int32(j))
		}
	}
	m.streamEngines()
	for k := len(tl.StreamWaits) - 1; k >= 0; k-- {
		m.swFirst[tl.StreamWaits[k].Op] = int32(k)
	}
	m.swLat = make([]int64, len(tl.StreamWaits))
	for _, e := range tl.Engines {
		m.slots = append(m.slots, e.Capacity)
	}
	if m.engines != nil {
		m.engineAt = m.engines()
	} else {
		m.engineAt = m.engineFree()
	}
	out := make([]sampledOp, n)
	for j := range o.Kind {
		op, s := int32(j), &out[j]
		// The latest GPU-side readiness in the capture: stream predecessor,
		// event, engine.
		if op > tl.Streams[o.Stream[j]].First {
			s.at, s.kind = o.End[j-1], boundPred
		}
		for k := m.streamWaitOf(op); k >= 0 && k < int32(len(tl.StreamWaits)) && tl.StreamWaits[k].Op == op; k++ {
			if e := o.End[tl.StreamWaits[k].On]; s.kind == boundNone || e > s.at {
				s.at, s.kind, s.sw = e, boundEvent, k
			}
		}
		if f, ok := m.engineWait(op); ok && (s.kind == boundNone || f > s.at) {
			s.at, s.kind = f, boundEngine
		}
		s.bound = s.kind
		if o.Call[j] == timeline.None {
			continue
		}
		if at := m.anchor(op); s.kind == boundNone || s.at <= at {
			s.bound = boundLaunch
			m.typ.add(m.launchKey(op), o.Start[j]-at)
		}
	}
	return out
}

// sampleQueues gathers the samples of the queue and event delays: the ops
// whose GPU-side dependency was done after their launch would typically
// have started them. An op whose dependency was done between its launch
// and the typical launch delay's end is no sample of either.
func (m *model) sampleQueues(sampled []sampledOp) {
	o := &m.tl.Ops
	for j := range o.Kind {
		op, s := int32(j), &sampled[j]
		if s.bound == boundLaunch || s.bound == boundNone {
			continue
		}
		k := m.opKey(op, qQueue)
		if o.Call[j] != timeline.None {
			if v, ok := m.typ.get(m.launchKeyOf(op, k)); ok && s.at <= m.anchor(op)+v {
				s.bound = boundEither
				continue
			}
		}
		switch s.bound {
		case boundPred:
			m.typ.add(k, o.Start[j]-s.at)
		case boundEvent:
			k.q = qEvent
			m.typ.add(k, o.Start[j]-s.at)
		}
	}
}

// modelOps gives every op its delays after its launch, its stream
// predecessor and its events: typical ones where its class has samples,
// else its own measured ones (and none for a dependency that did not hold
// it back). An op without a call (a unified-memory migration, which page
// faults start) keeps its measured delay after its stream predecessor. A
// copy engine binds by itself in the simulation.
func (m *model) modelOps(sampled []sampledOp) {
	tl := m.tl
	o := &tl.Ops
	for j := range o.Kind {
		op, s := int32(j), &sampled[j]
		c := o.Call[j]
		queue := m.opKey(op, qQueue)
		event := queue
		event.q = qEvent
		if c != timeline.None {
			lat := o.Start[j] - m.anchor(op)
			if v, ok := m.typ.get(m.launchKeyOf(op, queue)); ok {
				lat = v
			}
			if !m.fromEnd[j] {
				lat = max(lat, 0)
			}
			m.latL.set(op, lat)
		}
		if op > tl.Streams[o.Stream[j]].First {
			if s.bound == boundPred {
				m.latP.set(op, max(o.Start[j]-s.at, 0))
			}
			if c == timeline.None {
				m.latP.set(op, max(o.Start[j]-o.End[j-1], 0))
			} else if v, ok := m.typ.get(queue); ok {
				m.latP.set(op, max(v, 0))
			}
		}
		for k := m.streamWaitOf(op); k >= 0 && k < int32(len(tl.StreamWaits)) && tl.StreamWaits[k].Op == op; k++ {
			if s.bound == boundEvent && s.sw == k {
				m.swLat[k] = max(o.Start[j]-s.at, 0)
			}
			if v, ok := m.typ.get(event); ok {
				m.swLat[k] = max(v, 0)
			}
		}
	}
}

// noEngineWait marks an op that did not wait for a copy engine.
const noEngineWait = math.MinInt64

// engineWait is when a copy engine became free for op j in the capture,
// false when j did not wait for one.
func (m *model) engineWait(j int32) (int64, bool) {
	if m.engineAt == nil || m.engineAt[j] == noEngineWait {
		return 0, false
	}
	return m.engineAt[j], true
}

// engineFreeOf is engineFree of a model of tl: it reads only tl's ops,
// calls, streams and engines.
func engineFreeOf(tl *timeline.Timeline) []int64 {
	m := &model{tl: tl}
	m.streamEngines()
	for _, e := range tl.Engines {
		m.slots = append(m.slots, e.Capacity)
	}
	return m.engineFree()
}

// engineFree finds, for each copy that waited for a copy engine in the
// capture, when an engine became free for it: the latest end of a copy of
// the same engine between its launch and its start, at a moment when every
// engine was busy. It returns nil when no copy waited.
func (m *model) engineFree() []int64 {
	tl := m.tl
	o := &tl.Ops
	cs := &tl.Calls
	byEngine := make([][]int32, len(tl.Engines))
	for j := range o.Kind {
		if e := m.engineOf(int32(j)); e >= 0 {
			byEngine[e] = append(byEngine[e], int32(j))
		}
	}
	var free []int64
	for e, ops := range byEngine {
		starts := make([]int64, len(ops))
		ends := make([]int64, len(ops))
		for k, j := range ops {
			starts[k], ends[k] = o.Start[j], o.End[j]
		}
		slices.Sort(starts)
		slices.Sort(ends)
		// The ops come in stream order and each stream's in start order,
		// so the values looked for mostly follow the last: counted from it.
		var startsTo, endsTo, endsToStart cursor.Cursor
		upTo := func(c *cursor.Cursor, xs []int64, at int64) int { // how many of xs are at most at
			return c.Search(len(xs), func(k int) bool { return xs[k] > at })
		}
		for _, j := range ops {
			c := o.Call[j]
			if c == timeline.None {
				continue
			}
			launch, start := cs.Start[c], o.Start[j]
			// The latest end in (launch, start].
			k := upTo(&endsToStart, ends, start) - 1
			if k < 0 || ends[k] <= launch {
				continue
			}
			// The copies running just before ends[k]: started before it,
			// not ended before it (ends[:f] did).
			f := k
			if f > 0 && ends[f-1] == ends[k] {
				f = upTo(&endsTo, ends, ends[k]-1)
			}
			if upTo(&startsTo, starts, ends[k]-1)-f >= m.slots[e] {
				if free == nil {
					free = make([]int64, o.Len())
					for i := range free {
						free[i] = noEngineWait
					}
				}
				free[j] = ends[k]
			}
		}
	}
	return free
}
