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
// negative or non-finite time, a prediction outside its own bound (low,
// predicted, high in that order), a region longer than the whole capture
// (the trace's duration, where the export records it) or whose median
// instance outlasts its span. A file edited by hand is
// refused, naming the field, rather than rendered.
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
	return nil
}

// countsAgree refuses copy counts that contradict each other: the audit's
// copies are its classes' copies, and no finding holds more of them.
func countsAgree(au *Audit) error {
	if au.Copies < 0 || au.Unmatched < 0 || au.Memsets < 0 {
		return fmt.Errorf("copies %d, copiesWithoutCall %d, memsetsApart %d: a count below zero", au.Copies, au.Unmatched, au.Memsets)
	}
	if len(au.Classes) > 0 {
		var n int64
		for _, c := range au.Classes {
			n += c.Count
		}
		if n != au.Copies {
			return fmt.Errorf("copies is %d, but its classes hold %d copies", au.Copies, n)
		}
	}
	if err := totalsAgree(au); err != nil {
		return err
	}
	if au.Unmatched > au.Copies {
		return fmt.Errorf("copiesWithoutCall is %d, more than its %d copies", au.Unmatched, au.Copies)
	}
	for i, f := range au.Findings {
		if f.Count < 0 || f.Count > au.Copies {
			return fmt.Errorf("findings[%d] (%s) counts %d copies of the audit's %d", i, f.ID, f.Count, au.Copies)
		}
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
