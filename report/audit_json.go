package report

import (
	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The audit's JSON: the audit's values as its types hold them, with what
// report words (the findings' titles and rules, the diagnostics and
// exposures) and with a value that does not exist left out, not written
// as zero: a region's period with fewer than two instances, its median's
// interval with fewer than replay.CIInstances, the verdict of a region
// not judged. audit.ReadOutput reads it back (a value left out is zero
// there, as in the audit).

// AuditEnvelope wraps an audit in the envelope every JSON output shares:
// kind "audit", the captures as inputs, one audit per capture as results
// (before, then after), and the check when there is one.
func AuditEnvelope(out *audit.Output, version string) Envelope {
	results := []*audit.Audit{out.Before}
	if out.After != nil {
		results = append(results, out.After)
	}
	inputs := make([]string, len(results))
	js := make([]jsonAudit, len(results))
	for i, a := range results {
		inputs[i] = a.Capture
		js[i] = auditJSON(a)
	}
	return Envelope{SchemaVersion: SchemaVersion, Kind: KindAudit, Tool: Tool{Name: "nsyscheck", Version: version},
		Inputs: inputs, Results: js, Check: checkJSON(out.Check)}
}

// jsonAudit is an audit's JSON.
type jsonAudit struct {
	*audit.Audit
	Regions     []jsonRegion       `json:"regions"`
	Findings    []jsonAuditFinding `json:"findings"`
	Diagnostics []jsonDiagnostic   `json:"diagnostics,omitempty"`
	Exposures   []string           `json:"exposures"`
}

// jsonAuditFinding is a finding's JSON: its id, its title and rule in
// words, its numbers and evidence.
type jsonAuditFinding struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Rule  string `json:"rule"`
	audit.Finding
}

func auditJSON(au *audit.Audit) jsonAudit {
	j := jsonAudit{Audit: au, Exposures: []string{}, Findings: []jsonAuditFinding{}, Regions: []jsonRegion{}}
	for _, r := range au.Regions {
		j.Regions = append(j.Regions, regionJSON(r))
	}
	for _, f := range au.Findings {
		j.Findings = append(j.Findings, jsonAuditFinding{ID: f.ID, Title: findingTitle(f.ID), Rule: findingRule(f.ID), Finding: f})
	}
	if len(au.Diagnostics) > 0 {
		j.Diagnostics = diagnosticsJSON(au.Diagnostics)
	}
	for _, d := range diagViews(au.Exposures) {
		j.Exposures = append(j.Exposures, d.Message)
	}
	return j
}

// jsonRegion is a region's JSON: the values of fewer instances than they
// need left out.
type jsonRegion struct {
	audit.Region
	jsonRegionMaybe
}

// jsonRegionMaybe are a region's values that exist only with enough
// instances, nil where they do not.
type jsonRegionMaybe struct {
	Period   *replay.Period `json:"period,omitempty"`
	Fit      jsonFit        `json:"fit"`
	MedianCI *replay.CI     `json:"medianCI,omitempty"`
}

// jsonFit is the replay's fit, the period's left out where the region has
// no period.
type jsonFit struct {
	Median float64  `json:"median"`
	Span   float64  `json:"span"`
	Period *float64 `json:"period,omitempty"`
}

// hasPeriod says whether a region has a period: the replay gives one of
// two instances or more on one thread, zero otherwise.
func hasPeriod(r replay.Region) bool { return r.Period != replay.Period{} || r.Fit.Period != 0 }

// hasMedianCI says whether a region's median has an interval: the replay
// gives one of replay.CIInstances or more, zero otherwise.
func hasMedianCI(r replay.Region) bool { return r.MedianCI != replay.CI{} }

func maybeOf(r replay.Region) jsonRegionMaybe {
	m := jsonRegionMaybe{Fit: jsonFit{Median: r.Fit.Median, Span: r.Fit.Span}}
	if hasPeriod(r) {
		p, f := r.Period, r.Fit.Period
		m.Period, m.Fit.Period = &p, &f
	}
	if hasMedianCI(r) {
		ci := r.MedianCI
		m.MedianCI = &ci
	}
	return m
}

func regionJSON(r audit.Region) jsonRegion {
	return jsonRegion{Region: r, jsonRegionMaybe: maybeOf(r.Region)}
}

// jsonCheck is the check's JSON.
type jsonCheck struct {
	*audit.Check
	Regions []jsonRegionCheck `json:"regions"`
}

// jsonRegionCheck is a region's check: as jsonRegion, and no verdict
// where the region is not judged (Compare gives it none).
type jsonRegionCheck struct {
	audit.RegionCheck
	jsonRegionMaybe
	Verdict vocab.Verdict `json:"verdict,omitempty"`
}

func checkJSON(c *audit.Check) *jsonCheck {
	if c == nil {
		return nil
	}
	j := &jsonCheck{Check: c, Regions: []jsonRegionCheck{}}
	for _, r := range c.Regions {
		rc := jsonRegionCheck{RegionCheck: r, jsonRegionMaybe: maybeOf(r.Region.Region), Verdict: r.Verdict}
		j.Regions = append(j.Regions, rc)
	}
	return j
}
