package audit

import (
	"fmt"
	"math"

	"github.com/nsyscheck/nsyscheck/capture"
)

// spanSlack is how far, in ms, a region's times may pass the capture's
// span before they are impossible: the two are rounded apart.
const spanSlack = 0.001

// Plausible refuses an audit read back whose numbers no audit makes: a
// negative or non-finite time, count or share, a prediction outside its
// own bound (low, predicted, high in that order) or whose totals and
// saving are not what its groups give, a region longer than the whole
// capture (the trace's duration, where the export records it), whose
// median instance outlasts its span or whose pageable copy calls outlast
// all its copy calls, more copies re-costed, at call sites or in a class's
// findings than the audit holds. A file edited by hand is refused, naming
// the field, rather than rendered.
func Plausible(au *Audit) error {
	capMs := float64(au.SpanNs) / 1e6
	if au.SpanNs < 0 {
		return fmt.Errorf("spanNs is %d, a negative capture span", au.SpanNs)
	}
	if err := countsAgree(au); err != nil {
		return err
	}
	if err := ruleAgrees(au.NVIDIA); err != nil {
		return err
	}
	if err := ruleCountsClasses(au); err != nil {
		return err
	}
	if err := classSharesAgree(au); err != nil {
		return err
	}
	for i := range au.Regions {
		r := &au.Regions[i]
		at := fmt.Sprintf("regions[%d] (%q)", i, r.Name)
		times := []struct {
			name string
			ms   float64
		}{
			{"medianMs", r.MedianMs}, {"spanMs", r.SpanMs}, {"replayMedianMs", r.ReplayMedianMs}, {"replaySpanMs", r.ReplaySpanMs},
			{"predictedMedianMs", r.PredictedMedianMs}, {"predictedMedianLowMs", r.PredictedMedianLowMs}, {"predictedMedianHighMs", r.PredictedMedianHighMs},
			{"predictedSpanMs", r.PredictedSpanMs}, {"predictedSpanLowMs", r.PredictedSpanLowMs}, {"predictedSpanHighMs", r.PredictedSpanHighMs},
			{"copyCallMs", r.CopyCallMs}, {"pageableCallMs", r.PageableCallMs},
			{"outside.medianMs", r.Outside.MedianMs}, {"outside.totalMs", r.Outside.TotalMs},
		}
		for _, t := range times {
			if math.IsNaN(t.ms) || math.IsInf(t.ms, 0) || t.ms < 0 {
				return fmt.Errorf("%s.%s is %g, not a time", at, t.name, t.ms)
			}
		}
		if au.SpanNs > 0 && au.SpanFrom == capture.SpanTrace {
			// The calls' span (SpanAPICalls) need not hold every NVTX range.
			for _, t := range times[:2] {
				if t.ms > capMs+spanSlack {
					return fmt.Errorf("%s.%s is %g ms, longer than the whole capture (spanNs %d, %.3f ms)", at, t.name, t.ms, au.SpanNs, capMs)
				}
			}
		}
		if err := regionAgrees(at, r); err != nil {
			return err
		}
		// The measure follows the predicted backlog (MeasureOf), chosen
		// before a prediction taken off zeroes it.
		if want := MeasureOf(r.Region); r.NotPredicted == nil && r.Measure != "" && r.Measure != want {
			return fmt.Errorf("%s.measure is %s, but its %d instances, a share of %g of them predicted to run behind the host, are measured by their %s", at, r.Measure, r.Instances, r.Queued.Predicted, want)
		}
		if r.Instances == 0 && (r.MedianMs > 0 || r.SpanMs > 0 || r.TotalMs > 0 || r.CopyCallMs > 0) {
			return fmt.Errorf("%s.instances is 0, but the region has a time (medianMs %g, spanMs %g, totalMs %g, copyCallMs %g): a region without an instance has none", at, r.MedianMs, r.SpanMs, r.TotalMs, r.CopyCallMs)
		}
		if r.Instances > 0 && r.MedianMs > r.SpanMs+spanSlack {
			return fmt.Errorf("%s.medianMs is %g ms, longer than the region's span (spanMs %g)", at, r.MedianMs, r.SpanMs)
		}
		if err := inBound(at+".predictedMedian", r.PredictedMedianLowMs, r.PredictedMedianMs, r.PredictedMedianHighMs); err != nil {
			return err
		}
		if err := inBound(at+".predictedSpan", r.PredictedSpanLowMs, r.PredictedSpanMs, r.PredictedSpanHighMs); err != nil {
			return err
		}
	}
	if p := au.Prediction; p != nil {
		ns := []struct {
			name string
			v    int64
		}{{"count", p.Count}, {"bytes", p.Bytes}, {"beforeNs", p.BeforeNs}, {"afterNs", p.AfterNs}, {"afterLowNs", p.AfterLowNs},
			{"afterHighNs", p.AfterHighNs}, {"pinCopyNs", p.PinCopyNs}}
		for _, n := range ns {
			if n.v < 0 {
				return fmt.Errorf("prediction.%s is %d, below zero", n.name, n.v)
			}
		}
		if err := inBound("prediction.after", float64(p.AfterLowNs), float64(p.AfterNs), float64(p.AfterHighNs)); err != nil {
			return err
		}
		if err := inBound("prediction.htod.after", float64(p.HtoD.AfterLowNs), float64(p.HtoD.AfterNs), float64(p.HtoD.AfterHighNs)); err != nil {
			return err
		}
		for i, g := range p.Groups {
			if err := inBound(fmt.Sprintf("prediction.groups[%d].after", i), float64(g.AfterLowNs), float64(g.AfterNs), float64(g.AfterHighNs)); err != nil {
				return err
			}
		}
	}
	return predictionAgrees(au)
}

