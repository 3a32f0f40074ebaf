package replay

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime/trace"
	"slices"
	"sync"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Options say how to cost pinned copies.
type Options struct {
	// Coster costs the pinned copies; nil means NewCoster's, else the
	// capture's own pinned copies (NewCaptureCoster with Sizes).
	Coster Coster
	// NewCoster, where Coster is nil, makes the coster from the timeline
	// once the replay has started, beside the model: the costs are first
	// asked for after it.
	NewCoster func() Coster
	// Sizes are the size classes the costs are reported by (and the
	// capture's own costs taken over). Of nil puts every size in one class.
	Sizes Sizes
	// PinBy says how the program is to pin its buffers.
	PinBy PinBy
}

// PinBy is how a program pins the buffers of its copies, which decides
// what pinning costs the host beside the pinned copy.
type PinBy uint8

const (
	// PinInPlace: the buffers are allocated pinned and reused
	// (cudaMallocHost, cudaHostAlloc, cuMemHostAlloc, cupyx.empty_pinned,
	// a tensor pinned once): no host time per copy.
	PinInPlace PinBy = iota
	// PinByCopy: each buffer is copied into pinned memory before its copy
	// (PyTorch's DataLoader(pin_memory=True), tensor.pin_memory() of each
	// batch). That host copy replaces the driver's own staging of the
	// bytes into pinned memory, which the pageable call's host time holds:
	// the high bound pays it, at that time, on the copying call's thread
	// before the call (an inline pin_memory(), or a pin thread that
	// competes with it); the low and middle costs take it off the thread
	// (a pin thread on a core of its own).
	PinByCopy
	// PinByThread: each buffer is copied into pinned memory by a pin
	// thread of the copying call's own interpreter (PyTorch's
	// DataLoader(pin_memory=True) with worker processes: its pt_data_pin
	// thread). The pin thread runs Python, taking each batch from the
	// workers and handing it on, only while the main thread does not hold
	// the interpreter's lock, so its work lands on the main thread: every
	// cost pays the host time the driver's staging held the copying call
	// for (its pageable call's measured time) on that thread, and the
	// thread gets none of it back.
	PinByThread
)

// The names of the ways to pin, as JSON and the command line spell them.
var pinByNames = [...]string{PinInPlace: "in-place", PinByCopy: "copy", PinByThread: "pin-thread"}

// PaysCopy reports whether pinning this way copies each buffer into pinned
// memory, a host copy the what-if pays beside the pinned copy.
func (p PinBy) PaysCopy() bool { return p == PinByCopy || p == PinByThread }

// String names the way to pin: "in-place", "copy" or "pin-thread".
func (p PinBy) String() string {
	if int(p) < len(pinByNames) {
		return pinByNames[p]
	}
	return "unknown"
}

