package audit

import (
	"encoding/json"
	"fmt"
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
		len(e.PredictionSources) == 0 && e.Verdict == "" {
		return nil, fmt.Errorf("%s: expects nothing; give copies, pageableHtod, findings, nvidiaRule, predictionSources or verdict", path)
	}
	if e.Verdict != "" && e.Against == "" {
		return nil, fmt.Errorf("%s: a verdict needs \"against\", the capture after the fix", path)
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
	return diffs
}
