package predictions

import (
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// eval is one source's answer to one claim.
type eval struct {
	verdict  Verdict
	measured *float64
	bound    float64
	evidence []Evidence
	reason   Why
	// short says in a few words why the input cannot answer, for a
	// control's "unchecked" note.
	short Why
}

func unavailable(reason Why) eval { return eval{verdict: Unavailable, reason: reason} }

// claimSpec describes a claim and how to evaluate it from one source.
type claimSpec struct {
	id         string
	prediction int
	statement  string
	compare    Comparison // its bound 0 where the bound is computed (3.factor)
	unit       string
	eval       func(d *sourceData) eval
}

var claimSpecs = []claimSpec{
	{"1.floor", 1, "pinned beats pageable at every size (H2D), and at 256 MiB pageable costs at least 1.3x pinned",
		Comparison{Relation: AtLeast, Bound: FloorRatio}, "x (pageable ms / pinned ms at 256 MiB)", evalFloor},
	{"1.growth", 1, "the pageable/pinned ratio grows with size (Kendall's tau >= 0.6 and largest size's ratio above the smallest's)",
		Comparison{Relation: AtLeast, Bound: GrowthTau}, "Kendall's tau (size vs ratio)", evalGrowth},
	{"2.pageable", 2, "the pageable cudaMemcpyAsync call holds the thread for at least 80% of its completion time",
		Comparison{Relation: AtLeast, Bound: PageableShareMin}, "share (mean call / mean completion)", func(d *sourceData) eval { return evalShare(d, vocab.MemPageable) }},
	{"2.pinned", 2, "the pinned cudaMemcpyAsync call holds the thread for under 10% of its completion time",
		Comparison{Relation: Below, Bound: PinnedShareMax}, "share (mean call / mean completion)", func(d *sourceData) eval { return evalShare(d, vocab.MemPinned) }},
	{"3.factor", 3, "zero-copy's loss to device-resident is within a factor of two of resident GB/s / pinned H2D GB/s at 64 MiB",
		Comparison{Relation: Within, Factor: LossFactor}, "x (zero-copy ms / resident ms)", evalFactor},
	{"4.calltime", 4, "the ten timed pageable cudaMemcpyAsync calls total at least 5x the call time of the ten pinned ones",
		Comparison{Relation: AtLeast, Bound: CallTimeRatio}, "x (pageable total / pinned total)", evalCallTime},
	{"4.bytes", 4, "both groups of timed cudaMemcpyAsync calls move the same bytes",
		Comparison{Relation: Equal, Bound: 1}, "pageable bytes / pinned bytes", evalBytes},
}

// controls are the checks that guard a prediction's comparison rather than
// state its claim, by claim id, with the word that names each in an
// "unchecked" note. A prediction's verdict comes from its claims; a control
// that died kills it, and one the input cannot check is named beside it.
var controls = map[string]string{
	"4.bytes": "bytes",
}

func sweepEvidence(d *sourceData, sd *sweepData, sizes []int64) []Evidence {
	ev := []Evidence{d.line(sd.table, nil, sd.how)}
	for _, b := range sizes {
		p, q := sd.pageable[b], sd.pinned[b]
		row := SweepRow{Dir: sd.dir, Bytes: b, Pageable: Timed{Ms: p.ms, GBps: gbps(b, p.ms), At: optAt(p)},
			Pinned: Timed{Ms: q.ms, GBps: gbps(b, q.ms), At: optAt(q)}, Ratio: sd.ratio(b)}
		ev = append(ev, d.line(sd.table, recordsOf(row.Pageable.At, row.Pinned.At), row))
	}
	return ev
}

func evalFloor(d *sourceData) eval {
	sd := d.h2d
	if sd == nil {
		return unavailable(d.h2dWhy)
	}
	top := floorSize
	if !sd.has(top) {
		return unavailable(NoTopSize{Top: top, Sizes: sd.sizes})
	}
	ratios := sd.ratios()
	// Order the 256 MiB ratio last for FloorHolds.
	var others []float64
	var slower []int64
	for i, b := range sd.sizes {
		if b != top {
			others = append(others, ratios[i])
		}
		if !(ratios[i] > 1) {
			slower = append(slower, b)
		}
	}
	r := sd.ratio(top)
	e := eval{verdict: verdictOf(FloorHolds(append(others, r))), measured: ptr(r), bound: FloorRatio,
		evidence: sweepEvidence(d, sd, sd.sizes)}
	if len(slower) > 0 {
		e.evidence = append(e.evidence, d.line(sd.table, nil, NotFaster{Sizes: slower}))
	}
	return e
}

func evalGrowth(d *sourceData) eval {
	sd := d.h2d
	if sd == nil {
		return unavailable(d.h2dWhy)
	}
	if len(sd.sizes) < 2 {
		return unavailable(TooFewSizes{Sizes: sd.sizes})
	}
	ratios := sd.ratios()
	tau, held := GrowthHolds(sd.sizes, ratios)
	ties := false
	for i, r := range ratios {
		for j := 0; j < i; j++ {
			if ratios[j] == r {
				ties = true
			}
		}
	}
	ev := []Evidence{
		d.line(sd.table, nil, GrowthRatios{Sizes: sd.sizes, Ratios: ratios, Method: sd.how}),
		d.line(sd.table, nil, Tau{Tau: tau, Largest: ratios[len(ratios)-1], Smallest: ratios[0]}),
	}
	if ties {
		ev = append(ev, d.line(sd.table, nil, Ties{}))
	}
	return eval{verdict: verdictOf(held), measured: ptr(tau), bound: GrowthTau, evidence: ev}
}

func evalShare(d *sourceData, src vocab.MemKind) eval {
	if d.async == nil {
		return unavailable(d.asyncWhy)
	}
	s := d.async.side[src]
	share := s.callMs / s.completionMs
	held := PageableShareHolds(share)
	bound := PageableShareMin
	if src == vocab.MemPinned {
		held, bound = PinnedShareHolds(share), PinnedShareMax
	}
	line := Share{Source: src, CallMs: s.callMs, CompletionMs: s.completionMs, Share: share, Calls: s.runs, At: s.at}
	return eval{verdict: verdictOf(held), measured: ptr(share), bound: bound,
		evidence: []Evidence{d.line(d.async.table, nil, d.async.how), d.line(d.async.table, recordsOf(s.at), line)}}
}

func evalFactor(d *sourceData) eval {
	if d.kern == nil {
		return unavailable(d.kernWhy)
	}
	if d.h2d == nil {
		return unavailable(NeedsPinnedRate{Why: d.h2dWhy})
	}
	at := kernelBytes
	if !d.h2d.has(at) {
		return unavailable(NoPinnedAt{Bytes: at})
	}
	k := d.kern
	res, zero := k.ms[vocab.DeviceResident], k.ms[vocab.ZeroCopy]
	pin := d.h2d.pinned[at]
	resGBps := k.gbps(vocab.DeviceResident)
	pinGBps := gbps(at, pin.ms)
	predicted := resGBps / pinGBps
	measured := zero.ms / res.ms
	times := KernelTimes{Resident: Timed{Ms: res.ms, GBps: resGBps, At: optAt(res)},
		ZeroCopy: Timed{Ms: zero.ms, GBps: k.gbps(vocab.ZeroCopy), At: optAt(zero)}}
	ev := []Evidence{
		d.line(k.table, nil, k.how),
		d.line(k.table, nil, KernelBytes{Bytes: k.bytes, From: k.bytesFrom}),
		d.line(k.table, recordsOf(times.Resident.At, times.ZeroCopy.At), times),
		d.line(d.h2d.table, recordsOf(optAt(pin)), PinnedRate{Bytes: at, Timed: Timed{Ms: pin.ms, GBps: pinGBps, At: optAt(pin)}}),
		d.line(k.table, nil, Loss{ResidentGBps: resGBps, PinnedGBps: pinGBps, Predicted: predicted, ZeroCopyMs: zero.ms,
			ResidentMs: res.ms, Measured: measured, Compare: Comparison{Relation: Within, Bound: predicted, Factor: LossFactor}}),
	}
	return eval{verdict: verdictOf(FactorHolds(measured, predicted)), measured: ptr(measured), bound: predicted, evidence: ev}
}

// optAt is where a timing's records are, nil when it names none.
func optAt(t timing) *Records {
	if t.at == nil || t.corr == nil {
		return nil
	}
	return t.at
}

func evalCallTime(d *sourceData) eval {
	if d.calls == nil {
		return unavailable(d.callsWhy)
	}
	ct := d.calls
	if !(ct.pinnedMs > 0) {
		return unavailable(PinnedCallsZero{})
	}
	ratio := ct.pageableMs / ct.pinnedMs
	unequal := ct.pageableN > 0 && ct.pinnedN > 0 && ct.pageableN != ct.pinnedN
	if unequal {
		// Totals of groups of different sizes do not compare: compare
		// the mean call times.
		ratio = (ct.pageableMs / float64(ct.pageableN)) / (ct.pinnedMs / float64(ct.pinnedN))
	}
	line := CallTotals{PageableMs: ct.pageableMs, PinnedMs: ct.pinnedMs, PageableN: ct.pageableN, PinnedN: ct.pinnedN,
		Ratio: ratio, OfMeans: unequal}
	return eval{verdict: verdictOf(CallTimeHolds(ratio)), measured: ptr(ratio), bound: CallTimeRatio,
		evidence: []Evidence{d.line(ct.table, ct.recs, ct.how), d.line(ct.table, nil, line)}}
}

func evalBytes(d *sourceData) eval {
	if d.bytes == nil {
		e := unavailable(d.bytesWhy)
		if d.bytesWhy == nil {
			e = unavailable(d.callsWhy)
		}
		e.short = d.bytesShort
		return e
	}
	b := d.bytes
	r := float64(b.pageable) / float64(b.pinned)
	return eval{verdict: verdictOf(b.pageable == b.pinned), measured: ptr(r), bound: 1,
		evidence: []Evidence{d.line(b.table, b.recs, b.how),
			d.line(b.table, nil, GroupBytes{Pageable: b.pageable, Pinned: b.pinned, PerCopy: b.perCopy})}}
}

// Evaluate judges every claim, prediction and the exercise for one capture.
func Evaluate(c *capture.Capture) *Result {
	diags := &diagList{}
	r := &Result{Input: Input{Path: c.Path, Format: c.Format, Files: c.Files, GPU: c.Meta.GPU},
		Copies: []CopyRow{}, Async: []AsyncRow{}, Kernels: []KernelRow{}, AsyncCalls: []CallDurations{}}
	if c.Program != nil {
		r.Input.ProgramSource = c.Program.Source
		if r.Input.GPU == "" {
			r.Input.GPU = c.Program.GPU
		}
	}

	r.Input.SetAside = append([]capture.SetAside(nil), c.SetAside...)
	for _, s := range c.SetAside {
		diags.Add(diag.Warning, SiblingSetAside{Path: s.Path, Reason: s.Reason})
	}
	var srcs []*sourceData
	if hasTrace(c) {
		srcs = append(srcs, traceData(c, diags, r))
	}
	if c.Program != nil {
		srcs = append(srcs, programData(c, diags))
	}

	for _, spec := range claimSpecs {
		r.Claims = append(r.Claims, judge(spec, srcs, diags))
	}
	for p := 1; p <= 4; p++ {
		pr := Prediction{ID: p}
		var claims []Claim
		for _, cl := range r.Claims {
			if cl.Prediction == p {
				pr.Claims = append(pr.Claims, cl.ID)
				claims = append(claims, cl)
			}
		}
		pr.Verdict, pr.Unchecked = combinePrediction(claims)
		r.Predictions = append(r.Predictions, pr)
	}
	r.Exercise = exercise(srcs)
	for _, d := range srcs {
		tables(r, d)
		slowerCheck(d, diags)
		if r.DeviceCopyGBps == 0 && d.deviceGBps > 0 {
			r.DeviceCopyGBps, r.DeviceCopyFrom = d.deviceGBps, d.deviceFrom
		}
	}
	r.Diagnostics = diags.Items()
	return r
}

// traceData reads every part from the trace.
func traceData(c *capture.Capture, diags *diagList, r *Result) *sourceData {
	d := &sourceData{name: SourceTrace}
	t, why := newTrace(c, diags)
	if t == nil {
		d.h2dWhy, d.d2hWhy, d.asyncWhy, d.kernWhy, d.callsWhy, d.bytesWhy = why, why, why, why, why, why
		return d
	}
	r.Input.Thread = &vocab.Thread{PID: t.pid, TID: t.tid}
	d.h2d, d.h2dWhy = t.part1(vocab.H2D)
	d.d2h, d.d2hWhy = t.part1(vocab.D2H)
	d.async, d.asyncWhy = t.part2()
	if d.async != nil {
		d.calls, d.bytes, d.bytesWhy = t.part4(d.async)
		if d.bytes == nil && !c.Has(capture.FactMemcpy) {
			d.bytesShort = NoPerCopyRecords{AddGPUTrace: c.Format == capture.FormatCSV}
		}
	} else {
		d.callsWhy, d.bytesWhy = d.asyncWhy, d.asyncWhy
	}
	d.kern, d.kernWhy = t.part3(c.Program)
	if dc := t.deviceCopy(); dc != nil {
		d.deviceGBps, d.deviceFrom = dc.GBps, &DeviceCopyFrom{Source: SourceTrace, Trace: dc}
	}
	return d
}

// judge merges the sources' answers to one claim: the trace decides where it
// can answer; the program's numbers otherwise.
func judge(spec claimSpec, srcs []*sourceData, diags *diagList) Claim {
	cl := Claim{ID: spec.id, Prediction: spec.prediction, Statement: spec.statement, Compare: spec.compare,
		Unit: spec.unit, Verdict: Unavailable, Evidence: []Evidence{}}
	var evals []eval
	for _, d := range srcs {
		evals = append(evals, spec.eval(d))
	}
	decided := -1
	for i, e := range evals {
		if e.verdict != Unavailable {
			decided = i
			break
		}
	}
	var reasons []SourceWhy
	for i, e := range evals {
		cl.Evidence = append(cl.Evidence, e.evidence...)
		if e.verdict == Unavailable {
			reasons = append(reasons, SourceWhy{Source: srcs[i].name, Why: e.reason})
		}
		if len(srcs) > 1 {
			cl.Sources = append(cl.Sources, SourceValue{Source: srcs[i].name, Verdict: e.verdict, Measured: e.measured, Bound: e.bound, Why: e.reason})
		}
	}
	cl.Control = controls[spec.id] != ""
	if decided < 0 {
		for _, e := range evals {
			if e.short != nil {
				cl.short = e.short
				break
			}
		}
	}
	if decided < 0 {
		cl.Why = reasons
		if len(srcs) == 0 {
			cl.Why = []SourceWhy{{Why: NoSources{}}}
		}
		return cl
	}
	e := evals[decided]
	cl.Verdict, cl.Measured, cl.Compare.Bound, cl.From = e.verdict, e.measured, e.bound, srcs[decided].name
	for i, o := range evals {
		if i != decided && o.verdict != Unavailable && o.verdict != e.verdict {
			diags.Add(diag.Warning, SourcesDisagree{Claim: spec.id, Decided: srcs[decided].name, Other: srcs[i].name,
				DecidedVerdict: e.verdict, OtherVerdict: o.verdict, DecidedMeasured: *e.measured, OtherMeasured: *o.measured})
		}
	}
	return cl
}

// combinePrediction gives a prediction's verdict from its claims (see
// combine) and its controls: a control that died kills the prediction; one
// the input cannot check leaves the claims' verdict and is named in the
// returned notes ("bytes unchecked: ...").
func combinePrediction(cls []Claim) (Verdict, []Unchecked) {
	var vs []Verdict
	for _, cl := range cls {
		if !cl.Control {
			vs = append(vs, cl.Verdict)
		}
	}
	v := combine(vs)
	var unchecked []Unchecked
	for _, cl := range cls {
		if !cl.Control {
			continue
		}
		switch cl.Verdict {
		case Died:
			v = Died
		case Unavailable:
			if v != Unavailable {
				unchecked = append(unchecked, Unchecked{Control: controls[cl.ID], Why: cl.short, Whole: cl.Why})
			}
		}
	}
	return v, unchecked
}

// combine gives a prediction's verdict: held only if all its claims held,
// died if any died, else unavailable.
func combine(vs []Verdict) Verdict {
	if len(vs) == 0 {
		return Unavailable
	}
	all := true
	for _, v := range vs {
		if v == Died {
			return Died
		}
		if v != Held {
			all = false
		}
	}
	if all {
		return Held
	}
	return Unavailable
}

func exercise(srcs []*sourceData) Exercise {
	ex := Exercise{Verdict: vocab.Unanswered}
	var reasons []SourceWhy
	at := ExerciseBytes
	for _, d := range srcs {
		h, d2 := d.h2d, d.d2h
		switch {
		case h == nil:
			reasons = append(reasons, SourceWhy{Source: d.name, Why: d.h2dWhy})
		case d2 == nil:
			reasons = append(reasons, SourceWhy{Source: d.name, Why: d.d2hWhy})
		case !h.has(at) || !d2.has(at):
			reasons = append(reasons, SourceWhy{Source: d.name, Why: NoExerciseRows{}})
		default:
			hr, dr := h.ratio(at), d2.ratio(at)
			if ex.Verdict == vocab.Answered {
				ex.Evidence = append(ex.Evidence, d.line(h.table, nil, ExerciseBoth{H2D: hr, D2H: dr, Answer: DirectionAnswer(hr, dr)}))
				continue
			}
			ex.H2DRatio, ex.D2HRatio = ptr(hr), ptr(dr)
			ex.Answer = DirectionAnswer(hr, dr)
			ex.Verdict, ex.From = vocab.Answered, d.name
			ex.Evidence = append(ex.Evidence,
				d.line(h.table, recordsOf(optAt(h.pageable[at]), optAt(h.pinned[at])),
					ExerciseRatio{Dir: vocab.H2D, Bytes: at, PageableMs: h.pageable[at].ms, PinnedMs: h.pinned[at].ms, Ratio: hr}),
				d.line(d2.table, recordsOf(optAt(d2.pageable[at]), optAt(d2.pinned[at])),
					ExerciseRatio{Dir: vocab.D2H, Bytes: at, PageableMs: d2.pageable[at].ms, PinnedMs: d2.pinned[at].ms, Ratio: dr}))
		}
	}
	if ex.Verdict != vocab.Answered {
		ex.Why = reasons
		if len(srcs) == 0 {
			ex.Why = []SourceWhy{{Why: NoSources{}}}
		}
	}
	return ex
}

// tables appends one source's rows to the result's tables.
func tables(r *Result, d *sourceData) {
	for _, sd := range []*sweepData{d.h2d, d.d2h} {
		if sd == nil {
			continue
		}
		for _, src := range sources {
			for _, b := range sd.sizes {
				t := sd.pageable[b]
				if src == vocab.MemPinned {
					t = sd.pinned[b]
				}
				r.Copies = append(r.Copies, CopyRow{From: d.name, Direction: sd.dir, Source: src, Bytes: b,
					Ms: t.ms, GBps: gbps(b, t.ms), Ratio: sd.ratio(b), Runs: t.runs, CorrelationIDs: t.corr})
			}
		}
	}
	if d.async != nil {
		for _, src := range sources {
			s := d.async.side[src]
			r.Async = append(r.Async, AsyncRow{From: d.name, Source: src, Bytes: s.bytes, CallMs: s.callMs,
				CompletionMs: s.completionMs, Share: s.callMs / s.completionMs, Runs: s.runs, CorrelationIDs: s.corr})
		}
	}
	if d.kern != nil {
		for _, v := range variants {
			t := d.kern.ms[v]
			r.Kernels = append(r.Kernels, KernelRow{From: d.name, Variant: v, Bytes: d.kern.bytes, BytesFrom: d.kern.bytesFrom,
				MsPerLaunch: t.ms, GBps: d.kern.gbps(v), Runs: t.runs, CorrelationIDs: t.corr})
		}
	}
	if d.calls != nil && d.calls.perCall != nil {
		r.AsyncCalls = append(r.AsyncCalls, *d.calls.perCall)
	}
}

// slowerCheck warns, from the numbers alone, when a pinned row is slower
// than its pageable row.
func slowerCheck(d *sourceData, diags *diagList) {
	for _, sd := range []*sweepData{d.h2d, d.d2h} {
		if sd == nil {
			continue
		}
		var slow []SlowSize
		for _, b := range sd.sizes {
			if sd.pinned[b].ms > sd.pageable[b].ms {
				slow = append(slow, SlowSize{Bytes: b, PinnedMs: sd.pinned[b].ms, PageableMs: sd.pageable[b].ms})
			}
		}
		if len(slow) > 0 {
			diags.Add(diag.Warning, PinnedSlower{Source: d.name, Dir: sd.dir, Sizes: slow})
		}
	}
}
