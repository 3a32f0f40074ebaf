package audit

import (
	"slices"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Cover sets beside the audit what its capture can and cannot show
// (package coverage): the coverage itself, in the JSON, and as
// diagnostics what nsys says of its capture, the graph launches it traced
// whole, the copies graph launches ran as nodes, the unified-memory
// migrations and what they cost, and a framework's staging. Call it once
// Finish has told the framework.
func (au *Audit) Cover(c *coverage.Coverage) {
	au.Coverage = c
	au.Diagnostics = append(au.Diagnostics, c.CaptureDiagnostics(au.Framework.Framework)...)
	au.Diagnostics = append(au.Diagnostics, c.CopyDiagnostics()...)
	if s := au.staging(); s != nil {
		au.Diagnostics = append(au.Diagnostics, diag.Diagnostic{Level: diag.Warning, Detail: *s})
	}
}

// Hidden lists the codes of the audit's diagnostics that say its capture
// may lack copies the run made (coverage.HidesCopies): then no copy
// breaking the rule is no pass.
func (au *Audit) Hidden() []diag.Code { return coverage.HidesCopies(au.Diagnostics) }

// staging tells whether the program's framework stages its host-to-device
// copies through pinned buffers of its own (framework.StagesCopies) where
// the trace cannot see: every large (LargeCopy or more) host-to-device
// copy a call made comes from pinned memory, none from pageable memory.
// Nil when not.
func (au *Audit) staging() *coverage.Staging {
	fw := au.Framework.Framework
	if !framework.StagesCopies(fw) {
		return nil
	}
	var pinned, pageable int64
	for _, c := range au.Classes {
		if c.Direction != vocab.CopyHtoD || c.Bucket() < BucketOf(LargeCopy) || c.APIKind == MigrationAPI {
			continue
		}
		switch c.HostMemory {
		case Pinned:
			pinned += c.Count
		case Pageable:
			pageable += c.Count
		}
	}
	if pinned == 0 || pageable > 0 {
		return nil
	}
	s := &coverage.Staging{Framework: fw, Pinned: pinned}
	if au.Coverage != nil {
		s.OSRT = au.Coverage.Tracing.OSRT
	}
	for _, cl := range au.Framework.Clues {
		if cl.Of == fw {
			s.Clue = cl
			break
		}
	}
	return s
}

// CompareRefusal lists what the refusal of an audit (err) says differently
// from the expectation's Refused: that the audit is unavailable (Key
// "unavailable", Got the refusal), and each code expected among the
// refusal's typed limits (Key "refused", ID the code).
func (e *Expectation) CompareRefusal(err error) []ExpectDifference {
	var diffs []ExpectDifference
	if !strings.Contains(err.Error(), "the audit is unavailable") {
		diffs = append(diffs, ExpectDifference{Key: "unavailable", Got: err})
	}
	if e.Refused != nil {
		for _, c := range *e.Refused {
			if !namesCode(err, c) {
				diffs = append(diffs, ExpectDifference{Key: "refused", ID: c, Got: err})
			}
		}
	}
	return diffs
}

// compareCoverage lists what the audit gives differently from the
// expectation's answer, copies by API kind and coverage codes.
func (e *Expectation) compareCoverage(out *Output) []ExpectDifference {
	au := out.Before
	var diffs []ExpectDifference
	if e.Refused != nil {
		diffs = append(diffs, ExpectDifference{Key: "refused", Want: *e.Refused, Lacks: true})
	}
	if e.Answer != "" && out.Answer() != e.Answer {
		diffs = append(diffs, ExpectDifference{Key: "answer", Want: e.Answer, Got: out.Answer()})
	}
	kinds := make([]string, 0, len(e.APIKinds))
	for k := range e.APIKinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if got := au.Sum("", "", APIKind(k)).Count; got != e.APIKinds[k] {
			diffs = append(diffs, ExpectDifference{Key: "apiKinds", ID: k, Want: e.APIKinds[k], Got: got})
		}
	}
	if e.Coverage != nil {
		want, got := slices.Sorted(slices.Values(*e.Coverage)), coverage.CodesIn(au.Diagnostics)
		if !slices.Equal(want, got) {
			diffs = append(diffs, ExpectDifference{Key: "coverage", Want: want, Got: got})
		}
	}
	return diffs
}