// countsAgree refuses copy counts that contradict each other: the audit's
// copies are its classes' copies, and no finding holds more of them.
func countsAgree(au *Audit) error {
	if au.Copies < 0 || au.Unmatched < 0 || au.Memsets < 0 || au.APICalls < 0 {
		return fmt.Errorf("copies %d, copiesWithoutCall %d, memsetsApart %d, apiCalls %d: a count below zero", au.Copies, au.Unmatched, au.Memsets, au.APICalls)
	}
	if len(au.Classes) > 0 {
		var n int64
		for i, c := range au.Classes {
			if c.Count < 0 || c.Bytes < 0 || c.HostNs < 0 || c.GPUNs < 0 || c.SecretlySync < 0 {
				return fmt.Errorf("classes[%d] holds %d copies, %d bytes, %d ns of host time, %d ns on the GPU, %d secretly synchronous: a count below zero", i, c.Count, c.Bytes, c.HostNs, c.GPUNs, c.SecretlySync)
			}
			if c.SecretlySync > c.Count {
				return fmt.Errorf("classes[%d] counts %d secretly synchronous copies of its %d", i, c.SecretlySync, c.Count)
			}
			n += c.Count
		}
		if n != au.Copies {
			return fmt.Errorf("copies is %d, but its classes hold %d copies", au.Copies, n)
		}
	}
	if err := totalsAgree(au); err != nil {
		return err
	}
	if err := offendersAreClasses(au); err != nil {
		return err
	}
	if au.Unmatched > au.Copies {
		return fmt.Errorf("copiesWithoutCall is %d, more than its %d copies", au.Unmatched, au.Copies)
	}
	for i, f := range au.Findings {
		if f.Count < 0 || f.Count > au.Copies {
			return fmt.Errorf("findings[%d] (%s) counts %d copies of the audit's %d", i, f.ID, f.Count, au.Copies)
		}
		if f.Bytes < 0 || f.HostNs < 0 {
			return fmt.Errorf("findings[%d] (%s) holds %d bytes and %d ns of host time: below zero", i, f.ID, f.Bytes, f.HostNs)
		}
		for j, e := range f.Evidence {
			if e.Bytes < 0 || e.CallNs < 0 || e.GPUNs < 0 || e.CallStart < 0 || e.GPUStart < 0 {
				return fmt.Errorf("findings[%d] (%s).evidence[%d] (correlation id %d): %d bytes, a call of %d ns at %d ns, a copy of %d ns at %d ns: below zero",
					i, f.ID, j, e.CorrelationID, e.Bytes, e.CallNs, e.CallStart, e.GPUNs, e.GPUStart)
			}
		}
	}
	if p := au.PinAllocs; p.Calls < 0 || p.HostNs < 0 {
		return fmt.Errorf("pinAllocs: %d calls holding %d ns of host time: below zero", p.Calls, p.HostNs)
	}
	if r := au.Replay; r != nil {
		if r.Recosted < 0 || r.Uncosted < 0 || r.Kept < 0 || r.Forced < 0 {
			return fmt.Errorf("replay: recosted %d, uncosted %d, kept %d, forced %d: a count below zero", r.Recosted, r.Uncosted, r.Kept, r.Forced)
		}
		if int64(r.Recosted)+int64(r.Uncosted) > au.Copies {
			return fmt.Errorf("replay: recosted %d and uncosted %d pageable copies, more than the audit's %d copies", r.Recosted, r.Uncosted, au.Copies)
		}
	}
	if cs := au.CallSites; cs != nil {
		for _, t := range []struct {
			name string
			v    SiteTotals
		}{{"pageable", cs.Pageable}, {"withoutStack", cs.Unsited}} {
			if t.v.Copies < 0 || t.v.Bytes < 0 || t.v.HostNs < 0 || t.v.Copies > au.Copies {
				return fmt.Errorf("callSites.%s holds %d copies, %d bytes, %d ns of host time, of the audit's %d copies", t.name, t.v.Copies, t.v.Bytes, t.v.HostNs, au.Copies)
			}
		}
	}
	return nil
}

