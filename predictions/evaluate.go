package predictions

import (
	"slices"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

func unavailable(reason Why) Outcome { return UnavailableOutcome(reason) }

func sweepEvidence(n *Numbers, sd *sweepData, sizes []int64) []Evidence {
	ev := []Evidence{n.Line(sd.table, nil, sd.how)}
	for _, b := range sizes {
		p, q := sd.pageable[b], sd.pinned[b]
		row := SweepRow{Dir: sd.dir, Bytes: b, Pageable: Timed{Ms: p.ms, GBps: gbps(b, p.ms), At: optAt(p)},
			Pinned: Timed{Ms: q.ms, GBps: gbps(b, q.ms), At: optAt(q)}, Ratio: sd.ratio(b)}
		ev = append(ev, n.Line(sd.table, recordsOf(row.Pageable.At, row.Pinned.At), row))
	}
	return ev
}

func evalFloor(n *Numbers) Outcome {
	sd, why := sweepH2D.Get(n)
	if sd == nil {
		return unavailable(why)
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
	e := Outcome{Verdict: verdictOf(FloorHolds(append(others, r))), Measured: ptr(r), Bound: FloorRatio,
		Evidence: sweepEvidence(n, sd, sd.sizes)}
	if len(slower) > 0 {
		e.Evidence = append(e.Evidence, n.Line(sd.table, nil, NotFaster{Sizes: slower}))
	}
	return e
}

func evalGrowth(n *Numbers) Outcome {
	sd, why := sweepH2D.Get(n)
	if sd == nil {
		return unavailable(why)
	}
	if len(sd.sizes) < 2 {
		return unavailable(TooFewSizes{Sizes: sd.sizes})
	}
	ratios := sd.ratios()
	tau, held := GrowthHolds(sd.sizes, ratios)
	ties := false
	seen := make(map[float64]bool, len(ratios))
	for _, r := range ratios {
		ties = ties || seen[r]
		seen[r] = true
	}
	ev := []Evidence{
		n.Line(sd.table, nil, GrowthRatios{Sizes: sd.sizes, Ratios: ratios, Method: sd.how}),
		n.Line(sd.table, nil, Tau{Tau: tau, Largest: ratios[len(ratios)-1], Smallest: ratios[0]}),
	}
	if ties {
		ev = append(ev, n.Line(sd.table, nil, Ties{}))
	}
	return Outcome{Verdict: verdictOf(held), Measured: ptr(tau), Bound: GrowthTau, Evidence: ev}
}

func evalShare(n *Numbers, src vocab.MemKind) Outcome {
	ad, why := asyncSlot.Get(n)
	if ad == nil {
		return unavailable(why)
	}
	s := ad.side[src]
	share := s.callMs / s.completionMs
	held := PageableShareHolds(share)
	bound := PageableShareMin
	if src == vocab.MemPinned {
		held, bound = PinnedShareHolds(share), PinnedShareMax
	}
	line := Share{Source: src, CallMs: s.callMs, CompletionMs: s.completionMs, Share: share, Calls: s.runs, At: s.at}
	return Outcome{Verdict: verdictOf(held), Measured: ptr(share), Bound: bound,
		Evidence: []Evidence{n.Line(ad.table, nil, ad.how), n.Line(ad.table, recordsOf(s.at), line)}}
}

func evalFactor(n *Numbers) Outcome {
	k, why := kernSlot.Get(n)
	if k == nil {
		return unavailable(why)
	}
	h2d, why := sweepH2D.Get(n)
	if h2d == nil {
		return unavailable(NeedsPinnedRate{Why: why})
	}
	at := kernelBytes
	if !h2d.has(at) {
		return unavailable(NoPinnedAt{Bytes: at})
	}
	res, zero := k.ms[vocab.DeviceResident], k.ms[vocab.ZeroCopy]
	pin := h2d.pinned[at]
	resGBps := k.gbps(vocab.DeviceResident)
	pinGBps := gbps(at, pin.ms)
	predicted := resGBps / pinGBps
	measured := zero.ms / res.ms
	times := KernelTimes{Resident: Timed{Ms: res.ms, GBps: resGBps, At: optAt(res)},
		ZeroCopy: Timed{Ms: zero.ms, GBps: k.gbps(vocab.ZeroCopy), At: optAt(zero)}}
	ev := []Evidence{
		n.Line(k.table, nil, k.how),
		n.Line(k.table, nil, KernelBytes{Bytes: k.bytes, From: k.bytesFrom}),
		n.Line(k.table, recordsOf(times.Resident.At, times.ZeroCopy.At), times),
		n.Line(h2d.table, recordsOf(optAt(pin)), PinnedRate{Bytes: at, Timed: Timed{Ms: pin.ms, GBps: pinGBps, At: optAt(pin)}}),
		n.Line(k.table, nil, Loss{ResidentGBps: resGBps, PinnedGBps: pinGBps, Predicted: predicted, ZeroCopyMs: zero.ms,
			ResidentMs: res.ms, Measured: measured, Compare: Comparison{Relation: Within, Bound: predicted, Factor: LossFactor}}),
	}
	return Outcome{Verdict: verdictOf(FactorHolds(measured, predicted)), Measured: ptr(measured), Bound: predicted, Evidence: ev}
}

// optAt is where a timing's records are, nil when it names none.
func optAt(t timing) *Records {
	if t.at == nil || t.corr == nil {
		return nil
	}
	return t.at
}

func evalCallTime(n *Numbers) Outcome {
	ct, why := callsSlot.Get(n)
	if ct == nil {
		return unavailable(why)
	}
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
	return Outcome{Verdict: verdictOf(CallTimeHolds(ratio)), Measured: ptr(ratio), Bound: CallTimeRatio,
		Evidence: []Evidence{n.Line(ct.table, ct.recs, ct.how), n.Line(ct.table, nil, line)}}
}

func evalBytes(n *Numbers) Outcome {
	b, why := bytesSlot.Get(n)
	if b == nil {
		if why == nil {
			_, why = callsSlot.Get(n)
		}
		e := unavailable(why)
		e.Short = bytesSlot.Short(n)
		return e
	}
	r := float64(b.pageable) / float64(b.pinned)
	return Outcome{Verdict: verdictOf(b.pageable == b.pinned), Measured: ptr(r), Bound: 1,
		Evidence: []Evidence{n.Line(b.table, b.recs, b.how),
			n.Line(b.table, nil, GroupBytes{Pageable: b.pageable, Pinned: b.pinned, PerCopy: b.perCopy})}}
}

// Evaluate judges every claim and prediction of the Lesson, and the
// exercise, for one capture.
func Evaluate(c *capture.Capture) *Result {
	diags := &diagList{}
	r := &Result{Input: Input{Path: c.Path, Format: c.Format, Files: c.Files, GPU: c.Meta.GPU}}
	parts := Lesson.Parts()
	for _, p := range parts {
		if p.Rows != nil {
			p.Rows.start(r)
		}
	}
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
	var srcs []*Numbers
	if hasTrace(c) && !c.Has(records.FactGPU) {
		diags.Add(diag.Warning, diag.Note{Of: CodeGPUUnknown, Text: c.Why(records.FactGPU)})
	}
	if hasTrace(c) && !c.Has(records.FactSchema) {
		code := CodeSchemaNewer
		if !nsysdb.NewerSchema(c.Meta.SchemaVersion) {
			code = CodeSchemaUnknown
		}
		diags.Add(diag.Warning, diag.Note{Of: code, Text: c.Why(records.FactSchema)})
	}
	if hasTrace(c) {
		in := &Reading{Capture: c, From: SourceTrace, diags: diags}
		in.trace, in.traceWhy = newTrace(c, diags)
		if in.trace != nil {
			r.Input.Thread = &vocab.Thread{PID: in.trace.pid, TID: in.trace.tid}
		}
		srcs = append(srcs, read(parts, in))
	}
	if c.Program != nil {
		srcs = append(srcs, read(parts, &Reading{Capture: c, From: SourceProgram, diags: diags}))
	}

	for _, p := range parts {
		for _, spec := range p.Claims {
			r.Claims = append(r.Claims, judge(p.ID, spec, srcs, diags))
		}
	}
	for _, p := range parts {
		pr := Prediction{ID: p.ID}
		var claims []Claim
		for _, cl := range r.Claims {
			if cl.Prediction == p.ID {
				pr.Claims = append(pr.Claims, cl.ID)
				claims = append(claims, cl)
			}
		}
		pr.Verdict, pr.Unchecked = combinePrediction(claims)
		r.Predictions = append(r.Predictions, pr)
	}
	r.Exercise = exercise(srcs)
	if groups := pinnedNotPinned(diags.Items()); len(groups) > 0 {
		// What the exercise would compare is pageable against pageable.
		r.Exercise = Exercise{Verdict: vocab.Unanswered, Why: []SourceWhy{{Why: PinnedNotPinned{Groups: groups}}}}
	}
	for _, n := range srcs {
		for _, p := range parts {
			if p.AddRows != nil {
				p.AddRows(n, r)
			}
		}
		for _, p := range parts {
			if p.Notice != nil {
				p.Notice(n, diags)
			}
		}
		if r.DeviceCopyGBps == 0 && n.deviceGBps > 0 {
			r.DeviceCopyGBps, r.DeviceCopyFrom = n.deviceGBps, n.deviceFrom
		}
	}
	r.Diagnostics = diags.Items()
	return r
}

// read fills one source's numbers: every part's, in order, then the
// device-to-device reference copy and, for the program's numbers, its
// correctness gates.
func read(parts []*Part, in *Reading) *Numbers {
	n := &Numbers{From: in.From, slots: map[any]slotValue{}}
	if in.From == SourceProgram {
		n.File = programFile(in.Capture)
	}
	for _, p := range parts {
		if p.Read != nil {
			p.Read(in, n)
		}
	}
	if in.From == SourceTrace {
		if in.trace != nil {
			if dc := in.trace.deviceCopy(); dc != nil {
				n.deviceGBps, n.deviceFrom = dc.GBps, &DeviceCopyFrom{Source: SourceTrace, Trace: dc}
			}
		}
		return n
	}
	m := in.Capture.Program
	if m.DeviceCopyGBps > 0 {
		n.deviceGBps, n.deviceFrom = m.DeviceCopyGBps, &DeviceCopyFrom{Source: SourceProgram, Program: programOf(in.Capture)}
	}
	for _, g := range m.Gates {
		if !g.Passed {
			in.diags.Add(diag.Error, GateFailed{Name: g.Name, Detail: g.Detail})
			if n.untrusted == nil {
				n.untrusted = GateUntrusted{Program: programOf(in.Capture), Name: g.Name, Detail: g.Detail}
			}
		}
	}
	return n
}

// judge merges the sources' answers to one claim: the trace decides where it
// can answer; the program's numbers otherwise.
func judge(prediction int, spec ClaimSpec, srcs []*Numbers, diags *diagList) Claim {
	cl := Claim{ID: spec.ID, Prediction: prediction, Statement: spec.Statement, Compare: spec.Compare,
		Unit: spec.Unit, Verdict: Unavailable, Evidence: []Evidence{}, control: spec.Control}
	var evals []Outcome
	for _, n := range srcs {
		e := spec.Eval(n)
		if n.untrusted != nil {
			// Its evidence is kept, to show what the numbers were.
			e = Outcome{Verdict: Unavailable, Evidence: e.Evidence, Why: n.untrusted, Short: n.untrusted}
		}
		evals = append(evals, e)
	}
	decided := -1
	for i, e := range evals {
		if e.Verdict != Unavailable {
			decided = i
			break
		}
	}
	var reasons []SourceWhy
	for i, e := range evals {
		cl.Evidence = append(cl.Evidence, e.Evidence...)
		if e.Verdict == Unavailable {
			reasons = append(reasons, SourceWhy{Source: srcs[i].From, Why: e.Why})
		}
		if len(srcs) > 1 {
			cl.Sources = append(cl.Sources, SourceValue{Source: srcs[i].From, Verdict: e.Verdict, Measured: e.Measured, Bound: e.Bound, Why: e.Why})
		}
	}
	cl.Control = spec.Control != ""
	if decided < 0 {
		for _, e := range evals {
			if e.Short != nil {
				cl.short = e.Short
				break
			}
		}
		cl.Why = reasons
		if len(srcs) == 0 {
			cl.Why = []SourceWhy{{Why: NoSources{}}}
		}
		return cl
	}
	e := evals[decided]
	cl.Verdict, cl.Measured, cl.Compare.Bound, cl.From = e.Verdict, e.Measured, e.Bound, srcs[decided].From
	for i, o := range evals {
		if i != decided && o.Verdict != Unavailable && o.Verdict != e.Verdict {
			diags.Add(diag.Warning, SourcesDisagree{Claim: spec.ID, Decided: srcs[decided].From, Other: srcs[i].From,
				DecidedVerdict: e.Verdict, OtherVerdict: o.Verdict, DecidedMeasured: *e.Measured, OtherMeasured: *o.Measured})
		}
	}
	return cl
}

// combinePrediction gives a prediction's verdict from its claims (see
// combine) and its controls: a control that died kills the prediction; one
// the input cannot check leaves the claims' verdict and is named in the
// returned notes.
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
				unchecked = append(unchecked, Unchecked{Control: cl.control, Why: cl.short, Whole: cl.Why})
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

// sweepGroups are the groups of parts 1 and 1b, whose rows at
// ExerciseBytes the exercise and the check against a reference compare.
var sweepGroups = []string{"h2d-pageable", "h2d-pinned", "d2h-pageable", "d2h-pinned"}

// pinnedNotPinned lists the sweep groups whose pinned copies the trace
// shows copying pageable memory (pinned-source-pageable): the group's
// name, or the direction's where the sweep has no NVTX groups.
func pinnedNotPinned(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		switch p := d.Detail.(type) {
		case PinnedPageable:
			if slices.Contains(sweepGroups, p.Group) {
				out = append(out, p.Group)
			}
		case PinnedPageableRuns:
			out = append(out, string(p.Dir))
		}
	}
	return out
}

func exercise(srcs []*Numbers) Exercise {
	ex := Exercise{Verdict: vocab.Unanswered}
	var reasons []SourceWhy
	at := ExerciseBytes
	for _, n := range srcs {
		h, hWhy := sweepH2D.Get(n)
		d2, dWhy := sweepD2H.Get(n)
		switch {
		case n.untrusted != nil:
			reasons = append(reasons, SourceWhy{Source: n.From, Why: n.untrusted})
		case h == nil:
			reasons = append(reasons, SourceWhy{Source: n.From, Why: hWhy})
		case d2 == nil:
			reasons = append(reasons, SourceWhy{Source: n.From, Why: dWhy})
		case !h.has(at) || !d2.has(at):
			reasons = append(reasons, SourceWhy{Source: n.From, Why: NoExerciseRows{}})
		default:
			hr, dr := h.ratio(at), d2.ratio(at)
			if ex.Verdict == vocab.Answered {
				ex.Evidence = append(ex.Evidence, n.Line(h.table, nil, ExerciseBoth{H2D: hr, D2H: dr, Answer: DirectionAnswer(hr, dr)}))
				continue
			}
			ex.H2DRatio, ex.D2HRatio = ptr(hr), ptr(dr)
			ex.Answer = DirectionAnswer(hr, dr)
			ex.Verdict, ex.From = vocab.Answered, n.From
			ex.Evidence = append(ex.Evidence,
				n.Line(h.table, recordsOf(optAt(h.pageable[at]), optAt(h.pinned[at])),
					ExerciseRatio{Dir: vocab.H2D, Bytes: at, PageableMs: h.pageable[at].ms, PinnedMs: h.pinned[at].ms, Ratio: hr}),
				n.Line(d2.table, recordsOf(optAt(d2.pageable[at]), optAt(d2.pinned[at])),
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
