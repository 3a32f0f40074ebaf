package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/program"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Expectation is an `audit --expect` file: the numbers an audit of a
// shipped capture must give. Only the fields given are compared.
type Expectation struct {
	// Against names the capture after the fix, relative to the file's folder.
	Against string `json:"against,omitempty"`
	// Copies, by count, and the pageable host-to-device copies.
	Copies       *int64 `json:"copies,omitempty"`
	PageableHtoD *int64 `json:"pageableHtod,omitempty"`
	// Findings maps a finding's id to its number of copies.
	Findings map[string]int64 `json:"findings,omitempty"`
	// NVIDIARule is "agree", "disagree" or "unavailable".
	NVIDIARule string `json:"nvidiaRule,omitempty"`
	// PredictionSources are the rate sources the prediction used.
	PredictionSources []string `json:"predictionSources,omitempty"`
	// Verdict is the check's verdict, with Against.
	Verdict string `json:"verdict,omitempty"`
	// Match maps a region before to the region after it is compared with
	// (audit --match), with Against.
	Match map[string]string `json:"match,omitempty"`
	// Framework is the framework the capture is told to run on.
	Framework string `json:"framework,omitempty"`
	// Regions expect of each region named (replay.CaptureRegion among them).
	Regions map[string]RegionExpectation `json:"regions,omitempty"`
	// Answer is the one-capture audit's answer (Output.Answer): pass, fail
	// or unavailable.
	Answer string `json:"answer,omitempty"`
	// APIKinds count the copies of each API kind (graph, migration, ...).
	APIKinds map[string]int64 `json:"apiKinds,omitempty"`
	// Coverage lists, in full, the codes of what the capture cannot show
	// (package coverage) the audit of CAPTURE carries: [] for none.
	Coverage *[]string `json:"coverage,omitempty"`
	// Refused expects the audit to be refused as unavailable (a capture
	// that holds no answer), its reason naming each of these codes of what
	// the capture cannot show.
	Refused *[]string `json:"refused,omitempty"`
	// CallSites lists, in full and in order, the call sites of the
	// pageable copies (CallSites.Sites): [] for a capture without stacks.
	CallSites *[]SiteExpectation `json:"callSites,omitempty"`
}

// RegionExpectation is what an expected-audit file expects of one region.
type RegionExpectation struct {
	Instances *int   `json:"instances,omitempty"`
	Measure   string `json:"measure,omitempty"`
	// FitWithin bounds the replay's error as captured in the region's
	// measure (|replayed / measured - 1|).
	FitWithin *float64 `json:"fitWithin,omitempty"`
	// With Against: PredictedWithin bounds the prediction's error against
	// the capture after (|predicted / after - 1|), Verdict is the
	// region's verdict ("" for a region not judged), Faster whether it
	// reads as faster.
	PredictedWithin *float64 `json:"predictedWithin,omitempty"`
	Verdict         *string  `json:"verdict,omitempty"`
	Faster          *bool    `json:"faster,omitempty"`
}

// maxExpectFile bounds an expected-audit file, a few lines of JSON.
const maxExpectFile = 1 << 20

// ReadExpectation reads an expected-audit file.
func ReadExpectation(path string) (*Expectation, error) {
	data, err := inputerr.ReadFile(path, maxExpectFile, "an expected-audit file")
	if err != nil {
		return nil, fmt.Errorf("read the expected audit: %w", err)
	}
	if at, deep := program.TooDeep(data); deep {
		return nil, program.DeepError(path, at, "an expected-audit file is a few lines of JSON; see docs/audit.md")
	}
	if k := program.DuplicateKey(data); k != "" {
		return nil, fmt.Errorf("%s: %s is given twice, so which value holds is unclear; keep one", path, k)
	}
	var e Expectation
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: not an expected-audit file (%v); want {\"copies\": N, \"findings\": {\"secretly-synchronous\": N}, \"nvidiaRule\": \"agree\", ...}", path, err)
	}
	if e.Copies == nil && e.PageableHtoD == nil && len(e.Findings) == 0 && e.NVIDIARule == "" &&
		len(e.PredictionSources) == 0 && e.Verdict == "" && e.Framework == "" && len(e.Regions) == 0 &&
		e.Answer == "" && len(e.APIKinds) == 0 && e.Coverage == nil && e.Refused == nil && e.CallSites == nil {
		return nil, fmt.Errorf("%s: expects nothing; give copies, pageableHtod, findings, nvidiaRule, predictionSources, framework, regions, verdict, answer, apiKinds, coverage or refused", path)
	}
	if e.Answer != "" && e.Against != "" {
		return nil, fmt.Errorf("%s: an answer is a one-capture audit's; with \"against\", expect the check's verdict", path)
	}
	if (e.Verdict != "" || len(e.Match) > 0) && e.Against == "" {
		return nil, fmt.Errorf("%s: a verdict or a match needs \"against\", the capture after the fix", path)
	}
	for name, r := range e.Regions {
		if e.Against == "" && (r.PredictedWithin != nil || r.Verdict != nil || r.Faster != nil) {
			return nil, fmt.Errorf("%s: region %s: predictedWithin, verdict and faster need \"against\", the capture after the fix", path, name)
		}
	}
	return &e, nil
}