// regionAgrees refuses a region's numbers that contradict each other: a
// negative count of instances or share, pageable copy calls holding the
// host longer than all its copy calls, or a pageable share above the
// share of all copy calls (Region.ShareOf).
func regionAgrees(at string, r *Region) error {
	shares := []struct {
		name string
		v    float64
	}{{"hostShare.measured", r.HostShare.Measured}, {"hostShare.predicted", r.HostShare.Predicted}, {"pageableShare", r.PageableShare},
		{"overlap.measured", r.Overlap.Measured}, {"overlap.predicted", r.Overlap.Predicted},
		{"queued.measured", r.Queued.Measured}, {"queued.predicted", r.Queued.Predicted}}
	for k, sh := range shares {
		if math.IsNaN(sh.v) || math.IsInf(sh.v, 0) || sh.v < 0 {
			return fmt.Errorf("%s.%s is %g, not a share", at, sh.name, sh.v)
		}
		// A copy's GPU time overlapped is a part of it, and the instances
		// queued a part of the instances: neither passes 1. Copy calls of
		// several threads may hold the host longer than an instance.
		if k >= 3 && sh.v > 1+shareSlack {
			return fmt.Errorf("%s.%s is %g, above 1, where it is a part of a whole", at, sh.name, sh.v)
		}
	}
	// A single instance's share is its copy calls' host time over its time.
	if r.Instances == 1 && r.MedianMs > 0 && r.TotalMs > 0 && !near(r.HostShare.Measured*r.MedianMs, r.CopyCallMs) {
		return fmt.Errorf("%s.hostShare.measured is %g, but its one instance of %g ms held the host %g ms in copy calls, a share of %g",
			at, r.HostShare.Measured, r.MedianMs, r.CopyCallMs, r.CopyCallMs/r.MedianMs)
	}
	switch {
	case r.Instances < 0:
		return fmt.Errorf("%s.instances is %d, below zero", at, r.Instances)
	case r.PageableCallMs > r.CopyCallMs+spanSlack:
		return fmt.Errorf("%s.pageableCallMs is %g ms, longer than all its copy calls' copyCallMs %g ms, of which it is a part", at, r.PageableCallMs, r.CopyCallMs)
	case r.PageableShare > r.HostShare.Measured+shareSlack:
		return fmt.Errorf("%s.pageableShare is %g, above hostShare.measured %g, the share of all its copy calls, of which it is a part", at, r.PageableShare, r.HostShare.Measured)
	}
	// What --fail-above limits is the share its pageable calls' time is
	// of the region (regionsOf), in every audit whose regions carry
	// totalMs.
	if want := r.ShareOf(r.PageableCallMs); r.TotalMs > 0 && !near(r.PageableShare, want) {
		return fmt.Errorf("%s.pageableShare is %g, but its pageable copy calls' %g ms are a share of %g of it", at, r.PageableShare, r.PageableCallMs, want)
	}
	return nil
}

// classSharesAgree refuses a class whose share of its region is not the
// one its region gives its host time (Region.ShareOf, as the audit sets
// it): below zero, or a number edited apart from the region's; or whose
// rates are not its bytes over its times.
func classSharesAgree(au *Audit) error {
	regions := au.RegionIndex()
	for i, c := range au.Classes {
		if c == nil {
			continue
		}
		if math.IsNaN(c.HostShare) || math.IsInf(c.HostShare, 0) || c.HostShare < 0 {
			return fmt.Errorf("classes[%d] (%s).hostShare is %g, not a share", i, c.Label(), c.HostShare)
		}
		// Its rates are its bytes over its times (Finish).
		for _, rate := range []struct {
			name string
			v    float64
			ns   int64
		}{{"gpuGBps", c.GPUGBps, c.GPUNs}, {"hostGBps", c.HostGBps, c.HostNs}} {
			want := 0.0
			if rate.ns > 0 {
				want = float64(c.Bytes) / float64(rate.ns)
			}
			if math.IsNaN(rate.v) || !near(rate.v, want) {
				return fmt.Errorf("classes[%d] (%s).%s is %g GB/s, but its %d bytes in %d ns are %g GB/s", i, c.Label(), rate.name, rate.v, c.Bytes, rate.ns, want)
			}
		}
		r := regions.ofClass(c)
		if r == nil || r.TotalMs <= 0 {
			// An earlier audit without regions shared out the capture's
			// span; one whose regions carry no totalMs, its copy calls'.
			continue
		}
		if want := r.ShareOf(float64(c.HostNs) / 1e6); !near(c.HostShare, want) {
			return fmt.Errorf("classes[%d] (%s).hostShare is %g, but its %d ns of host time are a share of %g of its region %q", i, c.Label(), c.HostShare, c.HostNs, want, r.Name)
		}
	}
	return nil
}

