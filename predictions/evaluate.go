package predictions

import (
	"fmt"
	"strings"

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
	reason   string
	// short says in a few words why the input cannot answer, for a
	// control's "unchecked" note.
	short string
}

func unavailable(reason string) eval { return eval{verdict: Unavailable, reason: reason} }

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
	ev := []Evidence{d.line(sd.table, nil, "%s", sd.how)}
	for _, b := range sizes {
		p, q := sd.pageable[b], sd.pinned[b]
		line := fmt.Sprintf("%s %s: pageable %.4f ms (%.2f GB/s", sd.dir, sizeName(b), p.ms, gbps(b, p.ms))
		var recs []Records
		if p.corr != nil {
			line += ", " + p.at.String()
			recs = append(recs, recordsOf(p.at)...)
		}
		line += fmt.Sprintf("), pinned %.4f ms (%.2f GB/s", q.ms, gbps(b, q.ms))
		if q.corr != nil {
			line += ", " + q.at.String()
			recs = append(recs, recordsOf(q.at)...)
		}
		line += fmt.Sprintf("), ratio %.3f", sd.ratio(b))
		ev = append(ev, d.line(sd.table, recs, "%s", line))
	}
	return ev
}

func evalFloor(d *sourceData) eval {
	sd := d.h2d
	if sd == nil {
		return unavailable(d.h2dWhy)
	}
	top := 256 * mib
	if !sd.has(top) {
		return unavailable(fmt.Sprintf("%s: no 256 MiB host-to-device row for both sources (sizes: %s)", d.name, sizeList(sd.sizes)))
	}
	ratios := sd.ratios()
	// Order the 256 MiB ratio last for FloorHolds.
	var others []float64
	var slower []string
	for i, b := range sd.sizes {
		if b != top {
			others = append(others, ratios[i])
		}
		if !(ratios[i] > 1) {
			slower = append(slower, sizeName(b))
		}
	}
	r := sd.ratio(top)
	e := eval{verdict: verdictOf(FloorHolds(append(others, r))), measured: ptr(r), bound: FloorRatio,
		evidence: sweepEvidence(d, sd, sd.sizes)}
	if len(slower) > 0 {
		e.evidence = append(e.evidence, d.line(sd.table, nil, "pinned is not faster than pageable at %s", strings.Join(slower, ", ")))
	}
	return e
}

