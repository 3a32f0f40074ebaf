package audit

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/framework"
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
	var e Expectation
	if err := program.DecodeHandWritten(path, data, &e, program.HandWritten{Kind: "an expected-audit file",
		Want: `{"copies": N, "findings": {"secretly-synchronous": N}, "nvidiaRule": "agree", ...}`,
		Deep: "an expected-audit file is a few lines of JSON; see docs/audit.md", Twice: "value holds", Many: "expectation holds"}); err != nil {
		return nil, err
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
	if why := e.invalid(); why != "" {
		return nil, fmt.Errorf("%s: %s", path, why)
	}
	return &e, nil
}

// invalid says which value of the expectation no audit can give (a
// negative count or share, a verdict or status that is none), "" when
// every one is of its kind: such a file would only ever differ.
func (e *Expectation) invalid() string {
	oneOf := func(key, v string, allowed ...string) string {
		if v == "" || slices.Contains(allowed, v) {
			return ""
		}
		return fmt.Sprintf("%s: %q is none of %s", key, v, strings.Join(allowed, ", "))
	}
	count := func(key string, n *int64) string {
		if n != nil && *n < 0 {
			return fmt.Sprintf("%s: %d is no count (want 0 or more)", key, *n)
		}
		return ""
	}
	why := []string{count("copies", e.Copies), count("pageableHtod", e.PageableHtoD),
		oneOf("nvidiaRule", e.NVIDIARule, "agree", "disagree", "unavailable"),
		oneOf("verdict", e.Verdict, string(vocab.Held), string(vocab.Died), string(vocab.Unavailable)),
		oneOf("answer", e.Answer, "pass", "fail", "unavailable"),
		oneOf("framework", e.Framework, string(framework.JAX), string(framework.PyTorch), string(framework.CuPy), string(framework.Driver),
			string(framework.Runtime), string(framework.Unknown))}
	for _, m := range []struct {
		key string
		ns  map[string]int64
	}{{"findings", e.Findings}, {"apiKinds", e.APIKinds}} {
		for _, k := range slices.Sorted(maps.Keys(m.ns)) {
			n := m.ns[k]
			why = append(why, count(m.key+"."+k, &n))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(e.Regions)) {
		r := e.Regions[name]
		for _, w := range []struct {
			key string
			v   *float64
		}{{"fitWithin", r.FitWithin}, {"predictedWithin", r.PredictedWithin}} {
			if w.v != nil && !(*w.v >= 0) {
				why = append(why, fmt.Sprintf("regions.%s.%s: %v is no share (want 0 or more)", name, w.key, *w.v))
			}
		}
		if r.Instances != nil && *r.Instances < 0 {
			why = append(why, fmt.Sprintf("regions.%s.instances: %d is no count (want 0 or more)", name, *r.Instances))
		}
		why = append(why, oneOf("regions."+name+".measure", r.Measure, string(MeasureMedian), string(MeasureSpan)))
		if r.Verdict != nil {
			why = append(why, oneOf("regions."+name+".verdict", *r.Verdict, string(vocab.Held), string(vocab.Died), string(vocab.Unavailable)))
		}
	}
	why = append(why, e.contradiction())
	for _, w := range why {
		if w != "" {
			return w
		}
	}
	return ""
}

// contradiction says which two values of the expectation no one audit
// gives together, "" when none: more pageable host-to-device copies, or
// copies of a finding or of API kinds, than copies in all; a region that
// died beside a check that did not (a check dies when one region it
// judges dies).
func (e *Expectation) contradiction() string {
	if e.Copies != nil {
		if e.PageableHtoD != nil && *e.PageableHtoD > *e.Copies {
			return fmt.Sprintf("pageableHtod: %d pageable host-to-device copies, more than the %d copies in all (copies)", *e.PageableHtoD, *e.Copies)
		}
		for _, k := range slices.Sorted(maps.Keys(e.Findings)) {
			if n := e.Findings[k]; n > *e.Copies {
				return fmt.Sprintf("findings.%s: %d copies, more than the %d copies in all (copies)", k, n, *e.Copies)
			}
		}
		var kinds int64 // at most copies: no sum overflows
		for _, k := range slices.Sorted(maps.Keys(e.APIKinds)) {
			n := max(e.APIKinds[k], 0)
			if n > *e.Copies-kinds {
				return fmt.Sprintf("apiKinds: the copies of its API kinds add up to more than the %d copies in all (copies)", *e.Copies)
			}
			kinds += n
		}
	}
	if e.Verdict != "" && e.Verdict != string(vocab.Died) {
		for _, name := range slices.Sorted(maps.Keys(e.Regions)) {
			if v := e.Regions[name].Verdict; v != nil && *v == string(vocab.Died) {
				return fmt.Sprintf("verdict: %s, but regions.%s.verdict is died, and a check dies when a region it judges dies", e.Verdict, name)
			}
		}
	}
	return ""
}

// ExpectDifference is one value an audit gives other than its expectation says:
// typed, worded by report.
type ExpectDifference struct {
	// Region names the region the value is of, "" for the audit's own.
	Region string
	// Key is the expectation's key of the value: "copies",
	// "pageableHtod", "nvidiaRule", "predictionSources", "verdict",
	// "framework", "answer", "coverage", "callSites" (the list, or with
	// ID one site's index); a finding's "finding" (with ID),
	// an API kind's "apiKinds" (with ID); a region's "instances",
	// "measure", "fitWithin", "predictedWithin", "verdict", "faster";
	// "region" (the region itself), "check" (a check of it), "refused"
	// (an expected refusal).
	Key string
	// ID names the finding or API kind of Key.
	ID string
	// Want is the expected value: a count, a name, a list of names, a
	// share for the Within keys.
	Want any
	// Got is the audit's value; for fitWithin the replay's error, for
	// predictedWithin the predicted and the after time (ms).
	Got any
	// Lacks says the audit holds no such value (a finding, a region, a
	// check of it, a refusal, a check of the captures).
	Lacks bool
}

// Compare lists what the audit gives differently from the expectation.
func (e *Expectation) Compare(out *Output) []ExpectDifference {
	au := out.Before
	var diffs []ExpectDifference
	num := func(key, id string, want *int64, got int64) {
		if want != nil && *want != got {
			diffs = append(diffs, ExpectDifference{Key: key, ID: id, Want: *want, Got: got})
		}
	}
	num("copies", "", e.Copies, au.Copies)
	num("pageableHtod", "", e.PageableHtoD, au.Sum(vocab.CopyHtoD, Pageable, "").Count)
	ids := make([]string, 0, len(e.Findings))
	for id := range e.Findings {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		want := e.Findings[id]
		f := au.Finding(id)
		if f == nil {
			diffs = append(diffs, ExpectDifference{Key: "finding", ID: id, Want: want, Lacks: true})
			continue
		}
		num("finding", id, &want, f.Count)
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
			diffs = append(diffs, ExpectDifference{Key: "nvidiaRule", Want: e.NVIDIARule, Got: got})
		}
	}
	if len(e.PredictionSources) > 0 {
		if !slices.Equal(e.PredictionSources, au.Prediction.Sources) {
			diffs = append(diffs, ExpectDifference{Key: "predictionSources", Want: e.PredictionSources, Got: au.Prediction.Sources})
		}
	}
	if e.Verdict != "" {
		switch {
		case out.Check == nil:
			diffs = append(diffs, ExpectDifference{Key: "verdict", Want: e.Verdict, Lacks: true})
		case string(out.Check.Verdict) != e.Verdict:
			diffs = append(diffs, ExpectDifference{Key: "verdict", Want: e.Verdict, Got: string(out.Check.Verdict)})
		}
	}
	if e.Framework != "" && string(au.Framework.Framework) != e.Framework {
		diffs = append(diffs, ExpectDifference{Key: "framework", Want: e.Framework, Got: string(au.Framework.Framework)})
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
func (r RegionExpectation) compare(name string, out *Output) []ExpectDifference {
	g := out.Before.Region(name)
	if g == nil {
		return []ExpectDifference{{Region: name, Key: "region", Lacks: true}}
	}
	var diffs []ExpectDifference
	add := func(key string, want, got any) {
		diffs = append(diffs, ExpectDifference{Region: name, Key: key, Want: want, Got: got})
	}
	if r.Instances != nil && *r.Instances != g.Instances {
		add("instances", *r.Instances, g.Instances)
	}
	if r.Measure != "" && r.Measure != string(g.Measure) {
		add("measure", r.Measure, string(g.Measure))
	}
	if r.FitWithin != nil && math.Abs(g.FitError()) > *r.FitWithin {
		add("fitWithin", *r.FitWithin, g.FitError())
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
		return append(diffs, ExpectDifference{Region: name, Key: "check", Lacks: true})
	}
	if r.PredictedWithin != nil {
		mid, _, _ := g.Predicted()
		if after := rc.AfterMs(); after <= 0 || math.Abs(mid/after-1) > *r.PredictedWithin {
			add("predictedWithin", *r.PredictedWithin, [2]float64{mid, after})
		}
	}
	if r.Verdict != nil && *r.Verdict != string(rc.Verdict) {
		add("verdict", *r.Verdict, string(rc.Verdict))
	}
	if r.Faster != nil && *r.Faster != rc.Faster {
		add("faster", *r.Faster, rc.Faster)
	}
	return diffs
}