// Compare lists what the audit gives differently from the expectation.
func (e *Expectation) Compare(out *Output) []string {
	au := out.Before
	var diffs []string
	num := func(what string, want *int64, got int64) {
		if want != nil && *want != got {
			diffs = append(diffs, fmt.Sprintf("%s: expected %d, got %d", what, *want, got))
		}
	}
	num("copies", e.Copies, au.Copies)
	num("pageableHtod", e.PageableHtoD, au.Sum(vocab.CopyHtoD, Pageable, "").Count)
	ids := make([]string, 0, len(e.Findings))
	for id := range e.Findings {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		want := e.Findings[id]
		f := au.Finding(id)
		if f == nil {
			diffs = append(diffs, fmt.Sprintf("finding %s: expected %d copies, the audit has no such finding", id, want))
			continue
		}
		num("finding "+id, &want, f.Count)
	}
	if e.NVIDIARule != "" {
		got := "unavailable"
		if au.NVIDIA != nil && au.NVIDIA.Available {
			got = "disagree"
			if au.NVIDIA.Agree {
				got = "agree"
			}
		}
		if got != e.NVIDIARule {
			diffs = append(diffs, fmt.Sprintf("nvidiaRule: expected %s, got %s", e.NVIDIARule, got))
		}
	}
	if len(e.PredictionSources) > 0 {
		if w, g := strings.Join(e.PredictionSources, ","), strings.Join(au.Prediction.Sources, ","); w != g {
			diffs = append(diffs, fmt.Sprintf("predictionSources: expected %s, got %s", w, g))
		}
	}
	if e.Verdict != "" {
		got := "(no check)"
		if out.Check != nil {
			got = string(out.Check.Verdict)
		}
		if got != e.Verdict {
			diffs = append(diffs, fmt.Sprintf("verdict: expected %s, got %s", e.Verdict, got))
		}
	}
	if e.Framework != "" && string(au.Framework.Framework) != e.Framework {
		diffs = append(diffs, fmt.Sprintf("framework: expected %s, got %s", e.Framework, au.Framework.Framework))
	}
	names := make([]string, 0, len(e.Regions))
	for n := range e.Regions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		diffs = append(diffs, e.Regions[n].compare(n, out)...)
	}
	diffs = append(diffs, e.compareSites(au)...)
	return append(diffs, e.compareCoverage(out)...)
}

// compare lists what region name of the audit gives differently from r.
func (r RegionExpectation) compare(name string, out *Output) []string {
	g := out.Before.Region(name)
	if g == nil {
		return []string{fmt.Sprintf("region %s: expected, the capture has no such region", name)}
	}
	var diffs []string
	add := func(format string, args ...any) {
		diffs = append(diffs, fmt.Sprintf("region %s: ", name)+fmt.Sprintf(format, args...))
	}
	if r.Instances != nil && *r.Instances != g.Instances {
		add("instances: expected %d, got %d", *r.Instances, g.Instances)
	}
	if r.Measure != "" && r.Measure != string(g.Measure) {
		add("measure: expected %s, got %s", r.Measure, g.Measure)
	}
	if r.FitWithin != nil && math.Abs(g.FitError()) > *r.FitWithin {
		add("the replay is %+.1f%% off the capture, expected within %.1f%%", 100*g.FitError(), 100**r.FitWithin)
	}
	if r.PredictedWithin == nil && r.Verdict == nil && r.Faster == nil {
		return diffs
	}
	var rc *RegionCheck
	if out.Check != nil {
		for i := range out.Check.Regions {
			if out.Check.Regions[i].Name == name {
				rc = &out.Check.Regions[i]
			}
		}
	}
	if rc == nil {
		return append(diffs, fmt.Sprintf("region %s: expected a check of it, there is none", name))
	}
	if r.PredictedWithin != nil {
		mid, _, _ := g.Predicted()
		if after := rc.AfterMs(); after <= 0 || math.Abs(mid/after-1) > *r.PredictedWithin {
			add("predicted %.3f ms, %.3f ms after: expected within %.1f%%", mid, after, 100**r.PredictedWithin)
		}
	}
	if r.Verdict != nil && *r.Verdict != string(rc.Verdict) {
		add("verdict: expected %q, got %q", *r.Verdict, rc.Verdict)
	}
	if r.Faster != nil && *r.Faster != rc.Faster {
		add("faster: expected %v, got %v", *r.Faster, rc.Faster)
	}
	return diffs
}