// near reports whether a and b agree but for rounding.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1e-3)
}

// shareSlack is how far a region's pageable share may pass its copy calls'
// share before it is impossible: the two are rounded apart.
const shareSlack = 1e-9

// predictionAgrees refuses a prediction whose totals are not the sums of
// its groups (predict adds each group to them), whose saving is not the
// host time before less the time after, or that pins more copies than the
// audit holds.
func predictionAgrees(au *Audit) error {
	p := au.Prediction
	if p == nil {
		return nil
	}
	var sum Prediction
	for _, g := range p.Groups {
		sum.add(g)
	}
	htod := sum.HtoD.PageableBeforeNs
	for _, t := range []struct {
		name       string
		total, sum int64
	}{{"count", p.Count, sum.Count}, {"bytes", p.Bytes, sum.Bytes}, {"beforeNs", p.BeforeNs, sum.BeforeNs}, {"afterNs", p.AfterNs, sum.AfterNs},
		{"afterLowNs", p.AfterLowNs, sum.AfterLowNs}, {"afterHighNs", p.AfterHighNs, sum.AfterHighNs}, {"htod.pageableBeforeNs", p.HtoD.PageableBeforeNs, htod}} {
		if t.total != t.sum {
			return fmt.Errorf("prediction.%s is %d, but its groups sum %d", t.name, t.total, t.sum)
		}
	}
	for _, t := range []struct {
		name         string
		saved, after int64
	}{{"savedNs", p.SavedNs, p.AfterNs}, {"savedLowNs", p.SavedLowNs, p.AfterHighNs}, {"savedHighNs", p.SavedHighNs, p.AfterLowNs}} {
		if t.saved != p.BeforeNs-t.after {
			return fmt.Errorf("prediction.%s is %d ns, but the host time before (%d ns) less that after (%d ns) is %d ns", t.name, t.saved, p.BeforeNs, t.after, p.BeforeNs-t.after)
		}
	}
	if p.Count > au.Copies {
		return fmt.Errorf("prediction pins %d pageable copies, more than the audit's %d copies", p.Count, au.Copies)
	}
	if p.HtoD.PageableBeforeNs > p.HtoD.BeforeNs {
		return fmt.Errorf("prediction.htod.pageableBeforeNs is %d ns, more than all host-to-device copy calls' beforeNs %d ns, of which it is a part", p.HtoD.PageableBeforeNs, p.HtoD.BeforeNs)
	}
	return nil
}

// ruleAgrees refuses a comparison with NVIDIA's rule that CompareRule
// does not make: a count below zero, more copies in both lists than in
// either, agreement that the counts deny (or disagreement they do not),
// more copies named as one side's alone than that side has apart from the
// other, a copy of negative time or size, or a rule not compared for no
// reason.
func ruleAgrees(rc *RuleComparison) error {
	switch {
	case rc == nil:
		return nil
	case !rc.Available:
		if rc.Note == "" {
			return fmt.Errorf("nvidiaRule is not compared, and its note does not say why")
		}
		return nil
	case rc.RuleCount < 0 || rc.AuditCount < 0 || rc.Both < 0:
		return fmt.Errorf("nvidiaRule: ruleCount %d, auditCount %d, both %d: a count below zero", rc.RuleCount, rc.AuditCount, rc.Both)
	case rc.Both > rc.RuleCount || rc.Both > rc.AuditCount:
		return fmt.Errorf("nvidiaRule: both is %d, more than the rule's %d copies or the audit's %d", rc.Both, rc.RuleCount, rc.AuditCount)
	case rc.Agree != (rc.Both == rc.RuleCount && rc.Both == rc.AuditCount):
		return fmt.Errorf("nvidiaRule: agree is %t, but the rule lists %d copies, the audit %d, %d in both", rc.Agree, rc.RuleCount, rc.AuditCount, rc.Both)
	case len(rc.OnlyRule) > rc.RuleCount-rc.Both || len(rc.OnlyAudit) > rc.AuditCount-rc.Both:
		return fmt.Errorf("nvidiaRule: onlyRule names %d copies and onlyAudit %d, more than the %d and %d that only one side lists",
			len(rc.OnlyRule), len(rc.OnlyAudit), rc.RuleCount-rc.Both, rc.AuditCount-rc.Both)
	}
	for i, f := range rc.OnlyRule {
		if f.Start < 0 || f.Duration < 0 || f.MB < 0 {
			return fmt.Errorf("nvidiaRule.onlyRule[%d]: start %d ns, duration %d ns, %g MB: below zero", i, f.Start, f.Duration, f.MB)
		}
	}
	return nil
}

