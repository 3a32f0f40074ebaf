package report

import (
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
)

// ExpectDifference words one value an audit gives other than its
// expectation file says (audit --expect).
func ExpectDifference(d audit.ExpectDifference) string {
	s := expectDifference(d)
	if d.Region != "" {
		return "region " + d.Region + ": " + s
	}
	return s
}

func expectDifference(d audit.ExpectDifference) string {
	switch d.Key {
	case "region":
		return "expected, the capture has no such region"
	case "check":
		return "expected a check of it, there is none"
	case "finding":
		if d.Lacks {
			return fmt.Sprintf("finding %s: expected %v copies, the audit has no such finding", d.ID, d.Want)
		}
		return fmt.Sprintf("finding %s: expected %v, got %v", d.ID, d.Want, d.Got)
	case "apiKinds":
		return fmt.Sprintf("apiKinds %s: expected %v copies, got %v", d.ID, d.Want, d.Got)
	case "fitWithin":
		return fmt.Sprintf("the replay is %+.1f%% off the capture, expected within %.1f%%", 100*d.Got.(float64), 100*d.Want.(float64))
	case "predictedWithin":
		t := d.Got.([2]float64)
		return fmt.Sprintf("predicted %.3f ms, %.3f ms after: expected within %.1f%%", t[0], t[1], 100*d.Want.(float64))
	case "unavailable":
		return fmt.Sprintf("refused: expected the audit unavailable, got: %v", refusedWords(d.Got))
	case "refused":
		if d.Lacks {
			return fmt.Sprintf("refused: expected a refusal naming [%s], got an audit", strings.Join(d.Want.([]string), ", "))
		}
		return fmt.Sprintf("refused: expected the reason to name %s, got: %v", d.ID, refusedWords(d.Got))
	case "verdict":
		if d.Lacks {
			return fmt.Sprintf("verdict: expected %v, got (no check)", d.Want)
		}
		if d.Region != "" {
			return fmt.Sprintf("verdict: expected %q, got %q", d.Want, d.Got)
		}
	case "predictionSources":
		return fmt.Sprintf("predictionSources: expected %s, got %s", strings.Join(d.Want.([]string), ","), strings.Join(d.Got.([]string), ","))
	case "callSites":
		if d.ID == "" {
			w, g := d.Want.([]audit.SiteExpectation), d.Got.([]audit.SiteExpectation)
			return fmt.Sprintf("callSites: expected %d, got %d (%v)", len(w), len(g), g)
		}
		return fmt.Sprintf("callSites[%s]: expected %+v, got %+v", d.ID, d.Want, d.Got)
	case "coverage":
		return fmt.Sprintf("coverage: expected [%s], got [%s]", strings.Join(d.Want.([]string), ", "), strings.Join(d.Got.([]string), ", "))
	}
	return fmt.Sprintf("%s: expected %v, got %v", d.Key, d.Want, d.Got)
}

// refusedWords is a refusal in words (Refused), any other value as it is.
func refusedWords(v any) any {
	if err, ok := v.(error); ok {
		return Refused(err)
	}
	return v
}