// MarshalText writes the way to pin by its name.
func (p PinBy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a way to pin by its name.
func (p *PinBy) UnmarshalText(b []byte) error {
	v, ok := PinByOf(string(b))
	if !ok {
		return fmt.Errorf("unknown way to pin %q: use in-place, copy or pin-thread", b)
	}
	*p = v
	return nil
}

// PinByOf returns the way to pin of a name, ok false for none.
func PinByOf(name string) (PinBy, bool) {
	for i, n := range pinByNames {
		if n == name {
			return PinBy(i), true
		}
	}
	return 0, false
}

// Result is a replay's answer: the regions' times as measured, replayed
// and predicted after pinning, the assumptions made, and the costs used.
type Result struct {
	Regions     []Region
	Assumptions []timeline.Assumption
	Costs       []CostUse
	// Model lists the typical delays the replays took in place of each
	// call's and op's own (Typical).
	Model []Typical
	// Misfits are the classes of calls and ops the capture shows latest
	// against the model, at most MaxMisfits, latest first: where to look
	// when the fit is poor.
	Misfits []Misfit
	// Recosted is how many copies from pageable memory the what-if
	// re-costed as pinned; Uncosted how many it could find no cost for;
	// Kept how many it kept as measured because no copy call made them (a
	// CUDA graph's memcpy nodes).
	Recosted int
	Uncosted int
	Kept     int
	// PinBy is how the what-if took the buffers to be pinned.
	PinBy PinBy
	// Forced counts the dependencies any replay had to take at their
	// measured time to go on; 0 on a timeline without cycles.
	Forced int
}

// CostUse is the pinned costs the what-if gave one group of copies (one
// direction, API kind and size class), beside what they cost measured.
type CostUse struct {
	Direction vocab.CopyKind
	SizeClass string
	Async     bool
	Copies    int
	Bytes     int64
	// CallNs and GPUNs are the measured host time of the copies' calls
	// and GPU time of the copies, summed.
	CallNs int64
	GPUNs  int64
	// PinnedCallNs and PinnedGPUNs are the same after pinning, summed
	// (zero with no source: those copies kept their measured times).
	PinnedCallNs Bound
	PinnedGPUNs  Bound
	// CallSource and GPUSource say where the pinned costs come from
	// (SourceCapture, SourceRun, SourceLink; SourceMixed when from more
	// than one), "" when none was found; CallFrom and GPUFrom name the run
	// folder or link of a rate.
	CallSource string
	GPUSource  string
	CallFrom   string
	GPUFrom    string
	// Samples and CallSamples are the most measured pinned copies and calls
	// of the capture a cost of the group came from.
	Samples     int
	CallSamples int
	// PinCopyNs is the host time the high bound (with PinByThread every
	// cost) added for copying the buffers into pinned memory, summed.
	PinCopyNs int64
	// Uncosted is how many of the copies found no pinned cost and kept
	// their measured times; UncostedCallNs their calls' host time.
	Uncosted       int
	UncostedCallNs int64
}

// oneSize puts every copy in one size class.
var oneSize = Sizes{Of: func(int64) int { return 0 }, Name: func(int) string { return "any" }}

type level int

const (
	levelLow level = iota
	levelMid
	levelHigh
)

// Replay replays tl as captured and with its pageable copies pinned, and
// measures its regions in each.
func Replay(ctx context.Context, tl *timeline.Timeline, opts Options) (*Result, error) {
	return replay(ctx, tl, opts, indexAuto)
}

// replay is Replay, the regions' runs of calls read as mode says.
func replay(ctx context.Context, tl *timeline.Timeline, opts Options, mode indexMode) (*Result, error) {
	sizes := opts.Sizes
	if sizes.Of == nil {
		sizes = oneSize
	}
	// The model, the regions and the coster read the timeline alone: the
	// model is derived beside the other two.
	models := make(chan *model, 1)
	engines := make(chan []int64, 1)
	go func() {
		defer trace.StartRegion(ctx, "replay: model").End()
		models <- newModelOf(tl, sizes, func() []int64 { return <-engines })
	}()
	// When the engines became free in the capture, which the model needs
	// halfway, reads the timeline alone: found here, first.
	engined := trace.StartRegion(ctx, "replay: engines")
	engines <- engineFreeOf(tl)
	engined.End()
	regioned := trace.StartRegion(ctx, "replay: regions and the capture's measure")
	rg := newRegions(tl, mode)
	measured := rg.measureAll(Measured(tl))
	regioned.End()
	coster := opts.Coster
	if coster == nil {
		costed := trace.StartRegion(ctx, "replay: coster")
		if opts.NewCoster != nil {
			coster = opts.NewCoster()
		} else {
			coster = NewCaptureCoster(tl, sizes)
		}
		costed.End()
	}
	// The what-if's costs read the timeline and the coster alone: they
	// are found beside the model too.
	res := &Result{}
	costed := trace.StartRegion(ctx, "replay: what-if")
	w := newWhatIf(tl, coster, sizes, opts.PinBy, res)
	costed.End()
	m := <-models
	w.of(m)
	// The four runs, two at a time, each pair simulated into a schedule
	// of its own: as captured, then the high level, on the model's own
	// params; the low and middle levels on a copy of them. Each level
	// re-costs its params in place: apply writes the same entries at every
	// level, so a level applied to params as captured gives what it gives
	// after another level. The regions measure one schedule at a time,
	// beside the other's simulation: their index of a schedule holds about
	// as much as two schedules, and one is kept from run to run. The run
	// as captured starts at once, the misfits after it (they read the
	// model as captured, before the high level re-costs it).
	var (
		replayed []measure
		runs     [3][]measure
		measures sync.Mutex
	)
	ours := &runner{m: m, rg: rg, measures: &measures, sc: newSchedule(tl)}
	theirs := &runner{m: m, rg: rg, measures: &measures, sc: newSchedule(tl)}
	pinned := m.params.clone()
	done := make(chan error, 1)
	go func() {
		var err error
		for l := levelLow; l <= levelMid && err == nil; l++ {
			w.apply(&pinned, l)
			runs[l], err = theirs.run(ctx, &pinned)
		}
		done <- err
	}()
	replayed, err := ours.run(ctx, &m.params)
	res.Misfits = m.misfits()
	for k, f := range res.Misfits {
		if f.Late == 0 || k == MaxMisfits {
			res.Misfits = res.Misfits[:k]
			break
		}
	}
	m.engineAt = nil
	if err == nil {
		w.apply(&m.params, levelHigh)
		runs[levelHigh], err = ours.run(ctx, &m.params)
	}
	if terr := <-done; err == nil {
		err = terr
	}
	if err != nil {
		return nil, err
	}
	res.Forced = ours.forced + theirs.forced
	res.Regions = rg.compare(measured, replayed, runs)
	res.Model = m.typ.list(tl, sizes)
	res.Assumptions = append(slices.Clone(tl.Assumptions), w.assumed...)
	timeline.SortAssumptions(res.Assumptions)
	return res, nil
}

// runner simulates runs into one schedule of its own and measures the
// regions in each, rg taken under measures; forced sums the dependencies
// its runs forced.
type runner struct {
	m        *model
	rg       *regions
	measures *sync.Mutex
	sc       *Schedule
	forced   int
}

// run simulates the model under p and measures its regions.
func (r *runner) run(ctx context.Context, p *params) ([]measure, error) {
	simulated := trace.StartRegion(ctx, "replay: simulate")
	err := r.m.simulate(ctx, p, r.sc)
	simulated.End()
	if err != nil {
		return nil, err
	}
	r.forced += r.sc.Forced
	waited := trace.StartRegion(ctx, "replay: wait to measure")
	r.measures.Lock()
	waited.End()
	defer r.measures.Unlock()
	defer trace.StartRegion(ctx, "replay: measure").End()
	return r.rg.measureAll(r.sc), nil
}

// Simulate replays tl as captured and returns its schedule.
func Simulate(ctx context.Context, tl *timeline.Timeline) (*Schedule, error) {
	m := newModel(tl, oneSize)
	sc := newSchedule(tl)
	if err := m.simulate(ctx, &m.params, sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// SimulatePinned replays tl with its pageable copies re-costed by coster
// at the middle of their costs.
func SimulatePinned(ctx context.Context, tl *timeline.Timeline, coster Coster) (*Schedule, error) {
	m := newModel(tl, oneSize)
	w := newWhatIf(tl, coster, oneSize, PinInPlace, &Result{})
	w.of(m)
	p := m.params.clone()
	w.apply(&p, levelMid)
	sc := newSchedule(tl)
	if err := m.simulate(ctx, &p, sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// whatIf is the pinning of every pageable host-device copy: its cost,
// and what it changes in the model.
type whatIf struct {
	m      *model
	recost []recost
	// costs are the pinned costs the recost entries index: consecutive
	// copies mostly share one.
	costs   []pinnedCost
	assumed []timeline.Assumption
	// at indexes assumed by kind, process, stream and API.
	at map[assumeAt]int
	// pinBy is how the buffers are taken to be pinned.
	pinBy PinBy
	// modelWaits is how many waits the model has; apply adds its own
	// after them, and replaces those when it applies again.
	modelWaits int
}

type assumeAt struct {
	kind        timeline.AssumptionKind
	pid, stream int64
	api         string
}

// assume notes one copy the what-if could not re-cost.
func (w *whatIf) assume(kind timeline.AssumptionKind, pid, stream int64, api string, corr int64) {
	k := assumeAt{kind, pid, stream, api}
	if i, ok := w.at[k]; ok {
		w.assumed[i].Count++
		return
	}
	w.at[k] = len(w.assumed)
	w.assumed = append(w.assumed, timeline.Assumption{Kind: kind, PID: pid, API: api, Event: records.NoID, Stream: stream, Count: 1, Corr: corr})
}

// recost is one copy the what-if re-costs. The host time of copying its
// buffer into pinned memory, which the high bound pays (PinByCopy; every
// cost with PinByThread), is its pageable call's measured time.
type recost struct {
	op   int32
	cost int32 // into whatIf.costs
}

// pinnedCost is one copy's pinned cost: its call's host time and its GPU
// time.
type pinnedCost struct {
	call, gpu Bound
}

// of names the model the what-if applies to.
func (w *whatIf) of(m *model) {
	w.m, w.modelWaits = m, len(m.waits)
}

// newWhatIf costs the pageable copies of tl pinned, and counts them into
// res; the what-if applies to a model once of has named it.
func newWhatIf(tl *timeline.Timeline, coster Coster, sizes Sizes, pinBy PinBy, res *Result) *whatIf {
	o := &tl.Ops
	w := &whatIf{at: map[assumeAt]int{}, pinBy: pinBy}
	res.PinBy = pinBy
	type useKey struct {
		dir   vocab.CopyKind
		class int
		async bool
	}
	uses := map[useKey]*CostUse{}
	chain := Chain{coster}
	// Consecutive copies are mostly of one group: its use and cost are
	// kept at hand.
	var last struct {
		ok    bool
		k     useKey
		u     *CostUse
		bytes int64
		cost  Cost
	}
	for j := range o.Kind {
		op := int32(j)
		if !o.Pageable(op) {
			continue
		}
		c := o.Call[j]
		s := tl.Streams[o.Stream[j]]
		async := true
		api := ""
		if c != timeline.None {
			api = tl.Name(tl.Calls.Name[c])
			role := tl.CallRole(c)
			if role != timeline.RoleCopyAsync && role != timeline.RoleCopyBlocking {
				res.Kept++
				w.assume(timeline.AssumeGraphCopy, s.PID, s.ID, api, o.Corr[j])
				continue
			}
			async = role == timeline.RoleCopyAsync
		}
		dir := o.Dir[j].Kind()
		k := useKey{dir, sizes.Of(o.Bytes[j]), async}
		if !last.ok || last.k != k {
			u := uses[k]
			if u == nil {
				u = &CostUse{Direction: dir, SizeClass: sizes.Name(k.class), Async: async}
				uses[k] = u
			}
			last.ok, last.k, last.u, last.bytes = true, k, u, -1
		}
		u := last.u
		u.Copies++
		u.Bytes += o.Bytes[j]
		u.GPUNs += o.Duration(op)
		if c != timeline.None {
			u.CallNs += tl.Calls.Duration(c)
		}
		if last.bytes != o.Bytes[j] {
			last.cost, _ = chain.Pinned(dir, o.Bytes[j], async)
			last.bytes = o.Bytes[j]
		}
		cost := last.cost
		if !cost.complete() {
			res.Uncosted++
			u.Uncosted++
			if c != timeline.None {
				u.UncostedCallNs += tl.Calls.Duration(c)
			}
			w.assume(timeline.AssumeNoCost, s.PID, s.ID, api, o.Corr[j])
			continue
		}
		res.Recosted++
		if n := len(w.costs); n == 0 || w.costs[n-1] != (pinnedCost{cost.CallNs, cost.GPUNs}) {
			w.costs = append(w.costs, pinnedCost{cost.CallNs, cost.GPUNs})
		}
		if pinBy.PaysCopy() && c != timeline.None {
			u.PinCopyNs += tl.Calls.Duration(c)
		}
		w.recost = append(w.recost, recost{op: op, cost: int32(len(w.costs) - 1)})
		u.PinnedCallNs = u.PinnedCallNs.Add(cost.CallNs)
		u.PinnedGPUNs = u.PinnedGPUNs.Add(cost.GPUNs)
		u.CallSource = mergeSource(u.CallSource, cost.CallSource)
		u.GPUSource = mergeSource(u.GPUSource, cost.GPUSource)
		u.CallFrom = mergeFrom(u.CallFrom, cost.CallFrom)
		u.GPUFrom = mergeFrom(u.GPUFrom, cost.GPUFrom)
		u.Samples = max(u.Samples, cost.Samples)
		u.CallSamples = max(u.CallSamples, cost.CallSamples)
	}
	for _, u := range uses {
		res.Costs = append(res.Costs, *u)
	}
	slices.SortFunc(res.Costs, func(x, y CostUse) int {
		return cmp.Or(cmp.Compare(x.Direction, y.Direction), cmp.Compare(x.SizeClass, y.SizeClass),
			cmp.Compare(boolInt(x.Async), boolInt(y.Async)))
	})
	return w
}

// SourceMixed is a CostUse's source when its copies' costs came from more
// than one source.
const SourceMixed = "mixed"

func mergeSource(have, add string) string {
	if have == "" || have == add {
		return add
	}
	return SourceMixed
}

// mergeFrom keeps the one rate source a group's costs name, SourceMixed
// for several.
func mergeFrom(have, add string) string {
	if add == "" {
		return have
	}
	return mergeSource(have, add)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func roundNs(v float64) int64 { return int64(math.Round(v)) }

// apply re-costs the copies in p at level l: each copy's GPU time becomes
// its pinned cost and it starts as the pinned call's time has passed
// (after the host copy into pinned memory too: at the high level with
// PinByCopy, at every level with PinByThread); an async call holds its
// thread for that time and no longer waits for its copy; a blocking call
// still waits for its copy.
func (w *whatIf) apply(p *params, l level) {
	tl := w.m.tl
	for _, r := range w.recost {
		j := r.op
		cost := &w.costs[r.cost]
		p.opDur.set(j, max(roundNs(cost.gpu.at(l)), 0))
		c := tl.Ops.Call[j]
		if c == timeline.None {
			continue
		}
		call := max(roundNs(cost.call.at(l)), 0)
		if w.pinBy.PaysCopy() && (l == levelHigh || w.pinBy == PinByThread) {
			call += tl.Calls.Duration(c)
		}
		// A pinned copy starts as its call returns.
		p.latL.set(j, call)
		p.fromEnd[j] = false
		switch tl.CallRole(c) {
		case timeline.RoleCopyBlocking:
			on := []int32{j}
			wi := p.callWait[c]
			if wi >= 0 {
				on = p.waits[wi].on
			}
			pinned := simWait{on: on, kind: timeline.WaitCopy, own: call}
			if int(wi) >= w.modelWaits {
				// The wait an earlier level (or copy) gave it: replaced.
				p.waits[wi] = pinned
				continue
			}
			p.callWait[c] = int32(len(p.waits))
			p.waits = append(p.waits, pinned)
		case timeline.RoleCopyAsync:
			if wi := p.callWait[c]; wi >= 0 && p.waits[wi].kind == timeline.WaitHeld {
				p.callWait[c] = -1
			}
			p.callDur.set(c, call)
		}
	}
}
