package auditjson

import (
	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// Each transfer type has a from and a to function. Where it holds exactly
// its domain type's fields, in their order, the function is a conversion:
// it copies every field, and it stops compiling when one of the two types
// gains a field the other lacks, so the JSON cannot silently drop one.

func fromClue(v framework.Clue) Clue {
	return Clue(v)
}

func toClue(j Clue) framework.Clue {
	return framework.Clue(j)
}

func fromDetection(v framework.Detection) Detection {
	return Detection{
		Framework:     v.Framework,
		Python:        v.Python,
		Clues:         mapSlice(v.Clues, fromClue),
		Backtraces:    v.Backtraces,
		LoaderWorkers: v.LoaderWorkers,
	}
}

func toDetection(j Detection) framework.Detection {
	return framework.Detection{
		Framework:     j.Framework,
		Python:        j.Python,
		Clues:         mapSlice(j.Clues, toClue),
		Backtraces:    j.Backtraces,
		LoaderWorkers: j.LoaderWorkers,
	}
}

func fromReplayPeriod(v replay.Period) ReplayPeriod {
	return ReplayPeriod(v)
}

func toReplayPeriod(j ReplayPeriod) replay.Period {
	return replay.Period(j)
}

func fromReplayShare(v replay.Share) ReplayShare {
	return ReplayShare(v)
}

func toReplayShare(j ReplayShare) replay.Share {
	return replay.Share(j)
}

// fromReplayFit is the replay's fit, the period's left out where the
// region has no period.
func fromReplayFit(v replay.Fit, period bool) ReplayFit {
	j := ReplayFit{Median: v.Median, Span: v.Span}
	if period {
		p := v.Period
		j.Period = &p
	}
	return j
}

func toReplayFit(j ReplayFit) replay.Fit {
	return replay.Fit{Median: j.Median, Span: j.Span, Period: deref(j.Period)}
}

func fromReplayOutside(v replay.Outside) ReplayOutside {
	return ReplayOutside(v)
}

func toReplayOutside(j ReplayOutside) replay.Outside {
	return replay.Outside(j)
}

func fromReplayCI(v replay.CI) ReplayCI {
	return ReplayCI(v)
}

func toReplayCI(j ReplayCI) replay.CI {
	return replay.CI(j)
}

func fromReplayRegion(v replay.Region) ReplayRegion {
	return ReplayRegion{
		Name:                  v.Name,
		Instances:             v.Instances,
		MedianMs:              v.MedianMs,
		SpanMs:                v.SpanMs,
		ReplayMedianMs:        v.ReplayMedianMs,
		ReplaySpanMs:          v.ReplaySpanMs,
		PredictedMedianMs:     v.PredictedMedianMs,
		PredictedMedianLowMs:  v.PredictedMedianLowMs,
		PredictedMedianHighMs: v.PredictedMedianHighMs,
		PredictedSpanMs:       v.PredictedSpanMs,
		PredictedSpanLowMs:    v.PredictedSpanLowMs,
		PredictedSpanHighMs:   v.PredictedSpanHighMs,
		TotalMs:               v.TotalMs,
		Period:                period(v),
		Overlap:               fromReplayShare(v.Overlap),
		HostShare:             fromReplayShare(v.HostShare),
		Queued:                fromReplayShare(v.Queued),
		Fit:                   fromReplayFit(v.Fit, hasPeriod(v)),
		CopyCallMs:            v.CopyCallMs,
		PageableCallMs:        v.PageableCallMs,
		Outside:               fromReplayOutside(v.Outside),
		MedianCI:              medianCI(v),
	}
}

func toReplayRegion(j ReplayRegion) replay.Region {
	return replay.Region{
		Name:                  j.Name,
		Instances:             j.Instances,
		MedianMs:              j.MedianMs,
		SpanMs:                j.SpanMs,
		ReplayMedianMs:        j.ReplayMedianMs,
		ReplaySpanMs:          j.ReplaySpanMs,
		PredictedMedianMs:     j.PredictedMedianMs,
		PredictedMedianLowMs:  j.PredictedMedianLowMs,
		PredictedMedianHighMs: j.PredictedMedianHighMs,
		PredictedSpanMs:       j.PredictedSpanMs,
		PredictedSpanLowMs:    j.PredictedSpanLowMs,
		PredictedSpanHighMs:   j.PredictedSpanHighMs,
		TotalMs:               j.TotalMs,
		Period:                toReplayPeriod(deref(j.Period)),
		Overlap:               toReplayShare(j.Overlap),
		HostShare:             toReplayShare(j.HostShare),
		Queued:                toReplayShare(j.Queued),
		Fit:                   toReplayFit(j.Fit),
		CopyCallMs:            j.CopyCallMs,
		PageableCallMs:        j.PageableCallMs,
		Outside:               toReplayOutside(j.Outside),
		MedianCI:              toReplayCI(deref(j.MedianCI)),
	}
}

func fromNotPredicted(v audit.NotPredicted) NotPredicted {
	return NotPredicted(v)
}

func toNotPredicted(j NotPredicted) audit.NotPredicted {
	return audit.NotPredicted(j)
}

func fromRegion(v audit.Region) Region {
	return Region{
		ReplayRegion:  fromReplayRegion(v.Region),
		Measure:       v.Measure,
		PageableShare: v.PageableShare,
		NotPredicted:  mapPtr(v.NotPredicted, fromNotPredicted),
		Loading:       mapPtr(v.Loading, fromReplayOutside),
		Unresolved:    mapPtr(v.Unresolved, fromUnresolved),
	}
}

func fromUnresolved(v audit.Unresolved) Unresolved {
	return Unresolved(v)
}

func toUnresolved(j Unresolved) audit.Unresolved {
	return audit.Unresolved(j)
}

func toRegion(j Region) audit.Region {
	return audit.Region{
		Region:        toReplayRegion(j.ReplayRegion),
		Measure:       j.Measure,
		PageableShare: j.PageableShare,
		NotPredicted:  mapPtr(j.NotPredicted, toNotPredicted),
		Loading:       mapPtr(j.Loading, toReplayOutside),
		Unresolved:    mapPtr(j.Unresolved, toUnresolved),
	}
}

func fromGateRegion(v audit.GateRegion) GateRegion {
	return GateRegion(v)
}

func toGateRegion(j GateRegion) audit.GateRegion {
	return audit.GateRegion(j)
}

func fromGate(v audit.Gate) Gate {
	return Gate{
		Limit: v.Limit,
		Over:  mapSlice(v.Over, fromGateRegion),
		Worst: fromGateRegion(v.Worst),
	}
}

func toGate(j Gate) audit.Gate {
	return audit.Gate{
		Limit: j.Limit,
		Over:  mapSlice(j.Over, toGateRegion),
		Worst: toGateRegion(j.Worst),
	}
}

func fromTotal(v audit.Total) Total {
	return Total(v)
}

func toTotal(j Total) audit.Total {
	return audit.Total(j)
}

func fromClassKey(v audit.ClassKey) ClassKey {
	return ClassKey(v)
}

func toClassKey(j ClassKey) audit.ClassKey {
	return audit.ClassKey(j)
}

func fromClass(v audit.Class) Class {
	return Class{
		ClassKey:     fromClassKey(v.ClassKey),
		Thread:       v.Thread,
		Count:        v.Count,
		Bytes:        v.Bytes,
		HostNs:       v.HostNs,
		GPUNs:        v.GPUNs,
		GPUGBps:      v.GPUGBps,
		HostGBps:     v.HostGBps,
		HostShare:    v.HostShare,
		SecretlySync: v.SecretlySync,
	}
}

func toClass(j Class) audit.Class {
	return audit.Class{
		ClassKey:     toClassKey(j.ClassKey),
		Thread:       j.Thread,
		Count:        j.Count,
		Bytes:        j.Bytes,
		HostNs:       j.HostNs,
		GPUNs:        j.GPUNs,
		GPUGBps:      j.GPUGBps,
		HostGBps:     j.HostGBps,
		HostShare:    j.HostShare,
		SecretlySync: j.SecretlySync,
	}
}

func fromFrame(v audit.Frame) Frame {
	return Frame(v)
}

func toFrame(j Frame) audit.Frame {
	return audit.Frame(j)
}

func fromSiteTotals(v audit.SiteTotals) SiteTotals {
	return SiteTotals(v)
}

func toSiteTotals(j SiteTotals) audit.SiteTotals {
	return audit.SiteTotals(j)
}

func fromCallSite(v audit.CallSite) CallSite {
	return CallSite{
		Frame:      fromFrame(v.Frame),
		Entry:      mapPtr(v.Entry, fromFrame),
		Method:     v.Method,
		Direction:  v.Direction,
		SiteTotals: fromSiteTotals(v.SiteTotals),
		Share:      v.Share,
		Longest:    v.Longest,
	}
}

func toCallSite(j CallSite) audit.CallSite {
	return audit.CallSite{
		Frame:      toFrame(j.Frame),
		Entry:      mapPtr(j.Entry, toFrame),
		Method:     j.Method,
		Direction:  j.Direction,
		SiteTotals: toSiteTotals(j.SiteTotals),
		Share:      j.Share,
		Longest:    j.Longest,
	}
}

func fromCallSites(v audit.CallSites) CallSites {
	return CallSites{
		Stacks:   v.Stacks,
		Lacks:    v.Lacks,
		Sites:    mapSlice(v.Sites, fromCallSite),
		Pageable: fromSiteTotals(v.Pageable),
		Unsited:  fromSiteTotals(v.Unsited),
	}
}

func toCallSites(j CallSites) audit.CallSites {
	return audit.CallSites{
		Stacks:   j.Stacks,
		Lacks:    j.Lacks,
		Sites:    mapSlice(j.Sites, toCallSite),
		Pageable: toSiteTotals(j.Pageable),
		Unsited:  toSiteTotals(j.Unsited),
	}
}

func fromEvidence(v audit.Evidence) Evidence {
	return Evidence(v)
}

func toEvidence(j Evidence) audit.Evidence {
	return audit.Evidence(j)
}

func fromFinding(v audit.Finding) Finding {
	return Finding{
		ID:       v.ID,
		Count:    v.Count,
		Bytes:    v.Bytes,
		HostNs:   v.HostNs,
		Evidence: mapSlice(v.Evidence, fromEvidence),
	}
}

func toFinding(j Finding) audit.Finding {
	return audit.Finding{
		ID:       j.ID,
		Count:    j.Count,
		Bytes:    j.Bytes,
		HostNs:   j.HostNs,
		Evidence: mapSlice(j.Evidence, toEvidence),
	}
}

func fromGroupPrediction(v audit.GroupPrediction) GroupPrediction {
	return GroupPrediction(v)
}

func toGroupPrediction(j GroupPrediction) audit.GroupPrediction {
	return audit.GroupPrediction(j)
}

func fromHtoDPrediction(v audit.HtoDPrediction) HtoDPrediction {
	return HtoDPrediction(v)
}

func toHtoDPrediction(j HtoDPrediction) audit.HtoDPrediction {
	return audit.HtoDPrediction(j)
}

func fromPrediction(v audit.Prediction) Prediction {
	return Prediction{
		Groups:      mapSlice(v.Groups, fromGroupPrediction),
		Sources:     v.Sources,
		Count:       v.Count,
		Bytes:       v.Bytes,
		BeforeNs:    v.BeforeNs,
		AfterNs:     v.AfterNs,
		AfterLowNs:  v.AfterLowNs,
		AfterHighNs: v.AfterHighNs,
		SavedNs:     v.SavedNs,
		SavedLowNs:  v.SavedLowNs,
		SavedHighNs: v.SavedHighNs,
		PinCopyNs:   v.PinCopyNs,
		HtoD:        fromHtoDPrediction(v.HtoD),
	}
}

func toPrediction(j Prediction) audit.Prediction {
	return audit.Prediction{
		Groups:      mapSlice(j.Groups, toGroupPrediction),
		Sources:     j.Sources,
		Count:       j.Count,
		Bytes:       j.Bytes,
		BeforeNs:    j.BeforeNs,
		AfterNs:     j.AfterNs,
		AfterLowNs:  j.AfterLowNs,
		AfterHighNs: j.AfterHighNs,
		SavedNs:     j.SavedNs,
		SavedLowNs:  j.SavedLowNs,
		SavedHighNs: j.SavedHighNs,
		PinCopyNs:   j.PinCopyNs,
		HtoD:        toHtoDPrediction(j.HtoD),
	}
}

func fromReplayBound(v replay.Bound) ReplayBound {
	return ReplayBound(v)
}

func toReplayBound(j ReplayBound) replay.Bound {
	return replay.Bound(j)
}

func fromReplayCostUse(v replay.CostUse) ReplayCostUse {
	return ReplayCostUse{
		Direction:      v.Direction,
		SizeClass:      v.SizeClass,
		Async:          v.Async,
		Copies:         v.Copies,
		Bytes:          v.Bytes,
		CallNs:         v.CallNs,
		GPUNs:          v.GPUNs,
		PinnedCallNs:   fromReplayBound(v.PinnedCallNs),
		PinnedGPUNs:    fromReplayBound(v.PinnedGPUNs),
		CallSource:     v.CallSource,
		GPUSource:      v.GPUSource,
		CallFrom:       v.CallFrom,
		GPUFrom:        v.GPUFrom,
		Samples:        v.Samples,
		CallSamples:    v.CallSamples,
		PinCopyNs:      v.PinCopyNs,
		Uncosted:       v.Uncosted,
		UncostedCallNs: v.UncostedCallNs,
	}
}

func toReplayCostUse(j ReplayCostUse) replay.CostUse {
	return replay.CostUse{
		Direction:      j.Direction,
		SizeClass:      j.SizeClass,
		Async:          j.Async,
		Copies:         j.Copies,
		Bytes:          j.Bytes,
		CallNs:         j.CallNs,
		GPUNs:          j.GPUNs,
		PinnedCallNs:   toReplayBound(j.PinnedCallNs),
		PinnedGPUNs:    toReplayBound(j.PinnedGPUNs),
		CallSource:     j.CallSource,
		GPUSource:      j.GPUSource,
		CallFrom:       j.CallFrom,
		GPUFrom:        j.GPUFrom,
		Samples:        j.Samples,
		CallSamples:    j.CallSamples,
		PinCopyNs:      j.PinCopyNs,
		Uncosted:       j.Uncosted,
		UncostedCallNs: j.UncostedCallNs,
	}
}

func fromAssumption(v timeline.Assumption) Assumption {
	return Assumption(v)
}

func toAssumption(j Assumption) timeline.Assumption {
	return timeline.Assumption(j)
}

func fromReplayClass(v replay.Class) ReplayClass {
	return ReplayClass(v)
}

func toReplayClass(j ReplayClass) replay.Class {
	return replay.Class(j)
}

func fromReplayMisfit(v replay.Misfit) ReplayMisfit {
	return ReplayMisfit{
		What:        v.What,
		ReplayClass: fromReplayClass(v.Class),
		Count:       v.Count,
		Late:        v.Late,
		LateNs:      v.LateNs,
		EarlyNs:     v.EarlyNs,
		WorstNs:     v.WorstNs,
		WorstCorr:   v.WorstCorr,
	}
}

func toReplayMisfit(j ReplayMisfit) replay.Misfit {
	return replay.Misfit{
		What:      j.What,
		Class:     toReplayClass(j.ReplayClass),
		Count:     j.Count,
		Late:      j.Late,
		LateNs:    j.LateNs,
		EarlyNs:   j.EarlyNs,
		WorstNs:   j.WorstNs,
		WorstCorr: j.WorstCorr,
	}
}

func fromReplay(v audit.Replay) Replay {
	return Replay{
		PinBy:       v.PinBy,
		PinByFrom:   PinChooser(v.PinByFrom),
		Recosted:    v.Recosted,
		Uncosted:    v.Uncosted,
		Kept:        v.Kept,
		Forced:      v.Forced,
		Costs:       mapSlice(v.Costs, fromReplayCostUse),
		Assumptions: mapSlice(v.Assumptions, fromAssumption),
		Misfits:     mapSlice(v.Misfits, fromReplayMisfit),
		Shown:       mapPtr(v.Shown, func(p audit.PinShown) PinShown { return PinShown(p) }),
	}
}

func toReplay(j Replay) audit.Replay {
	return audit.Replay{
		PinBy:       j.PinBy,
		PinByFrom:   audit.PinChooser(j.PinByFrom),
		Recosted:    j.Recosted,
		Uncosted:    j.Uncosted,
		Kept:        j.Kept,
		Forced:      j.Forced,
		Costs:       mapSlice(j.Costs, toReplayCostUse),
		Assumptions: mapSlice(j.Assumptions, toAssumption),
		Misfits:     mapSlice(j.Misfits, toReplayMisfit),
		Shown:       mapPtr(j.Shown, func(p PinShown) audit.PinShown { return audit.PinShown(p) }),
	}
}

func fromAPITime(v audit.APITime) APITime {
	return APITime(v)
}

func toAPITime(j APITime) audit.APITime {
	return audit.APITime(j)
}

func fromPinAllocs(v audit.PinAllocs) PinAllocs {
	return PinAllocs{
		Calls:  v.Calls,
		HostNs: v.HostNs,
		ByAPI:  mapSlice(v.ByAPI, fromAPITime),
	}
}

func toPinAllocs(j PinAllocs) audit.PinAllocs {
	return audit.PinAllocs{
		Calls:  j.Calls,
		HostNs: j.HostNs,
		ByAPI:  mapSlice(j.ByAPI, toAPITime),
	}
}

func fromFlagged(v audit.Flagged) Flagged {
	return Flagged(v)
}

func toFlagged(j Flagged) audit.Flagged {
	return audit.Flagged(j)
}

func fromRuleComparison(v audit.RuleComparison) RuleComparison {
	return RuleComparison{
		Rule:        v.Rule,
		Available:   v.Available,
		Source:      "", // in words: report gives them
		SourceKind:  sourceKindOf(v.Source.Kind),
		Note:        v.Note,
		RuleCount:   v.RuleCount,
		AuditCount:  v.AuditCount,
		Both:        v.Both,
		Agree:       v.Agree,
		RuleMB:      v.RuleMB,
		AuditMB:     v.AuditMB,
		SizesDiffer: v.SizesDiffer,
		Sizes:       mapSlice(v.Sizes, fromSizeDiff),
		OnlyRule:    mapSlice(v.OnlyRule, fromFlagged),
		OnlyAudit:   mapSlice(v.OnlyAudit, fromEvidence),
	}
}

func toRuleComparison(j RuleComparison) audit.RuleComparison {
	return audit.RuleComparison{
		Rule:        j.Rule,
		Available:   j.Available,
		Source:      ruleSourceRead(j.SourceKind, j.Source),
		Note:        j.Note,
		RuleCount:   j.RuleCount,
		AuditCount:  j.AuditCount,
		Both:        j.Both,
		Agree:       j.Agree,
		RuleMB:      j.RuleMB,
		AuditMB:     j.AuditMB,
		SizesDiffer: j.SizesDiffer,
		Sizes:       mapSlice(j.Sizes, toSizeDiff),
		OnlyRule:    mapSlice(j.OnlyRule, toFlagged),
		OnlyAudit:   mapSlice(j.OnlyAudit, toEvidence),
	}
}

func fromSizeDiff(v audit.SizeDiff) SizeDiff { return SizeDiff(v) }

func toSizeDiff(j SizeDiff) audit.SizeDiff { return audit.SizeDiff(j) }

func fromTracing(v coverage.Tracing) Tracing {
	return Tracing(v)
}

func toTracing(j Tracing) coverage.Tracing {
	return coverage.Tracing(j)
}

func fromMessages(v coverage.Messages) Messages {
	return Messages(v)
}

func toMessages(j Messages) coverage.Messages {
	return coverage.Messages(j)
}

func fromFamilyCount(v coverage.FamilyCount) FamilyCount {
	return FamilyCount(v)
}

func toFamilyCount(j FamilyCount) coverage.FamilyCount {
	return coverage.FamilyCount(j)
}

func fromMigration(v coverage.Migration) Migration {
	return Migration(v)
}

func toMigration(j Migration) coverage.Migration {
	return coverage.Migration(j)
}

func fromCoverage(v coverage.Coverage) Coverage {
	return Coverage{
		Tracing:       fromTracing(v.Tracing),
		Messages:      mapSlice(v.Messages, fromMessages),
		NotAll:        v.NotAll,
		None:          v.None,
		Collected:     mapSlice(v.Collected, fromFamilyCount),
		ImportError:   v.ImportError,
		Dropped:       v.Dropped,
		GraphLaunches: v.GraphLaunches,
		Graphs:        v.Graphs,
		GraphGPUNs:    v.GraphGPUNs,
		NodeLaunches:  v.NodeLaunches,
		NodeCopies:    v.NodeCopies,
		NodeBytes:     v.NodeBytes,
		Migrations:    mapSlice(v.Migrations, fromMigration),
		ZeroKernels:   v.ZeroKernels,
		FirstZero:     firstZeroOf(v.ZeroKernels, v.FirstZeroKernel),
		ZeroCalls:     v.ZeroCopyCalls,
		FirstZeroCall: firstZeroOf(v.ZeroCopyCalls, v.FirstZeroCopyCall),
	}
}

// firstZeroOf is the first of n records of no time, nil where there
// are none.
func firstZeroOf(n int64, first coverage.OpRef) *OpRef {
	if n == 0 {
		return nil
	}
	r := OpRef(first)
	return &r
}

// opRefOf is the coverage.OpRef of j, the zero one for none.
func opRefOf(j *OpRef) coverage.OpRef {
	if j == nil {
		return coverage.OpRef{}
	}
	return coverage.OpRef(*j)
}

func toCoverage(j Coverage) coverage.Coverage {
	return coverage.Coverage{
		Tracing:           toTracing(j.Tracing),
		Messages:          mapSlice(j.Messages, toMessages),
		NotAll:            j.NotAll,
		None:              j.None,
		Collected:         mapSlice(j.Collected, toFamilyCount),
		ImportError:       j.ImportError,
		Dropped:           j.Dropped,
		GraphLaunches:     j.GraphLaunches,
		Graphs:            j.Graphs,
		GraphGPUNs:        j.GraphGPUNs,
		NodeLaunches:      j.NodeLaunches,
		NodeCopies:        j.NodeCopies,
		NodeBytes:         j.NodeBytes,
		Migrations:        mapSlice(j.Migrations, toMigration),
		ZeroKernels:       j.ZeroKernels,
		FirstZeroKernel:   opRefOf(j.FirstZero),
		ZeroCopyCalls:     j.ZeroCalls,
		FirstZeroCopyCall: opRefOf(j.FirstZeroCall),
	}
}

func fromAudit(v audit.Audit) Audit {
	return Audit{
		Capture:           v.Capture,
		Format:            v.Format,
		Files:             v.Files,
		GPU:               v.GPU,
		NsysVersion:       v.NsysVersion,
		Framework:         fromDetection(v.Framework),
		Regions:           mapSlice(v.Regions, fromRegion),
		Gate:              mapPtr(v.Gate, fromGate),
		APICalls:          v.APICalls,
		SpanNs:            v.SpanNs,
		SpanFrom:          v.SpanFrom,
		SessionStartNs:    v.SessionStartNs,
		SessionStartFault: v.SessionStartFault,
		Job:               v.Job,
		Copies:            v.Copies,
		Unmatched:         v.Unmatched,
		Memsets:           v.Memsets,
		Totals:            mapSlice(v.Totals, fromTotal),
		Classes:           mapSlice(v.Classes, func(p *audit.Class) *Class { return mapPtr(p, fromClass) }),
		TopOffenders:      mapSlice(v.TopOffenders, func(p *audit.Class) *Class { return mapPtr(p, fromClass) }),
		CallSites:         mapPtr(v.CallSites, fromCallSites),
		Findings:          mapSlice(v.Findings, fromFinding),
		Prediction:        mapPtr(v.Prediction, fromPrediction),
		Replay:            mapPtr(v.Replay, fromReplay),
		PinAllocs:         fromPinAllocs(v.PinAllocs),
		NVIDIA:            mapPtr(v.NVIDIA, fromRuleComparison),
		Missing:           v.Missing,
		Coverage:          mapPtr(v.Coverage, fromCoverage),
	}
}

func toAudit(j Audit) audit.Audit {
	return audit.Audit{
		Capture:           j.Capture,
		Format:            j.Format,
		Files:             j.Files,
		GPU:               j.GPU,
		NsysVersion:       j.NsysVersion,
		Framework:         toDetection(j.Framework),
		Regions:           mapSlice(j.Regions, toRegion),
		Gate:              mapPtr(j.Gate, toGate),
		APICalls:          j.APICalls,
		SpanNs:            j.SpanNs,
		SpanFrom:          j.SpanFrom,
		SessionStartNs:    j.SessionStartNs,
		SessionStartFault: j.SessionStartFault,
		Job:               j.Job,
		Copies:            j.Copies,
		Unmatched:         j.Unmatched,
		Memsets:           j.Memsets,
		Totals:            mapSlice(j.Totals, toTotal),
		Classes:           mapSlice(j.Classes, func(p *Class) *audit.Class { return mapPtr(p, toClass) }),
		TopOffenders:      mapSlice(j.TopOffenders, func(p *Class) *audit.Class { return mapPtr(p, toClass) }),
		CallSites:         mapPtr(j.CallSites, toCallSites),
		Findings:          mapSlice(j.Findings, toFinding),
		Prediction:        mapPtr(j.Prediction, toPrediction),
		Replay:            mapPtr(j.Replay, toReplay),
		PinAllocs:         toPinAllocs(j.PinAllocs),
		NVIDIA:            mapPtr(j.NVIDIA, toRuleComparison),
		Missing:           j.Missing,
		Coverage:          mapPtr(j.Coverage, toCoverage),
	}
}

func fromTolerance(v audit.Tolerance) Tolerance {
	return Tolerance(v)
}

func toTolerance(j Tolerance) audit.Tolerance {
	return audit.Tolerance(j)
}

func fromRegionCheck(v audit.RegionCheck) RegionCheck {
	return RegionCheck{
		Region:          fromRegion(v.Region),
		AfterName:       v.AfterName,
		Judged:          v.Judged,
		AfterInstances:  v.AfterInstances,
		AfterMedianMs:   v.AfterMedianMs,
		AfterSpanMs:     v.AfterSpanMs,
		AfterOverlap:    v.AfterOverlap,
		AfterCopyCallMs: v.AfterCopyCallMs,
		AfterOutside:    fromReplayOutside(v.AfterOutside),
		LoadingMs:       v.LoadingMs,
		AfterLoadingMs:  v.AfterLoadingMs,
		BoundLowMs:      v.BoundLowMs,
		BoundHighMs:     v.BoundHighMs,
		Tolerance:       fromTolerance(v.Tolerance),
		Faster:          v.Faster,
		Verdict:         v.Verdict,
		Why:             v.Why,
		WideBy:          v.WideBy,
	}
}

func toRegionCheck(j RegionCheck) audit.RegionCheck {
	return audit.RegionCheck{
		Region:          toRegion(j.Region),
		AfterName:       j.AfterName,
		Judged:          j.Judged,
		AfterInstances:  j.AfterInstances,
		AfterMedianMs:   j.AfterMedianMs,
		AfterSpanMs:     j.AfterSpanMs,
		AfterOverlap:    j.AfterOverlap,
		AfterCopyCallMs: j.AfterCopyCallMs,
		AfterOutside:    toReplayOutside(j.AfterOutside),
		LoadingMs:       j.LoadingMs,
		AfterLoadingMs:  j.AfterLoadingMs,
		BoundLowMs:      j.BoundLowMs,
		BoundHighMs:     j.BoundHighMs,
		Tolerance:       toTolerance(j.Tolerance),
		Faster:          j.Faster,
		Verdict:         j.Verdict,
		Why:             j.Why,
		WideBy:          j.WideBy,
	}
}

func fromUnseen(v audit.Unseen) Unseen {
	return Unseen(v)
}

func toUnseen(j Unseen) audit.Unseen {
	return audit.Unseen(j)
}

func fromFix(v audit.Fix) Fix {
	return Fix{
		Before: fromTotal(v.Before),
		After:  fromTotal(v.After),
		Made:   v.Made,
	}
}

func toFix(j Fix) audit.Fix {
	return audit.Fix{
		Before: toTotal(j.Before),
		After:  toTotal(j.After),
		Made:   j.Made,
	}
}

func fromClassChange(v audit.ClassChange) ClassChange {
	return ClassChange{
		Class:         v.Class,
		Before:        fromTotal(v.Before),
		AfterPageable: fromTotal(v.AfterPageable),
		AfterPinned:   fromTotal(v.AfterPinned),
		Status:        v.Status,
	}
}

func toClassChange(j ClassChange) audit.ClassChange {
	return audit.ClassChange{
		Class:         j.Class,
		Before:        toTotal(j.Before),
		AfterPageable: toTotal(j.AfterPageable),
		AfterPinned:   toTotal(j.AfterPinned),
		Status:        j.Status,
	}
}

func fromPair(v audit.Pair) Pair {
	return Pair(v)
}

func toPair(j Pair) audit.Pair {
	return audit.Pair(j)
}

func fromCheck(v audit.Check) Check {
	return Check{
		Before:               v.Before,
		After:                v.After,
		Verdict:              v.Verdict,
		Regions:              mapSlice(v.Regions, fromRegionCheck),
		Match:                v.Match,
		Unseen:               mapPtr(v.Unseen, fromUnseen),
		Fix:                  fromFix(v.Fix),
		HtoDBeforeNs:         v.HtoDBeforeNs,
		HtoDAfterNs:          v.HtoDAfterNs,
		HtoDBytesBefore:      v.HtoDBytesBefore,
		HtoDBytesAfter:       v.HtoDBytesAfter,
		BytesChange:          v.BytesChange,
		PredictedAfterNs:     v.PredictedAfterNs,
		PredictedAfterLowNs:  v.PredictedAfterLowNs,
		PredictedAfterHighNs: v.PredictedAfterHighNs,
		PredictedSavedNs:     v.PredictedSavedNs,
		SavedNs:              v.SavedNs,
		PredictionSources:    v.PredictionSources,
		PageableBefore:       fromTotal(v.PageableBefore),
		PageableAfter:        fromTotal(v.PageableAfter),
		PageableOtherAfter:   fromTotal(v.PageableOtherAfter),
		PinAllocsBefore:      fromPinAllocs(v.PinAllocsBefore),
		PinAllocsAfter:       fromPinAllocs(v.PinAllocsAfter),
		Classes:              mapSlice(v.Classes, fromClassChange),
		Pairs:                mapSlice(v.Pairs, fromPair),
	}
}

func toCheck(j Check) audit.Check {
	return audit.Check{
		Before:               j.Before,
		After:                j.After,
		Verdict:              j.Verdict,
		Regions:              mapSlice(j.Regions, toRegionCheck),
		Match:                j.Match,
		Unseen:               mapPtr(j.Unseen, toUnseen),
		Fix:                  toFix(j.Fix),
		HtoDBeforeNs:         j.HtoDBeforeNs,
		HtoDAfterNs:          j.HtoDAfterNs,
		HtoDBytesBefore:      j.HtoDBytesBefore,
		HtoDBytesAfter:       j.HtoDBytesAfter,
		BytesChange:          j.BytesChange,
		PredictedAfterNs:     j.PredictedAfterNs,
		PredictedAfterLowNs:  j.PredictedAfterLowNs,
		PredictedAfterHighNs: j.PredictedAfterHighNs,
		PredictedSavedNs:     j.PredictedSavedNs,
		SavedNs:              j.SavedNs,
		PredictionSources:    j.PredictionSources,
		PageableBefore:       toTotal(j.PageableBefore),
		PageableAfter:        toTotal(j.PageableAfter),
		PageableOtherAfter:   toTotal(j.PageableOtherAfter),
		PinAllocsBefore:      toPinAllocs(j.PinAllocsBefore),
		PinAllocsAfter:       toPinAllocs(j.PinAllocsAfter),
		Classes:              mapSlice(j.Classes, toClassChange),
		Pairs:                mapSlice(j.Pairs, toPair),
	}
}