func evalGrowth(d *sourceData) eval {
	sd := d.h2d
	if sd == nil {
		return unavailable(d.h2dWhy)
	}
	if len(sd.sizes) < 2 {
		return unavailable(fmt.Sprintf("%s: growth needs at least two sizes; found %s", d.name, sizeList(sd.sizes)))
	}
	ratios := sd.ratios()
	tau, held := GrowthHolds(sd.sizes, ratios)
	parts := make([]string, len(ratios))
	ties := false
	for i, r := range ratios {
		parts[i] = fmt.Sprintf("%s %.3f", sizeName(sd.sizes[i]), r)
		for j := 0; j < i; j++ {
			if ratios[j] == r {
				ties = true
			}
		}
	}
	ev := []Evidence{
		d.line(sd.table, nil, "h2d pageable/pinned ratios by size: %s (from %s)", strings.Join(parts, ", "), sd.how),
		d.line(sd.table, nil, "Kendall's tau(size, ratio) = %.3f; largest size's ratio %.3f vs smallest's %.3f", tau, ratios[len(ratios)-1], ratios[0]),
	}
	if ties {
		ev = append(ev, d.line(sd.table, nil, "some ratios tie; a tie counts as a concordant pair"))
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
	line := fmt.Sprintf("%s: call %.4f ms, completion %.4f ms, share %.4f", src, s.callMs, s.completionMs, share)
	if s.at != nil {
		line += fmt.Sprintf(" (%d calls, %s)", s.runs, s.at)
	}
	return eval{verdict: verdictOf(held), measured: ptr(share), bound: bound,
		evidence: []Evidence{d.line(d.async.table, nil, "%s", d.async.how), d.line(d.async.table, recordsOf(s.at), "%s", line)}}
}

func evalFactor(d *sourceData) eval {
	if d.kern == nil {
		return unavailable(d.kernWhy)
	}
	if d.h2d == nil {
		return unavailable("the prediction prices zero-copy against part 1's pinned H2D rate, which is unavailable: " + d.h2dWhy)
	}
	at := kernelBytes
	if !d.h2d.has(at) {
		return unavailable(fmt.Sprintf("%s: no pinned host-to-device row at %s (the kernel's size)", d.name, sizeName(at)))
	}
	k := d.kern
	res, zero := k.ms[vocab.DeviceResident], k.ms[vocab.ZeroCopy]
	pin := d.h2d.pinned[at]
	resGBps := k.gbps(vocab.DeviceResident)
	pinGBps := gbps(at, pin.ms)
	predicted := resGBps / pinGBps
	measured := zero.ms / res.ms
	ev := []Evidence{
		d.line(k.table, nil, "%s", k.how),
		d.line(k.table, nil, "bytes per launch %d, from %s", k.bytes, k.bytesFrom),
		d.line(k.table, recordsOf(optAt(res), optAt(zero)), "device-resident %.4f ms per launch = %.1f GB/s%s; zero-copy %.4f ms per launch = %.1f GB/s%s",
			res.ms, resGBps, optRefs(res), zero.ms, k.gbps(vocab.ZeroCopy), optRefs(zero)),
		d.line(d.h2d.table, recordsOf(optAt(pin)), "part 1 pinned h2d %s: %.4f ms = %.2f GB/s%s", sizeName(at), pin.ms, pinGBps, optRefs(pin)),
		d.line(k.table, nil, "predicted loss %.1f / %.2f = %.2fx; measured loss %.4f / %.4f = %.2fx; held when %.2f <= measured <= %.2f",
			resGBps, pinGBps, predicted, zero.ms, res.ms, measured, predicted/LossFactor, predicted*LossFactor),
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

func optRefs(t timing) string {
	if at := optAt(t); at != nil {
		return " (" + at.String() + ")"
	}
	return ""
}

func evalCallTime(d *sourceData) eval {
	if d.calls == nil {
		return unavailable(d.callsWhy)
	}
	ct := d.calls
	if !(ct.pinnedMs > 0) {
		return unavailable(d.name + ": the pinned group's total call time is zero")
	}
	ratio := ct.pageableMs / ct.pinnedMs
	unequal := ct.pageableN > 0 && ct.pinnedN > 0 && ct.pageableN != ct.pinnedN
	if unequal {
		// Totals of groups of different sizes do not compare: compare
		// the mean call times.
		ratio = (ct.pageableMs / float64(ct.pageableN)) / (ct.pinnedMs / float64(ct.pinnedN))
	}
	line := fmt.Sprintf("pageable total %.4f ms", ct.pageableMs)
	if ct.pageableN > 0 {
		line += fmt.Sprintf(" over %d calls", ct.pageableN)
	}
	line += fmt.Sprintf(", pinned total %.4f ms", ct.pinnedMs)
	if ct.pinnedN > 0 {
		line += fmt.Sprintf(" over %d calls", ct.pinnedN)
	}
	if unequal {
		line += fmt.Sprintf("; the groups differ in size, so the ratio is of the mean call times: %.1fx", ratio)
	} else {
		line += fmt.Sprintf(", ratio %.1fx", ratio)
	}
	return eval{verdict: verdictOf(CallTimeHolds(ratio)), measured: ptr(ratio), bound: CallTimeRatio,
		evidence: []Evidence{d.line(ct.table, ct.recs, "%s", ct.how), d.line(ct.table, nil, "%s", line)}}
}

func evalBytes(d *sourceData) eval {
	if d.bytes == nil {
		e := unavailable(d.bytesWhy)
		if d.bytesWhy == "" {
			e = unavailable(d.callsWhy)
		}
		e.short = d.bytesShort
		return e
	}
	b := d.bytes
	r := float64(b.pageable) / float64(b.pinned)
	return eval{verdict: verdictOf(b.pageable == b.pinned), measured: ptr(r), bound: 1,
		evidence: []Evidence{d.line(b.table, b.recs, "%s", b.how),
			d.line(b.table, nil, "pageable group %d bytes%s, pinned group %d bytes%s", b.pageable, perCopyText(b.perCopy), b.pinned, perCopyText(b.perCopy))}}
}

func perCopyText(perCopy bool) string {
	if perCopy {
		return " per copy"
	}
	return ""
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
		diags.add(CodeSiblingSetAside, diag.Warning, fmt.Sprintf(
			"%s, beside the capture, was set aside: it is not this program's output (%s); the verdicts come from the capture without it",
			s.Path, s.Reason))
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
			r.DeviceCopyGBps, r.DeviceCopyFrom = d.deviceGBps, d.deviceGBpsW
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
			d.bytesShort = "no per-copy records"
			if c.Format == capture.FormatCSV {
				d.bytesShort += "; add cuda_gpu_trace"
			}
		}
	} else {
		d.callsWhy, d.bytesWhy = d.asyncWhy, d.asyncWhy
	}
	d.kern, d.kernWhy = t.part3(c.Program)
	d.deviceGBps, d.deviceGBpsW = t.deviceCopy()
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
	var reasons []string
	for i, e := range evals {
		cl.Evidence = append(cl.Evidence, e.evidence...)
		if e.verdict == Unavailable {
			reasons = append(reasons, srcs[i].name+": "+e.reason)
		}
		if len(srcs) > 1 {
			cl.Sources = append(cl.Sources, SourceValue{Source: srcs[i].name, Verdict: e.verdict, Measured: e.measured, Bound: e.bound, Reason: e.reason})
		}
	}
	cl.Control = controls[spec.id] != ""
	if decided < 0 {
		for _, e := range evals {
			if e.short != "" {
				cl.short = e.short
				break
			}
		}
	}
	if decided < 0 {
		cl.Reason = strings.Join(reasons, "; ")
		if len(srcs) == 0 {
			cl.Reason = "the input holds neither a trace nor the program's numbers"
		}
		return cl
	}
	e := evals[decided]
	cl.Verdict, cl.Measured, cl.Compare.Bound, cl.From = e.verdict, e.measured, e.bound, srcs[decided].name
	for i, o := range evals {
		if i != decided && o.verdict != Unavailable && o.verdict != e.verdict {
			diags.add(CodeSourcesDisagree, diag.Warning, fmt.Sprintf(
				"%s: the %s says %s (%.4g) but the %s says %s (%.4g); the %s decides",
				spec.id, srcs[decided].name, e.verdict, *e.measured, srcs[i].name, o.verdict, *o.measured, srcs[decided].name))
		}
	}
	return cl
}

// combinePrediction gives a prediction's verdict from its claims (see
// combine) and its controls: a control that died kills the prediction; one
// the input cannot check leaves the claims' verdict and is named in the
// returned notes ("bytes unchecked: ...").
func combinePrediction(cls []Claim) (Verdict, []string) {
	var vs []Verdict
	for _, cl := range cls {
		if !cl.Control {
			vs = append(vs, cl.Verdict)
		}
	}
	v := combine(vs)
	var unchecked []string
	for _, cl := range cls {
		if !cl.Control {
			continue
		}
		switch cl.Verdict {
		case Died:
			v = Died
		case Unavailable:
			if v != Unavailable {
				why := cl.short
				if why == "" {
					why = cl.Reason
				}
				unchecked = append(unchecked, controls[cl.ID]+" unchecked: "+why)
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
	ex := Exercise{Rule: DirectionRule, Verdict: vocab.Unanswered}
	var reasons []string
	at := 64 * mib
	for _, d := range srcs {
		h, d2 := d.h2d, d.d2h
		switch {
		case h == nil:
			reasons = append(reasons, d.name+": "+d.h2dWhy)
		case d2 == nil:
			reasons = append(reasons, d.name+": "+d.d2hWhy)
		case !h.has(at) || !d2.has(at):
			reasons = append(reasons, fmt.Sprintf("%s: no 64 MiB row for both sources in both directions", d.name))
		default:
			hr, dr := h.ratio(at), d2.ratio(at)
			if ex.Verdict == vocab.Answered {
				ex.Evidence = append(ex.Evidence, d.line(h.table, nil, "h2d ratio %.3f, d2h ratio %.3f (%s)", hr, dr, DirectionAnswer(hr, dr)))
				continue
			}
			ex.H2DRatio, ex.D2HRatio = ptr(hr), ptr(dr)
			ex.Answer = DirectionAnswer(hr, dr)
			ex.Verdict, ex.From = vocab.Answered, d.name
			ex.Evidence = append(ex.Evidence,
				d.line(h.table, recordsOf(optAt(h.pageable[at]), optAt(h.pinned[at])), "h2d 64 MiB pageable %.4f ms / pinned %.4f ms = %.3f", h.pageable[at].ms, h.pinned[at].ms, hr),
				d.line(d2.table, recordsOf(optAt(d2.pageable[at]), optAt(d2.pinned[at])), "d2h 64 MiB pageable %.4f ms / pinned %.4f ms = %.3f", d2.pageable[at].ms, d2.pinned[at].ms, dr))
		}
	}
	if ex.Verdict != vocab.Answered {
		ex.Reason = strings.Join(reasons, "; ")
		if len(srcs) == 0 {
			ex.Reason = "the input holds neither a trace nor the program's numbers"
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
		var slow []string
		for _, b := range sd.sizes {
			if sd.pinned[b].ms > sd.pageable[b].ms {
				slow = append(slow, fmt.Sprintf("%s (pinned %.4f ms, pageable %.4f ms)", sizeName(b), sd.pinned[b].ms, sd.pageable[b].ms))
			}
		}
		if len(slow) > 0 {
			diags.add(CodePinnedSlower, diag.Warning, fmt.Sprintf(
				"%s: %s pinned copies are slower than pageable at %s: the pinned buffer probably is not pinned; check that it came from cudaMallocHost and that the return value was checked",
				d.name, sd.dir, strings.Join(slow, ", ")))
		}
	}
}
