package report

import (
	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/auditjson"
)

// The audit's JSON: the audit's values through its transfer types
// (auditjson), with what report words (the findings' titles and rules,
// the diagnostics and exposures) and with a value that does not exist
// left out, not written as zero: a region's period with fewer than two
// instances, its median's interval with fewer than replay.CIInstances,
// the verdict of a region not judged. auditjson.ReadOutput reads it back
// (a value left out is zero there, as in the audit).

// AuditEnvelope wraps an audit in the envelope every JSON output shares:
// kind "audit", the captures as inputs, one audit per capture as results
// (before, then after), and the check when there is one.
func AuditEnvelope(out *audit.Output, version string) Envelope {
	results := []*audit.Audit{out.Before}
	if out.After != nil {
		results = append(results, out.After)
	}
	inputs := make([]string, len(results))
	js := make([]auditjson.Audit, len(results))
	for i, a := range results {
		inputs[i] = a.Capture
		js[i] = auditJSON(a)
	}
	return Envelope{SchemaVersion: SchemaVersion, Kind: KindAudit, Tool: Tool{Name: "nsyscheck", Version: version},
		Inputs: inputs, Results: js, Check: auditjson.FromCheck(out.Check)}
}

// auditJSON is an audit's JSON, its words made.
func auditJSON(au *audit.Audit) auditjson.Audit {
	j := auditjson.FromAudit(au)
	for i := range j.Findings {
		j.Findings[i].Title, j.Findings[i].Rule = findingTitle(j.Findings[i].ID), findingRule(j.Findings[i].ID)
	}
	if len(au.Diagnostics) > 0 {
		for _, d := range diagViews(au.Diagnostics) {
			j.Diagnostics = append(j.Diagnostics, auditjson.Diagnostic{Code: d.Code, Level: d.Level, Message: d.Full()})
		}
	}
	if j.NVIDIA != nil {
		j.NVIDIA.Source = ruleSourceWords(au.NVIDIA.Source)
	}
	// The costs of the link's rate name where it came from, in words.
	if j.Replay != nil {
		for i := range j.Replay.Costs {
			c := &j.Replay.Costs[i]
			c.CallFrom, c.GPUFrom = fromWords(au, c.CallFrom), fromWords(au, c.GPUFrom)
		}
	}
	if j.Prediction != nil {
		for i := range j.Prediction.Groups {
			g := &j.Prediction.Groups[i]
			g.From = fromWords(au, g.From)
		}
	}
	for _, d := range diagViews(au.Exposures) {
		j.Exposures = append(j.Exposures, d.Message)
	}
	return j
}