// ruleCountsClasses refuses a comparison with NVIDIA's rule whose count
// of the audit's pageable async copies is not what its classes hold (the
// accumulator counts each copy comparedWithRule in both).
func ruleCountsClasses(au *Audit) error {
	if au.NVIDIA == nil || len(au.Classes) == 0 {
		return nil
	}
	var n int64
	for _, c := range au.Classes {
		if comparedWithRule(c.APIKind, c.HostMemory) {
			n += c.Count
		}
	}
	if n != int64(au.NVIDIA.AuditCount) {
		return fmt.Errorf("nvidiaRule.auditCount is %d, but the audit's classes hold %d pageable async copies", au.NVIDIA.AuditCount, n)
	}
	return nil
}

// inBound refuses a prediction outside its bound: low <= mid <= high, none
// below zero. All three zero is no prediction.
func inBound(field string, low, mid, high float64) error {
	switch {
	case low < 0 || mid < 0 || high < 0:
		return fmt.Errorf("%s bound is %g-%g around %g, below zero", field, low, high, mid)
	case low > mid || mid > high:
		return fmt.Errorf("%s is %g, outside its own bound %g-%g", field, mid, low, high)
	}
	return nil
}

// totalsAgree refuses totals that are not the sums of the audit's classes
// by direction, host memory kind and API kind: the accumulator adds every
// copy to its class and its total alike, so the two cannot differ.
func totalsAgree(au *Audit) error {
	if len(au.Classes) == 0 && len(au.Totals) == 0 {
		return nil
	}
	sums := map[totalKey]Total{}
	for _, c := range au.Classes {
		k := totalKey{c.Direction, c.HostMemory, c.APIKind}
		t := sums[k]
		t.Count += c.Count
		t.Bytes += c.Bytes
		t.HostNs += c.HostNs
		t.GPUNs += c.GPUNs
		sums[k] = t
	}
	seen := map[totalKey]bool{}
	for i, t := range au.Totals {
		k := totalKey{t.Direction, t.HostMemory, t.APIKind}
		if seen[k] {
			return fmt.Errorf("totals[%d] (%s, %s, %s) is listed twice", i, t.Direction, t.HostMemory, t.APIKind)
		}
		seen[k] = true
		c := sums[k]
		if t.Count != c.Count || t.Bytes != c.Bytes || t.HostNs != c.HostNs || t.GPUNs != c.GPUNs {
			return fmt.Errorf("totals[%d] (%s, %s, %s) sums %d copies, %d bytes, %d ns of host time and %d ns on the GPU, but its classes hold %d, %d, %d and %d",
				i, t.Direction, t.HostMemory, t.APIKind, t.Count, t.Bytes, t.HostNs, t.GPUNs, c.Count, c.Bytes, c.HostNs, c.GPUNs)
		}
	}
	for k, c := range sums {
		if !seen[k] && c.Count > 0 {
			return fmt.Errorf("the classes hold %d copies %s from %s host memory (%s) that no total sums", c.Count, k.dir, k.host, k.kind)
		}
	}
	return nil
}

// offendersAreClasses refuses a top offender that is not one of the
// audit's classes as they are, or not of pageable or unknown host memory:
// the audit takes them from its classes.
func offendersAreClasses(au *Audit) error {
	for i, t := range au.TopOffenders {
		if t == nil {
			return fmt.Errorf("topOffenders[%d] is null", i)
		}
		if t.HostMemory != Pageable && t.HostMemory != UnknownHost {
			return fmt.Errorf("topOffenders[%d] (%s) is of %s host memory, which no offender is", i, t.Label(), t.HostMemory)
		}
		found := false
		for _, c := range au.Classes {
			if c != nil && *c == *t {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("topOffenders[%d] (%s: %d copies, %d bytes, %d ns of host time) is none of the audit's classes", i, t.Label(), t.Count, t.Bytes, t.HostNs)
		}
	}
	return nil
}
